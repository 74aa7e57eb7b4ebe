"""decompkit.artefact: the state machine, revisions and their refusals, the event log, progress."""

import dataclasses
import math
import pickle
import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from decompkit import artefact as af
from decompkit.artefact import (
    ABANDONED,
    ACTIVE,
    BLOCKED,
    DONE,
    PENDING,
    Plan,
    Revision,
    RevisionError,
    State,
    Step,
    Transition,
    TransitionError,
)
from decompkit.dag import topological_order
from decompkit.plan import PlanError

# The table, restated here on purpose: the test must not read it from the module.
LEGAL = {
    ("pending", "active"),
    ("pending", "blocked"),
    ("pending", "abandoned"),
    ("active", "done"),
    ("active", "blocked"),
    ("active", "pending"),
    ("active", "abandoned"),
    ("blocked", "pending"),
    ("blocked", "abandoned"),
    ("done", "pending"),
}
STATES = ["pending", "active", "blocked", "done", "abandoned"]


def step(sid, deps=(), **kw):
    return Step(sid, f"do {sid}", depends_on=tuple(deps), verification=f"{sid} checked", **kw)


def diamond(**kw):
    """a -> b, a -> c, (b, c) -> d; d is the sink and so the invariant."""
    return Plan("g", [step("a"), step("b", "a"), step("c", "a"), step("d", "bc")], **kw)


def finish(plan, sid):
    plan.transition(sid, ACTIVE)
    plan.transition(sid, DONE, evidence=f"evidence of {sid}")


def plan_with_a_in(state):
    """Step 'a' (no dependency, not an invariant) driven to ``state`` by legal moves."""
    plan = Plan("g", [step("a"), step("z", invariant=True)])
    path = {
        "pending": [],
        "active": [("active", {})],
        "blocked": [("blocked", {"reason": "waiting on review"})],
        "done": [("active", {}), ("done", {"evidence": "log 1"})],
        "abandoned": [("abandoned", {"reason": "not needed"})],
    }[state]
    for to, kw in path:
        plan.transition("a", to, **kw)
    assert plan.step("a").state == state
    return plan


def problems(error_info):
    return error_info.value.problems


def kinds(error_info):
    return [p.kind for p in error_info.value.problems]


def snapshot(plan):
    return plan.steps, plan.events, plan.graph(), plan.invariants, plan.progress()


# --- the transition table ------------------------------------------------------------------


def test_exported_table_matches_the_documented_one():
    pairs = {(str(a), str(b)) for a, targets in af.TRANSITIONS.items() for b in targets}
    assert pairs == LEGAL
    assert [str(s) for s in State] == STATES
    assert State.DONE == "done" and str(DONE) == "done"


@pytest.mark.parametrize("current", STATES)
@pytest.mark.parametrize("requested", STATES)
def test_every_pair_of_states(current, requested):
    plan = plan_with_a_in(current)
    kw = {"reason": "because"}
    if requested == "done":
        kw["evidence"] = "a test log"
    before = snapshot(plan)
    if (current, requested) in LEGAL:
        event = plan.transition("a", requested, **kw)
        assert plan.step("a").state == requested
        assert (event.step, event.before, event.after) == ("a", current, requested)
        assert plan.events[-1] is event
    else:
        pattern = f"cannot move step 'a' from '{current}' to '{requested}'"
        with pytest.raises(TransitionError, match=re.escape(pattern)) as info:
            plan.transition("a", requested, **kw)
        assert (info.value.step, info.value.current, info.value.requested) == (
            "a",
            current,
            requested,
        )
        assert isinstance(info.value, ValueError)
        assert snapshot(plan) == before


def test_terminal_state_says_so():
    plan = plan_with_a_in("abandoned")
    with pytest.raises(TransitionError, match="'abandoned' is terminal"):
        plan.transition("a", "pending", reason="second thoughts")


@pytest.mark.parametrize("evidence", [None, "", "   ", 42, ["log"]])
def test_done_needs_evidence(evidence):
    plan = plan_with_a_in("active")
    with pytest.raises(TransitionError, match="from 'active' to 'done': done needs evidence"):
        plan.transition("a", "done", evidence=evidence)
    assert plan.step("a").state is ACTIVE


@pytest.mark.parametrize(
    ("current", "requested"),
    [("pending", "blocked"), ("active", "blocked"), ("pending", "abandoned"),
     ("active", "pending"), ("blocked", "pending"), ("done", "pending")],
)  # fmt: skip
@pytest.mark.parametrize("reason", [None, "", "  "])
def test_reason_required(current, requested, reason):
    plan = plan_with_a_in(current)
    with pytest.raises(TransitionError, match=f"to '{requested}': a reason is required"):
        plan.transition("a", requested, reason=reason)


def test_blocked_keeps_its_reason_and_is_not_ready():
    plan = plan_with_a_in("blocked")
    assert plan.step("a").reason == "waiting on review"
    assert plan.ready() == ("z",)


def test_abandoned_keeps_its_reason():
    plan = plan_with_a_in("abandoned")
    assert plan.step("a").reason == "not needed"
    assert plan.events[-1].kind == "abandon"


def test_start_needs_every_dependency_done():
    plan = diamond()
    finish(plan, "a")
    finish(plan, "b")
    plan.transition("c", ACTIVE)
    with pytest.raises(TransitionError, match=r"'d' from 'pending' to 'active'.*'c' \(active\)"):
        plan.transition("d", ACTIVE)


def test_invariant_step_cannot_be_abandoned():
    plan = diamond()
    with pytest.raises(TransitionError, match="'d' from 'pending' to 'abandoned'.*invariant"):
        plan.transition("d", ABANDONED, reason="too hard")


def test_reopen_refused_while_a_descendant_rests_on_the_result():
    plan = diamond()
    finish(plan, "a")
    finish(plan, "b")
    with pytest.raises(TransitionError, match=r"'a' from 'done' to 'pending': 'b' \(done\)"):
        plan.transition("a", PENDING, reason="bad data")
    plan.transition("b", PENDING, reason="bad data")  # bottom up is fine
    plan.transition("a", PENDING, reason="bad data")
    assert plan.step("a").evidence is None
    assert [e.kind for e in plan.events[-2:]] == ["reopen", "reopen"]


def test_argument_errors():
    plan = diamond()
    with pytest.raises(ValueError, match="unknown step 'x'; the plan has 'a', 'b', 'c', 'd'"):
        plan.transition("x", ACTIVE)
    with pytest.raises(ValueError, match="to must be one of 'pending', .*, got 'finished'"):
        plan.transition("a", "finished")
    with pytest.raises(ValueError, match="evidence is recorded only on a move to 'done'"):
        plan.transition("a", ACTIVE, evidence="early")
    with pytest.raises(ValueError, match=r"unknown step \['a'\]"):
        plan.step(["a"])


def test_transition_error_pickles_with_its_attributes():
    error = TransitionError("a", PENDING, DONE, "why")
    back = pickle.loads(pickle.dumps(error))
    assert (back.step, back.current, back.requested, str(back)) == (
        "a",
        PENDING,
        DONE,
        str(error),
    )


# --- construction --------------------------------------------------------------------------


def test_construction_accepts_mappings_and_marks_sink_invariants():
    plan = Plan("g", [{"id": "a", "description": "x", "verification": "y"}, step("b", "a")])
    assert plan.invariants == ("b",)
    assert plan.step("b").invariant and not plan.step("a").invariant
    assert plan.events == ()
    assert repr(plan) == "Plan('g', 2 steps, 0 done)"


def test_flagged_invariants_replace_the_sinks():
    plan = Plan("g", [step("a", invariant=True), step("b", "a")])
    assert plan.invariants == ("a",)


def test_construction_lists_every_problem():
    with pytest.raises(PlanError) as info:
        Plan(
            "g",
            [
                step("a", "c"),
                step("b", "a"),
                step("c", "b"),
                step("b"),
                step("e", ["zz"]),
                Step("", "x", verification=""),
                step("f", state=DONE, evidence="log"),
            ],
        )
    assert kinds(info) == [
        "malformed",
        "malformed",
        "not_pending",
        "duplicate_id",
        "unknown_dependency",
        "cycle",
    ]
    cycle = problems(info)[-1].steps
    assert cycle[0] == cycle[-1] and set(cycle) == {"a", "b", "c"}
    assert "would form a cycle" in str(info.value) and "'zz'" in str(info.value)
    assert "the step at position 6 has id ''; it must be a non-empty str" in str(info.value)


@pytest.mark.parametrize(
    ("steps", "match"),
    [
        ([], "plan has no steps"),
        ([step("a", "a")], "cycle: 'a' -> 'a'"),
        ([Step("a", "x", verification="v", depends_on="b")], "depends_on 'b'"),
        ([Step("a", "x", verification="v", depends_on=("b", "b"))], "repeated dependency"),
        ([Step("a", "x", verification="v", depends_on=[["b"]])], "depends_on (['b'],)"),
        ([Step("a", "x", verification="v", note=3)], "note 3, not a str"),
        ([Step("a", "x", verification=" ")], "verification ' '; it must be a non-empty str"),
    ],
)
def test_construction_problem(steps, match):
    with pytest.raises(PlanError, match=re.escape(match)):
        Plan("g", steps)


def test_construction_argument_errors():
    with pytest.raises(ValueError, match="goal must be a non-empty str, got ''"):
        Plan("", [step("a")])
    with pytest.raises(ValueError, match="clock must be callable, got 3"):
        Plan("g", [step("a")], clock=3)
    with pytest.raises(ValueError, match=r"steps\[0\] must be a Step or a mapping"):
        Plan("g", ["a"])
    with pytest.raises(ValueError, match=r"steps\[1\] has id \['a'\]; an id must be a str"):
        Plan("g", [step("b"), Step(["a"], "x", verification="v")])
    with pytest.raises(ValueError, match=r"steps\[0\] is not a valid step"):
        Plan("g", [{"id": "a", "colour": "red"}])
    with pytest.raises(ValueError, match="steps must be a list of steps, got 'a'"):
        Plan("g", "a")
    with pytest.raises(ValueError, match="state must be one of"):
        Step("a", "x", verification="v", state="finished")


def test_goal_steps_and_events_are_immutable():
    plan = diamond()
    finish(plan, "a")
    with pytest.raises(AttributeError):
        plan.goal = "something else"
    with pytest.raises(dataclasses.FrozenInstanceError):
        plan.step("a").state = PENDING
    with pytest.raises(dataclasses.FrozenInstanceError):
        plan.events[0].reason = "rewritten"
    assert isinstance(plan.events, tuple)
    plan.graph()["a"] = ("d",)  # a copy: the plan is untouched
    assert plan.graph()["a"] == ()


# --- the event log -------------------------------------------------------------------------


def test_events_carry_seq_time_kind_reason_and_observation():
    ticks = iter(range(100, 200))
    plan = diamond(clock=lambda: next(ticks))
    plan.transition("a", ACTIVE, observation="worker free")
    plan.transition("a", BLOCKED, reason="needs a password", observation="login prompt")
    plan.transition("a", PENDING, reason="password arrived")
    events = plan.events
    assert [e.seq for e in events] == [0, 1, 2]
    assert [e.time for e in events] == [100, 101, 102]
    assert [e.kind for e in events] == ["start", "block", "unblock"]
    assert events[1].reason == "needs a password" and events[1].observation == "login prompt"
    assert all(isinstance(e, Transition) for e in events)


def test_loose_transition_records_any_pair():
    event = Transition(0, 0.0, "a", "pending", "done")
    assert event.after is DONE and event.kind == "pending->done"
    with pytest.raises(ValueError, match="before must be one of"):
        Transition(0, 0.0, "a", "started", "done")


LOG_RECORDS = {
    "Transition": lambda seq, time: Transition(seq, time, "a", "active", "done"),
    "Revision": lambda seq, time: Revision(seq, time, "r", "o"),
}


@pytest.mark.parametrize("record", sorted(LOG_RECORDS))
@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_log_records_refuse_a_seq_or_time_that_is_not_finite(record, bad):
    make = LOG_RECORDS[record]
    with pytest.raises(ValueError, match=rf"^seq must be an integer >= 0, got {bad!r}$"):
        make(bad, 0.0)
    with pytest.raises(ValueError, match=rf"^time must be a finite number, got {bad!r}$"):
        make(0, bad)


@pytest.mark.parametrize("record", sorted(LOG_RECORDS))
@pytest.mark.parametrize(
    ("seq", "time", "match"),
    [
        (-1, 0.0, r"^seq must be an integer >= 0, got -1$"),
        (1.5, 0.0, r"^seq must be an integer >= 0, got 1\.5$"),
        (True, 0.0, r"^seq must be a number, got True$"),
        ("3", 0.0, r"^seq must be an integer >= 0, got '3'$"),
        (0, "noon", r"^time must be a finite number, got 'noon'$"),
        (0, None, r"^time must be a finite number, got None$"),
    ],
)
def test_log_records_refuse_a_malformed_seq_or_time(record, seq, time, match):
    with pytest.raises(ValueError, match=match):
        LOG_RECORDS[record](seq, time)


@pytest.mark.parametrize("record", sorted(LOG_RECORDS))
def test_log_records_keep_seq_and_time_as_plain_numbers(record):
    event = LOG_RECORDS[record](np.int64(3), np.float64(2.5))
    assert (type(event.seq), event.seq, type(event.time), event.time) == (int, 3, float, 2.5)
    assert LOG_RECORDS[record](4.0, 7).seq == 4 and LOG_RECORDS[record](4.0, 7).time == 7


# --- ready ---------------------------------------------------------------------------------


def test_ready_is_the_frontier_in_insertion_order():
    plan = Plan("g", [step("c"), step("a"), step("b", "a"), step("d", "cb"), step("e")])
    assert plan.ready() == ("c", "a", "e")
    finish(plan, "a")
    plan.transition("c", ACTIVE)
    plan.transition("e", BLOCKED, reason="waiting on a person")
    assert plan.ready() == ("b",)
    finish(plan, "b")
    assert plan.ready() == ()
    plan.transition("c", DONE, evidence="ok")
    assert plan.ready() == ("d",)


def test_a_step_after_an_abandoned_one_is_never_ready():
    plan = Plan("g", [step("a"), step("b", "a"), step("z", invariant=True)])
    plan.transition("a", ABANDONED, reason="tool retired")
    assert plan.ready() == ("z",)
    with pytest.raises(TransitionError, match=r"'a' \(abandoned\)"):
        plan.transition("b", ACTIVE)


# --- revisions -----------------------------------------------------------------------------


def test_revision_diff_for_added_and_removed_nodes_and_edges():
    plan = diamond()
    finish(plan, "a")
    r = plan.revise(
        reason="split c",
        observation="c is two jobs",
        add=[step("c1", "a"), step("c2", ["c1"])],
        remove=["c"],
        add_edges=[("c2", "d")],
    )
    assert isinstance(r, Revision) and r.kind == "revision" and r.structural
    assert r.added_nodes == ("c1", "c2") and r.removed_nodes == ("c",)
    assert set(r.added_edges) == {("a", "c1"), ("c1", "c2"), ("c2", "d")}
    assert set(r.removed_edges) == {("a", "c"), ("c", "d")}
    assert (r.reason, r.observation, r.seq) == ("split c", "c is two jobs", 2)
    assert plan.graph() == {"a": (), "b": ("a",), "d": ("b", "c2"), "c1": ("a",), "c2": ("c1",)}
    assert plan.ready() == ("b", "c1")


def test_reopen_in_a_revision_logs_the_transitions_and_is_not_structural():
    plan = diamond()
    finish(plan, "a")
    finish(plan, "b")
    r = plan.revise(reason="schema changed", observation="diff of v3", reopen=["a", "b"])
    assert not r.structural and r.reopened == ("a", "b")
    assert [(e.kind, e.step) for e in plan.events[-2:]] == [("reopen", "a"), ("reopen", "b")]
    assert plan.step("a").state is PENDING and plan.step("a").evidence is None
    assert plan.ready() == ("a",)


def test_notes_are_a_non_structural_revision_on_any_step():
    plan = diamond()
    finish(plan, "a")
    r = plan.revise(reason="clarify", observation="review", notes={"a": "see ticket 7"})
    assert r.renoted == ("a",) and not r.structural and not r.goal_changed
    assert plan.step("a").note == "see ticket 7" and plan.step("a").state is DONE


def test_same_goal_is_not_a_change_and_new_flagged_step_becomes_invariant():
    plan = diamond()
    plan.revise(reason="r", observation="o", goal="g", add=[step("x", "d", invariant=True)])
    assert plan.invariants == ("d", "x")
    with pytest.raises(RevisionError, match="'x' is a completion invariant"):
        plan.revise(reason="r", observation="o", remove=["x"])


def test_removing_a_pending_step_in_between_needs_the_invariant_re_pointed():
    plan = Plan("g", [step("a"), step("w", "a"), step("v", "w")])
    with pytest.raises(RevisionError, match="invariant step 'v' would no longer wait for 'a'"):
        plan.revise(reason="w is moot", observation="o", remove=["w"])
    plan.revise(reason="w is moot", observation="o", remove=["w"], add_edges=[("a", "v")])
    assert plan.graph() == {"a": (), "v": ("a",)}
    assert str(plan.progress()).endswith("0 of 2 current steps done; 1 removed")


REFUSALS = [
    ("goal", {"goal": "a different goal"}, "would change the goal from 'g' to 'a different"),
    ("invariant", {"remove": ["d"]}, "'d' is a completion invariant and cannot be removed"),
    ("invariant", {"remove_edges": [("b", "d")]}, "'d' would no longer wait for 'b'"),
    ("cycle", {"add_edges": [("d", "b")]}, "would form a cycle: "),
    ("unknown_dependency", {"add": [step("x", ["nope"])]}, "'x' depends on 'nope'"),
    ("duplicate_id", {"add": [step("b")]}, "step id 'b' is used more than once"),
    ("duplicate_id", {"add": [step("x"), step("x")]}, "step id 'x' is used more than once"),
    ("immutable_step", {"remove": ["a"]}, "'a' is done; only pending steps can be removed"),
    ("immutable_step", {"remove": ["c"]}, "'c' is active; only pending steps can be removed"),
    ("immutable_step", {"add_edges": [("b", "c")]}, "'c' is active; only pending or blocked"),
    ("immutable_step", {"remove_edges": [("a", "c")]}, "'c' is active; only pending or"),
    ("unknown_step", {"remove": ["x"]}, "unknown step 'x'"),
    ("unknown_step", {"notes": {"x": "n"}}, "unknown step 'x'"),
    ("unknown_step", {"add_edges": [("x", "d")]}, "edge ('x', 'd') names an unknown step"),
    ("unknown_edge", {"remove_edges": [("a", "d")]}, "edge ('a', 'd') is not in the plan"),
    ("duplicate_edge", {"add_edges": [("b", "d")]}, "edge ('b', 'd') is already in the plan"),
    ("not_done", {"reopen": ["b"]}, "'b' is pending; only done steps can be reopened"),
    ("dependent_done", {"reopen": ["a"]}, "reopening 'a' invalidates 'c' (active)"),
    ("not_pending", {"add": [step("x", state=BLOCKED)]}, "new steps start pending"),
    # A duplicate of a done step is one problem: the old step's state is not re-checked.
    ("duplicate_id", {"add": [step("a")]}, "step id 'a' is used more than once"),
    ("malformed", {"add": [step("x", note=None)]}, "note None, not a str"),
    ("malformed", {"notes": {"a": 7}}, "note for 'a' must be a str, got 7"),
    ("empty", {}, "revision changes nothing"),
]


@pytest.mark.parametrize(("kind", "change", "match"), REFUSALS)
def test_refused_revision_leaves_the_plan_unchanged(kind, change, match):
    plan = diamond()
    finish(plan, "a")
    plan.transition("c", ACTIVE)
    before = snapshot(plan)
    with pytest.raises(RevisionError, match=re.escape(match)) as info:
        plan.revise(reason="because", observation="seen", **change)
    assert kinds(info) == [kind]
    assert isinstance(info.value, PlanError)
    assert snapshot(plan) == before


def test_refused_cycle_names_the_cycle():
    plan = diamond()
    with pytest.raises(RevisionError) as info:
        plan.revise(reason="r", observation="o", add_edges=[("d", "a")])
    cycle = problems(info)[0].steps
    assert cycle[0] == cycle[-1] and set(cycle) >= {"a", "d"}
    assert " -> ".join(map(repr, cycle)) in str(info.value)


def test_removed_ids_are_never_reused():
    plan = diamond()
    plan.revise(reason="r", observation="o", remove=["c"], add_edges=[("a", "d")])
    with pytest.raises(RevisionError, match="'c' was used earlier in this plan"):
        plan.revise(reason="r", observation="o", add=[step("c", "a")])


def test_a_refusal_lists_every_problem():
    plan = diamond()
    with pytest.raises(RevisionError, match="plan has 4 problems") as info:
        plan.revise(reason="r", observation="o", goal="new", remove=["d", "zz"], add=[step("b")])
    assert sorted(kinds(info)) == ["duplicate_id", "goal", "invariant", "unknown_step"]


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"reason": "", "observation": "o"}, "reason must be a non-empty str, got ''"),
        ({"reason": "r", "observation": None}, "observation must be a non-empty str, got None"),
        ({"reason": "r", "observation": "o", "remove": "a"}, "remove must be a list of step"),
        ({"reason": "r", "observation": "o", "add_edges": ["ab"]}, r"\(before, after\) pairs"),
        ({"reason": "r", "observation": "o", "notes": ["a"]}, "notes must be a mapping"),
        ({"reason": "r", "observation": "o", "add": [3]}, r"add\[0\] must be a Step"),
    ],
)
def test_revision_argument_errors(kwargs, match):
    with pytest.raises(ValueError, match=match):
        diamond().revise(**kwargs)


# --- progress ------------------------------------------------------------------------------


def test_progress_counts_abandoned_and_removed_honestly():
    plan = Plan("g", [step("a"), step("b"), step("c"), step("z", "abc")])
    finish(plan, "a")
    plan.transition("b", ABANDONED, reason="not needed")
    p = plan.progress()
    assert (p.original_done, p.original_total, p.current_done, p.current_total) == (1, 4, 1, 3)
    assert str(p) == (
        "1 of 4 original steps done; 0 added after evidence; 1 of 3 current steps done; 1 abandoned"
    )


@pytest.mark.parametrize(
    ("counts", "match"),
    [((7, 6, 0, 1, 1), "original_done <= original_total"), ((0, 1, 0, 2, 1), "current_done")],
)
def test_progress_rejects_impossible_counts(counts, match):
    with pytest.raises(ValueError, match=match):
        af.Progress(*counts)


# --- the warehouse-connector migration -----------------------------------------------------


def test_migration_stages_drop_from_83_3_to_55_6_percent():
    stages = [(label, plan.progress()) for label, plan in af.migration_stages()]
    labels = [label for label, _ in stages]
    assert labels[0] == "plan accepted" and labels[-2:] == ["verification put back", "plan revised"]
    before, after = stages[-2][1], stages[-1][1]
    assert str(before) == (
        "5 of 6 original steps done; 0 added after evidence; 5 of 6 current steps done"
    )
    assert str(after) == (
        "5 of 6 original steps done; 3 added after evidence; 5 of 9 current steps done"
    )
    assert before.original_fraction == after.original_fraction == 5 / 6
    assert after.current_fraction == 5 / 9
    assert (
        f"{after.original_fraction:.1%}" == "83.3%" and f"{after.current_fraction:.1%}" == "55.6%"
    )


def test_migration_scenario_end_to_end():
    plan = af.migration_scenario()
    assert plan.goal.startswith("Move every reader of the warehouse")
    assert plan.invariants == ("verify_production",)
    done = [s.id for s in plan.steps if s.state is DONE]
    assert done == ["find_callers", "read_schemas", "patch_reporting", "patch_etl", "deploy"]
    assert all(plan.step(sid).evidence for sid in done)
    kinds_ = [e.kind for e in plan.events]
    assert kinds_ == ["start", "complete"] * 5 + ["start", "put_back", "revision"]
    revision = plan.events[-1]
    assert (
        "scheduler" in revision.observation and revision.observation == plan.events[-2].observation
    )
    assert revision.added_nodes == ("sweep_scheduled_jobs", "patch_scheduler", "redeploy")
    assert set(revision.added_edges) == {
        ("sweep_scheduled_jobs", "patch_scheduler"),
        ("read_schemas", "patch_scheduler"),
        ("patch_scheduler", "redeploy"),
        ("deploy", "redeploy"),
        ("redeploy", "verify_production"),
    }
    assert revision.removed_edges == (("deploy", "verify_production"),)
    assert plan.ready() == ("sweep_scheduled_jobs",)
    assert topological_order(plan.graph())[-1] == "verify_production"

    for sid in ["sweep_scheduled_jobs", "patch_scheduler", "redeploy", "verify_production"]:
        assert plan.ready() == (sid,)
        finish(plan, sid)
    assert str(plan.progress()) == (
        "6 of 6 original steps done; 3 added after evidence; 9 of 9 current steps done"
    )


def test_migration_clock_is_injected():
    ticks = iter(range(1000))
    plan = af.migration_scenario(clock=lambda: next(ticks))
    assert [e.time for e in plan.events] == list(range(len(plan.events)))


# --- property: random legal and illegal moves keep the invariants ---------------------------

IDS = ["a", "b", "c", "d", "e", "n0"]
# Moves that need earlier moves to succeed ("finish" = start then complete; "pending" puts
# back, unblocks or reopens) are listed more than once so that long runs reach every state.
MOVE_KINDS = [*STATES, "pending", "active", "finish", "finish", "finish", "reopen", "reopen"]
MOVE_KINDS += ["edge", "edge", "unedge", "remove", "add"]
MOVES = st.lists(
    st.tuples(
        st.sampled_from(IDS),
        st.sampled_from(MOVE_KINDS),
        st.sampled_from(IDS),
        st.booleans(),
    ),
    min_size=5,
    max_size=60,
)


def apply(plan, sid, move, other, careful):
    """One attempted move; ``careful`` supplies the reason and evidence a move may need."""
    if move == "edge":
        return plan.revise(reason="r", observation="o", add_edges=[(other, sid)])
    if move == "unedge":
        return plan.revise(reason="r", observation="o", remove_edges=[(other, sid)])
    if move in ("remove", "reopen"):
        return plan.revise(reason="r", observation="o", **{move: [sid]})
    if move == "add":
        new = f"n{sum(e.kind == 'revision' and bool(e.added_nodes) for e in plan.events)}"
        return plan.revise(reason="r", observation="o", add=[step(new, [other])])
    if move == "finish":
        plan.transition(sid, ACTIVE)
        return plan.transition(sid, DONE, evidence="log")
    kw = {"reason": "r"} if careful or move != "pending" else {}
    if move == "done" and careful:
        kw["evidence"] = "log"
    return plan.transition(sid, move, **kw)


@given(MOVES)
def test_random_moves_keep_the_invariants(moves):
    plan = Plan("g", [step("a"), step("b", "a"), step("c", "a"), step("d", "bc"), step("e")])
    for sid, move, other, careful in moves:
        before = snapshot(plan)
        try:
            apply(plan, sid, move, other, careful)
        except (TransitionError, RevisionError, ValueError) as error:
            assert snapshot(plan) == before
            # A ValueError that is neither of the two is a bad argument: an unknown step.
            if not isinstance(error, (TransitionError, RevisionError)):
                assert "unknown step" in str(error)
            continue
        assert len(plan.events) > len(before[1])
        states = {s.id: s.state for s in plan.steps}
        for s in plan.steps:
            if s.state is DONE:
                assert s.evidence
            if s.state in (ACTIVE, DONE):
                assert all(states[d] is DONE for d in s.depends_on)
        assert set(plan.invariants) <= set(states)
        topological_order(plan.graph())  # raises on a cycle
        assert plan.ready() == tuple(
            s.id
            for s in plan.steps
            if s.state is PENDING and all(states[d] is DONE for d in s.depends_on)
        )
        p = plan.progress()
        assert p.current_done == list(states.values()).count(DONE)
    assert [e.seq for e in plan.events] == list(range(len(plan.events)))


def test_a_copy_and_its_original_go_their_own_ways():
    """What one of the two does later (a transition, a revision adding a step and an
    invariant) leaves the other's steps, log, ids and invariants as they were."""
    plan = Plan(
        "g",
        [
            Step("a", "do a", verification="a ok"),
            Step("b", "do b", depends_on=["a"], verification="b ok"),
        ],
        clock=iter(range(100)).__next__,
    )
    plan.transition("a", ACTIVE)
    twin = plan.copy(clock=lambda: 50.0)
    before = (plan.steps, plan.events, plan.invariants, plan.progress())
    twin.transition("a", DONE, evidence="checked")
    twin.revise(
        reason="b needs c",
        observation="b's input lacks c",
        add=[Step("c", "do c", verification="c ok", invariant=True)],
        add_edges=[("c", "b")],
        remove=[],
    )
    assert (plan.steps, plan.events, plan.invariants, plan.progress()) == before
    assert [e.time for e in twin.events] == [0, 50, 50] and twin.invariants == ("b", "c")
    plan.transition("a", BLOCKED, reason="waiting")
    assert twin.step("a").state is DONE and len(twin.events) == 3
    with pytest.raises(ValueError, match=r"clock must be callable, got 3"):
        plan.copy(clock=3)
