"""Parity of the static page's formulas (src/decompkit/page/lecture.js) with the package.

Python draws seeded grids of inputs (edge values first: p and q at 0, 1 and tiny, n at 0, 1
and huge), one Node process evaluates every case through ``tests/page_parity.mjs``, and each
test compares one family: closed forms to a relative 1e-12, orders, paths, cycles and
schedules exactly. Known figures of the lecture check the JavaScript on its own, and two tests
show that the comparison catches a changed number. The whole module runs in a few seconds.
"""

from __future__ import annotations

import json
import math
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from decompkit import dag, examples, markov
from decompkit import reliability as rel
from decompkit.widgets.dag import duration_range

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "src" / "decompkit" / "page"
#: The page's modules of formulas, in import order.
MODULES = [PAGE / "checks.js", PAGE / "lecture.js", PAGE / "plans.js"]
RUNNER = Path(__file__).with_name("page_parity.mjs")
NODE = shutil.which("node")

pytestmark = pytest.mark.skipif(
    NODE is None, reason="Node.js is not on PATH: the page's JavaScript cannot be run here"
)

#: Closed forms agree to this relative difference: both sides take the same operations in the
#: same order, and the math libraries (V8's fdlibm ports, glibc) differ by at most an ulp or
#: so in log, exp, log1p, expm1 and pow.
RTOL = 1e-12


@dataclass(frozen=True)
class Case:
    """One call of the page's function ``fn`` and what the package says it returns."""

    fn: str
    args: tuple
    expected: object  # the package's value, or the exception it raised
    exact: bool = False  # compare exactly (orders, schedules), not to RTOL


def _py(call, *args, **kwargs):
    try:
        # At p = 5e-324 and d = 1, expected_attempts is 1/5e-324 = inf, with NumPy's overflow
        # warning: the value is right, the warning is the package's affair, not the page's.
        with np.errstate(over="ignore"):
            return call(*args, **kwargs)
    except ValueError as err:  # CycleError included
        return err


# -- cases: reliability and the audited chain -----------------------------------------------------

EDGE_P = [0.0, 1.0, 5e-324, 1e-300, 1e-12, 1e-5, 0.5, 0.9, 0.95, 1 - 1e-12, 1 - 2**-53]
EDGE_N = [0, 1, 2, 10, 50, 1000, 10**6, 2**53, 1e19, 1e300]


def _probabilities(rng, k):
    return EDGE_P + [float(x) for x in rng.uniform(0, 1, k)]


def reliability_cases(rng) -> list[Case]:
    ps = _probabilities(rng, 25)
    ds = [0.0, 1.0, 1e-12, 0.5] + [float(x) for x in rng.uniform(0, 1, 8)]
    ns = EDGE_N + [int(x) for x in rng.integers(0, 200, 6)]
    cases = []
    for p in ps:
        cases.append(Case("halfLife", (p,), _py(rel.half_life, p)))
        for n in ns:
            cases.append(Case("chainSuccess", (p, n), _py(rel.chain_success, p, n)))
            cases.append(
                Case("perfectCheckAttempts", (p, n), _py(rel.perfect_check_attempts, p, n))
            )
            if n >= 1:
                cases.append(Case("stepRate", (p, n), _py(rel.step_rate, p, n)))
        for d in ds:
            for fn, py in [
                ("checkedStep", rel.checked_step),
                ("undetectedFloor", rel.undetected_floor),
                ("checkedStepLimit", rel.checked_step_limit),
                ("expectedAttempts", rel.expected_attempts),
            ]:
                cases.append(Case(fn, (p, d), _py(py, p, d)))
            phi = float(rng.choice(ds))
            cases.append(
                Case("checkedStepFallible", (p, d, phi), _py(rel.checked_step_fallible, p, d, phi))
            )
            n = int(rng.choice([0, 1, 10, 50]))
            expected = _py(rel.per_step_vs_per_graph, p, n, d)
            if not isinstance(expected, Exception):
                expected = {"perStep": expected.per_step, "perGraph": expected.per_graph}
            cases.append(Case("perStepVsPerGraph", (p, n, d), expected))
    for d in ds:
        for phi in ds:
            cases.append(Case("checkHelps", (d, phi), _py(rel.check_helps, d, phi)))
            cases.append(
                Case("discriminationAccuracy", (d, phi), _py(rel.discrimination_accuracy, d, phi))
            )
    return cases


def markov_cases(rng) -> list[Case]:
    ps = _probabilities(rng, 12)
    qs = [0.0, 1.0, 1e-15, 0.5, 0.9] + [float(x) for x in rng.uniform(0, 1, 5)]
    cases = []
    for p in ps:
        cases.append(Case("minBudgetFactor", (p,), _py(markov.min_budget_factor, p)))
        for q in qs:
            cases.append(Case("groundedHalfLife", (p, q), _py(markov.grounded_half_life, p, q)))
            for t in [0, 1, 7, 400, 10**6, 1e19]:
                cases.append(
                    Case("groundedSurvival", (t, p, q), _py(markov.grounded_survival, t, p, q))
                )
            for n in [0, 1, 3, 50, 10**5, 1e19]:
                cases.append(
                    Case("expectedRounds", (n, p, q), _py(markov.expected_rounds, n, p, q))
                )
    return cases


def horizon_cases(rng) -> list[Case]:
    """success_exact where the horizon explorer's sliders take it: the curve against n = 1..200
    at B = round(gamma n), called with arrays as the explorer calls it."""
    ns = np.arange(1, 201)
    settings = [(0.95, q, 2.0) for q in (0.0, 0.5, 0.9, 1.0)]
    settings += [(0.0, 0.5, 2.0), (1.0, 0.3, 1.0), (0.005, 0.99, 4.0), (0.5, 1.0, 1.5)]
    for _ in range(14):
        settings.append(
            (
                round(0.005 * int(rng.integers(0, 201)), 3),
                round(0.01 * int(rng.integers(0, 101)), 2),
                round(1.0 + 0.05 * int(rng.integers(0, 61)), 2),
            )
        )
    cases = []
    for p, q, gamma in settings:
        budgets = np.rint(gamma * ns).astype(np.int64)
        curve = markov.success_exact(ns, p, q, budgets)
        for n, budget, value in zip(ns.tolist(), budgets.tolist(), curve.tolist(), strict=True):
            cases.append(Case("successExact", (n, p, q, budget), value))
    return cases


def wide_cases(rng) -> list[Case]:
    """success_exact beyond the sliders: every path of the long-sum engine and its refusals."""
    points = [
        (0, 0.5, 0.5, 0),
        (5, 0.95, 0.5, 4),  # budget below n
        (1, 0.3, 0.9, 10),
        (1, 0.999, 0.999, 1e300),
        (1, 1e-9, 0.999999, 1e12),
        (10**5, 0.95, 0.9, 2 * 10**5),  # the largest term from Loader's formula
        (5000, 0.5, 0.99, 12000),
        (3000, 0.2, 0.95, 1e30),
        (10**5, 0.3, 0.9, 10**6),  # walked segment by segment from the mode
        (2 * 10**5, 0.5, 0.95, 1e30),
        (1000, 0.5, 0.99, 1e30),
        (2, 1e-300, 0.5, 1e300),
        (3, 0.01, 0.999, 1e8),
        (40, 0.5, 0.0, 100),
        (40, 1.0, 0.7, 40),
        (3 * 10**5, 0.9, 0.9999, 1e30),  # Loader's formula, a result near 0.04
        (3 * 10**5, 0.5, 0.9997, 1e30),  # walked from the mode, about 8e-40
        (3 * 10**5, 0.5, 0.9997, 6 * 10**5),
        (2, 1e-12, 1.0, 1e300),  # refused: more terms than the engine sums
        (2**62, 0.5, 0.5, 2**62),
    ]
    for _ in range(150):
        n = int(rng.choice([2, 3, 7, 20, 100, 400, 2000, 6000]))
        p, q = (float(x) for x in rng.uniform(0, 1, 2))
        budget = float(rng.choice([n, n + 1, 2 * n, 5 * n, 1e6, 1e30]))
        points.append((n, p, q, budget))
    for _ in range(150):  # small p, q near 1: long sums whose largest term is a sum of logs
        n = int(rng.integers(2, 6000))
        p, q = float(10 ** rng.uniform(-6, 0)), float(rng.uniform(0.5, 1))
        points.append((n, p, q, float(rng.choice([n, 2 * n, 10 * n, 1e30]))))
    return [Case("successExact", pt, _py(markov.success_exact, *pt)) for pt in points]


def table_cases(rng) -> list[Case]:
    cases = []
    for gamma, n in [(1.5, 1), (1.5, 3), (2.5, 1), (0.5, 5), (1.05, 10), (2.05, 10), (4.0, 200)]:
        cases.append(Case("roundedBudget", (gamma, n), round(gamma * n), exact=True))
    for gamma in [1.0 + 0.05 * k for k in range(61)]:
        n = int(rng.integers(1, 201))
        cases.append(Case("roundedBudget", (gamma, n), round(gamma * n), exact=True))
    settings = [(0.95, 2.0)] + [
        (round(float(rng.uniform(0.5, 1)), 3), round(float(rng.uniform(1, 4)), 2)) for _ in range(5)
    ]
    for p, gamma in settings:
        table = markov.reference_table(p, gamma)
        for row in table.rows:
            expected = {
                "q": row.q,
                "success": {str(n): s for n, s in row.success.items()},
                "collapseN": row.collapse_n,
                "halfLife": row.half_life,
            }
            cases.append(Case("referenceRow", (p, gamma, row.q), expected))
            cases.append(
                Case("collapseHorizon", (p, row.q, gamma, 0.5), row.collapse_n, exact=True)
            )
        threshold = float(rng.uniform(0, 1))
        expected = markov.collapse_horizon(p, 0.5, gamma, threshold, grid=[3, 1, 40, 8])
        cases.append(
            Case("collapseHorizon", (p, 0.5, gamma, threshold, [3, 1, 40, 8]), expected, exact=True)
        )
    return cases


def bad_input_cases() -> list[Case]:
    """Refusals: the page's error names the argument the package's error names."""
    calls = [
        ("chainSuccess", rel.chain_success, (1.2, 3)),
        ("chainSuccess", rel.chain_success, (0.5, -1)),
        ("chainSuccess", rel.chain_success, (0.5, 2.5)),
        ("stepRate", rel.step_rate, (0.5, 0)),
        ("checkedStepFallible", rel.checked_step_fallible, (0.5, 0.5, -0.1)),
        ("checkHelps", rel.check_helps, (0.5, 2)),
        ("groundedSurvival", markov.grounded_survival, (-1, 0.5, 0.5)),
        ("expectedRounds", markov.expected_rounds, (3, 0.5, 1.5)),
        ("successExact", markov.success_exact, (3, 0.5, 0.5, -1)),
        ("successExact", markov.success_exact, (-3, 0.5, 0.5, 1)),
        ("collapseHorizon", markov.collapse_horizon, (0.5, 0.5, -2.0)),
        ("collapseHorizon", markov.collapse_horizon, (0.5, 0.5, 2.0, 1.5)),
    ]
    return [Case(fn, args, _py(py, *args)) for fn, py, args in calls]


# -- cases: the plan DAG --------------------------------------------------------------------------


def random_plan(rng, size=10, *, floats=False):
    """A random DAG in insertion order unlike its topological one, a source or two named only
    as predecessors, now and then a repeated predecessor, and durations with ties."""
    names = [f"t{i}" for i in range(size)]  # index order is a topological order
    graph = {}
    for i in rng.permutation(size).tolist():
        earlier = [names[j] for j in range(i) if rng.random() < 0.3]
        if earlier and rng.random() < 0.1:
            earlier.append(earlier[0])
        graph[names[i]] = earlier
    for name in names[:2]:
        if graph[name] == [] and any(name in ps for ps in graph.values()):
            del graph[name]
    nodes = list(dict.fromkeys([*graph, *(u for ps in graph.values() for u in ps)]))
    if floats:
        values = rng.uniform(0, 10, len(nodes))
        values = np.where(rng.random(len(nodes)) < 0.5, np.round(values * 2) / 2, values)
        durations = {v: float(x) for v, x in zip(nodes, values, strict=True)}
    else:
        durations = {v: int(x) for v, x in zip(nodes, rng.integers(0, 10, len(nodes)), strict=True)}
    return graph, durations


def with_cycle(rng, graph):
    """``graph`` with an edge back from a descendant (or a self-loop)."""
    graph = {v: list(ps) for v, ps in graph.items()}
    for u in graph:
        below = sorted(dag.descendants(graph, [u]) & set(graph))
        if below:
            graph[u].append(below[int(rng.integers(0, len(below)))])
            return graph
    first = next(iter(graph))
    graph[first].append(first)
    return graph


def lecture_plans(rng):
    """The DAG explorer's plans: both examples, each variation, lecture and slider durations."""
    plans = []
    for ex in (examples.coding_task(), examples.migration()):
        high = duration_range(ex.durations)
        variants = [(ex.graph, dict(ex.durations), None)]
        if ex.spurious_edge:
            variants.append((ex.with_edge(*ex.spurious_edge), dict(ex.durations), None))
        if ex.coordination:
            graph, durations = ex.with_coordination()
            variants.append((graph, durations, None))
            variants.append((ex.graph, dict(ex.durations), ex.resources))
            variants.append((graph, durations, ex.resources))
        for graph, durations, resources in variants:
            plans.append((graph, durations, resources))
            for _ in range(4):
                moved = {v: int(rng.integers(0, high + 1)) for v in durations}
                plans.append((graph, moved, resources))
    return plans


def _cp_shape(cp):
    return {
        "nodes": list(cp.earliest_start),
        "makespan": cp.makespan,
        "path": cp.path,
        "earliestStart": cp.earliest_start,
        "earliestFinish": cp.earliest_finish,
        "latestStart": cp.latest_start,
        "latestFinish": cp.latest_finish,
        "slack": cp.slack,
        "serialTime": cp.serial_time,
    }


def _schedule_shape(s):
    return {
        "nodes": list(s.start),
        "start": s.start,
        "finish": s.finish,
        "worker": s.worker,
        "makespan": s.makespan,
        "workers": s.workers,
        "work": s.work,
    }


def _shaped(result, shape):
    return result if isinstance(result, Exception) else shape(result)


def plan_cases(rng) -> list[Case]:
    plans = [(g, d, r, w) for g, d, r in lecture_plans(rng) for w in range(1, 7)]
    for k in range(120):
        graph, durations = random_plan(rng, int(rng.integers(6, 13)), floats=k % 4 == 3)
        resources = None
        if k % 3 == 0:
            keys = {v: [str(rng.choice(["db", "net"]))] for v in durations if rng.random() < 0.4}
            resources = keys or None
        plans.append((graph, durations, resources, int(rng.integers(1, 5))))
    # Names a plain object would reorder (integer-like keys), given as [node, preds] pairs.
    plans.append(({"10": [], "2": ["10"], "1": ["10"], "x": ["1", "2"]}, None, None, 2))
    # Edge cases first in the style guide's sense: empty, one node, all durations 0, a
    # repeated predecessor, more workers than nodes.
    zeros = {"b": ["a"], "c": ["a", "a"], "d": ["b", "c"]}
    plans += [({}, {}, None, 1), ({"a": []}, {"a": 3}, None, 4)]
    plans += [
        (zeros, dict.fromkeys("abcd", 0), None, 2),
        (zeros, dict.fromkeys("abcd", 1.5), None, 9),
    ]
    cases = []
    for k, (graph, durations, resources, workers) in enumerate(plans):
        nodes = list(dict.fromkeys([*graph, *(u for ps in graph.values() for u in ps)]))
        if durations is None:
            durations = {v: 1 + i % 3 for i, v in enumerate(nodes)}
        # The page gets JSON objects; [node, preds] pairs keep integer-like names in order.
        pairs, d_pairs = graph, durations
        if k % 2 or any(v.isdigit() for v in nodes):
            pairs = [[v, list(ps)] for v, ps in graph.items()]
            d_pairs = [[v, x] for v, x in durations.items()]
        cases.append(
            Case("topologicalOrder", (pairs,), _py(dag.topological_order, graph), exact=True)
        )
        cases.append(Case("generations", (pairs,), _py(dag.generations, graph), exact=True))
        cp = _shaped(_py(dag.critical_path, graph, durations), _cp_shape)
        cases.append(Case("criticalPath", (pairs, d_pairs), cp, exact=True))
        for priority in ("critical", "input"):
            schedule = _py(dag.list_schedule, graph, durations, workers, priority, resources)
            args = (pairs, d_pairs, workers, priority, resources)
            cases.append(Case("listSchedule", args, _shaped(schedule, _schedule_shape), exact=True))
        cases.extend(ready_cases(rng, graph, nodes, pairs))
    return cases


def ready_cases(rng, graph, nodes, pairs) -> list[Case]:
    order = dag.topological_order(graph)
    done = order[: int(rng.integers(0, len(order) + 1))]
    ready = dag.ready_set(graph, done)
    running = [v for v in ready if rng.random() < 0.4]
    rest = [v for v in nodes if v not in done and v not in running]
    blocked = [v for v in rest if rng.random() < 0.2]
    return [
        Case(
            "readySet",
            (pairs, done, running, blocked),
            dag.ready_set(graph, done, running, blocked),
            exact=True,
        ),
        Case("readySet", (pairs,), dag.ready_set(graph), exact=True),
    ]


def cycle_cases(rng) -> list[Case]:
    cases = []
    for k in range(40):
        graph, durations = random_plan(rng, int(rng.integers(3, 10)))
        graph = with_cycle(rng, graph) if k % 8 else {**graph, "self": ["self"]}
        if "self" in graph:
            durations["self"] = 1
        pairs = [[v, list(ps)] for v, ps in graph.items()]
        d_pairs = [[v, x] for v, x in durations.items()]
        for fn, call, args in [
            ("topologicalOrder", dag.topological_order, (graph,)),
            ("generations", dag.generations, (graph,)),
            ("criticalPath", dag.critical_path, (graph, durations)),
            ("listSchedule", dag.list_schedule, (graph, durations, 2)),
        ]:
            js_args = (pairs, *((d_pairs,) if len(args) > 1 else ()), *args[2:])
            cases.append(Case(fn, js_args, _py(call, *args), exact=True))
    return cases


def bad_plan_cases() -> list[Case]:
    g = {"b": ["a"], "c": ["a"]}
    d = {"a": 1, "b": 2, "c": 3}
    calls = [
        ("criticalPath", dag.critical_path, (g, {"a": 1, "b": 2})),
        ("criticalPath", dag.critical_path, (g, {**d, "zz": 1})),
        ("criticalPath", dag.critical_path, (g, {**d, "b": -1})),
        ("listSchedule", dag.list_schedule, (g, d, 0)),
        ("listSchedule", dag.list_schedule, (g, d, 2, "fastest")),
        ("listSchedule", dag.list_schedule, (g, d, 2, "critical", {"zz": ["db"]})),
        ("readySet", dag.ready_set, (g, ["zz"])),
        ("readySet", dag.ready_set, ({"a": ["a"]},)),
    ]
    return [Case(fn, args, _py(call, *args)) for fn, call, args in calls]


def _pairs(mapping):
    return [[k, list(v) if isinstance(v, list) else v] for k, v in mapping.items()]


def figure_cases() -> list[Case]:
    """Calls whose ``expected`` is a check against the lecture's figures (lecture-facts)."""
    a, b = examples.coding_task(), examples.migration()
    b_graph, b_durations = b.with_coordination()
    rounded = [(10, 0.599, 0.771, 0.949, 1.0), (200, 0.0, 0.006, 0.350, 1.0)]
    cases = [
        Case("chainSuccess", (0.9, 10), lambda v: round(v, 4) == 0.3487),
        Case("chainSuccess", (0.95, 50), lambda v: round(v, 4) == 0.0769),
        Case("halfLife", (0.95,), lambda v: round(v, 1) == 13.5),
        Case("checkedStep", (0.9, 1.0), lambda v: round(v, 4) == 0.99),
        Case("expectedAttempts", (0.9, 1.0), lambda v: round(v, 2) == 1.11),
        Case("expectedAttempts", (0.5, 1.0), lambda v: v == 2.0),
        Case("checkedStepLimit", (0.9, 1.0), lambda v: round(v, 12) == 1.0),
        Case("checkedStepFallible", (0.9, 0.8, 0.1), lambda v: round(v, 4) == 0.963),
        Case("checkHelps", (0.3, 0.3), lambda v: v is False),
        Case(
            "perStepVsPerGraph",
            (0.9, 10, 1.0),
            lambda v: (round(v["perStep"], 3), round(v["perGraph"], 3)) == (0.904, 0.576),
        ),
        Case("minBudgetFactor", (0.95,), lambda v: round(v, 3) == 1.053),
        Case("successExact", (50, 0.95, 0.9, 100), lambda v: round(v, 3) == 0.769),
        Case(
            "criticalPath",
            (_pairs(a.graph), _pairs(a.durations)),
            lambda v: (
                (v["makespan"], v["serialTime"], v["slack"]["write_tests"]) == (10, 12, 5)
                and v["path"] == ["read_spec", "fetch_data", "write_code", "run_tests", "report"]
            ),
        ),
        Case(
            "criticalPath",
            (_pairs(a.with_edge(*a.spurious_edge)), _pairs(a.durations)),
            lambda v: (v["makespan"], v["slack"]["write_tests"]) == (10, 2),
        ),
        Case(
            "criticalPath",
            (_pairs(b.graph), _pairs(b.durations)),
            lambda v: (v["makespan"], v["path"]) == (18, ["F", "S", "E", "A", "Y", "V"]),
        ),
        Case(
            "criticalPath",
            (_pairs(b.graph), _pairs(b.with_duration("E", 6))),
            lambda v: v["makespan"] == 16,
        ),
        Case(
            "listSchedule",
            (_pairs(b_graph), _pairs(b_durations), 3),
            lambda v: (v["makespan"], v["work"]) == (22, 34),
        ),
        Case(
            "listSchedule",
            (_pairs(b.graph), _pairs(b.durations), 3, "critical", b.resources),
            lambda v: v["makespan"] == 29,
        ),
    ]
    for q, collapse, half in [(0.0, 15, 13.5), (0.5, 30, 27.4), (0.9, 135, 138.3)]:
        column = [row[1 + [0.0, 0.5, 0.9].index(q)] for row in rounded]
        cases.append(
            Case(
                "referenceRow",
                (0.95, 2.0, q),
                lambda v, column=column, collapse=collapse, half=half: (
                    [round(v["success"][str(n)], 3) for n in (10, 200)] == column
                    and v["collapseN"] == collapse
                    and round(v["halfLife"], 1) == half
                ),
            )
        )
    return cases


# -- running the page's side once -----------------------------------------------------------------


FAMILIES = {
    "reliability": reliability_cases,
    "markov": markov_cases,
    "horizon": horizon_cases,
    "wide": wide_cases,
    "table": table_cases,
    "plans": plan_cases,
    "cycles": cycle_cases,
}


@pytest.fixture(scope="module")
def parity(tmp_path_factory):
    """``{family: [(case, page result)]}``, every case evaluated by one Node process."""
    cases = {
        name: make(np.random.default_rng(20261202 + i))
        for i, (name, make) in enumerate(FAMILIES.items())
    }
    cases["bad input"] = bad_input_cases() + bad_plan_cases()
    cases["figures"] = figure_cases()
    flat = [case for family in cases.values() for case in family]
    path = tmp_path_factory.mktemp("page") / "cases.json"
    path.write_text(json.dumps([{"fn": c.fn, "args": list(c.args)} for c in flat], allow_nan=False))
    run = subprocess.run(
        [NODE, str(RUNNER), *map(str, MODULES), str(path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 0, run.stderr
    results = iter(json.loads(run.stdout, object_hook=_decode))
    return {name: [(case, next(results)) for case in family] for name, family in cases.items()}


def _decode(obj):
    return float(obj["$float"]) if set(obj) == {"$float"} else obj


def _number_differs(js, py) -> bool:
    """Numbers: equal infinities, both NaN, or within RTOL of each other (no absolute floor:
    a tiny or zero result must come out tiny or zero to the same relative precision)."""
    if isinstance(py, bool) or py is None or isinstance(js, bool) or js is None:
        return js != py
    js, py = float(js), float(py)
    if math.isnan(py) or math.isnan(js):
        return not (math.isnan(js) and math.isnan(py))
    if math.isinf(py):
        return js != py
    return abs(js - py) > RTOL * abs(py)


def differs(case: Case, outcome: dict) -> str | None:
    """Why the page's outcome differs from the package's, or None when they agree."""
    expected = case.expected
    if isinstance(expected, Exception):
        if "error" not in outcome:
            return f"the package raised {expected!r}, the page returned {outcome.get('value')!r}"
        if isinstance(expected, dag.CycleError):
            if outcome.get("cycle") != expected.cycle:
                return f"cycle {outcome.get('cycle')!r}, the package names {expected.cycle!r}"
            return None
        # Both name the offending argument first ("p must be ...", "durations has ...").
        if outcome["message"].split()[0] != str(expected).split()[0]:
            return f"message {outcome['message']!r}, the package says {str(expected)!r}"
        return None
    if "error" in outcome:
        return f"the page raised {outcome['error']}: {outcome['message']}"
    return _value_differs(outcome["value"], expected, case)


def _value_differs(js, py, case: Case, where: str = "") -> str | None:
    if isinstance(py, dict):
        # Keys as a set: a plain object lists integer-like keys first, so the node order of
        # per-node results is the list "nodes", compared exactly.
        if not isinstance(js, dict) or set(js) != {str(k) for k in py}:
            return f"{where}keys {list(js) if isinstance(js, dict) else js!r} != {list(py)!r}"
        for key, value in py.items():
            # Total work: Python 3.12 sums floats with compensation, so only to RTOL.
            sub = case if key not in ("serialTime", "work") else Case(case.fn, case.args, None)
            found = _value_differs(js[str(key)], value, sub, f"{where}{key}.")
            if found:
                return found
        return None
    if isinstance(py, list):
        if js != py:
            return f"{where}{js!r} != {py!r}"
        return None
    if case.exact:
        return None if js == py and type(js) is not bool else f"{where}{js!r} != {py!r} (exact)"
    if _number_differs(js, py):
        return f"{where}{js!r} != {py!r} beyond rel {RTOL:g}"
    return None


def _check(parity, family):
    pairs = parity[family]
    bad = [(case, why) for case, outcome in pairs if (why := differs(case, outcome))]
    shown = "; ".join(f"{c.fn}{c.args!r}: {why}" for c, why in bad[:3])
    assert not bad, f"{len(bad)} of {len(pairs)} {family} cases differ (rel {RTOL:g}): {shown}"


# -- the tests ------------------------------------------------------------------------------------


@pytest.mark.parametrize("family", [*FAMILIES, "bad input"])
def test_page_matches_the_package(parity, family):
    _check(parity, family)


def test_every_exported_function_is_compared(parity):
    formulas = "".join(path.read_text() for path in MODULES[1:])  # not checks.js' helpers
    exported = set(re.findall(r"^export function (\w+)", formulas, flags=re.M))
    compared = {case.fn for name, cases in parity.items() if name != "figures" for case, _ in cases}
    assert exported - compared == set(), "exported but never compared with the package"
    assert sum(map(len, parity.values())) > 1000  # a few thousand cases in all


def test_the_lecture_figures(parity):
    """The page's numbers against the lecture's printed figures, not against the package."""
    failed = [
        f"{case.fn}{case.args!r} gave {outcome}"
        for case, outcome in parity["figures"]
        if "value" not in outcome or not case.expected(outcome["value"])
    ]
    assert not failed, failed


def test_a_changed_number_is_caught(parity):
    """The comparison fails when one of the page's results moves by 1e-11 or one start by 1."""
    case, outcome = next((c, o) for c, o in parity["horizon"] if 0.1 < (o["value"] or 0) < 0.9)
    assert differs(case, outcome) is None
    assert differs(case, {"value": outcome["value"] * (1 + 1e-11)}) is not None
    case, outcome = next((c, o) for c, o in parity["plans"] if c.fn == "listSchedule")
    assert differs(case, outcome) is None
    moved = json.loads(json.dumps(outcome))
    node = moved["value"]["nodes"][-1]
    moved["value"]["start"][node] += 1
    assert differs(case, moved) is not None
    reordered = json.loads(json.dumps(outcome))
    reordered["value"]["nodes"].reverse()
    assert differs(case, reordered) is not None
