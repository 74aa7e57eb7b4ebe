"""Graph input at the boundary: one validation pass that indexes the nodes.

Every function of :mod:`decompkit.dag` (and the scheduler) starts here. A graph is
``{node: iterable of predecessors}``; :func:`index_graph` reads each predecessor iterable exactly
once (so generators and iterators work), checks the mapping, and numbers the nodes by first
appearance: the keys in order, then nodes met only as predecessors, as first seen. Everything
after works on those integers and never compares nodes.

The package lifts :class:`CycleError` alone; :class:`Indexed`, :func:`index_graph` and the small
graph helpers after it are public for the rest of :mod:`decompkit.dag` and for
:mod:`decompkit.scheduler`, which start from the same index.
"""

from __future__ import annotations

import gc
from collections.abc import Hashable, Mapping
from contextlib import contextmanager
from itertools import chain

import numpy as np

from ..validate import short

__all__ = ["CycleError"]


class CycleError(ValueError):
    """The graph has a directed cycle, so no topological order exists.

    Attributes
    ----------
    cycle : list
        One cycle of the graph as a node list whose first node is repeated at the end,
        e.g. ``['a', 'b', 'a']`` for the edges a -> b -> a.
    """

    __module__ = "decompkit.dag"  # where users import it from: tracebacks and pickles say so

    def __init__(self, cycle: list, detail: str = ""):
        self.cycle = list(cycle)
        self._detail = detail
        shown = " -> ".join(repr(node) for node in self.cycle)
        super().__init__(f"graph has a cycle: {shown}{detail}")

    def __reduce__(self):  # pickle by the cycle, not by the message
        return type(self), (self.cycle, self._detail)


class Indexed:
    """A validated graph: nodes in first-appearance order and integer predecessor lists."""

    __slots__ = ("nodes", "index", "preds", "_succ", "outdeg", "flat")

    def __init__(self, nodes: list, index: dict, preds: list[list[int]]):
        self.nodes = nodes
        self.index = index
        self.preds = preds
        self._succ = None
        self.outdeg = None  # successor counts (with multiplicity), set by reverse_kahn
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
                f"{name} must be an iterable of nodes, got {short.repr(items)}"
            ) from None
        index = self.index
        out = []
        for item in items:
            try:
                out.append(index[item])
            except (KeyError, TypeError):
                raise ValueError(f"unknown node {short.repr(item)} in {name}") from None
        return out


def index_graph(
    graph, strict: bool = False, self_loops: bool = True, distinct: bool = False
) -> Indexed:
    """Validate ``graph`` once and index its nodes by first appearance.

    Each predecessor iterable is read exactly once, here. ``self_loops=False`` skips the
    self-loop scan for callers that run Kahn's algorithm, which finds self-loops on its
    failure path at no cost to valid graphs. ``distinct=True`` keeps only the first of
    repeated predecessors (the scheduler counts each distinct predecessor once).
    """
    if not isinstance(graph, Mapping):
        raise ValueError(
            f"graph must be a mapping {{node: iterable of predecessors}}, got {short.repr(graph)}"
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
    if distinct:
        preds_int = [list(dict.fromkeys(ps)) if len(ps) > 1 else ps for ps in preds_int]
    if self_loops:
        for i, ps in enumerate(preds_int):
            if i in ps:
                raise self_loop_error(nodes[i])
    g = Indexed(nodes, index, preds_int)
    g.flat = np.fromiter(
        chain.from_iterable(preds_int), dtype=np.intp, count=sum(map(len, preds_int))
    )
    return g


def as_mapping(g: Indexed) -> dict:
    """``{node: [distinct predecessors]}`` with every node a key, in first-appearance order."""
    nodes = g.nodes
    return {nodes[v]: [nodes[u] for u in dict.fromkeys(ps)] for v, ps in enumerate(g.preds)}


def reach(adjacency: list[list[int]], starts: list[int]) -> set[int]:
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
            f"predecessors of node {node!r} must be an iterable of nodes, got {short.repr(preds)}"
        ) from None


def _index_slow(keys: list, pred_lists: list, strict: bool):
    """Index a graph whose predecessors include non-keys (or unhashable values)."""
    for node, preds in zip(keys, pred_lists, strict=True):
        for pred in preds:
            if not isinstance(pred, Hashable) or unhashable(pred):
                raise ValueError(f"predecessor {short.repr(pred)} of node {node!r} is not hashable")
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


def unhashable(obj) -> bool:
    try:
        hash(obj)
    except TypeError:
        return True
    return False


def self_loop_error(node) -> CycleError:
    return CycleError([node, node], f" (node {node!r} lists itself as a predecessor)")


@contextmanager
def gc_paused():
    """Pause the cyclic garbage collector while a pass allocates many acyclic lists.

    The graph passes build O(V + E) lists that can never form reference cycles; with the
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
