r"""Counting the topological orders of a plan DAG exactly.

A DAG's topological orders are its linear extensions; their number says how much freedom a
scheduler has. Counting them is #P-complete in general (Brightwell & Winkler 1991), so the
count below is exact but refuses connected components above :data:`MAX_COUNT_COMPONENT`
nodes; independent components interleave freely and multiply out.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from ..validate import short
from .indexed import Indexed, gc_paused, index_graph
from .kahn import reverse_kahn

__all__ = ["count_topological_orders", "MAX_COUNT_COMPONENT"]


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
    with gc_paused():
        g = index_graph(graph, strict, self_loops=False)
        reverse_kahn(g)
    n = len(g.nodes)
    components = _components(g)
    for comp in components:
        if len(comp) > MAX_COUNT_COMPONENT:
            raise ValueError(
                f"count_topological_orders refuses a connected component of {len(comp)} nodes "
                f"(at most {MAX_COUNT_COMPONENT}: the count takes time and memory 2^size); "
                f"it contains {short.repr(g.nodes[comp[0]])}"
            )
    total = 1
    placed = 0
    for comp in components:
        placed += len(comp)
        total *= math.comb(placed, len(comp)) * _count_component(g, comp)
    assert placed == n
    return total


def _components(g: Indexed) -> list[list[int]]:
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


def _count_component(g: Indexed, comp: list[int]) -> int:
    m = len(comp)
    if m <= 2:
        return 1  # one node, or two joined by an edge (connected, so ordered)
    local = {v: k for k, v in enumerate(comp)}
    need = [0] * m
    for k, v in enumerate(comp):
        for u in g.preds[v]:
            need[k] |= 1 << local[u]
    return _count_needs(tuple(need))


@functools.lru_cache(maxsize=4096)
def _count_needs(need: tuple) -> int:
    """The orders of nodes ``0..m-1`` where node k needs the nodes of bit mask ``need[k]``
    first. Kept by structure: the plans drawn for a class share most of their components."""
    m = len(need)
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
