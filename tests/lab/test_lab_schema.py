"""Typed plans (decompkit.lab.schema): the schema check, the structure check, placeholders."""

import pytest
from pydantic import ValidationError

from decompkit.lab.models import PLANS
from decompkit.lab.schema import Quote, TypedPlan, check_plan, plan_problems, substitute
from decompkit.lab.tools import TOOLS
from decompkit.plan import PlanError, placeholder_edges


def plan(name):
    return TypedPlan(goal=name, steps=PLANS[name])


# --- the schema: format faults only -----------------------------------------------------------


@pytest.mark.parametrize(
    "step",
    [
        {"id": "E1", "tool": "search", "args": {"query": "q"}, "depends_on": "E0"},  # str, not list
        {"id": "E1", "tool": "search", "args": {"query": 3}},  # a number where text belongs
        {"id": "E1", "tool": "search", "args": "q"},  # args must be a mapping
        {"id": "E1", "args": {"query": "q"}},  # no tool
        {"id": "E1", "tool": "search", "args": {}, "why": "x"},  # an unknown key
    ],
)
def test_schema_rejects_malformed_steps(step):
    with pytest.raises(ValidationError):
        TypedPlan.model_validate({"goal": "g", "steps": [step]})


def test_schema_accepts_structurally_wrong_plans():
    # Format and structure are separate checks: a cycle is perfectly well-formed.
    for name in ("cycle", "unknown_tool", "contradiction", "broken"):
        assert TypedPlan.model_validate({"goal": "g", "steps": PLANS[name]}).steps


def test_as_dict_round_trips():
    p = plan("quotes")
    assert TypedPlan.model_validate(p.as_dict()) == p
    assert p.as_dict()["steps"][6] == PLANS["quotes"][6]


def test_step_lookup():
    assert plan("quotes").step("E7").tool == "compare"
    with pytest.raises(ValueError, match="sid must name a step of the plan, got 'E9'"):
        plan("quotes").step("E9")


@pytest.mark.parametrize(
    "data",
    [
        {"supplier": "Q", "price_eur": 0, "units": 500},
        {"supplier": "Q", "price_eur": 3.95, "units": 2.5},
        {"supplier": "Q", "price_eur": 3.95},
    ],
)
def test_quote_schema_rejects(data):
    with pytest.raises(ValidationError):
        Quote.model_validate(data)


# --- the structure check -----------------------------------------------------------------------


def test_good_plan_has_no_problem_and_its_graph_is_the_placeholder_graph():
    p = plan("quotes")
    assert plan_problems(p, TOOLS) == []
    graph = check_plan(p, TOOLS)
    assert graph == placeholder_edges(p.as_dict())
    assert graph["E7"] == ("E4", "E5", "E6")


@pytest.mark.parametrize(
    ("name", "kinds"),
    [
        ("unknown_tool", ["unknown_tool"]),
        ("cycle", ["cycle"]),
        ("contradiction", ["placeholder_without_dependency"]),
        ("broken", ["unknown_tool", "cycle", "dependency_without_placeholder"]),
    ],
)
def test_every_structural_fault_is_found(name, kinds):
    assert [p.kind for p in plan_problems(plan(name), TOOLS)] == kinds
    with pytest.raises(PlanError) as caught:
        check_plan(plan(name), TOOLS)
    assert caught.value.kinds() == kinds


def test_problem_details():
    problems = {p.kind: p for p in plan_problems(plan("broken"), TOOLS)}
    assert "did you mean 'fetch_page'?" in problems["unknown_tool"].message
    cycle = problems["cycle"].steps
    assert cycle[0] == cycle[-1] and set(cycle) == {"E5", "E6"}
    assert problems["dependency_without_placeholder"].steps == ("E3", "E2")
    contradiction = plan_problems(plan("contradiction"), TOOLS)[0]
    assert contradiction.steps == ("E7", "E6")


def test_a_problem_both_checks_find_is_listed_once():
    data = {"goal": "g", "steps": [dict(PLANS["quotes"][0]), dict(PLANS["quotes"][0])]}
    kinds = [p.kind for p in plan_problems(data, TOOLS)]
    assert kinds == ["duplicate_id"]


def test_plan_problems_reads_plain_data_and_max_steps():
    assert plan_problems(plan("quotes").as_dict(), TOOLS) == []
    assert [p.kind for p in plan_problems(plan("quotes"), TOOLS, max_steps=6)] == ["size"]


def test_plan_problems_rejects_other_inputs():
    with pytest.raises(ValueError, match="plan must be a TypedPlan or a mapping, got list"):
        plan_problems([1, 2], TOOLS)
    with pytest.raises(ValueError, match="max_steps must be an integer >= 1, got 0"):
        plan_problems(plan("quotes"), TOOLS, max_steps=0)


# --- placeholders ------------------------------------------------------------------------------


def test_substitute_nested_and_both_forms():
    evidence = {"E1": "one", "E2": "two"}
    args = {"a": "#E1 and #E2", "b": ["#E2", {"c": "$1"}], "d": "${2}!"}
    assert substitute(args, evidence) == {
        "a": "one and two",
        "b": ["two", {"c": "one"}],
        "d": "two!",
    }


def test_substitute_reads_longest_number():
    evidence = {f"E{k}": str(k) for k in range(1, 13)}
    assert substitute("#E12/#E1", evidence) == "12/1"


def test_substitute_by_position_when_no_id_matches():
    assert substitute("$2", {"a": "x", "b": "y"}) == "y"
    assert substitute("#E1", {"s1": "first"}, ids=["s1"]) == "first"


def test_substitute_errors():
    with pytest.raises(ValueError, match=r"placeholder '#E3' names no step of the plan"):
        substitute("#E3", {"E1": "x"})
    with pytest.raises(ValueError, match=r"placeholder '#E2' reads 'E2', which has no output"):
        substitute("#E2", {"E1": "x"}, ids=["E1", "E2"])


@pytest.mark.parametrize(
    ("evidence", "ids", "match"),
    [
        (None, None, r"^evidence must be a mapping \{step id: output\}, got None$"),
        ([("E1", "x")], None, r"^evidence must be a mapping .*, got \[\('E1', 'x'\)\]$"),
        ({"E1": "x"}, 5, r"^ids must be None or an iterable of step ids, got 5$"),
        ({"E1": "x"}, "E1", r"^ids must be None or an iterable of step ids, got 'E1'$"),
    ],
)
def test_substitute_refuses_evidence_or_ids_of_the_wrong_kind(evidence, ids, match):
    # These were bare TypeErrors naming no argument (or, for a str, its letters as ids).
    with pytest.raises(ValueError, match=match):
        substitute("#E1", evidence, ids)


def test_substitution_follows_the_edges_the_kit_reads():
    # Every placeholder the worker resolves is an edge of placeholder_edges, and vice versa.
    p = plan("quotes")
    edges = placeholder_edges(p.as_dict())
    ids = [s.id for s in p.steps]
    for step in p.steps:
        marked = {sid: f"<{sid}>" for sid in ids}
        text = str(substitute(step.args, marked, ids))
        assert {sid for sid in ids if f"<{sid}>" in text} == set(edges[step.id])
