"""Tests for decompkit.plots.dag: figures are built, say their message, and draw the data."""

from __future__ import annotations

import io

import matplotlib.image
import matplotlib.pyplot as plt
import numpy as np
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import to_hex
from matplotlib.figure import Figure
from matplotlib.text import Annotation

from decompkit.dag import CycleError, critical_path, generations, list_schedule
from decompkit.examples import coding_task, migration
from decompkit.plots.dag import plot_dag, plot_gantt
from decompkit.plots.style import PALETTE

CRITICAL, NORMAL = PALETTE[5], PALETTE[0]


def node_boxes(fig):
    """The node labels of a DAG figure (texts with a box, not the arrows)."""
    ax = fig.axes[0]
    return [t for t in ax.texts if not isinstance(t, Annotation)]


def box_colour(text):
    return to_hex(text.get_bbox_patch().get_edgecolor())


def test_plot_dag_example_a():
    a = coding_task()
    before = plt.get_fignums()
    fig = plot_dag(a.graph, a.durations, labels=a.labels)
    assert isinstance(fig, Figure)
    assert plt.get_fignums() == before  # not registered with pyplot
    ax = fig.axes[0]
    assert "10 units of 12" in ax.get_title()
    assert "read_spec → fetch_data → write_code → run_tests → report" in ax.get_title()
    assert ax.get_xlabel() and ax.get_ylabel()
    boxes = {t.get_text().split("\n")[0]: t for t in node_boxes(fig)}
    assert set(boxes) == set(a.labels.values())
    assert "slack 5" in boxes["write the tests"].get_text()
    assert "d = 4, slack 0" in boxes["write the code"].get_text()
    colours = [box_colour(t) for t in node_boxes(fig)]
    assert colours.count(CRITICAL.lower()) == 5 and colours.count(NORMAL.lower()) == 1
    # One arrow per edge, and each node sits in the column of its generation.
    arrows = [t for t in ax.texts if isinstance(t, Annotation)]
    assert len(arrows) == sum(len(p) for p in a.graph.values())
    layer_of = {v: k for k, layer in enumerate(generations(a.graph)) for v in layer}
    for node, label in a.labels.items():
        assert boxes[label].get_position()[0] == layer_of[node]


def test_plot_dag_without_durations_and_with_a_given_path():
    b = migration()
    fig = plot_dag(b.graph)
    assert fig.axes[0].get_title() == "Plan as a DAG: 9 tasks in 6 generations"
    assert all(box_colour(t) == NORMAL.lower() for t in node_boxes(fig))
    fig = plot_dag(b.graph, critical=["F", "S", "P"])
    assert fig.axes[0].get_title() == "Highlighted path: F → S → P"
    colours = [box_colour(t) for t in node_boxes(fig)]
    assert colours.count(CRITICAL.lower()) == 3


def test_plot_dag_accepts_a_critical_path_result_and_draws_on_given_axes():
    b = migration()
    fig = Figure()
    ax = fig.add_subplot()
    graph, durations = b.with_coordination()
    cp = critical_path(graph, durations)
    assert plot_dag(graph, durations, critical=cp, ax=ax, unit=b.unit) is fig
    assert "22 slots of 34" in ax.get_title()


def test_plot_dag_small_graphs():
    assert plot_dag({}).axes[0].get_title() == "Plan as a DAG: 0 tasks in 0 generations"
    fig = plot_dag({"only": []}, {"only": 2.5})
    assert "2.5 units of 2.5" in fig.axes[0].get_title()


def png(fig, **kwargs):
    """The figure saved to PNG, as an RGBA array."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", **kwargs)
    buf.seek(0)
    return matplotlib.image.imread(buf)


def agg(fig):
    """The figure drawn on its Agg canvas, as an RGBA array."""
    fig.canvas.draw()
    return np.array(fig.canvas.buffer_rgba())


def fresh_figure(example, mode):
    """A DAG figure of the example that has never been drawn, and its way of rendering."""
    if mode == "given axes, savefig at 150 dpi":
        # A plain figure without a layout engine: savefig draws it only once, and at a
        # resolution other than the figure's.
        fig = Figure(figsize=(9.5, 4.2))
        plot_dag(example.graph, example.durations, ax=fig.add_subplot(), labels=example.labels)
        return fig, lambda f: png(f, dpi=150)
    fig = plot_dag(example.graph, example.durations, labels=example.labels)
    if mode == "canvas draw":  # as an interactive backend or a widget paints it
        FigureCanvasAgg(fig)
        return fig, agg
    # "savefig", what the inline display of a notebook does. With the constrained layout of
    # a fresh figure, savefig makes a dry draw first, which already puts the boxes in place.
    return fig, png


@pytest.mark.parametrize("make", [coding_task, migration], ids=["A", "B"])
@pytest.mark.parametrize("mode", ["savefig", "canvas draw", "given axes, savefig at 150 dpi"])
def test_plot_dag_first_render_shows_the_arrowheads(make, mode):
    # The arrows are clipped at the task boxes. Clipped at boxes not yet in place, they run
    # from centre to centre and their heads hide under the boxes; a later draw, with the
    # boxes in place, is right. So the first render must equal the second, pixel for pixel.
    # (Exact: redrawing a figure is deterministic here. At a savefig dpi other than the
    # figure's, constrained layout can move the axes by one ulp between draws and change a
    # few antialiased pixels, so the 150 dpi case uses a figure without a layout engine.)
    fig, render = fresh_figure(make(), mode)
    first = render(fig)
    second = render(fig)
    np.testing.assert_array_equal(first, second)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"critical": ["F", "zz"]}, ValueError, r"unknown node 'zz' in critical"),
        ({"critical": "FS"}, ValueError, r"critical must be a CriticalPath or a list of nodes"),
        ({"critical": 3}, ValueError, r"critical must be a CriticalPath or a list of nodes, got 3"),
        ({"durations": {"F": 1}}, ValueError, r"durations has no entry for node"),
    ],
)
def test_plot_dag_errors(kwargs, error, match):
    with pytest.raises(error, match=match):
        plot_dag(migration().graph, **kwargs)


def test_plot_dag_rejects_a_cycle():
    with pytest.raises(CycleError, match=r"'a' -> 'b' -> 'a'"):
        plot_dag({"a": ["b"], "b": ["a"]})


def test_plot_gantt_example_b():
    b = migration()
    graph, durations = b.with_coordination()
    schedule = list_schedule(graph, durations, 3)
    cp = critical_path(graph, durations)
    before = plt.get_fignums()
    fig = plot_gantt(schedule, labels=b.labels, critical=cp, unit=b.unit)
    assert plt.get_fignums() == before
    ax = fig.axes[0]
    assert ax.get_title() == (
        "List schedule on 3 workers: makespan 22 slots (34 slots of work, 52 % busy)"
    )
    assert ax.get_xlabel() == "time (slots)" and ax.get_ylabel() == "worker"
    assert [t.get_text() for t in ax.get_yticklabels()] == ["worker 1", "worker 2", "worker 3"]
    bars = ax.patches
    assert len(bars) == len(graph)
    # Each bar spans its task's start and duration, on its worker's row.
    spans = sorted((round(p.get_x(), 9), round(p.get_width(), 9)) for p in bars)
    expected = sorted((schedule.start[v], durations[v]) for v in graph)
    assert spans == expected
    colours = [to_hex(p.get_facecolor()) for p in bars]
    assert colours.count(CRITICAL.lower()) == len(cp.path)
    assert "patch ETL" in [t.get_text() for t in ax.texts]


def test_plot_gantt_zero_length_task_and_given_axes():
    schedule = list_schedule({"b": ["a"]}, {"a": 0, "b": 2}, 1)
    fig = Figure()
    ax = fig.add_subplot()
    assert plot_gantt(schedule, ax=ax) is fig
    assert len(ax.patches) == 1  # the zero-length task is a tick, not a bar
    assert len(ax.lines) == 2  # the tick and the makespan line
    assert ax.get_title().startswith("List schedule on 1 worker: makespan 2 units")


def test_plot_gantt_empty_schedule():
    fig = plot_gantt(list_schedule({}, {}, 2))
    assert "makespan 0 units" in fig.axes[0].get_title()


@pytest.mark.parametrize(
    ("schedule", "kwargs", "match"),
    [
        ({"a": 1}, {}, r"schedule must be a Schedule from list_schedule, got dict"),
        (None, {}, r"schedule must be a Schedule from list_schedule, got NoneType"),
        ("ok", {"critical": ["zz"]}, r"unknown node 'zz' in critical"),
    ],
)
def test_plot_gantt_errors(schedule, kwargs, match):
    if schedule == "ok":
        schedule = list_schedule({"b": ["a"]}, {"a": 1, "b": 1}, 1)
    with pytest.raises(ValueError, match=match):
        plot_gantt(schedule, **kwargs)
