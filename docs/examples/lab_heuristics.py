"""A plugin: a heuristic of one's own for the 0-1 knapsack and the GAP, which a grid names under
``plugins: [lab_heuristics]`` (this file beside the grid file, or in a ``plugins/`` folder there).

``random_fill`` takes the items in a random order (from its seed) and puts each where it fits: into the
knapsack (kp), or onto the agent where it takes the smallest share of the room left (gap). It returns its
solution without an objective: the kind's evaluator scores it.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field
from typing import Any

from odrp.core.method import Heuristic, HeuristicOutcome


@dataclass(frozen=True)
class FillSettings:
    tries: int = field(default=3, metadata={"ge": 1})
    """Random orders to try until every item has an agent (gap; a kp packing never fails)."""


def random_fill(
    instance: Any, *, seed: int = 0, time_limit: float | None = None, settings: FillSettings = FillSettings()
) -> HeuristicOutcome:
    """Items in a random order, each where it fits; no objective: the evaluator scores the solution."""
    rng = random.Random(seed)
    deadline = None if time_limit is None else time.monotonic() + time_limit
    fill = _fill_kp if instance.kind == "kp" else _fill_gap
    for attempt in range(1, settings.tries + 1):
        order = list(range(instance.n_items))
        rng.shuffle(order)
        assignment = fill(instance, order)
        if instance.kind == "kp" or None not in assignment:
            return HeuristicOutcome({"assignment": assignment}, None, {"tries": attempt})
        if deadline is not None and time.monotonic() > deadline:
            break
    return HeuristicOutcome(None, None, message="no order placed every item")


def _fill_kp(instance: Any, order: list[int]) -> list[int | None]:
    """Items in ``order`` into the one knapsack (index 0) while they fit."""
    room, assignment = instance.capacity, [None] * instance.n_items
    for j in order:
        if instance.weights[j] <= room:
            assignment[j], room = 0, room - instance.weights[j]
    return assignment


def _fill_gap(instance: Any, order: list[int]) -> list[int | None]:
    """Items in ``order``, each on the agent where it takes the smallest share of the room left."""
    room, assignment = list(instance.capacities), [None] * instance.n_items
    for j in order:
        fits = [i for i in range(instance.n_knapsacks) if instance.weights[i][j] <= room[i]]
        if fits:
            i = min(fits, key=lambda a: instance.weights[a][j] / room[a])
            assignment[j], room[i] = i, room[i] - instance.weights[i][j]
    return assignment


HEURISTICS = (
    Heuristic(
        name="random_fill",
        kinds=("kp", "gap"),
        run=random_fill,
        description="items in a random order, each where it fits (gap: where it takes the least room)",
        randomized=True,
        settings=FillSettings,
    ),
)
