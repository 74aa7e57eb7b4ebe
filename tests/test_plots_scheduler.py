"""The Gantt chart of a scheduler trace draws the trace's attempts and leaves pyplot alone."""

import matplotlib.pyplot as plt
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import to_hex
from matplotlib.figure import Figure
from text_extents import painted_texts

from decompkit import scheduler as sc
from decompkit.examples import coding_task
from decompkit.plots.scheduler import plot_trace_gantt
from decompkit.plots.style import GREY, PALETTE

_EXAMPLE = coding_task()
A, A_TIME = _EXAMPLE.graph, _EXAMPLE.durations


def bars(fig):
    """(row label, left, width, face colour) of every bar, top row first."""
    ax = fig.axes[0]
    labels = [t.get_text() for t in ax.get_yticklabels()]
    return [
        (
            labels[round(p.get_y() + p.get_height() / 2)],
            p.get_x(),
            p.get_width(),
            to_hex(p.get_facecolor()),
        )
        for p in ax.patches
    ]


def test_returns_a_figure_without_touching_pyplot():
    before = plt.get_fignums()
    fig = plot_trace_gantt(sc.schedule(A, A_TIME, workers=2))
    assert isinstance(fig, Figure)
    assert plt.get_fignums() == before
    ax = fig.axes[0]
    assert ax.get_xlabel() == "virtual time" and ax.get_ylabel() == "node"
    assert ax.get_title() == "2 workers, makespan 10\nevery node done"


def test_bars_are_the_attempts_of_the_no_failure_trace():
    fig = plot_trace_gantt(sc.schedule(A, A_TIME, workers=2))
    blue = PALETTE[0].lower()
    assert sorted(bars(fig)) == sorted(
        [
            ("read_spec", 0, 1, blue),
            ("fetch_data", 1, 3, blue),
            ("write_tests", 1, 2, blue),
            ("write_code", 4, 4, blue),
            ("run_tests", 8, 1, blue),
            ("report", 9, 1, blue),
        ]
    )
    texts = {t.get_text() for t in fig.axes[0].texts}
    assert texts == {"w0", "w1"}


def test_failure_cancel_and_block_are_marked():
    result = sc.schedule(A, A_TIME, workers=2, step=sc.scripted({"write_tests": ["fail"]}))
    fig = plot_trace_gantt(result)
    assert sorted(bars(fig)) == sorted(
        [
            ("read_spec", 0, 1, PALETTE[0].lower()),
            ("fetch_data", 1, 2, "#ffffff"),  # cancelled at 3
            ("write_tests", 1, 2, PALETTE[5].lower()),
        ]
    )
    ax = fig.axes[0]
    crosses = [line for line in ax.lines if line.get_marker() == "x" and len(line.get_xdata())]
    assert sorted((float(c.get_xdata()[0]), float(c.get_ydata()[0])) for c in crosses) == [
        (3, 4),
        (3, 5),
    ]
    assert all(to_hex(c.get_color()) == GREY.lower() for c in crosses)
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend == ["accepted", "failed (report)", "cancelled", "blocked"]
    assert ax.get_title() == "2 workers, makespan 3\nwrite_tests failed, 2 blocked,\n1 cancelled"


def test_retries_and_a_repair_round():
    step = sc.scripted({"write_code": ["reject", "pass"], "run_tests": ["fail"]}, kappa=2)
    result = sc.run_with_repair(A, A_TIME, workers=2, step=step, faulty={"run_tests": "write_code"})
    fig = plot_trace_gantt(result)
    found = bars(fig)
    assert ("write_code", 4, 4, PALETTE[1].lower()) in found  # rejected, retried
    assert ("write_code", 8, 4, PALETTE[0].lower()) in found
    assert ("run_tests", 12, 1, PALETTE[5].lower()) in found
    assert ("write_code'", 13, 4, PALETTE[0].lower()) in found
    ax = fig.axes[0]
    assert [line.get_xdata()[0] for line in ax.lines if line.get_linestyle() == ":"] == [13]
    (top,) = ax.child_axes  # the round's number above its line
    assert list(top.get_xticks()) == [13]
    assert [(t.get_text(), t.get_gid()) for t in top.get_xticklabels()] == [("1", "repair round 1")]
    assert "repair round k" in [t.get_text() for t in ax.get_legend().get_texts()]
    assert ax.get_title() == "2 workers, makespan 19, 1 repair round\nrun_tests failed"


def test_a_rejection_that_ends_the_node_is_drawn_as_a_failure():
    step = sc.scripted({"x": ["reject", "reject"], "y": ["wrong"]}, kappa=2)
    fig = plot_trace_gantt(sc.schedule({"x": [], "y": []}, {"x": 1, "y": 1}, workers=2, step=step))
    assert sorted(bars(fig)) == [
        ("x", 0, 1, PALETTE[1].lower()),
        ("x", 1, 1, PALETTE[5].lower()),
        ("y", 0, 1, PALETTE[3].lower()),
    ]


def test_draws_on_given_axes():
    fig = Figure()
    ax = fig.add_subplot()
    assert plot_trace_gantt(sc.schedule(A, A_TIME, workers=1), ax=ax) is fig
    assert len(ax.patches) == 6


def test_the_title_names_a_failed_task_once_and_counts_its_failed_copies():
    """A copy x' is the repair's retry of x; naming each copy ran the title past the chart."""
    step = sc.scripted({"run_tests": ["fail"], "run_tests'": ["fail"], "run_tests''": ["fail"]})
    result = sc.run_with_repair(A, A_TIME, workers=2, step=step, kappa_plan=3)
    assert sorted(result.failed) == ["run_tests", "run_tests'", "run_tests''"]
    title = plot_trace_gantt(result).axes[0].get_title()
    assert title == "2 workers, makespan 13, 3 repair rounds\nrun_tests and 2 copies failed"
    step = sc.scripted({"run_tests": ["fail"], "run_tests'": ["fail"]})
    result = sc.run_with_repair(A, A_TIME, workers=2, step=step, kappa_plan=3)
    assert sorted(result.failed) == ["run_tests", "run_tests'"]
    title = plot_trace_gantt(result).axes[0].get_title()
    assert title.endswith("\nrun_tests and its copy failed")


def _drawn_workers(fig, width) -> list:
    """The x of each worker label a draw of ``fig`` at ``width`` inches paints, sorted."""
    fig.set_size_inches(width, 4)
    drawn = [text for text, _ in painted_texts(fig.canvas.draw)]
    return sorted(t.get_position()[0] for t in drawn if t in fig.axes[0].texts)


def test_a_worker_label_is_drawn_only_where_it_fits_its_bar():
    """ "w0" is 19 pixels wide: at 400 pixels a time unit is 17, and only the bars of 2 units
    and more (write_tests, fetch_data, write_code) show their worker; at 640 all do."""
    fig = plot_trace_gantt(sc.schedule(A, A_TIME, workers=2))
    FigureCanvasAgg(fig)
    assert _drawn_workers(fig, 6.4) == [0.5, 2.0, 2.5, 6.0, 8.5, 9.5]
    assert _drawn_workers(fig, 4.0) == [2.0, 2.5, 6.0]
    assert _drawn_workers(fig, 6.4) == [0.5, 2.0, 2.5, 6.0, 8.5, 9.5]
