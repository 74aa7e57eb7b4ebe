"""Answer checks for the lab notebook: on track, or a hint that names the likely mistake.

Each expected value is computed from the kit (the candidates, the scripted plans, the tools'
latencies), never typed in; an answer still ``None`` is reported as not answered.
"""

from __future__ import annotations

from ..dag import critical_path
from ..exercises.checks import (
    ON_TRACK,
    judge_number,
    judge_set,
    read_number,
    unanswered,
)
from ..exercises.contract import UNANSWERED, Diagnosis
from ..exercises.page import mark_line, say
from .execute import durations
from .models import PLANS
from .schema import TypedPlan, check_plan, plan_problems
from .tools import TOOLS
from .tutorials import CANDIDATES, overlap_ms, schema_errors

__all__ = ["ITEMS", "TITLES", "expected", "diagnose", "check", "earned"]

#: The items :func:`check` knows.
ITEMS = ("schema_rejects", "overlap_ms", "new_tasks", "plan_times", "broken_kinds")

#: How a check line names each item: the notebook's section and the variable that holds it.
TITLES = {
    "schema_rejects": "A1 schema_rejects",
    "overlap_ms": "A2 overlap",
    "new_tasks": "A3 new_tasks",
    "plan_times": "B4 plan_times",
    "broken_kinds": "B7 broken_kinds",
}


def _quotes() -> TypedPlan:
    return TypedPlan(goal="quotes", steps=PLANS["quotes"])


def expected(item: str):
    """The expected answer of an item that does not depend on a measured run.

    Examples
    --------
    >>> sorted(expected("schema_rejects"))
    ['b', 'd', 'e']
    >>> expected("plan_times")
    (320, 120)
    >>> sorted(expected("broken_kinds"))
    ['cycle', 'dependency_without_placeholder', 'unknown_tool']
    """
    if item == "schema_rejects":
        return {label for label, data in CANDIDATES.items() if schema_errors(data)}
    if item == "new_tasks":
        return {"write_code'", "run_tests'"}
    if item == "plan_times":
        plan = _quotes()
        cp = critical_path(check_plan(plan, TOOLS), durations(plan))
        return (cp.serial_time, cp.makespan)
    if item == "broken_kinds":
        broken = TypedPlan(goal="broken", steps=PLANS["broken"])
        return {p.kind for p in plan_problems(broken, TOOLS)}
    raise ValueError(f"item must be one of {ITEMS[:1] + ITEMS[2:]}, got {item!r}")


def diagnose(item: str, answer, run=None) -> Diagnosis:
    """The verdict on one answer of the lab notebook, without printing anything.

    Parameters
    ----------
    item : str
        One of :data:`ITEMS`.
    answer
        The student's answer; ``None`` means not answered yet.
    run : optional
        For ``"overlap_ms"``, the :class:`~decompkit.lab.tutorials.ForkJoinRun` measured.

    Raises
    ------
    ValueError
        When ``item`` is unknown, or ``run`` is missing for ``"overlap_ms"``.

    Examples
    --------
    >>> diagnose("schema_rejects", {"b", "d", "e"}).status
    'ok'
    >>> diagnose("plan_times", (120, 320)).message
    'the two numbers are swapped: the serial sum comes first'
    """
    if item not in ITEMS:
        raise ValueError(f"item must be one of {ITEMS}, got {item!r}")
    if item == "overlap_ms" and run is None:
        raise ValueError("run must be the fork-and-join run the answer was read from, got None")
    if unanswered(answer):
        return UNANSWERED
    if item == "overlap_ms":
        return judge_number(
            answer,
            overlap_ms(run.spans),
            rtol=0,
            atol=1.0,
            idea="read both fetches' start and end in the run's spans: for how long did "
            "both run at once?",
        )
    if item == "plan_times":
        return _judge_times(answer)
    want = expected(item)
    return judge_set(answer, want, hints=_SET_HINTS[item](want), what=_WHAT[item])


def check(item: str, answer, run=None) -> None:
    """Visible check of one answer: prints ``[ok] B4 plan_times: on track`` or a one-line hint.

    Returns None, so nothing is echoed under the line. Run All goes on past a wrong answer,
    except while grading and under ``kit.py check`` (strict mode), where the line is raised
    as a :class:`~decompkit.exercises.checks.CheckFailed` whose traceback is the line alone.

    Examples
    --------
    >>> check("schema_rejects", {"b", "d", "e"})
    [ok] A1 schema_rejects: on track
    >>> check("plan_times", None)
    [ ] B4 plan_times: not answered yet
    >>> check("plan_times", (120, 320))
    [x] B4 plan_times: the two numbers are swapped: the serial sum comes first
    """
    verdict = diagnose(item, answer, run)
    say(TITLES[item], verdict, mark_line(TITLES[item], verdict))


def earned(item: str, answer, run=None) -> bool:
    """Whether the answer is on track, silently: a cell that would show it runs only then.

    Examples
    --------
    >>> earned("plan_times", (320, 120)), earned("plan_times", None)
    (True, False)
    """
    return diagnose(item, answer, run).ok


def _schema_hints(want: set) -> list:
    return [
        (
            "format_not_meaning",
            lambda g: "c" in g,
            "c is wrong (ten times the price on the page) but well-formed: a schema checks "
            "the format, not the meaning",
        ),
        (
            "lax_mode",
            lambda g: "f" in g,
            "f passes: in its default (lax) mode Pydantic reads the text '3.95' as the number 3.95",
        ),
        (
            "too_few",
            lambda g: g < want,
            "a missing field, or a number outside its allowed range, fails too",
        ),
    ]


def _new_task_hints(want: set) -> list:
    return [
        (
            "report_repointed",
            lambda g: "report" in g,
            "report was in the plan from the start: only its prompt now names the new test "
            "run (re-pointed); it is not a new node",
        ),
        (
            "failed_task_resent",
            lambda g: "run_tests" in g or "write_code" in g,
            "the failed task is never sent again: a repair adds nodes, it does not re-run one",
        ),
        ("no_new_test_run", lambda g: g < want, "the new code needs a new test run of its own"),
    ]


_PLACEHOLDER_KINDS = {"dependency_without_placeholder", "placeholder_without_dependency"}


def _broken_hints(want: set) -> list:
    return [
        (
            "tool_name",
            lambda g: "unknown_tool" not in g,
            "compare every tool name, letter by letter, with TOOLS",
        ),
        (
            "cycle",
            lambda g: "cycle" not in g,
            "follow depends_on from step to step: does a path come back to where it started?",
        ),
        (
            "placeholders",
            lambda g: not g & _PLACEHOLDER_KINDS,
            "compare each step's depends_on with the #E names in its arguments",
        ),
        (
            "direction",
            lambda g: "placeholder_without_dependency" in g,
            "read the direction: a listed dependency no argument reads, or an argument that "
            "reads an unlisted step?",
        ),
    ]


_WHAT = {"schema_rejects": "labels", "new_tasks": "task ids", "broken_kinds": "problem kinds"}
_SET_HINTS = {
    "schema_rejects": _schema_hints,
    "new_tasks": _new_task_hints,
    "broken_kinds": _broken_hints,
}


def _judge_times(answer) -> Diagnosis:
    if isinstance(answer, (str, bytes)) or not hasattr(answer, "__len__") or len(answer) != 2:
        return Diagnosis("invalid", f"expected a pair (serial_ms, critical_ms), got {answer!r}")
    numbers = [read_number(x) for x in answer]
    for _, problem in numbers:
        if problem is not None:
            return problem
    serial, critical = (value for value, _ in numbers)
    want_serial, want_critical = expected("plan_times")

    def near(a, b):
        return abs(a - b) <= 0.5

    if near(serial, want_serial) and near(critical, want_critical):
        return ON_TRACK
    if near(serial, want_critical) and near(critical, want_serial):
        return Diagnosis(
            "off", "the two numbers are swapped: the serial sum comes first", "swapped"
        )
    if not near(serial, want_serial):
        return Diagnosis(
            "off",
            "the serial sum is off: add the latency of every step, as list order runs them",
            "serial_sum",
        )
    if near(critical, want_critical - durations(_quotes())["E7"]):
        return Diagnosis(
            "off", "the critical path ends with the comparison; count it too", "last_step_left_out"
        )
    return Diagnosis(
        "off", "the critical path is off: the longest chain of latencies through the plan"
    )
