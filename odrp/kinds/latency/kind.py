"""Declares the latency kind: loader, evaluator, generators, task view, exact entry and defaults."""

from __future__ import annotations

from odrp.core.kind import ProblemKind, model_text
from odrp.core.solvers import MILP_SOLVERS
from odrp.core.taskview import TaskViewAdapter
from odrp.kinds.latency import generators
from odrp.kinds.latency.evaluator import evaluate
from odrp.kinds.latency.exact.settings import LatencySettings
from odrp.kinds.latency.exact.solve import FORMULATIONS, solve
from odrp.kinds.latency.exact.writable import models
from odrp.kinds.latency.instance import NAME, SENSE, load, schema
from odrp.kinds.latency.taskview import task_solution, task_view

KIND = ProblemKind(
    name=NAME,
    model_markdown=model_text(__file__, NAME),
    solution_format='{"assignment": {operator: supervisor}}',
    title="Latency-aware placement in the compute continuum (Ecker et al.)",
    sense=SENSE,
    load=load,
    evaluate=evaluate,
    schema=schema,
    generators={"random": generators.random_topology, "paper": generators.paper_topology},
    exact=solve,
    size=lambda instance: instance.n_operators,
    size_label="operators",
    solvers=MILP_SOLVERS,
    formulations=FORMULATIONS,
    taskview=TaskViewAdapter(view=task_view, solution=task_solution),
    settings=LatencySettings,
    starts=("storm_ras", "hill_climbing", "hybrid"),
    models=models,
)
