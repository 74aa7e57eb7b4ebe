"""How ``python3 kit.py test`` runs the suite, in .venv's Python with kit.py's arguments.

Without arguments, the whole suite as CI runs it: on pytest-xdist workers (one more than the
cores, at most 4: the end-to-end tests spend much of their time waiting for a kernel, a hub
or a page), then the tests marked ``alone`` in one process, on a machine left to them.
``--fast``: the unit tier, test by test on workers. Any other arguments go to one pytest as
they are. Each pytest command line is shown before it runs.
"""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
import kit  # noqa: E402  (the launcher: how a child process is run and waited for)

#: What ``--fast`` leaves out besides the tests marked slow: the end-to-end tiers (a real
#: browser, classes graded by nbgrader, JupyterHub, notebooks run in kernels, released and
#: validated by nbgrader).
FAST_TIER_SKIPS = (
    "tests/browser",
    "tests/grading",
    "tests/hub",
    "tests/test_notebooks.py",
    "tests/test_lab_notebook.py",
    "tests/test_self_check.py",
    "tests/test_course.py",
)
#: Where the tests marked ``alone`` are (tests/test_kit.py checks that none is elsewhere), so
#: the second part collects only this folder.
ALONE_TESTS = "tests/browser"
PYTEST_INTERRUPTED = 2


def commands(args: list[str], cores: int) -> list[list[str]]:
    """The pytest argument lists to run one after the other for kit.py's ``args``.

    >>> commands(["-k", "markov"], cores=2)
    [['-k', 'markov']]
    >>> commands([], cores=2)
    [['-n', '3', '-m', 'not alone', '--durations=25'], ['tests/browser', '-m', 'alone']]
    """
    if not args:
        workers = str(min(4, cores + 1))
        return [["-n", workers, "-m", "not alone", "--durations=25"], [ALONE_TESTS, "-m", "alone"]]
    if "--fast" in args:
        skips = [f"--ignore={path}" for path in FAST_TIER_SKIPS]
        # test by test (work stealing): no shared server or class to keep on one worker
        tier = [*skips, "-m", "not slow", "-n", str(min(4, cores)), "--dist", "worksteal"]
        return [[*tier, *(arg for arg in args if arg != "--fast")]]
    return [args]


def main(args: list[str]) -> int:
    """Each command of :func:`commands` in turn; the worst status, and none after a Ctrl-C."""
    status = 0
    for pytest_args in commands(args, os.cpu_count() or 1):
        python = kit.PYTHON.relative_to(ROOT)
        kit.say("running " + shlex.join([str(python), "-m", "pytest", *pytest_args]))
        result = kit.run_command([str(kit.PYTHON), "-m", "pytest", *pytest_args])
        if result == PYTEST_INTERRUPTED or result < 0:  # Ctrl-C, or a signal
            return result
        status = status or result
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
