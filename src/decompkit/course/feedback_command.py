"""``python -m decompkit.course feedback``: the request checked, and the pages that are up to
date counted, before any notebook machinery is imported.

:mod:`decompkit.course.feedback` imports nbconvert (seconds), since the course's
``nbgrader_config.py`` names its page classes. This entry point uses only
:mod:`decompkit.course.feedback_plan` until a page has to be written: a wrong assignment or
student is one line at once (exit 2), and a run with every page up to date prints its last
line without importing nbconvert or nbgrader. Otherwise it hands over to
:func:`decompkit.course.feedback.main`.
"""

from __future__ import annotations

from .feedback_plan import FeedbackRun, due, fingerprints, parse_command, refuse, summary

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    """Command line: ``feedback [ASSIGNMENT] [--all] [--student ID] [--workers N]``."""
    status = refuse(argv)
    if status is not None:
        return status
    args, request = parse_command(argv)
    stale = due(request, fingerprints(request), args.all)
    if not stale:
        print(
            summary(
                FeedbackRun(current=tuple(p for s in request.students for p in request.paths(s)))
            )
        )
        return 0
    from .feedback import main as write

    return write(argv)
