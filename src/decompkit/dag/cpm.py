r"""The critical path method: earliest and latest times, slack and one critical path.

With durations :math:`d_v`, the forward pass gives :math:`ES_v = \max_{u \to v} EF_u` (0 for
sources) and :math:`EF_v = ES_v + d_v`; the makespan with unlimited workers is
:math:`T_\infty = \max_v EF_v`, the length of the longest duration-weighted path. The
backward pass gives :math:`LF_u = \min_{u \to v} LS_v` (:math:`T_\infty` for sinks),
:math:`LS_v = LF_v - d_v` and the slack :math:`LS_v - ES_v`: how late a node may start
without delaying the plan (Kelley & Walker 1959).

:func:`cpm_passes`, the two passes on an indexed graph, is public for
:mod:`decompkit.dag.list_scheduling`, which ranks by the same tails; the package lifts only
``__all__``.
"""

from __future__ import annotations

from dataclasses import dataclass

from .indexed import Indexed, gc_paused, index_graph
from .inputs import durations as _durations
from .kahn import layer_passes, reverse_kahn

__all__ = ["CriticalPath", "critical_path"]


@dataclass(frozen=True)
class CriticalPath:
    """Result of :func:`critical_path` (Critical Path Method, unlimited workers).

    Attributes
    ----------
    makespan : int or float
        Length of the longest duration-weighted path: the finish time with unlimited workers.
    path : list
        One critical path, source to sink; ties broken by first appearance.
    earliest_start, earliest_finish, latest_start, latest_finish, slack : dict
        Per node, in first-appearance order. ``slack = latest_start - earliest_start``: how
        late a node may start without delaying the makespan; 0 on every critical path.
    serial_time : int or float
        Sum of all durations: the finish time with one worker.
    """

    makespan: float
    path: list
    earliest_start: dict
    earliest_finish: dict
    latest_start: dict
    latest_finish: dict
    slack: dict
    serial_time: float


def critical_path(graph, durations, *, strict: bool = False) -> CriticalPath:
    r"""Critical path, makespan, earliest and latest times, and slack of every node.

    Parameters
    ----------
    graph : Mapping
        ``{node: iterable of predecessors}``.
    durations : Mapping
        ``{node: duration}`` for every node: finite numbers >= 0. All ints give int results.
    strict : bool, optional
        If True, every predecessor must also be a key of ``graph``.

    Returns
    -------
    CriticalPath
        ``makespan``, ``path``, the four per-node time mappings, ``slack`` and
        ``serial_time``.

    Raises
    ------
    ValueError
        If a duration is missing, negative, NaN, infinite or not a number, float durations
        add up to more than the largest float (every later time would be infinite),
        ``durations`` names a node outside the graph, or the graph is malformed.
    CycleError
        If the graph has a cycle (a longest path is then unbounded).

    Notes
    -----
    Critical Path Method (Kelley & Walker 1959). Forward pass along a topological order:
    :math:`ES_v = \max_{u \to v} EF_u` (0 for sources), :math:`EF_v = ES_v + d_v`,
    makespan :math:`T = \max_v EF_v`. Backward pass: the tail
    :math:`t_v = \max_{v \to w} (d_w + t_w)` (0 for sinks) gives :math:`LF_v = T - t_v`,
    :math:`LS_v = LF_v - d_v` and slack :math:`LS_v - ES_v`. Theta(V + E); a longest path
    is NP-hard in general graphs but linear in a DAG. With float durations, slacks carry
    the usual rounding (compare with a tolerance).

    Examples
    --------
    >>> g = {"fetch": ["spec"], "tests": ["spec"], "code": ["fetch"], "run": ["code", "tests"]}
    >>> d = {"spec": 1, "fetch": 3, "tests": 2, "code": 4, "run": 1}
    >>> cp = critical_path(g, d)
    >>> cp.makespan, cp.path, cp.slack["tests"], cp.serial_time
    (9, ['spec', 'fetch', 'code', 'run'], 5, 11)
    """
    with gc_paused():
        g = index_graph(graph, strict, self_loops=False)
        d = _durations(g, durations)
        zero = 0 if not d or type(d[0]) is int else 0.0
        es, ef, tail = cpm_passes(g, d)
        makespan = max(ef, default=zero)
        lf = [makespan - t for t in tail]
        ls = [f - x for f, x in zip(lf, d, strict=True)]
        slack = [a - b for a, b in zip(ls, es, strict=True)]
        nodes = g.nodes
        return CriticalPath(
            makespan=makespan,
            path=[nodes[i] for i in _path(g, ef, es, makespan)],
            earliest_start=dict(zip(nodes, es, strict=True)),
            earliest_finish=dict(zip(nodes, ef, strict=True)),
            latest_start=dict(zip(nodes, ls, strict=True)),
            latest_finish=dict(zip(nodes, lf, strict=True)),
            slack=dict(zip(nodes, slack, strict=True)),
            serial_time=sum(d, zero),
        )


#: Vectorise the passes when the graph has at least this many edges per height layer:
#: NumPy then pays its per-call cost a few times per layer instead of Python's per edge.
_EDGES_PER_LAYER = 512


def cpm_passes(g: Indexed, d: list) -> tuple[list, list, list]:
    """Earliest starts, earliest finishes and tails (longest duration after each node).

    Both passes walk the order of Kahn's pass on the reversed graph (:func:`reverse_kahn`), sinks
    first: every successor of a node comes before it. The backward pass pushes
    ``tail[v] + d[v]`` to each predecessor, from the sinks up; the forward pass takes
    ``ES[v] = max EF[u]`` over the predecessors, in the reverse order (a topological one).
    Wide, shallow graphs run the same arithmetic one height layer at a time with NumPy
    (:func:`layer_passes`), unless int durations could overflow int64; the results are
    identical.
    """
    preds = g.preds
    n = len(preds)
    queue, height = reverse_kahn(g)
    n_layers = max(height, default=-1) + 1
    ints = not d or type(d[0]) is int
    if len(g.flat) >= _EDGES_PER_LAYER * max(n_layers, 8) and not (ints and sum(d) >= 2**62):
        return layer_passes(g, queue, height, d, ints)
    zero = 0 if ints else 0.0
    tail = [zero] * n
    for v in queue:
        b = tail[v] + d[v]
        for u in preds[v]:
            if b > tail[u]:
                tail[u] = b
    es = [zero] * n
    ef = d[:]  # sources finish at their duration
    finish_of = ef.__getitem__
    for v in reversed(queue):
        ps = preds[v]
        if ps:
            start = max(map(finish_of, ps))
            es[v] = start
            ef[v] = start + d[v]
    return es, ef, tail


def _path(g: Indexed, ef: list, es: list, makespan) -> list[int]:
    """One longest path, from a source to a sink, ties by first appearance."""
    if not ef:
        return []
    # The first node to finish last, if it is a sink (the usual case); otherwise the first
    # sink among the nodes that finish last (one exists: a successor finishes no earlier).
    v = ef.index(makespan)
    if g.outdeg[v]:
        v = next(u for u, f in enumerate(ef) if f == makespan and not g.outdeg[u])
    path = [v]
    preds = g.preds
    while preds[v]:
        start = es[v]
        v = min(u for u in preds[v] if ef[u] == start)
        path.append(v)
    path.reverse()
    return path
