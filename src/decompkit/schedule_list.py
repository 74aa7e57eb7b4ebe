r"""Scheduling a plan DAG: the critical path (unlimited workers) and list scheduling (m workers).

With durations :math:`d_v`, the Critical Path Method gives :math:`ES_v = \max_{u \to v} EF_u`,
:math:`EF_v = ES_v + d_v`, makespan :math:`T_\infty = \max_v EF_v` and slack
:math:`LS_v - ES_v`. A list scheduler on :math:`m` workers that never idles while a task is
ready finishes within :math:`T \le W/m + (1 - 1/m)\,T_\infty \le (2 - 1/m)\,T_{opt}`, with
:math:`W = \sum_v d_v` (Graham 1969).

Graphs are ``{node: iterable of predecessors}`` as in :mod:`decompkit.dag`, which re-exports
everything here.
"""

from __future__ import annotations

import heapq
import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from .dag import _gc_paused, _index, _Indexed, _kahn, _short, _whole

__all__ = ["CriticalPath", "critical_path", "Schedule", "list_schedule"]


# --------------------------------------------------------------------------------------------
# Critical path
# --------------------------------------------------------------------------------------------


def _durations(g: _Indexed, durations) -> list:
    """Durations as a list by node index: all ints, or all floats if any is not integral."""
    if not isinstance(durations, Mapping):
        raise ValueError(
            f"durations must be a mapping {{node: duration}}, got {_short.repr(durations)}"
        )
    if len(durations) == len(g.nodes):
        # Fast path for plain ints and floats: C-level lookups and checks.
        try:
            d = list(map(durations.__getitem__, g.nodes))
        except KeyError:
            d = []  # a node is missing, so some key is unknown: the loop below names it
        kinds = set(map(type, d))
        if d and kinds <= {int} and min(d) >= 0:
            return d
        if d and kinds <= {int, float} and all(map(math.isfinite, d)) and min(d) >= 0:
            return list(map(float, d))
    index = g.index
    d = [None] * len(g.nodes)
    integral = True
    for node, x in durations.items():
        i = index.get(node)
        if i is None:
            raise ValueError(f"durations names node {node!r}, which is not in the graph")
        if isinstance(x, (bool, np.bool_)) or not isinstance(x, numbers.Real):
            raise ValueError(f"duration of node {node!r} must be a number >= 0, got {x!r}")
        if isinstance(x, numbers.Integral):
            x = int(x)
        else:
            x = float(x)
            integral = False
            if not math.isfinite(x):
                raise ValueError(f"duration of node {node!r} must be finite and >= 0, got {x!r}")
        if x < 0:
            raise ValueError(f"duration of node {node!r} must be >= 0, got {x!r}")
        d[i] = x
    if len(durations) < len(d):
        missing = next(i for i, x in enumerate(d) if x is None)
        raise ValueError(f"durations has no entry for node {g.nodes[missing]!r}")
    return d if integral else [float(x) for x in d]


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
        If a duration is missing, negative, NaN, infinite or not a number, ``durations``
        names a node outside the graph, or the graph is malformed.
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
    with _gc_paused():
        g = _index(graph, strict, self_loops=False)
        d = _durations(g, durations)
        zero = 0 if not d or type(d[0]) is int else 0.0
        es, ef, tail = _passes(g, d)
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


def _passes(g: _Indexed, d: list) -> tuple[list, list, list]:
    """Earliest starts, earliest finishes and tails (longest duration after each node).

    Both passes walk the height layers of Kahn's pass on the reversed graph: a node's
    successors all sit in lower layers and its predecessors in higher ones. The backward
    pass pushes ``tail[v] + d[v]`` to each predecessor, layer by layer from the sinks; the
    forward pass takes ``ES[v] = max EF[u]`` over predecessors, from the top layer down.
    Wide, shallow graphs run each layer as a few NumPy calls; deep ones (or ints that could
    overflow int64) run the same arithmetic in Python, with identical results.
    """
    preds = g.preds
    n = len(preds)
    queue, height = _kahn(g)
    n_layers = max(height, default=-1) + 1
    ints = not d or type(d[0]) is int
    if len(g.flat) < _EDGES_PER_LAYER * max(n_layers, 8) or (ints and sum(d) >= 2**62):
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
    q = np.asarray(queue, dtype=np.intp)
    cuts = (np.flatnonzero(np.diff(np.asarray(height, dtype=np.intp)[q])) + 1).tolist()
    layers = [q[a:b] for a, b in zip([0, *cuts], [*cuts, n], strict=True)]
    dur = np.asarray(d, dtype=np.int64 if ints else np.float64)
    lens = np.fromiter(map(len, preds), dtype=np.intp, count=n)
    offsets = np.cumsum(lens) - lens
    flat = g.flat

    def gather(nodes, counts):
        """Positions in ``flat`` of the predecessors of ``nodes``, node after node."""
        ends = np.cumsum(counts)
        return np.repeat(offsets[nodes] - (ends - counts), counts) + np.arange(ends[-1]), ends

    tail = np.zeros(n, dtype=dur.dtype)
    for layer in layers:
        counts = lens[layer]
        if counts.any():
            idx, _ = gather(layer, counts)
            np.maximum.at(tail, flat[idx], np.repeat(tail[layer] + dur[layer], counts))
    es = np.zeros(n, dtype=dur.dtype)
    ef = dur.copy()
    for layer in reversed(layers):
        counts = lens[layer]
        inner = counts > 0
        if inner.any():
            layer, counts = layer[inner], counts[inner]
            idx, ends = gather(layer, counts)
            start = np.maximum.reduceat(ef[flat[idx]], ends - counts)
            es[layer] = start
            ef[layer] = start + dur[layer]
    return es.tolist(), ef.tolist(), tail.tolist()


def _path(g: _Indexed, ef: list, es: list, makespan) -> list[int]:
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


# --------------------------------------------------------------------------------------------
# List scheduling
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Schedule:
    """Result of :func:`list_schedule`.

    Attributes
    ----------
    start, finish : dict
        Start and finish time per node, in first-appearance order.
    worker : dict
        The worker (``0 .. workers-1``) each node ran on.
    makespan : int or float
        Finish time of the last node (0 for the empty graph).
    workers : int
        Number of workers.
    work : int or float
        Sum of all durations; ``work / (workers * makespan)`` is the utilisation.
    """

    start: dict
    finish: dict
    worker: dict
    makespan: float
    workers: int
    work: float


def list_schedule(
    graph,
    durations,
    workers,
    priority="critical",
    resources=None,
    *,
    strict: bool = False,
) -> Schedule:
    r"""Greedy list schedule of the DAG on ``workers`` identical workers.

    Parameters
    ----------
    graph : Mapping
        ``{node: iterable of predecessors}``.
    durations : Mapping
        ``{node: duration}`` for every node: finite numbers >= 0.
    workers : int
        Number of workers, >= 1.
    priority : {"critical", "input"} or callable, optional
        Which ready task starts first when several compete. ``"critical"``: the largest
        bottom level (own duration plus the longest chain after it - the HLF/critical-path
        rule). ``"input"``: first appearance in the graph. A callable ``priority(node)``
        returns a number; higher starts first. Ties always go to first appearance.
    resources : Mapping, optional
        ``{node: iterable of resource keys}``. Two nodes that share a key never run at the
        same time (e.g. one lock per tenant); a ready node whose key is held waits while
        other ready nodes may start.
    strict : bool, optional
        If True, every predecessor must also be a key of ``graph``.

    Returns
    -------
    Schedule
        Start, finish and worker per node, the makespan, the worker count and total work.

    Raises
    ------
    ValueError
        If ``workers`` is not a whole number >= 1, ``priority`` is unknown or a callable
        returns a non-number, ``resources`` is malformed or names an unknown node, a
        duration is invalid (see :func:`critical_path`), or the graph is malformed.
    CycleError
        If the graph has a cycle.

    Notes
    -----
    Discrete-event simulation: at each event time every free worker takes the
    highest-priority ready task whose resource keys are free; then time jumps to the next
    finish, which frees a worker and may make successors ready. No worker idles while a
    startable task exists, so without resources Graham's bound holds:
    :math:`T \le W/m + (1 - 1/m)\, T_\infty \le (2 - 1/m)\, T_{opt}`. With one worker the
    makespan is the serial time; with at least as many workers as the widest layer, the
    critical path. Resource keys can make it longer than both bounds suggest. Workers are
    taken lowest number first. O((V + E) log V) without resources; a waiting ready task is
    re-examined at every event, O(V^2) at worst with resources.

    Examples
    --------
    >>> g = {"b": ["a"], "c": ["a"], "d": ["b", "c"]}
    >>> d = {"a": 1, "b": 3, "c": 2, "d": 1}
    >>> list_schedule(g, d, workers=2).makespan
    5
    >>> list_schedule(g, d, workers=1).makespan
    7
    >>> list_schedule(g, d, workers=2, resources={"b": ["db"], "c": ["db"]}).makespan
    7
    """
    m = _whole("workers", workers, minimum=1)
    with _gc_paused():
        g = _index(graph, strict, self_loops=False)
        d = _durations(g, durations)
        rank = _ranks(g, d, priority)
        held_by = _resource_sets(g, resources)
        succ = g.succ
        n = len(d)
        zero = 0 if not d or type(d[0]) is int else 0.0
        indeg = list(map(len, g.preds))
        ready = [(rank[v], v) for v in range(n) if not indeg[v]]
        heapq.heapify(ready)
        free = list(range(m))  # a sorted list is a valid heap
        running: list = []  # (finish, node, worker)
        held: set = set()
        start: list = [zero] * n
        finish: list = [zero] * n
        worker = [0] * n
        now = zero
        while ready or running:
            deferred = []
            while ready and free:
                item = heapq.heappop(ready)
                v = item[1]
                keys = held_by[v]
                if keys and not held.isdisjoint(keys):
                    deferred.append(item)  # its lock is taken; others may still start
                    continue
                w = heapq.heappop(free)
                start[v] = now
                finish[v] = now + d[v]
                worker[v] = w
                heapq.heappush(running, (finish[v], v, w))
                if keys:
                    held.update(keys)
            for item in deferred:
                heapq.heappush(ready, item)
            # Something always runs here: with nothing running no key is held, so every
            # ready task could start, and the loop above has started them.
            now = running[0][0]
            while running and running[0][0] == now:
                _, v, w = heapq.heappop(running)
                heapq.heappush(free, w)
                if held_by[v]:
                    held.difference_update(held_by[v])
                for s in succ[v]:
                    indeg[s] -= 1
                    if not indeg[s]:
                        heapq.heappush(ready, (rank[s], s))
        nodes = g.nodes
        return Schedule(
            start=dict(zip(nodes, start, strict=True)),
            finish=dict(zip(nodes, finish, strict=True)),
            worker=dict(zip(nodes, worker, strict=True)),
            makespan=max(finish, default=zero),
            workers=m,
            work=sum(d, zero),
        )


def _ranks(g: _Indexed, d: list, priority) -> list:
    """Heap keys per node: smaller starts first (ties fall to the node index).

    Runs Kahn's pass for every rule, so a cyclic graph is rejected before scheduling.
    """
    if isinstance(priority, str) and priority == "critical":
        _, _, tail = _passes(g, d)
        return [-(t + x) for t, x in zip(tail, d, strict=True)]
    _kahn(g)
    if isinstance(priority, str) and priority == "input":
        return [0] * len(d)
    if callable(priority):
        ranks = []
        for node in g.nodes:
            p = priority(node)
            if isinstance(p, (bool, np.bool_)) or not isinstance(p, numbers.Real) or math.isnan(p):
                raise ValueError(f"priority({node!r}) must return a number, got {p!r}")
            ranks.append(-p)
        return ranks
    raise ValueError(f"priority must be 'critical', 'input' or a callable, got {priority!r}")


def _resource_sets(g: _Indexed, resources) -> list:
    """Per node index, a frozenset of resource keys (empty when the node needs none)."""
    none: frozenset = frozenset()
    sets = [none] * len(g.nodes)
    if resources is None:
        return sets
    if not isinstance(resources, Mapping):
        raise ValueError(
            f"resources must be a mapping {{node: iterable of keys}}, got {_short.repr(resources)}"
        )
    for node, keys in resources.items():
        i = g.index.get(node)
        if i is None:
            raise ValueError(f"resources names node {node!r}, which is not in the graph")
        if isinstance(keys, (str, bytes)):
            raise ValueError(
                f"resources of node {node!r} must be an iterable of keys, not the str {keys!r}; "
                f"write [{keys!r}]"
            )
        try:
            sets[i] = frozenset(keys)
        except TypeError:
            raise ValueError(
                f"resources of node {node!r} must be an iterable of hashable keys, "
                f"got {_short.repr(keys)}"
            ) from None
    return sets
