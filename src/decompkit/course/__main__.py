"""The instructor's commands from the shell: ``python -m decompkit.course <command> ...``.

    release [--force] [--root DIR]        regenerate notebooks/ from solutions/
    check NOTEBOOK...                     run notebooks, report every visible check
    collect [ASSIGNMENT] [--from ZIP]     file an LMS download into submitted/<id>/
    grade [ASSIGNMENT] [--workers N] ...  autograde what changed in submitted/ into gradebook.db
    key [ID...] [--csv FILE] ...          every student's numbers and answers
    integrity FOLDER... [--csv FILE]      the static integrity scan of submissions
    feedback [ASSIGNMENT] [--student ID]  feedback/<student>/<assignment>/*.html, if changed
    export [ASSIGNMENT] --to canvas|moodle|csv [--roster CSV]  grades an LMS imports
    report [ASSIGNMENT]                   reports/<assignment>/: what the class got wrong
    names [--roster CSV]                  names in gradebook.db for formgrader (else the ids)

``python3 kit.py release|check|collect|grade|key|feedback|export|report`` runs these inside the
kit's environment. Each command's own ``--help`` lists its options.

Ctrl-C and a terminate (SIGTERM) stop a command in the same orderly way: one line says what
was kept, and the exit status is 130 or 143. A mistake in the arguments is one line, exit 2.
"""

from __future__ import annotations

import os
import signal
import sys
import threading

# Each command's module is imported only when it runs: a mistake in the arguments of a light
# command is found before nbgrader or matplotlib is imported.


def _release(argv):
    from .release import main

    return main(argv)


def _check(argv):
    from .selfcheck import main

    return main(argv)


def _collect(argv):
    from .collect import main

    return main(argv)


def _grade(argv):
    from .grade import main

    return main(argv)


def _key(argv):
    from .key import main

    return main(argv)


def _integrity(argv):
    from .integrity import main

    return main(argv)


def _feedback(argv):
    from .feedback_command import main

    return main(argv)


def _export(argv):
    from .export import main

    return main(argv)


def _report(argv):
    from .report import main

    return main(argv)


def _names(argv):
    from .export import names_main

    return names_main(argv)


COMMANDS = {
    "release": _release,
    "check": _check,
    "collect": _collect,
    "grade": _grade,
    "key": _key,
    "integrity": _integrity,
    "feedback": _feedback,
    "export": _export,
    "report": _report,
    "names": _names,
}
INTERRUPTED = 128 + signal.SIGINT  # the shell's status of a command stopped by Ctrl-C

#: The signal that stopped the command: SIGINT unless a SIGTERM came (see :func:`_terminate`).
_stopped_by = [signal.SIGINT]


def main(argv: list[str] | None = None) -> int:
    """Run the command named by ``argv[0]`` with the rest of ``argv``; 2 for an unknown one,
    130 when interrupted (after one line that says so)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] in (["-h"], ["--help"]):
        print(__doc__.strip())
        return 0
    if not argv or argv[0] not in COMMANDS:
        known = ", ".join(COMMANDS)
        said = f"unknown command {argv[0]!r}" if argv else "no command"
        print(f"error: {said}; one of {known} (--help: what each does)", file=sys.stderr)
        return 2
    try:
        return COMMANDS[argv[0]](argv[1:])
    except BrokenPipeError:  # the output went to a pager or `head` that stopped reading
        sys.stderr.close()
        return 0
    except KeyboardInterrupt:
        print(
            f"interrupted: {argv[0]} stopped before it finished; run the same command again",
            file=sys.stderr,
        )
        return INTERRUPTED


def _terminate(number, _frame) -> None:
    """SIGTERM: stop as Ctrl-C does. It is passed on as SIGINT to the main thread, so a part
    of the command that holds Ctrl-C back (a student being written) holds it back as well."""
    _stopped_by[0] = number
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:  # a script's `command &` ran it
        signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)


def run() -> int:
    """:func:`main` as a process: SIGTERM handled as Ctrl-C; 130 or 143 after a stop."""
    signal.signal(signal.SIGTERM, _terminate)
    try:
        status = main()
    except KeyboardInterrupt:  # Ctrl-C again just as the command returned
        status = INTERRUPTED
    if status != INTERRUPTED:
        return status
    # What the command had done is saved and said. End here: Ctrl-C again while the
    # interpreter shut down could print a traceback or change the status. What the command
    # started ends with this process (decompkit.course.engine.sandbox.die_with_parent).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(128 + _stopped_by[0])


if __name__ == "__main__":
    sys.exit(run())
