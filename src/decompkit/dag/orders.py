r"""Orders of a plan DAG: Kahn's algorithm, its layers, the ready set, cones, checked orders.

A plan is a graph :math:`G = (V, E)` given as ``{node: iterable of predecessors}`` (the
``graphlib`` convention); an edge :math:`u \to v` means *u must finish before v*. Kahn's
algorithm emits a node once all its predecessors are emitted; fewer than :math:`|V|` emitted
nodes means a cycle. An order is topological iff :math:`pos(u) < pos(v)` for every edge.

Nodes may be any hashable objects, even unorderable ones: every tie is broken by *first
appearance* (the graph's keys in order, then nodes met only as predecessors, as first seen),
never by comparing nodes. Give predecessors as lists or tuples for a reproducible order; a
``set`` of predecessors is accepted, but its own iteration order then decides first appearance
of nodes that are not keys.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from ..validate import short, whole
from .indexed import Indexed, as_mapping, gc_paused, index_graph, reach
from .kahn import fifo_order, flat_index, kahn_forward, reverse_kahn

__all__ = [
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
]


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
    return as_mapping(index_graph(graph, strict))


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
        As for :func:`predecessors_map`. Theta(V + E): one pass over the predecessor lists.

    Examples
    --------
    >>> successors_map({"b": ["a"], "c": ["a", "b"]})
    {'b': ['c'], 'c': [], 'a': ['b', 'c']}
    """
    g = index_graph(graph, strict)
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
    The pass runs in the flat engine of ``decompkit.dag.kahn`` (one Kahn layer at a time
    with NumPy, as ``bench/bench_dag.py`` asked), which gives exactly this list; it never
    compares nodes. Any order that :func:`is_topological_order` accepts is equally
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
    with gc_paused():
        quick = None if strict else flat_index(graph)
        if quick is not None:
            nodes, flat, lengths = quick
            order = kahn_forward(flat, lengths)
        else:
            g = index_graph(graph, strict, self_loops=False)
            nodes, order = g.nodes, fifo_order(g)
        if order is None:  # a cycle: the reverse pass names one
            if quick is not None:  # values are lists or tuples here, safe to read again
                g = index_graph(graph, strict, self_loops=False)
            reverse_kahn(g)
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
    with gc_paused():
        g = index_graph(graph, strict, self_loops=False)
        preds = g.preds
        depth = [0] * len(preds)
        for v in reversed(reverse_kahn(g)[0]):
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
    g = index_graph(graph, strict)
    finished = set(g.lookup("done", done))
    busy = finished.union(g.lookup("running", running), g.lookup("blocked", blocked))
    nodes = g.nodes
    return [
        nodes[v] for v, ps in enumerate(g.preds) if v not in busy and all(u in finished for u in ps)
    ]


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
    g = index_graph(graph, strict)
    found = reach(g.succ, g.lookup("nodes", nodes))
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
    g = index_graph(graph, strict)
    found = reach(g.preds, g.lookup("nodes", nodes))
    return {g.nodes[i] for i in found}


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
            lines.append(f"{len(self.edges)} task(s) listed before a task they wait for:")
            lines += [f"  {v!r} waits for {u!r}" for u, v in self.edges[:10]]
            if len(self.edges) > 10:
                lines.append(f"  ... and {len(self.edges) - 10} more")
        for label, items in (
            ("missing node(s)", self.missing),
            ("unknown node(s)", self.unknown),
            ("duplicated node(s)", self.duplicated),
        ):
            if items:
                shown = ", ".join(short.repr(x) for x in items[:10])
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
    1 task(s) listed before a task they wait for:
      'b' waits for 'a'
    missing node(s): 'c'
    unknown node(s): 'x'
    duplicated node(s): 'b'
    """
    g = index_graph(graph, strict)
    try:
        items = list(order)
    except TypeError:
        raise ValueError(f"order must be an iterable of nodes, got {short.repr(order)}") from None
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
        ``not order_violations(graph, order)``; see there for the report of what is wrong.

    Raises
    ------
    ValueError, CycleError
        As for :func:`order_violations`.

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
        limit = whole("limit", limit, minimum=0)
    with gc_paused():
        g = index_graph(graph, strict, self_loops=False)
        reverse_kahn(g)  # raises CycleError now rather than when the generator first runs
    return _orders(g, limit)


def _orders(g: Indexed, limit) -> Iterator[list]:
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
