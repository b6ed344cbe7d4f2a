"""The settings of the knapsack family's exact method (``odrp solve --param NAME=VALUE``).

:class:`KnapsackSettings` holds every tunable of :func:`odrp.kinds.knapsack.exact.solve.solve`: the
switches of the model and of the steps before it (flat fields, reachable by ``--param`` and a grid's
``options:``), the limits of the formulations, and, as nested frozen dataclasses set in code with
:func:`dataclasses.replace`, the settings of each search the method may run: the arc-flow search for
the multiple knapsack (:class:`ArcFlowSettings`), the Lagrangian search for the GAP
(:class:`LagrangianSettings`), the QKP reduction (:class:`QkpReductionSettings`) with its tabu search
(:class:`TabuSettings`), and the local search of the search start
(:class:`~odrp.heuristics.knapsack_search.LocalSearchSettings`). docs/methods/knapsack.md says why
each default is what it is.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from odrp.heuristics.knapsack_search import LocalSearchSettings

Linearisation = Literal["standard", "glover"]


@dataclass(frozen=True)
class ArcFlowSettings:
    """Settings of the arc-flow search for the multiple knapsack (:mod:`odrp.kinds.knapsack.exact.arcflow`)."""

    table_limit: int = field(default=30_000_000, metadata={"ge": 1})
    """Largest dynamic-programming table (numbers, not bytes): a family whose (classes + 1) x (largest
    capacity + 1) exceeds it is not solved by the search, and the bound leaves out its surrogate part
    when classes x (total capacity + 1) exceeds it."""
    arc_limit: int = field(default=400_000, metadata={"ge": 0})
    """Largest reduced graph handed to HiGHS; a larger stage ends the search with the bound proven so far."""
    stage_share: float = field(default=0.5, metadata={"ge": 0, "le": 1})
    """An intermediate stage runs only while its graph has at most this share of the last stage's arcs
    (otherwise the last stage alone settles every threshold from there on for less)."""
    threshold_growth: int = field(default=4, metadata={"ge": 2})
    """The thresholds below floor(L) step down by 1, then by this factor: floor(L), -1, -4, -16, ..."""
    cardinality_share: float = field(default=0.1, metadata={"ge": 0, "le": 1})
    """The bound N on the copies packed may take its column generation until this share of the time limit."""
    generation_share: float = field(default=0.3, metadata={"ge": 0, "le": 1})
    """The column generation of the bound L may run until this share of the time limit."""
    generation_iterations: int = field(default=2000, metadata={"ge": 1})
    """Most iterations of one column generation (each prices one surrogate and one pattern per capacity)."""
    master_share: float = field(default=0.05, metadata={"ge": 0, "le": 1})
    """The integer master over the generated patterns may take this share of the time limit ..."""
    master_seconds: float = field(default=10.0, metadata={"ge": 0})
    """... and at most this many seconds; 0: no integer master."""
    packing_step: bool = True
    """Decide each threshold by listing the item sets worth it and packing them (:func:`packing_step`)
    before the threshold's graph goes to HiGHS."""
    set_limit: int = field(default=256, metadata={"ge": 0})
    """The packing step runs when at most this many item sets can be worth the threshold (2 048 solved
    the same SMALL files but raised the largest CPU time from 16.9 to 25.5 s) ..."""
    set_visits: int = field(default=200_000, metadata={"ge": 0})
    """... and listing them takes at most this many partial sets."""
    suffix_table_limit: int = field(default=2_000_000, metadata={"ge": 0})
    """Largest (open classes + 1) x (room + 1) table the listing prunes its partial sets with (one per
    value row); above it, one column: the sum of the positive values left, no weight limit."""
    packing_share: float = field(default=0.5, metadata={"ge": 0, "le": 1})
    """Share of the time left that the packing step may take before the threshold goes to HiGHS."""
    quick_refill_share: float = field(default=0.01, metadata={"ge": 0, "le": 1})
    """After the integer master, an incumbent below floor(L) gets a refill search of this share of the
    time limit (a master cut short under load can leave 7 607 where the optimum is 30 968) ..."""
    quick_refill_seconds: float = field(default=1.0, metadata={"ge": 0})
    """... at most this many seconds; 0: no quick refill."""
    refill_arcs: int = field(default=50_000, metadata={"ge": 0})
    """The refill search runs once, before the first graph stage with more than this many arcs (or one
    too large to build; the graphs where it pays had 108 000-115 000 arcs, those where it only cost
    time 2 000-10 000) ..."""
    refill_share: float = field(default=0.75, metadata={"ge": 0, "le": 1})
    """... for this share of the time left ..."""
    refill_seconds: float = field(default=45.0, metadata={"ge": 0})
    """... and at most this many seconds; 0: no refill before a graph stage. (With 40% and 20 s it
    stopped one unit short of L on two strongly correlated SMALL files where 75% and 45 s met it.)"""
    refill_noise: float = field(default=3.0, metadata={"ge": 0})
    """Largest standard deviation of the Gaussian noise on the profits of one refill move."""


@dataclass(frozen=True)
class LagrangianSettings:
    """Settings of the Lagrangian search for the GAP (:mod:`odrp.kinds.knapsack.exact.gap_lagrangian`)."""

    table_limit: int = field(default=5 * 10**7, metadata={"ge": 1})
    """Largest agents x (items + 1) x (largest capacity + 1) of the knapsack tables; a larger GAP is
    not solved by the search."""
    max_iterations: int = field(default=500, metadata={"ge": 1})
    """Most iterations of the column generation of the multipliers."""
    set_limit: int = field(default=20_000, metadata={"ge": 0})
    """Most sets listed for one agent before the search hands over to the compact model (gap1-12 need
    at most about 800)."""
    node_limit: int = field(default=100_000, metadata={"ge": 0})
    """Nodes of the exact cover search before the set-partitioning MILP over the listed sets decides."""
    max_stages: int = field(default=16, metadata={"ge": 0})
    """Thresholds tried before the search hands over (an infeasible GAP has a useless bound)."""
    auto_items: int = field(default=60, metadata={"ge": 0})
    """``auto`` runs the search only on a GAP of at most this many items (gap1-12 have 15-60, where it
    is faster than the textbook model; on gapa-d, 100-200 items, it was slower or found nothing)."""
    auto_share: float = field(default=0.25, metadata={"ge": 0, "le": 1})
    """In ``auto`` the search may take this share of the time limit; then it hands its bound and its
    best assignment over to the compact model (``--formulation lagrangian``: the whole limit)."""


@dataclass(frozen=True)
class QkpReductionSettings:
    """How hard the QKP reduction works (:func:`odrp.kinds.knapsack.exact.qkp_reduction.reduce`)."""

    cuts_per_round: int = field(default=1000, metadata={"ge": 1})
    """Most triangle rows (4) added in one round of separation."""
    max_rounds: int = field(default=30, metadata={"ge": 0})
    """Most rounds of separation per pass."""
    min_progress: float = field(default=0.02, metadata={"ge": 0})
    """A round that closes less than this share of the gap between bound and target stalls ..."""
    patience: int = field(default=3, metadata={"ge": 1})
    """... and the separation ends after this many stalled rounds in a row (the first rounds often
    close nothing: the LP is degenerate)."""
    probe_iterations: int = field(default=300, metadata={"ge": 1})
    """Dual simplex iterations a probe may take before it gives up (then nothing is fixed)."""


@dataclass(frozen=True)
class TabuSettings:
    """The tabu search that improves the QKP reduction's start (:mod:`odrp.kinds.knapsack.exact.qkp_search`)."""

    tenures: tuple[int, ...] = (5, 10, 15)
    """One run per tenure and seed: an item moved stays tabu for the tenure plus 0-2 iterations."""
    seeds: tuple[int, ...] = (0, 1)
    """Seeds of the random part of the tenure."""
    iterations: int = field(default=3000, metadata={"ge": 0})
    """Moves of one run."""


@dataclass(frozen=True)
class KnapsackSettings:
    """Settings of the exact method of every kind of the knapsack family."""

    linearisation: Linearisation = "standard"
    """How the compact model linearises products of two binaries: ``standard`` (one variable per
    product) or ``glover`` (Glover's compact form: one variable per item and knapsack, a weaker LP)."""
    capacity_cuts: bool | None = None
    """Add the RLT capacity cuts (capacity row x level indicator) to the compact model; None: with two
    knapsacks or more (they cut a QMKP's LP bound by a fifth but leave a QKP's where it is)."""
    symmetry: bool = True
    """Order identical knapsacks by load in the compact model."""
    merge_identical: bool = True
    """Items of a pair-free kind that are identical form one class of copies (a count per knapsack
    instead of one binary per item)."""
    tighten: bool = True
    """Lower every capacity to the largest load its weights can reach, and add the surrogate bound of
    a multiple knapsack as a cut on the objective."""
    search_start: bool | None = None
    """Run the greedy and local search first: its value becomes the row objective >= value and the
    fallback incumbent. None: for the kinds with pair profits (qkp, qmkp, qm3dkp)."""
    search_share: float = field(default=0.1, metadata={"ge": 0})
    """The search start may take this share of the time limit ..."""
    search_seconds: float = field(default=5.0, metadata={"ge": 0})
    """... and at most this many seconds."""
    search_to_end: bool | None = None
    """The search start runs its ``search.iterations`` rounds to their end, within the model's time, instead
    of ``search_share``. None: where the configuration bound applies (a qm3dkp): from 20 components on,
    the compact model's bound is far above the configuration bound and its solver improves on the start
    rarely, so the local search is the better use of its core."""
    search: LocalSearchSettings = field(default_factory=lambda: LocalSearchSettings(iterations=10))
    """The local search of the search start."""
    reduction: bool | None = None
    """Fix QKP variables by probing a strong LP bound before the MILP (needs a QKP and a start). None:
    for a QKP of at least ``reduction_min_items`` items with a start."""
    reduction_min_items: int = field(default=40, metadata={"ge": 0})
    """The reduction runs by default from this many items on (below, the MILP alone is quick)."""
    reduction_share: float = field(default=0.8, metadata={"ge": 0, "le": 1})
    """The tabu search and the reduction may run until this share of the time limit (jeu_100_75_9 needs
    about 45 CPU s of reduction, then 4 s of MILP; half of a 60 s limit cut it short)."""
    configuration_share: float = field(default=0.6, metadata={"ge": 0, "le": 1})
    """``--formulation configurations``: the configuration bound may run until this share of the time limit
    (it stops earlier once both its parts are proven); the local search takes the time left."""
    configuration_pricing_seconds: float = field(default=5.0, metadata={"gt": 0})
    """``--formulation configurations`` (:mod:`odrp.kinds.knapsack.exact.configurations`): the longest one
    exact pricing of one bin type may take (its dual bound serves when it stops)."""
    auto_pattern_limit: int = field(default=20_000, metadata={"ge": 0})
    """``auto`` takes the pattern model for identical knapsacks only while they have at most this many patterns."""
    pattern_limit: int = field(default=200_000, metadata={"ge": 0})
    """Most patterns ``--formulation patterns`` enumerates before it gives up."""
    dp_limit: int = field(default=10**8, metadata={"ge": 0})
    """Largest copies x capacity a dynamic programme of the tightening may cost (larger ones are skipped)."""
    arcflow: ArcFlowSettings = ArcFlowSettings()
    """The arc-flow search (``--formulation arcflow``)."""
    lagrangian: LagrangianSettings = LagrangianSettings()
    """The Lagrangian search (``--formulation lagrangian``)."""
    qkp_reduction: QkpReductionSettings = QkpReductionSettings()
    """The QKP reduction's separation and probing."""
    tabu: TabuSettings = TabuSettings()
    """The tabu search before the QKP reduction."""
