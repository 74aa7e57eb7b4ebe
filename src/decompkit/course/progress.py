"""What a grading run shows while it works and when it is done: a progress bar, a table.

:class:`Progress` redraws one line on a terminal (``grading [####------] 12/40 students ...
ETA 1 min 50 s``) and prints each problem above it as it happens; in a log (no terminal) it
prints one line per student instead. :func:`summary` is the table printed at the end: every
student's score per notebook against the maximum, then the notebooks that could not be graded
in full, the flagged ones and whatever was left out, each with what to do. Standard library
only.
"""

from __future__ import annotations

import shutil
import sys
import time

from .engine.runner import FAILED

__all__ = ["Progress", "duration", "progress_line"]


def duration(seconds: float) -> str:
    """A duration as a person reads it.

    Examples
    --------
    >>> duration(4.26), duration(75), duration(3725)
    ('4.3 s', '1 min 15 s', '1 h 2 min')
    """
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, rest = divmod(int(round(seconds)), 60)
    if minutes < 60:
        return f"{minutes} min {rest} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min"


class Progress:
    """Counts, elapsed time and an estimate of the time left, on ``stream`` (stderr)."""

    def __init__(self, total: int, stream=None, *, what: str = "students"):
        self.total, self.what = int(total), what
        self.stream = stream if stream is not None else sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.started = time.monotonic()
        self.done = self.failed = self.flagged = 0
        self._shown = False
        if self.tty and self.total:
            self._draw()

    def _eta(self) -> str:
        if not self.done or self.done >= self.total:
            return ""
        left = (time.monotonic() - self.started) / self.done * (self.total - self.done)
        return f", ETA {duration(left)}"

    def line(self) -> str:
        """The progress line as it stands."""
        width = 20
        filled = width * self.done // max(self.total, 1)
        parts = [f"{self.done}/{self.total} {self.what}"]
        if self.failed:
            parts.append(f"{self.failed} with problems")
        if self.flagged:
            parts.append(f"{self.flagged} flagged")
        elapsed = duration(time.monotonic() - self.started)
        return (
            f"grading [{'#' * filled}{'-' * (width - filled)}] {', '.join(parts)}, "
            f"{elapsed}{self._eta()}"
        )

    def _draw(self) -> None:
        columns = shutil.get_terminal_size((100, 20)).columns
        self.stream.write("\r\x1b[2K" + self.line()[: columns - 1])
        self.stream.flush()
        self._shown = True

    def _clear(self) -> None:
        if self.tty and self._shown:
            self.stream.write("\r\x1b[2K")
            self._shown = False

    def note(self, text: str) -> None:
        """Print ``text`` (a problem, a warning) above the bar."""
        self._clear()
        self.stream.write(text.rstrip("\n") + "\n")
        if self.tty:
            self._draw()
        self.stream.flush()

    def advance(self, text: str, problems=(), *, failed=False, flagged=False) -> None:
        """One more student done: ``text`` says how it went, ``problems`` what went wrong."""
        self.done += 1
        self.failed += bool(failed)
        self.flagged += bool(flagged)
        self._clear()
        if not self.tty:
            self.stream.write(
                f"[{self.done:>{len(str(self.total))}}/{self.total}] {text}{self._eta()}\n"
            )
        for problem in problems:
            self.stream.write(f"    {problem}\n")
        if self.tty:
            self._draw()
        self.stream.flush()

    def close(self) -> None:
        self._clear()
        self.stream.flush()


def _points(value: float) -> str:
    return f"{value:g}" if value == int(value) else f"{value:.1f}"


def _short(notebook: str) -> str:
    head = notebook.split("-", 1)[0]
    return head if len(head) <= 4 else notebook[:4]


def progress_line(student, outcomes) -> tuple[str, list[str], bool, bool]:
    """How one student went, for the progress display: a line, problems, failed, flagged."""
    score = sum(sum(o.scores.values()) for o in outcomes)
    maximum = sum(sum(o.points.values()) for o in outcomes)
    problems = [f"{o.notebook}: {o.message}" for o in outcomes if o.status in FAILED]
    flagged = [f"{o.notebook}: flagged - {o.integrity}" for o in outcomes if o.integrity]
    return f"{student}  {score:g}/{maximum:g}", problems + flagged, bool(problems), bool(flagged)
