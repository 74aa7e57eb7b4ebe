"""The grading record: one JSON file per student and assignment, what everything after grading
reads (feedback, export, the class report), as typed objects.

The grader writes ``records/<assignment>/<student>.json`` under the course folder in the same
step as that student's gradebook transaction: :func:`write` stages the file, :func:`commit`
puts it in place once the gradebook has committed. Scores in it come from verdicts the grader
judged in its own process, never from anything a student's kernel could write. :func:`load` is
the one reader: it turns each file into a :class:`Record` of :class:`NotebookRecord` and
:class:`ItemRecord`, and refuses a file that is not one, naming it. Schema 1 on disk::

    {"schema": 1, "assignment": "decomp", "student": "s2003",
     "graded_at": "2026-12-01T10:00:00+00:00", "submitted_at": "..." | null,
     "source_names": ["s2003_01-chain-reliability (1).ipynb", ...],
     "sandbox": {"memory_mb": 2048.0, "processes": 64, "scratch_mb": 256.0} | null,
     "fingerprint": {"kit": "<sha256>", "assignment": "...", "settings": "...",
                     "submission": "..."} | null,
     "notebooks": {"01-chain-reliability": {
         "status": "graded" | "missing" | "unreadable" | "timeout" | "kernel_died"
                   | "time_limit" | "failed",
         "message": "...", "flagged": false, "flags": ["cell 12: ...", ...],
         "score": 12.0, "max_score": 14.0,
         "items": {"p_prime_value": {
             "item": "p_prime", "label": "B1", "names": ["p_prime"],
             "score": 0.0, "max_score": 1.0,
             "status": "ok" | "off" | "close" | "unanswered" | "invalid" | "timeout"
                       | "error" | "not_run",
             "answer": "0.9" | null, "message": "...", "mistake": "..." | null,
             "matches": null | "lecture" | "<classmate id>"}}}}}

A record written before the walls existed has no ``"sandbox"`` key; it reads as graded
without walls. ``"fingerprint"`` is what the grade depends on
(:mod:`decompkit.course.fingerprint`); a record without one (an older kit's) reads as None,
and its student is graded again. Every file is written atomically (a temporary file, then
``os.replace``).
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import json
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "SCHEMA",
    "ItemRecord",
    "NotebookRecord",
    "Record",
    "build",
    "clean_temporaries",
    "commit",
    "flag_line",
    "load",
    "load_one",
    "record_path",
    "write",
]

SCHEMA = 1
_FLAGGED = ("unreadable", "timeout", "kernel_died", "time_limit", "failed")


def _text(value, name: str) -> str:
    if not isinstance(value, str):
        raise ValueError(f"{name} must be text, got {value!r}")
    return value


def _optional_text(value, name: str) -> str | None:
    return None if value is None else _text(value, name)


def _number(value, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{name} must be a number, got {value!r}")
    return float(value)


def _texts(value, name: str) -> tuple[str, ...]:
    if not isinstance(value, (list, tuple)):
        raise ValueError(f"{name} must be a list of texts, got {value!r}")
    return tuple(_text(v, name) for v in value)


def _mapping(value, name: str) -> dict:
    if not isinstance(value, dict):
        raise ValueError(f"{name} must be a mapping, got {value!r}")
    return value


@dataclass(frozen=True)
class ItemRecord:
    """One graded cell: the item it grades, its points and what the grader found."""

    item: str
    label: str
    names: tuple[str, ...]
    score: float
    max_score: float
    status: str
    answer: str | None = None
    message: str = ""
    mistake: str | None = None
    matches: str | None = None

    @classmethod
    def from_json(cls, data) -> ItemRecord:
        data = _mapping(data, "an item")
        return cls(
            item=_text(data.get("item", ""), "item"),
            label=_text(data.get("label", ""), "label"),
            names=_texts(data.get("names", []), "names"),
            score=_number(data.get("score", 0.0), "score"),
            max_score=_number(data.get("max_score", 0.0), "max_score"),
            status=_text(data.get("status", "not_run"), "status"),
            answer=_optional_text(data.get("answer"), "answer"),
            message=_text(data.get("message") or "", "message"),
            mistake=_optional_text(data.get("mistake"), "mistake"),
            matches=_optional_text(data.get("matches"), "matches"),
        )

    def title(self, grade_id: str = "") -> str:
        """``B1 p_prime``: the exercise's label and the variable(s) the student filled in
        (the item, or the graded cell ``grade_id``, where no variable is named)."""
        names = ", ".join(self.names) or self.item or grade_id.removesuffix("_value")
        return " ".join(part for part in (self.label, names) if part)


@dataclass(frozen=True)
class NotebookRecord:
    """One notebook of a student: how grading went, its flags, score and items."""

    status: str
    message: str = ""
    flagged: bool = False
    flags: tuple[str, ...] = ()
    score: float = 0.0
    max_score: float = 0.0
    items: dict[str, ItemRecord] = field(default_factory=dict)

    @classmethod
    def from_json(cls, data) -> NotebookRecord:
        data = _mapping(data, "a notebook")
        items = _mapping(data.get("items", {}), "items")
        return cls(
            status=_text(data.get("status", "graded"), "status"),
            message=_text(data.get("message") or "", "message"),
            flagged=bool(data.get("flagged", False)),
            flags=_texts(data.get("flags", []), "flags"),
            score=_number(data.get("score", 0.0), "score"),
            max_score=_number(data.get("max_score", 0.0), "max_score"),
            items={_text(k, "a grade_id"): ItemRecord.from_json(v) for k, v in items.items()},
        )


@dataclass(frozen=True)
class Record:
    """A student's grading record of one assignment (see the module docstring)."""

    assignment: str
    student: str
    notebooks: dict[str, NotebookRecord] = field(default_factory=dict)
    graded_at: str = ""
    submitted_at: str | None = None
    source_names: tuple[str, ...] = ()
    sandbox: dict | None = None  # the kernels' bounds; None: graded without walls
    fingerprint: dict | None = None  # what the grade depends on; None: an older kit's record
    schema: int = SCHEMA

    @classmethod
    def from_json(cls, data) -> Record:
        """A record from its JSON form; ValueError naming what is malformed."""
        data = _mapping(data, "a record")
        if data.get("schema") != SCHEMA:
            raise ValueError(f"schema must be {SCHEMA}, got {data.get('schema')!r}")
        notebooks = _mapping(data.get("notebooks", {}), "notebooks")
        sandbox, found = data.get("sandbox"), data.get("fingerprint")
        return cls(
            assignment=_text(data.get("assignment", ""), "assignment"),
            student=_text(data.get("student"), "student"),
            notebooks={
                _text(k, "a notebook name"): NotebookRecord.from_json(v)
                for k, v in notebooks.items()
            },
            graded_at=_text(data.get("graded_at") or "", "graded_at"),
            submitted_at=_optional_text(data.get("submitted_at"), "submitted_at"),
            source_names=_texts(data.get("source_names", []), "source_names"),
            sandbox=None if sandbox is None else dict(_mapping(sandbox, "sandbox")),
            fingerprint=None
            if found is None
            else {
                _text(k, "a fingerprint part"): _text(v, "a digest")
                for k, v in _mapping(found, "fingerprint").items()
            },
        )

    def to_json(self) -> dict:
        """The record as schema-1 JSON data (lists for tuples, the keys in their order)."""
        data = dataclasses.asdict(self)
        order = (
            "schema",
            "assignment",
            "student",
            "graded_at",
            "submitted_at",
            "source_names",
            "sandbox",
            "fingerprint",
            "notebooks",
        )
        return {key: data[key] for key in order}


def build(
    assignment,
    student,
    outcomes,
    flags,
    *,
    submitted_at=None,
    source_names=(),
    walls=None,
    fingerprint=None,
) -> Record:
    """The record of one student: one :class:`NotebookRecord` per outcome of the runner
    (:class:`decompkit.course.engine.runner.NotebookOutcome`), the integrity scan's ``flags``
    by notebook, the kernels' ``walls`` (None when graded without) and the ``fingerprint``
    (``{part: digest}``) of what was graded."""
    notebooks = {}
    for outcome in outcomes:
        found = [flag_line(f) for f in flags.get(outcome.notebook, []) if _is_flag(f)]
        notebooks[outcome.notebook] = NotebookRecord(
            status=outcome.status,
            message=outcome.message,
            flagged=bool(found) or outcome.status in _FLAGGED or bool(outcome.integrity),
            flags=tuple(found + [e for e in outcome.events if e not in found]),
            score=float(sum(outcome.scores.values())),
            max_score=float(sum(outcome.points.values())),
            items={k: ItemRecord.from_json(v) for k, v in outcome.items.items()},
        )
    sandbox = None
    if walls is not None:
        bounds = walls.bounds
        sandbox = {
            "memory_mb": bounds.memory / 2**20,
            "processes": bounds.processes,
            "scratch_mb": bounds.scratch / 2**20,
        }
    return Record(
        assignment,
        student,
        notebooks,
        _now(),
        submitted_at,
        tuple(source_names),
        sandbox,
        None if fingerprint is None else dict(fingerprint),
    )


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat()


def _is_flag(found) -> bool:
    return isinstance(found, str) or getattr(found, "severity", "") == "flag"


def flag_line(found) -> str:
    """An integrity finding as the record lists it: ``cell 12, line 3: reason (construct)``.

    Examples
    --------
    >>> from decompkit.course.integrity import Flag
    >>> flag_line(Flag("a.ipynb", 12, None, 3, "answer-key", "chain.key(P)", "flag", "calls x"))
    'cell 12, line 3: calls x (chain.key(P))'
    """
    if isinstance(found, str):
        return found
    where = "" if found.cell is None else f"cell {found.cell}"
    where += "" if found.line is None or found.cell is None else f", line {found.line}"
    return f"{where}: {found.reason} ({found.construct})" if where else found.reason


def record_path(root: Path, assignment: str, student: str) -> Path:
    return Path(root) / "records" / assignment / f"{student}.json"


def write(path: Path, record: Record) -> Path:
    """Write ``record`` next to ``path`` and return the temporary file: :func:`commit` puts it
    in place once the gradebook transaction of the same student has committed."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}-", suffix=".tmp")
    with os.fdopen(handle, "w", encoding="utf-8") as out:
        json.dump(record.to_json(), out, indent=1, ensure_ascii=False, allow_nan=False)
        out.write("\n")
        out.flush()
        os.fsync(out.fileno())
    return Path(temporary)


def commit(temporary: Path, path: Path) -> None:
    os.replace(temporary, path)


def clean_temporaries(folder: Path) -> None:
    """Remove temporary files a run that was killed left behind."""
    if folder.is_dir():
        for stale in folder.glob(".*.tmp"):
            try:
                stale.unlink()
            except OSError:
                pass


def load_one(root, assignment: str, student: str) -> Record | None:
    """``student``'s record of ``assignment``; None when there is none or it is unreadable
    (the grader then grades the student again, which writes it anew)."""
    path = record_path(root, assignment, student)
    try:
        record = Record.from_json(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    return record if record.student == student else None


def load(root, assignment: str) -> dict[str, Record]:
    """Every student's grading record of ``assignment``, by student id.

    Parameters
    ----------
    root : path
        The course folder (holds ``records/``).
    assignment : str
        The assignment, e.g. ``"decomp"``.

    Returns
    -------
    dict
        ``{student: Record}`` sorted by id; empty when nothing was graded yet. Files whose
        name starts with a dot or does not end in ``.json`` (the grader's temporary files)
        are not records.

    Raises
    ------
    ValueError
        For a file that is not a readable record (bad JSON, another schema, a malformed
        field, or a student id that differs from the file's name), naming the file.

    Examples
    --------
    >>> import json, pathlib, tempfile
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> (root / "records" / "decomp").mkdir(parents=True)
    >>> record = {"schema": 1, "assignment": "decomp", "student": "s1", "notebooks": {}}
    >>> _ = (root / "records" / "decomp" / "s1.json").write_text(json.dumps(record))
    >>> found = load(root, "decomp")
    >>> sorted(found), found["s1"].sandbox, load(root, "other")
    (['s1'], None, {})
    """
    folder = Path(root) / "records" / str(assignment)
    found = {}
    if not folder.is_dir():
        return found
    for path in sorted(folder.glob("*.json")):
        if path.name.startswith("."):
            continue
        try:
            record = Record.from_json(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, UnicodeDecodeError, ValueError) as error:
            message = f"record {path.name!r} of {assignment!r} is unreadable: {error}"
            raise ValueError(message) from None
        if record.student != path.stem:
            raise ValueError(
                f"record {path.name!r} of {assignment!r} names student {record.student!r}, "
                f"expected {path.stem!r}"
            )
        found[path.stem] = record
    return found
