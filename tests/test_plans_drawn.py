"""Notebook 03's own plans and versions per student (plans_library, plans_placements, plans).

Figures -> properties over many ids -> bad input, as the house style orders them.
"""

from __future__ import annotations

import collections
import dataclasses
import difflib
import json
import re

import numpy as np
import pytest

from decompkit import architectures
from decompkit.exercises import plans
from decompkit.exercises.params import params
from decompkit.exercises.plans_library import (
    KINDS_PLAN_DEFECTS,
    MISSPELT,
    TOPICS,
    DrawnPlan,
    broken_plan,
    research_plan,
)
from decompkit.exercises.plans_placements import VERSIONS, placement, version
from decompkit.plan import PlanError, edge_contradictions, placeholder_edges, validate_plan

IDS = [f"s{number:04d}" for number in range(60)]
LECTURE = plans.PlansParams()


@pytest.fixture(scope="module")
def drawn():
    return [params("plans", who) for who in IDS]


def _canonical(value) -> str:
    if isinstance(value, (set, frozenset)):
        return repr(sorted(map(repr, value)))
    return json.dumps(value, sort_keys=True, default=repr)


# -- the lecture's plans and placements ------------------------------------------------------


def test_without_an_id_the_lecture_plans_and_placements_are_used():
    assert params("plans") == LECTURE
    assert (LECTURE.plan_kinds, LECTURE.plan_cycle) == ("price_check", "release_notes")
    key = plans.key(LECTURE)
    for item, name in plans.PLACEMENTS.items():
        assert key[item] == architectures.placement(name)
    assert sorted(key["cycle_b"]) == ["s3", "s4", "s5", "s6"]
    assert key["listed_unread"] == {("t3", "t2")}


# -- every student's own ---------------------------------------------------------------------


def test_every_graded_item_has_many_answers_over_60_ids(drawn):
    """At least 5 answers per item, none held by more than a third of the class, the lecture's
    own by at most one in ten (a set of two or three kinds, or a pair or two, may coincide)."""
    lecture = plans.key(LECTURE)
    for item in lecture:
        answers = collections.Counter(_canonical(plans.key(P)[item]) for P in drawn)
        assert len(answers) >= 5, (item, len(answers))
        assert answers.most_common(1)[0][1] <= len(IDS) // 3, (item, answers.most_common(1))
        assert answers[_canonical(lecture[item])] <= len(IDS) // 10, item


@pytest.mark.slow  # 60 students' plans, each put in a classmate's place
def test_every_drawn_field_moves_its_answers(drawn):
    """Every drawn plan (and version) is read: some classmate's in its place changes an answer;
    and two students' answers coincide for at most one pair in five."""
    moved = {
        "plan_kinds": ("kinds_a", "fixed_plan"),
        "plan_cycle": ("cycle_b",),
        "plan_rewoo": ("rewoo_edges",),
        "plan_compiler": ("reads_unlisted", "listed_unread"),
    }
    same = collections.Counter()
    for n, P in enumerate(drawn):
        key = plans.key(P)
        for field, items in moved.items():
            changed = []
            for other in drawn[n + 1 : n + 11] or drawn[:10]:
                swapped = plans.key(dataclasses.replace(P, **{field: getattr(other, field)}))
                changed.append(any(swapped[i] != key[i] for i in items))
            assert any(changed), (field, P)
            same[field] += changed.count(False) / len(changed)
        for k, item in enumerate(plans.PLACEMENTS):
            versions = list(P.versions)
            versions[k] = versions[k] % len(VERSIONS[plans.PLACEMENTS[item]]) + 1
            swapped = plans.key(dataclasses.replace(P, versions=tuple(versions)))
            assert swapped[item] != key[item], item
    assert max(same.values()) <= len(IDS) / 5, same


def test_a_classmates_answers_are_judged_wrong(drawn):
    for P, other in zip(drawn, drawn[1:], strict=False):
        mine, theirs = plans.key(P), plans.key(other)
        for item in mine:
            if _canonical(mine[item]) == _canonical(theirs[item]):
                continue
            assert plans.judge(item, theirs[item], P).status != "ok", (item, P)
            assert plans.judge(item, mine[item], P).status == "ok", (item, P)


def test_the_plans_show_what_each_question_asks_about(drawn):
    for P in drawn:
        assert plans.degenerate(P) == []
        kinds = [p.kind for p in plans.problems(P.plan_kinds, P)]
        assert len(set(kinds)) >= 2 and set(kinds) <= set(KINDS_PLAN_DEFECTS)
        cycle = [p.steps for p in plans.problems(P.plan_cycle, P)]
        assert len(cycle) == 1 and 3 <= len(cycle[0]) <= 6  # 2 to 5 steps, the first repeated
        for name in (P.plan_kinds, P.plan_cycle, P.plan_rewoo, P.plan_compiler):
            assert 5 <= len(plans.plan(name)["steps"]) <= P.max_steps
            assert isinstance(name, DrawnPlan) and "your plan" in repr(name)


def test_every_kind_of_defect_is_drawn_and_the_kinds_plan_is_repairable():
    rng = np.random.default_rng(7)
    seen = collections.Counter()
    for _ in range(300):
        name = broken_plan(rng, TOPICS[int(rng.integers(len(TOPICS)))])
        P = dataclasses.replace(LECTURE, plan_kinds=name)
        found = {p.kind for p in plans.problems(name, P)}
        seen.update(found)
        assert plans.repair_problems(plans.key(P)["fixed_plan"], P) == ""
    assert set(seen) == set(KINDS_PLAN_DEFECTS), seen


def test_a_repeated_id_may_take_a_fresh_one_but_no_other_id_changes(drawn):
    P = next(p for p in drawn if "duplicate_id" in plans.key(p)["kinds_a"])
    fixed = plans.key(P)["fixed_plan"]
    assert plans.repair_problems(fixed, P) == ""
    first = fixed["steps"][0]["id"]
    fixed["steps"][0]["id"] = first + "x"
    assert plans.repair_problems(fixed, P).startswith("keep every step, its id")


def test_a_research_plan_is_consistent_and_the_same_for_the_same_generator():
    for seed in range(50):
        plan = research_plan(np.random.default_rng(seed), TOPICS[seed % len(TOPICS)])
        again = research_plan(np.random.default_rng(seed), TOPICS[seed % len(TOPICS)])
        assert plan == again
        assert edge_contradictions(plan) == []
        graph = validate_plan(plan, LECTURE.tools, max_steps=8)
        assert list(graph) == [s["id"] for s in plan["steps"]]
        rewoo = research_plan(np.random.default_rng(seed), TOPICS[0], "rewoo")
        assert all("depends_on" not in s for s in rewoo["steps"])
        assert placeholder_edges(rewoo)[rewoo["steps"][-1]["id"]]


def test_each_misspelt_tool_is_closest_to_its_own():
    for tool, wrong in MISSPELT.items():
        for name in wrong:
            assert name not in LECTURE.tools
            assert difflib.get_close_matches(name, LECTURE.tools, n=1, cutoff=0) == [tool]


# -- the versions of the architectures -------------------------------------------------------


def _norm(text: str) -> str:
    return re.sub(r"[\s_-]+", " ", text).strip().lower()


def test_a_version_changes_cells_from_the_vocabulary_and_its_sentence_never_names_them():
    for name, versions in VERSIONS.items():
        assert len(versions) >= 4
        for index in range(1, len(versions) + 1):
            changes = version(name, index).changes
            assert changes
            for dim, choice in changes.items():
                assert choice in architectures.CHOICES[dim]
                assert choice != architectures.PLACEMENT[name][dim]
                assert _norm(choice) not in _norm(version(name, index).sentence)
        assert len({tuple(sorted(placement(name, i).items())) for i in range(6)}) == 6


def test_the_published_placement_of_a_changed_version_is_off_with_a_pointing_hint():
    P = dataclasses.replace(LECTURE, versions=(3, 1, 1, 1, 1))
    verdict = plans.judge("placement_rewoo", architectures.placement("ReWOO"), P)
    assert verdict.status == "off"
    assert "execution_order: your version differs" in verdict.message
    assert "parallel ready set" not in verdict.message
    assert plans.judge("placement_rewoo", placement("ReWOO", 1), P).status == "ok"
    assert "written by the programmer" not in plans.your_version("plan and execute", P)
    assert plans.your_version("ReWOO", LECTURE).endswith("(the lecture's own).")


# -- bad input --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: version("ReWOO", 6), r"index must be an int in \[0, 5\], got 6"),
        (lambda: version("ReWOO", -1), r"index must be an int in \[0, 5\], got -1"),
        (lambda: version("ReACT", 1), r"architecture must be one of .*, got 'ReACT'"),
        (lambda: research_plan(np.random.default_rng(0), TOPICS[0], "json"), "style must be"),
        (lambda: plans.plan("no_such_plan"), r"plan must be one of .*, got 'no_such_plan'"),
    ],
)
def test_bad_input_is_refused_with_the_value(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_a_malformed_depends_on_is_shown_as_written_and_reported():
    plan = {
        "steps": [
            {"id": "s1", "tool": "search", "args": {"query": "x"}, "depends_on": []},
            {"id": "s2", "tool": "fetch_page", "args": {"url": "$1"}, "depends_on": "s1"},
        ]
    }
    assert re.search(r"s2\s+fetch_page\s+'s1'\s+\{'url'", plans.steps_table(plan))
    with pytest.raises(PlanError) as error:
        validate_plan(plan, LECTURE.tools)
    assert error.value.kinds() == ["malformed"]
