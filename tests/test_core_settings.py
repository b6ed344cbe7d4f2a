"""Settings as data (odrp.core.settings) and the one time budget (odrp.core.budget)."""

from __future__ import annotations

import dataclasses
import time
from typing import Literal

import pytest

from odrp.core.budget import Budget
from odrp.core.errors import InputError
from odrp.core.settings import from_options, names


@dataclasses.dataclass(frozen=True)
class Inner:
    limit: int = 5
    share: float = 0.5


@dataclasses.dataclass(frozen=True)
class Example:
    iterations: int = dataclasses.field(default=20, metadata={"ge": 1})
    """Rounds."""
    share: float = dataclasses.field(default=0.5, metadata={"gt": 0, "le": 1})
    """A share of the time."""
    fast: bool = True
    branch: Literal["spread", "first"] = "spread"
    cap: int | None = None
    start: str | dict | None = None
    inner: Inner = dataclasses.field(default_factory=lambda: Inner(limit=7))


def test_defaults_and_text_values_from_the_command_line():
    assert from_options(Example, {}) == Example()
    got = from_options(Example, {"iterations": "7", "share": "0.25", "fast": "no", "branch": "first", "cap": "none"})
    assert got == Example(iterations=7, share=0.25, fast=False, branch="first", cap=None)
    assert from_options(Example, {"cap": "12"}).cap == 12
    assert names(Example) == ("iterations", "share", "fast", "branch", "cap", "start", "inner.*")
    assert from_options(Example, {"start": {"placement": {}}}).start == {"placement": {}}
    assert from_options(Example, {"start": "greedy"}).start == "greedy"


def test_a_group_of_sub_settings_by_dotted_names_keeps_the_parents_defaults():
    assert from_options(Example, {}).inner == Inner(limit=7, share=0.5)
    assert from_options(Example, {"inner.share": "0.25"}).inner == Inner(limit=7, share=0.25)
    assert from_options(Example, {"inner": {"limit": 3}}).inner == Inner(limit=3, share=0.5)
    with pytest.raises(InputError, match=r"--param inner: a group of options: give inner.NAME \(limit, share\)"):
        from_options(Example, {"inner": "1"})
    with pytest.raises(InputError, match=r"--param inner\.limit2: an option of this method \(limit, share\)"):
        from_options(Example, {"inner.limit2": "1"})


def test_values_from_a_grid_file_keep_their_types():
    assert from_options(Example, {"iterations": 3, "share": 1, "fast": True}) == Example(3, 1.0, True)


@pytest.mark.parametrize(
    ("options", "field", "expected"),
    [
        ({"iterations": "abc"}, "--param iterations", "an integer, got 'abc'"),
        ({"iterations": "0"}, "--param iterations", "a number >= 1, got '0'"),
        ({"share": "nan"}, "--param share", "a finite number"),
        ({"share": "0"}, "--param share", "a number > 0"),
        ({"share": "1.5"}, "--param share", "a number <= 1"),
        ({"fast": "maybe"}, "--param fast", "true or false"),
        ({"branch": "widest"}, "--param branch", "one of spread, first"),
        ({"iterations": True}, "--param iterations", "an integer"),
        (
            {"colour": "red"},
            "--param colour",
            "an option of this method (iterations, share, fast, branch, cap, start, inner.*)",
        ),
    ],
)
def test_bad_values_name_the_option(options, field, expected):
    with pytest.raises(InputError) as caught:
        from_options(Example, options)
    assert caught.value.field == field
    assert expected in caught.value.expected
    assert "\n" not in str(caught.value)


def test_a_grid_file_names_the_option_by_its_path():
    with pytest.raises(InputError) as caught:
        from_options(Example, {"iterations": 0}, source="grid.yaml", where="studies[0].options.greedy")
    assert str(caught.value) == "grid.yaml: studies[0].options.greedy.iterations: a number >= 1, got 0"


def test_long_values_are_cut_in_the_message():
    with pytest.raises(InputError) as caught:
        from_options(Example, {"iterations": "9" * 10_000 + "x"})
    assert len(str(caught.value)) < 200


def test_budget_counts_steps_and_says_which_limit_ended_the_run():
    budget = Budget(max_steps=3)
    assert [budget.spend() for _ in range(5)] == [True, True, True, False, False]
    assert budget.steps == 3 and budget.stopped == "max_steps"
    assert budget.left() is None and budget.deadline is None


def test_budget_time_limit():
    budget = Budget(time_limit=0.05)
    assert budget.spend() and 0.0 < budget.left() <= 0.05
    time.sleep(0.06)
    assert budget.left() == 0.0 and budget.expired() and not budget.spend()
    assert budget.stopped == "time_limit" and budget.steps == 1
    assert budget.stats() == {"steps": 1, "stopped": "time_limit"}


def test_a_share_never_outlasts_the_whole():
    whole = Budget(time_limit=10.0)
    part = whole.share(0.5, at_most=2.0)
    assert part.time_limit is not None and part.time_limit <= 2.0
    assert 4.9 < whole.share(0.5).time_limit <= 5.0
    assert Budget().share(0.5).time_limit is None
    assert Budget().share(at_most=3.0).time_limit == 3.0
