"""Declares the seven kinds of the knapsack family: kp, mkp, gap, mdkp, qkp, qmkp and R-Storm's qm3dkp.

All seven share one exact entry (:func:`odrp.kinds.knapsack.exact.solve.solve`), which maps each
instance onto the family's general form, and its settings
(:class:`~odrp.kinds.knapsack.exact.settings.KnapsackSettings`); they differ in schema, loader,
evaluator, generators and the formulations that apply to them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import BaseModel

from odrp.core.kind import Evaluation, ProblemKind, model_text
from odrp.core.solvers import COMMERCIAL
from odrp.core.taskview import TaskViewAdapter
from odrp.kinds.knapsack import generators, qm3dkp
from odrp.kinds.knapsack.evaluator import (
    evaluate_gap,
    evaluate_kp,
    evaluate_mdkp,
    evaluate_mkp,
    evaluate_qkp,
    evaluate_qmkp,
)
from odrp.kinds.knapsack.exact.settings import KnapsackSettings
from odrp.kinds.knapsack.exact.solve import solve
from odrp.kinds.knapsack.exact.writable import models
from odrp.kinds.knapsack.instance import (
    GapSpec,
    KpSpec,
    MdkpSpec,
    MkpSpec,
    QkpSpec,
    QmkpSpec,
    load_gap,
    load_kp,
    load_mdkp,
    load_mkp,
    load_qkp,
    load_qmkp,
)
from odrp.kinds.knapsack.qm3dkp_evaluator import evaluate as evaluate_qm3dkp
from odrp.kinds.knapsack.taskview import task_solution, task_view

FORMULATIONS = ("auto", "textbook", "compact", "patterns")
"""The formulations of every kind of the family."""
ARCFLOW_FORMULATIONS = (*FORMULATIONS, "arcflow")
"""kp and mkp also have the arc-flow formulation."""
GAP_FORMULATIONS = (*FORMULATIONS, "lagrangian")
"""gap also has the Lagrangian search."""
SOLUTION_FORMAT = '{"assignment": [k or null, ...]}'
"""The family's solutions: the 0-based knapsack of each item, null when it is left out (never for gap)."""


def _kind(
    name: str,
    title: str,
    spec: type[BaseModel],
    load: Callable[..., Any],
    evaluate: Callable[..., Evaluation],
    generator: Callable[..., dict[str, Any]],
    sense: str = "max",
    formulations: tuple[str, ...] = FORMULATIONS,
) -> ProblemKind:
    return ProblemKind(
        name=name,
        title=title,
        sense=sense,  # type: ignore[arg-type]
        load=load,
        evaluate=evaluate,
        schema=lambda: spec.model_json_schema(by_alias=True),
        generators={"random": generator},
        exact=solve,
        size=lambda instance: instance.n_items,
        size_label="items",
        solvers=("highs", "cbc", "cpsat", "scip", *COMMERCIAL),
        formulations=formulations,
        settings=KnapsackSettings,
        starts=("greedy", "local_search"),
        race=("textbook",),
        model_markdown=model_text(__file__, name),
        solution_format=SOLUTION_FORMAT,
        models=models,
    )


KINDS: tuple[ProblemKind, ...] = (
    _kind("kp", "0-1 knapsack", KpSpec, load_kp, evaluate_kp, generators.kp, formulations=ARCFLOW_FORMULATIONS),
    _kind(
        "mkp",
        "0-1 multiple knapsack",
        MkpSpec,
        load_mkp,
        evaluate_mkp,
        generators.mkp,
        formulations=ARCFLOW_FORMULATIONS,
    ),
    _kind(
        "gap",
        "generalized assignment (sense per instance; registered as min)",
        GapSpec,
        load_gap,
        evaluate_gap,
        generators.gap,
        sense="min",
        formulations=GAP_FORMULATIONS,
    ),
    _kind("mdkp", "multidimensional 0-1 knapsack", MdkpSpec, load_mdkp, evaluate_mdkp, generators.mdkp),
    _kind("qkp", "0-1 quadratic knapsack", QkpSpec, load_qkp, evaluate_qkp, generators.qkp),
    _kind("qmkp", "quadratic multiple knapsack", QmkpSpec, load_qmkp, evaluate_qmkp, generators.qmkp),
    ProblemKind(
        name=qm3dkp.NAME,
        title="QM3DKP: R-Storm's quadratic multiple 3-dimensional knapsack (Peng et al. 2015)",
        sense=qm3dkp.SENSE,
        load=qm3dkp.load,
        evaluate=evaluate_qm3dkp,
        schema=qm3dkp.schema,
        generators={"random": generators.qm3dkp, "rstorm": generators.rstorm},
        exact=solve,
        size=lambda instance: instance.n_tasks,
        size_label="tasks",
        solvers=("highs", "cbc", "cpsat", "scip", *COMMERCIAL),
        formulations=(*FORMULATIONS, "configurations"),
        taskview=TaskViewAdapter(view=task_view, solution=task_solution),
        settings=KnapsackSettings,
        starts=("greedy", "storm_default", "rstorm", "local_search"),
        race=("configurations",),
        race_solvers=("highs",),
        model_markdown=model_text(__file__, qm3dkp.NAME),
        solution_format='{"assignment": {"<component>#<k>": node}}',
        models=models,
    ),
)
