"""The settings of the exact ODRP method (:func:`odrp.kinds.replication.exact.solve.solve`).

One frozen dataclass; ``--param NAME=VALUE`` and a grid's ``options: {exact: {...}}`` set its fields
(:func:`odrp.core.settings.from_options`). Every default keeps the optimum: the switches only choose
between models with the same optimum (``response_model``), add valid inequalities, or shape the
primal start whose placement prunes the response-time model. ``docs/methods/odrp.md`` says why each
default is what it is.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class OdrpSettings:
    """Tunables of the exact ODRP method; ``formulation`` (auto|compact|textbook) stays a keyword of ``solve``."""

    textbook_nonzeros: int = field(default=1_000, metadata={"ge": 0})
    """``auto`` solves the textbook model (the paper's ILP) when its closed-form size
    (:func:`~odrp.kinds.replication.exact.size.paper_size`) has at most this many nonzeros. On the
    tuning seeds 1-3 the textbook model was 1.3-1.9 times faster at 4 x 3 (297 nonzeros), even at
    5 x 3 (1 921), and 5-40 times slower from 6 x 4 (9 132) on (docs/methods/odrp.md)."""
    response_model: bool = True
    """``compact`` solves the response-time model (:mod:`.response`) when only the response time and
    availability carry weight; false: the full compact model (:mod:`.compact`) in every case."""
    local_search: bool = True
    """The response-time model starts from the beam and local search of :mod:`.start`, whose
    placement sets the response-time ceiling and prunes node choices (:mod:`.reduction`); false:
    only a warm start, if given, does."""
    transport_delay_bound: bool = True
    """Both compact models bound each stream's delay from below by the cheapest coupling of the two
    operators' replica distributions (coupling variables per stream and node pair)."""
    round_trip_bounds: bool = True
    """Both compact models add the round-trip bounds: a replica of i on u puts the delays from the
    sources' nodes to u and from u to the sinks' nodes on some source-sink path."""
    path_bounds: bool = True
    """The response-time model adds r >= LB(i, u) o[i, u] and its replica-weighted average, LB being
    the heads-and-tails bound of :mod:`.reduction`."""
    solver_heuristics: bool = False
    """HiGHS runs its own primal heuristics (sub-MIPs RINS and RENS, the root reduced-cost and
    feasibility-jump heuristics) on the compact model when a placement is already known; false: they
    are switched off, since the known placement is the incumbent and the run is about the bound (on
    24 x 16 seed 1001 a root sub-MIP took 70 of HiGHS's 180 s without finding a better placement)."""
    strong_branching: bool = False
    """HiGHS initialises its pseudo-costs by strong branching (its default, 8 reliable observations per
    variable) on the compact model when a placement is known; false: pure pseudo-cost branching, whose
    nodes cost one LP each (on 24 x 16 seed 1002 strong branching took 300 s at the root)."""
    start_share: float = field(default=0.25, metadata={"gt": 0, "le": 1})
    """Share of the time limit (wall clock) the local-search start may take; the model gets the rest."""
    start_cpu_seconds: float = field(default=2.0, metadata={"gt": 0})
    """CPU seconds the local-search start may take at most, with or without a time limit (its last
    descent over two-node placements may take a quarter more). CPU time, so that a loaded machine
    does not cut the start shorter."""
    start_width: int = field(default=20, metadata={"ge": 1})
    """Partial placements the start's beam search keeps per operator."""
    start_kicks: int = field(default=60, metadata={"ge": 0})
    """Kicks (perturbation, then descent) of the start's local search after its first descent."""
    start_walk: int = field(default=10, metadata={"ge": 1})
    """The start's random walk goes back to the best placement every this many kicks."""
    start_first_fit_tries: int = field(default=20, metadata={"ge": 0})
    """When the beam search finds no placement within capacity: random first-fit placements tried."""
    start_seed: int = 0
    """Seed of the start's random choices (neighbourhood order, kicks, first-fit fallbacks)."""
