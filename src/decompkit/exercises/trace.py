r"""Parameters, answer key and visible checks of the scheduler-trace notebook (worked
example A).

A failure of :math:`f` blocks its cone :math:`\mathrm{desc}(f)`; under *stop* the call
returns at once and cancels what runs, under *drain* it finishes everything still ready.
Unrolling copies :math:`S = (\{x\} \cup \mathrm{desc}(x)) \cap (\{f\} \cup \mathrm{anc}(f))`
for the faulty node :math:`x`, at most ``kappa_plan`` times per chain of copies.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from .. import scheduler as sc
from ..dag import ancestors, descendants
from ._contract import Exercise
from ._support import (
    DURATION_RANGES,
    cached_key,
    draw_durations,
    known_item,
    mistake_clashes,
    worked_example,
)
from .checks import CheckFailed, check_number, check_set, unanswered

__all__ = ["TraceParams", "draw", "degenerate", "failing_step", "key", "check", "EXERCISE"]


@dataclass(frozen=True)
class TraceParams:
    """Numbers and choices of the scheduler-trace notebook (lecture section 5).

    Attributes
    ----------
    example : name of the worked example in ``decompkit.examples`` (the coding task).
    durations : ``(node, duration)`` pairs replacing the example's own; empty keeps them.
    workers : workers of the scheduler.
    kappa : attempts per task in the demonstration of a checked step.
    failing : the task whose check fails (the red test run).
    failing_early : a task whose failure catches another task still running.
    faulty : the diagnosis of the failure of ``failing``: the task to unroll.
    faulty_other : a second diagnosis, whose unrolling copies more of the plan.
    kappa_plan : the plan-level cap on copies of one task.
    red_runs : how many runs of ``failing`` in a row fail (the original, then its copies).
    """

    example: str = "coding_task"
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
        """The worked example with this object's durations (a fresh WorkedExample)."""
        return worked_example(self.example, self.durations)


def draw(rng) -> TraceParams:
    """One candidate of per-student numbers (see :func:`decompkit.exercises.params.params`).

    Durations are three times those of the plan-DAG notebook, so a run has room for overlap.
    """
    ranges = {node: (3 * a, 3 * b) for node, (a, b) in DURATION_RANGES["coding_task"].items()}
    kappa_plan = int(rng.integers(1, 4))
    return TraceParams(
        durations=draw_durations(rng, ranges),
        workers=int(rng.integers(2, 4)),
        failing_early=("write_tests", "fetch_data")[int(rng.integers(0, 2))],
        kappa_plan=kappa_plan,
        red_runs=kappa_plan + 1,
    )


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
    return sc.schedule(
        A.graph, A.durations, workers=P.workers, onfail=onfail, step=failing_step(node)
    )


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
        "report_preds": set(repair.graph[_readers(P)[0]]),
        "repaired_preds": set(repair.graph[copy_of_faulty]),
        "new_nodes_other": set(other.copies.values()),
        "end_repaired": repaired.makespan,
        "repairs_made": len(limited.repairs),
        "end_gives_up": limited.makespan,
    }


def _set_hints(item: str, P: TraceParams, want: set) -> dict:
    A = P.A
    graph = A.graph
    if item in ("blocked_late", "blocked_early"):
        failed = P.failing if item == "blocked_late" else P.failing_early
        return {
            f"{failed} itself is not blocked: it ran and has a failure report": (
                lambda got: failed in got
            ),
            "only tasks downstream of the failure are blocked; the others can still run": (
                lambda got: bool(got - want)
            ),
            "the cone holds every descendant of the failed task, not only its successors": (
                lambda got: got < want
            ),
        }
    if item == "cancelled_stop":
        blocked = descendants(graph, [P.failing_early])
        return {
            "under stop, whatever still runs when the failure arrives is cancelled": (
                lambda got: not got
            ),
            "the failed task ended with a report; it is not cancelled": (
                lambda got: P.failing_early in got
            ),
            "a blocked task never started, so there is nothing to cancel": (
                lambda got: bool(got & blocked)
            ),
            "only tasks running at the moment of the failure are cancelled; which ones had "
            "started?": lambda got: bool(got - want),
        }
    if item == "done_drain":
        blocked = descendants(graph, [P.failing_early])
        return {
            "a failed task has a failure report, not an artifact": (
                lambda got: P.failing_early in got
            ),
            "blocked tasks never run, under either policy": lambda got: bool(got & blocked),
            "under drain, tasks that become ready after the failure still run unless they sit "
            "in its cone": lambda got: got < want,
        }
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
        return {
            'write the copies with a prime, e.g. "write_code\'" (double quotes outside)': (
                lambda got: bool(got & set(graph))
            ),
            "tasks after the failed check are not copied: they have not run, so they are "
            "re-pointed to the copy": lambda got: bool(got & readers),
            f"the failed check must run again on the new work: {P.failing}' is a new node too": (
                lambda got: P.failing + prime not in got
            ),
            "only tasks on a path from the faulty task to the failed check are copied": (
                lambda got: bool(got & off_path)
            ),
            "every task on a path from the faulty task to the failed check is copied": (
                lambda got: got < want
            ),
        }
    if item == "repaired_preds":
        return {
            f"an edge from the failed {P.failing} would put the copy in its blocked cone; the "
            "failure report travels in the prompt instead": lambda got: P.failing in got,
            "the copy reads the same inputs as the task it replaces": lambda got: got != want,
        }
    return {}


def _mistakes(item: str, P: TraceParams, expected: dict) -> dict:
    A = P.A
    if item == "end_drain":
        return {
            "that is when stop returns; drain keeps finishing what is still ready": _run(
                P, P.failing_early, "stop"
            ).makespan,
            "the blocked tasks never run, so the plan does not reach its usual makespan": (
                sc.schedule(A.graph, A.durations, workers=P.workers).makespan
            ),
        }
    if item == "end_repaired":
        first = _run(P, P.failing, "stop")
        return {
            "the repair round starts when the first round returned and needs its own time": (
                sc.schedule(A.graph, A.durations, workers=P.workers).makespan
            ),
            "the task after the test run, re-pointed to the new run, still has to run": (
                expected["end_repaired"] - min(A.durations[n] for n in _readers(P))
            ),
            "that is when the first round stopped": first.makespan,
        }
    if item == "repairs_made":
        return {
            "the last red run finds the cap spent: it is reported, not repaired": (
                expected["repairs_made"] + 1
            ),
        }
    if item == "end_gives_up":
        return {
            "each repair round runs the copies after the round before; add up the rounds": (
                _run(P, P.failing, "stop").makespan
            ),
        }
    return {}


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
    if len(_readers(P)) != 1:
        return [f"the failed check {P.failing!r} must be read by exactly one task"]
    expected = key(P)
    found = mistake_clashes(expected, lambda item: _mistakes(item, P, expected))
    for item in ("blocked_early", "cancelled_stop"):
        if not expected[item]:
            found.append(f"the early failure leaves {item} empty: nothing to observe")
    if expected["repairs_made"] != P.kappa_plan:
        found.append("the red runs do not exhaust the repair cap")
    return found


def check(item: str, answer, P: TraceParams) -> bool:
    """Visible check of one answer of the notebook (see :func:`key` for the items).

    ``"report_preds"`` takes the predecessors of the task after the failed check (a set).

    Raises
    ------
    decompkit.exercises.checks.CheckFailed
        When the answer is off, with a hint naming the likely mistake.
    ValueError
        When ``item`` is not an item of this notebook.
    """
    expected = known_item(key(P), item)
    if item in _SET_ITEMS or item == "report_preds":
        if not unanswered(answer) and (
            isinstance(answer, (str, bytes)) or not isinstance(answer, Iterable)
        ):
            raise CheckFailed(item, f"expected a set of tasks, got {answer!r}")
    if item == "report_preds":
        return check_set(
            item,
            answer,
            expected[item],
            hints={
                f"the old {P.failing} failed for good; the reader is re-pointed to its copy": (
                    lambda got: P.failing in got
                ),
                'write the copies with a prime, e.g. "run_tests\'"': lambda got: not got,
            },
        )
    if item in _SET_ITEMS:
        want = expected[item]
        return check_set(item, answer, want, hints=_set_hints(item, P, want))
    return check_number(
        item, answer, expected[item], rtol=0, atol=1e-9, mistakes=_mistakes(item, P, expected)
    )


#: The notebook as the teaching layer knows it (see :class:`decompkit.exercises.Exercise`).
EXERCISE = Exercise(
    name="trace",
    file="05-scheduler-trace",
    Params=TraceParams,
    draw=draw,
    key=key,
    check=check,
    degenerate=degenerate,
    grade_cells={
        "blocked_late_value": "blocked_late",
        "blocked_early_value": "blocked_early",
        "cancelled_stop_value": "cancelled_stop",
        "done_drain_value": "done_drain",
        "end_drain_value": "end_drain",
        "unrolled_nodes_value": "new_nodes",
        "repointed_edges_value": "report_preds",
        "repaired_inputs_value": "repaired_preds",
        "repaired_makespan_value": "end_repaired",
        "unrolled_nodes_other_value": "new_nodes_other",
        "repairs_made_value": "repairs_made",
        "gives_up_value": "end_gives_up",
    },
)
