"""Answer checks for the lab notebook: on track, or a hint that names the likely mistake.

Each expected value is computed from the kit (the candidates, the scripted plans, the tools'
latencies), never typed in; an answer still ``None`` is reported as not answered.
"""

from __future__ import annotations

from ..dag import critical_path
from ..exercises.checks import (
    CheckFailed,
    as_number,
    check_number,
    check_set,
    not_yet,
    on_track,
    unanswered,
)
from .execute import durations
from .models import PLANS
from .schema import TypedPlan, check_plan, plan_problems
from .tools import TOOLS
from .tutorials import CANDIDATES, overlap_ms, schema_errors

__all__ = ["ITEMS", "expected", "check"]

#: The items :func:`check` knows.
ITEMS = ("schema_rejects", "overlap_ms", "new_tasks", "plan_times", "broken_kinds")


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


def _as_set(name, answer) -> set:
    if isinstance(answer, (str, bytes)):
        raise CheckFailed(name, f"expected a set, got the str {answer!r}")
    try:
        return set(answer)
    except TypeError:
        raise CheckFailed(name, f"expected a set, got {answer!r}") from None


def check(item: str, answer, run=None) -> bool:
    """Visible check of one answer of the lab notebook.

    Parameters
    ----------
    item : str
        One of :data:`ITEMS`.
    answer
        The student's answer.
    run : optional
        For ``"overlap_ms"``, the :class:`~decompkit.lab.tutorials.ForkJoinRun` measured.

    Returns
    -------
    bool
        True when on track, False when not answered yet.

    Raises
    ------
    decompkit.exercises.checks.CheckFailed
        When the answer is off, with a hint.
    ValueError
        When ``item`` is unknown, or ``run`` is missing for ``"overlap_ms"``.

    Examples
    --------
    >>> check("schema_rejects", {"b", "d", "e"})
    [ok] schema_rejects: on track.
    True
    >>> check("plan_times", None)
    [ ] plan_times: not answered yet - replace None with your answer and run the cell again.
    False
    """
    if item not in ITEMS:
        raise ValueError(f"item must be one of {ITEMS}, got {item!r}")
    if unanswered(answer):
        return not_yet(item)
    if item == "overlap_ms":
        if run is None:
            raise ValueError("run must be the fork-and-join run the answer was read from")
        return check_number(item, answer, overlap_ms(run.spans), rtol=0, atol=1.0)
    if item == "plan_times":
        return _check_times(answer)
    want = expected(item)
    got = _as_set(item, answer)
    if item == "schema_rejects":
        hints = {
            "c is wrong (ten times the price on the page) but well-formed: a schema checks "
            "the format, not the meaning": lambda g: "c" in g,
            "f passes: in its default (lax) mode Pydantic reads the text '3.95' as the "
            "number 3.95": lambda g: "f" in g,
            "a missing field, or a number outside its allowed range, fails too": lambda g: g < want,
        }
    elif item == "new_tasks":
        hints = {
            "report was in the plan from the start: only its prompt now names the new test "
            "run (re-pointed); it is not a new node": lambda g: "report" in g,
            "the failed task is never sent again: a repair adds nodes, it does not re-run "
            "one": lambda g: "run_tests" in g or "write_code" in g,
            "the new code needs a new test run of its own": lambda g: g < want,
        }
    else:  # broken_kinds
        hints = {
            "compare every tool name, letter by letter, with TOOLS": (
                lambda g: "unknown_tool" not in g
            ),
            "follow depends_on from step to step: does a path come back to where it "
            "started?": lambda g: "cycle" not in g,
            "compare each step's depends_on with the #E names in its arguments": lambda g: (
                not (g & {"dependency_without_placeholder", "placeholder_without_dependency"})
            ),
            "read the direction: a listed dependency no argument reads, or an argument "
            "that reads an unlisted step?": lambda g: "placeholder_without_dependency" in g,
        }
    return check_set(item, got, want, hints=hints)


def _check_times(answer) -> bool:
    name = "plan_times"
    if isinstance(answer, (str, bytes)) or not hasattr(answer, "__len__") or len(answer) != 2:
        raise CheckFailed(name, f"expected a pair (serial_ms, critical_ms), got {answer!r}")
    serial, critical = (as_number(name, x) for x in answer)
    want_serial, want_critical = expected(name)

    def near(a, b):
        return abs(a - b) <= 0.5

    if near(serial, want_serial) and near(critical, want_critical):
        return on_track(name)
    if near(serial, want_critical) and near(critical, want_serial):
        raise CheckFailed(name, "the two numbers are swapped: the serial sum comes first")
    if not near(serial, want_serial):
        raise CheckFailed(
            name, "the serial sum is off: add the latency of every step, as list order runs them"
        )
    if near(critical, want_critical - durations(_quotes())["E7"]):
        raise CheckFailed(name, "the critical path ends with the comparison; count it too")
    raise CheckFailed(
        name, "the critical path is off: the longest chain of latencies through the plan"
    )
