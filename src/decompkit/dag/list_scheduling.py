r"""List scheduling of a plan DAG on :math:`m` identical workers (Graham 1969).

At every event time each free worker takes the highest-priority ready task, then time jumps
to the next finish. A list scheduler that never idles while a task is ready finishes within
:math:`T \le W/m + (1 - 1/m)\,T_\infty \le (2 - 1/m)\,T_{opt}`, with :math:`W = \sum_v d_v`
the work and :math:`T_\infty` the critical path (:mod:`decompkit.dag.cpm`).

:func:`dispatch_ranks`, the heap keys of a priority rule, is public for the scheduler
(:mod:`decompkit.scheduler`), which dispatches by the same keys; the package lifts only
``__all__``.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass

from ..validate import whole
from .cpm import cpm_passes
from .indexed import Indexed, gc_paused, index_graph
from .inputs import durations as _durations
from .inputs import priority_rule, priority_values
from .inputs import resources as _resources
from .kahn import reverse_kahn

__all__ = ["Schedule", "list_schedule"]


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
        The worker count given (above the number of nodes, the extra workers stay idle).
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
        Number of workers, a whole number >= 1 (an integral float such as ``2.0`` is
        accepted). A count above the number of nodes schedules exactly as one worker per
        node - the others would never be used - so a huge count costs no memory.
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
    makespan is the serial time. It is the critical path once no ready task ever waits for a
    worker, which at least as many workers as the largest set of pairwise independent nodes
    (an antichain) guarantees: the running and ready tasks always form one. The widest Kahn
    layer is not enough: ``{"b": ["a"], "c": ["a"], "x": []}`` with ``x`` twice as long as the
    others has layers of two nodes, yet two workers finish in 3, not 2, because ``b``, ``c``
    and ``x`` are pairwise independent. Resource keys can make the makespan longer than both
    bounds suggest. Workers are taken lowest number first. O((V + E) log V) without
    resources; a ready task whose key is held is re-examined at every event, O(V^2 log V) at
    worst with resources.

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
    m = whole("workers", workers, minimum=1)
    with gc_paused():
        g = index_graph(graph, strict, self_loops=False)
        d = _durations(g, durations)
        rank = dispatch_ranks(g, d, priority)
        held_by = _resources(g, resources)
        succ = g.succ
        n = len(d)
        zero = 0 if not d or type(d[0]) is int else 0.0
        indeg = list(map(len, g.preds))
        ready = [(rank[v], v) for v in range(n) if not indeg[v]]
        heapq.heapify(ready)
        # Workers beyond one per node would never be used: a huge count costs nothing.
        free = list(range(min(m, max(n, 1))))  # a sorted list is a valid heap
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


def dispatch_ranks(g: Indexed, d: list, priority) -> list:
    """Heap keys per node: smaller starts first (ties fall to the node index).

    ``"critical"`` ranks by bottom level (a node's duration plus the longest chain of
    durations after it), ``"input"`` ranks every node alike, a callable by its values,
    higher first. Runs Kahn's pass for every rule, so a cyclic graph is rejected before
    scheduling. The scheduler (:mod:`decompkit.scheduler`) dispatches by the same keys.
    """
    rule = priority_rule(priority)
    if rule == "critical":
        _, _, tail = cpm_passes(g, d)
        return [-(t + x) for t, x in zip(tail, d, strict=True)]
    reverse_kahn(g)
    if rule == "input":
        return [0] * len(d)
    return [-p for p in priority_values(g, rule)]
