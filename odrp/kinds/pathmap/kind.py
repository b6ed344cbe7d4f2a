"""Declares the pathmap kind: loader, evaluator, generators, exact entry and defaults."""

from __future__ import annotations

from odrp.core.kind import ProblemKind, model_text
from odrp.core.solvers import MILP_SOLVERS
from odrp.kinds.pathmap import generators
from odrp.kinds.pathmap.evaluator import evaluate
from odrp.kinds.pathmap.exact.solve import FORMULATIONS, solve
from odrp.kinds.pathmap.exact.writable import models
from odrp.kinds.pathmap.instance import NAME, SENSE, load, schema

KIND = ProblemKind(
    name=NAME,
    model_markdown=model_text(__file__, NAME),
    solution_format='{"nodes": {component: server}, "paths": [[server, ...], ...]}',
    title="Pathmap: service-chain mapping on bi-modal networks (Asaduzzaman & Maheswaran)",
    sense=SENSE,
    load=load,
    evaluate=evaluate,
    schema=schema,
    generators={"ba": generators.ba_instance, "bimodal": generators.bimodal_instance},
    exact=solve,
    size=lambda instance: instance.n_servers,
    size_label="servers",
    solvers=MILP_SOLVERS,
    formulations=FORMULATIONS,
    default_generator="ba",
    starts=("least_cost_map", "process_map2"),
    models=models,
)
