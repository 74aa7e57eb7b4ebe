r"""The plan as an artefact: a fixed goal, steps with states and evidence, a log of every change.

A plan is a goal :math:`g`, fixed for its whole life, and a DAG :math:`G_t = (V_t, E_t)` of
steps that changes only through logged events. Progress is stated against both plans: the
original promise :math:`|D \cap V_0| / |V_0|` and the work now known
:math:`|D \cap V_t| / |V_t \setminus A|` (:math:`D` done steps, :math:`A` abandoned steps).

What lives where: :mod:`~decompkit.artefact.states` holds the vocabulary (states, the
transition table, :class:`Step`, the event records, :class:`Progress`);
:mod:`~decompkit.artefact.revisions` finds every problem of a candidate plan;
:mod:`~decompkit.artefact.plan` holds :class:`Plan` and its errors, and
:mod:`~decompkit.artefact.migration` plays the lecture's migration on a plan. The package lifts
the ``__all__`` of ``states``, ``plan`` and ``migration``. It may import :mod:`decompkit.dag`
and :mod:`decompkit.plan`; :mod:`decompkit.metrics` builds on it.
"""

from . import migration, plan, states
from .migration import *  # noqa: F403
from .plan import *  # noqa: F403
from .states import *  # noqa: F403

__all__ = [
    *states.__all__,
    *plan.__all__,
    *migration.__all__,
]
