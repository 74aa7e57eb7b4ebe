"""The table a grading run ends with: every student's final score per notebook, as the
gradebook holds it once the run is done.

A score is nbgrader's (a grader's manual score where one was given in formgrader, else the
autograde, plus extra credit), so the table agrees with formgrader and the exports; a ``*``
marks a notebook whose score a grader changed by hand. How each notebook went (not handed
in, not graded in full, flagged) comes from the students' grading records. The caller reads
the gradebook and the records; this module only lays them out.
"""

from __future__ import annotations

from .engine.limits import FAILED
from .progress import duration

__all__ = ["scoreboard"]

LEGEND = (
    "- not handed in   ! could not be graded in full (below)   ? flagged (below)   "
    "* a grader's manual score (formgrader)"
)


def _points(value: float) -> str:
    return f"{value:g}" if value == int(value) else f"{value:.1f}"


def _short(notebook: str) -> str:
    head = notebook.split("-", 1)[0]
    return head if len(head) <= 4 else notebook[:4]


def _headline(assignment, graded, unchanged, seconds, workers) -> str:
    """``decomp: 12 students graded in 1 min 5 s (2 workers), 26 unchanged (...)``."""
    line = (
        f"{assignment}: {graded} student{'s' if graded != 1 else ''} graded in {duration(seconds)} "
        f"({workers} worker{'s' if workers != 1 else ''}), {unchanged} unchanged"
    )
    if unchanged:
        line += " (nothing their grade depends on changed; --force grades them again)"
    return line


def _cell(final, notebook, width: int) -> str:
    if final is None or (notebook is not None and notebook.status == "missing"):
        return f"{'-':>{width}}"
    mark = "!" if notebook is not None and notebook.status in FAILED else ""
    mark += "?" if notebook is not None and notebook.flagged and not mark else ""
    mark += "*" if final.adjusted else ""
    return f"{_points(final.score) + mark:>{width}}"


def scoreboard(
    assignment,
    notebooks,
    maxima,
    final,
    records,
    *,
    graded,
    unchanged,
    seconds,
    workers,
    left_out=(),
    troubles=(),
) -> str:
    """The end-of-run report.

    Parameters
    ----------
    assignment : str
    notebooks : list of str
        The assignment's notebooks, in order.
    maxima : dict
        ``{notebook: max points}``.
    final : dict
        ``{student: {notebook: FinalScore}}`` of the students to show, from the gradebook
        (:func:`decompkit.course.gradebook.final_scores`).
    records : dict
        ``{student: Record}``: their grading records (a student without one shows scores only).
    graded, unchanged : int
        How many students this run graded, and left as they were.
    left_out, troubles : list of str
        Submissions not graded (with why), and lines about the run itself.
    """
    lines = [_headline(assignment, graded, unchanged, seconds, workers), ""]
    final = dict(sorted(final.items()))
    problems, flagged = [], []
    if final:
        name_width = max(8, *(len(s) for s in final))
        widths = [max(6, len(_short(n)) + 2) for n in notebooks]
        lines.append(
            f"{'student':<{name_width}} "
            + " ".join(f"{_short(n):>{w}}" for n, w in zip(notebooks, widths, strict=True))
            + f" {'total':>8}"
        )
        lines.append(
            f"{'max':<{name_width}} "
            + " ".join(f"{_points(maxima[n]):>{w}}" for n, w in zip(notebooks, widths, strict=True))
            + f" {_points(sum(maxima.values())):>8}"
        )
        for student, scores in final.items():
            record = records.get(student)
            kept = {} if record is None else record.notebooks
            cells = [
                _cell(scores.get(n), kept.get(n), w) for n, w in zip(notebooks, widths, strict=True)
            ]
            total = sum(s.score for s in scores.values())
            mark = "*" if any(s.adjusted for s in scores.values()) else ""
            lines.append(
                f"{student:<{name_width}} " + " ".join(cells) + f" {_points(total) + mark:>8}"
            )
            for name in notebooks:
                notebook = kept.get(name)
                if notebook is not None and notebook.status in FAILED:
                    problems.append(f"  {student}  {name}: {notebook.message}")
                elif notebook is not None and notebook.flagged:
                    for why in notebook.flags or [notebook.message]:
                        flagged.append(f"  {student}  {name}: {why}")
        lines += ["", LEGEND]
    if problems:
        lines += [
            "",
            f"Could not be graded in full ({len(problems)}): what did not run scores 0; "
            "if the cause is on your side (a limit too short, a file to download again), "
            "fix it and regrade with --student ID",
            *problems,
        ]
    if flagged:
        lines += [
            "",
            f"Flagged by the integrity scan or the grader ({len(flagged)}): graded as usual; "
            "see integrity.txt and the notebook's record, and decide",
            *flagged,
        ]
    if left_out:
        lines += ["", f"Not graded ({len(left_out)}):", *[f"  {line}" for line in left_out]]
    if troubles:
        lines += ["", f"Problems of the run ({len(troubles)}):", *[f"  {t}" for t in troubles]]
    return "\n".join(lines) + "\n"
