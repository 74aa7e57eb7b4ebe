"""The lab's Gantt charts: mark labels (critical path, serial sum) never sit on a bar."""

import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg

from decompkit import examples, scheduler
from decompkit.plots.lab import plot_run, plot_runs


@pytest.fixture(scope="module")
def run():
    """Example B on three workers, its durations read as milliseconds (a lab run's unit)."""
    b = examples.migration()
    return scheduler.schedule(b.graph, {k: 10 * v for k, v in b.durations.items()}, workers=3)


def _drawn(fig):
    FigureCanvasAgg(fig).draw()  # the plots make figures without pyplot or a canvas
    return fig


def _labels_and_bars(ax):
    renderer = ax.figure.canvas.get_renderer()
    labels = [t for t in ax.texts if t.get_text().endswith(" ms")]
    bars = [p.get_window_extent(renderer) for p in ax.patches]
    return [(t, t.get_window_extent(renderer)) for t in labels], bars, renderer


@pytest.mark.parametrize("marks", [{"critical path": 180, "serial sum": 300}, {"end": 175}])
def test_mark_labels_stay_off_the_bars_and_inside(run, marks):
    fig = _drawn(plot_run(run, marks=marks))
    ax = fig.axes[0]
    labels, bars, renderer = _labels_and_bars(ax)
    assert len(labels) == len(marks) and bars
    frame = ax.get_window_extent(renderer)
    for text, box in labels:
        assert text.get_rotation() == 0 and text.get_fontsize() >= 9
        assert not any(box.overlaps(bar) for bar in bars), text.get_text()
        assert frame.x0 <= box.x0 and box.x1 <= frame.x1, text.get_text()
    # Every mark is in view and its line spans the chart.
    assert ax.get_xlim()[1] >= max(marks.values())


def test_both_charts_of_two_runs_keep_their_labels_off_the_bars(run):
    fig = _drawn(plot_runs(run, run, critical_ms=180, serial_ms=300))
    for ax in fig.axes:
        labels, bars, _ = _labels_and_bars(ax)
        assert len(labels) == 2
        assert not any(box.overlaps(bar) for _, box in labels for bar in bars)


def test_the_old_rotated_labels_would_have_crossed_a_bar(run):
    """The check above can fail: a label at the foot of its line, turned upright, as before."""
    fig = plot_run(run)
    ax = fig.axes[0]
    ax.text(180, ax.get_ylim()[0], " critical path 180 ms", rotation=90, va="bottom")
    _drawn(fig)
    labels, bars, _ = _labels_and_bars(ax)
    assert any(box.overlaps(bar) for _, box in labels for bar in bars)
