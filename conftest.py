"""Test-wide set-up shared by the doctests in src/ and the tests in tests/."""

import os
import signal
from collections import Counter

import pytest


def pytest_configure(config):
    """Run every test with the lecture's numbers: no grader or hub id from the caller's shell
    (an instructor testing on JupyterHub has JUPYTERHUB_USER set) may pick a student variant.
    Cleared before collection, since building the grading bank already draws variants. Nor
    may a real model named in DECOMPKIT_MODEL be called: the lab's tests run offline."""
    for name in ("DECOMPKIT_STUDENT", "JUPYTERHUB_USER", "DECOMPKIT_MODEL"):
        os.environ.pop(name, None)
    # A suite started as a background job (`kit.py test &`, a CI step run with `&`) inherits
    # an ignored SIGINT, and so would every command a test starts: the tests of Ctrl-C would
    # send it to a grader that ignores it, as such a grader should. Tests start commands as
    # a terminal's foreground job does, with Ctrl-C's default action.
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


#: The files of tests/grading that share its session-wide autograded class (the grading bank);
#: every other file there sets up its own course and is a unit of its own.
SHARED_GRADING = ("test_grading.py", "test_hardening.py")

#: The files that draw the numbers of the same tens to hundreds of student ids (s0000, ...):
#: one worker runs them together, so each id's numbers are drawn once (the draws are cached
#: in the process) rather than once in every worker.
DRAWS_MANY = (
    "tests/grading/test_variants.py",
    "tests/test_tolerance.py",
    "tests/test_exercises.py",
    "tests/test_drawn_plans.py",
    "tests/test_plans_drawn.py",
    "tests/test_artefact_scenario.py",
)


def _group(nodeid: str) -> str:
    """The share of the suite one worker runs whole: each folder of tests/ that has a
    conftest of its own (one JupyterLab for tests/browser, the hubs of tests/hub), but of
    tests/grading only the files of :data:`SHARED_GRADING` together, and each other file;
    the files of :data:`DRAWS_MANY` together;
    ``nodeid`` is pytest's (``tests/browser/test_student_page.py::test_x[s1]`` belongs to
    ``tests/browser``)."""
    path = nodeid.split("::", 1)[0]
    if path in DRAWS_MANY:
        return "the files of DRAWS_MANY"
    parts = path.split("/")
    if parts[:2] == ["tests", "grading"] and parts[-1] not in SHARED_GRADING:
        return path
    return "/".join(parts[:2]) if parts[0] == "tests" and len(parts) > 2 else path


#: The longest shares of :func:`_group`, longest first (the table at the end of a run on
#: workers: 350, 150, 90, 85, 80, 75 s ... on a 2-core machine). Workers take these first and
#: the short shares fill the gaps at the end; handed out in collection order, the long
#: trace-chart and widget files came last and one worker finished 70 s before the others.
LONG_SHARES = (
    "tests/browser",
    "the files of DRAWS_MANY",
    "tests/test_trace_gantt_labels.py",
    "tests/grading/test_walls.py",
    "tests/test_widgets.py",
    "tests/grading/test_process_hygiene.py",
    "tests/grading",
    "tests/hub",
    "tests/test_kit.py",
    "tests/test_explorer_layout.py",
)


def pytest_collection_modifyitems(config, items):
    """On pytest-xdist workers (whose collection order the scheduler follows), the items of
    :data:`LONG_SHARES` first, longest share first; everything else keeps its order."""
    if not hasattr(config, "workerinput"):
        return
    rank = {share: place for place, share in enumerate(LONG_SHARES)}
    items.sort(key=lambda item: rank.get(_group(item.nodeid), len(LONG_SHARES)))


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """With ``-n`` (pytest-xdist: ``kit.py test -n 2``), hand out the groups of
    :func:`_group` in the workers' collection order: :data:`LONG_SHARES` first, so the short
    files fill the gaps at the end. ``--dist`` other than the default keeps its
    own scheduler."""
    if config.getoption("dist") != "load":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class ByGroup(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return _group(nodeid)

    config.option.loadscopereorder = False  # collection order, not "most tests first"
    return ByGroup(config, log)


#: Seconds of setup, call and teardown per share of :func:`_group` and per xdist worker, summed
#: from the reports as they come in (in the controller on workers).
_SHARE_SECONDS: Counter = Counter()
_WORKER_SECONDS: Counter = Counter()


def pytest_runtest_logreport(report):
    _SHARE_SECONDS[_group(report.nodeid)] += report.duration
    node = getattr(report, "node", None)  # the worker that ran it, on xdist
    if node is not None:
        _WORKER_SECONDS[node.gateway.id] += report.duration


def pytest_terminal_summary(terminalreporter, config):
    """With ``-n``: where the run's time went by share (one worker runs each whole, so the
    longest share bounds the run) and how busy each worker was; what to split or lighten
    when the suite grows slow."""
    if not _WORKER_SECONDS:
        return
    write = terminalreporter.write_line
    terminalreporter.section("seconds per share of the suite (each runs whole on one worker)")
    for share, seconds in _SHARE_SECONDS.most_common(10):
        write(f"{seconds:8.1f} s  {share}")
    busy = ", ".join(f"{w} {s:.0f} s" for w, s in sorted(_WORKER_SECONDS.items()))
    write(f"busy per worker: {busy}")
