"""A check line wraps at spaces in a notebook, and is printed the same everywhere.

JupyterLab breaks printed text anywhere (``word-break: break-all``); in a notebook's kernel
:func:`~decompkit.exercises.page.say` also puts a style into the cell's output, once per
cell run, that wraps at spaces instead. The printed line, which ``kit.py check`` and the
grader read, does not change; in strict mode no style is added at all. The browser test
(tests/browser/test_explorers_browser.py) looks at the wrapping itself.
"""

from __future__ import annotations

import types

import pytest

from decompkit.exercises import page
from decompkit.exercises.checks import CheckFailed
from decompkit.exercises.contract import Diagnosis

LINE = "[ok] B4 plan_times: on track  [LECTURE NUMBERS: set STUDENT_ID]"


@pytest.fixture
def kernel(monkeypatch):
    """A stand-in for a notebook's kernel: the shell, and the bundles displayed."""
    shown = []
    shell = types.SimpleNamespace(kernel=object(), execution_count=1)
    monkeypatch.setattr("IPython.get_ipython", lambda: shell)
    monkeypatch.setattr(
        "IPython.display.display", lambda bundle, raw=False: shown.append((bundle, raw))
    )
    monkeypatch.setattr(page, "_styled_runs", set())
    monkeypatch.delenv(page.STRICT_VARIABLE, raising=False)
    monkeypatch.delenv("DECOMPKIT_STUDENT", raising=False)
    return shell, shown


def test_in_a_notebook_the_line_is_printed_and_styled_once_per_cell_run(kernel, capsys):
    shell, shown = kernel
    page.say("B4 plan_times", Diagnosis("ok", "on track"), LINE)
    page.say("B5 order", Diagnosis("ok", "on track"), LINE)
    assert capsys.readouterr().out == f"{LINE}\n{LINE}\n"
    assert shown == [({"text/html": page.WRAP_AT_SPACES}, True)]
    shell.execution_count = 2  # the cell runs again: its new output needs the style again
    page.say("B4 plan_times", Diagnosis("ok", "on track"), LINE)
    assert len(shown) == 2


def test_the_style_wraps_at_spaces_only_in_its_own_output_and_holds_no_digit():
    style = page.WRAP_AT_SPACES
    assert "word-break:normal" in style and ":has(.decompkit-wrap)" in style
    assert 'class="decompkit-wrap"' in style
    # The page test scans every output for answers written as numbers.
    assert not any(ch.isdigit() for ch in style)


def test_in_strict_mode_nothing_but_the_line_or_the_failure(kernel, capsys, monkeypatch):
    _, shown = kernel
    monkeypatch.setenv(page.STRICT_VARIABLE, "1")
    page.say("B4 plan_times", Diagnosis("ok", "on track"), LINE)
    assert capsys.readouterr().out == f"{LINE}\n"
    with pytest.raises(CheckFailed):
        page.say("B4 plan_times", Diagnosis("off", "a hint"), LINE.replace("[ok]", "[x]"))
    assert shown == []


def test_outside_a_kernel_only_the_line(capsys, monkeypatch):
    monkeypatch.setattr("IPython.get_ipython", lambda: None)
    monkeypatch.delenv(page.STRICT_VARIABLE, raising=False)
    monkeypatch.delenv("DECOMPKIT_STUDENT", raising=False)
    page.say("B4 plan_times", Diagnosis("ok", "on track"), LINE)
    assert capsys.readouterr().out == f"{LINE}\n"
