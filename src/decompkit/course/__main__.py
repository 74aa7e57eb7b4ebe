"""The instructor's commands from the shell: ``python -m decompkit.course <command> ...``.

    release [--force] [--root DIR]        regenerate notebooks/ from solutions/
    check NOTEBOOK...                     run notebooks, report every visible check
    collect [ASSIGNMENT] [--from ZIP]     file an LMS download into submitted/<id>/
    grade [ASSIGNMENT] [--workers N] ...  autograde submitted/ into gradebook.db
    key [ID...] [--csv FILE] ...          every student's numbers and answers
    integrity FOLDER... [--csv FILE]      the static integrity scan of submissions
    feedback [ASSIGNMENT] [--student ID]  feedback/<student>/<assignment>/*.html, always anew
    export [ASSIGNMENT] --to canvas|moodle|csv [--roster CSV]  grades an LMS imports
    report [ASSIGNMENT]                   reports/<assignment>/: what the class got wrong
    names [--roster CSV]                  names in gradebook.db for formgrader (else the ids)

``python3 kit.py release|check|collect|grade|key|feedback|export|report`` runs these inside the
kit's environment. Each command's own ``--help`` lists its options.
"""

from __future__ import annotations

import sys

from . import collect, export, feedback, grade, integrity, key, release, report, selfcheck

COMMANDS = {
    "release": release.main,
    "check": selfcheck.main,
    "collect": collect.main,
    "grade": grade.main,
    "key": key.main,
    "integrity": integrity.main,
    "feedback": feedback.main,
    "export": export.main,
    "report": report.main,
    "names": export.names_main,
}


def main(argv: list[str] | None = None) -> int:
    """Run the command named by ``argv[0]`` with the rest of ``argv``; 2 for an unknown one."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] in (["-h"], ["--help"]):
        print(__doc__.strip())
        return 0
    if not argv or argv[0] not in COMMANDS:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    try:
        return COMMANDS[argv[0]](argv[1:])
    except BrokenPipeError:  # the output went to a pager or `head` that stopped reading
        sys.stderr.close()
        return 0


if __name__ == "__main__":
    sys.exit(main())
