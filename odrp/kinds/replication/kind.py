"""Declares the ODRP kind (``"problem": "odrp"``): loader, evaluator, generators, task view, exact method,
settings, model files."""

from __future__ import annotations

from odrp.core.kind import ProblemKind, model_text
from odrp.core.solvers import MILP_SOLVERS
from odrp.kinds.replication import generators, taskview
from odrp.kinds.replication.evaluator import evaluate
from odrp.kinds.replication.exact.settings import OdrpSettings
from odrp.kinds.replication.exact.solve import FORMULATIONS, solve
from odrp.kinds.replication.exact.writable import models
from odrp.kinds.replication.instance import NAME, SENSE, load, schema

KIND = ProblemKind(
    name=NAME,
    model_markdown=model_text(__file__, NAME),
    solution_format='{"placement": {operator: {node: replicas}}}',
    title="ODRP: joint operator replication and placement (Cardellini et al. 2017)",
    sense=SENSE,
    load=load,
    evaluate=evaluate,
    schema=schema,
    generators={"random": generators.random_instance, "debs2015": generators.debs2015},
    exact=solve,
    size=lambda instance: instance.n_operators,
    size_label="operators",
    solvers=MILP_SOLVERS,
    formulations=FORMULATIONS,
    taskview=taskview.ADAPTER,
    settings=OdrpSettings,
    starts=("odrp_greedy", "odrp_tabu", "odrp_local_search"),
    # HiGHS's branch and bound leaves a core idle; from the greedy with the run's seed, the search replays the
    # starts' odrp_local_search and goes on past its share: never worse than that heuristic run alone
    race_search=("odrp_local_search", {"restarts": None, "start": "greedy"}),
    models=models,
)
