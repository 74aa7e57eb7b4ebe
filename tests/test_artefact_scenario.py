"""Each student's own plan artefact (notebook 6): drawn from the id alone, always valid, every
situation part A asks about present, and answers that differ between students."""

from __future__ import annotations

import collections
import dataclasses

import numpy as np
import pytest

from decompkit.artefact import DONE, PENDING, RevisionError
from decompkit.exercises import harness
from decompkit.exercises.artefact_scenario import (
    ACCEPTED_KINDS,
    REFUSED_KINDS,
    Artefact,
    draw_artefact,
    refuses,
)
from decompkit.exercises.params import params

IDS = [f"s{number:04d}" for number in range(60)]
PART_A = ("ready_now", "moves", "refused", "progress_original", "progress_current")


def _canonical(value):
    if isinstance(value, dict):
        return tuple(sorted(value.items()))
    if isinstance(value, set):
        return tuple(sorted(value))
    return round(value, 9)


def test_the_same_generator_state_gives_the_same_artefact():
    first = draw_artefact(np.random.default_rng(7))
    assert first == draw_artefact(np.random.default_rng(7))
    assert first != draw_artefact(np.random.default_rng(8))
    assert repr(first).startswith("Artefact('Ship ") and "steps)" in repr(first)


@pytest.mark.parametrize("seed", range(300))
def test_every_draw_plays_and_its_kinds_match_the_plan(seed):
    A = draw_artefact(np.random.default_rng(seed))
    labels = [label for label, *_ in A.stages()]
    assert labels == ["plan accepted", "frontier", "plan revised"]
    assert 5 <= len(A.steps) <= 9
    revised = A.plan_at("plan revised")
    assert revised.events[-1].kind == "revision" and revised.events[-1].structural
    assert 1 <= revised.progress().added <= 3
    assert A.move_step in revised.ready() and A.move_step not in revised.invariants
    for label, pairs, kind in A.proposals:  # the kind is what the plan itself says
        assert kind in REFUSED_KINDS + ACCEPTED_KINDS
        assert refuses(A, pairs) == (kind in REFUSED_KINDS), label


def test_a_refused_proposal_leaves_the_plan_as_it_was():
    A = draw_artefact(np.random.default_rng(3))
    label, pairs, _ = next(p for p in A.proposals if p[2] in REFUSED_KINDS)
    plan = A.plan_at("plan revised")
    before = plan.steps
    with pytest.raises(RevisionError):
        plan.revise(reason="try", observation=label, **harness.revisions(_P(A))[label])
    assert plan.steps == before


def _P(A: Artefact):
    return dataclasses.replace(harness.HarnessParams(), artefact=A)


def test_without_an_id_part_a_is_the_lectures_migration():
    key = harness.key(params("harness"))
    assert key["ready_now"] == {"patch_reporting", "patch_etl"}
    assert (round(key["progress_original"], 4), round(key["progress_current"], 4)) == (
        0.8333,
        0.5556,
    )
    assert list(key["moves"]) == list(harness.MOVES)
    assert set(key["refused"]) < set(harness.REVISIONS)
    assert harness.move_step(params("harness")) == "patch_etl"


@pytest.mark.parametrize("who", IDS[:20])
def test_a_students_part_a_has_every_situation_it_asks_about(who):
    P = params("harness", who)
    key = harness.key(P)
    frontier = harness.frontier_plan(P)
    assert key["ready_now"] and any(s.state is DONE for s in frontier.steps)
    assert any(  # a pending step that may not start yet: the frontier is not every step
        s.state is PENDING and s.id not in key["ready_now"] for s in frontier.steps
    )
    assert set(key["moves"].values()) == {"legal", "illegal"}
    assert 2 <= len(key["refused"]) <= len(harness.revisions(P)) - 2
    assert key["progress_current"] < key["progress_original"]
    assert harness.degenerate(P) == []


@pytest.mark.slow  # 60 students' plans played through
def test_part_as_answers_differ_between_students():
    """Over 60 ids, each item of part A has at least 5 answers, none held by a third."""
    keys = [harness.key(params("harness", who)) for who in IDS]
    for item in PART_A:
        counts = collections.Counter(_canonical(k[item]) for k in keys)
        assert len(counts) >= 5, (item, len(counts))
        assert counts.most_common(1)[0][1] <= len(IDS) // 3, (item, counts.most_common(1))


def test_a_visible_check_names_the_mistake_on_the_students_own_plan():
    P = params("harness", "s0003")
    key = harness.key(P)
    frontier = harness.frontier_plan(P)
    waiting = next(
        s.id
        for s in frontier.steps
        if s.state is PENDING and any(frontier.step(d).state is not DONE for d in s.depends_on)
    )
    assert harness.judge("ready_now", key["ready_now"] | {waiting}, P).mistake == (
        "waits_for_undone"
    )
    added = next(label for label, _, kind in P.artefact.proposals if kind == "add")
    assert harness.judge("refused", key["refused"] | {added}, P).mistake == "refused_an_addition"
    illegal = next(m for m, v in key["moves"].items() if v == "illegal")
    verdict = harness.judge("moves", key["moves"] | {illegal: "legal"}, P)
    assert verdict.status == "off" and harness.move_hints(P)[illegal] in verdict.message
    assert harness.judge("progress_original", key["progress_current"], P).mistake == (
        "used_current_plan"
    )
