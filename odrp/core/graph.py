"""An instance's directed graph (operators and streams, components and edges) as a networkx graph.

networkx keeps the order in which nodes and edges are added, and its searches follow that order, so a
graph built here gives the same topological order, path order and cycle on every run: the nodes are
0..n-1 in order and each edge's successors come in the order of the instance's edge list.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import networkx as nx

from odrp.core.errors import InputError


def digraph(n: int, edges: Iterable[tuple[int, int]]) -> nx.DiGraph:
    """Nodes 0..n-1, then the edges in their given order, the i-th edge carrying ``index=i``."""
    graph = nx.DiGraph()
    graph.add_nodes_from(range(n))
    for index, (u, v) in enumerate(edges):
        graph.add_edge(u, v, index=index)
    return graph


def require_acyclic(graph: nx.DiGraph, names: Sequence[str], source: str, field: str, what: str) -> None:
    """Bad input naming one cycle (``a -> b -> a``) unless ``graph`` is acyclic; ``what``: its nodes, plural."""
    try:
        cycle = nx.find_cycle(graph)
    except nx.NetworkXNoCycle:
        return
    path = " -> ".join(repr(names[u]) for u, _ in cycle)
    raise InputError(source, field, f"an acyclic graph of {what}, found the cycle {path} -> {names[cycle[0][0]]!r}")
