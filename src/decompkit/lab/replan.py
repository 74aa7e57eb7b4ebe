r"""Replanning: a failed step is retried inside itself, then repaired with new nodes.

Round :math:`r = 0, 1, \dots`: run the compiled plan, each step a checked step with
:math:`\kappa` attempts. For every step :math:`f` that failed, the replanner writes new steps
and re-points the not yet executed readers of :math:`f` to them; the repaired plan is checked
and the next round runs what has not run. Executed steps never change. At most
:math:`\kappa_\text{plan}` repair rounds; a failure after that ends the run.
"""

from __future__ import annotations

import json
import re

from ..scheduler import FailureReport, RepairLimitError
from ..validate import count
from .compiler import compile_plan
from .execute import LabRun, Recorder
from .models import agent
from .schema import PlanRepair, TypedPlan, TypedStep
from .tools import Toolbox

__all__ = [
    "ReplanLimitError",
    "replanner_prompt",
    "ask_replanner",
    "apply_repair",
    "run_with_replanning",
]


class ReplanLimitError(RepairLimitError):
    """A step failed again after ``kappa_plan`` replanning rounds; the plan gives up.

    Attributes
    ----------
    node : str
        The step that failed last.
    kappa_plan : int
    result : LabRun or None
        The run so far; its trace shows every round.
    """

    def __init__(self, node, kappa_plan, result=None):
        self.node = node
        self.kappa_plan = kappa_plan
        self.result = result
        ValueError.__init__(
            self,
            f"{node} failed after {kappa_plan} replanning round(s); the plan-level cap "
            f"kappa_plan={kappa_plan} allows no further repair, so the plan gives up",
        )


_ID = re.compile(r"E(\d+)")


def _next_id(plan: TypedPlan) -> int:
    numbers = [int(m.group(1)) for s in plan.steps if (m := _ID.fullmatch(s.id))]
    return max(numbers, default=0) + 1


def replanner_prompt(plan: TypedPlan, run: LabRun, failed: str) -> str:
    """What the replanner reads: the plan, what ran, the failure report; rebuilt, not accumulated.

    The failed attempts themselves are not in it, only the report the checked step wrote.

    Examples
    --------
    >>> plan = TypedPlan(goal="g", steps=[TypedStep(id="E1", tool="search", args={"query": "q"})])
    >>> rec = Recorder()
    >>> rec.out["E1"] = FailureReport("E1", "rejected", 2, "no address")
    >>> sorted(json.loads(replanner_prompt(plan, rec.result({"E1": ()}, plan), "E1")))
    ['done', 'failed', 'goal', 'next_id', 'steps']
    """
    report = run.out.get(failed)
    if not isinstance(report, FailureReport):
        raise ValueError(f"failed must name a step with a failure report, got {failed!r}")
    request = {
        "goal": plan.goal,
        "steps": [s.model_dump() for s in plan.steps],
        "done": sorted(run.done),
        "failed": {"id": failed, "report": str(report)},
        "next_id": _next_id(plan),
    }
    return json.dumps(request, indent=1)


async def ask_replanner(plan: TypedPlan, run: LabRun, failed: str) -> PlanRepair:
    """Ask the replanner (one model call) for new steps that stand in for ``failed``.

    Parameters
    ----------
    plan : TypedPlan
    run : LabRun
        The run in which ``failed`` failed.
    failed : str
        A step with a failure report in ``run``.

    Returns
    -------
    PlanRepair
        Well-formed (the schema checked it); :func:`apply_repair` and the plan check
        decide whether it is usable.

    Raises
    ------
    ValueError
        If ``failed`` has no failure report in ``run``.

    Examples
    --------
    >>> import asyncio
    >>> from decompkit.lab.models import PLANS
    >>> plan = TypedPlan(goal="g", steps=PLANS["quotes"])
    >>> rec = Recorder()
    >>> rec.out["E5"] = FailureReport("E5", "rejected", 2, "error page")
    >>> repair = asyncio.run(ask_replanner(plan, rec.result({}, plan), "E5"))
    >>> [(s.id, s.tool) for s in repair.steps], repair.repoint
    ([('E8', 'search'), ('E9', 'fetch_page')], {'E5': 'E9'})
    """
    result = await agent("replanner", PlanRepair).run(replanner_prompt(plan, run, failed))
    return result.output


def _token(sid: str) -> re.Pattern:
    return re.compile(re.escape("#" + sid) + r"(?!\d)")


def _repoint_args(value, old: str, new: str):
    if isinstance(value, str):
        return _token(old).sub("#" + new, value)
    if isinstance(value, list):
        return [_repoint_args(v, old, new) for v in value]
    return {k: _repoint_args(v, old, new) for k, v in value.items()}


def apply_repair(plan: TypedPlan, repair: PlanRepair, run: LabRun) -> TypedPlan:
    """The plan after a repair: new steps appended, unexecuted readers re-pointed.

    Parameters
    ----------
    plan : TypedPlan
    repair : PlanRepair
    run : LabRun
        Says which steps have run (done or failed): those are never changed.

    Returns
    -------
    TypedPlan
        A new plan; the input is not modified. It still has to pass its check.

    Raises
    ------
    ValueError
        If a new step reuses an id, ``repoint`` maps a step that did not fail or points to
        an id that is not a new step, or a new id is not of the form ``E<k>``.

    Examples
    --------
    >>> plan = TypedPlan(goal="g", steps=[
    ...     TypedStep(id="E1", tool="fetch_page", args={"url": "https://q.example/quote"}),
    ...     TypedStep(id="E2", tool="compare", args={"pages": ["#E1"]}, depends_on=["E1"]),
    ... ])
    >>> rec = Recorder()
    >>> rec.out["E1"] = FailureReport("E1", "rejected", 2, "error page")
    >>> fix = PlanRepair(steps=[TypedStep(id="E3", tool="fetch_page", args={"url": "x"})],
    ...              repoint={"E1": "E3"})
    >>> new = apply_repair(plan, fix, rec.result({"E1": (), "E2": ("E1",)}, plan))
    >>> new.step("E2").args, new.step("E2").depends_on
    ({'pages': ['#E3']}, ['E3'])
    """
    old_ids = {s.id for s in plan.steps}
    new_ids = [s.id for s in repair.steps]
    for sid in new_ids:
        if sid in old_ids or new_ids.count(sid) > 1:
            raise ValueError(f"new step id {sid!r} is already used; a repair adds fresh nodes")
        if not _ID.fullmatch(sid):
            raise ValueError(f"new step id must look like 'E<k>', got {sid!r}")
    for old, new in repair.repoint.items():
        if not isinstance(run.out.get(old), FailureReport):
            raise ValueError(f"repoint must map a failed step, got {old!r}")
        if new not in new_ids:
            raise ValueError(f"repoint must point {old!r} to a new step, got {new!r}")
    executed = set(run.out)
    steps = []
    for step in plan.steps:
        if step.id not in executed:
            args, deps = step.args, list(step.depends_on)
            for old, new in repair.repoint.items():
                args = _repoint_args(args, old, new)
                deps = [new if d == old else d for d in deps]
            step = TypedStep(
                id=step.id, tool=step.tool, args=args, depends_on=list(dict.fromkeys(deps))
            )
        steps.append(step)
    return TypedPlan(goal=plan.goal, steps=steps + list(repair.steps))


async def run_with_replanning(
    plan: TypedPlan,
    toolbox: Toolbox,
    *,
    kappa: int = 2,
    kappa_plan: int = 2,
    tools=None,
    max_steps: int = 20,
    on_limit: str = "raise",
) -> LabRun:
    """Run a plan, repairing each failure with new nodes from the replanner, round by round.

    Parameters
    ----------
    plan : TypedPlan
    toolbox : Toolbox
    kappa : int, optional
        Attempts per step inside the checked step (default 2: one retry).
    kappa_plan : int, optional
        Replanning rounds allowed (default 2).
    tools : iterable of str, optional
    max_steps : int, optional
        Applies to the repaired plans too.
    on_limit : {"raise", "return"}, optional
        When a step still fails after ``kappa_plan`` rounds: raise
        :class:`ReplanLimitError` (default), or return the run with ``gave_up`` set.

    Returns
    -------
    LabRun
        All rounds on one clock (``round`` on each event; ``unroll`` events mark the new
        steps), the final plan, ``rounds`` and ``repairs``.

    Raises
    ------
    ReplanLimitError
        See ``on_limit``.
    decompkit.plan.PlanError
        If the plan, or a repaired plan, fails its check: a repair is checked before it runs.
    ValueError
        If ``kappa`` < 1, ``kappa_plan`` < 0 or ``on_limit`` is unknown, or
        ``plan``/``toolbox`` are of the wrong type.

    Examples
    --------
    >>> import asyncio
    >>> from decompkit.lab.models import PLANS
    >>> plan = TypedPlan(goal="g", steps=PLANS["quotes"])
    >>> box = Toolbox({"search": 0, "fetch_page": 0, "compare": 0}, failures={"E5": ["junk"] * 2})
    >>> run = asyncio.run(run_with_replanning(plan, box))
    >>> run.rounds, run.repairs[0].repoint, sorted(run.failed)
    (2, {'E5': 'E9'}, ['E5'])
    """
    kappa = int(count("kappa", kappa, minimum=1))
    kappa_plan = int(count("kappa_plan", kappa_plan, minimum=0))
    if on_limit not in ("raise", "return"):
        raise ValueError(f"on_limit must be 'raise' or 'return', got {on_limit!r}")
    rec = Recorder()
    compiled = compile_plan(plan, toolbox, tools=tools, max_steps=max_steps, kappa=kappa)
    run = await compiled.run(recorder=rec)
    repairs = []
    handled: set = set()
    while True:
        failed = [s.id for s in plan.steps if s.id in run.failed and s.id not in handled]
        if not failed:
            return rec.result(compiled.graph, plan, rounds=rec.round + 1, repairs=tuple(repairs))
        if rec.round >= kappa_plan:
            result = rec.result(
                compiled.graph,
                plan,
                rounds=rec.round + 1,
                repairs=tuple(repairs),
                gave_up=failed[0],
            )
            if on_limit == "raise":
                raise ReplanLimitError(failed[0], kappa_plan, result)
            return result
        rec.round += 1
        for sid in failed:
            repair = await ask_replanner(plan, run, sid)
            plan = apply_repair(plan, repair, run)
            new_id = repair.repoint.get(sid)
            readers = [s.id for s in plan.steps if s.id not in run.out and new_id in s.depends_on]
            for step in repair.steps:
                rec.emit("unroll", step.id, detail=_unroll_text(sid, step, repair, readers))
            repairs.append(repair)
            handled.add(sid)
        rec.blocked.clear()  # derived from the results at every round, not carried over
        compiled = compile_plan(
            plan, toolbox, tools=tools, max_steps=max_steps, kappa=kappa, skip=set(rec.out)
        )
        run = await compiled.run(recorder=rec)


def _unroll_text(failed: str, step: TypedStep, repair: PlanRepair, readers: list) -> str:
    text = f"new {step.tool} step for the failed {failed}"
    if repair.repoint.get(failed) == step.id and readers:
        verb = "reads" if len(readers) == 1 else "read"
        text += f"; {', '.join(readers)} now {verb} it"
    return text
