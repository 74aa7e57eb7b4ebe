"""Each student's own worked examples (decompkit.exercises.drawn_plans) and the parameters the
DAG and trace notebooks choose from them."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from decompkit import dag, examples
from decompkit.exercises import drawn_plans as dp
from decompkit.exercises.dag import MAX_ORDERS_A, MAX_ORDERS_B, DagParams
from decompkit.exercises.params import params
from decompkit.exercises.trace import TraceParams

SEEDS = range(300)


def _plans(draw):
    return [draw(np.random.default_rng(seed)) for seed in SEEDS]


# -- the lecture's examples stay as they are -------------------------------------------------


def test_without_a_drawn_plan_the_lecture_examples_come_back():
    assert dp.worked_example("coding_task") == examples.coding_task()
    assert dp.worked_example("migration") == examples.migration()
    A, B = DagParams().A, DagParams().B
    assert A == examples.coding_task() and B == examples.migration()
    assert TraceParams().A == examples.coding_task()
    assert TraceParams().reader == "report"


# -- properties of the draws ----------------------------------------------------------------


@pytest.mark.parametrize("draw", [dp.draw_coding_task, dp.draw_migration])
def test_a_draw_is_a_function_of_the_generator_alone(draw):
    assert [draw(np.random.default_rng(7)) for _ in range(2)] == [
        draw(np.random.default_rng(7))
    ] * 2
    assert len({draw(np.random.default_rng(seed)) for seed in SEEDS}) > 50


@pytest.mark.parametrize(
    "draw, kinds, sizes",
    [
        (dp.draw_coding_task, dp.CODING_KINDS, (6, 7)),
        (dp.draw_migration, dp.MIGRATION_KINDS, range(8, 12)),
    ],
)
def test_every_plan_is_a_dag_listed_in_order_of_known_kinds(draw, kinds, sizes):
    order = list(kinds)
    for plan in _plans(draw):
        nodes = [node for node, _ in plan]
        assert len(nodes) in sizes and len(set(nodes)) == len(nodes)
        assert set(nodes) <= set(kinds) and nodes == sorted(nodes, key=order.index)
        for k, (_, preds) in enumerate(plan):
            assert set(preds) <= set(nodes[:k]) and len(set(preds)) == len(preds)
        assert dag.topological_order(dict(plan)) is not None


def test_a_coding_task_has_its_core_and_one_reader_of_the_test_run():
    for plan in _plans(dp.draw_coding_task):
        graph = dict(plan)
        assert {"read_spec", "write_tests", "write_code", "run_tests"} <= set(graph)
        assert {"write_tests"} <= set(graph["run_tests"])
        assert sum("run_tests" in preds for preds in graph.values()) == 1
        assert dag.ancestors(graph, ["run_tests"]) >= {"read_spec", "write_code"}


def test_a_migration_fans_out_after_all_the_reading_and_joins_before_approval():
    for plan in _plans(dp.draw_migration):
        graph = dict(plan)
        fan_out = dp.patches(graph)
        reading = [n for n in graph if dp.MIGRATION_KINDS[n][1] == "read"]
        assert len(fan_out) in (3, 4) and len(reading) >= 2
        assert all(set(graph[p]) == set(reading) for p in fan_out)
        join = graph["T"] if "T" in graph else graph["A"]
        assert set(join) == set(fan_out)
        assert graph["Y"] == ("A",) and graph["V"] == ("Y",)


def test_the_orders_of_a_migration_multiply_independent_choices():
    # N = N_read * k! * N_after: the patches wait for every reading task and the join for
    # every patch, so the three stretches never interleave.
    for plan in _plans(dp.draw_migration):
        graph = {node: list(preds) for node, preds in plan}
        fan_out = dp.patches(graph)
        reading = {n: p for n, p in graph.items() if dp.MIGRATION_KINDS[n][1] == "read"}
        after = {n: [p for p in ps if p not in fan_out] for n, ps in graph.items()}
        after = {n: ps for n, ps in after.items() if n not in reading and n not in fan_out}
        count = dag.count_topological_orders
        expected = count(reading) * math.factorial(len(fan_out)) * count(after)
        assert dag.count_topological_orders(graph) == expected


def test_durations_come_from_each_kinds_range():
    rng = np.random.default_rng(0)
    ranges = dp.DURATION_RANGES["coding_task"]
    for plan in _plans(dp.draw_coding_task)[:50]:
        for node, value in dp.draw_durations(rng, ranges, [n for n, _ in plan]):
            low, high = ranges[node]
            assert low <= value <= high and isinstance(value, int)


def test_a_drawn_migration_carries_its_fan_out_lock_and_labels():
    plan = dp.draw_migration(np.random.default_rng(5))
    durations = dp.draw_durations(
        np.random.default_rng(5), dp.DURATION_RANGES["migration"], [n for n, _ in plan]
    )
    b = dp.worked_example("migration", durations, plan)
    assert b.fan_out == dp.patches(b.graph)
    assert b.resources == {p: ["tenant"] for p in b.fan_out}
    assert set(b.labels) == set(b.graph) == set(b.durations)
    graph, _ = dataclasses.replace(b, coordination=4).with_coordination()
    assert all(graph[p] == [examples.COORDINATE] for p in b.fan_out)


@pytest.mark.parametrize(
    "name, plan, durations, match",
    [
        ("coding_task", (("read_spec", ()), ("cook", ("read_spec",))), (), "not tasks of"),
        ("coding_task", (("read_spec", ()),), (), "no duration for"),
        ("coding_task", (("read_spec", ()),), (("report", 2),), "not a task of"),
        ("migration", (("F", ()), ("Z", ("F",))), (), "not tasks of"),
    ],
)
def test_a_plan_or_duration_outside_the_example_is_refused(name, plan, durations, match):
    with pytest.raises(ValueError, match=match):
        dp.worked_example(name, durations, plan)


# -- what the notebooks choose from each student's plan --------------------------------------

IDS = [f"s{number:04d}" for number in range(60)]


@pytest.mark.slow  # the DAG notebook's draw for many students
def test_the_dag_notebooks_choices_come_from_the_students_own_plan():
    for who in IDS:
        P = params("dag", who)
        A, B = P.A, P.B
        assert P.plan_a and P.plan_b and A.graph == {n: list(p) for n, p in P.plan_a}
        u, v = A.spurious_edge
        assert u not in A.graph[v] and P.slack_node == v
        assert set(P.done) | set(P.running) <= set(A.graph) and P.running
        assert not set(P.done) & set(P.running)
        assert 2 <= dag.count_topological_orders(A.graph) <= MAX_ORDERS_A
        assert 2 <= dag.count_topological_orders(B.graph) <= MAX_ORDERS_B
        assert 6 <= len(A.graph) <= 7 and 8 <= len(B.graph) <= 11


def test_the_trace_notebooks_choices_come_from_the_students_own_plan():
    for who in IDS:
        P = params("trace", who)
        graph = P.A.graph
        assert P.failing in graph and P.reader in graph and P.failing in graph[P.reader]
        assert P.faulty in dag.ancestors(graph, [P.failing])
        assert P.faulty_other in dag.ancestors(graph, [P.faulty])
        assert P.failing_early in graph and P.failing_early != P.failing
        assert P.red_runs == P.kappa_plan + 1
