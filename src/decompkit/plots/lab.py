"""Gantt charts of the lab's real runs (milliseconds): one run, or two runs side by side."""

from __future__ import annotations

from matplotlib.transforms import offset_copy

from .scheduler import plot_trace_gantt
from .style import PALETTE, InlineFigure

__all__ = ["plot_run", "plot_runs"]

_MARKS = (PALETTE[5], PALETTE[7], PALETTE[3], PALETTE[2])  # vermillion, black, purple, green
#: Rows of the chart each mark's label takes under the last step.
_LANE = 0.6


def _fmt(ms) -> str:
    return f"{ms:.0f}"


def plot_run(run, ax=None, *, title=None, marks=None):
    """Draw a lab run (:class:`decompkit.lab.LabRun`) as a Gantt chart in milliseconds.

    Parameters
    ----------
    run : decompkit.lab.LabRun
        Or any :class:`decompkit.scheduler.ScheduleResult` whose times are milliseconds.
    ax : matplotlib.axes.Axes, optional
    title : str, optional
        Replaces the default title (wall time, what failed, repair rounds).
    marks : Mapping, optional
        ``{label: ms}``: dashed vertical lines, e.g. the critical path and the serial sum,
        labelled in a lane of their own under the last row (never over a bar).

    Returns
    -------
    matplotlib.figure.Figure

    Notes
    -----
    One row per step, one bar per attempt, labelled with the lane (``w0``, ``w1``, ...)
    it ran in: the lowest lane free when the step began, so the number of lanes is the
    largest number of steps that ran at once. Replanning rounds are separated by dotted
    lines, as in :func:`decompkit.plots.scheduler.plot_trace_gantt`, which draws the bars.

    Examples
    --------
    >>> import asyncio
    >>> from decompkit import lab
    >>> box = lab.Toolbox({"search": 1, "fetch_page": 1, "compare": 1})
    >>> plan = asyncio.run(lab.make_plan("goal"))
    >>> fig = plot_run(asyncio.run(lab.compile_plan(plan, box).run()), title="compiled")
    >>> fig.axes[0].get_title(), fig.axes[0].get_xlabel()
    ('compiled', 'time (ms)')
    """
    fig = plot_trace_gantt(run, ax=ax)
    ax = fig.axes[0] if ax is None else ax
    _add_marks(ax, marks)
    if title is None:
        rounds = getattr(run, "rounds", 1)
        failed = sorted(map(str, run.failed))
        extra = []
        if failed:
            extra.append(f"{', '.join(failed)} failed")
        if rounds > 1:
            extra.append(f"{rounds - 1} repair round{'s' if rounds > 2 else ''}")
        title = f"Wall time {_fmt(run.makespan)} ms, at most {run.workers} steps at once"
        if extra:
            title += "\n" + ", ".join(extra)
    ax.set_title(title, fontsize=9)
    ax.set_xlabel("time (ms)")
    ax.set_ylabel("step")
    return fig


def _add_marks(ax, marks):
    """Dashed lines at ``{label: ms}``, labelled in a lane of their own under the last row.

    Each label sits beside its line, on the side of the middle of the chart, so that it
    stays inside the axes; the time axis grows to show every mark.
    """
    marks = dict(marks or {})
    if not marks:
        return
    right = max(ax.get_xlim()[1], 1.04 * max(marks.values()))
    ax.set_xlim(0, right)
    bottom, top = ax.get_ylim()  # rows run downwards: bottom > top
    ax.set_ylim(bottom + _LANE * len(marks), top)
    for i, (label, ms) in enumerate(marks.items()):
        color = _MARKS[i % len(_MARKS)]
        ax.axvline(ms, color=color, linestyle="--", linewidth=1)
        left_half = ms <= right / 2
        shift = offset_copy(ax.transData, fig=ax.figure, x=0 if left_half else -4, units="points")
        ax.text(
            ms,
            bottom + _LANE * (i + 0.5),
            f" {label} {_fmt(ms)} ms",
            color=color,
            fontsize=9,
            va="center",
            ha="left" if left_half else "right",
            transform=shift,
            zorder=3,  # over the other marks' lines, on a white ground
            bbox={"boxstyle": "square,pad=0.15", "facecolor": "white", "edgecolor": "none"},
        )


def plot_runs(serial, concurrent, *, critical_ms=None, serial_ms=None, labels=None):
    """The same plan run two ways, side by side on one time scale.

    Parameters
    ----------
    serial, concurrent : decompkit.lab.LabRun
        E.g. ReWOO's list-order run and the compiled graph's run.
    critical_ms, serial_ms : float, optional
        The critical path and the serial sum of the durations, drawn as dashed lines.
    labels : tuple of two str, optional
        Names of the two runs (default ``("ReWOO, list order", "compiled graph")``).

    Returns
    -------
    matplotlib.figure.Figure
        Two axes sharing the time axis; the title states both wall times.

    Examples
    --------
    >>> import asyncio
    >>> from decompkit import lab
    >>> fast = {"search": 1, "fetch_page": 1, "compare": 1}
    >>> plan = asyncio.run(lab.make_plan("goal"))
    >>> one = asyncio.run(lab.work(plan, lab.Toolbox(fast)))
    >>> two = asyncio.run(lab.compile_plan(plan, lab.Toolbox(fast)).run())
    >>> fig = plot_runs(one, two, critical_ms=3, serial_ms=7)
    >>> len(fig.axes)
    2
    """
    first, second = labels or ("ReWOO, list order", "compiled graph")
    fig = InlineFigure(figsize=(11, 3.8), layout="constrained")
    left, right = fig.subplots(1, 2, sharex=True)
    marks = {}
    if critical_ms is not None:
        marks["critical path"] = critical_ms
    if serial_ms is not None:
        marks["serial sum"] = serial_ms
    plot_run(serial, left, title=f"{first}: {_fmt(serial.makespan)} ms")
    plot_run(concurrent, right, title=f"{second}: {_fmt(concurrent.makespan)} ms")
    end = 1.04 * max(serial.makespan, concurrent.makespan, *marks.values())
    left.set_xlim(0, end)  # the axes share it
    for ax in (left, right):
        legend = ax.get_legend()
        if legend is not None:
            legend.remove()
        _add_marks(ax, marks)
    ratio = serial.makespan / concurrent.makespan if concurrent.makespan else float("inf")
    fig.suptitle(
        f"Same plan, same tools: {second} finishes {ratio:.1f}x sooner "
        f"({_fmt(concurrent.makespan)} ms vs {_fmt(serial.makespan)} ms)",
        fontsize=10,
    )
    right.set_ylabel("")
    return fig
