"""Replanning (decompkit.lab.replan): retry inside the step, then new nodes, up to kappa_plan."""

import asyncio
import json

import pytest

import decompkit.lab.replan as replan_module
from decompkit.lab.execute import Recorder
from decompkit.lab.models import PLANS
from decompkit.lab.replan import (
    ReplanLimitError,
    apply_repair,
    replanner_prompt,
    run_with_replanning,
)
from decompkit.lab.schema import PlanRepair, TypedPlan, TypedStep, check_plan
from decompkit.lab.tools import TOOLS, Toolbox
from decompkit.plan import PlanError
from decompkit.scheduler import Artifact, FailureReport, RepairLimitError

ZERO = {"search": 0, "fetch_page": 0, "compare": 0}
FAST = {"search": 2, "fetch_page": 3, "compare": 1}


def quotes():
    return TypedPlan(goal="Which supplier quotes least?", steps=PLANS["quotes"])


def replanned(failures, **kwargs):
    box = Toolbox(FAST, failures=failures)
    return asyncio.run(run_with_replanning(quotes(), box, **kwargs)), box


def test_no_failure_means_one_round_and_no_repair():
    run, _ = replanned({})
    assert (run.rounds, run.repairs, run.gave_up) == (1, (), None)
    assert run.plan == quotes()


def test_retry_inside_the_step_then_new_nodes_from_the_replanner():
    run, box = replanned({"E2": ["junk"], "E5": ["junk", "junk"]}, kappa=2, kappa_plan=2)
    # The checked step's own retry repaired E2 ...
    assert run.out["E2"] == Artifact("E2", 2, True, run.out["E2"].time)
    # ... but not E5, which failed as a rejected result after kappa attempts.
    assert (run.out["E5"].kind, run.out["E5"].attempts) == ("rejected", 2)
    assert run.rounds == 2
    (repair,) = run.repairs
    assert [s.id for s in repair.steps] == ["E8", "E9"] and repair.repoint == {"E5": "E9"}
    assert run.plan.step("E7").depends_on == ["E4", "E9", "E6"]
    assert (
        run.evidence["E7"]
        == "Supplier Q is cheapest at 3.95 EUR per unit (P 4.20, Q 3.95, R 4.10)."
    )
    # Executed nodes are immutable and never re-run: E5 was called exactly kappa times.
    assert [s for s in run.plan.steps if s.id == "E5"] == [quotes().step("E5")]
    assert [c.step for c in box.calls].count("E5") == 2
    # The repaired plan passes the same check as the first one.
    assert check_plan(run.plan, TOOLS)["E9"] == ("E8",)


def test_the_trace_shows_each_round():
    run, _ = replanned({"E5": ["junk", "junk"]})
    rounds = {}
    for e in run.events:
        rounds.setdefault(e.round, []).append((e.kind, e.node))
    assert ("fail", "E5") in rounds[0] and ("block", "E7") in rounds[0]
    assert rounds[1][:2] == [("unroll", "E8"), ("unroll", "E9")]
    assert ("finish", "E7") in rounds[1]
    # Round 1 runs only the new steps and the blocked one.
    assert {n for k, n in rounds[1] if k == "attempt"} == {"E8", "E9", "E7"}
    unroll = run.events.of_kind("unroll")[1]
    assert unroll.detail == "new fetch_page step for the failed E5; E7 now reads it"
    times = [e.time for e in run.events]
    assert times == sorted(times)


def test_a_hard_failure_is_replanned_without_a_retry():
    run, box = replanned({"E5": ["error"]}, kappa=3)
    assert (run.out["E5"].kind, run.out["E5"].attempts) == ("hard", 1)
    assert run.rounds == 2 and "E7" in run.done


def test_the_cap_ends_a_run_that_keeps_failing():
    failures = {sid: ["junk", "junk"] for sid in ("E5", "E9", "E11")}
    with pytest.raises(ReplanLimitError, match="E11 failed after 2 replanning round") as caught:
        replanned(failures, kappa_plan=2)
    error = caught.value
    assert isinstance(error, RepairLimitError)
    assert (error.node, error.kappa_plan, error.result.rounds) == ("E11", 2, 3)
    assert [r.repoint for r in error.result.repairs] == [{"E5": "E9"}, {"E9": "E11"}]
    run, _ = replanned(failures, kappa_plan=2, on_limit="return")
    assert (run.gave_up, run.rounds) == ("E11", 3)
    assert run.blocked == {"E7"}


def test_kappa_plan_zero_never_asks_the_replanner(monkeypatch):
    async def forbidden(*args):
        raise AssertionError("the replanner was called")

    monkeypatch.setattr(replan_module, "ask_replanner", forbidden)
    run, _ = replanned({"E5": ["junk", "junk"]}, kappa_plan=0, on_limit="return")
    assert (run.gave_up, run.rounds, run.repairs) == ("E5", 1, ())


def test_a_bad_repair_is_caught_before_it_runs(monkeypatch):
    async def sloppy(plan, run, failed):
        new = TypedStep(id="E8", tool="fetch_pages", args={"url": "https://q.example/quote"})
        return PlanRepair(steps=[new], repoint={failed: "E8"})

    monkeypatch.setattr(replan_module, "ask_replanner", sloppy)
    box = Toolbox(FAST, failures={"E5": ["junk", "junk"]})
    with pytest.raises(PlanError, match="unknown tool 'fetch_pages' in step 'E8'"):
        asyncio.run(run_with_replanning(quotes(), box))
    assert "E8" not in [c.step for c in box.calls]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"kappa": 0}, "kappa must be an integer >= 1, got 0"),
        ({"kappa_plan": -1}, "kappa_plan must be an integer >= 0, got -1"),
        ({"on_limit": "ignore"}, "on_limit must be 'raise' or 'return', got 'ignore'"),
    ],
)
def test_run_with_replanning_rejects_bad_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        asyncio.run(run_with_replanning(quotes(), Toolbox(ZERO), **kwargs))


# --- the pieces --------------------------------------------------------------------------------


def failed_run(plan, failed="E5", pending=("E7",)):
    rec = Recorder()
    for step in plan.steps:
        if step.id == failed:
            rec.out[step.id] = FailureReport(step.id, "rejected", 2, "error page")
        elif step.id not in pending:
            rec.out[step.id] = Artifact(step.id, 1)
    return rec.result(check_plan(plan, TOOLS), plan)


def test_replanner_prompt_is_rebuilt_from_the_report():
    plan = quotes()
    request = json.loads(replanner_prompt(plan, failed_run(plan), "E5"))
    assert request["failed"] == {
        "id": "E5",
        "report": "E5 failed (rejected) after 2 attempt(s): error page",
    }
    assert request["next_id"] == 8
    assert request["done"] == ["E1", "E2", "E3", "E4", "E6"]
    assert [s["id"] for s in request["steps"]] == [f"E{k}" for k in range(1, 8)]
    with pytest.raises(ValueError, match="failed must name a step with a failure report, got 'E4'"):
        replanner_prompt(plan, failed_run(plan), "E4")


def test_apply_repair_repoints_only_unexecuted_readers():
    plan = quotes()
    run = failed_run(plan)
    fix = PlanRepair(
        steps=[TypedStep(id="E8", tool="fetch_page", args={"url": "x"})], repoint={"E5": "E8"}
    )
    new = apply_repair(plan, fix, run)
    assert new.step("E7").args == {"pages": ["#E4", "#E8", "#E6"]}
    assert new.step("E7").depends_on == ["E4", "E8", "E6"]
    assert new.steps[:6] == plan.steps[:6]
    assert new.steps[-1].id == "E8"
    assert plan.step("E7").depends_on == ["E4", "E5", "E6"]  # the input is not modified


def test_apply_repair_keeps_similar_ids_apart():
    extra = [
        {"id": "E50", "tool": "search", "args": {"query": "supplier R"}, "depends_on": []},
        {
            "id": "E55",
            "tool": "search",
            "args": {"query": "#E5 then #E50"},
            "depends_on": ["E5", "E50"],
        },
    ]
    plan = TypedPlan(goal="g", steps=PLANS["quotes"] + extra)
    run = failed_run(plan, pending=("E7", "E55"))
    fix = PlanRepair(
        steps=[TypedStep(id="E56", tool="fetch_page", args={"url": "x"})], repoint={"E5": "E56"}
    )
    new = apply_repair(plan, fix, run)
    assert new.step("E55").args == {"query": "#E56 then #E50"}
    assert new.step("E55").depends_on == ["E56", "E50"]


@pytest.mark.parametrize(
    ("repair", "message"),
    [
        (
            PlanRepair(steps=[TypedStep(id="E4", tool="search", args={})], repoint={}),
            "new step id 'E4' is already used",
        ),
        (
            PlanRepair(steps=[TypedStep(id="x8", tool="search", args={})], repoint={}),
            "new step id must look like 'E<k>', got 'x8'",
        ),
        (
            PlanRepair(steps=[TypedStep(id="E8", tool="search", args={})], repoint={"E4": "E8"}),
            "repoint must map a failed step, got 'E4'",
        ),
        (
            PlanRepair(steps=[TypedStep(id="E8", tool="search", args={})], repoint={"E5": "E9"}),
            "repoint must point 'E5' to a new step, got 'E9'",
        ),
    ],
)
def test_apply_repair_rejects_bad_repairs(repair, message):
    plan = quotes()
    with pytest.raises(ValueError, match=message):
        apply_repair(plan, repair, failed_run(plan))


def test_run_with_replanning_needs_a_plan_and_a_toolbox():
    with pytest.raises(ValueError, match="plan must be a TypedPlan, got list"):
        asyncio.run(run_with_replanning(PLANS["quotes"], Toolbox(ZERO)))
    with pytest.raises(ValueError, match="toolbox must be a Toolbox, got NoneType"):
        asyncio.run(run_with_replanning(quotes(), None))
