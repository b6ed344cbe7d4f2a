"""Declares the throughput kind: its loader, evaluator, generators, task view, exact entry and defaults."""

from __future__ import annotations

from odrp.core.kind import ProblemKind, model_text
from odrp.core.taskview import TaskViewAdapter
from odrp.kinds.throughput import generators
from odrp.kinds.throughput.evaluator import evaluate
from odrp.kinds.throughput.exact.settings import ThroughputSettings
from odrp.kinds.throughput.exact.solve import FORMULATIONS, SOLVERS, solve
from odrp.kinds.throughput.exact.writable import models
from odrp.kinds.throughput.instance import NAME, SENSE, ThroughputInstance, load, schema
from odrp.kinds.throughput.taskview import task_solution, task_view


def size(inst: ThroughputInstance) -> int:
    """Components x machines: the number of (component, machine) count variables x_cw."""
    return inst.n_components * inst.n_machines


KIND = ProblemKind(
    name=NAME,
    model_markdown=model_text(__file__, NAME),
    solution_format='{"instances": {component: {machine: count}}}',
    title="Max-throughput scheduling on heterogeneous Storm clusters (Nasiri et al. 2023)",
    sense=SENSE,
    load=load,
    evaluate=evaluate,
    schema=schema,
    generators={
        "random": generators.random_instance,
        "micro": generators.micro_benchmark,
        "storm_benchmark": generators.storm_benchmark,
    },
    exact=solve,
    size=size,
    size_label="components x machines",
    solvers=SOLVERS,
    default_solver="cpsat",  # measured fastest at paper size (benchmarks/throughput.py --part paper)
    formulations=FORMULATIONS,
    taskview=TaskViewAdapter(view=task_view, solution=task_solution),
    settings=ThroughputSettings,
    starts=("hetero_greedy", "storm_default", "rstorm", "storm_ras"),
    models=models,
)
