"""The bounds of grading in time and size, and the statuses that mean a notebook was not
graded in full.

Standard library only: the grader's command checks its settings and arguments with these
before it imports any notebook machinery.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["FAILED", "Limits"]

#: Statuses of a notebook that mean it could not be graded in full.
FAILED = ("unreadable", "timeout", "kernel_died", "time_limit", "failed")


@dataclass(frozen=True)
class Limits:
    """Time and size bounds of grading (seconds, bytes)."""

    cell: float = 30.0
    notebook: float = 180.0
    student: float = 600.0
    output_bytes: int = 100_000
