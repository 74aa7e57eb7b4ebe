"""The argument parser of the instructor's commands: a mistake in the arguments is one line.

argparse's own parser prints the whole usage before the error; with a dozen options the line
that says what is wrong scrolls by. :class:`Parser` prints only that line, with the command's
``--help`` to read next, and exits 2 as argparse does. It imports nothing but argparse, so a
command that builds its parser before its heavy imports (nbgrader, matplotlib) rejects a typo
at once.
"""

from __future__ import annotations

import argparse
import sys

__all__ = ["Parser"]


class Parser(argparse.ArgumentParser):
    """:class:`argparse.ArgumentParser` whose errors are one line on stderr, exit 2.

    Examples
    --------
    >>> import contextlib, io
    >>> err = io.StringIO()
    >>> with contextlib.redirect_stderr(err):
    ...     try:
    ...         Parser(prog="python -m decompkit.course key").parse_args(["--csvv"])
    ...     except SystemExit as stop:
    ...         print(stop.code)
    2
    >>> print(err.getvalue(), end="")
    error: unrecognized arguments: --csvv (python -m decompkit.course key --help lists the options)
    """

    def error(self, message: str):
        self.exit(2, f"error: {message} ({self.prog} --help lists the options)\n")

    def exit(self, status: int = 0, message: str | None = None):
        if message:
            sys.stderr.write(message)
        sys.exit(status)
