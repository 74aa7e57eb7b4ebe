"""What a feedback page shows: per graded item the answer, the score and the hint, in words.

:class:`FeedbackView` is an nbconvert preprocessor that runs after nbgrader's ``GetGrades``
(which puts the gradebook's score into each test cell). It reads the student's grading
record (:func:`decompkit.course.engine.record.load`) and puts one verdict per graded item
where its test cell was: the item's name (``B1 p_prime``), the student's answer, the score
and the hint as plain text. The test cell itself is not shown, so neither its hidden tests
nor the traceback of a failed check reach the page; any other error shows as one line, and
absolute paths of the grading machine are cut down to their last part
(:func:`scrub_paths`). The notebook is sanitised first
(:func:`decompkit.course.sanitize.sanitize_notebook`). The layout is
:class:`decompkit.course.feedback.FeedbackExporter`'s.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

from nbconvert.preprocessors import Preprocessor
from traitlets import Bool

from .engine.record import NotebookRecord, Record, load
from .sanitize import sanitize_notebook

__all__ = ["NOTICES", "VERDICTS", "FeedbackView", "scrub_paths", "strip_hidden_tests"]

#: What an item's status means, as the student reads it.
VERDICTS = {
    "ok": "right",
    "close": "right, but rounded too coarsely",
    "off": "not right",
    "unanswered": "not answered",
    "invalid": "not a valid answer",
    "timeout": "not graded: the notebook was stopped at the time limit",
    "error": "not graded: the code raised an error before this could be checked",
    "not_run": "not graded: the notebook stopped before this cell ran",
}

#: What happened to a notebook that was not graded normally.
NOTICES = {
    "timeout": "A cell of this notebook ran past the time limit and was stopped.",
    "time_limit": "This notebook ran past the time allowed for a whole notebook and was stopped.",
    "kernel_died": (
        "The Python kernel died while running this notebook (the code ended the process or "
        "ran out of memory); what came after it was not run."
    ),
    "failed": "This notebook could not be graded.",
    "unreadable": "This file could not be read as a notebook.",
    "missing": "This notebook was not submitted.",
}

_HIDDEN = re.compile(
    r"^[^\n]*BEGIN HIDDEN TESTS.*?(?:^[^\n]*END HIDDEN TESTS[^\n]*\n?|\Z)", re.S | re.M
)
_PATH = re.compile(r"""(?<![\w.:/~])(?:/[^\s'"`/:<>|]+){2,}/?|\b[A-Za-z]:\\[^\s'"`<>|]+""")
_LABEL = re.compile(r"\*\*([A-Z]\d+[a-z]?)\b")
_STOPPED = {"KeyboardInterrupt", "CellTimeoutError", "DeadKernelError"}


def scrub_paths(text: str) -> str:
    """``text`` with every absolute path cut down to its last part.

    Examples
    --------
    >>> scrub_paths("No such file: '/tmp/decompkit-grade-x1/submitted/s1/data.csv'")
    "No such file: 'data.csv'"
    >>> scrub_paths("p/(1 - d(1-p)) and https://example.org/a/b stay")
    'p/(1 - d(1-p)) and https://example.org/a/b stay'
    """
    return _PATH.sub(lambda m: m.group(0).rstrip("/\\").replace("\\", "/").rsplit("/", 1)[-1], text)


def strip_hidden_tests(source: str) -> str:
    """``source`` without its ``### BEGIN HIDDEN TESTS`` ... ``### END HIDDEN TESTS`` regions
    (an unterminated region is cut to the end).

    Examples
    --------
    >>> strip_hidden_tests("check(x)\\n### BEGIN HIDDEN TESTS\\nassert x\\n### END HIDDEN TESTS\\n")
    'check(x)\\n'
    """
    return _HIDDEN.sub("", source)


def _meta(cell) -> dict:
    return cell.get("metadata", {}).get("nbgrader", {}) or {}


def _is_test(cell) -> bool:
    return bool(_meta(cell).get("grade")) and not _meta(cell).get("solution")


def _text(value) -> str:
    return value if isinstance(value, str) else "".join(value or [])


def _one_line_error(output, stopped: bool) -> str:
    name = output.get("ename", "Error")
    if name in _STOPPED and stopped:
        return "This cell was stopped at the time limit."
    value = scrub_paths(str(output.get("evalue", ""))).strip()
    return f"{name}: {value}" if value else name


def _clean_outputs(cell, stopped: bool) -> None:
    """No traceback, no stderr, no widget views, no absolute paths in what a cell printed."""
    kept = []
    for output in cell.get("outputs", []):
        kind = output.get("output_type")
        if kind == "error":
            text = _one_line_error(output, stopped)
            kept.append({"output_type": "stream", "name": "stdout", "text": text + "\n"})
        elif kind == "stream":
            if output.get("name") != "stderr":
                output["text"] = scrub_paths(_text(output.get("text")))
                kept.append(output)
        elif kind in ("display_data", "execute_result"):
            data = output.get("data", {})
            data.pop("application/vnd.jupyter.widget-view+json", None)
            for mime in ("text/plain", "text/html", "text/markdown"):
                if mime in data:
                    data[mime] = scrub_paths(_text(data[mime]))
            if data:
                kept.append(output)
    cell["outputs"] = kept


def _from_outputs(cell) -> tuple[str, str]:
    """(status, hint) of a test cell read off its own outputs, when no record says more."""
    for output in cell.get("outputs", []):
        if output.get("output_type") == "error":
            name, value = output.get("ename", ""), str(output.get("evalue", ""))
            if name == "CheckFailed":
                return "off", value.split(": ", 1)[-1]
            if name in _STOPPED:
                return "timeout", ""
            return ("off", "") if name in ("AssertionError", "CleanCheckFailed") else ("error", "")
        if "not answered yet" in _text(output.get("text")):
            return "unanswered", ""
    return "off", ""


def _fallback_names(nb, notebook: str) -> dict[str, tuple[str, str]]:
    """{grade_id: (label, item)} read off the notebook: the label of the last bold exercise
    heading above each test cell (``**B1 (1 point).**``), the item from its grade_id."""
    from .key import FILES, GRADE_CELLS

    items = next((GRADE_CELLS[k] for k, f in FILES.items() if f == notebook), {})
    label, names = "", {}
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            found = _LABEL.findall(_text(cell.source))
            label = found[-1] if found else label
        elif _is_test(cell) and _meta(cell).get("grade_id"):
            grade_id = _meta(cell)["grade_id"]
            names[grade_id] = (label, items.get(grade_id, grade_id.removesuffix("_value")))
    return names


def _course_root(resources) -> Path:
    db_url = str(resources.get("nbgrader", {}).get("db_url", ""))
    if db_url.startswith("sqlite:///"):
        return Path(db_url[len("sqlite:///") :]).parent
    return Path.cwd()  # nbgrader's converters run from the course folder


@functools.lru_cache(maxsize=8)
def _records(root: str, assignment: str, stamp: tuple) -> dict:
    return load(root, assignment)


def _record_of(root: Path, assignment: str, student: str) -> Record | None:
    """The student's record (None: none); every page of one run shares one read of the
    folder."""
    folder = root / "records" / assignment
    stamp = (
        tuple((p.name, p.stat().st_mtime_ns) for p in sorted(folder.glob("*.json")))
        if folder.is_dir()
        else ()
    )
    return _records(str(root), assignment, stamp).get(student)


class FeedbackView(Preprocessor):
    """Turn an autograded notebook into what its feedback page shows.

    Reads ``resources["nbgrader"]`` (student, assignment, notebook, and the scores that
    nbgrader's ``GetGrades`` put into each test cell) and the student's grading record; writes
    ``resources["feedback"]``, the data the template lays out: the items in notebook order
    (``title``, ``anchor``, ``score``, ``max_score``, ``status``, ``verdict``, ``answer``,
    ``hint``, ``by_hand``), the notebook's ``notice`` and totals. Scores come from the
    gradebook (a manual grade wins); the hint and the answer from the record.
    """

    enabled = Bool(True, help="rewrite the notebook into its feedback view").tag(config=True)

    def preprocess(self, nb, resources):
        nb = sanitize_notebook(nb)
        info = resources.setdefault("nbgrader", {})
        notebook = str(info.get("notebook", ""))
        record = _record_of(
            _course_root(resources), str(info.get("assignment", "")), str(info.get("student", ""))
        )
        found = record.notebooks.get(notebook) if record is not None else None
        entry = found or NotebookRecord(status="graded")
        status = entry.status
        stopped = status in ("timeout", "time_limit") or record is None
        fallback = _fallback_names(nb, notebook)
        items, seen = [], set()
        for cell in nb.cells:
            if cell.cell_type == "code" and _is_test(cell):
                grade_id = _meta(cell).get("grade_id", "")
                items.append(self._item(cell, grade_id, entry, fallback) | {"placed": True})
                seen.add(grade_id)
                cell.metadata["decompkit_item"] = len(items) - 1
                cell.source, cell.outputs = "", []
                continue
            cell.source = strip_hidden_tests(_text(cell.source))
            if cell.cell_type == "code":
                _clean_outputs(cell, stopped)
        for grade_id in entry.items:  # items of a notebook not rendered
            if grade_id not in seen:
                items.append(self._item(None, grade_id, entry, fallback) | {"placed": False})
        nb.metadata.pop("widgets", None)
        score = info.get("score", found.score if found else None)
        max_score = info.get("max_score", found.max_score if found else None)
        if score is None:
            score = sum(i["score"] for i in items)
            max_score = sum(i["max_score"] for i in items)
        notice = NOTICES.get(status, "")
        message = scrub_paths(entry.message).strip()
        if notice and message:
            message = f"What the grader saw: {message.rstrip('.')}."
        for item in items:  # an item with nothing more to say has no panel of its own
            item["anchored"] = item["placed"] or item["answer"] is not None or bool(item["hint"])
        resources["feedback"] = {
            "student": str(info.get("student", "")),
            "notebook": notebook,
            "items": items,
            "score": float(score or 0.0),
            "max_score": float(max_score or 0.0),
            "late_penalty": float(info.get("late_penalty") or 0.0),
            "notice": " ".join(part for part in (notice, message) if part),
            "graded_at": record.graded_at if record is not None else "",
        }
        return nb, resources

    @staticmethod
    def _item(cell, grade_id: str, entry: NotebookRecord, fallback: dict) -> dict:
        rec = entry.items.get(grade_id)
        label, item = fallback.get(grade_id, ("", grade_id.removesuffix("_value")))
        if rec is not None:
            label, item = rec.label or label, rec.item or item
            item = ", ".join(rec.names) or item  # the variable the student filled
        points = _meta(cell or {}).get("points", 0)
        max_score = rec.max_score if rec is not None else float(points or 0)
        score = _meta(cell).get("score") if cell is not None else None
        score = float((rec.score if rec is not None else 0.0) if score is None else score)
        if rec is not None:
            status, hint = rec.status, rec.message
        elif cell is not None and max_score and score >= max_score:
            status, hint = "ok", ""
        elif cell is not None:
            status, hint = _from_outputs(cell)
        else:
            status, hint = "not_run", ""
        if status in ("ok", "close") and score < max_score and rec is None:
            status = "off"
        by_hand = rec is not None and abs(score - rec.score) > 1e-9
        answer = rec.answer if rec is not None else None
        return {
            "anchor": grade_id,
            "title": " ".join(part for part in (label, item) if part),
            "score": score,
            "max_score": max_score,
            "status": status,
            "verdict": VERDICTS.get(status, status),
            "answer": None if answer is None else scrub_paths(str(answer)),
            "hint": scrub_paths(hint) if status not in ("ok",) else "",
            "by_hand": by_hand,
        }
