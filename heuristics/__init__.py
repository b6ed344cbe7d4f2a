"""Heuristics: the papers' and ours, one module per family.

Each module declares its heuristics in a tuple ``HEURISTICS`` of :class:`odrp.core.method.Heuristic`;
:mod:`odrp.registry` collects them. Heuristics import the core and a kind's problem side (instance,
evaluator, generators, task view), never its exact side: exact methods may use heuristics for their
starting solutions, not the other way round. This folder is installed as ``odrp.heuristics``.
"""
