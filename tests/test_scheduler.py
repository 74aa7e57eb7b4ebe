"""decompkit.scheduler: the lecture's traces worked out by hand, repair, properties, bad input."""

import sys

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from decompkit import scheduler as sc
from decompkit.dag import CycleError, ancestors, descendants, list_schedule, ready_set
from decompkit.examples import coding_task, migration

# The lecture's worked examples (section 4), from the package's one source of example data.
A = coding_task().graph
A_TIME = coding_task().durations
B = migration().graph
B_TIME = migration().durations
B_LOCK = migration().resources  # the three patches share the "tenant" lock


def starts(result, rnd=None):
    """{node: time of its dispatch} (the last dispatch, if a node ran twice)."""
    return {
        e.node: e.time
        for e in result.events
        if e.kind == "dispatch" and (rnd is None or e.round == rnd)
    }


def ends(result):
    return {e.node: e.time for e in result.events if e.kind in ("finish", "fail")}


# --- example A: the fixed traces -----------------------------------------------------------


def test_example_a_two_workers_no_failure():
    result = sc.schedule(A, A_TIME, workers=2)
    assert result.makespan == 10
    assert starts(result) == {
        "read_spec": 0,
        "fetch_data": 1,
        "write_tests": 1,
        "write_code": 4,
        "run_tests": 8,
        "report": 9,
    }
    assert result.done == frozenset(A)
    assert result.blocked == result.cancelled == frozenset()
    workers = {e.node: e.worker for e in result.events if e.kind == "dispatch"}
    assert workers == {
        "read_spec": 0,
        "fetch_data": 0,
        "write_tests": 1,
        "write_code": 0,
        "run_tests": 0,
        "report": 0,
    }
    assert all(isinstance(r, sc.Artifact) and r.attempts == 1 for r in result.out.values())


def test_example_a_unlimited_workers_equals_the_critical_path_and_one_worker_the_serial_sum():
    assert sc.schedule(A, A_TIME, workers=6).makespan == 10
    assert sc.schedule(A, A_TIME, workers=1).makespan == 12


@pytest.mark.parametrize("onfail", ["stop", "drain"])
def test_run_tests_fails_blocks_report(onfail):
    result = sc.schedule(
        A, A_TIME, workers=2, onfail=onfail, step=sc.scripted({"run_tests": ["fail"]})
    )
    # Nothing else runs at t = 9, so stop and drain agree: nothing cancelled, report blocked.
    assert result.makespan == 9
    assert result.done == {"read_spec", "fetch_data", "write_tests", "write_code"}
    assert result.failed == {"run_tests"}
    assert result.blocked == {"report"}
    assert result.cancelled == frozenset()
    report = result.out["run_tests"]
    assert (report.kind, report.attempts, report.time) == ("hard", 1, 9)
    assert "report" not in result.out


def test_write_tests_fails_under_stop_cancels_fetch_data():
    result = sc.schedule(
        A, A_TIME, workers=2, onfail="stop", step=sc.scripted({"write_tests": ["fail"]})
    )
    assert result.makespan == 3
    assert result.done == {"read_spec"}
    assert result.failed == {"write_tests"}
    assert result.blocked == {"run_tests", "report"}
    assert result.cancelled == {"fetch_data"}
    assert "fetch_data" not in result.out  # its result is lost; it is not done
    (cancel,) = result.events.of_kind("cancel")
    assert (cancel.time, cancel.node, cancel.worker, cancel.attempt) == (3, "fetch_data", 0, 1)
    assert result.events[-1] == cancel  # stop returns at once


def test_write_tests_fails_under_drain_finishes_what_is_still_ready():
    result = sc.schedule(
        A, A_TIME, workers=2, onfail="drain", step=sc.scripted({"write_tests": ["fail"]})
    )
    # fetch_data finishes at 4, write_code runs 4..8; run_tests and report stay blocked.
    assert result.makespan == 8
    assert result.done == {"read_spec", "fetch_data", "write_code"}
    assert result.blocked == {"run_tests", "report"}
    assert result.cancelled == frozenset()
    assert ends(result) == {"read_spec": 1, "write_tests": 3, "fetch_data": 4, "write_code": 8}


def test_a_cancelled_node_runs_again_in_the_next_call_and_done_nodes_do_not():
    step = sc.scripted({"write_tests": ["fail"]})
    first = sc.schedule(A, A_TIME, workers=2, step=step)
    repair = sc.unroll_failed_check(A, first.out, "write_tests", "write_tests", 1, durations=A_TIME)
    second = sc.schedule(repair.graph, repair.durations, workers=2, out=first.out, step=step)
    assert "read_spec" not in starts(second)  # done before: not rerun
    assert starts(second)["fetch_data"] == 0  # cancelled before: runs again
    assert second.failed == {"write_tests"}  # the old failure keeps its report
    assert second.done == set(repair.graph) - {"write_tests"}
    assert second.blocked == frozenset()
    assert first.out["write_tests"] is second.out["write_tests"]


def test_failures_in_out_block_their_cone_at_the_start():
    out = {
        "read_spec": sc.Artifact("read_spec", 1),
        "fetch_data": sc.FailureReport("fetch_data", "rejected", 2, "schema mismatch"),
    }
    result = sc.schedule(A, A_TIME, workers=2, out=out, onfail="drain")
    assert result.blocked == {"write_code", "run_tests", "report"}
    assert [(e.time, e.kind, e.node) for e in result.events[:3]] == [
        (0, "block", "write_code"),
        (0, "block", "run_tests"),
        (0, "block", "report"),
    ]
    assert result.done == {"read_spec", "write_tests"}
    assert out == {
        "read_spec": sc.Artifact("read_spec", 1),
        "fetch_data": sc.FailureReport("fetch_data", "rejected", 2, "schema mismatch"),
    }  # the caller's mapping is not modified


# --- the checked step: retries inside a node ------------------------------------------------


def test_write_code_rejected_once_then_accepted():
    step = sc.scripted({"write_code": [("reject", "test_empty_input fails"), "pass"]}, kappa=2)
    result = sc.schedule(A, A_TIME, workers=2, step=step)
    assert result.makespan == 14  # two attempts of 4 units, then run_tests and report
    lines = [
        (e.time, e.kind, e.attempt, e.detail)
        for e in result.events
        if e.node == "write_code" and e.kind in ("attempt", "verdict", "finish")
    ]
    original = "do write_code with fetch_data"
    assert lines == [
        (4, "attempt", 1, original),
        (8, "verdict", 1, "reject: test_empty_input fails"),
        (8, "attempt", 2, original + " | verdict on the last attempt: test_empty_input fails"),
        (12, "verdict", 2, "pass: accepted"),
        (12, "finish", 2, "artifact of write_code after 2 attempt(s)"),
    ]
    assert result.out["write_code"].attempts == 2


def test_retry_prompt_carries_only_the_latest_verdict():
    step = sc.scripted({"x": [("reject", "first"), ("reject", "second"), "pass"]}, kappa=3)
    result = sc.schedule({"x": []}, {"x": 1}, workers=1, step=step)
    prompts = [e.detail for e in result.events.of_kind("attempt")]
    assert prompts == [
        "do x",
        "do x | verdict on the last attempt: first",
        "do x | verdict on the last attempt: second",
    ]


def test_rejected_kappa_times_is_a_rejected_result_not_a_hard_failure():
    step = sc.scripted({"write_code": ["reject", "reject"]}, kappa=2)
    result = sc.schedule(A, A_TIME, workers=2, step=step)
    report = result.out["write_code"]
    assert (report.kind, report.attempts, report.time) == ("rejected", 2, 12)
    assert result.blocked == {"run_tests", "report"}
    assert "(hard failure)" not in str(report) and "(rejected)" in str(report)


def test_a_hard_failure_ends_the_step_without_retry():
    step = sc.scripted({"write_code": ["crash", "pass"]}, kappa=3)
    result = sc.schedule(A, A_TIME, workers=2, step=step)
    assert result.out["write_code"].kind == "hard"
    assert result.out["write_code"].attempts == 1


def test_undetected_wrong_artifact_is_accepted_and_marked():
    result = sc.schedule({"x": []}, {"x": 2}, workers=1, step=sc.scripted({"x": ["wrong"]}))
    artifact = result.out["x"]
    assert isinstance(artifact, sc.Artifact) and not artifact.correct
    assert "wrong" in str(artifact)


def test_seeded_step_matches_the_one_retry_formula():
    # kappa = 2, crash = phi = 0: accepted correct with p + (1-p) d p, rejected twice with
    # ((1-p) d)^2. 4000 runs: the standard error of a share near 0.7 is 0.0072, so 0.03 is
    # more than four of them.
    p, d, n = 0.6, 0.5, 4000
    step = sc.seeded(p, d, kappa=2, seed=20261129)
    kinds = []
    for _ in range(n):
        r = sc.schedule({"x": []}, {"x": 1}, workers=1, step=step).out["x"]
        kinds.append(
            "rejected" if isinstance(r, sc.FailureReport) else ("ok" if r.correct else "wrong")
        )
    kinds = np.array(kinds)
    assert abs(np.mean(kinds == "ok") - (p + (1 - p) * d * p)) < 0.03
    assert abs(np.mean(kinds == "rejected") - ((1 - p) * d) ** 2) < 0.03
    assert abs(np.mean(kinds == "wrong") - (1 - p) * (1 - d) * (1 + (1 - p) * d)) < 0.03


def test_seeded_extremes():
    assert (
        sc.schedule({"x": []}, {"x": 1}, workers=1, step=sc.seeded(1, 0, seed=1)).out["x"].correct
    )
    crash = sc.schedule({"x": []}, {"x": 1}, workers=1, step=sc.seeded(1, 1, seed=1, crash=1))
    assert crash.out["x"].kind == "hard"
    alarm = sc.schedule(
        {"x": []}, {"x": 1}, workers=1, step=sc.seeded(1, 1, kappa=3, seed=1, phi=1)
    )
    assert (alarm.out["x"].kind, alarm.out["x"].attempts) == ("rejected", 3)


def test_seeded_accepts_a_generator_and_continues_it():
    rng = np.random.default_rng(5)
    step = sc.seeded(0.5, 0.5, seed=rng)
    first = [step.attempt("x", "", 1) for _ in range(20)]
    again = sc.seeded(0.5, 0.5, seed=np.random.default_rng(5))
    assert [again.attempt("x", "", 1) for _ in range(20)] == first


# --- repair by unrolling ---------------------------------------------------------------------


def test_unroll_after_run_tests_fails():
    first = sc.schedule(A, A_TIME, workers=2, step=sc.scripted({"run_tests": ["fail"]}))
    repair = sc.unroll_failed_check(A, first.out, "run_tests", "write_code", 2, durations=A_TIME)
    g = repair.graph
    assert repair.copies == {"write_code": "write_code'", "run_tests": "run_tests'"}
    assert g["write_code'"] == ("fetch_data",)  # same inputs as write_code, no edge from run_tests
    assert set(g["run_tests'"]) == {"write_code'", "write_tests"}
    assert g["report"] == ("run_tests'",)
    assert repair.repointed == {"report": (("run_tests",), ("run_tests'",))}
    for node in first.out:  # executed nodes keep their edges
        assert g[node] == tuple(A[node])
    assert "failure report: run_tests failed (hard failure)" in repair.context["write_code'"]
    assert repair.context["run_tests'"] == "copy of run_tests"
    assert repair.durations["write_code'"] == 4 and repair.durations["run_tests'"] == 1
    assert A["report"] == ["run_tests"]  # the input graph is untouched


def test_repair_round_ends_with_report_done():
    result = sc.run_with_repair(
        A,
        A_TIME,
        workers=2,
        step=sc.scripted({"run_tests": ["fail"]}),
        faulty={"run_tests": "write_code"},
    )
    assert result.rounds == 2
    assert result.makespan == 15
    assert "report" in result.done
    assert result.failed == {"run_tests"}  # the old node keeps its report
    assert result.blocked == frozenset()
    assert starts(result, rnd=1) == {"write_code'": 9, "run_tests'": 13, "report": 14}
    unrolls = result.events.of_kind("unroll")
    assert [(e.time, e.round, e.node) for e in unrolls] == [
        (9, 1, "write_code'"),
        (9, 1, "run_tests'"),
    ]
    (prompt,) = [e.detail for e in result.events.of_kind("attempt") if e.node == "write_code'"]
    assert prompt.startswith("do write_code' with fetch_data; repairs write_code; failure report:")
    assert "run_tests failed" in prompt
    # The clock never runs backwards across rounds.
    times = [e.time for e in result.events]
    assert times == sorted(times)
    assert {e.round for e in result.events} == {0, 1}


def test_a_second_red_run_gives_double_primes():
    step = sc.scripted({"run_tests": ["fail"], "run_tests'": ["fail"]})
    result = sc.run_with_repair(A, A_TIME, workers=2, step=step, faulty={"run_tests": "write_code"})
    assert result.rounds == 3
    assert result.makespan == 20
    assert result.graph["report"] == ["run_tests''"]
    assert set(result.graph["run_tests''"]) == {"write_code''", "write_tests"}
    assert result.graph["write_code''"] == ["fetch_data"]
    assert result.failed == {"run_tests", "run_tests'"}
    (prompt,) = [e.detail for e in result.events.of_kind("attempt") if e.node == "write_code''"]
    # Only the latest failure report enters the new prompt.
    assert "run_tests' failed" in prompt and "run_tests failed" not in prompt
    assert [r.copies for r in result.repairs] == [
        {"write_code": "write_code'", "run_tests": "run_tests'"},
        {"write_code'": "write_code''", "run_tests'": "run_tests''"},
    ]


def test_kappa_plan_exhausted():
    step = sc.scripted({"run_tests": ["fail"], "run_tests'": ["fail"]})
    with pytest.raises(sc.RepairLimitError, match="kappa_plan=1 allows no further copy") as info:
        sc.run_with_repair(
            A, A_TIME, workers=2, step=step, faulty={"run_tests": "write_code"}, kappa_plan=1
        )
    error = info.value
    assert isinstance(error, ValueError)
    assert error.node == "run_tests'" and error.kappa_plan == 1
    assert error.result.rounds == 2 and error.result.blocked == {"report"}
    with pytest.raises(sc.RepairLimitError, match="run_tests failed after 0 repair"):
        first = sc.schedule(A, A_TIME, workers=2, step=sc.scripted({"run_tests": ["fail"]}))
        sc.unroll_failed_check(A, first.out, "run_tests", "write_code", 0, durations=A_TIME)


def test_diagnosis_write_tests():
    first = sc.schedule(A, A_TIME, workers=2, step=sc.scripted({"run_tests": ["fail"]}))
    repair = sc.unroll_failed_check(A, first.out, "run_tests", "write_tests", 2, durations=A_TIME)
    assert repair.copies == {"write_tests": "write_tests'", "run_tests": "run_tests'"}
    assert set(repair.graph["run_tests'"]) == {"write_code", "write_tests'"}
    assert "failure report" in repair.context["write_tests'"]
    second = sc.schedule(
        repair.graph, repair.durations, workers=2, out=first.out, context=repair.context
    )
    assert starts(second) == {"write_tests'": 0, "run_tests'": 2, "report": 3}


def test_diagnosis_fetch_data_copies_everything_downstream_up_to_the_failure():
    result = sc.run_with_repair(
        A,
        A_TIME,
        workers=2,
        step=sc.scripted({"run_tests": ["fail"]}),
        faulty={"run_tests": "fetch_data"},
    )
    (repair,) = result.repairs
    assert repair.copies == {
        "fetch_data": "fetch_data'",
        "write_code": "write_code'",
        "run_tests": "run_tests'",
    }
    assert repair.graph["fetch_data'"] == ("read_spec",)
    assert repair.graph["write_code'"] == ("fetch_data'",)
    assert "write_tests'" not in repair.graph  # not on a path from fetch_data to run_tests
    assert starts(result, rnd=1) == {
        "fetch_data'": 9,
        "write_code'": 12,
        "run_tests'": 16,
        "report": 17,
    }
    assert result.makespan == 18


def test_faulty_may_be_a_callable_and_defaults_to_the_failed_node():
    step = sc.scripted({"run_tests": ["fail"]})
    default = sc.run_with_repair(A, A_TIME, workers=2, step=step)
    assert default.repairs[0].copies == {"run_tests": "run_tests'"}
    assert default.makespan == 11  # run_tests' 9..10, report 10..11
    seen = []

    def diagnose(failed, graph):
        seen.append(failed)
        return "write_tests"

    called = sc.run_with_repair(
        A, A_TIME, workers=2, step=sc.scripted({"run_tests": ["fail"]}), faulty=diagnose
    )
    assert seen == ["run_tests"]
    assert "write_tests'" in called.graph


def test_repair_under_stop_reruns_the_cancelled_node():
    step = sc.scripted({"write_tests": ["fail"]})
    result = sc.run_with_repair(A, A_TIME, workers=2, step=step, onfail="stop")
    assert result.rounds == 2
    assert starts(result, rnd=1)["fetch_data"] == 3
    assert result.done == set(result.graph) - {"write_tests"}
    assert result.cancelled == frozenset()  # final state: the cancelled node ran again


def test_unroll_works_for_nodes_that_are_not_strings():
    a, b = object(), object()
    g = {a: [], b: [a]}
    out = {a: sc.Artifact(a, 1), b: sc.FailureReport(b, "hard", 1, "boom")}
    repair = sc.unroll_failed_check(g, out, b, a, 2, durations={a: 1, b: 1})
    assert repair.copies == {a: sc.Primed(a), b: sc.Primed(b)}
    assert repair.graph[sc.Primed(b)] == (sc.Primed(a),)
    again = {**out, sc.Primed(b): sc.FailureReport(sc.Primed(b), "hard", 1, "boom")}
    twice = sc.unroll_failed_check(
        repair.graph, again, sc.Primed(b), sc.Primed(a), 2, durations=repair.durations
    )
    assert sc.Primed(sc.Primed(b)) in twice.graph
    assert repr(sc.Primed(sc.Primed("x"))) == "'x'''"
    with pytest.raises(sc.RepairLimitError):
        sc.unroll_failed_check(
            repair.graph, again, sc.Primed(b), sc.Primed(a), 1, durations=repair.durations
        )


def level(node):
    """How many times ``node`` is a copy, read off its name (independently of the module)."""
    if isinstance(node, str):
        return len(node) - len(node.rstrip("'"))
    k = 0
    while isinstance(node, sc.Primed):
        node, k = node.original, k + 1
    return k


def test_kappa_plan_caps_every_copy_not_only_the_failed_node():
    # report fails after one repair; blamed on run_tests, whose live copy run_tests' is
    # already one copy deep: a second copy would break kappa_plan=1.
    step = sc.scripted({"run_tests": ["fail"], "report": ["fail"]})
    faulty = {"run_tests": "write_code", "report": "run_tests"}
    with pytest.raises(sc.RepairLimitError, match=r"kappa_plan=1 allows no further copy") as info:
        sc.run_with_repair(A, A_TIME, workers=2, step=step, faulty=faulty, kappa_plan=1)
    error = info.value
    assert (error.node, error.capped, error.kappa_plan) == ("report", "run_tests'", 1)
    assert "report failed and its repair would copy run_tests' again" in str(error)
    assert error.result.rounds == 2
    assert max(map(level, error.result.graph)) == 1
    step = sc.scripted({"run_tests": ["fail"], "report": ["fail"]})
    result = sc.run_with_repair(A, A_TIME, workers=2, step=step, faulty=faulty, kappa_plan=2)
    assert max(map(level, result.graph)) == 2 and "report'" in result.done
    assert result.repairs[1].copies == {"run_tests'": "run_tests''", "report": "report'"}


def test_repair_limit_error_pickles_with_its_data():
    import pickle

    error = sc.RepairLimitError("report", 1, capped="run_tests'")
    copy = pickle.loads(pickle.dumps(error))
    assert isinstance(copy, sc.RepairLimitError) and str(copy) == str(error)
    assert (copy.node, copy.kappa_plan, copy.capped, copy.result) == (
        "report",
        1,
        "run_tests'",
        None,
    )


def test_two_failures_blamed_on_the_same_node_share_one_copy():
    # The lecture's case: two red test runs, both blamed on the code. One new version of the
    # code serves both new test runs, and its prompt carries both failure reports.
    graph = {"code": [], "t1": ["code"], "t2": ["code"], "report": ["t1", "t2"]}
    durations = dict.fromkeys(graph, 1)
    step = sc.scripted({"t1": ["fail"], "t2": ["fail"]})
    result = sc.run_with_repair(
        graph, durations, workers=2, step=step, faulty={"t1": "code", "t2": "code"}
    )
    (repair,) = result.repairs
    assert repair.copies == {"code": "code'", "t1": "t1'", "t2": "t2'"}
    assert result.graph["t1'"] == result.graph["t2'"] == ["code'"]
    assert result.graph["report"] == ["t1'", "t2'"]
    assert result.rounds == 2 and result.done == set(result.graph) - {"t1", "t2"}
    context = repair.context["code'"]
    assert context.startswith("repairs code; failure report: t1 failed")
    assert "; failure report: t2 failed" in context
    assert [e.node for e in result.events.of_kind("dispatch") if e.round == 1].count("code'") == 1


def test_copies_of_one_repair_round_read_each_other():
    # t1 is blamed on the code, t2 on itself: t2's copy still reads the new code, since the
    # old code is diagnosed wrong in the same round.
    graph = {"code": [], "t1": ["code"], "t2": ["code"], "report": ["t1", "t2"]}
    step = sc.scripted({"t1": ["fail"], "t2": ["fail"]})
    result = sc.run_with_repair(
        graph, dict.fromkeys(graph, 1), workers=2, step=step, faulty={"t1": "code"}
    )
    (repair,) = result.repairs
    assert repair.graph["t2'"] == ("code'",)
    assert repair.context["t2'"].startswith("repairs t2; failure report: t2 failed")
    assert repair.context["t1'"] == "copy of t1"


def spans(result):
    """{node: (start, end)} of each node's last dispatch, from the trace."""
    start, out = {}, {}
    for e in result.events:
        if e.kind == "dispatch":
            start[e.node] = e.time
        elif e.kind in ("finish", "fail"):
            out[e.node] = (start[e.node], e.time)
    return out


def test_a_copy_needs_the_resource_keys_of_its_original():
    # Example B: the three patches share one lock. E fails first and the round stops, so
    # its copy is ready together with P and D: a repaired patch still mutates the tenant.
    step = sc.scripted({"E": ["fail"]})
    result = sc.run_with_repair(B, B_TIME, workers=3, step=step, resources=B_LOCK, onfail="stop")
    assert starts(result, rnd=1)["E'"] == 12
    times = spans(result)
    for other in ("P", "D"):
        (s1, e1), (s2, e2) = times["E'"], times[other]
        assert e1 <= s2 or e2 <= s1, other
    assert "V" in result.done


# --- example B ------------------------------------------------------------------------------


def test_example_b_three_workers():
    result = sc.schedule(B, B_TIME, workers=3)
    assert result.makespan == 18  # the critical path F, S, E, A, Y, V
    assert starts(result) == {
        "F": 0,
        "R": 0,
        "S": 2,
        "P": 4,
        "E": 4,
        "D": 4,
        "A": 12,
        "Y": 13,
        "V": 15,
    }
    assert sc.schedule(B, B_TIME, workers=1).makespan == 30  # the serial list


def test_example_b_with_one_resource_key_serialises_the_patches():
    # 29 slots, slower than the serial list of 30 minus only one slot.
    critical = sc.schedule(B, B_TIME, workers=3, resources=B_LOCK)
    assert critical.makespan == 29
    # Critical-first takes the longest patch E first; input order takes P first.
    assert starts(critical) == {
        "F": 0,
        "R": 0,
        "S": 2,
        "E": 4,
        "P": 12,
        "D": 18,
        "A": 23,
        "Y": 24,
        "V": 26,
    }
    by_input = sc.schedule(B, B_TIME, workers=3, resources=B_LOCK, priority="input")
    assert by_input.makespan == 29
    assert starts(by_input) == {
        "F": 0,
        "R": 0,
        "S": 2,
        "P": 4,
        "E": 10,
        "D": 18,
        "A": 23,
        "Y": 24,
        "V": 26,
    }


@pytest.mark.parametrize("priority", ["critical", "input"])
@pytest.mark.parametrize(
    ("graph", "durations", "resources"), [(A, A_TIME, None), (B, B_TIME, None), (B, B_TIME, B_LOCK)]
)
@pytest.mark.parametrize("workers", [1, 2, 3])
def test_worked_examples_agree_with_list_schedule(graph, durations, resources, workers, priority):
    ours = sc.schedule(graph, durations, workers=workers, priority=priority, resources=resources)
    theirs = list_schedule(graph, durations, workers, priority=priority, resources=resources)
    assert ours.makespan == theirs.makespan
    assert starts(ours) == theirs.start
    assert {e.node: e.worker for e in ours.events.of_kind("dispatch")} == theirs.worker


def test_a_callable_priority_runs_the_highest_first():
    result = sc.schedule(
        {"a": [], "b": [], "c": []},
        dict.fromkeys("abc", 1),
        workers=1,
        priority={"a": 1, "b": 3, "c": 2}.get,
    )
    assert [e.node for e in result.events.of_kind("dispatch")] == ["b", "c", "a"]


def test_public_names_live_in_the_package_modules():
    from decompkit.scheduler import loop, repair, steps, trace

    modules = (loop, repair, steps, trace)
    for name in sc.__all__:
        homes = [m for m in modules if name in m.__all__]
        assert len(homes) == 1 and getattr(homes[0], name) is getattr(sc, name), name
    assert sc.RepairLimitError.__module__ == "decompkit.scheduler"


# --- the trace as a table ---------------------------------------------------------------------


def test_trace_table_and_text():
    result = sc.schedule({"x": []}, {"x": 2}, workers=1)
    assert result.events.table() == [
        {
            "time": 0,
            "round": 0,
            "kind": "dispatch",
            "node": "x",
            "worker": 0,
            "attempt": None,
            "detail": "",
        },
        {
            "time": 0,
            "round": 0,
            "kind": "attempt",
            "node": "x",
            "worker": 0,
            "attempt": 1,
            "detail": "do x",
        },
        {
            "time": 2,
            "round": 0,
            "kind": "verdict",
            "node": "x",
            "worker": 0,
            "attempt": 1,
            "detail": "pass: accepted",
        },
        {
            "time": 2,
            "round": 0,
            "kind": "finish",
            "node": "x",
            "worker": 0,
            "attempt": 1,
            "detail": "artifact of x after 1 attempt(s)",
        },
    ]
    text = result.events.to_text(width=12).splitlines()
    assert text[0].split() == ["time", "round", "kind", "node", "worker", "attempt", "detail"]
    assert text[2].split() == ["0", "0", "dispatch", "x", "w0"]
    assert text[-1].split() == [
        "2",
        "0",
        "finish",
        "x",
        "w0",
        "1",
        "artifact...",
    ]


def test_empty_graph():
    result = sc.schedule({}, {}, workers=1)
    assert (result.makespan, len(result.events), result.out) == (0, 0, {})


def test_zero_durations_are_allowed():
    result = sc.schedule({"b": ["a"]}, {"a": 0, "b": 0}, workers=1)
    assert result.makespan == 0 and result.done == {"a", "b"}


# --- bad input --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        (
            {"graph": {"a": ["b"], "b": ["a"]}, "durations": {"a": 1, "b": 1}},
            CycleError,
            "graph has a cycle",
        ),
        ({"graph": {"a": "b"}}, ValueError, "not the str 'b'"),
        (
            {"durations": {"read_spec": 1}},
            ValueError,
            "durations has no entry for node 'fetch_data'",
        ),
        (
            {"durations": [1, 2]},
            ValueError,
            r"durations must be a mapping \{node: duration\}, got \[1, 2\]",
        ),
        (
            {"durations": {**A_TIME, "report": -1}},
            ValueError,
            r"duration of node 'report' must be a finite number >= 0, got -1",
        ),
        ({"durations": {**A_TIME, "report": float("nan")}}, ValueError, "got nan"),
        ({"durations": {**A_TIME, "report": True}}, ValueError, "got True"),
        ({"workers": 0}, ValueError, "workers must be an integer >= 1, got 0"),
        ({"workers": 1.5}, ValueError, "workers must be an integer >= 1, got 1.5"),
        ({"onfail": "halt"}, ValueError, "onfail must be 'stop' or 'drain', got 'halt'"),
        (
            {"out": {"ghost": sc.Artifact("ghost", 1)}},
            ValueError,
            "out names node 'ghost', which is not in the graph",
        ),
        (
            {"out": {"report": "done"}},
            ValueError,
            r"out\['report'\] must be an Artifact or a FailureReport, got 'done'",
        ),
        ({"out": ["report"]}, ValueError, "out must be a mapping"),
        ({"step": print}, ValueError, "step must have an integer kappa and a method attempt"),
        (
            {"resources": {"ghost": "db"}},
            ValueError,
            "resources names node 'ghost', which is not in the graph",
        ),
        ({"resources": ["db"]}, ValueError, "resources must be a mapping"),
        (
            {"context": {"ghost": "x"}},
            ValueError,
            "context names node 'ghost', which is not in the graph",
        ),
        ({"context": {"report": 3}}, ValueError, r"context\['report'\] must be a str, got 3"),
    ],
)
def test_schedule_rejects_bad_input(kwargs, error, match):
    args = {"graph": A, "durations": A_TIME, "workers": 2, **kwargs}
    graph, durations = args.pop("graph"), args.pop("durations")
    with pytest.raises(error, match=match):
        sc.schedule(graph, durations, **args)


def test_a_step_that_returns_no_verdict():
    class Sloppy:
        kappa = 1

        def attempt(self, node, prompt, number):
            return "pass"

    with pytest.raises(ValueError, match="step.attempt must return a Verdict, got 'pass' for 'x'"):
        sc.schedule({"x": []}, {"x": 1}, workers=1, step=Sloppy())


def test_a_custom_step_object_is_used():
    class Flaky:
        kappa = 2

        def attempt(self, node, prompt, number):
            return sc.Verdict("reject" if number == 1 else "pass", f"attempt {number}")

    result = sc.schedule({"x": []}, {"x": 1}, workers=1, step=Flaky())
    assert result.out["x"].attempts == 2 and result.makespan == 2


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (
            lambda: sc.scripted({"x": "fail"}),
            r"script\['x'\] must be a list of outcomes, not the str 'fail'",
        ),
        (lambda: sc.scripted({"x": 3}), r"script\['x'\] must be a list of outcomes, got 3"),
        (lambda: sc.scripted({"x": ["explode"]}), r"script\['x'\] has outcome 'explode'"),
        (
            lambda: sc.scripted({"x": [("reject", "a", "b")]}),
            r"entries must be an outcome or a pair",
        ),
        (lambda: sc.scripted(["fail"]), r"script must be a mapping"),
        (lambda: sc.scripted(kappa=0), "kappa must be an integer >= 1, got 0"),
        (lambda: sc.scripted(default="maybe"), "has outcome 'maybe'"),
        (lambda: sc.seeded(1.2, 0.5), r"p must be in \[0, 1\], got 1.2"),
        (lambda: sc.seeded(0.5, -0.1), r"d must be in \[0, 1\], got -0.1"),
        (lambda: sc.seeded(0.5, 0.5, phi=2), r"phi must be in \[0, 1\], got 2"),
        (lambda: sc.seeded(0.5, 0.5, crash=float("nan")), r"crash must be in \[0, 1\], got nan"),
        (
            lambda: sc.seeded(0.5, 0.5, seed=-1),
            "seed must be an integer >= 0 or a Generator, got -1",
        ),
        (
            lambda: sc.seeded(0.5, 0.5, seed="x"),
            "seed must be an integer >= 0 or a Generator, got 'x'",
        ),
        (lambda: sc.seeded(0.5, 0.5, kappa=1.5), "kappa must be an integer >= 1, got 1.5"),
        (lambda: sc.Verdict("maybe"), "outcome must be one of .*, got 'maybe'"),
        (lambda: sc.Verdict("pass", 3), "message must be a str, got 3"),
        (
            lambda: sc.FailureReport("x", "soft", 1, ""),
            "kind must be 'rejected' or 'hard', got 'soft'",
        ),
    ],
)
def test_step_factories_reject_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()


@pytest.mark.parametrize(
    "make",
    [
        lambda time: sc.Artifact("x", 1, True, time),
        lambda time: sc.FailureReport("x", "hard", 1, "boom", time),
        lambda time: sc.Event(time, "finish", "x"),
    ],
    ids=["Artifact", "FailureReport", "Event"],
)
@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf"), "noon", None])
def test_records_refuse_a_time_that_is_not_a_finite_number(make, bad):
    with pytest.raises(ValueError, match=rf"^time must be a finite number, got {bad!r}$"):
        make(bad)


def _failed_a():
    return sc.schedule(A, A_TIME, workers=2, step=sc.scripted({"run_tests": ["fail"]})).out


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"failed": "ghost"}, "failed node 'ghost' is not a node of graph"),
        ({"faulty": "ghost"}, "faulty node 'ghost' is not a node of graph"),
        ({"failed": "write_code"}, r"out\['write_code'\] must be a FailureReport to unroll"),
        ({"faulty": "report"}, "faulty node 'report' must be 'run_tests' or one of its ancestors"),
        ({"kappa_plan": -1}, "kappa_plan must be an integer >= 0, got -1"),
        ({"durations": {"read_spec": 1}}, "durations has no entry for node 'fetch_data'"),
        (
            {"graph": {**A, "run_tests'": []}, "durations": {**A_TIME, "run_tests'": 1}},
            "cannot copy 'run_tests': the name \"run_tests'\" is already a node",
        ),
    ],
)
def test_unroll_rejects_bad_input(kwargs, match):
    args = {
        "graph": A,
        "out": _failed_a(),
        "failed": "run_tests",
        "faulty": "write_code",
        "kappa_plan": 2,
        "durations": A_TIME,
        **kwargs,
    }
    durations = args.pop("durations")
    with pytest.raises(ValueError, match=match):
        sc.unroll_failed_check(**args, durations=durations)


def test_run_with_repair_rejects_a_bad_diagnosis():
    step = sc.scripted({"run_tests": ["fail"]})
    with pytest.raises(
        ValueError, match="faulty must be None, a mapping or a callable, got 'write_code'"
    ):
        sc.run_with_repair(A, A_TIME, workers=2, step=step, faulty="write_code")
    with pytest.raises(
        ValueError, match="faulty names 'report' for 'run_tests', but no copy of it"
    ):
        sc.run_with_repair(
            A,
            A_TIME,
            workers=2,
            step=sc.scripted({"run_tests": ["fail"]}),
            faulty={"run_tests": "report"},
        )


def test_one_shot_predecessor_iterables_keep_their_edges():
    graph = {"a": [], "b": iter(["a"])}
    result = sc.schedule(graph, {"a": 1, "b": 1}, workers=2)
    assert starts(result) == {"a": 0, "b": 1}
    assert result.graph == {"a": [], "b": ["a"]}
    step = sc.scripted({"a": ["fail"]})
    graph = {"a": [], "b": (u for u in ["a"])}
    repaired = sc.run_with_repair(graph, {"a": 1, "b": 1}, workers=2, step=step)
    assert repaired.graph["b"] == ["a'"] and starts(repaired) == {"a": 0, "a'": 1, "b": 2}


def test_unhashable_failed_or_faulty_values_are_named():
    out = _failed_a()
    with pytest.raises(ValueError, match=r"faulty node \['a'\] is not a node of graph"):
        sc.unroll_failed_check(A, out, "run_tests", ["a"], 2, durations=A_TIME)
    with pytest.raises(ValueError, match=r"failed node \{'x': 1\} is not a node of graph"):
        sc.unroll_failed_check(A, out, {"x": 1}, "write_code", 2, durations=A_TIME)
    step = sc.scripted({"run_tests": ["fail"]})
    with pytest.raises(
        ValueError, match=r"faulty\('run_tests', graph\) must return a node of graph, got \['x'\]"
    ):
        sc.run_with_repair(A, A_TIME, workers=2, step=step, faulty=lambda f, g: ["x"])
    with pytest.raises(ValueError, match=r"faulty names \['x'\] as a cause, which is not a node"):
        sc.run_with_repair(A, A_TIME, workers=2, faulty={"run_tests": ["x"]})
    with pytest.raises(ValueError, match=r"faulty names 'ghost' as a failed node, which is not"):
        sc.run_with_repair(A, A_TIME, workers=2, faulty={"ghost": "write_code"})


def test_a_huge_worker_count_costs_no_memory():
    result = sc.schedule({"a": []}, {"a": 1}, workers=10**12)
    assert (result.makespan, result.workers) == (1, 10**12)
    assert [e.worker for e in result.events.of_kind("dispatch")] == [0]
    repaired = sc.run_with_repair({"a": []}, {"a": 1}, workers=10**12)
    assert repaired.workers == 10**12 and repaired.done == {"a"}


def test_durations_that_overflow_the_clock_are_refused():
    with pytest.raises(ValueError, match=r"durations add up to more than the largest float"):
        sc.schedule({"a": [], "b": ["a"]}, {"a": 1e308, "b": 1e308}, workers=1)
    # Each duration and their sum are finite; the retry is not.
    step = sc.scripted({"x": ["reject", "pass"]}, kappa=2)
    with pytest.raises(
        ValueError, match=r"durations are too large for the clock: attempt 2 of node 'x'"
    ):
        sc.schedule({"x": []}, {"x": 1.5e308}, workers=1, step=step)
    # Nor is the next repair round, which starts where the first one ended.
    with pytest.raises(ValueError, match=r"attempt 1 of node \"x'\" would end after the largest"):
        sc.run_with_repair({"x": []}, {"x": 1.5e308}, workers=1, step=sc.scripted({"x": ["fail"]}))


@pytest.mark.parametrize(
    "kwargs",
    [
        {"durations": [1, 2]},
        {"durations": {"a": 1}},
        {"durations": {"a": 1, "b": 1, "zz": 1}},
        {"durations": {"a": -1, "b": 1}},
        {"durations": {"a": float("nan"), "b": 1}},
        {"durations": {"a": True, "b": 1}},
        {"durations": {"a": "3", "b": 1}},
        {"durations": {"a": 1e308, "b": 1e308}},
        {"durations": {"a": 10**400, "b": 0.5}},
        {"resources": ["a"]},
        {"resources": {"zz": ["x"]}},
        {"resources": {"a": "lock"}},
        {"resources": {"a": 3}},
        {"priority": "fastest"},
        {"priority": lambda v: "high"},
        {"priority": lambda v: float("nan")},
        {"workers": 0},
        {"workers": 1.5},
        {"workers": "2"},
        {"workers": [2]},
        {"workers": True},
        {"workers": 2**63},
    ],
)
def test_both_schedulers_word_each_input_error_alike(kwargs):
    args = {"durations": {"a": 1, "b": 1}, "workers": 2, "priority": "critical", **kwargs}
    graph = {"b": ["a"]}
    with pytest.raises(ValueError) as ours:
        sc.schedule(graph, **args)
    with pytest.raises(ValueError) as theirs:
        list_schedule(graph, **args)
    assert str(ours.value) == str(theirs.value)


# --- properties on random DAGs and random failures ------------------------------------------


@st.composite
def dags(draw, max_nodes=10):
    """A random DAG on nodes 0..n-1 (edges from lower to higher index), durations 0..5."""
    n = draw(st.integers(1, max_nodes))
    graph = {
        v: sorted(draw(st.sets(st.integers(0, v - 1), max_size=3))) if v else [] for v in range(n)
    }
    durations = {v: draw(st.integers(0, 5)) for v in range(n)}
    return graph, durations


def check_invariants(result, graph, durations, workers, *, onfail="drain", greedy=True):
    """Replay the trace against dag.ready_set and the worker count.

    ``greedy`` also checks that no worker idles while a node is ready (not so with resource
    keys, and not after the failure that makes a "stop" call return).
    """
    finished, running, blocked, failed = {}, {}, set(), set()
    events = list(result.events)
    for k, e in enumerate(events):
        if e.kind == "dispatch":
            # No node starts before all its predecessors finished: it is in dag's ready set.
            assert e.node in ready_set(graph, finished, running, blocked | failed), e
            assert all(finished[u] <= e.time for u in graph[e.node])
            assert 0 <= e.worker < workers
            assert e.worker not in running.values()  # a worker holds one node at a time
            running[e.node] = e.worker
            assert len(running) <= workers
        elif e.kind in ("finish", "fail", "cancel"):
            del running[e.node]
            if e.kind == "finish":
                finished[e.node] = e.time
            elif e.kind == "fail":
                failed.add(e.node)
        elif e.kind == "block":
            blocked.add(e.node)
        last_at_this_time = k + 1 == len(events) or events[k + 1].time != e.time
        if greedy and last_at_this_time and not (onfail == "stop" and failed):
            # The loop never idles a worker while dag says a node is ready.
            idle = workers - len(running)
            assert idle == 0 or not ready_set(graph, finished, running, blocked | failed), e
    times = [e.time for e in events]
    assert times == sorted(times)


@given(dags(), st.integers(1, 4), st.data())
def test_properties_under_drain(gd, workers, data):
    graph, durations = gd
    failing = data.draw(st.sets(st.sampled_from(list(graph))))
    step = sc.scripted(dict.fromkeys(failing, ["fail"]))
    result = sc.schedule(graph, durations, workers=workers, onfail="drain", step=step)
    check_invariants(result, graph, durations, workers)
    failed = result.failed
    assert failed <= failing
    # The blocked set is exactly the descendant cone of the failures that happened.
    cone = descendants(graph, failed) if failed else set()
    assert result.blocked == cone
    # Drain finishes every node outside the cones; a scripted failure inside a cone never runs.
    assert result.done == set(graph) - failed - cone
    assert failing - failed <= cone
    assert result.cancelled == frozenset()


@given(dags(), st.integers(1, 4), st.data())
def test_properties_under_stop(gd, workers, data):
    graph, durations = gd
    failing = data.draw(st.sets(st.sampled_from(list(graph))))
    step = sc.scripted(dict.fromkeys(failing, ["fail"]))
    result = sc.schedule(graph, durations, workers=workers, onfail="stop", step=step)
    check_invariants(result, graph, durations, workers, onfail="stop")
    assert len(result.failed) <= 1
    if result.failed:
        (f,) = result.failed
        assert result.blocked == descendants(graph, [f])
        assert result.events[-1].kind in ("cancel", "block", "fail")
        assert result.makespan == result.out[f].time
        assert not result.cancelled & set(result.out)
    else:
        assert result.done == set(graph)


@given(dags(), st.integers(1, 4), st.integers(0, 2**32 - 1), st.sampled_from(["stop", "drain"]))
def test_a_trace_is_identical_for_the_same_seed(gd, workers, seed, onfail):
    graph, durations = gd

    def run():
        step = sc.seeded(0.7, 0.6, kappa=2, seed=seed, crash=0.1)
        return sc.schedule(graph, durations, workers=workers, onfail=onfail, step=step)

    first, second = run(), run()
    assert first.events == second.events
    assert first.out == second.out
    check_invariants(first, graph, durations, workers, onfail=onfail)


@given(dags(), st.integers(1, 3), st.data())
def test_resources_never_overlap(gd, workers, data):
    graph, durations = gd
    keys = {v: data.draw(st.sets(st.sampled_from(["db", "net"]))) for v in graph}
    result = sc.schedule(graph, durations, workers=workers, resources=keys)
    check_invariants(result, graph, durations, workers, greedy=False)
    spans = {}
    for e in result.events:
        if e.kind == "dispatch":
            spans[e.node] = [e.time, None]
        elif e.kind == "finish":
            spans[e.node][1] = e.time
    for u in graph:
        for v in graph:
            if u != v and keys[u] & keys[v]:
                (s1, e1), (s2, e2) = spans[u], spans[v]
                assert e1 <= s2 or e2 <= s1 or s1 == e1 or s2 == e2
    assert result.done == set(graph)


@given(dags(), st.integers(1, 4), st.sampled_from(["critical", "input"]), st.data())
def test_without_failures_the_schedule_is_dags_list_schedule(gd, workers, priority, data):
    graph, durations = gd
    keys = data.draw(st.none() | st.just({v: ["db"] for v in graph if v % 2}))
    ours = sc.schedule(graph, durations, workers=workers, priority=priority, resources=keys)
    theirs = list_schedule(graph, durations, workers, priority=priority, resources=keys)
    assert ours.makespan == theirs.makespan
    assert starts(ours) == theirs.start
    assert {e.node: e.worker for e in ours.events.of_kind("dispatch")} == theirs.worker


@given(dags(), st.integers(1, 3), st.sampled_from(["stop", "drain"]), st.data())
def test_repair_rounds_finish_every_node_but_the_failed_originals(gd, workers, onfail, data):
    graph, durations = gd
    failing = data.draw(st.sets(st.sampled_from(list(graph))))
    step = sc.scripted(dict.fromkeys(failing, ["fail"]))  # copies always pass
    result = sc.run_with_repair(
        graph, durations, workers=workers, step=step, onfail=onfail, kappa_plan=1
    )
    assert result.failed == failing
    assert result.done == set(result.graph) - failing
    assert result.blocked == result.cancelled == frozenset()
    assert set(result.graph) == set(graph) | {sc.Primed(f) for f in failing}
    assert result.rounds <= 1 + len(failing)
    # The nodes executed in the first round keep their edges through every repair.
    first_round = {e.node for e in result.events if e.kind in ("finish", "fail") and not e.round}
    for node in first_round:
        assert result.graph[node] == list(graph[node])
    times = [e.time for e in result.events]
    assert times == sorted(times)
    assert [e.round for e in result.events] == sorted(e.round for e in result.events)


#: The forms a predecessor list may take; the last two can be read only once.
PREDECESSOR_FORMS = {
    "list": list,
    "tuple": tuple,
    "iterator": iter,
    "generator": lambda preds: (u for u in preds),
}


def reshaped(graph, forms):
    return {v: PREDECESSOR_FORMS[f](ps) for (v, ps), f in zip(graph.items(), forms, strict=True)}


@given(dags(), st.integers(1, 3), st.sampled_from(["stop", "drain"]), st.data())
def test_one_shot_predecessor_iterables_run_like_lists(gd, workers, onfail, data):
    graph, durations = gd
    forms = data.draw(st.lists(st.sampled_from(sorted(PREDECESSOR_FORMS)), min_size=len(graph),
                               max_size=len(graph)))  # fmt: skip
    failing = data.draw(st.sets(st.sampled_from(list(graph))))

    def run(g):
        step = sc.scripted(dict.fromkeys(failing, ["fail"]))
        return sc.schedule(g, durations, workers=workers, onfail=onfail, step=step)

    def repair(g):
        step = sc.scripted(dict.fromkeys(failing, ["fail"]))
        return sc.run_with_repair(g, durations, workers=workers, onfail=onfail, step=step)

    for call in (run, repair):
        ours, theirs = call(reshaped(graph, forms)), call(graph)
        assert (ours.events, ours.graph, ours.out) == (theirs.events, theirs.graph, theirs.out)


UNHASHABLE = st.one_of(
    st.lists(st.integers(0, 3), max_size=2),
    st.sets(st.integers(0, 3), max_size=2),
    st.dictionaries(st.integers(0, 3), st.integers(0, 3), max_size=1),
)


@given(UNHASHABLE)
def test_unhashable_diagnoses_are_named_never_a_bare_type_error(bad):
    out = _failed_a()
    with pytest.raises(ValueError, match=r"faulty node .* is not a node of graph") as info:
        sc.unroll_failed_check(A, out, "run_tests", bad, 2, durations=A_TIME)
    assert repr(bad) in str(info.value)
    with pytest.raises(ValueError, match=r"failed node .* is not a node of graph"):
        sc.unroll_failed_check(A, out, bad, "write_code", 2, durations=A_TIME)
    step = sc.scripted({"run_tests": ["fail"]})
    with pytest.raises(
        ValueError, match=r"faulty\('run_tests', graph\) must return a node"
    ) as info:
        sc.run_with_repair(A, A_TIME, workers=2, step=step, faulty=lambda f, g: bad)
    assert repr(bad) in str(info.value)
    with pytest.raises(ValueError, match=r"faulty names .* as a cause, which is not a node"):
        sc.run_with_repair(A, A_TIME, workers=2, faulty={"run_tests": bad})


@given(dags(max_nodes=8), st.integers(0, 2**63 - 1), st.booleans(), st.data())
def test_workers_beyond_the_node_count_run_as_one_per_node(gd, extra, as_float, data):
    graph, durations = gd
    n = len(graph)
    many = min(n + extra, 2**63 - 1)
    if as_float:
        many = float(min(many, 2**53))  # an integral float stays exact below 2**53
    failing = data.draw(st.sets(st.sampled_from(list(graph))))

    def run(workers):
        step = sc.scripted(dict.fromkeys(failing, ["fail"]))
        return sc.run_with_repair(graph, durations, workers=workers, step=step)

    ours, one_each = run(many), run(n)
    assert (ours.events, ours.out) == (one_each.events, one_each.out)
    assert ours.workers == int(many)


@given(st.integers(2**63, 2**200) | st.floats(2**63, 1e300))
def test_counts_beyond_int64_are_refused_naming_the_value(value):
    # Counts go through the shared check of decompkit.validate, which must not let a float
    # of 2**63 or more wrap around when it becomes an int64.
    out = _failed_a()
    calls = [
        ("workers", lambda: sc.schedule(A, A_TIME, workers=value)),
        ("workers", lambda: sc.run_with_repair(A, A_TIME, workers=value)),
        ("kappa_plan", lambda: sc.run_with_repair(A, A_TIME, workers=2, kappa_plan=value)),
        (
            "kappa_plan",
            lambda: sc.unroll_failed_check(
                A, out, "run_tests", "write_code", value, durations=A_TIME
            ),
        ),
        ("kappa", lambda: sc.scripted(kappa=value)),
        ("kappa", lambda: sc.seeded(0.5, 0.5, kappa=value)),
    ]
    for name, call in calls:
        with pytest.raises(ValueError, match=name) as info:
            call()
        # Long values are shown abbreviated (reprlib), so look for their leading digits.
        assert repr(value)[:25] in str(info.value), name


@given(dags(max_nodes=6), st.integers(1, 3), st.data())
def test_float_durations_never_give_an_infinite_time(gd, kappa, data):
    graph, _ = gd
    big = st.floats(0, sys.float_info.max) | st.sampled_from([sys.float_info.max, 1e308])
    durations = {v: data.draw(big) for v in graph}
    rejected = data.draw(st.sets(st.sampled_from(list(graph))))
    step = sc.scripted(dict.fromkeys(rejected, ["reject"] * kappa), kappa=kappa)
    try:
        result = sc.run_with_repair(graph, durations, workers=2, step=step, kappa_plan=1)
    except ValueError as error:
        message = str(error)
        assert "durations add up to more than the largest float" in message or (
            "durations are too large for the clock" in message
        )
        return
    assert all(np.isfinite(e.time) for e in result.events)


@given(dags(max_nodes=7), st.integers(1, 3), st.integers(0, 3), st.data())
def test_kappa_plan_caps_every_copy(gd, workers, kappa_plan, data):
    graph, durations = gd
    failing = data.draw(st.sets(st.sampled_from(list(graph)), min_size=1))
    script = {}
    for v in failing:  # a failing node keeps failing in its first few copies
        node = v
        for _ in range(data.draw(st.integers(1, 3))):
            script[node] = ["fail"]
            node = sc.Primed(node)
    cause = {v: data.draw(st.sampled_from([v, *sorted(ancestors(graph, [v]))])) for v in failing}
    step = sc.scripted(script)
    try:
        final = sc.run_with_repair(
            graph, durations, workers=workers, step=step, faulty=cause, kappa_plan=kappa_plan
        )
    except sc.RepairLimitError as error:
        final = error.result
        assert level(error.capped) == kappa_plan
    else:
        assert final.done == set(final.graph) - final.failed
    assert all(level(node) <= kappa_plan for node in final.graph)


@given(dags(max_nodes=8), st.integers(1, 3), st.data())
def test_the_failures_of_one_round_are_unrolled_together(gd, workers, data):
    graph, durations = gd
    failing = data.draw(st.sets(st.sampled_from(list(graph)), min_size=1))
    cause = {v: data.draw(st.sampled_from([v, *sorted(ancestors(graph, [v]))])) for v in failing}
    step = sc.scripted(dict.fromkeys(failing, ["fail"]))  # copies pass
    result = sc.run_with_repair(
        graph, durations, workers=workers, step=step, faulty=cause, kappa_plan=len(graph)
    )
    assert result.done == set(result.graph) - failing
    assert result.blocked == frozenset()
    assert len(result.repairs) == result.rounds - 1
    for repair in result.repairs:
        for copy in repair.copies.values():  # every copy reads the copies of its round
            assert not set(repair.graph[copy]) & set(repair.copies)


def test_a_task_copied_again_while_its_copy_is_in_the_plan_gets_the_next_name():
    """Found by the property above: 2 fails blaming 1 (so 1 and 2 are copied); then 7 fails
    blaming 0, and everything between 0 and 7 is copied, the original 1 (which 4 still reads)
    and its copy 1' with it. The original's second copy is 1'', the copy's copy 1'''."""
    graph = {0: [], 1: [0], 2: [0, 1], 3: [], 4: [0, 1], 5: [], 6: [], 7: [2, 4]}
    step = sc.scripted(dict.fromkeys([0, 2, 7], ["fail"]))
    result = sc.run_with_repair(
        graph,
        dict.fromkeys(graph, 0),
        workers=1,
        step=step,
        faulty={0: 0, 2: 1, 7: 0},
        kappa_plan=len(graph),
    )
    assert result.done == set(result.graph) - {0, 2, 7}
    names = [copy for repair in result.repairs for copy in repair.copies.values()]
    assert len(names) == len(set(names))  # no copy takes a name twice
    copies_of_1 = sorted((n for n in result.graph if sc.repair._base(n) == 1), key=sc.repair._level)
    assert [sc.repair._level(n) for n in copies_of_1] == list(range(len(copies_of_1)))
    assert max(sc.repair._level(n) for n in result.graph) == 3  # the copy 1' copied again
    again = sc.scripted(dict.fromkeys([0, 2, 7], ["fail"]))
    with pytest.raises(sc.RepairLimitError, match="kappa_plan=2"):  # the cap counts them
        sc.run_with_repair(
            graph,
            dict.fromkeys(graph, 0),
            workers=1,
            step=again,
            faulty={0: 0, 2: 1, 7: 0},
            kappa_plan=2,
        )
