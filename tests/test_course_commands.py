"""A mistake in the arguments of an instructor's command is one line, before heavy imports.

``python -m decompkit.course <command>`` with a mistyped option, a missing argument or a folder
that is no course must fail with exit 2 and one line on stderr that says what is wrong, and
must not have imported nbgrader or matplotlib by then (their imports cost seconds: the
instructor waits for nothing). How long it takes is measured, not asserted: see the CHANGELOG.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

HEAVY = ("nbgrader", "matplotlib", "nbclient", "jupyter_client")

#: Runs the command in a fresh interpreter; prints its status and the heavy modules loaded.
RUN = textwrap.dedent(
    """
    import json, sys
    from decompkit.course.__main__ import main
    try:
        status = main(sys.argv[1:])
    except SystemExit as stop:  # argparse ends this way
        status = stop.code
    heavy = [m for m in {heavy!r} if m in sys.modules]
    print(json.dumps({{"status": status, "heavy": heavy}}))
    """
).format(heavy=HEAVY)

MISTAKES = [
    ("collect", ["--bogus"], "unrecognized arguments: --bogus"),
    ("collect", ["--max-students", "0"], "expected a positive number, got '0'"),
    ("release", ["--forse"], "unrecognized arguments: --forse"),
    ("report", ["--bogus"], "unrecognized arguments: --bogus"),
    ("key", ["--notebook", "chian"], "invalid choice: 'chian'"),
    ("check", [], "the following arguments are required: notebooks"),
    ("check", ["nowhere.ipynb"], "no notebook nowhere.ipynb"),
    ("release", ["--root", "{tmp}"], "is not a course folder"),
    ("collect", ["--root", "{tmp}"], "is not a course folder"),
    ("nosuch", [], "unknown command 'nosuch'"),
]


@pytest.mark.parametrize(("command", "args", "said"), MISTAKES)
def test_a_mistake_is_one_line_before_heavy_imports(tmp_path, command, args, said):
    args = [a.format(tmp=tmp_path) for a in args]
    done = subprocess.run(
        [sys.executable, "-c", RUN, command, *args],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr  # no exception escaped
    result = json.loads(done.stdout.splitlines()[-1])
    assert result["status"] == 2
    assert len(done.stdout.splitlines()) == 1  # nothing but the result above
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and said in lines[0], lines
    assert result["heavy"] == []


def test_the_main_help_lists_every_command(capsys):
    from decompkit.course.__main__ import COMMANDS, main

    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    assert all(f"\n    {name} " in out for name in COMMANDS)
