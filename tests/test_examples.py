"""The lecture's figures for worked examples A and B, computed from decompkit.examples."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from numpy.testing import assert_allclose

from decompkit.dag import critical_path, generations, is_topological_order, list_schedule
from decompkit.examples import (
    COORDINATE,
    coding_task,
    migration,
    relative_change,
    speedup,
    useful_concurrency,
)

# The lecture quotes ratios to 2-3 significant digits; exact ratios are checked to 1e-12 and
# the quoted roundings to half a unit of their last digit.
EXACT = 1e-12


# --------------------------------------------------------------------------------------------
# Example A: coding task
# --------------------------------------------------------------------------------------------


def test_example_a_critical_path():
    a = coding_task()
    cp = critical_path(a.graph, a.durations)
    assert cp.makespan == 10
    assert cp.path == ["read_spec", "fetch_data", "write_code", "run_tests", "report"]
    assert cp.serial_time == 12
    assert cp.slack["write_tests"] == 5
    assert all(cp.slack[v] == 0 for v in cp.path)


def test_example_a_spurious_edge_keeps_makespan_and_cuts_slack():
    a = coding_task()
    graph = a.with_edge(*a.spurious_edge)
    cp = critical_path(graph, a.durations)
    assert cp.makespan == 10
    assert cp.slack["write_tests"] == 2
    assert "fetch_data" not in a.graph["write_tests"]  # the original is untouched


def test_example_a_fields_are_consistent():
    a = coding_task()
    assert set(a.graph) == set(a.durations) == set(a.labels)
    assert a.unit == "units"
    assert a.resources == {}
    with pytest.raises(ValueError, match=r"example 'coding task' has no coordinated fan-out"):
        a.with_coordination()


def test_examples_are_fresh_objects():
    a1, a2 = coding_task(), coding_task()
    a1.graph["report"].append("write_tests")
    a1.durations["report"] = 99
    assert a2.graph["report"] == ["run_tests"]
    assert a2.durations["report"] == 1


@pytest.mark.parametrize(
    ("method", "args", "match"),
    [
        ("with_edge", ("nope", "report"), r"unknown node 'nope' in example 'coding task'"),
        ("with_edge", ("report", "nope"), r"unknown node 'nope' in example 'coding task'"),
        ("with_duration", ("nope", 3), r"unknown node 'nope' in example 'coding task'"),
    ],
)
def test_variation_errors(method, args, match):
    with pytest.raises(ValueError, match=match):
        getattr(coding_task(), method)(*args)


def test_with_edge_does_not_duplicate_an_existing_edge():
    a = coding_task()
    assert a.with_edge("read_spec", "fetch_data")["fetch_data"] == ["read_spec"]


# --------------------------------------------------------------------------------------------
# Example B: warehouse-connector migration
# --------------------------------------------------------------------------------------------


def test_example_b_serial_and_critical_path():
    b = migration()
    cp = critical_path(b.graph, b.durations)
    assert cp.serial_time == 30
    assert cp.makespan == 18
    assert cp.path == ["F", "S", "E", "A", "Y", "V"]
    assert b.labels["F"] == "find callers"
    assert b.unit == "slots"


def test_example_b_coordination_tax():
    b = migration()
    graph, durations = b.with_coordination()
    cp = critical_path(graph, durations)
    work, wall = cp.serial_time, cp.makespan
    assert (work, wall) == (34, 22)
    assert cp.path == ["F", "S", COORDINATE, "E", "A", "Y", "V"]
    serial = critical_path(b.graph, b.durations).serial_time
    assert_allclose(speedup(serial, wall), 30 / 22, rtol=EXACT)
    assert round(speedup(serial, wall), 2) == 1.36
    assert_allclose(relative_change(work, serial), 0.133, atol=5e-4)  # +13.3 % work
    assert_allclose(relative_change(wall, serial), -0.267, atol=5e-4)  # -26.7 % wall
    # The coordination node sits before the fan-out and after everything it waited for.
    assert is_topological_order(graph, ["F", "S", "R", COORDINATE, "P", "E", "D", "A", "Y", "V"])
    # Enough workers reproduce the critical path; the list schedule agrees.
    assert list_schedule(graph, durations, workers=len(graph)).makespan == 22


def test_example_b_patch_frontier():
    b = migration()
    frontier = generations(b.graph)[2]
    assert set(frontier) == set(b.fan_out) == {"P", "E", "D"}
    work = sum(b.durations[v] for v in frontier)
    longest = max(b.durations[v] for v in frontier)
    assert (work, longest) == (19, 8)
    assert_allclose(useful_concurrency(b.durations, frontier), 2.375, rtol=EXACT)


@pytest.mark.parametrize(("node", "value", "makespan"), [("D", 3, 18), ("E", 6, 16)])
def test_example_b_shortening_a_branch(node, value, makespan):
    b = migration()
    assert critical_path(b.graph, b.with_duration(node, value)).makespan == makespan
    assert b.durations[node] != value  # the original is untouched


def test_example_b_shared_resource_serialises_the_patches():
    b = migration()
    many = len(b.graph) + 1  # more workers than nodes: only dependencies and locks bind
    locked = list_schedule(b.graph, b.durations, many, resources=b.resources)
    assert locked.makespan == 29
    spans = sorted((locked.start[v], locked.finish[v]) for v in b.fan_out)
    assert all(f <= s for (_, f), (s, _) in zip(spans, spans[1:], strict=False))
    graph, durations = b.with_coordination()
    locked_coordinated = list_schedule(graph, durations, many, resources=b.resources)
    assert locked_coordinated.makespan == 33
    serial = critical_path(b.graph, b.durations).serial_time
    assert locked_coordinated.makespan > serial  # slower than doing the list in order
    # Without the lock the same workers reach the critical path.
    assert list_schedule(b.graph, b.durations, many).makespan == 18


def test_example_b_one_worker_is_the_serial_list():
    b = migration()
    assert list_schedule(b.graph, b.durations, 1).makespan == 30


# --------------------------------------------------------------------------------------------
# Helpers for the figures
# --------------------------------------------------------------------------------------------


def test_speedup_and_relative_change_broadcast():
    out = speedup([30, 30], np.array([22, 15]))
    assert isinstance(out, np.ndarray)
    assert_allclose(out, [30 / 22, 2.0], rtol=EXACT)
    assert isinstance(speedup(30, 22), float)
    assert_allclose(relative_change(np.array([34, 22]), 30), [4 / 30, -8 / 30], rtol=EXACT)


@pytest.mark.parametrize(
    ("func", "args", "match"),
    [
        (speedup, (30, 0), r"wall must be a finite number > 0, got 0"),
        (speedup, (30, [1, -2]), r"wall must be a finite number > 0, got -2"),
        (speedup, (-1, 5), r"serial must be a finite number >= 0, got -1"),
        (speedup, (float("nan"), 5), r"serial must be a finite number >= 0, got nan"),
        (speedup, ("30", 5), r"serial must be a number or an array of numbers, got '30'"),
        (speedup, (True, 5), r"serial must be a number, got True"),
        (speedup, ([1, 2], [1, 2, 3]), r"cannot be broadcast together: serial \(2,\), wall \(3,\)"),
        (relative_change, (3, 0), r"old must be a finite number > 0, got 0"),
        (relative_change, (-3, 1), r"new must be a finite number >= 0, got -3"),
        (relative_change, (["x"], 1), r"new must be a number or an array of numbers"),
        # inf / inf used to come back as NaN; an infinite time is not a duration.
        (speedup, (np.inf, np.inf), r"serial must be a finite number >= 0, got inf"),
        (speedup, (30, np.inf), r"wall must be a finite number > 0, got inf"),
        (relative_change, (np.inf, np.inf), r"new must be a finite number >= 0, got inf"),
        (relative_change, (1, [2, np.inf]), r"old must be a finite number > 0, got inf"),
        (speedup, (1e308, 1e-10), r"speedup is beyond .* at serial=1e\+308, wall=1e-10"),
        (relative_change, (1e308, 0.5), r"relative_change is beyond the float range"),
        (speedup, (10**400, 1), r"serial holds a number beyond the float range"),
    ],
)  # fmt: skip
def test_ratio_errors(func, args, match):
    with pytest.raises(ValueError, match=match):
        func(*args)


@pytest.mark.parametrize(
    ("durations", "frontier", "match"),
    [
        ({"a": 1}, [], r"frontier must name at least one node"),
        ({"a": 1}, "a", r"frontier must be an iterable of nodes, not the str 'a'"),
        ({"a": 1}, ["b"], r"durations has no entry for frontier node 'b'"),
        ({"a": -1}, ["a"], r"duration of node 'a' must be a finite number >= 0, got -1"),
        ({"a": "x"}, ["a"], r"duration of node 'a' must be a finite number >= 0, got 'x'"),
        ({"a": float("nan")}, ["a"], r"node 'a' must be a finite number >= 0, got nan"),
        ({"a": np.inf}, ["a"], r"node 'a' must be a finite number >= 0, got inf"),  # was NaN
        ({"a": 1, "b": np.inf}, ["a", "b"], r"node 'b' must be a finite number >= 0, got inf"),
        ({"a": np.bool_(True)}, ["a"], r"node 'a' must be a finite number >= 0, got"),
        ({"a": 0, "b": 0}, ["a", "b"], r"every duration in the frontier is 0"),
        # These were bare TypeErrors that named no argument.
        (None, ["a"], r"^durations must be a mapping \{node: duration\}, got None$"),
        ([("a", 1)], ["a"], r"^durations must be a mapping .*, got \[\('a', 1\)\]$"),
        ({"a": 1}, None, r"^frontier must be an iterable of nodes, got None$"),
        ({"a": 1}, 5, r"^frontier must be an iterable of nodes, got 5$"),
        ({"a": 1}, [["a"]], r"^frontier must hold hashable nodes, got \['a'\]$"),
    ],
)
def test_useful_concurrency_errors(durations, frontier, match):
    with pytest.raises(ValueError, match=match):
        useful_concurrency(durations, frontier)


def test_useful_concurrency_of_one_branch_is_one():
    assert useful_concurrency({"a": 4}, ("a",)) == 1.0


def test_useful_concurrency_of_huge_durations_is_exact():
    # A float sum of 1e308 + 1e308 overflowed to inf; the exact sum gives 2.
    assert useful_concurrency({"a": 1e308, "b": 1e308}, ["a", "b"]) == 2.0
    assert useful_concurrency({"a": 10**400, "b": 3 * 10**400}, ["a", "b"]) == 4 / 3
    assert useful_concurrency({"a": np.int64(6), "b": np.float32(2)}, ["a", "b"]) == 8 / 6


times = st.one_of(
    st.floats(0, 1e6),
    st.floats(1e-300, 1e300),
    st.integers(0, 10**6),
    st.integers(0, 10**6).map(np.int64),
    st.floats(0, 1e6).map(np.float32),
)


@given(serial=times, wall=times)
def test_speedup_is_the_quotient_or_refused(serial, wall):
    if float(wall) == 0:
        with pytest.raises(ValueError, match=r"wall must be a finite number > 0"):
            speedup(serial, wall)
        return
    exact = Fraction(float(serial)) / Fraction(float(wall))
    if exact > Fraction(np.finfo(float).max):
        with pytest.raises(ValueError, match=r"speedup is beyond the float range"):
            speedup(serial, wall)
    else:
        got = speedup(serial, wall)
        assert type(got) is float and got == float(serial) / float(wall)
        assert relative_change(serial, wall) == pytest.approx(got - 1.0, abs=1e-300)


@given(st.dictionaries(st.text(min_size=1, max_size=3), times, min_size=1, max_size=6))
def test_useful_concurrency_lies_between_one_and_the_frontier_size(durations):
    if all(float(x) == 0 for x in durations.values()):
        with pytest.raises(ValueError, match=r"every duration in the frontier is 0"):
            useful_concurrency(durations, durations)
        return
    value = useful_concurrency(durations, durations)
    assert 1.0 <= value <= len(durations) and np.isfinite(value)
