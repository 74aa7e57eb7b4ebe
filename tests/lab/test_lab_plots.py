"""Gantt charts of the lab's runs (decompkit.plots.lab)."""

import asyncio

import pytest
from matplotlib.figure import Figure

from decompkit.lab.compiler import compile_plan
from decompkit.lab.models import PLANS
from decompkit.lab.replan import run_with_replanning
from decompkit.lab.rewoo import work
from decompkit.lab.schema import TypedPlan
from decompkit.lab.tools import Toolbox
from decompkit.plots.lab import plot_run, plot_runs

FAST = {"search": 2, "fetch_page": 3, "compare": 1}


@pytest.fixture(scope="module")
def runs():
    plan = TypedPlan(goal="g", steps=PLANS["quotes"])
    serial = asyncio.run(work(plan, Toolbox(FAST)))
    concurrent = asyncio.run(compile_plan(plan, Toolbox(FAST)).run())
    box = Toolbox(FAST, failures={"E5": ["junk", "junk"]})
    repaired = asyncio.run(run_with_replanning(plan, box))
    return serial, concurrent, repaired


def test_plot_run_labels_and_rows(runs):
    _, concurrent, _ = runs
    fig = plot_run(concurrent)
    assert isinstance(fig, Figure)
    ax = fig.axes[0]
    assert ax.get_xlabel() == "time (ms)" and ax.get_ylabel() == "step"
    assert ax.get_title() == (
        f"Wall time {concurrent.makespan:.0f} ms, at most {concurrent.workers} steps at once"
    )
    assert [t.get_text() for t in ax.get_yticklabels()][-1] == "E7"
    assert len(ax.patches) == 7  # one bar per attempt


def test_plot_run_of_a_repaired_run_names_the_round(runs):
    _, _, repaired = runs
    ax = plot_run(repaired).axes[0]
    assert ax.get_title().endswith("E5 failed, 1 repair round")
    (top,) = ax.child_axes  # the round's number above its dotted line
    assert [t.get_gid() for t in top.get_xticklabels()] == ["repair round 1"]


def test_marks_are_drawn_and_kept_in_view(runs):
    _, concurrent, _ = runs
    ax = plot_run(concurrent, title="x", marks={"serial sum": 1000}).axes[0]
    assert ax.get_title() == "x"
    assert ax.get_xlim()[1] >= 1000
    assert any(t.get_text() == " serial sum 1000 ms" for t in ax.texts)


def test_plot_runs_side_by_side_on_one_scale(runs):
    serial, concurrent, _ = runs
    fig = plot_runs(serial, concurrent, critical_ms=6, serial_ms=16)
    left, right = fig.axes
    assert left.get_xlim() == right.get_xlim()
    assert left.get_title().startswith("ReWOO, list order: ")
    assert right.get_title().startswith("compiled graph: ")
    ratio = serial.makespan / concurrent.makespan
    assert fig.get_suptitle().startswith(
        f"Same plan, same tools: compiled graph finishes {ratio:.1f}x"
    )
    assert left.get_legend() is None and right.get_legend() is None


def test_plot_runs_custom_labels(runs):
    serial, concurrent, _ = runs
    fig = plot_runs(serial, concurrent, labels=("one", "two"))
    assert fig.axes[0].get_title().startswith("one: ")
