"""What a student's page shows: the one-line check, whose numbers are in use, and the gate in
front of every cell that would show a graded answer.

- :func:`report` prints a visible check's line from its diagnosis,
  ``[ok] B1 p_prime: on track``, ``[x] B1 p_prime: <hint>`` or
  ``[ ] B1 p_prime: not answered yet``, each ending with whose numbers are in use. In strict
  mode (:func:`strict`: while grading, or under ``kit.py check``) an answer that is off raises
  :class:`~decompkit.exercises.checks.CheckFailed` instead, whose traceback is that one line,
  so the cell fails where a grader or the self-check needs it to; a student's Run All goes on.
- :func:`earned` opens a demonstration (a trace, a figure, the package's own result) only
  once the student's answers to the items it would reveal are on track.
- :class:`NumbersDisplay` is the parameter objects' display: their numbers, and whose they
  are, loudly when nobody's id is set and the lecture's numbers are in use.

The package lifts :func:`earned` and strict mode (``__all__``); the wording the exercise modules
and the lab's checks print with (:func:`report`, :func:`line`, :func:`mark_line`, :func:`say`,
:func:`numbers_note`, :func:`student_of`, :class:`NumbersDisplay`) is public for them.
"""

from __future__ import annotations

import dataclasses
import html
import os

from .checks import CheckFailed
from .contract import Diagnosis, Exercise, exercise_of
from .ids import GRADER_VARIABLE, LECTURE

__all__ = ["earned", "strict", "STRICT_VARIABLE"]

#: Environment variable that turns strict mode on (``kit.py check`` sets it for its kernel).
STRICT_VARIABLE = "DECOMPKIT_STRICT"
_MARKS = {"ok": "[ok]", "unanswered": "[ ]", "answered": "[?]"}
#: What a check that confirms an answer's form only adds: it cannot say right or wrong.
GRADED_LATER = "right or wrong shows after hand-in"


def strict() -> bool:
    """Whether a visible check that finds an answer off raises (and so fails its cell).

    True while grading (the grader sets ``DECOMPKIT_STUDENT`` for the submission's kernel)
    and under ``kit.py check`` (``DECOMPKIT_STRICT=1``); False in a student's own session,
    where Run All goes on past a wrong answer.

    Examples
    --------
    >>> import os
    >>> os.environ.pop("DECOMPKIT_STUDENT", None), os.environ.pop("DECOMPKIT_STRICT", None)
    (None, None)
    >>> strict()
    False
    """
    flag = os.environ.get(STRICT_VARIABLE, "").strip().lower()
    return flag in ("1", "true", "yes", "on") or bool(os.environ.get(GRADER_VARIABLE, "").strip())


def student_of(P) -> str | None:
    """The id whose numbers ``P`` holds, as :func:`~decompkit.exercises.params.params` drew
    them; None for the lecture's numbers taken without any id."""
    return getattr(P, "_student", None)


def numbers_note(P) -> str:
    """Whose numbers ``P`` holds, as every check line ends.

    Examples
    --------
    >>> from decompkit.exercises.chain import ChainParams
    >>> numbers_note(ChainParams())
    'LECTURE NUMBERS: set STUDENT_ID'
    """
    who = student_of(P)
    if who is None:
        return "LECTURE NUMBERS: set STUDENT_ID"
    if who == LECTURE:
        return "the lecture's numbers (id 'lecture')"
    return f"numbers of {who}"


def line(item, diagnosis: Diagnosis, P) -> str:
    """The check's line for one diagnosis, e.g. ``[ok] B1 p_prime: on track  [numbers of s1]``.

    Examples
    --------
    >>> from decompkit.exercises import chain
    >>> P = chain.ChainParams()
    >>> print(line(chain.EXERCISE.item("p_prime"), Diagnosis("unanswered", "not answered yet"), P))
    [ ] B1 p_prime: not answered yet  [LECTURE NUMBERS: set STUDENT_ID]
    """
    return f"{mark_line(item.title, diagnosis)}  [{numbers_note(P)}]"


def mark_line(title: str, diagnosis: Diagnosis) -> str:
    """``[ok] title: message``, ``[x] ...`` or ``[ ] ...``: a check's line without its note."""
    return f"{_MARKS.get(diagnosis.status, '[x]')} {title}: {diagnosis.message}"


#: Style that makes the printed lines of a cell's output wrap at spaces in JupyterLab and
#: Notebook 7, whose stylesheet breaks printed text anywhere (``word-break: break-all``: a
#: check line wrapped as "on tr / ack"). It reaches only the output area that holds it
#: (``:has``); a browser without ``:has`` keeps its own wrapping.
WRAP_AT_SPACES = (
    '<style class="decompkit-wrap">'
    ".jp-OutputArea:has(.decompkit-wrap) .jp-OutputArea-output pre"
    "{word-break:normal;overflow-wrap:anywhere}</style>"
)
_styled_runs: set = set()  # the cell runs whose output has the style already


def _wrap_at_spaces() -> None:
    """Put :data:`WRAP_AT_SPACES` once into the output of the cell the kernel is running.

    Only in a notebook's kernel outside strict mode: printed text, what ``kit.py check``
    and the grader read, stays the same, and they see no extra output.
    """
    try:
        from IPython import get_ipython
    except ImportError:  # no IPython: a plain script prints only
        return
    shell = get_ipython()
    if shell is None or getattr(shell, "kernel", None) is None:
        return
    run = shell.execution_count
    if run in _styled_runs:
        return
    _styled_runs.add(run)
    from IPython.display import display

    display({"text/html": WRAP_AT_SPACES}, raw=True)


def say(title: str, diagnosis: Diagnosis, text: str) -> None:
    """Print a visible check's line ``text``; in strict mode an answer that is off, too
    rounded or not of the kind asked raises it as :class:`CheckFailed` instead.

    In a notebook the cell's output also gets a style that wraps the line at spaces (the
    printed text itself is the same everywhere)."""
    if strict():
        if diagnosis.status in ("off", "close", "invalid"):
            raise CheckFailed(title, diagnosis.message, line=text)
    else:
        _wrap_at_spaces()
    print(text)


def report(exercise: Exercise, item_key: str, answer, P) -> None:
    """Print the visible check's line of one item: ``[ok] B1 p_prime: on track``.

    Returns None, so nothing is echoed under the line.

    Raises
    ------
    CheckFailed
        In strict mode, when the answer is off, too rounded or not of the kind asked; the
        exception's traceback is the line alone.
    ValueError
        When ``item_key`` is not an item of the notebook.
    """
    item = exercise.item(item_key)
    verdict = exercise.visible(item_key, answer, P)
    say(item.title, verdict, line(item, verdict, P))


def _names(items) -> str:
    titles = list(dict.fromkeys(item.title for item in items))
    return titles[0] if len(titles) == 1 else ", ".join(titles[:-1]) + " and " + titles[-1]


def earned(P, *, exercise: Exercise | None = None, **answers) -> bool:
    """Whether the cell below may show what it would reveal: every answer is on track.

    A notebook puts it in front of each cell that would print a graded item's answer (the
    package's own result, a trace, a figure whose title holds a number)::

        if earned(P, p_chain=p_chain):
            print(reliability.chain_success(P.p, P.n))

    Parameters
    ----------
    P : parameter object
        The notebook's ``P``; it names the exercise and the numbers.
    exercise : Exercise, optional
        The notebook's exercise (found from ``P`` when omitted).
    **answers
        The answers the cell would give away, by their notebook variable (``p_chain=p_chain``).
        An item marked ``form_only`` (a yes/no, a choice per entry) needs to be answered in its
        form only, so that opening the cell cannot tell a right value from a wrong one.

    Returns
    -------
    bool
        True when all are on track; otherwise False, after one line naming what is missing.
        Never raises on an answer, in strict mode neither.

    Examples
    --------
    >>> from decompkit.exercises.params import params
    >>> P = params("chain")
    >>> earned(P, p_chain=None, p_eff=P.task_success ** (1 / P.n))
    [ ] hidden until A1 p_chain is on track: this cell shows its answer
    False
    >>> earned(P, p_chain=P.p**P.n)
    True
    """
    exercise = exercise or exercise_of(P)
    closed = []
    for name, answer in answers.items():
        item = exercise.item_of_name(name)
        if exercise.visible(item.key, answer, P).status not in ("ok", "answered"):
            closed.append(item)
    if not closed:
        return True
    many = len({item.title for item in closed}) > 1
    print(
        f"[ ] hidden until {_names(closed)} {'are' if many else 'is'} on track: "
        f"this cell shows {'their answers' if many else 'its answer'}"
    )
    return False


class NumbersDisplay:
    """Mix-in of the parameter classes: ``P`` shows its numbers and whose they are.

    Every field, and every property holding a plain value (``P.budget``), is listed as it is
    written in an answer (``P.p = 0.9``). Without an id the display says in capitals that
    these are the lecture's numbers and that grading uses the student's own.
    """

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        # IPython's pretty printer takes the first class in the MRO that defines either
        # _repr_pretty_ or __repr__; the dataclass's own __repr__ would win over a base's.
        cls._repr_pretty_ = NumbersDisplay._repr_pretty_

    def _rows(self) -> list[tuple[str, str]]:
        rows = [(f.name, repr(getattr(self, f.name))) for f in dataclasses.fields(self)]
        for name in dir(type(self)):
            if name.startswith("_") or not isinstance(getattr(type(self), name), property):
                continue
            value = getattr(self, name)
            if isinstance(value, (int, float, str)):
                rows.append((name, repr(value)))
        return rows

    def _heading(self) -> tuple[str, str | None]:
        who = student_of(self)
        if who is None:
            return (
                "LECTURE NUMBERS: no student id is set.",
                "These are the lecture's own numbers. Your submission is graded with the "
                "numbers of your own id, so answers worked out with these score nothing. "
                "Type your id into STUDENT_ID above and run the notebook again from the top "
                "(on the course's JupyterHub your login sets it for you).",
            )
        if who == LECTURE:
            return ("The lecture's own numbers (id 'lecture').", None)
        typed = getattr(self, "_typed", None)
        if typed:  # the id as typed differs from the one the grader files work under
            return (
                f"Numbers of {who}: every exercise below works with them. ({typed!r} is "
                f"{who!r} as the grader files ids: lower case, accents dropped, a dash for "
                "a space.)",
                None,
            )
        return (f"Numbers of {who}: every exercise below works with them.", None)

    def _repr_pretty_(self, printer, cycle):
        heading, warning = self._heading()
        lines = [f"!!! {heading} !!!" if warning else heading]
        if warning:
            lines.append(warning)
        lines += [f"  P.{name} = {value}" for name, value in self._rows()]
        printer.text("\n".join(lines))

    def _repr_html_(self) -> str:
        heading, warning = self._heading()
        rows = "".join(
            f"<tr><td><code>P.{html.escape(name)}</code></td><td><code>{html.escape(value)}"
            "</code></td></tr>"
            for name, value in self._rows()
        )
        if warning:
            top = (
                '<div style="border:3px solid #b2182b;background:#fde0dd;padding:6px 10px;'
                'margin-bottom:6px"><b style="color:#b2182b">'
                f"{html.escape(heading)}</b> {html.escape(warning)}</div>"
            )
        else:
            top = f"<p><b>{html.escape(heading)}</b></p>"
        return f'<div class="decompkit-params">{top}<table>{rows}</table></div>'
