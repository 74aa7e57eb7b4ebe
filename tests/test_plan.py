"""decompkit.plan: a bank of broken plans, placeholders as edges, and properties."""

import copy
from itertools import pairwise

import pytest
from hypothesis import given
from hypothesis import strategies as st

from decompkit import plan as pl

TOOLS = {"search", "summarise", "calculator", "llm"}


def step(sid, tool="search", args=None, depends_on=()):
    return {
        "id": sid,
        "tool": tool,
        "args": {} if args is None else args,
        "depends_on": list(depends_on),
    }


def good_plan():
    return {
        "steps": [
            step("s1", "search", {"q": "capital of France"}),
            step("s2", "search", {"q": "population of $1"}, ["s1"]),
            step("s3", "calculator", {"expr": "$2 / 1e6"}, ["s2"]),
            step("s4", "summarise", {"text": ["$1", "$3"]}, ["s1", "s3"]),
        ]
    }


def problems_of(plan, tools=TOOLS, **kwargs):
    with pytest.raises(pl.PlanError) as info:
        pl.validate_plan(plan, tools, **kwargs)
    return info.value.problems


def rotations_equal(cycle, expected):
    """Cycles compare up to rotation; both have their first node repeated at the end."""
    a, b = list(cycle[:-1]), list(expected[:-1])
    return len(a) == len(b) and any(a[k:] + a[:k] == b for k in range(len(a)))


# --- a valid plan --------------------------------------------------------------------------


def test_valid_plan_gives_its_dependency_graph():
    assert pl.validate_plan(good_plan(), TOOLS) == {
        "s1": (),
        "s2": ("s1",),
        "s3": ("s2",),
        "s4": ("s1", "s3"),
    }


def test_repeated_dependency_is_listed_once_and_extra_keys_are_ignored():
    plan = good_plan()
    plan["steps"][3]["depends_on"] = ["s1", "s3", "s1"]
    plan["steps"][0]["thought"] = "look it up first"
    assert pl.validate_plan(plan, TOOLS)["s4"] == ("s1", "s3")


def test_tools_may_be_a_mapping_and_args_a_list_or_str():
    plan = {"steps": [step("a", "search", ["x"]), step("b", "llm", "use #E1", ["a"])]}
    assert pl.validate_plan(plan, {"search": print, "llm": print}) == {"a": (), "b": ("a",)}


def test_validation_does_not_mutate_the_plan():
    plan = good_plan()
    before = copy.deepcopy(plan)
    pl.validate_plan(plan, TOOLS)
    assert plan == before


# --- the bank of broken plans: each problem reported with the offending ids ----------------


def test_empty_plan():
    (problem,) = problems_of({"steps": []})
    assert problem.kind == "size" and "no steps" in problem.message


def test_oversized_plan_names_the_bound():
    plan = {"steps": [step(f"s{i}") for i in range(21)]}
    (problem,) = problems_of(plan)
    assert problem.kind == "size"
    assert problem.message == "plan has 21 steps, more than max_steps=20"
    assert pl.validate_plan(plan, TOOLS, max_steps=21)["s20"] == ()


def test_plan_at_exactly_max_steps_is_accepted():
    plan = {"steps": [step(f"s{i}") for i in range(3)]}
    assert len(pl.validate_plan(plan, TOOLS, max_steps=3)) == 3


def test_duplicate_id():
    plan = good_plan()
    plan["steps"].append(step("s2", "llm"))
    (problem,) = problems_of(plan)
    assert problem.kind == "duplicate_id" and problem.steps == ("s2",)
    assert "(steps 2 and 5)" in problem.message


def test_unknown_tool_message_and_hint():
    plan = good_plan()
    plan["steps"][2] = step("s3", "serch", {"q": "$2"}, ["s2"])
    (problem,) = problems_of(plan)
    assert problem.kind == "unknown_tool" and problem.steps == ("s3",)
    assert problem.message.startswith("unknown tool 'serch' in step 's3'")
    assert "did you mean 'search'" in problem.message
    with pytest.raises(pl.PlanError, match="unknown tool 'serch' in step 's3'"):
        pl.validate_plan(plan, TOOLS)


def test_unknown_tool_without_close_match_has_no_hint():
    (problem,) = problems_of({"steps": [step("a", "teleport")]})
    assert problem.message == "unknown tool 'teleport' in step 'a'"


def test_dangling_dependency():
    plan = good_plan()
    plan["steps"][3]["depends_on"] = ["s1", "s9"]
    (problem,) = problems_of(plan)
    assert problem.kind == "unknown_dependency" and problem.steps == ("s4", "s9")
    assert "'s4' depends on 's9'" in problem.message


def test_cycle_is_named():
    plan = good_plan()
    plan["steps"][0]["depends_on"] = ["s3"]  # s1 -> s2 -> s3 -> s1
    (problem,) = problems_of(plan)
    assert problem.kind == "cycle"
    assert rotations_equal(problem.steps, ("s1", "s2", "s3", "s1"))
    assert "cycle" in problem.message and "'s3'" in problem.message


def test_self_dependency_is_a_cycle_of_one():
    plan = good_plan()
    plan["steps"][1]["depends_on"] = ["s1", "s2"]
    (problem,) = problems_of(plan)
    assert problem.kind == "cycle" and problem.steps == ("s2", "s2")


@pytest.mark.parametrize(
    ("bad_step", "fragment"),
    [
        ("s3", "step at position 2 must be a mapping, got 's3'"),
        ({"id": "x", "tool": "search", "args": {}}, "step 'x' is missing the key 'depends_on'"),
        ({"tool": "search", "args": {}, "depends_on": []}, "position 2 is missing the key 'id'"),
        (step(7), "has id 7; an id must be a non-empty str"),
        (step(""), "has id ''; an id must be a non-empty str"),
        (step("x", tool=None), "step 'x' has tool None"),
        (step("x", args=3), "step 'x' has args 3; args must be a mapping, a list or a str"),
        ({**step("x"), "depends_on": "s1"}, "step 'x' has depends_on 's1'"),
        ({**step("x"), "depends_on": [1]}, "it must be a list of step ids"),
    ],
)
def test_malformed_step(bad_step, fragment):
    plan = {"steps": [step("s1"), bad_step]}
    (problem,) = problems_of(plan)
    assert problem.kind == "malformed"
    assert fragment in problem.message


@pytest.mark.parametrize(
    ("plan", "match"),
    [
        (["s1"], "plan must be a mapping with a 'steps' list, got \\['s1'\\]"),
        ({"plan": []}, "plan must be a mapping with a 'steps' list"),
        ({"steps": "s1, s2"}, "plan\\['steps'\\] must be a list, got 's1, s2'"),
    ],
)
def test_malformed_plan(plan, match):
    with pytest.raises(pl.PlanError, match=match) as info:
        pl.validate_plan(plan, TOOLS)
    assert info.value.kinds() == ["malformed"]


def test_several_problems_at_once_are_all_listed():
    plan = {
        "steps": [
            step("s1", "search", depends_on=["s3"]),
            step("s2", "serch", depends_on=["s1"]),
            step("s3", "llm", depends_on=["s2", "ghost"]),
            step("s2", "llm"),
            {"id": "s5", "tool": "llm"},
        ]
    }
    problems = problems_of(plan, max_steps=4)
    found = {(p.kind, p.steps[:2] if p.kind != "cycle" else "cycle") for p in problems}
    assert found == {
        ("malformed", ("s5",)),
        ("size", ()),
        ("duplicate_id", ("s2",)),
        ("unknown_tool", ("s2",)),
        ("unknown_dependency", ("s3", "ghost")),
        ("cycle", "cycle"),
    }
    assert sum(p.kind == "malformed" for p in problems) == 2  # s5 lacks args and depends_on
    (cycle,) = [p for p in problems if p.kind == "cycle"]
    assert rotations_equal(cycle.steps, ("s1", "s2", "s3", "s1"))
    message = str(pl.PlanError(problems))
    assert message.startswith(f"plan has {len(problems)} problems:")
    assert all(p.message in message for p in problems)


def test_overlapping_problems_are_all_listed():
    # The second s2 repeats an id and depends on a missing step: both are reported.
    plan = {
        "steps": [
            {"id": "s1", "tool": "serch", "args": {}, "depends_on": ["s2"]},
            {"id": "s2", "tool": "search", "args": {"q": "$s1"}, "depends_on": ["s1"]},
            {"id": "s2", "tool": "search", "args": {}, "depends_on": ["s9"]},
        ]
    }
    problems = problems_of(plan, {"search": None})
    assert [p.kind for p in problems] == [
        "duplicate_id",
        "unknown_tool",
        "unknown_dependency",
        "cycle",
    ]
    (dangling,) = [p for p in problems if p.kind == "unknown_dependency"]
    assert dangling.steps == ("s2", "s9")
    (cycle,) = [p for p in problems if p.kind == "cycle"]
    assert rotations_equal(cycle.steps, ("s1", "s2", "s1"))


def test_a_malformed_step_is_still_checked_for_its_other_problems():
    bad = {"id": "x", "tool": "serch", "args": 3, "depends_on": ["s9"]}
    problems = problems_of({"steps": [step("s1"), bad]})
    assert [(p.kind, p.steps) for p in problems] == [
        ("malformed", ("x",)),
        ("unknown_tool", ("x",)),
        ("unknown_dependency", ("x", "s9")),
    ]
    # A step without a usable id is named by its position.
    problems = problems_of({"steps": [{"id": 7, "tool": "serch", "args": {}, "depends_on": []}]})
    assert [(p.kind, p.steps) for p in problems] == [
        ("malformed", ("#1",)),
        ("unknown_tool", ("#1",)),
    ]


def test_a_dependency_on_a_malformed_step_is_not_dangling():
    plan = {"steps": [step("s1", args=3), step("s2", depends_on=["s1"])]}
    (problem,) = problems_of(plan)
    assert (problem.kind, problem.steps) == ("malformed", ("s1",))
    # A malformed step still takes part in a cycle.
    plan = {"steps": [step("s1", args=3, depends_on=["s2"]), step("s2", depends_on=["s1"])]}
    assert [p.kind for p in problems_of(plan)] == ["malformed", "cycle"]


def test_a_repeated_id_of_a_malformed_step_is_reported():
    plan = {"steps": [step("s1"), {"id": "s1", "tool": "search"}]}
    assert sorted(p.kind for p in problems_of(plan)) == [
        "duplicate_id",
        "malformed",
        "malformed",
    ]


def test_one_problem_reads_in_the_singular():
    assert str(pl.PlanError([pl.PlanProblem("size", (), "plan has no steps")])).startswith(
        "plan has 1 problem:"
    )


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"tools": "search"}, "tools must be a collection of tool names, not the str 'search'"),
        ({"tools": 3}, "tools must be a collection of tool names, got 3"),
        ({"tools": TOOLS, "max_steps": 0}, "max_steps must be an integer >= 1, got 0"),
        ({"tools": TOOLS, "max_steps": 2.5}, "max_steps must be an integer >= 1, got 2.5"),
    ],
)
def test_bad_arguments_of_the_caller(kwargs, match):
    with pytest.raises(ValueError, match=match):
        pl.validate_plan(good_plan(), **kwargs)


# --- placeholders are edges ----------------------------------------------------------------


def rewoo_plan():
    return {
        "steps": [
            {"id": "E1", "tool": "search", "args": "capital of France", "depends_on": []},
            {"id": "E2", "tool": "search", "args": "population of #E1", "depends_on": ["E1"]},
            {
                "id": "E3",
                "tool": "llm",
                "args": {"question": ["compare #E1", {"with": "#E2 and #E1"}]},
                "depends_on": ["E1", "E2"],
            },
        ]
    }


def test_rewoo_placeholders_nested_in_lists_and_mappings():
    assert pl.placeholder_edges(rewoo_plan()) == {"E1": (), "E2": ("E1",), "E3": ("E1", "E2")}
    assert pl.edge_contradictions(rewoo_plan()) == []


def test_placeholders_agree_with_validate_plan_on_an_honest_plan():
    plan = good_plan()
    assert pl.placeholder_edges(plan) == pl.validate_plan(plan, TOOLS)


def test_llmcompiler_placeholders_by_position_and_braces():
    plan = {
        "steps": [
            {"id": "a", "args": []},
            {"id": "b", "args": ["${1}"]},
            {"id": "c", "args": ["$2 then $1, again $2"]},
        ]
    }
    assert pl.placeholder_edges(plan) == {"a": (), "b": ("a",), "c": ("b", "a")}


def test_digits_are_read_whole():
    plan = {"steps": [{"id": f"E{k}", "args": []} for k in range(1, 13)]}
    plan["steps"][11]["args"] = ["#E1", "#E12x"]
    plan["steps"][10]["args"] = "$10"
    edges = pl.placeholder_edges(plan)
    assert edges["E12"] == ("E1", "E12")  # #E12 is step 12 (here a self-reference)
    assert edges["E11"] == ("E10",)  # "$10" reads position 10, whose id is "E10"


def test_an_exact_id_wins_over_a_position():
    plan = {"steps": [{"id": "2", "args": []}, {"id": "1", "args": []}, {"id": "x", "args": "$1"}]}
    # "$1" names the step whose id is "1" (the second step), not the first step.
    assert pl.placeholder_edges(plan)["x"] == ("1",)


def test_an_id_written_with_its_sign_is_matched_first():
    plan = {
        "steps": [{"id": "#E2", "args": []}, {"id": "#E1", "args": []}, {"id": "x", "args": "#E1"}]
    }
    assert pl.placeholder_edges(plan)["x"] == ("#E1",)


def test_malformed_step_whose_id_starts_with_a_hash_is_named_by_its_id():
    (problem,) = problems_of({"steps": [{"id": "#E1", "tool": "llm", "args": {}}]})
    assert problem.message == "step '#E1' is missing the key 'depends_on'"


def test_unknown_reference_is_an_error():
    plan = rewoo_plan()
    plan["steps"][2]["args"] = "compare #E7"
    with pytest.raises(
        pl.PlanError, match="step 'E3' refers to '#E7', which names no step"
    ) as info:
        pl.placeholder_edges(plan)
    assert info.value.kinds() == ["unknown_reference"]
    assert info.value.problems[0].steps == ("E3",)


def test_placeholder_edges_needs_ids_and_args():
    with pytest.raises(pl.PlanError, match="missing the key 'args'"):
        pl.placeholder_edges({"steps": [{"id": "a"}]})
    with pytest.raises(pl.PlanError, match="step id 'a' is used more than once"):
        pl.placeholder_edges({"steps": [{"id": "a", "args": []}, {"id": "a", "args": []}]})


def test_contradictions_in_both_directions():
    plan = good_plan()
    plan["steps"][2]["depends_on"] = ["s1"]  # reads $2 but lists s1
    plan["steps"][3]["depends_on"] = ["s3"]  # reads $1 and $3 but lists only s3
    found = [(p.kind, p.steps) for p in pl.edge_contradictions(plan)]
    assert found == [
        ("placeholder_without_dependency", ("s3", "s2")),
        ("dependency_without_placeholder", ("s3", "s1")),
        ("placeholder_without_dependency", ("s4", "s1")),
    ]
    messages = [p.message for p in pl.edge_contradictions(plan)]
    assert messages[0] == "step 's3' reads '$2' (step 's2') but its depends_on does not list it"
    assert messages[1] == "step 's3' lists 's1' in depends_on but no argument refers to it"


def test_contradictions_need_depends_on():
    with pytest.raises(pl.PlanError, match="missing the key 'depends_on'"):
        pl.edge_contradictions({"steps": [{"id": "a", "args": []}]})


# --- the lecture's figure -------------------------------------------------------------------


def test_blocksworld_valid_plan_rates():
    assert pl.BLOCKSWORLD_VALID_PLANS == {"GPT-3": 1.0, "Instruct-GPT3": 6.8, "people": 78.0}


# --- properties on random plans ---------------------------------------------------------------


@st.composite
def random_dags(draw, max_nodes=12):
    """A plan whose steps only depend on earlier steps, hence acyclic."""
    n = draw(st.integers(1, max_nodes))
    deps = [sorted(draw(st.sets(st.integers(0, i - 1), max_size=3))) if i else [] for i in range(n)]
    return {
        "steps": [
            step(f"s{i}", "llm", {"inputs": [f"${j + 1}" for j in d]}, [f"s{j}" for j in d])
            for i, d in enumerate(deps)
        ]
    }


@given(random_dags())
def test_acyclic_plans_pass_and_placeholders_agree(plan):
    graph = pl.validate_plan(plan, TOOLS)
    assert list(graph) == [s["id"] for s in plan["steps"]]
    assert pl.placeholder_edges(plan) == graph
    assert pl.edge_contradictions(plan) == []


@given(random_dags(), st.data())
def test_a_back_edge_is_reported_as_a_real_cycle(plan, data):
    n = len(plan["steps"])
    late = data.draw(st.integers(0, n - 1))
    early = data.draw(st.integers(0, late))
    # Add early -> ... -> late -> early by making `early` depend on `late` and on a path.
    for i in range(early + 1, late + 1):
        plan["steps"][i]["depends_on"].append(f"s{i - 1}")
    plan["steps"][early]["depends_on"].append(f"s{late}")
    (problem,) = problems_of(plan)
    assert problem.kind == "cycle"
    cycle = problem.steps
    assert cycle[0] == cycle[-1]
    deps = {s["id"]: set(s["depends_on"]) for s in plan["steps"]}
    # Each consecutive pair u, v of the cycle is an edge u -> v: v depends on u.
    assert all(u in deps[v] for u, v in pairwise(cycle))


@given(random_dags(), st.data())
def test_problems_injected_into_one_step_are_all_reported(plan, data):
    # Repeat a step under the same id and give the repeat any mix of an unknown tool, a
    # dangling dependency and a malformed argument: each is reported, whatever else is wrong.
    n = len(plan["steps"])
    original = plan["steps"][data.draw(st.integers(0, n - 1))]
    repeat = copy.deepcopy(original)
    expected = {"duplicate_id"}
    if data.draw(st.booleans()):
        repeat["tool"] = "serch"
        expected.add("unknown_tool")
    if data.draw(st.booleans()):
        repeat["depends_on"] = [*repeat["depends_on"], "ghost"]
        expected.add("unknown_dependency")
    if data.draw(st.booleans()):
        repeat["args"] = 42
        expected.add("malformed")
    plan["steps"].insert(data.draw(st.integers(0, n)), repeat)
    kinds = {p.kind for p in problems_of(plan, max_steps=n + 1)}
    assert kinds == expected
