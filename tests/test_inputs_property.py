"""Property: no instance breaks the toolkit. Valid instances of every kind, mutated at random.

Each mutation puts one bad value somewhere in the instance JSON (NaN, an infinity, 1e308, a negative
number, zero, a huge count, a value of the wrong type), removes a field, adds an unknown one,
repeats a list entry (duplicate ids), or nests a value deeply. Whatever it does, the exact method,
run as the CLI runs it (a child process under a 2 s limit), must end in one of two ways: bad input
(an :class:`odrp.InputError` of one line of at most 1,000 characters), or a Result that is
``infeasible``, stopped at its time limit without a solution, or verified by the evaluator; and
within the limit plus 1 s.
"""

from __future__ import annotations

import copy
import json
import math
import time
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import odrp
from odrp.core.limits import GRACE

LIMIT = 2.0

SMALL: dict[str, tuple[str, dict[str, Any]]] = {
    "odrp": ("random", {"operators": 4, "nodes": 3}),
    "throughput": ("random", {"components": 3, "machines": 3}),
    "kp": ("random", {"items": 8}),
    "mkp": ("random", {"items": 8, "knapsacks": 2}),
    "gap": ("random", {"agents": 3, "jobs": 6}),
    "mdkp": ("random", {"items": 8, "dimensions": 2}),
    "qkp": ("random", {"items": 8}),
    "qmkp": ("random", {"items": 8, "knapsacks": 2}),
    "qm3dkp": ("random", {"components": 3, "max_parallelism": 2, "racks": 1, "nodes_per_rack": 2}),
    "latency": ("random", {"operations": 3, "parallelism": 1}),
    "pathmap": ("ba", {"servers": 12, "components": 4, "max_null": 1}),
}

BAD_VALUES = [
    math.nan,
    math.inf,
    -math.inf,
    1e308,
    -1e308,
    -1,
    -0.5,
    0,
    10**12,
    2**63,
    "x",
    None,
    True,
    [],
    {},
]


def _paths(data: Any, prefix: tuple = ()) -> list[tuple]:
    """Every path to a value inside ``data`` (keys and list positions)."""
    found = [prefix] if prefix else []
    if isinstance(data, dict):
        for key, value in data.items():
            found += _paths(value, (*prefix, key))
    elif isinstance(data, list):
        for k, value in enumerate(data[:6]):  # the first entries of a long list stand for the rest
            found += _paths(value, (*prefix, k))
    return found


def _parent(data: Any, path: tuple) -> Any:
    for step in path[:-1]:
        data = data[step]
    return data


def _mutate(data: dict[str, Any], path: tuple, how: str, value: Any) -> dict[str, Any]:
    out = copy.deepcopy(data)
    parent, last = _parent(out, path), path[-1]
    if how == "set":
        parent[last] = value
    elif how == "remove":
        del parent[last]
    elif how == "unknown" and isinstance(parent, dict):
        parent["unknown_field"] = value
    elif how == "repeat" and isinstance(parent, list):
        parent.append(copy.deepcopy(parent[last]))
    elif how == "nest":
        nested: Any = parent[last]
        for _ in range(200):
            nested = [nested]
        parent[last] = nested
    return out


def _base(kind: str) -> dict[str, Any]:
    generator, params = SMALL[kind]
    return odrp.generate(kind, generator, seed=1, **params)


@pytest.mark.parametrize("kind", list(SMALL))
def test_a_mutated_instance_is_bad_input_or_a_checked_result(kind):
    base = _base(kind)
    paths = [p for p in _paths(base) if p != ("problem",)]

    @settings(
        max_examples=20,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=[HealthCheck.too_slow],
    )
    @given(
        path=st.sampled_from(paths),
        how=st.sampled_from(["set", "set", "set", "remove", "unknown", "repeat", "nest"]),
        value=st.sampled_from(BAD_VALUES),
    )
    def check(path, how, value):
        mutated = _mutate(base, path, how, value)
        began = time.perf_counter()
        try:
            result = odrp.solve(mutated, time_limit=LIMIT)
        except odrp.InputError as error:
            message = str(error)
            assert "\n" not in message and len(message) <= 990, message[:200]
            return
        finally:
            assert time.perf_counter() - began <= LIMIT + GRACE + 1.0, (path, how, value)
        ok = (
            result.status == "infeasible"
            or (result.status == "time_limit" and result.solution is None)
            or result.verified
        )
        assert ok, (path, how, value, result.status, result.message[:300])
        json.dumps(result.to_dict(), allow_nan=False)  # what --json prints

    check()
