"""The grading record: one JSON file per student and assignment, what everything after grading
reads (feedback, export, the class report).

The grader writes ``records/<assignment>/<student>.json`` under the course folder, atomically
(a temporary file in the same folder, then ``os.replace``), in the same step as that student's
gradebook transaction. Scores in it come from verdicts the grader judged in its own process,
never from anything a student's kernel could write. Schema 1::

    {
      "schema": 1,
      "assignment": "decomp",
      "student": "s2003",                     # the gradebook's (normalised) id
      "graded_at": "2026-12-01T10:00:00+00:00",
      "submitted_at": "2026-11-30T23:58:10+00:00" | null,   # LMS or nbgrader timestamp
      "source_names": ["s2003_01-chain-reliability (1).ipynb", ...],   # as collected
      "notebooks": {
        "01-chain-reliability": {
          "status": "graded" | "missing" | "unreadable" | "timeout" | "kernel_died"
                    | "time_limit" | "failed",
          "message": "one line a person can act on" | "",
          "flagged": false,
          "flags": ["cell 12: reads the answer key (exercises.chain.key)", ...],
          "score": 12.0, "max_score": 14.0,
          "items": {
            "p_prime_value": {                # the graded cell's grade_id
              "item": "p_prime", "label": "B1", "names": ["p_prime"],
              "score": 0.0, "max_score": 1.0,
              "status": "ok" | "off" | "close" | "unanswered" | "invalid" | "timeout"
                        | "error" | "not_run",
              "answer": "0.9" | null,         # repr-like text read out of the kernel
              "message": "the retry itself succeeds only with probability p ...",
              "mistake": "retry_always_right" | null,
              "matches": null | "lecture" | "<classmate id>"
            }
          }
        }
      }
    }

:func:`load` is the one reader; nothing else opens these files.
"""

from __future__ import annotations

import json
from pathlib import Path

__all__ = ["SCHEMA", "load"]

#: The record layout this module reads.
SCHEMA = 1


def load(root, assignment: str) -> dict[str, dict]:
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
        ``{student: record}`` sorted by id; empty when nothing was graded yet. Files whose
        name starts with a dot or does not end in ``.json`` (the grader's temporary files)
        are not records.

    Raises
    ------
    ValueError
        For a file that is not a readable record (bad JSON, another schema, or a student
        id that differs from the file's name), naming the file.

    Examples
    --------
    >>> import json, pathlib, tempfile
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> (root / "records" / "decomp").mkdir(parents=True)
    >>> record = {"schema": 1, "assignment": "decomp", "student": "s1", "notebooks": {}}
    >>> _ = (root / "records" / "decomp" / "s1.json").write_text(json.dumps(record))
    >>> sorted(load(root, "decomp")), load(root, "other")
    (['s1'], {})
    """
    folder = Path(root) / "records" / str(assignment)
    found = {}
    if not folder.is_dir():
        return found
    for path in sorted(folder.glob("*.json")):
        if path.name.startswith("."):
            continue
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
            message = f"record {path.name!r} of {assignment!r} is unreadable: {error}"
            raise ValueError(message) from None
        if not isinstance(record, dict) or record.get("schema") != SCHEMA:
            schema = record.get("schema") if isinstance(record, dict) else None
            raise ValueError(
                f"record {path.name!r} of {assignment!r} has schema {schema!r}, expected {SCHEMA}"
            )
        if record.get("student") != path.stem:
            raise ValueError(
                f"record {path.name!r} of {assignment!r} names student "
                f"{record.get('student')!r}, expected {path.stem!r}"
            )
        found[path.stem] = record
    return found
