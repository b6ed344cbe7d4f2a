"""Instance graphs through networkx: topological orders worked by hand, and a cycle named in the error."""

from __future__ import annotations

import copy

import pytest

from odrp.core.errors import InputError
from odrp.kinds.replication.exact.paper import source_sink_paths
from odrp.kinds.replication.instance import load as load_odrp
from odrp.kinds.throughput.instance import load as load_throughput
from tests.test_odrp_evaluator import TINY
from tests.test_throughput_evaluator import HAND


def _throughput(components: list[str], edges: list[list[str]]) -> dict:
    """HAND's machines and profile entries for the given components and edges."""
    data = copy.deepcopy(HAND)
    data["components"] = [{"id": c} for c in components]
    data["edges"] = edges
    data["profile"] = {c: copy.deepcopy(HAND["profile"]["bolt"]) for c in components}
    return data


def test_throughput_order_is_kahns_first_in_first_out():
    # sources a, b (index order); a releases d, then b releases c: a, b, d, c (smallest-first would say a, b, c, d)
    data = _throughput(["a", "b", "c", "d"], [["a", "d"], ["b", "c"]])
    data["components"][0]["alpha"] = 2.0
    inst = load_throughput(data)
    assert [inst.components[c] for c in inst.topological_order] == ["a", "b", "d", "c"]
    # input factors in that order: a source 1, another component the sum of alpha x factor of its inputs
    assert inst.load == (1.0, 1.0, 1.0, 2.0)


def test_odrp_order_and_source_sink_paths_by_hand():
    data = copy.deepcopy(TINY)
    data["operators"].append({"id": "side", "service_rate": 30, "input_rate": 5, "candidates": ["b"]})
    data["streams"] += [{"from": "side", "to": "snk", "rate": 5}, {"from": "src", "to": "snk", "rate": 1}]
    inst = load_odrp(data)  # operators src 0, op 1, snk 2, side 3; streams src-op, op-snk, side-snk, src-snk
    assert inst.topological_order == (0, 3, 1, 2)
    assert source_sink_paths(inst) == [([0, 1, 2], [0, 1]), ([0, 2], [3]), ([3, 2], [2])]


@pytest.mark.parametrize(
    ("load", "data", "expected"),
    [
        (
            load_odrp,
            {**TINY, "streams": [*TINY["streams"], {"from": "snk", "to": "op", "rate": 1}]},
            "cycle.json: streams: an acyclic graph of operators, found the cycle 'op' -> 'snk' -> 'op'",
        ),
        (
            load_throughput,
            _throughput(["a", "b", "c", "d"], [["a", "b"], ["b", "c"], ["c", "d"], ["d", "b"]]),
            "cycle.json: edges: an acyclic graph of components, found the cycle 'b' -> 'c' -> 'd' -> 'b'",
        ),
    ],
    ids=["odrp", "throughput"],
)
def test_a_cycle_is_bad_input_naming_it(load, data, expected):
    with pytest.raises(InputError) as error:
        load(data, "cycle.json")
    assert str(error.value) == expected
