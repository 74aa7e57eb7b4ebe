"""Scores of a notebook that ran: each item judged in the grader's process, never in the kernel.

An item scores its points only when its hidden test passed in the kernel *and* its answers,
read out as plain data, pass the same test here (:func:`decompkit.course.engine.clean_check.judge`),
so nothing the kernel writes can raise a score. :func:`score` also builds the grading
record's entry of every item (the decoded answer, a status, the exercise's hint for a wrong
one) and the comments for nbgrader's gradebook; :func:`mark_failures` adds an error output
to each test cell that scored 0 without one, so the feedback shows why.
"""

from __future__ import annotations

from nbformat.v4 import new_output

from ...exercises.ids import LECTURE
from .clean_check import judge
from .codec import Unreadable, decode
from .notebooks import Source, is_test, metadata

__all__ = ["mark_failures", "score"]


def _text(value) -> str | None:
    if value is None:
        return None
    text = repr(value)
    return text if len(text) <= 300 else text[:297] + "..."


def score(source: Source, nb_run, student: str, exercise) -> tuple:
    """Scores, record items and gradebook comments of one notebook that ran."""
    answers = nb_run.answers
    verdicts, lecture, judged = {}, {}, answers is not None
    why = ""
    if judged:
        try:
            verdicts = judge(source.nb, student, answers)
            if student != LECTURE and _answered_wrong(source, verdicts, answers):
                lecture = judge(source.nb, LECTURE, answers)
        except Exception as error:  # noqa: BLE001 - a fault in judging costs this notebook only
            judged, why = False, f"the clean check failed ({type(error).__name__}: {error})"
    values = {} if answers is None else {k: v for k, v in answers.items()}
    tests = {}
    answer_state = {}
    for index, cell in enumerate(nb_run.nb.cells):
        meta = metadata(cell)
        if is_test(cell) and meta.get("grade_id") in source.points:
            tests[meta["grade_id"]] = (index, nb_run.cells.get(index, "not_run"))
        elif meta.get("solution"):
            answer_state[meta.get("grade_id")] = nb_run.cells.get(index, "not_run")
    scores, items, comments = {}, {}, {}
    for grade_id, points in source.points.items():
        index, in_kernel = tests.get(grade_id, (None, "missing"))
        verdict = bool(verdicts.get(grade_id)) if judged else False
        passed = in_kernel == "ok" and verdict
        scores[grade_id] = points if passed else 0.0
        entry = exercise.item(grade_id)
        names = list(entry["names"]) or list(source.names_of.get(grade_id, []))
        decoded = {n: decode(values[n]) for n in names if values.get(n) is not None}
        answer = decoded[names[0]] if len(names) == 1 and names[0] in decoded else (decoded or None)
        states = [answer_state.get(a, "not_run") for a in source.answers_of.get(grade_id, [])]
        status = _status(passed, in_kernel, states, judged, names, decoded)
        item = {
            "item": entry["item"],
            "label": entry["label"],
            "names": entry["names"],
            "score": scores[grade_id],
            "max_score": points,
            "status": status,
            "answer": _text(answer),
            "message": "",
            "mistake": None,
            "matches": LECTURE if lecture.get(grade_id) and not verdict else None,
        }
        if in_kernel == "missing":
            item["message"] = "the test cell of this item is missing from the submission"
        if judged and not passed and status not in ("unanswered", "not_run", "timeout"):
            exercise.refine(item, student, answer)
        items[grade_id] = item
        for answer_cell in source.answers_of.get(grade_id, []):
            note = {
                "unanswered": "No response.",
                "timeout": "This cell ran past the time limit and was interrupted.",
                "not_run": "This cell did not run (the notebook stopped before it).",
            }.get(status)
            if note:
                comments[answer_cell] = note
    return scores, items, comments, verdicts, judged, why


def _answered_wrong(source: Source, verdicts: dict, answers: dict) -> bool:
    """Whether some item failed with an answer given (only those can match the lecture's)."""
    for grade_id in source.points:
        if not verdicts.get(grade_id):
            names = source.names_of.get(grade_id, [])
            if any(answers.get(n) not in (None, "null") for n in names):
                return True
    return False


def _status(passed, in_kernel, answer_states, judged, names, decoded) -> str:
    if passed:
        return "ok"
    if "timeout" in answer_states or in_kernel == "timeout":
        return "timeout"
    if not judged or in_kernel == "not_run" or "not_run" in answer_states:
        return "not_run"
    if names and all(decoded.get(n) is None for n in names):
        return "unanswered"
    if any(isinstance(v, Unreadable) for v in decoded.values()):
        return "invalid"
    if "error" in answer_states:
        return "error"
    return "off"


def mark_failures(nb, source: Source, verdicts, cells, judged) -> None:
    """Add an error output to every test cell that scored 0 without an error of its own, so
    the feedback shows why (what nbgrader's CleanCheck step adds on its own path)."""
    for index, cell in enumerate(nb.cells):
        grade_id = metadata(cell).get("grade_id")
        if not is_test(cell) or grade_id not in source.points:
            continue
        state = cells.get(index, "not_run")
        if state == "not_run":
            why = "this cell did not run: the notebook stopped before it"
            cell.outputs.append(new_output("error", ename="NotRun", evalue=why, traceback=[why]))
        elif state == "ok" and not (judged and verdicts.get(grade_id)):
            why = "the hidden test fails on these answers when run outside the notebook's kernel"
            cell.outputs.append(
                new_output("error", ename="CleanCheckFailed", evalue=why, traceback=[why])
            )
