"""Heuristics, one module per family, and the registry: name -> the kinds it solves.

A heuristic is a function ``(instance, seed, time_limit) -> HeuristicOutcome``; it must be
deterministic for a given seed. The runner (:mod:`odrp.methods`) times it and has the problem's
evaluator re-score its solution.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass
class HeuristicOutcome:
    """A heuristic's answer: its solution JSON (None if it found none) and its own objective."""

    solution: dict[str, Any] | None
    objective: float | None
    stats: dict[str, Any] = field(default_factory=dict)
    message: str = ""


@dataclass(frozen=True)
class Heuristic:
    name: str
    kinds: tuple[str, ...]
    run: Callable[..., HeuristicOutcome]
    description: str
    randomized: bool = False


REGISTRY: dict[str, Heuristic] = {}


def register(heuristic: Heuristic) -> Heuristic:
    if heuristic.name in REGISTRY or heuristic.name == "exact":
        raise ValueError(f"method name {heuristic.name!r} is taken")
    REGISTRY[heuristic.name] = heuristic
    return heuristic
