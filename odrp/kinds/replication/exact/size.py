"""Closed-form sizes of the ODRP models, computed from the instance before any model is built.

Each function returns ``(variables, constraints, nonzeros)`` of a model, counted from the
instance's candidate sets, stable replica counts and streams, without building it, so that
:func:`odrp.core.memory.check_model` can refuse a model over the memory budget before Python spends
it. The counts follow the builders family by family; where a family depends on values (rows with
a zero coefficient left out, pinned nodes) the count takes the larger case, so the estimate is at
or a little above the model that is built (``tests/test_odrp_textbook.py`` compares them).

Notation: c_i = |V_res^i| candidate nodes of operator i, K_i its stable replica counts,
L_i = sum_{k in K_i} k its replica levels (k, m), M_i = sum_{k in K_i} C(c_i + k - 1, k) its
multisets (the paper's x_{i,U}), D_i = the nodes summed over its multisets (a multiset of size k
over c nodes contains a given node in C(c + k - 1, k) - C(c + k - 2, k) cases).
"""

from __future__ import annotations

from math import comb

from odrp.kinds.replication.exact import pairs
from odrp.kinds.replication.exact.settings import OdrpSettings
from odrp.kinds.replication.instance import OdrpInstance

Size = tuple[int, int, int]
"""(variables, constraints, nonzeros)."""


def multiset_counts(inst: OdrpInstance) -> tuple[list[int], list[int]]:
    """M_i (multisets of stable size) and D_i (their distinct nodes, summed) per operator."""
    many, nodes = [], []
    for i in range(inst.n_operators):
        c = len(inst.candidates[i])
        ks = inst.replica_counts(i)
        many.append(sum(comb(c + k - 1, k) for k in ks))
        nodes.append(sum(c * (comb(c + k - 1, k) - comb(c + k - 2, k)) for k in ks))
    return many, nodes


def path_counts(inst: OdrpInstance) -> tuple[list[int], list[int]]:
    """Source-sink paths through each operator and through each stream (the rows of eq. 22)."""
    ops = range(inst.n_operators)
    ahead, behind = [0] * inst.n_operators, [0] * inst.n_operators
    for i in inst.topological_order:
        ahead[i] = 1 if not inst.incoming[i] else sum(ahead[inst.streams[s].source] for s in inst.incoming[i])
    for i in reversed(inst.topological_order):
        behind[i] = 1 if not inst.outgoing[i] else sum(behind[inst.streams[s].target] for s in inst.outgoing[i])
    through_op = [ahead[i] * behind[i] for i in ops]
    through_stream = [ahead[st.source] * behind[st.target] for st in inst.streams]
    return through_op, through_stream


def paper_size(inst: OdrpInstance) -> Size:
    """The paper's ILP (eqs. 22-32, :mod:`.paper`): x per multiset, y per pair of multisets of a stream."""
    many, nodes = multiset_counts(inst)
    pairs = [many[st.source] * many[st.target] for st in inst.streams]
    through_op, through_stream = path_counts(inst)
    paths = sum(through_op[i] for i in inst.sinks)
    links = len(inst.link_availability)
    variables = sum(many) + sum(pairs) + inst.n_nodes + links + 1
    coupling_rows = sum(many[st.source] + many[st.target] for st in inst.streams)
    constraints = paths + 2 * inst.n_nodes + links + inst.n_operators + coupling_rows
    nonzeros = (
        paths  # r in eq. 22
        + sum(t * m for t, m in zip(through_op, many, strict=True))  # x in eq. 22
        + sum(t * p for t, p in zip(through_stream, pairs, strict=True))  # y in eq. 22
        + 2 * sum(nodes)
        + inst.n_nodes  # eqs. 23-24
        + sum(nodes[st.source] * nodes[st.target] for st in inst.streams)
        + links  # eq. 25
        + sum(many)  # eq. 26
        + sum(many[st.source] + many[st.target] + 2 * p for st, p in zip(inst.streams, pairs, strict=True))  # 27-28
    )
    return variables, constraints, nonzeros


def _levels(inst: OdrpInstance) -> tuple[list[int], list[int], list[int]]:
    """c_i, |K_i| and L_i per operator."""
    cand = [len(c) for c in inst.candidates]
    counts = [len(inst.replica_counts(i)) for i in range(inst.n_operators)]
    levels = [sum(inst.replica_counts(i)) for i in range(inst.n_operators)]
    return cand, counts, levels


def _delay_and_potentials(
    inst: OdrpInstance,
    used: list[int],
    share: list[int],
    settings: OdrpSettings,
    pair_terms: dict[int, int] | None = None,
    exact: set[int] | frozenset[int] = frozenset(),
) -> Size:
    """What both compact models share when the response time counts: latency, stream delays,
    transport bound, potentials, round trips. ``used``/``share``: terms of o[i,u] and f[i,u];
    ``pair_terms``: per stream with pair shares, their terms (the transport bound's coupling);
    ``exact``: streams whose delay rows that coupling makes unnecessary."""
    cand, counts, _ = _levels(inst)
    pair_terms = pair_terms or {}
    n, streams = inst.n_operators, inst.streams
    pairs = [cand[st.source] * cand[st.target] for st in streams]
    variables = n + len(streams) + n + 1  # rho, delta, start, r
    constraints = n + sum(cand[i] * counts[i] for i in range(n))  # latency rows
    nonzeros = sum((1 + used[i]) * (1 + cand[i] * counts[i]) for i in range(n))
    delayed = [(st, p) for s, (st, p) in enumerate(zip(streams, pairs, strict=True)) if s not in exact]
    constraints += sum(p for _, p in delayed)  # delta >= d (o[i,u] + o[j,v] - 1)
    nonzeros += sum(p * (1 + used[st.source] + used[st.target]) for st, p in delayed)
    if settings.transport_delay_bound:
        constraints += len(pair_terms)
        nonzeros += sum(t + 1 for t in pair_terms.values())
        coupled = [(st, p) for s, (st, p) in enumerate(zip(streams, pairs, strict=True)) if s not in pair_terms]
        variables += sum(p for _, p in coupled)
        constraints += sum(cand[st.source] + cand[st.target] + 1 for st, _ in coupled)
        nonzeros += sum(
            3 * p + cand[st.source] * share[st.source] + cand[st.target] * share[st.target] + 1 for st, p in coupled
        )
    constraints += len(streams) + len(inst.sinks)
    nonzeros += 4 * len(streams) + 3 * len(inst.sinks)
    if settings.round_trip_bounds:
        variables += 2 * n
        constraints += 2 * len(streams) + sum(cand) + n
        nonzeros += 6 * len(streams) + sum(cand[i] * (4 + used[i]) for i in range(n)) + sum(4 + c for c in used)
    return variables, constraints, nonzeros


def _availability(inst: OdrpInstance, used: list[int]) -> Size:
    """Activations of the lossy nodes and links (availability < 1) and their rows."""
    lossy = [[u for u in inst.candidates[i] if inst.node_availability[u] < 1] for i in range(inst.n_operators)]
    crossing = [
        sum(1 for u in inst.candidates[st.source] for v in inst.candidates[st.target]
            if u != v and inst.link_availability[inst.link_id[u][v]] < 1)
        for st in inst.streams
    ]  # fmt: skip
    variables = inst.n_nodes + len(inst.link_availability)
    constraints = sum(map(len, lossy)) + sum(crossing)
    nonzeros = sum(len(lossy[i]) * (1 + used[i]) for i in range(inst.n_operators))
    nonzeros += sum(c * (1 + used[st.source] + used[st.target]) for c, st in zip(crossing, inst.streams, strict=True))
    return variables, constraints, nonzeros


def _pair_shares(inst: OdrpInstance, streams: list[int]) -> tuple[Size, dict[int, int]]:
    """The replica-pair shares of :mod:`.pairs` for ``streams``, and each stream's number of P terms."""
    cand, _, _ = _levels(inst)
    levels = {i: [(k, c) for k in inst.replica_counts(i) for c in range(1, k + 1)] for i in range(inst.n_operators)}
    variables = constraints = nonzeros = 0
    terms = {}
    for s in streams:
        i, j = inst.streams[s].source, inst.streams[s].target
        oriented = pairs.orientation(inst, s, levels)
        if oriented is None:  # the coupling form
            p = cand[i] * cand[j]
            variables += p
            constraints += cand[i] + cand[j]
            nonzeros += 2 * p + cand[i] + cand[j]
            terms[s] = p
            continue
        a, b, classes = oriented
        q = len(classes)
        variables += cand[a] * q * cand[b]
        constraints += cand[a] * q + cand[a] * cand[b] + cand[b]
        nonzeros += cand[a] * (q * cand[b] + len(levels[a])) + cand[a] * cand[b] * (q + 1) + cand[b] * (cand[a] * q + 1)
        terms[s] = cand[a] * cand[b] * q
    return (variables, constraints, nonzeros), terms


def compact_size(inst: OdrpInstance, settings: OdrpSettings) -> Size:
    """The compact model (:mod:`.compact`): binaries per replica level, o and f columns, pair shares."""
    cand, counts, levels = _levels(inst)
    n = inst.n_operators
    h = [cand[i] * levels[i] for i in range(n)]
    spread = [cand[i] if levels[i] > 1 else 0 for i in range(n)]  # o[i,u] and f[i,u] columns
    variables = sum(h) + sum(counts) + 2 * sum(spread)
    constraints = n + sum(cand[i] * counts[i] for i in range(n)) + sum(counts) + inst.n_nodes + 2 * sum(spread)
    nonzeros = (
        sum(counts)
        + 2 * sum(h)
        + sum(counts)
        + sum(h)
        + sum(h)
        + 2 * sum(c * (1 + levels[i]) for i, c in enumerate(spread))
    )
    ones = [1] * n
    w = inst.weights
    full, diagonal = pairs.pair_streams(inst)
    pair_size, pair_terms = _pair_shares(inst, full)
    sizes = [(variables, constraints, nonzeros), pair_size]
    if w["response_time"] > 0:
        exact = {s for s in pair_terms if all(pairs.point_mass(inst, i) for i in _ends(inst, s))}
        exact = exact if settings.transport_delay_bound else set()
        sizes.append(_delay_and_potentials(inst, ones, ones, settings, pair_terms, exact))
    if w["availability"] > 0:
        sizes.append(_availability(inst, ones))
    if diagonal:  # the co-located share of the streams that need only the inter-node traffic
        shared = [
            (len(set(inst.candidates[s_.source]) & set(inst.candidates[s_.target])), s_)
            for s_ in (inst.streams[s] for s in diagonal)
        ]
        sizes.append(
            (
                sum(c * levels[st.source] for c, st in shared),
                sum(c * (levels[st.source] + 1) for c, st in shared),
                sum(c * (3 * levels[st.source] + 1) for c, st in shared),
            )
        )
    return _total(sizes)


def _ends(inst: OdrpInstance, s: int) -> tuple[int, int]:
    return inst.streams[s].source, inst.streams[s].target


def response_size(inst: OdrpInstance, settings: OdrpSettings) -> Size:
    """The response-time model (:mod:`.response`) before pruning: counts per node, nodes used."""
    cand, counts, _ = _levels(inst)
    n = inst.n_operators
    counts_per_node = [cand[i] * counts[i] for i in range(n)]
    variables = sum(counts) + sum(counts_per_node) + sum(cand)
    constraints = n + sum(counts) + sum(cand) + inst.n_nodes
    nonzeros = 2 * sum(counts) + 3 * sum(counts_per_node) + sum(cand)
    ones = [1] * n
    sizes = [(variables, constraints, nonzeros)]
    if inst.weights["response_time"] > 0:
        sizes.append(_delay_and_potentials(inst, ones, counts, settings))
        if settings.path_bounds:
            sizes.append((0, n + sum(cand), sum(cand) + 2 * sum(cand) + n))
    if inst.weights["availability"] > 0:
        sizes.append(_availability(inst, ones))
    return _total(sizes)


def _total(sizes: list[Size]) -> Size:
    return sum(s[0] for s in sizes), sum(s[1] for s in sizes), sum(s[2] for s in sizes)
