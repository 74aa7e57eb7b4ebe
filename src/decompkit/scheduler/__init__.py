r"""The scheduler loop with checked steps, failure cones, and repair by unrolling, simulated.

A deterministic discrete-event simulation on a virtual clock. While a node is ready or
running: dispatch the ready set :math:`R = \{v \notin \mathrm{out} \cup B : \mathrm{pred}(v)
\subseteq \mathrm{done}\}` to the free workers, advance the clock to the next finish, and
record an artifact or a failure report; a failure of :math:`f` blocks its cone
:math:`B \mathrel{{+}{=}} \mathrm{desc}(f)`. Each node runs as a checked step: at most
:math:`\kappa` attempts of :math:`d_v` time units each, a retry prompt being the original
prompt plus the latest verdict.

What lives where (every public name is re-exported here, so ``from decompkit.scheduler
import schedule`` works):

- :mod:`~decompkit.scheduler.steps`: the checked step (scripted or seeded) and its prompts.
- :mod:`~decompkit.scheduler.trace`: artifacts, failure reports, events, the trace, results.
- :mod:`~decompkit.scheduler.loop`: :func:`schedule`, which indexes the graph once per call.
- :mod:`~decompkit.scheduler.repair`: unrolling a failed check, and the repair loop.

This package may import NumPy, the standard library, :mod:`decompkit._validate` and
:mod:`decompkit.dag` (its graph index and its shared input checks, so that the scheduler and
the list scheduler read durations, resources and priorities alike); no plotting, widget,
notebook or agent library.
"""

from .loop import schedule
from .repair import (
    Primed,
    Repair,
    RepairLimitError,
    RepairResult,
    run_with_repair,
    unroll_failed_check,
)
from .steps import (
    OUTCOMES,
    ScriptedStep,
    SeededStep,
    Verdict,
    retry_prompt,
    scripted,
    seeded,
    task_prompt,
)
from .trace import EVENT_KINDS, Artifact, Event, FailureReport, ScheduleResult, Trace

__all__ = [
    "OUTCOMES",
    "Verdict",
    "ScriptedStep",
    "SeededStep",
    "scripted",
    "seeded",
    "task_prompt",
    "retry_prompt",
    "Artifact",
    "FailureReport",
    "Event",
    "EVENT_KINDS",
    "Trace",
    "ScheduleResult",
    "schedule",
    "Primed",
    "Repair",
    "RepairLimitError",
    "unroll_failed_check",
    "RepairResult",
    "run_with_repair",
]
