r"""The Manage-Execute-Audit loop, simulated: the process that :mod:`decompkit.markov` models.

Each round the executor attempts the next subtask in a fresh context and is right with
probability :math:`p`; a read-only audit of the environment catches a wrong result with
probability :math:`q`. A caught error burns the round, a missed one corrupts the state, so
:math:`P(\text{all } n \text{ verified within } B) = (e_0^\top P^B)_n`, as in the chain.
Two switches break the match: errors clustered on hard subtasks, and an auditor that reads
the executor's narration (effective :math:`q' = q(1 - \pi)` for persuasion :math:`\pi`).
The context-growth functions compare :math:`\sum_{t<T} (L_0 + a t)^2 = \Theta(a^2 T^3)`
with a fresh bounded context, :math:`T L_*^2`.

What lives where: :mod:`~decompkit.harness.loop` plays one run with its actors and keeps the
trace; :mod:`~decompkit.harness.batch` holds the caveat switches, many runs at once (its
vectorised engine is :mod:`~decompkit.harness.lockstep`) and the exact reference;
:mod:`~decompkit.harness.context` the context-growth costs. The package lifts the ``__all__``
of ``batch``, ``loop`` and ``context``. It may import NumPy, :mod:`decompkit.validate` and
:mod:`decompkit.markov`, nothing above them.
"""

from . import batch, context, loop
from .batch import *  # noqa: F403
from .context import *  # noqa: F403
from .loop import *  # noqa: F403

__all__ = [
    *batch.__all__,
    *loop.__all__,
    *context.__all__,
]
