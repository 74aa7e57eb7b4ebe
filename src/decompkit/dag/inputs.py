"""What a schedule reads besides the graph, checked once at the boundary.

:func:`decompkit.dag.critical_path`, :func:`decompkit.dag.list_schedule` and the scheduler
(:mod:`decompkit.scheduler`) take the same durations, resource keys and priorities; they all
check them here, on the indexed graph, so every error has one wording and names the argument
and the offending value. Counts (workers, kappa, limits) go through
:func:`decompkit.validate.whole`.
"""

from __future__ import annotations

import math
import numbers
import sys
from collections.abc import Mapping

import numpy as np

from ..validate import short
from .indexed import Indexed

__all__ = ["unknown_node", "durations", "resources", "priority_rule", "priority_values"]


def unknown_node(name: str, node) -> ValueError:
    """The error for a mapping argument that names a node the graph does not have."""
    return ValueError(f"{name} names node {short.repr(node)}, which is not in the graph")


def durations(g: Indexed, durations) -> list:
    """Durations as a list by node index: all ints, or all floats if any is not integral.

    Every node needs an entry, a finite number >= 0 (a bool is not a number here); a key that
    is not a node is refused, since it is most often a misspelt or stale node name. Float
    durations must add up to a finite float: otherwise the makespan, the latest times and
    the slacks would all come out infinite.
    """
    if not isinstance(durations, Mapping):
        raise ValueError(
            f"durations must be a mapping {{node: duration}}, got {short.repr(durations)}"
        )
    nodes = g.nodes
    if len(durations) == len(nodes):
        # Fast path for plain ints and floats: C-level lookups and checks.
        try:
            d = list(map(durations.__getitem__, nodes))
        except KeyError:
            d = []  # a node is missing, so some key is unknown: the loop below names it
        kinds = set(map(type, d))
        if d and kinds <= {int} and min(d) >= 0:
            return d
        try:
            if d and kinds <= {int, float} and all(map(math.isfinite, d)) and min(d) >= 0:
                return _finite_sum(list(map(float, d)))
        except OverflowError:
            pass  # an int too large for a float: the loop below names its node
    index = g.index
    d = [None] * len(nodes)
    integral = True
    for node, x in durations.items():
        i = index.get(node)
        if i is None:
            raise unknown_node("durations", node)
        if isinstance(x, (bool, np.bool_)) or not isinstance(x, numbers.Real):
            raise ValueError(f"duration of node {node!r} must be a finite number >= 0, got {x!r}")
        if isinstance(x, numbers.Integral):
            x = int(x)  # exact at any size: no isfinite, which would convert to float
            good = x >= 0
        else:
            try:
                x = float(x)
            except OverflowError:  # e.g. a huge Fraction
                good = False
            else:
                good = math.isfinite(x) and x >= 0
            integral = False
        if not good:
            raise ValueError(
                f"duration of node {node!r} must be a finite number >= 0, got {short.repr(x)}"
            )
        d[i] = x
    if len(durations) < len(d):
        missing = next(i for i, x in enumerate(d) if x is None)
        raise ValueError(f"durations has no entry for node {nodes[missing]!r}")
    if integral:
        return d
    floats = []
    for node, x in zip(nodes, d, strict=True):
        try:
            floats.append(float(x))
        except OverflowError:
            raise ValueError(
                f"duration of node {node!r} is too large to mix with float durations, "
                f"got {short.repr(x)}"
            ) from None
    return _finite_sum(floats)


def _finite_sum(d: list[float]) -> list[float]:
    """``d`` itself, once its sum is known to be finite (no path can then overflow)."""
    if not math.isfinite(sum(d)):
        raise ValueError(
            f"durations add up to more than the largest float ({sys.float_info.max:.4g}), "
            "so every finish time after that point would be infinite; express them in a "
            "larger time unit"
        )
    return d


def resources(g: Indexed, resources) -> list[frozenset]:
    """Per node index, a frozenset of resource keys (empty when the node needs none)."""
    none: frozenset = frozenset()
    sets = [none] * len(g.nodes)
    if resources is None:
        return sets
    if not isinstance(resources, Mapping):
        raise ValueError(
            f"resources must be a mapping {{node: iterable of keys}}, got {short.repr(resources)}"
        )
    for node, keys in resources.items():
        i = g.index.get(node)
        if i is None:
            raise unknown_node("resources", node)
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
                f"got {short.repr(keys)}"
            ) from None
    return sets


def priority_rule(priority):
    """``"critical"``, ``"input"`` or the callable itself; anything else raises."""
    if isinstance(priority, str) and priority in ("critical", "input"):
        return priority
    if callable(priority) and not isinstance(priority, str):
        return priority
    raise ValueError(
        f"priority must be 'critical', 'input' or a callable, got {short.repr(priority)}"
    )


def priority_values(g: Indexed, priority) -> list:
    """``priority(node)`` for every node by index, each checked to be a number (not NaN)."""
    values = []
    for node in g.nodes:
        p = priority(node)
        if isinstance(p, (bool, np.bool_)) or not isinstance(p, numbers.Real) or math.isnan(p):
            raise ValueError(f"priority({node!r}) must return a number, got {short.repr(p)}")
        values.append(p)
    return values
