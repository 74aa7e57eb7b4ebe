"""Checked steps and the trace of a real run (decompkit.lab.execute)."""

import asyncio

import pytest

from decompkit.lab.execute import LabRun, Recorder, durations, run_checked_step
from decompkit.lab.models import PLANS
from decompkit.lab.schema import TypedPlan, TypedStep
from decompkit.lab.tools import Toolbox
from decompkit.scheduler import Artifact, FailureReport

ZERO = {"search": 0, "fetch_page": 0, "compare": 0}
SEARCH = TypedStep(id="E1", tool="search", args={"query": "supplier Q quote"})
FETCH = TypedStep(id="E2", tool="fetch_page", args={"url": "#E1"}, depends_on=["E1"])


def run_steps(steps, box, kappa=1):
    rec = Recorder()

    async def go():
        for step in steps:
            await run_checked_step(step, box, rec, kappa=kappa)

    asyncio.run(go())
    return rec


def test_a_passing_step_records_its_artifact_and_feeds_the_next():
    rec = run_steps([SEARCH, FETCH], Toolbox(ZERO))
    assert rec.out["E1"] == Artifact("E1", 1, True, rec.out["E1"].time)
    assert rec.evidence["E2"].startswith("Supplier Q quotes 3.95")
    assert [e.kind for e in rec.events] == ["attempt", "verdict", "finish"] * 2
    assert rec.events[3].detail == "E2: fetch_page(url='https://q.example/quote')"


def test_a_rejected_artifact_is_retried_with_the_original_prompt_and_the_verdict():
    rec = run_steps([SEARCH, FETCH], Toolbox(ZERO, failures={"E2": ["junk"]}), kappa=2)
    assert rec.out["E2"].attempts == 2
    attempts = [e for e in rec.events if e.kind == "attempt" and e.node == "E2"]
    verdict = "the page is an error page (503), not content"
    assert attempts[1].detail == f"{attempts[0].detail} | verdict on the last attempt: {verdict}"


def test_kappa_rejections_give_a_rejected_report():
    box = Toolbox(ZERO, failures={"E2": ["junk"] * 3})
    rec = run_steps([SEARCH, FETCH], box, kappa=3)
    report = rec.out["E2"]
    assert isinstance(report, FailureReport)
    assert (report.kind, report.attempts) == ("rejected", 3)
    assert "E2" not in rec.evidence


def test_a_hard_failure_ends_the_step_at_once():
    box = Toolbox(ZERO, failures={"E2": ["error", "junk"]})
    rec = run_steps([SEARCH, FETCH], box, kappa=3)
    assert (rec.out["E2"].kind, rec.out["E2"].attempts) == ("hard", 1)
    assert [c.attempt for c in box.calls if c.step == "E2"] == [1]


def test_without_the_check_any_output_is_accepted():
    rec = Recorder()
    box = Toolbox(ZERO, failures={"E2": ["junk"]})

    async def go():
        await run_checked_step(SEARCH, box, rec, check=False)
        await run_checked_step(FETCH, box, rec, kappa=2, check=False)

    asyncio.run(go())
    assert rec.out["E2"].attempts == 1
    assert rec.evidence["E2"].startswith("503 ")
    assert [e.detail for e in rec.events if e.kind == "verdict"][-1] == "pass: not checked"


def test_the_cone_of_a_failure_is_blocked_and_never_called():
    compare = TypedStep(id="E3", tool="compare", args={"pages": ["#E2"]}, depends_on=["E2"])
    box = Toolbox(ZERO, failures={"E1": ["error"]})
    rec = run_steps([SEARCH, FETCH, compare], box)
    assert rec.blocked == {"E2", "E3"}
    assert [c.step for c in box.calls] == ["E1"]
    blocks = [e for e in rec.events if e.kind == "block"]
    assert [e.detail for e in blocks] == [
        "reads E1, which has no artifact",
        "reads E2, which has no artifact",
    ]


def test_an_executed_step_never_runs_again():
    box = Toolbox(ZERO)
    rec = run_steps([SEARCH], box)
    assert asyncio.run(run_checked_step(SEARCH, box, rec)) is None
    assert len(box.calls) == 1


def test_a_step_before_its_input_is_an_executor_bug():
    with pytest.raises(RuntimeError, match=r"step 'E2' started before \['E1'\] finished"):
        run_steps([FETCH], Toolbox(ZERO))


def test_kappa_must_be_at_least_one():
    with pytest.raises(ValueError, match="kappa must be an integer >= 1, got 0"):
        run_steps([SEARCH], Toolbox(ZERO), kappa=0)


def test_result_gives_lanes_like_workers():
    rec = Recorder()
    for node in ("a", "b"):
        rec.emit("attempt", node, 1)
    rec.emit("finish", "a", 1)
    rec.emit("attempt", "c", 1)  # takes the lane a freed
    rec.emit("finish", "b", 1)
    rec.emit("finish", "c", 1)
    run = rec.result({"a": (), "b": (), "c": ()})
    assert isinstance(run, LabRun)
    assert run.workers == 2
    assert [(e.node, e.worker) for e in run.events if e.kind == "attempt"] == [
        ("a", 0),
        ("b", 1),
        ("c", 0),
    ]
    assert run.graph == {"a": [], "b": [], "c": []}


def test_intervals_and_wall_time():
    rec = run_steps([SEARCH, FETCH], Toolbox({"search": 5, "fetch_page": 5, "compare": 0}))
    run = rec.result({"E1": (), "E2": ("E1",)})
    spans = run.intervals()
    assert spans["E1"][1] <= spans["E2"][0]
    assert spans["E2"][1] - spans["E1"][0] >= 10 - 0.2  # times are rounded to 0.1 ms
    assert run.wall_ms == run.makespan >= spans["E2"][1]


def test_restart_forgets_everything():
    rec = run_steps([SEARCH], Toolbox(ZERO))
    rec.restart()
    assert (rec.out, rec.events, rec.evidence, rec.round) == ({}, [], {}, 0)


def test_durations():
    plan = TypedPlan(goal="g", steps=PLANS["quotes"])
    assert durations(plan) == {"E1": 40, "E2": 40, "E3": 40, "E4": 60, "E5": 60, "E6": 60, "E7": 20}
    assert durations(plan, {"search": 1, "fetch_page": 2, "compare": 3})["E7"] == 3
    odd = TypedPlan(goal="g", steps=PLANS["unknown_tool"])
    with pytest.raises(ValueError, match="latency has no entry for the tool 'fetch_pages'"):
        durations(odd)
