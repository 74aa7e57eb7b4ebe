r"""Each student's own worked examples: a coding task (A) and a connector migration (B),
drawn from the task kinds the lecture uses.

A plan is drawn as ``((node, (predecessors, ...)), ...)`` in a topological order (a tuple,
so the frozen parameter objects stay hashable) and turned into a
:class:`~decompkit.examples.WorkedExample` by :func:`worked_example`; without a drawn plan
that function gives the lecture's own example. Coding task: the spec is read, tests and code
are written (data fetched, an environment set up, the code linted, docs written on the way),
the tests run, and exactly one task reads the test run (a review, a deployment or a report),
possibly followed by one or two more. Migration: reading tasks, a fan-out of 3 or 4 patches
that each wait for all of them and share the ``"tenant"`` lock, an approval (perhaps after
integration tests), then deploy and verify. The number of topological orders of B is then a
product of independent choices, :math:`N = N_\text{read} \cdot k! \cdot N_\text{after}`.
What the DAG notebook asks about is chosen from the drawn plan: a spurious edge that keeps the
makespan but eats slack (:func:`draw_spurious_edge`) and a moment of a run for the ready set
(:func:`draw_moment`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

import numpy as np

from .. import dag, examples

__all__ = [
    "CODING_KINDS",
    "MIGRATION_KINDS",
    "DURATION_RANGES",
    "Plan",
    "draw_coding_task",
    "draw_migration",
    "patches",
    "draw_durations",
    "draw_spurious_edge",
    "draw_moment",
    "unique_critical_path",
    "worked_example",
]

#: Task kinds of a coding task: ``{kind: label}``, in an order every drawn plan follows.
CODING_KINDS = {
    "read_spec": "read the spec",
    "setup_env": "set up the environment",
    "fetch_data": "fetch the data",
    "write_tests": "write the tests",
    "write_code": "write the code",
    "lint": "lint the code",
    "write_docs": "write the docs",
    "run_tests": "run the tests",
    "review": "review",
    "deploy": "deploy",
    "report": "report",
}

#: Tasks of a connector migration by their letter: ``{letter: (label, phase)}``, in an order
#: every drawn plan follows; the patches are the fan-out.
MIGRATION_KINDS = {
    "F": ("find callers", "read"),
    "S": ("read schemas", "read"),
    "R": ("read runbook", "read"),
    "L": ("list consumers", "read"),
    "P": ("patch reporting", "patch"),
    "E": ("patch ETL", "patch"),
    "D": ("patch dashboard API", "patch"),
    "B": ("patch billing export", "patch"),
    "N": ("patch notifications", "patch"),
    "T": ("integration tests", "join"),
    "A": ("approval", "join"),
    "Y": ("deploy", "after"),
    "W": ("write release notes", "after"),
    "V": ("verify production", "after"),
}

#: Ranges ``(low, high)`` per task from which a student's durations are drawn, for each worked
#: example; they keep every task's role in the story (the lecture's tasks keep the ranges
#: they always had).
DURATION_RANGES = {
    "coding_task": {
        "read_spec": (2, 9),
        "setup_env": (2, 10),
        "fetch_data": (6, 30),
        "write_tests": (4, 24),
        "write_code": (8, 40),
        "lint": (1, 6),
        "write_docs": (3, 15),
        "run_tests": (2, 9),
        "review": (3, 12),
        "deploy": (2, 10),
        "report": (2, 8),
    },
    "migration": {
        "F": (2, 12),
        "S": (2, 12),
        "R": (1, 9),
        "L": (2, 10),
        "P": (8, 30),
        "E": (10, 40),
        "D": (6, 30),
        "B": (6, 30),
        "N": (4, 20),
        "T": (3, 12),
        "A": (1, 6),
        "Y": (2, 12),
        "W": (2, 10),
        "V": (3, 15),
    },
}

#: What may follow the test run: its one reader first, then ``(task, predecessor)`` pairs.
_AFTER_TESTS = (
    ("report", ()),
    ("review", ()),
    ("deploy", ()),
    ("review", (("report", "review"),)),
    ("review", (("deploy", "review"),)),
    ("deploy", (("report", "deploy"),)),
    ("review", (("deploy", "review"), ("report", "review"))),
    ("review", (("deploy", "review"), ("report", "deploy"))),
)
#: Inputs a reader of the test run may take besides it, each drawn with probability 0.6.
_READER_INPUTS = {
    "report": ("write_docs", "fetch_data", "write_code"),
    "review": ("write_code", "write_docs", "write_tests"),
    "deploy": ("write_code", "write_docs", "setup_env"),
}
_OPTIONAL = ("setup_env", "fetch_data", "lint", "write_docs")
_OPTIONAL_WEIGHTS = (0.2, 0.35, 0.3, 0.15)  # data to fetch is the lecture's story


class Plan(tuple):
    """A drawn plan: ``((node, (predecessors, ...)), ...)``, a tuple so that the frozen
    parameter objects holding it stay hashable, shown as the graph it stands for.

    Examples
    --------
    >>> plan = Plan((("read_spec", ()), ("write_code", ("read_spec",))))
    >>> plan
    {'read_spec': [], 'write_code': ['read_spec']}
    >>> plan == (("read_spec", ()), ("write_code", ("read_spec",)))
    True
    """

    __slots__ = ()

    def __repr__(self) -> str:
        return repr({node: list(preds) for node, preds in self})


def _coin(rng: np.random.Generator, p: float = 0.5) -> bool:
    return bool(rng.random() < p)


def draw_coding_task(rng: np.random.Generator) -> tuple:
    """A coding task of 6 or 7 tasks as ``((node, (predecessors, ...)), ...)``.

    Every node is a kind of :data:`CODING_KINDS`, listed in that order (a topological
    order); ``run_tests`` is read by exactly one task.

    Examples
    --------
    >>> plan = draw_coding_task(np.random.default_rng(1))
    >>> plan == draw_coding_task(np.random.default_rng(1))
    True
    >>> graph = dict(plan)
    >>> 6 <= len(graph) <= 7 and set(graph) <= set(CODING_KINDS)
    True
    >>> sum("run_tests" in preds for preds in graph.values())
    1
    """
    size = int(rng.integers(6, 8))
    fits = [a for a in _AFTER_TESTS if 4 + 1 + len(a[1]) <= size]
    reader, later = fits[int(rng.integers(0, len(fits)))]
    extra = size - 4 - 1 - len(later)
    chosen = set(rng.choice(_OPTIONAL, size=extra, replace=False, p=_OPTIONAL_WEIGHTS).tolist())
    preds: dict[str, list] = {"read_spec": []}
    if "setup_env" in chosen:
        preds["setup_env"] = []
    if "fetch_data" in chosen:
        preds["fetch_data"] = ["read_spec"] if _coin(rng, 0.6) else []
    preds["write_tests"] = ["read_spec"]
    if "fetch_data" in chosen and _coin(rng, 0.3):
        preds["write_tests"].append("fetch_data")  # tests on the real data
    if "setup_env" in chosen and _coin(rng, 0.3):
        preds["write_tests"].append("setup_env")  # fixtures need the environment
    if "fetch_data" in chosen:
        code = [["fetch_data"], ["read_spec", "fetch_data"]][int(rng.integers(0, 2))]
    else:
        code = ["read_spec"]
    if _coin(rng, 0.35 if "fetch_data" in chosen else 0.6):
        code.append("write_tests")  # test first: the code is written against the tests
    env_to_code = "setup_env" in chosen and _coin(rng)
    preds["write_code"] = code + (["setup_env"] if env_to_code else [])
    if "lint" in chosen:
        preds["lint"] = ["write_code"]
    if "write_docs" in chosen:
        preds["write_docs"] = ["read_spec"] if _coin(rng) else ["write_code"]
    preds["run_tests"] = ["lint" if "lint" in chosen else "write_code", "write_tests"]
    if "setup_env" in chosen and not env_to_code:
        preds["run_tests"].append("setup_env")
    preds[reader] = ["run_tests"]
    for other in _READER_INPUTS[reader]:
        if other in preds and _coin(rng, 0.6):
            preds[reader].append(other)
    for node, before in later:
        preds[node] = [before]
    order = list(CODING_KINDS)
    return Plan((node, tuple(preds[node])) for node in sorted(preds, key=order.index))


def draw_migration(rng: np.random.Generator) -> tuple:
    """A connector migration of 8 to 11 tasks as ``((node, (predecessors, ...)), ...)``.

    Reading tasks (``F`` always), 3 or 4 patches each waiting for every reading task, an
    approval ``A`` (after integration tests ``T`` or the patches), deploy ``Y`` and verify
    ``V``, perhaps release notes ``W``; nodes are letters of :data:`MIGRATION_KINDS`, listed
    in that order (a topological order).

    Examples
    --------
    >>> graph = dict(draw_migration(np.random.default_rng(3)))
    >>> 8 <= len(graph) <= 11 and set(graph) <= set(MIGRATION_KINDS)
    True
    >>> graph["A"] == ["T"] or set(graph["A"]) == set(patches(graph))
    True
    """
    preds: dict[str, list] = {"F": []}
    reading = ["F", *(r for r in ("S", "R", "L") if _coin(rng, 0.6))]
    if len(reading) == 1:
        reading.append("R")
    for node in reading[1:]:
        preds[node] = ["F"] if _coin(rng, 0.5) else []
    chosen = rng.choice(["P", "E", "D", "B", "N"], size=int(rng.integers(3, 5)), replace=False)
    for node in chosen.tolist():
        preds[node] = list(reading)
    tests, notes = _coin(rng, 0.4), _coin(rng, 0.5)
    while len(preds) + 3 + tests + notes > 11:
        tests, notes = (False, notes) if tests else (False, False)
    fan_out = [n for n in MIGRATION_KINDS if n in preds and MIGRATION_KINDS[n][1] == "patch"]
    if tests:
        preds["T"] = list(fan_out)
    preds["A"] = ["T"] if tests else list(fan_out)
    preds["Y"] = ["A"]
    if notes:
        preds["W"] = ["A"] if _coin(rng) else ["Y"]
    preds["V"] = ["Y"]
    order = list(MIGRATION_KINDS)
    return Plan((node, tuple(preds[node])) for node in sorted(preds, key=order.index))


def patches(graph) -> tuple:
    """The patch tasks of a migration plan, in the order of :data:`MIGRATION_KINDS`.

    Examples
    --------
    >>> patches(examples.migration().graph)
    ('P', 'E', 'D')
    """
    return tuple(n for n in MIGRATION_KINDS if n in graph and MIGRATION_KINDS[n][1] == "patch")


def draw_durations(rng: np.random.Generator, ranges: Mapping, nodes=None) -> tuple:
    """``(node, duration)`` pairs, each a whole number drawn from its ``(low, high)`` range,
    for ``nodes`` (all of ``ranges`` when None) in their order.

    Examples
    --------
    >>> draw_durations(np.random.default_rng(0), {"a": (2, 2), "b": (5, 5)})
    (('a', 2), ('b', 5))
    >>> draw_durations(np.random.default_rng(0), {"a": (2, 2), "b": (5, 5)}, ["b"])
    (('b', 5),)
    """
    nodes = list(ranges) if nodes is None else list(nodes)
    return tuple((n, int(rng.integers(ranges[n][0], ranges[n][1] + 1))) for n in nodes)


_EXAMPLES = {"coding_task": examples.coding_task, "migration": examples.migration}


def worked_example(name: str, durations: tuple = (), plan: tuple = (), spurious_edge: tuple = ()):
    """A fresh copy of the worked example ``name``, with a drawn plan and duration overrides.

    Parameters
    ----------
    name : {"coding_task", "migration"}
        The lecture's example this one stands for.
    durations : tuple
        ``(node, duration)`` pairs replacing the plan's durations.
    plan : tuple
        ``((node, (predecessors, ...)), ...)`` from :func:`draw_coding_task` or
        :func:`draw_migration`; empty keeps the lecture's graph (and its durations, labels,
        spurious edge, lock and fan-out).
    spurious_edge : tuple
        ``(u, v)``, the edge of a drawn coding task that is not a real dependency.

    Raises
    ------
    ValueError
        For an unknown example, a plan task that is not of the example's kinds, or a
        duration (or a drawn plan without one) naming a task the plan does not have.

    Examples
    --------
    >>> worked_example("coding_task", (("report", 7),)).durations["report"]
    7
    >>> plan = (("F", ()), ("P", ("F",)), ("E", ("F",)), ("A", ("P", "E")))
    >>> b = worked_example("migration", (("F", 1), ("P", 2), ("E", 3), ("A", 1)), plan)
    >>> b.fan_out, b.resources["E"], b.labels["A"]
    (('P', 'E'), ['tenant'], 'approval')
    >>> worked_example("coding", ())
    Traceback (most recent call last):
    ...
    ValueError: example must be 'coding_task' or 'migration', got 'coding'
    """
    if name not in _EXAMPLES:
        raise ValueError(f"example must be 'coding_task' or 'migration', got {name!r}")
    example = _EXAMPLES[name]()
    if plan:
        example = _drawn(example, name, plan, spurious_edge)
    table = dict(example.durations)
    for node, value in durations:
        if node not in example.graph:
            raise ValueError(f"duration override names {node!r}, not a task of {example.name!r}")
        table[node] = value
    missing = [node for node in example.graph if node not in table]
    if missing:
        raise ValueError(f"the drawn plan has no duration for {missing!r}")
    return dataclasses.replace(example, durations=table)


def _drawn(example, name: str, plan: tuple, spurious_edge: tuple):
    graph = {node: list(preds) for node, preds in plan}
    kinds = CODING_KINDS if name == "coding_task" else MIGRATION_KINDS
    unknown = [node for node in graph if node not in kinds]
    if unknown:
        raise ValueError(f"plan names {unknown!r}, not tasks of a {name!r}")
    if name == "coding_task":
        return dataclasses.replace(
            example,
            graph=graph,
            durations={},
            labels={node: CODING_KINDS[node] for node in graph},
            spurious_edge=tuple(spurious_edge) or None,
        )
    fan_out = patches(graph)
    return dataclasses.replace(
        example,
        graph=graph,
        durations={},
        labels={node: MIGRATION_KINDS[node][0] for node in graph},
        resources={node: ["tenant"] for node in fan_out},
        fan_out=fan_out,
    )


def unique_critical_path(graph, durations) -> bool:
    """Whether the plan has one critical path only.

    Examples
    --------
    >>> unique_critical_path({"a": [], "b": [], "c": ["a", "b"]}, {"a": 2, "b": 2, "c": 1})
    False
    """
    # Durations are positive, so two longest paths cannot share all their nodes: the path is
    # unique exactly when no task off it has zero slack.
    cp = dag.critical_path(graph, durations)
    return sum(1 for s in cp.slack.values() if s == 0) == len(cp.path)


#: Tasks of a coding task a spurious edge may join: work before the test run.
_SPURIOUS_TAILS = ("read_spec", "setup_env", "fetch_data", "write_tests", "write_code", "lint")
_SPURIOUS_HEADS = ("setup_env", "fetch_data", "write_tests", "write_code", "lint", "write_docs")


def draw_spurious_edge(rng: np.random.Generator, graph, durations) -> tuple:
    """An edge ``(u, v)`` between tasks before the test run that keeps the makespan and cuts
    (without using up) the slack of ``v``, the critical path staying unique; ``()`` when the
    plan has none.

    Examples
    --------
    >>> a = examples.coding_task()
    >>> draw_spurious_edge(np.random.default_rng(0), a.graph, a.durations)
    ('fetch_data', 'write_tests')
    """
    cp = dag.critical_path(graph, durations)
    found = []
    for u in _SPURIOUS_TAILS:
        for v in _SPURIOUS_HEADS:
            if u not in graph or v not in graph or u == v or u in graph[v]:
                continue
            if v in dag.ancestors(graph, [u]):
                continue
            extended = {n: [*p, u] if n == v else list(p) for n, p in graph.items()}
            new = dag.critical_path(extended, durations)
            if (
                new.makespan == cp.makespan
                and 0 < new.slack[v] < cp.slack[v]
                and unique_critical_path(extended, durations)
            ):
                found.append((u, v))
    return found[int(rng.integers(0, len(found)))] if found else ()


def draw_moment(rng: np.random.Generator, graph) -> tuple[tuple, tuple]:
    """``(done, running)`` of the ready-set exercise: a prefix of a random topological order
    done, and some but not all of the ready tasks running, while another task still waits.
    Each possible answer is about as likely as the next, whichever moments lead to it.

    Examples
    --------
    >>> done, running = draw_moment(np.random.default_rng(0), examples.coding_task().graph)
    >>> done, running
    (('read_spec',), ('fetch_data',))
    >>> sorted(dag.ready_set(examples.coding_task().graph, done=done, running=running))
    ['write_tests']
    """
    order, left = [], dict(graph)
    while left:
        ready = [n for n, preds in left.items() if all(p in order for p in preds)]
        pick = ready[int(rng.integers(0, len(ready)))]
        order.append(pick)
        del left[pick]
    by_answer: dict[frozenset, list] = {}
    for k in range(1, len(order)):
        ready = dag.ready_set(graph, done=order[:k])
        if len(ready) < 2 or len(graph) - k - len(ready) < 1:
            continue
        for mask in range(1, 2 ** len(ready) - 1):
            running = [n for i, n in enumerate(ready) if mask >> i & 1]
            answer = frozenset(ready) - set(running)
            by_answer.setdefault(answer, []).append((order[:k], running))
    if not by_answer:
        return (), ()
    answers = sorted(by_answer, key=lambda a: sorted(a))
    moments = by_answer[answers[int(rng.integers(0, len(answers)))]]
    done, running = moments[int(rng.integers(0, len(moments)))]
    in_plan = list(graph)
    return (
        tuple(sorted(done, key=in_plan.index)),
        tuple(sorted(running, key=in_plan.index)),
    )
