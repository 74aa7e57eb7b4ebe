r"""The plan as an artefact: a fixed goal, steps with states and evidence, a log of every change.

A plan is a goal :math:`g`, fixed for its whole life, and a DAG :math:`G_t = (V_t, E_t)` of
steps that changes only through logged events. Progress is stated against both plans: the
original promise :math:`|D \cap V_0| / |V_0|` and the work now known
:math:`|D \cap V_t| / |V_t \setminus A|` (:math:`D` done steps, :math:`A` abandoned steps).

What lives where: :mod:`~decompkit.artefact.states` holds the vocabulary (states, the
transition table, :class:`Step`, the event records, :class:`Progress`);
:mod:`~decompkit.artefact.revisions` finds every problem of a candidate plan;
:mod:`~decompkit.artefact.plan` holds :class:`Plan` and its errors, and
:mod:`~decompkit.artefact.migration` plays the lecture's migration on a plan. The package may
import :mod:`decompkit.dag` and :mod:`decompkit.plan`; :mod:`decompkit.metrics` builds on it.
"""

from .migration import migration_scenario, migration_stages
from .plan import Plan, RevisionError, TransitionError
from .states import (
    ABANDONED,
    ACTIVE,
    BLOCKED,
    DONE,
    NEEDS_REASON,
    PENDING,
    TRANSITIONS,
    Progress,
    Revision,
    State,
    Step,
    Transition,
)

__all__ = [
    "State",
    "PENDING",
    "ACTIVE",
    "BLOCKED",
    "DONE",
    "ABANDONED",
    "TRANSITIONS",
    "NEEDS_REASON",
    "TransitionError",
    "RevisionError",
    "Step",
    "Transition",
    "Revision",
    "Progress",
    "Plan",
    "migration_stages",
    "migration_scenario",
]
