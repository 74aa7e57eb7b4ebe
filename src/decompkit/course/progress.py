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

__all__ = ["Progress", "duration", "progress_line", "summary"]


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


def summary(
    assignment, graded, notebooks, maxima, *, seconds, workers, left_out=(), troubles=()
) -> str:
    """The end-of-run report.

    Parameters
    ----------
    graded : dict
        ``{student: [NotebookOutcome, ...]}`` in the order of ``notebooks``.
    notebooks : list of str
        The assignment's notebooks.
    maxima : dict
        ``{notebook: max points}``.
    left_out : list of str
        One line per submission folder or file that was not graded, with the reason.
    troubles : list of str
        Lines about the run itself (a student that could not be graded or saved, the kit's
        files changed).
    """
    graded = dict(sorted(graded.items()))
    lines = [
        f"{assignment}: {len(graded)} students graded in {duration(seconds)}"
        f" ({workers} worker{'s' if workers != 1 else ''})",
        "",
    ]
    if graded:
        name_width = max(8, *(len(s) for s in graded))
        head = [_short(n) for n in notebooks]
        widths = [max(5, len(h) + 1) for h in head]
        total_max = sum(maxima.values())
        lines.append(
            f"{'student':<{name_width}} "
            + " ".join(f"{h:>{w}}" for h, w in zip(head, widths, strict=True))
            + f" {'total':>7}"
        )
        lines.append(
            f"{'max':<{name_width}} "
            + " ".join(f"{_points(maxima[n]):>{w}}" for n, w in zip(notebooks, widths, strict=True))
            + f" {_points(total_max):>7}"
        )
        for student, outcomes in graded.items():
            by = {o.notebook: o for o in outcomes}
            cells = []
            for notebook, width in zip(notebooks, widths, strict=True):
                outcome = by.get(notebook)
                if outcome is None or outcome.status == "missing":
                    cells.append(f"{'-':>{width}}")
                    continue
                mark = "!" if outcome.status in FAILED else ""
                mark += "?" if getattr(outcome, "integrity", False) else ""
                cells.append(f"{_points(sum(outcome.scores.values())) + mark:>{width}}")
            total = sum(sum(o.scores.values()) for o in outcomes)
            lines.append(f"{student:<{name_width}} " + " ".join(cells) + f" {_points(total):>7}")
        lines.append("")
        lines.append("- not handed in   ! could not be graded in full (below)   ? flagged (below)")
    problems = [(s, o) for s, outcomes in graded.items() for o in outcomes if o.status in FAILED]
    if problems:
        lines += [
            "",
            f"Could not be graded in full ({len(problems)}): what did not run scores 0; "
            "if the cause is on your side (a limit too short, a file to download again), "
            "fix it and regrade with --student ID",
        ]
        lines += [f"  {s}  {o.notebook}: {o.message}" for s, o in problems]
    flagged = [
        (s, o) for s, outcomes in graded.items() for o in outcomes if getattr(o, "integrity", False)
    ]
    if flagged:
        lines += [
            "",
            f"Flagged by the integrity scan ({len(flagged)}): graded as usual; "
            "see integrity.txt and decide",
        ]
        lines += [f"  {s}  {o.notebook}: {o.integrity}" for s, o in flagged]
    if left_out:
        lines += ["", f"Not graded ({len(left_out)}):"]
        lines += [f"  {line}" for line in left_out]
    if troubles:
        lines += ["", f"Problems of the run ({len(troubles)}):"]
        lines += [f"  {line}" for line in troubles]
    return "\n".join(lines) + "\n"


def progress_line(student, outcomes) -> tuple[str, list[str], bool, bool]:
    """How one student went, for the progress display: a line, problems, failed, flagged."""
    score = sum(sum(o.scores.values()) for o in outcomes)
    maximum = sum(sum(o.points.values()) for o in outcomes)
    problems = [f"{o.notebook}: {o.message}" for o in outcomes if o.status in FAILED]
    flagged = [f"{o.notebook}: flagged - {o.integrity}" for o in outcomes if o.integrity]
    return f"{student}  {score:g}/{maximum:g}", problems + flagged, bool(problems), bool(flagged)
