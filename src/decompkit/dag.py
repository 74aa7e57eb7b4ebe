r"""The plan as a DAG: order, ready set, critical path, slack and list scheduling.

A plan is a graph :math:`G = (V, E)` given as ``{node: iterable of predecessors}`` (the
``graphlib`` convention); an edge :math:`u \to v` means *u must finish before v*. With node
durations :math:`d_v`, the earliest finish is :math:`EF_v = d_v + \max_{u \to v} EF_u`, the
makespan is :math:`\max_v EF_v` (the critical path), and the slack is
:math:`LS_v - ES_v` with :math:`LF_u = \min_{u \to v} (LF_v - d_v)`.

Nodes may be any hashable objects, even unorderable ones: every tie is broken by *first
appearance* (the graph's keys in order, then nodes met only as predecessors, as first seen),
never by comparing nodes. Give predecessors as lists or tuples for a reproducible order; a
``set`` of predecessors is accepted, but its own iteration order then decides first appearance
of nodes that are not keys.

The critical path and list scheduling live in :mod:`decompkit.schedule_list` and are
re-exported here, so ``from decompkit.dag import critical_path`` works.
"""

from __future__ import annotations

import gc
import math
import reprlib
from collections.abc import Hashable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import chain

import numpy as np

from ._validate import count

__all__ = [
    "CycleError",
    "predecessors_map",
    "successors_map",
    "topological_order",
    "generations",
    "ready_set",
    "descendants",
    "ancestors",
    "OrderViolations",
    "order_violations",
    "is_topological_order",
    "all_topological_orders",
    "count_topological_orders",
    "MAX_COUNT_COMPONENT",
    "CriticalPath",  # noqa: F822 - provided by __getattr__ below
    "critical_path",  # noqa: F822 - provided by __getattr__ below
    "Schedule",  # noqa: F822 - provided by __getattr__ below
    "list_schedule",  # noqa: F822 - provided by __getattr__ below
]

_short = reprlib.Repr()
_short.maxstring = 60
_short.maxother = 60


class CycleError(ValueError):
    """The graph has a directed cycle, so no topological order exists.

    Attributes
    ----------
    cycle : list
        One cycle of the graph as a node list whose first node is repeated at the end,
        e.g. ``['a', 'b', 'a']`` for the edges a -> b -> a.
    """

    def __init__(self, cycle: list, detail: str = ""):
        self.cycle = list(cycle)
        self._detail = detail
        shown = " -> ".join(repr(node) for node in self.cycle)
        super().__init__(f"graph has a cycle: {shown}{detail}")

    def __reduce__(self):  # pickle by the cycle, not by the message
        return type(self), (self.cycle, self._detail)


# --------------------------------------------------------------------------------------------
# Boundary: one validation pass that turns the mapping into integer-indexed predecessor lists.
# --------------------------------------------------------------------------------------------


class _Indexed:
    """A validated graph: nodes in first-appearance order and integer predecessor lists."""

    __slots__ = ("nodes", "index", "preds", "_succ", "outdeg", "flat")

    def __init__(self, nodes: list, index: dict, preds: list[list[int]]):
        self.nodes = nodes
        self.index = index
        self.preds = preds
        self._succ = None
        self.outdeg = None  # successor counts (with multiplicity), set by _kahn
        self.flat = None  # all predecessor lists concatenated (numpy intp array)

    @property
    def succ(self) -> list[list[int]]:
        """Successor lists; each in ascending first-appearance order (duplicates kept)."""
        if self._succ is None:
            succ: list[list[int]] = [[] for _ in self.nodes]
            appenders = [s.append for s in succ]
            for v, ps in enumerate(self.preds):
                for u in ps:
                    appenders[u](v)
            self._succ = succ
        return self._succ

    def lookup(self, name: str, items) -> list[int]:
        """Indices of the nodes in ``items``; an unknown node raises naming ``name``."""
        if isinstance(items, (str, bytes)):
            raise ValueError(
                f"{name} must be an iterable of nodes, not the str {items!r} (a str would be "
                "read as one node per character); wrap a single node in a list"
            )
        try:
            items = list(items)
        except TypeError:
            raise ValueError(
                f"{name} must be an iterable of nodes, got {_short.repr(items)}"
            ) from None
        index = self.index
        out = []
        for item in items:
            try:
                out.append(index[item])
            except (KeyError, TypeError):
                raise ValueError(f"unknown node {_short.repr(item)} in {name}") from None
        return out


def _index(graph, strict: bool = False, self_loops: bool = True) -> _Indexed:
    """Validate ``graph`` once and index its nodes by first appearance.

    ``self_loops=False`` skips the self-loop scan for callers that run Kahn's algorithm,
    which finds self-loops on its failure path at no cost to valid graphs.
    """
    if not isinstance(graph, Mapping):
        raise ValueError(
            f"graph must be a mapping {{node: iterable of predecessors}}, got {_short.repr(graph)}"
        )
    keys = list(graph)
    pred_lists = list(graph.values())
    if not set(map(type, pred_lists)) <= {list, tuple}:  # C-level check of the common case
        pred_lists = [_pred_list(node, preds) for node, preds in zip(keys, pred_lists, strict=True)]
    index = dict(zip(keys, range(len(keys)), strict=True))
    getitem = index.__getitem__
    try:
        # Fast path, every predecessor a key: one C-level dict lookup per edge.
        preds_int = [list(map(getitem, ps)) for ps in pred_lists]
        nodes = keys
    except (KeyError, TypeError):
        nodes, index, preds_int = _index_slow(keys, pred_lists, strict)
    if self_loops:
        for i, ps in enumerate(preds_int):
            if i in ps:
                raise _self_loop(nodes[i])
    g = _Indexed(nodes, index, preds_int)
    g.flat = np.fromiter(
        chain.from_iterable(preds_int), dtype=np.intp, count=sum(map(len, preds_int))
    )
    return g


def _pred_list(node, preds) -> list | tuple:
    """One graph value as a list or tuple; a str or a non-iterable raises naming the node."""
    if type(preds) is list or type(preds) is tuple:
        return preds
    if isinstance(preds, (str, bytes)):
        raise ValueError(
            f"predecessors of node {node!r} must be an iterable of nodes, not the str "
            f"{preds!r} (it would be read as one node per character); write [{preds!r}]"
        )
    try:
        return list(preds)
    except TypeError:
        raise ValueError(
            f"predecessors of node {node!r} must be an iterable of nodes, got {_short.repr(preds)}"
        ) from None


def _index_slow(keys: list, pred_lists: list, strict: bool):
    """Index a graph whose predecessors include non-keys (or unhashable values)."""
    for node, preds in zip(keys, pred_lists, strict=True):
        for pred in preds:
            if not isinstance(pred, Hashable) or _unhashable(pred):
                raise ValueError(
                    f"predecessor {_short.repr(pred)} of node {node!r} is not hashable"
                )
    order = dict.fromkeys(chain(keys, chain.from_iterable(pred_lists)))
    nodes = list(order)
    n_keys = len(keys)
    if strict:
        missing = nodes[n_keys]
        for node, preds in zip(keys, pred_lists, strict=True):
            if missing in preds:
                raise ValueError(
                    f"predecessor {missing!r} of node {node!r} is not a key of graph "
                    "(strict=True asks every node to be listed as a key)"
                )
    index = dict(zip(nodes, range(len(nodes)), strict=True))
    getitem = index.__getitem__
    preds_int = [list(map(getitem, ps)) for ps in pred_lists]
    preds_int.extend([] for _ in range(len(nodes) - n_keys))
    return nodes, index, preds_int


def _unhashable(obj) -> bool:
    try:
        hash(obj)
    except TypeError:
        return True
    return False


def _self_loop(node) -> CycleError:
    return CycleError([node, node], f" (node {node!r} lists itself as a predecessor)")


@contextmanager
def _gc_paused():
    """Pause the cyclic garbage collector while a pass allocates many acyclic lists.

    The passes below build O(V + E) lists that can never form reference cycles; with the
    collector running, its sweeps re-scan the growing heap and cost as much as the
    algorithm itself on graphs with a million edges.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _kahn(g: _Indexed) -> tuple[list[int], list[int]]:
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


def _flat_index(graph) -> tuple[list, np.ndarray, np.ndarray] | None:
    """``(nodes, flat predecessors, lengths)`` without per-node lists, for the common case.

    Only for a mapping whose values are all lists or tuples of keys; anything else (a
    predecessor that is not a key, a value of another type) returns None, and the caller
    takes the validating :func:`_index` instead.
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


def _kahn_forward(flat: np.ndarray, lengths: np.ndarray) -> list[int] | None:
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


#: Below this many edges, a Kahn layer is walked in Python rather than with NumPy.
_SMALL_LAYER = 64


def _by_height(height: list[int]) -> list[int]:
    """Node indices by decreasing height, ties by index (first appearance).

    A stable sort of small integers: NumPy sorts 16-bit keys by radix sort, in linear time.
    """
    h = np.asarray(height, dtype=np.int64)
    top = int(h.max(initial=0))
    depth_first = (top - h).astype(np.uint16 if top < 2**16 else np.uint32)
    return np.argsort(depth_first, kind="stable").tolist()


def _cycle_error(g: _Indexed, waiting: list[int]) -> CycleError:
    """A CycleError naming one cycle among the nodes Kahn's pass left behind.

    A left-over node still waits on a left-over successor, so a walk along left-over
    successors must revisit a node; the stretch between the two visits is a cycle.
    Iterative, O(V + E), and only run when the graph is not acyclic.
    """
    left = [i for i, k in enumerate(waiting) if k]
    preds = g.preds
    for v in left:
        if v in preds[v]:
            return _self_loop(g.nodes[v])
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


# --------------------------------------------------------------------------------------------
# Structure
# --------------------------------------------------------------------------------------------


def predecessors_map(graph, *, strict: bool = False) -> dict:
    """The graph with every node as a key and its distinct predecessors as a list.

    Parameters
    ----------
    graph : Mapping
        ``{node: iterable of predecessors}``; nodes met only as predecessors are nodes too.
    strict : bool, optional
        If True, every predecessor must also be a key of ``graph``.

    Returns
    -------
    dict
        ``{node: [predecessors]}`` in first-appearance order, duplicates removed.

    Raises
    ------
    ValueError
        If ``graph`` is not a mapping, a value is a str or not iterable, a predecessor is not
        hashable, or (``strict=True``) a predecessor is not a key.
    CycleError
        If a node lists itself as a predecessor.

    Notes
    -----
    Theta(V + E). Cycles longer than a self-loop are not looked for here.

    Examples
    --------
    >>> predecessors_map({"b": ["a"], "c": ["a", "b", "a"]})
    {'b': ['a'], 'c': ['a', 'b'], 'a': []}
    """
    g = _index(graph, strict)
    nodes = g.nodes
    return {nodes[v]: [nodes[u] for u in dict.fromkeys(ps)] for v, ps in enumerate(g.preds)}


def successors_map(graph, *, strict: bool = False) -> dict:
    """Every node mapped to the list of its distinct successors.

    Parameters
    ----------
    graph : Mapping
        ``{node: iterable of predecessors}``.
    strict : bool, optional
        If True, every predecessor must also be a key of ``graph``.

    Returns
    -------
    dict
        ``{node: [successors]}`` with every node as a key (sinks map to ``[]``); keys and
        each list in first-appearance order.

    Raises
    ------
    ValueError, CycleError
        As for :func:`predecessors_map`.

    Notes
    -----
    Theta(V + E): one pass over the predecessor lists.

    Examples
    --------
    >>> successors_map({"b": ["a"], "c": ["a", "b"]})
    {'b': ['c'], 'c': [], 'a': ['b', 'c']}
    """
    g = _index(graph, strict)
    nodes = g.nodes
    return {nodes[u]: [nodes[v] for v in dict.fromkeys(s)] for u, s in enumerate(g.succ)}


def topological_order(graph, *, strict: bool = False) -> list:
    """A topological order of ``graph`` by Kahn's algorithm.

    Parameters
    ----------
    graph : Mapping
        ``{node: iterable of predecessors}``; nodes met only as predecessors are nodes too.
    strict : bool, optional
        If True, every predecessor must also be a key of ``graph``.

    Returns
    -------
    list
        Every node once, each after all its predecessors.

    Raises
    ------
    CycleError
        If the graph has a cycle (a self-loop included); ``.cycle`` holds one cycle with its
        first node repeated at the end.
    ValueError
        If ``graph`` is not a mapping, a value is a str or not iterable, a predecessor is not
        hashable, or (``strict=True``) a predecessor is not a key.

    Notes
    -----
    Kahn (1962): count in-degrees, queue the sources, pop a node, emit it, decrement its
    successors and queue those that reach zero; fewer than :math:`|V|` emitted nodes means a
    cycle. Kahn alone cannot say *where* the cycle is, so a walk among the left-over nodes
    then names one. Theta(V + E) time and space, iterative (no recursion limit).

    The queue is first in, first out: the sources start it in first-appearance order, and a
    popped node's successors are visited in first-appearance order, each joining the queue
    when its last predecessor leaves - exactly the procedure done by hand in the lecture, so
    a student's hand-run Kahn gives the same list. The queue at any moment is the ready set.
    The successor lists are built once from the predecessor lists with a stable NumPy sort.
    It never compares nodes. Any order that :func:`is_topological_order` accepts is equally
    valid; :func:`generations` gives the layers.

    Examples
    --------
    >>> topological_order({"run": ["build", "test"], "test": ["build"]})
    ['build', 'test', 'run']
    >>> topological_order({"a": ["c"], "b": ["a"], "c": ["b"]})
    Traceback (most recent call last):
    ...
    decompkit.dag.CycleError: graph has a cycle: 'a' -> 'b' -> 'c' -> 'a'
    """
    with _gc_paused():
        quick = None if strict else _flat_index(graph)
        if quick is not None:
            nodes, flat, lengths = quick
        else:
            g = _index(graph, strict, self_loops=False)
            nodes, flat = g.nodes, g.flat
            lengths = np.fromiter(map(len, g.preds), dtype=np.intp, count=len(g.preds))
        order = _kahn_forward(flat, lengths)
        if order is None:
            _kahn(_index(graph, strict, self_loops=False))  # raises, naming one cycle
        return list(map(nodes.__getitem__, order))


def generations(graph, *, strict: bool = False) -> list[list]:
    r"""The Kahn layers: sources, then the nodes whose predecessors all lie in earlier layers.

    Parameters
    ----------
    graph : Mapping
        ``{node: iterable of predecessors}``.
    strict : bool, optional
        If True, every predecessor must also be a key of ``graph``.

    Returns
    -------
    list of list
        Layer ``k`` holds the nodes whose longest path from a source has ``k`` edges, each
        layer in first-appearance order. The empty graph gives ``[]``.

    Raises
    ------
    CycleError, ValueError
        As for :func:`topological_order`.

    Notes
    -----
    The layers Kahn's algorithm produces when it releases a whole layer at a time; computed
    as the depth :math:`\mathrm{depth}(v) = 1 + \max_{u \to v} \mathrm{depth}(u)` along a
    topological order, Theta(V + E). The nodes of one layer never depend on each other: a
    layer is a set of tasks that may run at once.

    Examples
    --------
    >>> generations({"a": [], "b": ["a"], "c": ["a"], "d": ["b", "c"], "e": []})
    [['a', 'e'], ['b', 'c'], ['d']]
    """
    with _gc_paused():
        g = _index(graph, strict, self_loops=False)
        preds = g.preds
        depth = [0] * len(preds)
        for v in reversed(_kahn(g)[0]):
            ps = preds[v]
            if ps:
                depth[v] = 1 + max(map(depth.__getitem__, ps))
        layers: list[list] = [[] for _ in range(max(depth, default=-1) + 1)]
        nodes = g.nodes
        for v, k in enumerate(depth):  # ascending index: each layer in first-appearance order
            layers[k].append(nodes[v])
        return layers


def ready_set(graph, done=(), running=(), blocked=(), *, strict: bool = False) -> list:
    """The nodes that may start now.

    Parameters
    ----------
    graph : Mapping
        ``{node: iterable of predecessors}``.
    done, running, blocked : iterable of nodes, optional
        Finished nodes, nodes in progress, and nodes that may not start (a failed or
        abandoned node, the descendant cone of a failure, a node waiting on a person). A
        node may sit in more than one of them.
    strict : bool, optional
        If True, every predecessor must also be a key of ``graph``.

    Returns
    -------
    list
        Nodes not done, not running and not blocked whose predecessors are all done, in
        first-appearance order.

    Raises
    ------
    ValueError
        If ``done``, ``running`` or ``blocked`` is a str or names a node not in the graph
        (a misspelt node would otherwise silently keep its successors waiting), or the graph
        is malformed as for :func:`topological_order`.
    CycleError
        If a node lists itself as a predecessor. Longer cycles are not looked for: their
        nodes simply never become ready.

    Notes
    -----
    Theta(V + E). In Kahn's algorithm the queue *is* the ready set.

    Examples
    --------
    >>> g = {"b": ["a"], "c": ["a"], "d": ["b", "c"]}
    >>> ready_set(g)
    ['a']
    >>> ready_set(g, done=["a"], running=["b"])
    ['c']
    """
    g = _index(graph, strict)
    finished = set(g.lookup("done", done))
    busy = finished.union(g.lookup("running", running), g.lookup("blocked", blocked))
    nodes = g.nodes
    return [
        nodes[v] for v, ps in enumerate(g.preds) if v not in busy and all(u in finished for u in ps)
    ]


def _reach(adjacency: list[list[int]], starts: list[int]) -> set[int]:
    """Indices reachable from ``starts`` by one or more steps along ``adjacency``."""
    seen: set[int] = set()
    stack = []
    for s in starts:
        stack.extend(adjacency[s])
    while stack:
        v = stack.pop()
        if v not in seen:
            seen.add(v)
            stack.extend(adjacency[v])
    return seen


def descendants(graph, nodes, *, strict: bool = False) -> set:
    """The strict descendants of ``nodes``: everything reachable along one or more edges.

    Parameters
    ----------
    graph : Mapping
        ``{node: iterable of predecessors}``.
    nodes : iterable of nodes
        The nodes whose descendant cone is wanted (wrap a single node in a list).
    strict : bool, optional
        If True, every predecessor must also be a key of ``graph``.

    Returns
    -------
    set
        The union of the strict descendants of each given node. A given node is excluded
        unless it is itself reachable from another given node (or lies on a cycle). Add
        ``set(nodes)`` for the closed cone.

    Raises
    ------
    ValueError
        If ``nodes`` is a str or names a node not in the graph, or the graph is malformed.
    CycleError
        If a node lists itself as a predecessor.

    Notes
    -----
    One depth-first sweep over the successor lists: Theta(V + E), iterative.

    Examples
    --------
    >>> g = {"b": ["a"], "c": ["b"], "d": ["a"], "e": []}
    >>> sorted(descendants(g, ["b"]))
    ['c']
    >>> sorted(descendants(g, ["a", "b"]))
    ['b', 'c', 'd']
    """
    g = _index(graph, strict)
    found = _reach(g.succ, g.lookup("nodes", nodes))
    return {g.nodes[i] for i in found}


def ancestors(graph, nodes, *, strict: bool = False) -> set:
    """The strict ancestors of ``nodes``: everything from which one of them is reachable.

    Parameters
    ----------
    graph : Mapping
        ``{node: iterable of predecessors}``.
    nodes : iterable of nodes
        The nodes whose ancestors are wanted (wrap a single node in a list).
    strict : bool, optional
        If True, every predecessor must also be a key of ``graph``.

    Returns
    -------
    set
        The union of the strict ancestors of each given node; a given node is excluded
        unless it is an ancestor of another given node.

    Raises
    ------
    ValueError
        If ``nodes`` is a str or names a node not in the graph, or the graph is malformed.
    CycleError
        If a node lists itself as a predecessor.

    Notes
    -----
    Theta(V + E), the mirror of :func:`descendants`.

    Examples
    --------
    >>> sorted(ancestors({"b": ["a"], "c": ["b"], "d": []}, ["c"]))
    ['a', 'b']
    """
    g = _index(graph, strict)
    found = _reach(g.preds, g.lookup("nodes", nodes))
    return {g.nodes[i] for i in found}


# --------------------------------------------------------------------------------------------
# Checking and enumerating orders
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class OrderViolations:
    """Everything wrong with a proposed topological order; falsy when there is nothing.

    Attributes
    ----------
    edges : tuple of (u, v)
        Edges u -> v of the graph with ``pos(u) >= pos(v)`` (first positions), in graph order.
    missing : tuple
        Nodes of the graph absent from the order.
    unknown : tuple
        Items of the order that are not nodes of the graph (each listed once).
    duplicated : tuple
        Nodes listed more than once.
    """

    edges: tuple = ()
    missing: tuple = ()
    unknown: tuple = ()
    duplicated: tuple = ()

    def __bool__(self) -> bool:
        return bool(self.edges or self.missing or self.unknown or self.duplicated)

    @property
    def ok(self) -> bool:
        """True when the order is a valid topological order."""
        return not self

    def __str__(self) -> str:
        if not self:
            return "valid topological order"
        lines = []
        if self.edges:
            lines.append(f"{len(self.edges)} edge(s) point backwards (u must come before v):")
            lines += [f"  {u!r} -> {v!r}" for u, v in self.edges[:10]]
            if len(self.edges) > 10:
                lines.append(f"  ... and {len(self.edges) - 10} more")
        for label, items in (
            ("missing node(s)", self.missing),
            ("unknown node(s)", self.unknown),
            ("duplicated node(s)", self.duplicated),
        ):
            if items:
                shown = ", ".join(_short.repr(x) for x in items[:10])
                more = f", ... ({len(items)} in all)" if len(items) > 10 else ""
                lines.append(f"{label}: {shown}{more}")
        return "\n".join(lines)


def order_violations(graph, order, *, strict: bool = False) -> OrderViolations:
    """Check a proposed order against the graph and report every problem.

    Parameters
    ----------
    graph : Mapping
        ``{node: iterable of predecessors}``.
    order : iterable
        The proposed order: a list, tuple, generator or any iterable of nodes. A str is read
        as one node per character (handy when every node is a single letter).
    strict : bool, optional
        If True, every predecessor must also be a key of ``graph``.

    Returns
    -------
    OrderViolations
        Backward edges, missing, unknown and duplicated nodes; falsy when ``order`` is a
        valid topological order, and its ``str`` reads as a report.

    Raises
    ------
    ValueError
        If ``order`` is not iterable, or the graph is malformed.
    CycleError
        If a node lists itself as a predecessor. (A longer cycle needs no special case:
        every order then has a backward edge.)

    Notes
    -----
    One pass: an order is topological iff :math:`pos(u) < pos(v)` for every edge
    :math:`u \\to v` - checking is simpler than producing. Theta(V + E + len(order)). Any valid
    order passes; nothing is compared with one particular answer.

    Examples
    --------
    >>> g = {"b": ["a"], "c": ["b"]}
    >>> bool(order_violations(g, ("a", "b", "c")))
    False
    >>> print(order_violations(g, ["b", "a", "b", "x"]))
    1 edge(s) point backwards (u must come before v):
      'a' -> 'b'
    missing node(s): 'c'
    unknown node(s): 'x'
    duplicated node(s): 'b'
    """
    g = _index(graph, strict)
    try:
        items = list(order)
    except TypeError:
        raise ValueError(f"order must be an iterable of nodes, got {_short.repr(order)}") from None
    index = g.index
    pos = [-1] * len(g.nodes)
    unknown: dict = {}
    unknown_unhashable = []
    duplicated: dict = {}
    for position, item in enumerate(items):
        try:
            i = index.get(item)
        except TypeError:
            unknown_unhashable.append(item)
            continue
        if i is None:
            unknown[item] = None
        elif pos[i] >= 0:
            duplicated[item] = None
        else:
            pos[i] = position
    nodes = g.nodes
    edges = [
        (nodes[u], nodes[v])
        for v, ps in enumerate(g.preds)
        if pos[v] >= 0
        for u in dict.fromkeys(ps)
        if pos[u] >= pos[v]
    ]
    return OrderViolations(
        edges=tuple(edges),
        missing=tuple(nodes[i] for i, p in enumerate(pos) if p < 0),
        unknown=tuple(unknown) + tuple(unknown_unhashable),
        duplicated=tuple(duplicated),
    )


def is_topological_order(graph, order, *, strict: bool = False) -> bool:
    """True when ``order`` lists every node exactly once, each after its predecessors.

    Parameters
    ----------
    graph : Mapping
        ``{node: iterable of predecessors}``.
    order : iterable
        The proposed order (any iterable of nodes).
    strict : bool, optional
        If True, every predecessor must also be a key of ``graph``.

    Returns
    -------
    bool

    Raises
    ------
    ValueError, CycleError
        As for :func:`order_violations`.

    Notes
    -----
    ``not order_violations(graph, order)``; see there for the report of what is wrong.

    Examples
    --------
    >>> g = {"b": ["a"], "c": ["a"]}
    >>> is_topological_order(g, ["a", "c", "b"]), is_topological_order(g, ["b", "a", "c"])
    (True, False)
    """
    return not order_violations(graph, order, strict=strict)


def all_topological_orders(graph, limit=None, *, strict: bool = False) -> Iterator[list]:
    """Generate every topological order of ``graph``, lexicographically by first appearance.

    Parameters
    ----------
    graph : Mapping
        ``{node: iterable of predecessors}``.
    limit : int, optional
        Stop after this many orders (``None``: all of them; there may be up to ``V!``).
    strict : bool, optional
        If True, every predecessor must also be a key of ``graph``.

    Yields
    ------
    list
        One topological order at a time; the empty graph has exactly one, ``[]``.

    Raises
    ------
    CycleError
        If the graph has a cycle (raised at the call, before any order is generated).
    ValueError
        If ``limit`` is not None or a whole number >= 0, or the graph is malformed.

    Notes
    -----
    Backtracking over the ready set (Knuth & Szwarcfiter 1974): choose any ready node,
    release its successors, recurse, undo. Iterative; O(V^2) work per order at most.

    Examples
    --------
    >>> list(all_topological_orders({"b": ["a"], "c": ["a"]}))
    [['a', 'b', 'c'], ['a', 'c', 'b']]
    """
    if limit is not None:
        limit = _whole("limit", limit, minimum=0)
    with _gc_paused():
        g = _index(graph, strict, self_loops=False)
        _kahn(g)  # raises CycleError now rather than when the generator first runs
    return _orders(g, limit)


def _whole(name: str, value, *, minimum: int) -> int:
    """A scalar whole number >= minimum as a Python int (via the shared check)."""
    if isinstance(value, (str, bytes)) or np.ndim(value) != 0:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(count(name, value, minimum=minimum))


def _orders(g: _Indexed, limit) -> Iterator[list]:
    if limit == 0:
        return
    nodes = g.nodes
    n = len(nodes)
    if n == 0:
        yield []
        return
    succ = g.succ
    indeg = list(map(len, g.preds))
    produced = 0
    prefix: list[int] = []
    # Frame i holds the ready candidates for position i and the next one to try.
    stack = [[[i for i in range(n) if not indeg[i]], 0]]
    while stack:
        frame = stack[-1]
        ready, k = frame
        if k == len(ready):
            stack.pop()
            if prefix:  # undo the choice the frame below made
                for v in succ[prefix.pop()]:
                    indeg[v] += 1
            continue
        u = ready[k]
        frame[1] = k + 1
        prefix.append(u)
        freed = []
        for v in succ[u]:
            indeg[v] -= 1
            if not indeg[v]:
                freed.append(v)
        if len(prefix) < n:
            stack.append([sorted(ready[:k] + ready[k + 1 :] + freed), 0])
            continue
        yield [nodes[i] for i in prefix]
        produced += 1
        if produced == limit:
            return
        for v in succ[prefix.pop()]:
            indeg[v] += 1


#: Largest connected component :func:`count_topological_orders` accepts (2^20 subsets).
MAX_COUNT_COMPONENT = 20


def count_topological_orders(graph, *, strict: bool = False) -> int:
    r"""The number of topological orders (linear extensions) of ``graph``, exactly.

    Parameters
    ----------
    graph : Mapping
        ``{node: iterable of predecessors}``.
    strict : bool, optional
        If True, every predecessor must also be a key of ``graph``.

    Returns
    -------
    int
        The count; 1 for the empty graph, ``V!`` for ``V`` independent nodes.

    Raises
    ------
    ValueError
        If a connected component has more than ``MAX_COUNT_COMPONENT`` (20) nodes - the
        dynamic programme below is exponential, and refusing is better than hanging - or
        the graph is malformed.
    CycleError
        If the graph has a cycle.

    Notes
    -----
    Counting linear extensions is #P-complete (Brightwell & Winkler 1991). Independent
    components interleave freely, so the count is the multinomial
    :math:`\binom{V}{V_1, \dots, V_k} \prod_i c_i`. Within a component of :math:`m` nodes a
    dynamic programme over subsets, vectorised by subset size, counts the orders of each
    down-set :math:`S` by the node that comes last:
    :math:`c(S) = \sum_{v} c(S \setminus \{v\})` over :math:`v \in S` with
    :math:`\mathrm{pred}(v) \subseteq S \setminus \{v\}`, and :math:`c(S) = 0` for a set
    that is not a down-set. :math:`O(m\, 2^m)` time, :math:`O(2^m)` memory; counts fit in
    int64 because :math:`c \le 20! < 2^{63}`.

    Examples
    --------
    >>> count_topological_orders({"b": ["a"], "c": ["a"], "d": ["b", "c"]})
    2
    >>> count_topological_orders({"x": [], "y": [], "z": []})
    6
    """
    with _gc_paused():
        g = _index(graph, strict, self_loops=False)
        _kahn(g)
    n = len(g.nodes)
    components = _components(g)
    for comp in components:
        if len(comp) > MAX_COUNT_COMPONENT:
            raise ValueError(
                f"count_topological_orders refuses a connected component of {len(comp)} nodes "
                f"(at most {MAX_COUNT_COMPONENT}: the count takes time and memory 2^size); "
                f"it contains {_short.repr(g.nodes[comp[0]])}"
            )
    total = 1
    placed = 0
    for comp in components:
        placed += len(comp)
        total *= math.comb(placed, len(comp)) * _count_component(g, comp)
    assert placed == n
    return total


def _components(g: _Indexed) -> list[list[int]]:
    """Weakly connected components, each as a sorted list of indices."""
    n = len(g.nodes)
    adjacency = [list(ps) for ps in g.preds]
    for v, ps in enumerate(g.preds):
        for u in ps:
            adjacency[u].append(v)
    seen = [False] * n
    out = []
    for s in range(n):
        if seen[s]:
            continue
        seen[s] = True
        stack, comp = [s], []
        while stack:
            v = stack.pop()
            comp.append(v)
            for w in adjacency[v]:
                if not seen[w]:
                    seen[w] = True
                    stack.append(w)
        out.append(sorted(comp))
    return out


def _count_component(g: _Indexed, comp: list[int]) -> int:
    m = len(comp)
    if m <= 2:
        return 1  # one node, or two joined by an edge (connected, so ordered)
    local = {v: k for k, v in enumerate(comp)}
    need = [0] * m
    for k, v in enumerate(comp):
        for u in g.preds[v]:
            need[k] |= 1 << local[u]
    masks = np.arange(1 << m, dtype=np.int64)
    size = np.bitwise_count(masks) if hasattr(np, "bitwise_count") else _popcount(masks)
    by_size = np.argsort(size, kind="stable")
    bounds = np.searchsorted(size[by_size], np.arange(m + 2))
    ways = np.zeros(1 << m, dtype=np.int64)
    ways[0] = 1
    for k in range(1, m + 1):
        s = by_size[bounds[k] : bounds[k + 1]]
        acc = np.zeros(s.size, dtype=np.int64)
        for v in range(m):
            bit = 1 << v
            last = ((s & bit) != 0) & ((s & need[v]) == need[v])
            acc[last] += ways[s[last] ^ bit]
        ways[s] = acc
    return int(ways[-1])


def _popcount(masks: np.ndarray) -> np.ndarray:  # NumPy < 2.0 has no bitwise_count
    out = np.zeros_like(masks)
    work = masks.copy()
    while work.any():
        out += work & 1
        work >>= 1
    return out


# Critical path and list scheduling live in decompkit.schedule_list (kept apart so each file
# reads in one sitting); they are re-exported here lazily, which keeps either module
# importable first without a circular import.
_SCHEDULING = ("CriticalPath", "critical_path", "Schedule", "list_schedule")


def __getattr__(name: str):
    if name in _SCHEDULING:
        from . import schedule_list

        return getattr(schedule_list, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
