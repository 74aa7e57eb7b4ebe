"""ReWOO (decompkit.lab.rewoo): two model calls, the worker runs the list in order."""

import asyncio

import pytest

from decompkit.dag import critical_path
from decompkit.lab.execute import durations
from decompkit.lab.models import PLANS
from decompkit.lab.rewoo import make_plan, run_rewoo, solve, solver_prompt, work
from decompkit.lab.schema import TypedPlan, TypedStep, check_plan
from decompkit.lab.tools import TOOLS, Toolbox
from decompkit.plan import PlanError

GOAL = "Which of the suppliers P, Q and R quotes least for 500 units?"
ZERO = {"search": 0, "fetch_page": 0, "compare": 0}


def test_rewoo_end_to_end():
    box = Toolbox()
    result = asyncio.run(run_rewoo(GOAL, box))
    assert result.answer.text == (
        "Supplier Q is cheapest at 3.95 EUR per unit (P 4.20, Q 3.95, R 4.10)."
    )
    assert result.answer.cites == ["E7"]
    assert result.model_calls == 2
    assert result.plan.goal == GOAL
    assert sorted(result.run.done) == [f"E{k}" for k in range(1, 8)]
    # The worker called the tools in the plan's list order, each once.
    assert [c.step for c in box.calls] == [s.id for s in result.plan.steps]


def test_list_order_runs_independent_steps_one_after_the_other():
    plan = TypedPlan(goal=GOAL, steps=PLANS["quotes"])
    run = asyncio.run(work(plan, Toolbox()))
    spans = run.intervals()
    ids = [s.id for s in plan.steps]
    for before, after in zip(ids, ids[1:], strict=False):
        assert spans[before][1] <= spans[after][0]
    assert run.workers == 1
    cp = critical_path(check_plan(plan, TOOLS), durations(plan))
    assert (cp.serial_time, cp.makespan) == (320, 120)
    # Each step sleeps its latency, one at a time: the sum is a lower bound of the wall time
    # (0.99 for the 0.1 ms rounding of the recorded times).
    assert run.wall_ms >= 0.99 * cp.serial_time


@pytest.mark.parametrize("script", ["unknown_tool", "cycle", "contradiction", "broken"])
def test_a_wrong_plan_stops_the_worker_before_any_call(script):
    box = Toolbox(ZERO)
    plan = asyncio.run(make_plan(GOAL, script=script))
    with pytest.raises(PlanError):
        asyncio.run(work(plan, box))
    assert box.calls == []


def test_list_order_must_be_a_valid_order():
    steps = [
        TypedStep(id="E1", tool="fetch_page", args={"url": "#E2"}, depends_on=["E2"]),
        TypedStep(id="E2", tool="search", args={"query": "supplier Q"}),
    ]
    box = Toolbox(ZERO)
    with pytest.raises(ValueError, match="ReWOO runs the steps in the order written"):
        asyncio.run(work(TypedPlan(goal="g", steps=steps), box))
    assert box.calls == []


def test_without_a_step_check_junk_becomes_evidence_and_the_answer_is_silently_wrong():
    plan = TypedPlan(goal=GOAL, steps=PLANS["quotes"])
    run = asyncio.run(work(plan, Toolbox(ZERO, failures={"E5": ["junk"]})))
    assert run.failed == frozenset() and run.blocked == frozenset()
    assert run.evidence["E5"].startswith("503 Service Unavailable")
    answer = asyncio.run(solve(GOAL, plan, run))
    # Q's quote never reached the comparison, and nothing noticed.
    assert answer.text == "Supplier R is cheapest at 4.10 EUR per unit (P 4.20, R 4.10)."


def test_a_hard_failure_blocks_the_rest_and_the_solver_says_so():
    plan = TypedPlan(goal=GOAL, steps=PLANS["quotes"])
    box = Toolbox(ZERO, failures={"E5": ["error"]})
    run = asyncio.run(work(plan, box))
    assert run.failed == {"E5"} and run.blocked == {"E7"}
    assert run.out["E5"].attempts == 1  # ReWOO does not retry
    answer = asyncio.run(solve(GOAL, plan, run))
    assert answer.text == "The evidence does not answer the goal." and answer.cites == []
    assert "E5 = (no output: the step failed)" in solver_prompt(GOAL, plan, run)


def test_solver_prompt_lists_goal_plan_and_evidence():
    plan = TypedPlan(goal=GOAL, steps=PLANS["quotes"])
    run = asyncio.run(work(plan, Toolbox(ZERO)))
    text = solver_prompt(GOAL, plan, run)
    assert text.startswith(f"Goal: {GOAL}\nPlan:\nE1: search")
    assert "E4 = Supplier P quotes 4.20 EUR per unit for 500 units." in text


@pytest.mark.parametrize("goal", ["", "   ", None])
def test_make_plan_needs_a_goal(goal):
    with pytest.raises(ValueError, match="goal must be a non-empty str, got"):
        asyncio.run(make_plan(goal))


def test_work_rejects_wrong_types():
    with pytest.raises(ValueError, match="plan must be a TypedPlan, got list"):
        asyncio.run(work(PLANS["quotes"], Toolbox(ZERO)))
    with pytest.raises(ValueError, match="toolbox must be a Toolbox, got dict"):
        asyncio.run(work(TypedPlan(goal="g", steps=PLANS["quotes"]), ZERO))
