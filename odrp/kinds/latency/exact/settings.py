"""The settings of the exact latency method (``odrp solve --param NAME=VALUE``).

One frozen dataclass holds every tunable of :func:`odrp.kinds.latency.exact.solve.solve`: the valid
inequalities of the model (:mod:`odrp.kinds.latency.exact.model`), the cutting-plane loop
(:mod:`odrp.kinds.latency.exact.separation`) and the method by supervisor classes
(:mod:`odrp.kinds.latency.exact.classes`). docs/methods/latency.md says why each default is what it is.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class LatencySettings:
    """Settings of the exact latency method; the defaults are the measured best."""

    textbook_nonzeros: int = field(default=4_000, metadata={"ge": 0})
    """``auto`` solves the textbook MILP (:mod:`odrp.kinds.latency.exact.textbook`) when its closed-form
    size has at most this many nonzeros. On the tuning seeds 1-3 of the random generator it was 3.4
    times faster at 3 operations (1 714 nonzeros), even at 4 (3 292), and slower from 6 operations
    (7 180) on (docs/methods/latency.md)."""
    classes: bool | None = None
    """Solve by supervisor classes (True) or as one MILP (False). None: by classes when the latency
    term is a tie-break (:func:`odrp.kinds.latency.exact.classes.latency_is_tie_break`) and no warm
    start is given (the one MILP hands a warm start to the solver as a MIP start; ``classes=true``
    takes it as the first incumbent)."""
    connectivity: bool = True
    """Add the connectivity row: cut edges >= supervisors used - components of the topology."""
    fewest_supervisors: bool = True
    """Add the row: supervisors used >= the fewest whose largest capacities cover the demand."""
    twins: bool = True
    """Order twin operators (equal demands, equal edges): the earlier one on the lower supervisor."""
    supervisor_symmetry: bool = True
    """Order interchangeable supervisors (equal capacities and, unless w1 = 0, equal latencies). The
    restricted models of the classes method always order them."""
    knapsack_trees: bool = True
    """Separate knapsack tree rows per supervisor together with the triangle rows."""
    scale: float | None = field(default=None, metadata={"gt": 0})
    """Objective multiplier; None: 1 / (the smallest positive coefficient of eq. 1), capped to [1, 1e6]."""
    rows_per_round: int = field(default=400, metadata={"ge": 1})
    """Most triangle rows (and most knapsack tree rows) added per round of the cutting-plane loop."""
    separation_rounds: int = field(default=50, metadata={"ge": 1})
    """Most rounds of the cutting-plane loop (each solves the LP relaxation once)."""
    separation_share: float = field(default=0.5, metadata={"ge": 0, "le": 1})
    """Share of the time limit after which the one MILP's cutting-plane loop stops adding rounds."""
    incumbent_iterations: int = field(default=100, metadata={"ge": 0})
    """Colonies of the ant system, then steps of hill climbing (the hybrid heuristic, seed 0) that give
    the classes method its first incumbent."""
    find_gap: float = field(default=0.1, metadata={"ge": 0})
    """Relative gap of the classes method's restricted solves (at least the run's own gap): each only
    has to find a partition below the incumbent; the last, infeasible, one is the proof, which no gap
    shortens."""
    mip_pscost_minreliable: int = field(default=0, metadata={"ge": 0})
    """HiGHS's ``mip_pscost_minreliable`` in the restricted solves: 0 (pseudo-costs reliable from the
    first observation) switches strong branching off; HiGHS's own default, 8, took 174 CPU s against
    139 over the 18 T-R instance files."""
    labelling_nodes: int = field(default=200_000, metadata={"ge": 1})
    """Node limit of one labelling enumeration (a 3-group partition on 11 supervisors needs fewer than
    1 500); beyond it the method falls back to the one MILP."""
    max_no_goods: int = field(default=5_000, metadata={"ge": 1})
    """Most no-good rows for one partition (its labellings on a multiset's supervisors); beyond it the
    method falls back to the one MILP."""
    colgen: bool | None = None
    """Solve by column generation (:mod:`odrp.kinds.latency.exact.colgen`): True always (with HiGHS),
    False never; None: when the latency term is a tie-break, no warm start is given, the solver is
    HiGHS and the instance has at least ``colgen_operators`` operators."""
    colgen_operators: int = field(default=48, metadata={"ge": 1})
    """``auto`` uses column generation from this many operators on (docs/methods/latency.md): the
    classes method proves T-R7 (42 operators) in about 20 s and the generated instances of 38
    operators; at 58 operators (tuning seeds 1001-1003, 60 s, load 13-16) it returned no placement on
    two and a 53.6% gap on the third, where the column generation returned 33-48% gaps."""
    race_classes: bool = True
    """With two threads or more, race the column generation and the classes method (one process each) wherever
    both answer ``auto`` (HiGHS, a tie-break latency term, no warm start, neither named by a setting), below
    ``colgen_operators`` operators, and keep the better incumbent and bound. From ``colgen_operators`` on the
    column generation answers alone, its exact pricings on the run's threads (docs/methods/latency.md: on the
    tuning seeds 1001-1005 at 58 and 1001-1002 at 82 operators the classes member's bound was 0.49-0.86
    against the generation's 0.72-1.27, and its incumbent the better on one run of seven). Earlier, racing at
    every size: at 58 operators (tuning seeds 1001-1003, 60 s, load 5-9) the column generation's bound was
    the higher on two seeds (0.675 and 0.624 against 0.486 and 0.486), the classes method's on the third
    (0.492 against 0.426); at 38 operators (the same seeds, load 0.4-1.8)
    the classes method alone proved 1001 in 57.2 s and stopped at gaps of 51.1% and 35.7% on 1002 and 1003,
    the race proved 1001 in 57.9 s and stopped at 1.2% and 5.2% (the set-partitioning bound; those two were
    run before the dives stopped early, which changes no bound of the generation)."""
    colgen_smoothing: float = field(default=0.5, metadata={"ge": 0, "le": 1})
    """Wentges's smoothing factor at the start of the column generation (0: none)."""
    colgen_columns: int = field(default=20, metadata={"ge": 1})
    """Most columns a heuristic pricing of one type returns per round."""
    colgen_seeds: int = field(default=10, metadata={"ge": 0})
    """The heuristic pricing searches from this many single items (those of largest potential gain,
    pi_A + sum_B W_AB b_B), besides the groups of the LP solution."""
    colgen_perturbed: int = field(default=5, metadata={"ge": 0})
    """How many of the best groups a heuristic pricing perturbs (a quarter of the units removed), then
    searches again from."""
    colgen_perturbations: int = field(default=2, metadata={"ge": 0})
    """Perturbations of each of those groups per round."""
    colgen_exact_seconds: float | None = field(default=5.0, metadata={"gt": 0})
    """Most seconds of one exact pricing (one type); its dual bound serves the Lagrangian bound when it
    stops early. None: no limit but the run's."""
    colgen_max_columns: int = field(default=50_000, metadata={"ge": 1})
    """Most columns of the master (its memory is checked against the budget at this size)."""
    colgen_primal_share: float = field(default=0.3, metadata={"ge": 0, "le": 1})
    """Share of the time limit for the primal stage (dives, the restricted master's integer program, each
    partition labelled and climbed from): the root's generation stops at 1 - share of the limit, the
    primal stage follows it for at most this share, and the branching has the rest."""
    colgen_labelling_seconds: float = field(default=1.0, metadata={"ge": 0})
    """Seconds kept after the restricted master's integer program for labelling and hill climbing."""
    colgen_branching: bool = True
    """Box the LP's type rows to the multisets of supervisor classes that can hold a placement better than
    the incumbent, and once the LP has converged, branch and price on the number of supervisors of each
    class down to single multisets until the generation's time is up
    (:func:`odrp.core.colgen.branch_on_types`): the bound rises from the LP's to the least of the open
    nodes'. Held-out seeds 2001-2005, 60 s, against the branching that stopped at integral counts
    without the box: median gap at 58 operators 4.90% to 1.39%, at 82 operators 17.39% to 4.78%
    (docs/measurements/frontier.md)."""
    colgen_pairs: bool = True
    """With ``colgen_branching``, branch further inside a single multiset on pairs of operators (Ryan and
    Foster: together on one supervisor, or apart) while the LP is fractional there
    (:func:`odrp.core.colgen.branch_on_types`); every integral LP solution of a node is labelled and becomes
    the incumbent where better."""
