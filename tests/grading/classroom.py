"""Grading records written as the grader writes them (decompkit.course.records), for tests.

``chain_record(student, answers)`` grades answers to the chain notebook the way the record
describes them: each answer is compared with the student's own key, a wrong one gets the
visible check's hint, and the ``mistakes`` given name the planned mistake of an item.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from decompkit.course.key import FILES, GRADE_CELLS
from decompkit.exercises import chain
from decompkit.exercises.params import EXERCISES, params
from decompkit.grading import close

CHAIN = "01-chain-reliability"
#: The graded items of the chain notebook with a number for an answer, in notebook order.
LABELS = {
    "chain_success": "A1", "effective_rate": "A2", "half_life": "A3", "p_prime": "B1",
    "k_attempts": "B2", "undetected_floor": "B3", "retry_limit": "B4",
    "expected_attempts": "B4", "p_prime_fallible": "B5", "other_check_helps": "B6",
    "per_step": "C1", "per_graph": "C1",
}  # fmt: skip
#: The graded cells these records cover (the two classification tables of part D are left out).
CELLS = {g: item for g, item in GRADE_CELLS["chain"].items() if item in LABELS}
NUMERIC = [g for g, item in CELLS.items() if item != "other_check_helps"]


def write_record(root: Path, record: dict) -> Path:
    """Write ``record`` to ``root/records/<assignment>/<student>.json`` atomically."""
    folder = Path(root) / "records" / record["assignment"]
    folder.mkdir(parents=True, exist_ok=True)
    handle, temp = tempfile.mkstemp(dir=folder, prefix=".", suffix=".tmp")
    with os.fdopen(handle, "w", encoding="utf-8") as out:
        json.dump(record, out, indent=1)
    target = folder / f"{record['student']}.json"
    os.replace(temp, target)
    return target


def _hint(item: str, answer, P) -> str:
    return chain.EXERCISE.diagnose(item, answer, P).message


def chain_items(student: str, answers: dict, mistakes: dict | None = None) -> dict:
    """The record's ``items`` of the chain notebook for ``{grade_id: answer}``.

    Items not in ``answers`` are answered right; an answer of ``None`` is unanswered.
    """
    P = params("chain", student)
    key = chain.key(P)
    items = {}
    for grade_id, item in CELLS.items():
        answer = answers.get(grade_id, key[item])
        if answer is None:
            status, message = "unanswered", "not answered yet"
        elif item == "other_check_helps":
            status, message = ("ok", "") if answer == key[item] else ("off", "d > phi decides")
        elif close(answer, key[item]):
            status, message = "ok", ""
        else:
            status, message = "off", _hint(item, answer, P)
        items[grade_id] = {
            "item": item, "label": LABELS[item], "names": [item],
            "score": 1.0 if status == "ok" else 0.0, "max_score": 1.0, "status": status,
            "answer": None if answer is None else repr(answer), "message": message,
            "mistake": (mistakes or {}).get(grade_id) if status == "off" else None,
            "matches": None,
        }  # fmt: skip
    return items


def chain_record(student: str, answers: dict, *, mistakes=None, status="graded", message="",
                 flags=(), submitted_at=None, assignment="decomp") -> dict:  # fmt: skip
    """A schema-1 record of ``student`` with the chain notebook graded from ``answers``."""
    items = chain_items(student, answers, mistakes)
    if status != "graded":
        for item in items.values():
            item.update(score=0.0, status="not_run", answer=None, message="", mistake=None)
    return {
        "schema": 1,
        "assignment": assignment,
        "student": student,
        "graded_at": "2026-12-01T10:00:00+00:00",
        "submitted_at": submitted_at,
        "source_names": [f"{student}_{CHAIN}.ipynb"],
        "notebooks": {
            CHAIN: {
                "status": status, "message": message, "flagged": bool(flags),
                "flags": list(flags), "score": sum(i["score"] for i in items.values()),
                "max_score": float(len(items)), "items": items,
            }
        },
    }  # fmt: skip


def key_of(student: str | None) -> dict:
    """``{grade_id: right answer}`` of the chain notebook for ``student`` (None: lecture)."""
    key = chain.key(params("chain", student))
    return {grade_id: key[item] for grade_id, item in CELLS.items()}


def notebook_record(student: str, name: str, answers: dict, assignment="decomp") -> dict:
    """A schema-1 record of ``student`` with the notebook ``name`` (``"dag"``, ...) graded
    from ``{grade_id: answer}``: unlisted items right, each answer judged on the student's
    own numbers as the visible check judges it."""
    exercise, P = EXERCISES[name], params(name, student)
    key = exercise.key(P)
    items = {}
    for grade_id, item in GRADE_CELLS[name].items():
        answer = answers.get(grade_id, key[item])
        verdict = exercise.diagnose(item, answer, P)
        ok = verdict.status in ("ok", "close") and grade_id not in answers
        items[grade_id] = {
            "item": item, "label": item, "names": [item], "score": float(ok),
            "max_score": 1.0, "status": "ok" if ok else "off", "answer": repr(answer),
            "message": "" if ok else verdict.message, "mistake": None, "matches": None,
        }  # fmt: skip
    notebook = FILES[name]
    return {
        "schema": 1, "assignment": assignment, "student": student,
        "graded_at": "2026-12-01T10:00:00+00:00", "submitted_at": None,
        "source_names": [f"{student}_{notebook}.ipynb"],
        "notebooks": {notebook: {
            "status": "graded", "message": "", "flagged": False, "flags": [],
            "score": sum(i["score"] for i in items.values()), "max_score": float(len(items)),
            "items": items,
        }},
    }  # fmt: skip
