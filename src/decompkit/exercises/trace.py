r"""Parameters, answer key and visible checks of the scheduler-trace notebook (worked
example A).

A failure of :math:`f` blocks its cone :math:`\mathrm{desc}(f)`; under *stop* the call
returns at once and cancels what runs, under *drain* it finishes everything still ready.
Unrolling copies :math:`S = (\{x\} \cup \mathrm{desc}(x)) \cap (\{f\} \cup \mathrm{anc}(f))`
for the faulty node :math:`x`, at most ``kappa_plan`` times per chain of copies.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .. import scheduler as sc
from ..dag import ancestors, descendants
from .checks import NEVER_NEGATIVE, Mistake, judge_number, judge_set
from .contract import Diagnosis, Exercise, Item
from .drawn_plans import DURATION_RANGES, draw_coding_task, draw_durations, worked_example
from .page import NumbersDisplay, report
from .support import cached_key, known_item, misread_shows, mistake_clashes

__all__ = [
    "TraceParams",
    "draw",
    "degenerate",
    "failing_step",
    "key",
    "judge",
    "check",
    "ITEMS",
    "EXERCISE",
]


@dataclass(frozen=True)
class TraceParams(NumbersDisplay):
    """Numbers and choices of the scheduler-trace notebook (lecture section 5).

    Attributes
    ----------
    example : name of the worked example in ``decompkit.examples`` (the coding task).
    plan : the student's own coding task, ``((node, (predecessors, ...)), ...)`` drawn by
        :mod:`decompkit.exercises.drawn_plans`; empty keeps the lecture's.
    durations : ``(node, duration)`` pairs replacing the example's own; empty keeps them.
    workers : workers of the scheduler.
    kappa : attempts per task in the demonstration of a checked step.
    failing : the task whose check fails (the red test run).
    failing_early : a task whose failure catches another task still running.
    faulty : the diagnosis of the failure of ``failing``: the task to unroll.
    faulty_other : a second diagnosis, upstream of ``faulty``, whose unrolling copies more.
    kappa_plan : the plan-level cap on copies of one task.
    red_runs : how many runs of ``failing`` in a row fail (the original, then its copies).
    """

    example: str = "coding_task"
    plan: tuple = ()
    durations: tuple = ()
    workers: int = 2
    kappa: int = 2
    failing: str = "run_tests"
    failing_early: str = "write_tests"
    faulty: str = "write_code"
    faulty_other: str = "fetch_data"
    kappa_plan: int = 2
    red_runs: int = 3

    @property
    def A(self):
        """The worked example with this object's plan and durations (a fresh WorkedExample)."""
        return worked_example(self.example, self.durations, self.plan)

    @property
    def reader(self) -> str:
        """The one task that reads the failed check ``failing`` (``report`` in the lecture)."""
        readers = _readers(self)
        return readers[0] if readers else ""


def draw(rng) -> TraceParams:
    """One candidate of per-student plans and numbers (see
    :func:`decompkit.exercises.params.params`).

    Durations are three times those of the plan-DAG notebook, so a run has room for overlap.
    The diagnoses lie upstream of the test run, the second upstream of the first, and the early
    failure is chosen among the tasks whose failure catches another task still running.
    """
    plan = draw_coding_task(rng)
    graph = {node: list(preds) for node, preds in plan}
    ranges = {node: (3 * a, 3 * b) for node, (a, b) in DURATION_RANGES["coding_task"].items()}
    durations = draw_durations(rng, ranges, list(graph))
    workers, kappa_plan = int(rng.integers(2, 4)), int(rng.integers(1, 4))
    failing = "run_tests"
    # A diagnosis with a predecessor (so the second one has a place to be), every other time
    # one that reads more than the spec; the second diagnosis other than the spec when the
    # plan allows it.
    upstream = [n for n in graph if n in ancestors(graph, [failing]) and graph[n]]
    richer = [n for n in upstream if graph[n] != ["read_spec"]]
    if richer and _coin(rng, 0.5):
        upstream = richer
    faulty = upstream[int(rng.integers(0, len(upstream)))]
    deeper = [n for n in graph if n in ancestors(graph, [faulty])]
    deeper = [n for n in deeper if n != "read_spec"] or deeper
    early = [
        n
        for n in graph
        if n != failing
        and descendants(graph, [n])
        and _failure(graph, dict(durations), workers, n, "stop").cancelled
    ]
    return TraceParams(
        plan=plan,
        durations=durations,
        workers=workers,
        failing=failing,
        failing_early=early[int(rng.integers(0, len(early)))] if early else failing,
        faulty=faulty,
        faulty_other=deeper[int(rng.integers(0, len(deeper)))],
        kappa_plan=kappa_plan,
        red_runs=kappa_plan + 1,
    )


def _coin(rng, p: float) -> bool:
    return bool(rng.random() < p)


def _failure(graph, durations, workers, node, onfail):
    return sc.schedule(graph, durations, workers=workers, onfail=onfail, step=failing_step(node))


def failing_step(node, runs: int = 1) -> sc.ScriptedStep:
    """A checked step under which ``node`` and its first ``runs - 1`` copies fail hard.

    Every other attempt passes. Build a fresh one for every run: a scripted step remembers
    what it has played.

    Examples
    --------
    >>> step = failing_step("run_tests", runs=2)
    >>> [step.attempt(n, "", 1).outcome for n in ("run_tests", "run_tests'", "run_tests''")]
    ['fail', 'fail', 'pass']
    """
    return sc.scripted({node + "'" * k: ["fail"] for k in range(runs)})


def _run(P: TraceParams, node, onfail):
    A = P.A
    return _failure(A.graph, A.durations, P.workers, node, onfail)


def _unroll(P: TraceParams, faulty):
    A = P.A
    first = _run(P, P.failing, "stop")
    return sc.unroll_failed_check(
        A.graph, first.out, P.failing, faulty, P.kappa_plan, durations=A.durations
    )


def _readers(P: TraceParams) -> list:
    """The tasks that read the failed check directly (``report`` in example A)."""
    graph = P.A.graph
    return [n for n in graph if P.failing in graph[n]]


def _limit(P: TraceParams):
    """The run with ``P.red_runs`` red runs in a row: the result, and whether it gave up."""
    A = P.A
    try:
        result = sc.run_with_repair(
            A.graph,
            A.durations,
            workers=P.workers,
            step=failing_step(P.failing, P.red_runs),
            faulty={P.failing: P.faulty},
            kappa_plan=P.kappa_plan,
        )
    except sc.RepairLimitError as error:
        return error.result, True
    return result, False


@cached_key
def key(P: TraceParams) -> dict:
    """Every answer of the notebook for the parameters ``P``.

    ``report_preds`` holds the predecessors of the task that reads the failed check.

    Examples
    --------
    >>> k = key(TraceParams())
    >>> sorted(k["blocked_early"]), sorted(k["cancelled_stop"]), k["end_drain"]
    (['report', 'run_tests'], ['fetch_data'], 8)
    >>> sorted(k["new_nodes"]), k["end_repaired"], k["repairs_made"], k["end_gives_up"]
    (["run_tests'", "write_code'"], 15, 2, 19)
    """
    A = P.A
    late = _run(P, P.failing, "stop")
    early_stop = _run(P, P.failing_early, "stop")
    early_drain = _run(P, P.failing_early, "drain")
    repair = _unroll(P, P.faulty)
    other = _unroll(P, P.faulty_other)
    copy_of_faulty = repair.copies[P.faulty]
    repaired = sc.run_with_repair(
        A.graph,
        A.durations,
        workers=P.workers,
        step=failing_step(P.failing),
        faulty={P.failing: P.faulty},
        kappa_plan=P.kappa_plan,
    )
    limited, _ = _limit(P)
    return {
        "blocked_late": set(late.blocked),
        "blocked_early": set(early_stop.blocked),
        "cancelled_stop": set(early_stop.cancelled),
        "done_drain": set(early_drain.done),
        "end_drain": early_drain.makespan,
        "new_nodes": set(repair.copies.values()),
        "report_preds": set(repair.graph[P.reader]),
        "repaired_preds": set(repair.graph[copy_of_faulty]),
        "new_nodes_other": set(other.copies.values()),
        "end_repaired": repaired.makespan,
        "repairs_made": len(limited.repairs),
        "end_gives_up": limited.makespan,
    }


def _set_hints(item: str, P: TraceParams, want: set) -> list:
    A = P.A
    graph = A.graph
    if item in ("blocked_late", "blocked_early"):
        failed = P.failing if item == "blocked_late" else P.failing_early
        return [
            (
                "failed_is_blocked",
                lambda got: failed in got,
                f"{failed} itself is not blocked: it ran and has a failure report",
            ),
            (
                "not_downstream",
                lambda got: bool(got - want),
                "only tasks downstream of the failure are blocked; the others can still run",
            ),
            (
                "cone_too_small",
                lambda got: got < want,
                "the cone holds every descendant of the failed task, not only its successors",
            ),
        ]
    if item == "cancelled_stop":
        blocked = descendants(graph, [P.failing_early])
        return [
            (
                "nothing_cancelled",
                lambda got: not got,
                "under stop, whatever still runs when the failure arrives is cancelled",
            ),
            (
                "failed_cancelled",
                lambda got: P.failing_early in got,
                "the failed task ended with a report; it is not cancelled",
            ),
            (
                "blocked_cancelled",
                lambda got: bool(got & blocked),
                "a blocked task never started, so there is nothing to cancel",
            ),
            (
                "not_running",
                lambda got: bool(got - want),
                "only tasks running at the moment of the failure are cancelled; which ones had "
                "started?",
            ),
        ]
    if item == "done_drain":
        blocked = descendants(graph, [P.failing_early])
        return [
            (
                "failed_done",
                lambda got: P.failing_early in got,
                "a failed task has a failure report, not an artifact",
            ),
            (
                "blocked_done",
                lambda got: bool(got & blocked),
                "blocked tasks never run, under either policy",
            ),
            (
                "drain_stops_early",
                lambda got: got < want,
                "under drain, tasks that become ready after the failure still run unless they "
                "sit in its cone",
            ),
        ]
    if item in ("new_nodes", "new_nodes_other"):
        faulty = P.faulty if item == "new_nodes" else P.faulty_other
        prime = "'"
        readers = {n + prime for n in _readers(P)}
        off_path = {
            n + prime
            for n in graph
            if n not in ({faulty} | descendants(graph, [faulty]))
            or n not in ({P.failing} | ancestors(graph, [P.failing]))
        }
        return [
            (
                "no_prime",
                lambda got: bool(got & set(graph)),
                "a new node is a copy, named with a prime (in Python inside double quotes); "
                "the originals stay as they are",
            ),
            (
                "copied_reader",
                lambda got: bool(got & readers),
                "tasks after the failed check are not copied: they have not run, so they are "
                "re-pointed to the copy",
            ),
            (
                "failed_not_copied",
                lambda got: P.failing + prime not in got,
                "the failed check must run again on the new work: it is copied too",
            ),
            (
                "off_path",
                lambda got: bool(got & off_path),
                "only tasks on a path from the faulty task to the failed check are copied",
            ),
            (
                "path_incomplete",
                lambda got: got < want,
                "every task on a path from the faulty task to the failed check is copied",
            ),
        ]
    if item == "repaired_preds":
        return [
            (
                "edge_from_failed",
                lambda got: P.failing in got,
                f"an edge from the failed {P.failing} would put the copy in its blocked cone; "
                "the failure report travels in the prompt instead",
            ),
            (
                "not_same_inputs",
                lambda got: got != want,
                "the copy reads the same inputs as the task it replaces",
            ),
        ]
    if item == "report_preds":
        return [
            (
                "old_check",
                lambda got: P.failing in got,
                f"the old {P.failing} failed for good: the repair re-points the tasks that read it",
            ),
            (
                "waits_for_nothing",
                lambda got: not got,
                "the task still waits for something after the repair",
            ),
        ]
    return []


def _mistakes(item: str, P: TraceParams, expected: dict) -> list[Mistake]:
    A = P.A
    if item == "end_drain":
        return [
            Mistake(
                "stop_time",
                _run(P, P.failing_early, "stop").makespan,
                "that is when stop returns; drain keeps finishing what is still ready",
            ),
            Mistake(
                "clean_makespan",
                sc.schedule(A.graph, A.durations, workers=P.workers).makespan,
                "the blocked tasks never run, so the plan does not reach its usual makespan",
            ),
        ]
    if item == "end_repaired":
        first = _run(P, P.failing, "stop")
        return [
            Mistake(
                "clean_makespan",
                sc.schedule(A.graph, A.durations, workers=P.workers).makespan,
                "the repair round starts when the first round returned and needs its own time",
            ),
            Mistake(
                "forgot_reader",
                expected["end_repaired"] - min(A.durations[n] for n in _readers(P)),
                "the task after the test run, re-pointed to the new run, still has to run",
            ),
            Mistake("first_round_end", first.makespan, "that is when the first round stopped"),
        ]
    if item == "repairs_made":
        return [
            Mistake(
                "counted_last_red_run",
                expected["repairs_made"] + 1,
                "the last red run finds the cap spent: it is reported, not repaired",
            )
        ]
    if item == "end_gives_up":
        return [
            Mistake(
                "first_round_end",
                _run(P, P.failing, "stop").makespan,
                "each repair round runs the copies after the round before; add up the rounds",
            )
        ]
    return []


_IDEAS = {
    "end_drain": "under drain the call returns when nothing runs any more: trace the run "
    "from the clean run's table",
    "end_repaired": "one clock runs across both rounds: the repair round starts where the "
    "first one returned",
    "repairs_made": "count the repairs the cap allows before a red run finds it spent",
    "end_gives_up": "add up the rounds: each one runs the copies after the round before",
}


_SET_ITEMS = (
    "blocked_late",
    "blocked_early",
    "cancelled_stop",
    "done_drain",
    "new_nodes",
    "repaired_preds",
    "new_nodes_other",
)


def degenerate(P: TraceParams) -> list[str]:
    """Why ``P`` would make an exercise of the notebook degenerate (empty when usable).

    Examples
    --------
    >>> degenerate(TraceParams())
    []
    """
    graph = P.A.graph
    if len(_readers(P)) != 1:
        return [f"the failed check {P.failing!r} must be read by exactly one task"]
    if P.faulty not in ancestors(graph, [P.failing]):
        return [f"the diagnosis {P.faulty!r} is not upstream of the failed check"]
    if P.faulty_other not in ancestors(graph, [P.faulty]):
        return [f"the second diagnosis {P.faulty_other!r} is not upstream of {P.faulty!r}"]
    if P.failing_early == P.failing:
        return ["no early failure catches another task still running"]
    expected = key(P)
    found = mistake_clashes(expected, lambda item: _mistakes(item, P, expected))
    for item in ("blocked_early", "cancelled_stop"):
        if not expected[item]:
            found.append(f"the early failure leaves {item} empty: nothing to observe")
    if expected["repairs_made"] != P.kappa_plan:
        found.append("the red runs do not exhaust the repair cap")
    if not misread_shows(key, P, "workers"):
        found.append("one worker more or fewer changes no answer: the workers teach nothing")
    return found


def judge(item: str, answer, P: TraceParams) -> Diagnosis:
    """The verdict on one answer of the notebook (see :func:`key` for the items).

    ``"report_preds"`` takes the predecessors of the task after the failed check (a set).

    Raises
    ------
    ValueError
        When ``item`` is not an item of this notebook.

    Examples
    --------
    >>> P = TraceParams()
    >>> judge("blocked_late", {"run_tests", "report"}, P).mistake
    'failed_is_blocked'
    """
    expected = known_item(key(P), item)
    if item in _SET_ITEMS or item == "report_preds":
        want = expected[item]
        return judge_set(answer, want, hints=_set_hints(item, P, want), what="tasks")
    return judge_number(
        answer,
        expected[item],
        rtol=0,
        atol=1e-9,
        mistakes=_mistakes(item, P, expected),
        bounds=(0.0, math.inf),
        bounds_hint=NEVER_NEGATIVE,
        idea=_IDEAS[item],
    )


def check(item: str, answer, P: TraceParams) -> None:
    """The visible check of one item: prints ``[ok] A1 blocked_late: on track`` or a hint."""
    report(EXERCISE, item, answer, P)


#: Every graded item of the notebook, in its order.
ITEMS = (
    Item("blocked_late", "A1", ("blocked_late",), "blocked_late_value", "set"),
    Item("blocked_early", "A2", ("blocked_early",), "blocked_early_value", "set"),
    Item("cancelled_stop", "A3", ("cancelled_stop",), "cancelled_stop_value", "set"),
    Item("done_drain", "A4", ("done_drain",), "done_drain_value", "set"),
    Item("end_drain", "A5", ("end_drain",), "end_drain_value", "number"),
    Item("new_nodes", "B1", ("new_nodes",), "unrolled_nodes_value", "set"),
    Item("report_preds", "B2", ("report_preds",), "repointed_edges_value", "set"),
    Item("repaired_preds", "B3", ("repaired_preds",), "repaired_inputs_value", "set"),
    Item("end_repaired", "B4", ("end_repaired",), "repaired_makespan_value", "number"),
    Item("new_nodes_other", "B5", ("new_nodes_other",), "unrolled_nodes_other_value", "set"),
    Item("repairs_made", "C1", ("repairs_made",), "repairs_made_value", "number"),
    Item("end_gives_up", "C2", ("end_gives_up",), "gives_up_value", "number"),
)

#: The notebook as the teaching layer knows it (see :class:`decompkit.exercises.Exercise`).
EXERCISE = Exercise(
    name="trace",
    file="05-scheduler-trace",
    Params=TraceParams,
    draw=draw,
    key=key,
    judge=judge,
    degenerate=degenerate,
    items=ITEMS,
)
