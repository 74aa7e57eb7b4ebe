r"""The plan as a DAG: order, ready set, critical path, slack and list scheduling.

A plan is a graph :math:`G = (V, E)` given as ``{node: iterable of predecessors}`` (the
``graphlib`` convention); an edge :math:`u \to v` means *u must finish before v*. With node
durations :math:`d_v`, the earliest finish is :math:`EF_v = d_v + \max_{u \to v} EF_u`, the
makespan is :math:`\max_v EF_v` (the critical path), and the slack is
:math:`LS_v - ES_v` with :math:`LF_u = \min_{u \to v} (LF_v - d_v)`.

What lives where:

- :mod:`~decompkit.dag.orders`: Kahn's order, its layers, the ready set, descendant and
  ancestor cones, checking and enumerating topological orders.
- :mod:`~decompkit.dag.counting`: the exact number of topological orders.
- :mod:`~decompkit.dag.cpm`: the critical path method.
- :mod:`~decompkit.dag.list_scheduling`: greedy list scheduling on ``m`` workers.
- :mod:`~decompkit.dag.indexed`: the graph read once and numbered (:class:`Indexed`), which
  every function here and the scheduler start from, and :class:`CycleError`.
- :mod:`~decompkit.dag.kahn`: the flat Kahn engines the benchmarks asked for, which the
  readable passes of ``orders`` and ``cpm`` call.
- :mod:`~decompkit.dag.inputs`: durations, resources and priorities, checked for this package
  and for :mod:`decompkit.scheduler`.

The package lifts the ``__all__`` of ``indexed``, ``orders``, ``counting``, ``cpm`` and
``list_scheduling``, so ``from decompkit.dag import critical_path`` works. The engines, the
shared checks and the names a sibling module uses from a lifted one (``cpm.cpm_passes``) are
public too, reached by their path (``decompkit.dag.kahn``).

This package may import NumPy, the standard library and :mod:`decompkit.validate`; nothing
else of decompkit, and no plotting, widget, notebook or agent library.
"""

from . import counting, cpm, indexed, list_scheduling, orders
from .counting import *  # noqa: F403
from .cpm import *  # noqa: F403
from .indexed import *  # noqa: F403
from .list_scheduling import *  # noqa: F403
from .orders import *  # noqa: F403

__all__ = [
    *indexed.__all__,
    *orders.__all__,
    *counting.__all__,
    *cpm.__all__,
    *list_scheduling.__all__,
]
