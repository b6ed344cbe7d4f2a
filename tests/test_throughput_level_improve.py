"""The level search's ``improve`` hook: a leaf's placement is replaced by a better one from the local
search before it becomes the incumbent (the exact method passes polish + reinsert)."""

from __future__ import annotations

import pytest

from odrp.kinds.throughput.exact import level_search
from tests.test_throughput_exact import best_placement, tiny
from tests.test_throughput_level_search import GAP, _boxes


@pytest.mark.parametrize("seed", [0, 3, 6])
def test_a_better_placement_from_improve_is_the_incumbent(seed):
    inst = tiny(seed)
    optimum, best_counts = best_placement(inst)  # brute force over every placement
    out = level_search.search(
        inst, optimum / 2, None, _boxes(inst), lambda best: best * (1 + GAP / 2), improve=lambda counts: best_counts
    )
    assert out.proven and out.best == pytest.approx(optimum, rel=1e-12)
    assert out.stats.incumbents == [out.best]  # the first leaf's placement was replaced by the optimum
