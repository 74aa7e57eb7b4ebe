r"""Running plan steps for real: the checked step and the trace of a run in wall-clock time.

Each step is a checked step: up to :math:`\kappa` attempts, each a tool call whose artifact a
program checks; a rejected artifact is retried with the original call plus the latest verdict,
a hard failure (no output) ends the step at once. A failure blocks the step's cone
:math:`\mathrm{desc}(f)`. Events carry milliseconds since the run began, in the trace format of
:mod:`decompkit.scheduler`, so the kit's tables and Gantt charts read them.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace

from ..scheduler import Artifact, Event, FailureReport, ScheduleResult, Trace, retry_prompt
from ..validate import count
from .schema import TypedPlan, TypedStep, substitute
from .tools import LATENCY_MS, Toolbox, ToolError, check_output

__all__ = ["LabRun", "Recorder", "run_checked_step", "durations"]


@dataclass(frozen=True)
class LabRun(ScheduleResult):
    """A real run of a plan: a :class:`decompkit.scheduler.ScheduleResult` in milliseconds.

    ``makespan`` is the measured wall time in ms; ``workers`` the largest number of steps
    that ran at once; each event's ``worker`` is the lane its step ran in.

    Attributes
    ----------
    evidence : dict
        ``{step id: output}`` of the steps that finished.
    plan : TypedPlan or None
        The plan as run (after the last repair, for a replanning run).
    rounds : int
        1, plus one per replanning round.
    repairs : tuple
        The :class:`~decompkit.lab.schema.PlanRepair` of each replanning round.
    gave_up : str or None
        The step still failed when the replanning cap was spent, else None.
    """

    evidence: dict = field(default_factory=dict)
    plan: TypedPlan | None = None
    rounds: int = 1
    repairs: tuple = ()
    gave_up: str | None = None

    @property
    def wall_ms(self) -> float:
        """The measured wall time in milliseconds (the same as ``makespan``)."""
        return self.makespan

    def intervals(self) -> dict:
        """``{step id: (start, end)}`` in ms, from the first attempt to the last verdict."""
        spans: dict = {}
        for e in self.events:
            if e.kind == "attempt" and e.node not in spans:
                spans[e.node] = [e.time, e.time]
            elif e.kind == "verdict":
                spans[e.node][1] = e.time
        return {node: tuple(span) for node, span in spans.items()}


class Recorder:
    """The state a run shares between its steps: results, the blocked set, the events.

    Times are milliseconds since the recorder was made (or :meth:`restart` was called).
    """

    def __init__(self):
        self.t0 = time.perf_counter()
        self.events: list[Event] = []
        self.out: dict = {}
        self.evidence: dict = {}
        self.blocked: set = set()
        self.round = 0

    def restart(self) -> None:
        """Start the clock again and forget everything recorded."""
        self.__init__()

    def now(self) -> float:
        """Milliseconds since the start, to 0.1 ms."""
        return round((time.perf_counter() - self.t0) * 1000, 1)

    def emit(self, kind: str, node, attempt=None, detail: str = "") -> None:
        """Append one event at the current time."""
        self.events.append(Event(self.now(), kind, node, None, attempt, detail, self.round))

    def result(self, graph, plan=None, **extra) -> LabRun:
        """The run so far as a :class:`LabRun` on ``graph`` (``{id: predecessors}``)."""
        events, lanes = _with_lanes(self.events)
        return LabRun(
            out=dict(self.out),
            blocked=frozenset(self.blocked),
            cancelled=frozenset(),
            makespan=self.now(),
            events=Trace(events),
            graph={node: list(preds) for node, preds in graph.items()},
            workers=lanes,
            evidence=dict(self.evidence),
            plan=plan,
            **extra,
        )


def _with_lanes(events) -> tuple[list, int]:
    """Give each step the lowest lane free when its first attempt began, like a worker id."""
    free: list[int] = []
    used = 0
    lane_of: dict = {}
    out = []
    for e in events:
        if e.kind == "attempt" and e.node not in lane_of:
            if free:
                free.sort()
                lane_of[e.node] = free.pop(0)
            else:
                lane_of[e.node] = used
                used += 1
        lane = lane_of.get(e.node) if e.kind in ("attempt", "verdict", "finish", "fail") else None
        out.append(replace(e, worker=lane))
        if e.kind in ("finish", "fail") and e.node in lane_of:
            free.append(lane_of.pop(e.node))
    return out, used


def _call_text(step: TypedStep, args) -> str:
    shown = ", ".join(f"{k}={v!r}" for k, v in args.items())
    return f"{step.id}: {step.tool}({shown})"


def _failed_input(step: TypedStep, rec: Recorder):
    """The first dependency that failed or is blocked, or None."""
    for dep in step.depends_on:
        if isinstance(rec.out.get(dep), FailureReport) or dep in rec.blocked:
            return dep
    return None


async def run_checked_step(
    step: TypedStep,
    toolbox: Toolbox,
    rec: Recorder,
    *,
    kappa: int = 1,
    ids=None,
    check: bool = True,
):
    """Run one plan step as a checked step and record its artifact or failure report.

    Parameters
    ----------
    step : TypedStep
    toolbox : Toolbox
    rec : Recorder
        Holds the outputs of earlier steps (read through the placeholders) and receives
        this step's result and events.
    kappa : int, optional
        Attempts allowed (default 1: no retry).
    ids : list of str, optional
        The plan's step ids in order, for placeholders that name a step by position.
    check : bool, optional
        Check each artifact (default). With False, whatever the tool returns is accepted,
        as in an architecture with no step check; only a hard failure still fails.

    Returns
    -------
    Artifact, FailureReport or None
        None when the step was blocked (a dependency failed) or had already run.

    Notes
    -----
    A step already in ``rec.out`` is never run again: executed nodes are immutable. A
    rejected artifact is retried while attempts are left, the attempt's prompt being the
    original call plus the latest verdict; a hard failure (:class:`ToolError`) ends the
    step at once. The failure report's kind is ``"rejected"`` or ``"hard"`` accordingly.
    """
    kappa = int(count("kappa", kappa, minimum=1))
    sid = step.id
    if sid in rec.out:
        return None
    bad = _failed_input(step, rec)
    if bad is not None:
        rec.blocked.add(sid)
        rec.emit("block", sid, detail=f"reads {bad}, which has no artifact")
        return None
    missing = [dep for dep in step.depends_on if dep not in rec.evidence]
    if missing:
        raise RuntimeError(f"step {sid!r} started before {missing} finished: the executor is wrong")
    args = substitute(step.args, rec.evidence, ids)
    original = _call_text(step, args)
    prompt = original
    for attempt in range(1, kappa + 1):
        rec.emit("attempt", sid, attempt, prompt)
        try:
            output = await toolbox.call(sid, step.tool, args)
        except ToolError as error:
            rec.emit("verdict", sid, attempt, f"fail: {error}")
            report = FailureReport(sid, "hard", attempt, str(error), rec.now())
            break
        verdict = check_output(step.tool, output) if check else None
        if verdict is None:
            rec.evidence[sid] = output
            rec.out[sid] = Artifact(sid, attempt, True, rec.now())
            rec.emit("verdict", sid, attempt, "pass: accepted" if check else "pass: not checked")
            rec.emit("finish", sid, attempt, output)
            return rec.out[sid]
        rec.emit("verdict", sid, attempt, f"reject: {verdict}")
        report = FailureReport(sid, "rejected", attempt, verdict, rec.now())
        prompt = retry_prompt(original, verdict)
    rec.out[sid] = report
    rec.emit("fail", sid, report.attempts, str(report))
    return report


def durations(plan: TypedPlan, latency=None) -> dict:
    """``{step id: ms}``: each step's tool latency, the durations the DAG functions take.

    Examples
    --------
    >>> plan = TypedPlan(goal="g", steps=[TypedStep(id="E1", tool="search", args={"query": "q"})])
    >>> durations(plan)
    {'E1': 40}
    """
    latency = LATENCY_MS if latency is None else latency
    out = {}
    for step in plan.steps:
        if step.tool not in latency:
            raise ValueError(f"latency has no entry for the tool {step.tool!r} of step {step.id!r}")
        out[step.id] = latency[step.tool]
    return out
