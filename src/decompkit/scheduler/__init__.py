r"""The scheduler loop with checked steps, failure cones, and repair by unrolling, simulated.

A deterministic discrete-event simulation on a virtual clock. While a node is ready or
running: dispatch the ready set :math:`R = \{v \notin \mathrm{out} \cup B : \mathrm{pred}(v)
\subseteq \mathrm{done}\}` to the free workers, advance the clock to the next finish, and
record an artifact or a failure report; a failure of :math:`f` blocks its cone
:math:`B \mathrel{{+}{=}} \mathrm{desc}(f)`. Each node runs as a checked step: at most
:math:`\kappa` attempts of :math:`d_v` time units each, a retry prompt being the original
prompt plus the latest verdict.

What lives where (the package lifts the ``__all__`` of each, so ``from decompkit.scheduler
import schedule`` works):

- :mod:`~decompkit.scheduler.steps`: the checked step (scripted or seeded) and its prompts.
- :mod:`~decompkit.scheduler.trace`: artifacts, failure reports, events, the trace, results.
- :mod:`~decompkit.scheduler.loop`: :func:`schedule`, which indexes the graph once per call.
- :mod:`~decompkit.scheduler.repair`: unrolling a failed check, and the repair loop.

This package may import NumPy, the standard library, :mod:`decompkit.validate` and
:mod:`decompkit.dag` (its graph index and its shared input checks, so that the scheduler and
the list scheduler read durations, resources and priorities alike); no plotting, widget,
notebook or agent library.
"""

from . import loop, repair, steps, trace
from .loop import *  # noqa: F403
from .repair import *  # noqa: F403
from .steps import *  # noqa: F403
from .trace import *  # noqa: F403

__all__ = [
    *steps.__all__,
    *trace.__all__,
    *loop.__all__,
    *repair.__all__,
]
