r"""ReWOO: plan once, check the plan, run its steps in list order, solve from the evidence.

Two model calls whatever the plan's size: the planner writes the typed plan with ``#E``
placeholders, the solver reads the goal, the plan and the evidence. The worker runs the
:math:`n` steps one at a time in the order written, so a run takes
:math:`\sum_i d_i` even when independent steps could overlap (critical path
:math:`T \le \sum_i d_i`).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..dag import order_violations
from .execute import LabRun, Recorder, run_checked_step
from .models import agent
from .schema import Answer, TypedPlan, check_plan, require_plan
from .tools import TOOLS, Toolbox, require_toolbox

__all__ = ["make_plan", "work", "solve", "ReWOOResult", "run_rewoo", "solver_prompt"]


async def make_plan(goal: str, *, script: str | None = None) -> TypedPlan:
    """Ask the planner for a typed plan; nothing is checked or run yet.

    Parameters
    ----------
    goal : str
    script : str, optional
        The scripted planner's plan (a key of :data:`~decompkit.lab.models.PLANS`;
        default ``"quotes"``); ignored when ``DECOMPKIT_MODEL`` names a real model.

    Returns
    -------
    TypedPlan
        Well-formed: the schema rejected anything else (and the model had one retry).

    Raises
    ------
    pydantic_ai.exceptions.UnexpectedModelBehavior
        If the model's plan still failed the schema after its retry.
    ValueError
        If ``goal`` is not a non-empty str.

    Examples
    --------
    >>> import asyncio
    >>> plan = asyncio.run(make_plan("Which supplier quotes least?"))
    >>> [(s.id, s.tool, s.depends_on) for s in plan.steps][-1]
    ('E7', 'compare', ['E4', 'E5', 'E6'])
    """
    if not isinstance(goal, str) or not goal.strip():
        raise ValueError(f"goal must be a non-empty str, got {goal!r}")
    result = await agent("planner", TypedPlan, script=script).run(goal)
    return result.output


async def work(plan: TypedPlan, toolbox: Toolbox, *, tools=None, max_steps: int = 20) -> LabRun:
    """ReWOO's worker: check the plan, then run its steps one at a time, in list order.

    Parameters
    ----------
    plan : TypedPlan
    toolbox : Toolbox
    tools : iterable of str, optional
        The tools a plan may name (default :data:`~decompkit.lab.tools.TOOLS`).
    max_steps : int, optional

    Returns
    -------
    LabRun
        ReWOO has no step check: whatever a tool returns becomes evidence, and every step
        gets one attempt. Only a hard failure (no output) fails a step; the steps that read
        it are blocked, not run.

    Raises
    ------
    decompkit.plan.PlanError
        If the plan fails its check (nothing has run).
    ValueError
        If a step reads a step written after it (list order is then no valid order), or
        ``plan``/``toolbox`` are of the wrong type.

    Examples
    --------
    >>> import asyncio
    >>> plan = asyncio.run(make_plan("Which supplier quotes least?"))
    >>> run = asyncio.run(work(plan, Toolbox({"search": 0, "fetch_page": 0, "compare": 0})))
    >>> sorted(run.done) == [s.id for s in plan.steps], run.workers
    (True, 1)
    """
    require_plan(plan)
    require_toolbox(toolbox)
    graph = check_plan(plan, TOOLS if tools is None else tools, max_steps=max_steps)
    ids = [s.id for s in plan.steps]
    late = order_violations(graph, ids)
    if late:
        raise ValueError(f"ReWOO runs the steps in the order written, which breaks {late}")
    rec = Recorder()
    for step in plan.steps:
        await run_checked_step(step, toolbox, rec, kappa=1, ids=ids, check=False)
    return rec.result(graph, plan)


def solver_prompt(goal: str, plan: TypedPlan, run: LabRun) -> str:
    """What ReWOO's solver reads: the goal, the plan, and each step's evidence.

    Examples
    --------
    >>> from decompkit.lab.schema import TypedStep
    >>> plan = TypedPlan(goal="g", steps=[TypedStep(id="E1", tool="search", args={"query": "q"})])
    >>> from decompkit.lab.execute import Recorder
    >>> rec = Recorder()
    >>> rec.evidence["E1"] = "https://q.example/quote"
    >>> print(solver_prompt("g", plan, rec.result({"E1": ()}, plan)))
    Goal: g
    Plan:
    E1: search {'query': 'q'}
    Evidence:
    E1 = https://q.example/quote
    """
    lines = [f"Goal: {goal}", "Plan:"]
    lines += [f"{s.id}: {s.tool} {s.args}" for s in plan.steps]
    lines.append("Evidence:")
    for s in plan.steps:
        lines.append(f"{s.id} = {run.evidence.get(s.id, '(no output: the step failed)')}")
    return "\n".join(lines)


async def solve(goal: str, plan: TypedPlan, run: LabRun) -> Answer:
    """ReWOO's solver: one model call from the goal, the plan and the evidence.

    Parameters
    ----------
    goal : str
    plan : TypedPlan
    run : LabRun
        The worker's run; its evidence is what the solver reads.

    Returns
    -------
    Answer
        The scripted solver answers from the comparison, citing its step; without one it
        says the evidence does not answer the goal.

    Examples
    --------
    >>> import asyncio
    >>> plan = asyncio.run(make_plan("Which supplier quotes least?"))
    >>> run = asyncio.run(work(plan, Toolbox({"search": 0, "fetch_page": 0, "compare": 0})))
    >>> asyncio.run(solve("Which supplier quotes least?", plan, run)).cites
    ['E7']
    """
    result = await agent("solver", Answer).run(solver_prompt(goal, plan, run))
    return result.output


@dataclass(frozen=True)
class ReWOOResult:
    """A whole ReWOO run.

    Attributes
    ----------
    plan : TypedPlan
    run : LabRun
        The worker's run (serial, in list order).
    answer : Answer
    model_calls : int
        Always 2: the planner and the solver.
    """

    plan: TypedPlan
    run: LabRun
    answer: Answer
    model_calls: int = 2


async def run_rewoo(goal: str, toolbox: Toolbox, *, script: str | None = None) -> ReWOOResult:
    """Planner, worker, solver: the ReWOO loop end to end.

    Examples
    --------
    >>> import asyncio
    >>> box = Toolbox({"search": 0, "fetch_page": 0, "compare": 0})
    >>> result = asyncio.run(run_rewoo("Which supplier quotes least?", box))
    >>> result.answer.text
    'Supplier Q is cheapest at 3.95 EUR per unit (P 4.20, Q 3.95, R 4.10).'
    >>> [s.id for s in result.plan.steps] == [c.step for c in box.calls]
    True
    """
    plan = await make_plan(goal, script=script)
    run = await work(plan, toolbox)
    answer = await solve(goal, plan, run)
    return ReWOOResult(plan, run, answer)
