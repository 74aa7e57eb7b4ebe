r"""Parameters, answer key and visible checks of the plan-DAG notebook (worked examples A
and B).

Orders are checked with :func:`decompkit.dag.order_violations`, so every valid order passes;
a critical path passes when it follows edges and its durations add up to the makespan
:math:`T_\infty = \max_v EF_v`; slack is :math:`LS_v - ES_v`; list schedules come from
:func:`decompkit.dag.list_schedule` on ``P.workers`` workers.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from .. import dag
from ..examples import speedup
from .checks import NEVER_NEGATIVE, ON_TRACK, Mistake, judge_number, judge_order, judge_set
from .contract import Diagnosis, Exercise, Item
from .drawn_plans import (
    DURATION_RANGES,
    draw_coding_task,
    draw_durations,
    draw_migration,
    draw_moment,
    draw_spurious_edge,
    unique_critical_path,
    worked_example,
)
from .page import NumbersDisplay, report
from .support import cached_key, misread_shows, mistake_clashes

__all__ = [
    "DagParams",
    "draw",
    "degenerate",
    "key",
    "judge",
    "check",
    "path_problems",
    "ITEMS",
    "EXERCISE",
]


@dataclass(frozen=True)
class DagParams(NumbersDisplay):
    """Numbers and choices of the plan-DAG notebook (lecture section 4).

    Attributes
    ----------
    example_a, example_b : names of the worked examples in ``decompkit.examples``
        (A: the coding task, B: the connector migration).
    plan_a, plan_b : the student's own plans, ``((node, (predecessors, ...)), ...)`` drawn by
        :mod:`decompkit.exercises.drawn_plans`; empty keeps the lecture's.
    durations_a, durations_b : ``(node, duration)`` pairs replacing the example's own
        durations; empty keeps the lecture's.
    spurious_edge : the edge of the drawn example A that is not a real dependency; empty
        keeps the lecture's.
    coordination : coordination tax of example B's fan-out, in slots.
    done, running : tasks of example A finished and in progress for the ready-set exercise.
    slack_node : the task of example A whose slack is asked for.
    workers : workers of the list schedules of example B.
    """

    example_a: str = "coding_task"
    example_b: str = "migration"
    plan_a: tuple = ()
    plan_b: tuple = ()
    durations_a: tuple = ()
    durations_b: tuple = ()
    spurious_edge: tuple = ()
    coordination: int = 4
    done: tuple = ("read_spec", "fetch_data")
    running: tuple = ("write_tests",)
    slack_node: str = "write_tests"
    workers: int = 3

    @property
    def A(self):
        """Worked example A with this object's plan and durations (a fresh WorkedExample)."""
        return worked_example(self.example_a, self.durations_a, self.plan_a, self.spurious_edge)

    @property
    def B(self):
        """Worked example B with this object's plan, durations and coordination tax."""
        b = worked_example(self.example_b, self.durations_b, self.plan_b)
        return dataclasses.replace(b, coordination=self.coordination)


def draw(rng) -> DagParams:
    """One candidate of per-student plans and numbers (see
    :func:`decompkit.exercises.params.params`).

    The spurious edge, its task and the moment of the ready-set exercise are chosen among
    those that make their exercises meaningful for the drawn plan and durations.
    """
    plan_a, plan_b = draw_coding_task(rng), draw_migration(rng)
    ranges = DURATION_RANGES
    durations_a = draw_durations(rng, ranges["coding_task"], [n for n, _ in plan_a])
    durations_b = draw_durations(rng, ranges["migration"], [n for n, _ in plan_b])
    coordination, workers = int(rng.integers(4, 19)), int(rng.integers(2, 5))
    A = worked_example("coding_task", durations_a, plan_a)
    spurious = draw_spurious_edge(rng, A.graph, A.durations)
    done, running = draw_moment(rng, A.graph)
    return DagParams(
        plan_a=plan_a,
        plan_b=plan_b,
        durations_a=durations_a,
        durations_b=durations_b,
        spurious_edge=spurious,
        coordination=coordination,
        done=done,
        running=running,
        slack_node=spurious[1] if spurious else plan_a[0][0],
        workers=workers,
    )


@cached_key
def key(P: DagParams) -> dict:
    """Every answer of the notebook for the parameters ``P`` (order and paths: one valid
    choice each).

    Examples
    --------
    >>> k = key(DagParams())
    >>> k["makespan_a"], k["slack_a"], k["slack_spurious"], k["wall_coordinated"]
    (10, 5, 2, 22)
    >>> round(k["speedup_b"], 2), k["locked"], k["locked_coordinated"]
    (1.36, 29, 33)
    """
    A, B = P.A, P.B
    cp_a = dag.critical_path(A.graph, A.durations)
    cp_spurious = dag.critical_path(A.with_edge(*A.spurious_edge), A.durations)
    cp_b = dag.critical_path(B.graph, B.durations)
    coordinated, durations = B.with_coordination()
    wall = dag.list_schedule(coordinated, durations, P.workers).makespan
    return {
        "order_a": dag.topological_order(A.graph),
        "ready_now": set(dag.ready_set(A.graph, done=P.done, running=P.running)),
        "n_orders_a": dag.count_topological_orders(A.graph),
        "n_orders_b": dag.count_topological_orders(B.graph),
        "makespan_a": cp_a.makespan,
        "path_a": cp_a.path,
        "slack_a": cp_a.slack[P.slack_node],
        "path_b": cp_b.path,
        "slack_spurious": cp_spurious.slack[P.slack_node],
        "makespan_spurious": cp_spurious.makespan,
        "wall_coordinated": wall,
        "speedup_b": speedup(cp_b.serial_time, wall),
        "locked": dag.list_schedule(
            B.graph, B.durations, P.workers, resources=B.resources
        ).makespan,
        "locked_coordinated": dag.list_schedule(
            coordinated, durations, P.workers, resources=B.resources
        ).makespan,
    }


#: Most topological orders a student counts by hand in example A and in example B.
MAX_ORDERS_A, MAX_ORDERS_B = 30, 120


def degenerate(P: DagParams) -> list[str]:
    """Why ``P`` would make an exercise of the notebook degenerate (empty when usable).

    Examples
    --------
    >>> degenerate(DagParams())
    []
    """
    A, B = P.A, P.B
    if not A.spurious_edge or not P.running:
        return ["the plan has no spurious edge or no moment for the ready set to ask about"]
    expected = key(P)
    found = mistake_clashes(expected, lambda item: _mistakes(item, P))
    if not expected["ready_now"]:
        found.append("no task is ready at the moment asked about")
    if not 2 <= expected["n_orders_a"] <= MAX_ORDERS_A:
        found.append(f"example A has {expected['n_orders_a']} orders: too few or too many")
    if not 2 <= expected["n_orders_b"] <= MAX_ORDERS_B:
        found.append(f"example B has {expected['n_orders_b']} orders: too few or too many")
    spurious = A.with_edge(*A.spurious_edge)
    for name, graph, durations in (
        ("example A", A.graph, A.durations),
        ("example A with the spurious edge", spurious, A.durations),
        ("example B", B.graph, B.durations),
    ):
        if not unique_critical_path(graph, durations):
            found.append(f"{name} has a tie on its critical path")
    if expected["makespan_spurious"] != expected["makespan_a"]:
        found.append("the spurious edge changes the makespan; the exercise is about slack")
    if not 0 < expected["slack_spurious"] < expected["slack_a"]:
        found.append("the spurious edge must cut the slack without using it all up")
    serial = dag.critical_path(B.graph, B.durations).serial_time
    if not expected["wall_coordinated"] < serial:
        found.append("the coordinated run of example B is not faster than the list")
    if not expected["locked"] < serial < expected["locked_coordinated"]:
        found.append("the lock must leave a small gain that the coordination tax turns into a loss")
    if not misread_shows(key, P, "workers"):
        found.append("one worker more or fewer changes no answer: the workers teach nothing")
    return found


def path_problems(graph, durations, path) -> str:
    """What keeps ``path`` from being a critical path of the graph ("" when it is one).

    Any longest path passes, so a tie between two critical paths is never held against
    an answer.

    Examples
    --------
    >>> g = {"b": ["a"], "c": ["a"], "d": ["b", "c"]}
    >>> d = {"a": 1, "b": 2, "c": 2, "d": 1}
    >>> path_problems(g, d, ["a", "c", "d"]), path_problems(g, d, ("a", "b", "d"))
    ('', '')
    >>> path_problems(g, d, ["a", "d"])
    "'a' -> 'd' is not an edge of the plan; a path follows edges"
    """
    path = list(path)
    unknown = [v for v in path if v not in durations]
    if unknown:
        return f"not tasks of the plan: {unknown}"
    if not path:
        return "the path is empty"
    for u, v in zip(path, path[1:], strict=False):
        if u not in graph.get(v, ()):
            return f"{u!r} -> {v!r} is not an edge of the plan; a path follows edges"
    cp = dag.critical_path(graph, durations)
    length = sum(durations[v] for v in path)
    if length < cp.makespan:
        if graph.get(path[0]):
            return f"{path[0]!r} waits for other tasks: a critical path starts at a source"
        if any(path[-1] in preds for preds in graph.values()):
            return f"other tasks wait for {path[-1]!r}: a critical path ends at a sink"
        return "a valid path, but not the longest: another chain of tasks takes more time"
    return ""


def _judge_path(answer, graph, durations) -> Diagnosis:
    if isinstance(answer, (str, bytes, Mapping)) or not isinstance(answer, Iterable):
        return Diagnosis(
            "invalid",
            f"expected a list of tasks from source to sink, got a {type(answer).__name__}",
        )
    try:
        path = list(answer)
        hash(tuple(path))
    except TypeError:
        return Diagnosis("invalid", "expected a list of task names")
    if path and path[0] not in graph and path[-1] not in graph:
        return Diagnosis("invalid", f"not tasks of the plan: {path}")
    report = path_problems(graph, durations, path)
    if report and path_problems(graph, durations, path[::-1]) == "":
        return Diagnosis(
            "off", "reversed: write the path from the first task to the last", "reversed_path"
        )
    if report:
        return Diagnosis("off", report, "not_critical")
    return ON_TRACK


def _mistakes(item: str, P: DagParams) -> list[Mistake]:
    A, B = P.A, P.B
    cp_a = dag.critical_path(A.graph, A.durations)
    v = P.slack_node
    if item in ("makespan_a", "makespan_spurious"):
        graph = A.graph if item == "makespan_a" else A.with_edge(*A.spurious_edge)
        cp = dag.critical_path(graph, A.durations)
        return [
            Mistake(
                "counted_path_tasks",
                len(cp.path),
                "that counts the tasks on the critical path; the makespan adds their durations",
            ),
            Mistake(
                "counted_all_tasks",
                len(graph),
                "that counts all the tasks; the makespan is a duration",
            ),
            Mistake(
                "serial_time",
                cp.serial_time,
                "that is the serial time (one worker); with unlimited workers only the longest "
                "path counts",
            ),
        ]
    if item == "slack_a":
        return [
            Mistake(
                "used_earliest_finish",
                cp_a.latest_start[v] - cp_a.earliest_finish[v],
                "you compared with the earliest finish; slack compares two start times",
            ),
            Mistake(
                "makespan_as_latest_finish",
                cp_a.makespan - cp_a.earliest_finish[v],
                "the tasks after it still need their time: its latest finish is not the makespan",
            ),
            Mistake("zero_slack", 0, "only tasks on the critical path have no slack"),
        ]
    if item == "slack_spurious":
        return [
            Mistake(
                "ignored_new_edge",
                cp_a.slack[v],
                "that is the slack without the new edge: it delays the task's earliest start, "
                "so run both passes again",
            ),
            Mistake(
                "used_earliest_finish",
                _spurious(P).latest_start[v] - _spurious(P).earliest_finish[v],
                "you compared with the earliest finish; slack compares two start times",
            ),
        ]
    if item == "n_orders_a":
        return [
            Mistake(
                "all_permutations",
                _factorial(len(A.graph)),
                "that is every permutation; most of them break an edge",
            )
        ]
    if item == "n_orders_b":
        gens = dag.generations(B.graph)
        widest = max(gens, key=len)
        return [
            Mistake(
                "all_permutations",
                _factorial(len(B.graph)),
                "that is every permutation; most of them break an edge",
            ),
            Mistake(
                "widest_layer_only",
                _factorial(len(widest)),
                "the widest layer is not the only freedom: a task without predecessors may "
                "also slide between others",
            ),
        ]
    cp_b = dag.critical_path(B.graph, B.durations)
    coordinated, durations = B.with_coordination()
    wall = dag.list_schedule(coordinated, durations, P.workers).makespan
    work = sum(durations.values())
    if item == "wall_coordinated":
        return [
            Mistake(
                "no_coordination",
                dag.list_schedule(B.graph, B.durations, P.workers).makespan,
                "without the coordination task: it runs before the fan-out",
            ),
            Mistake(
                "total_work",
                work,
                "that is the total work with coordination, as one worker would do it",
            ),
            Mistake(
                "serial_time", cp_b.serial_time, "that is the serial time of the original list"
            ),
        ]
    if item == "speedup_b":
        return [
            Mistake(
                "inverted",
                wall / cp_b.serial_time,
                "inverted: a speed-up above 1 says how many times faster the parallel run is",
            ),
            Mistake(
                "coordinated_serial",
                work / wall,
                "the serial reference is the original list, without the coordination slots",
            ),
            Mistake(
                "wall_without_tax",
                cp_b.serial_time / cp_b.makespan,
                "the wall time is the coordinated run on P.workers workers, tax included",
            ),
        ]
    if item in ("locked", "locked_coordinated"):
        graph, durs = (B.graph, B.durations) if item == "locked" else (coordinated, durations)
        return [
            Mistake(
                "ignored_lock",
                dag.list_schedule(graph, durs, P.workers).makespan,
                "the lock serialises the patches: they may no longer overlap",
            )
        ]
    return []


_IDEAS = {
    "n_orders_a": "count the ways: which tasks are free to move, and between which neighbours?",
    "n_orders_b": "count the places each free task can take, and multiply the choices that do "
    "not depend on each other",
    "makespan_a": "with unlimited workers, the makespan is the longest chain of durations",
    "slack_a": "run the forward and the backward pass; slack is how far the task's start may slip",
    "slack_spurious": "add the spurious edge first, then run both passes again",
    "makespan_spurious": "add the spurious edge, then find the longest chain of durations again",
    "wall_coordinated": "simulate the list schedule on P.workers workers, the coordination task "
    "before the fan-out",
    "speedup_b": "compare the serial time of the original plan with the coordinated run's wall "
    "time",
    "locked": "tasks that share the resource key never run at the same time: simulate the "
    "schedule again",
    "locked_coordinated": "both at once: the coordination task and the lock",
}


def _spurious(P: DagParams):
    A = P.A
    return dag.critical_path(A.with_edge(*A.spurious_edge), A.durations)


def _factorial(n: int) -> int:
    out = 1
    for k in range(2, n + 1):
        out *= k
    return out


def judge(item: str, answer, P: DagParams) -> Diagnosis:
    """The verdict on one answer of the notebook.

    Items: those of :func:`key`; ``"order_a"`` passes for any topological order of example
    A, ``"path_a"`` and ``"path_b"`` for any critical path.

    Raises
    ------
    ValueError
        When ``item`` is not an item of this notebook.

    Examples
    --------
    >>> P = DagParams()
    >>> judge("order_a", ["report"], P).mistake, judge("makespan_a", 12, P).mistake
    ('order_violated', 'serial_time')
    """
    A, B = P.A, P.B
    expected = key(P)
    if item not in expected:
        raise ValueError(f"item must be one of {sorted(expected)}, got {item!r}")
    if item == "order_a":
        return judge_order(answer, lambda order: dag.order_violations(A.graph, order))
    if item in ("path_a", "path_b"):
        ex = A if item == "path_a" else B
        return _judge_path(answer, ex.graph, ex.durations)
    if item == "ready_now":
        done, running = set(P.done), set(P.running)
        want = expected[item]
        return judge_set(
            answer,
            want,
            what="tasks",
            hints=[
                (
                    "running_is_ready",
                    lambda got: bool(got & running),
                    "a running task is not ready: it has already been dispatched",
                ),
                (
                    "done_is_ready",
                    lambda got: bool(got & done),
                    "a finished task is not ready again",
                ),
                (
                    "predecessor_not_done",
                    lambda got: bool(got - want),
                    "a task is ready only when every one of its predecessors is done",
                ),
                (
                    "ready_task_missing",
                    lambda got: got < want,
                    "a task whose predecessors are all done is missing",
                ),
            ],
        )
    if item == "speedup_b":
        return judge_number(
            answer,
            expected[item],
            mistakes=_mistakes(item, P),
            bounds=(0.0, float(P.workers)),
            bounds_hint="m workers cannot finish more than m times faster than one",
            idea=_IDEAS[item],
        )
    return judge_number(
        answer,
        expected[item],
        rtol=0,
        atol=1e-9,
        mistakes=_mistakes(item, P),
        bounds=(0.0, math.inf),
        bounds_hint=NEVER_NEGATIVE,
        idea=_IDEAS[item],
    )


def check(item: str, answer, P: DagParams) -> None:
    """The visible check of one item: prints ``[ok] B1 makespan_a: on track`` or a hint."""
    report(EXERCISE, item, answer, P)


#: Every graded item of the notebook, in its order.
ITEMS = (
    Item("order_a", "A1", ("order_a",), "topological_order_value", "order"),
    Item("ready_now", "A2", ("ready_now",), "ready_set_value", "set"),
    Item("n_orders_a", "A3", ("n_orders_a",), "count_orders_a_value", "number"),
    Item("n_orders_b", "A4", ("n_orders_b",), "count_orders_b_value", "number"),
    Item("makespan_a", "B1", ("makespan_a",), "makespan_a_value", "number"),
    Item("path_a", "B2", ("path_a",), "critical_path_a_value", "sequence"),
    Item("slack_a", "B3", ("slack_a",), "slack_value", "number"),
    Item("path_b", "B4", ("path_b",), "critical_path_b_value", "sequence"),
    Item("slack_spurious", "C1", ("slack_spurious",), "spurious_slack_value", "number"),
    Item("makespan_spurious", "C2", ("makespan_spurious",), "spurious_makespan_value", "number"),
    Item("wall_coordinated", "D1", ("wall_coordinated",), "coordinated_wall_value", "number"),
    Item("speedup_b", "D2", ("speedup_b",), "speedup_value", "number"),
    Item("locked", "D3", ("locked",), "locked_value", "number"),
    Item("locked_coordinated", "D4", ("locked_coordinated",), "locked_coordinated_value", "number"),
)

#: The notebook as the teaching layer knows it (see :class:`decompkit.exercises.Exercise`).
EXERCISE = Exercise(
    name="dag",
    file="04-plan-dag",
    Params=DagParams,
    draw=draw,
    key=key,
    judge=judge,
    degenerate=degenerate,
    items=ITEMS,
)
