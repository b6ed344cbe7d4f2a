"""Fixtures of the benchmark tests: one shared local Spark context, and no plugin left behind.

Import them into a test module (``from tests.bench_fixtures import forget_plugins, spark``).
"""

from __future__ import annotations

import sys

import pytest

from odrp.registry import unload_plugins

PLUGINS = "tests.bench_plugins"


@pytest.fixture(scope="session")
def spark():
    """One ``local[2]`` SparkContext for every Spark test of the session (it starts in 10-20 s).

    ``odrp.bench.runner`` reuses an active context and leaves it running, so tests simply call
    ``bench(..., master="local[2]")``.
    """
    from odrp.bench.runner import spark_context

    with spark_context("local[2]") as (sc, _):
        yield sc


@pytest.fixture(autouse=True)
def forget_plugins():
    """Forget the test plugins after each test, so that no other test sees them."""
    yield
    sys.modules.pop(PLUGINS, None)
    unload_plugins()
