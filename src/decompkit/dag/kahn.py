"""The flat Kahn engine: the passes the benchmarks asked for, beside the readable code.

:mod:`decompkit.dag.orders` and :mod:`decompkit.dag.cpm` read like the lecture and call these
for speed; each function states the plain procedure it reproduces exactly.

- :func:`reverse_kahn`: Kahn's algorithm on the reversed graph (no successor index needed), giving
  an order by height and every node's height; names one cycle on failure.
- :func:`flat_index` and :func:`kahn_forward`: the FIFO Kahn order of the lecture, one
  Kahn layer at a time with NumPy when a layer has many edges.
- :func:`layer_passes`: the critical path method's forward and backward passes, one height
  layer at a time with NumPy (the wide, shallow graphs of ``bench/bench_dag.py``).
"""

from __future__ import annotations

from collections.abc import Mapping
from itertools import chain

import numpy as np

from .indexed import CycleError, Indexed, self_loop_error

__all__ = ["reverse_kahn", "flat_index", "kahn_forward", "fifo_order", "layer_passes"]


def reverse_kahn(g: Indexed) -> tuple[list[int], list[int]]:
    """Kahn's algorithm on the reversed graph: ``(exit_order, height)``; CycleError on a cycle.

    The predecessor lists already are the successor lists of the reversed graph, so no
    successor index is built (in Python, the dominant cost of a forward pass): a node
    leaves once every node that waits on it has left, sinks first. A node's height is the
    number of edges on its longest path to a sink; it is set when the node is released by
    its last successor, which with a first-in first-out queue is its highest one. The exit
    order is therefore sorted by height, each height one contiguous run, and its reverse is
    a topological order. Also stores ``g.outdeg`` for the passes that follow.
    """
    preds = g.preds
    n = len(preds)
    # How many not-yet-emitted successors each node has: one C-level count over all edges.
    g.outdeg = np.bincount(g.flat, minlength=n)
    waiting = g.outdeg.tolist()
    height = [0] * n
    queue = [i for i in range(n) if not waiting[i]]
    for v in queue:  # the list grows while we walk it: a FIFO queue without pops
        up = height[v] + 1
        for u in preds[v]:
            k = waiting[u] - 1
            waiting[u] = k
            if not k:
                height[u] = up
                queue.append(u)
    if len(queue) < n:
        raise _cycle_error(g, waiting)
    return queue, height


def flat_index(graph) -> tuple[list, np.ndarray, np.ndarray] | None:
    """``(nodes, flat predecessors, lengths)`` without per-node lists, for the common case.

    Only for a mapping whose values are all lists or tuples of keys; anything else (a
    predecessor that is not a key, a value of another type) returns None, and the caller
    takes the validating :func:`index_graph` instead.
    """
    if not isinstance(graph, Mapping):
        return None
    keys, pred_lists = list(graph), list(graph.values())
    if not set(map(type, pred_lists)) <= {list, tuple}:
        return None
    index = dict(zip(keys, range(len(keys)), strict=True))
    lengths = np.fromiter(map(len, pred_lists), dtype=np.intp, count=len(keys))
    try:
        flat = np.fromiter(
            map(index.__getitem__, chain.from_iterable(pred_lists)),
            dtype=np.intp,
            count=int(lengths.sum()),
        )
    except (KeyError, TypeError):
        return None
    return keys, flat, lengths


def kahn_forward(flat: np.ndarray, lengths: np.ndarray) -> list[int] | None:
    """Kahn's algorithm with a FIFO queue; node indices in emission order, None on a cycle.

    With a FIFO queue the emission runs layer by layer: every node of one Kahn layer leaves
    before any node of the next, and the next layer queues up in the order its nodes are
    released, that is by the position (in the list of successors visited) of the edge that
    brought their in-degree to zero. Each layer is therefore computed with a few NumPy
    operations; a layer with only a handful of edges is walked in plain Python, where that is
    cheaper. Both give exactly the order of the one-node-at-a-time procedure.
    """
    n = len(lengths)
    # Edge (u -> v) for every predecessor u of v; a stable sort by u keeps each node's
    # successors in first-appearance order.
    targets = np.repeat(np.arange(n, dtype=np.intp), lengths)
    successors = targets[np.argsort(flat, kind="stable")]
    bounds = np.zeros(n + 1, dtype=np.intp)
    np.cumsum(np.bincount(flat, minlength=n), out=bounds[1:])
    indegree = lengths.copy()
    layer = np.flatnonzero(indegree == 0)
    emitted = [layer]
    count = len(layer)
    while len(layer):
        starts, stops = bounds[layer], bounds[layer + 1]
        sizes = stops - starts
        total = int(sizes.sum())
        if total < _SMALL_LAYER:
            released = []
            for u in layer.tolist():
                for v in successors[bounds[u] : bounds[u + 1]].tolist():
                    indegree[v] -= 1
                    if not indegree[v]:
                        released.append(v)
            layer = np.asarray(released, dtype=np.intp)
        else:
            # The successors of the whole layer, in the order a FIFO pass visits them.
            visit = np.repeat(starts - np.cumsum(sizes) + sizes, sizes) + np.arange(total)
            seq = successors[visit]
            if total * 4 >= n:  # a wide layer: one count over all nodes is cheapest
                indegree -= np.bincount(seq, minlength=n)
            else:
                hit, times = np.unique(seq, return_counts=True)
                indegree[hit] -= times
            # Each released node joins the queue at the last edge that reached it.
            at = np.flatnonzero(indegree[seq] == 0)[::-1]
            released, first = np.unique(seq[at], return_index=True)
            layer = released[np.argsort(at[first], kind="stable")]
        emitted.append(layer)
        count += len(layer)
    if count < n:
        return None
    return np.concatenate(emitted).tolist()


def fifo_order(g: Indexed) -> list[int] | None:
    """:func:`kahn_forward` on an indexed graph: the lecture's Kahn order, None on a cycle."""
    lengths = np.fromiter(map(len, g.preds), dtype=np.intp, count=len(g.preds))
    return kahn_forward(g.flat, lengths)


#: Below this many edges, a Kahn layer is walked in Python rather than with NumPy.
_SMALL_LAYER = 64


def _cycle_error(g: Indexed, waiting: list[int]) -> CycleError:
    """A CycleError naming one cycle among the nodes Kahn's pass left behind.

    A left-over node still waits on a left-over successor, so a walk along left-over
    successors must revisit a node; the stretch between the two visits is a cycle.
    Iterative, O(V + E), and only run when the graph is not acyclic.
    """
    left = [i for i, k in enumerate(waiting) if k]
    preds = g.preds
    for v in left:
        if v in preds[v]:
            return self_loop_error(g.nodes[v])
    left_set = set(left)
    succ: dict[int, list[int]] = {v: [] for v in left}
    for v in left:
        for u in preds[v]:
            if u in left_set:
                succ[u].append(v)
    seen: dict[int, int] = {}
    walk = []
    v = left[0]
    while v not in seen:
        seen[v] = len(walk)
        walk.append(v)
        v = succ[v][0]
    cycle = walk[seen[v] :]
    first = cycle.index(min(cycle))  # start at the node that appears first in the graph
    cycle = cycle[first:] + cycle[:first]
    return CycleError([g.nodes[i] for i in cycle + [cycle[0]]])


def layer_passes(g: Indexed, queue: list[int], height: list[int], d: list, ints: bool):
    """Earliest starts, earliest finishes and tails, one height layer at a time with NumPy.

    ``queue`` and ``height`` come from :func:`reverse_kahn`: a node's successors all sit in lower
    layers and its predecessors in higher ones. The backward pass pushes ``tail[v] + d[v]``
    to each predecessor, layer by layer from the sinks; the forward pass takes
    ``ES[v] = max EF[u]`` over predecessors, from the top layer down: the same operations, in
    the same order, as the plain passes of :func:`decompkit.dag.cpm.cpm_passes`.
    """
    preds = g.preds
    n = len(preds)
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
