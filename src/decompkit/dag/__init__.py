r"""The plan as a DAG: order, ready set, critical path, slack and list scheduling.

A plan is a graph :math:`G = (V, E)` given as ``{node: iterable of predecessors}`` (the
``graphlib`` convention); an edge :math:`u \to v` means *u must finish before v*. With node
durations :math:`d_v`, the earliest finish is :math:`EF_v = d_v + \max_{u \to v} EF_u`, the
makespan is :math:`\max_v EF_v` (the critical path), and the slack is
:math:`LS_v - ES_v` with :math:`LF_u = \min_{u \to v} (LF_v - d_v)`.

What lives where (every public name is re-exported here, so ``from decompkit.dag import
critical_path`` works):

- :mod:`~decompkit.dag.orders`: Kahn's order, its layers, the ready set, descendant and
  ancestor cones, checking and enumerating topological orders.
- :mod:`~decompkit.dag.counting`: the exact number of topological orders.
- :mod:`~decompkit.dag.cpm`: the critical path method.
- :mod:`~decompkit.dag.list_scheduling`: greedy list scheduling on ``m`` workers.
- private: ``_index`` (the graph read once and numbered, and ``CycleError``), ``_kahn`` (the
  flat engines the benchmarks asked for), ``_inputs`` (durations, resources, priorities and
  counts, checked for this package and for :mod:`decompkit.scheduler`).

This package may import NumPy, the standard library and :mod:`decompkit._validate`; nothing
else of decompkit, and no plotting, widget, notebook or agent library.
"""

from ._index import CycleError
from .counting import MAX_COUNT_COMPONENT, count_topological_orders
from .cpm import CriticalPath, critical_path
from .list_scheduling import Schedule, list_schedule
from .orders import (
    OrderViolations,
    all_topological_orders,
    ancestors,
    descendants,
    generations,
    is_topological_order,
    order_violations,
    predecessors_map,
    ready_set,
    successors_map,
    topological_order,
)

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
    "CriticalPath",
    "critical_path",
    "Schedule",
    "list_schedule",
]
