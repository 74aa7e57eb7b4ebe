"""The compiler (decompkit.lab.compiler): series-parallel plans as concurrent graphs."""

import asyncio
from itertools import product

import networkx as nx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from decompkit.dag import CycleError, critical_path
from decompkit.examples import coding_task
from decompkit.lab.compiler import (
    Parallel,
    Series,
    ShapeError,
    compile_plan,
    run_if_valid,
    run_on_scheduler,
    series_parallel,
)
from decompkit.lab.execute import durations
from decompkit.lab.models import PLANS
from decompkit.lab.rewoo import work
from decompkit.lab.schema import TypedPlan, TypedStep, check_plan
from decompkit.lab.tools import TOOLS, Toolbox
from decompkit.plan import PlanError

ZERO = {"search": 0, "fetch_page": 0, "compare": 0}


def plan(name):
    return TypedPlan(goal=name, steps=PLANS[name])


# --- series-parallel decomposition -------------------------------------------------------------


@pytest.mark.parametrize(
    ("graph", "text"),
    [
        ({"a": []}, "a"),
        ({"a": [], "b": ["a"], "c": ["b"]}, "a -> b -> c"),
        ({"a": [], "b": ["a"], "c": ["a", "b"]}, "a -> b -> c"),  # a transitive edge
        ({"a": [], "b": []}, "(a | b)"),
        ({"b": ["a"], "c": ["a"], "d": ["b", "c"]}, "a -> (b | c) -> d"),
        ({"a": [], "b": ["a"], "x": [], "y": ["x"]}, "(a -> b | x -> y)"),
        (
            {"a": [], "b": [], "c": ["a", "b"], "x": [], "y": ["x"], "z": ["y"]},
            "((a | b) -> c | x -> y -> z)",
        ),
    ],
)
def test_series_parallel_known_shapes(graph, text):
    assert str(series_parallel(graph)) == text


def test_worked_example_a_is_series_parallel():
    a = coding_task()
    assert str(series_parallel(a.graph)) == (
        "read_spec -> (fetch_data -> write_code | write_tests) -> run_tests -> report"
    )


def test_tree_types():
    tree = series_parallel({"b": ["a"], "c": ["a"], "d": ["b", "c"]})
    assert tree == Series(("a", Parallel(("b", "c")), "d"))


def test_n_is_not_series_parallel():
    with pytest.raises(ShapeError, match=r"the plan is not series-parallel: 'c' comes after") as e:
        series_parallel({"a": [], "b": [], "c": ["a", "b"], "d": ["b"]})
    assert e.value.witness == ("a", "b", "c", "d")


def test_series_parallel_errors():
    with pytest.raises(CycleError):
        series_parallel({"a": ["b"], "b": ["a"]})
    with pytest.raises(ValueError, match="graph must have at least one node, got an empty graph"):
        series_parallel({})


def test_a_node_unequal_to_itself_is_one_node_as_in_graphlib():
    # A dict finds a key by identity first, so graphlib and decompkit.dag take one NaN
    # object as one node (and two NaN objects as two). The decomposition compared nodes
    # with != and looped forever on nan != nan; it must simply finish, as here.
    nan = float("nan")
    tree = series_parallel({nan: [], "b": [nan]})
    assert isinstance(tree, Series) and tree.parts[0] is nan and tree.parts[1:] == ("b",)
    tree = series_parallel({nan: [], "b": []})
    assert isinstance(tree, Parallel) and tree.parts[0] is nan and tree.parts[1:] == ("b",)
    with pytest.raises(ShapeError) as error:
        series_parallel({nan: [], "b": [], "c": [nan, "b"], "d": ["b"]})
    assert error.value.witness[0] is nan and error.value.witness[1:] == ("b", "c", "d")


def _leaves(tree):
    if isinstance(tree, (Series, Parallel)):
        return [leaf for part in tree.parts for leaf in _leaves(part)]
    return [tree]


def _order(tree) -> set:
    """The pairs (u, v), u before v, that the tree's series parts impose."""
    if not isinstance(tree, (Series, Parallel)):
        return set()
    pairs = set().union(*(_order(p) for p in tree.parts))
    if isinstance(tree, Series):
        for i, first in enumerate(tree.parts):
            for later in tree.parts[i + 1 :]:
                pairs |= set(product(_leaves(first), _leaves(later)))
    return pairs


@st.composite
def dags(draw):
    n = draw(st.integers(1, 8))
    edges = draw(st.lists(st.booleans(), min_size=n * n, max_size=n * n))
    return {j: [i for i in range(j) if edges[i * n + j]] for j in range(n)}


@given(dags())
def test_decomposition_is_exact_or_names_a_true_n(graph):
    g = nx.DiGraph([(p, v) for v, ps in graph.items() for p in ps])
    g.add_nodes_from(graph)
    before = set(nx.transitive_closure_dag(g).edges)
    try:
        tree = series_parallel(graph)
    except ShapeError as error:
        a, b, c, d = error.witness
        assert {(a, c), (b, c), (b, d)} <= before

        def unordered(x, y):
            return (x, y) not in before and (y, x) not in before

        assert unordered(a, b) and unordered(a, d) and unordered(c, d)
    else:
        assert sorted(_leaves(tree)) == sorted(graph)
        assert _order(tree) == before


# --- compiling and running ---------------------------------------------------------------------


def test_compiled_graph_follows_the_decomposition():
    compiled = compile_plan(plan("quotes"), Toolbox(ZERO))
    assert str(compiled.tree) == "(E1 -> E4 | E2 -> E5 | E3 -> E6) -> E7"
    text = compiled.render()
    for edge in ("E1 --> E4", "E4 --> join_1", "E6 --> join_1", "join_1 --> E7", "E7 --> [*]"):
        assert edge in text
    assert repr(compiled) == "CompiledPlan((E1 -> E4 | E2 -> E5 | E3 -> E6) -> E7)"


def test_compiled_run_gives_the_same_evidence_as_list_order():
    p = plan("quotes")
    concurrent = asyncio.run(compile_plan(p, Toolbox(ZERO)).run())
    serial = asyncio.run(work(p, Toolbox(ZERO)))
    assert concurrent.evidence == serial.evidence
    assert concurrent.plan is p


def test_wall_time_follows_the_critical_path_not_the_serial_sum():
    p = plan("quotes")
    cp = critical_path(check_plan(p, TOOLS), durations(p))
    assert (cp.makespan, cp.serial_time) == (120, 320)
    run = asyncio.run(compile_plan(p, Toolbox()).run())
    assert run.workers == 3
    # Every step sleeps its latency, so the critical path is a lower bound of the wall time.
    assert run.wall_ms >= 0.99 * cp.makespan
    # That it is not the serial sum is shown by the order of events, not by a clock (a
    # loaded machine stretches any step): each step starts once its inputs are done, and
    # steps that wait for the same inputs run at the same time.
    spans = run.intervals()
    for step in p.steps:
        for before in step.depends_on:
            assert spans[before][1] <= spans[step.id][0], (before, step.id, spans)
    siblings = {}
    for step in p.steps:
        siblings.setdefault(tuple(sorted(step.depends_on)), []).append(step.id)
    together = [ids for ids in siblings.values() if len(ids) > 1]
    assert together, siblings  # the plan has parallel branches to show
    for ids in together:
        assert max(spans[s][0] for s in ids) < min(spans[s][1] for s in ids), (ids, spans)


NESTED = [
    TypedStep(id="E1", tool="fetch_page", args={"url": "https://p.example/quote"}),
    TypedStep(id="E2", tool="fetch_page", args={"url": "https://q.example/quote"}),
    TypedStep(id="E3", tool="compare", args={"pages": ["#E1", "#E2"]}, depends_on=["E1", "E2"]),
    TypedStep(id="E4", tool="search", args={"query": "supplier R quote"}),
]
NESTED_MS = {"search": 150, "fetch_page": 60, "compare": 100}


def test_a_branch_with_its_own_join_runs_as_a_subgraph_and_keeps_the_critical_path():
    p = TypedPlan(goal="nested", steps=NESTED)
    compiled = compile_plan(p, Toolbox(NESTED_MS))
    assert str(compiled.tree) == "((E1 | E2) -> E3 | E4)"
    assert "sub_1 --> join_1" in compiled.render()
    cp = critical_path(check_plan(p, TOOLS), durations(p, NESTED_MS))
    assert cp.makespan == 160  # E1 (or E2) then E3; the sibling E4 takes 150
    run = asyncio.run(compiled.run())
    # Were the join after E1, E2 looked at only when E4 ends (150 ms), E3 would end at
    # 250 ms: the threshold 205 lies halfway.
    assert cp.makespan * 0.99 <= run.wall_ms < 205
    assert run.evidence["E3"].startswith("Supplier Q is cheapest")


def test_the_library_join_fires_late_inside_a_branch():
    # Documents the library's behaviour the subgraphs work around (pydantic-graph 2.68): a
    # join's last input does not trigger it; it is looked at again when another task of the
    # run ends, or when nothing runs. Wired into the outer graph, E3 waits for E4.
    p = TypedPlan(goal="nested", steps=NESTED)
    compiled = compile_plan(p, Toolbox(NESTED_MS), subgraphs=False)
    assert "sub_" not in compiled.render()
    run = asyncio.run(compiled.run())
    spans = run.intervals()
    assert spans["E3"][0] >= spans["E4"][1]
    assert run.wall_ms > 205


@pytest.mark.parametrize("script", ["unknown_tool", "cycle", "contradiction", "broken"])
def test_a_wrong_plan_is_not_compiled(script):
    with pytest.raises(PlanError):
        compile_plan(plan(script), Toolbox(ZERO))


def test_run_if_valid_returns_the_error_and_calls_nothing():
    box = Toolbox(ZERO)
    outcome = asyncio.run(run_if_valid(plan("broken"), box))
    assert isinstance(outcome, PlanError)
    assert outcome.kinds() == ["unknown_tool", "cycle", "dependency_without_placeholder"]
    assert isinstance(asyncio.run(run_if_valid(plan("n_shape"), box)), ShapeError)
    assert box.calls == []
    done = asyncio.run(run_if_valid(plan("quotes"), box))
    assert done.evidence["E7"].startswith("Supplier Q is cheapest")


def test_the_n_shape_runs_on_the_scheduler_at_its_critical_path():
    p = plan("n_shape")
    with pytest.raises(ShapeError) as e:
        compile_plan(p, Toolbox(ZERO))
    assert e.value.witness == ("E1", "E2", "E3", "E4")
    result = run_on_scheduler(p)
    cp = critical_path(check_plan(p, TOOLS), durations(p))
    assert result.makespan == cp.makespan == 160
    assert cp.serial_time == 240
    assert result.done == frozenset(check_plan(p, TOOLS))
    with pytest.raises(PlanError):
        run_on_scheduler(plan("cycle"))


def test_skip_leaves_executed_steps_out():
    p = plan("quotes")
    compiled = compile_plan(p, Toolbox(ZERO), skip={"E1", "E2", "E3", "E4", "E5", "E6"})
    assert compiled.tree == "E7"
    everything = compile_plan(p, Toolbox(ZERO), skip=[s.id for s in p.steps])
    assert everything.tree is None and everything.pgraph is None and everything.render() == ""
    run = asyncio.run(everything.run())
    assert run.events == () and run.out == {}


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"plan": PLANS["quotes"]}, "plan must be a TypedPlan, got list"),
        ({"toolbox": "box"}, "toolbox must be a Toolbox, got str"),
        ({"kappa": 0}, "kappa must be an integer >= 1, got 0"),
        ({"skip": ["E9"]}, r"skip must name steps of the plan, got \['E9'\]"),
    ],
)
def test_compile_plan_rejects_bad_arguments(kwargs, message):
    args = {"plan": plan("quotes"), "toolbox": Toolbox(ZERO), **kwargs}
    with pytest.raises(ValueError, match=message):
        compile_plan(args.pop("plan"), args.pop("toolbox"), **args)


def test_a_step_id_that_looks_like_a_join_gets_another_name():
    steps = [
        TypedStep(id="join_1", tool="search", args={"query": "supplier P"}),
        TypedStep(id="E2", tool="search", args={"query": "supplier Q"}),
        TypedStep(
            id="E3", tool="compare", args={"pages": ["$1", "#E2"]}, depends_on=["join_1", "E2"]
        ),
    ]
    compiled = compile_plan(TypedPlan(goal="g", steps=steps), Toolbox(ZERO))
    assert "join_2 --> E3" in compiled.render()


def test_run_on_scheduler_needs_a_plan():
    with pytest.raises(ValueError, match="plan must be a TypedPlan, got list"):
        run_on_scheduler(PLANS["n_shape"])
