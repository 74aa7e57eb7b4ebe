"""Gantt chart of a scheduler trace (lecture section 5): attempts, failures, cancels, blocks."""

from __future__ import annotations

from matplotlib.artist import allow_rasterization
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.text import Text

from ..dag import topological_order
from .style import GREY, PALETTE, new_axes

__all__ = ["plot_trace_gantt"]

# One look per way an attempt can end; the legend lists only those that occur.
_STYLE = {
    "accepted": {"facecolor": PALETTE[0], "label": "accepted"},
    "wrong": {"facecolor": PALETTE[3], "hatch": "..", "label": "accepted, but wrong"},
    "rejected": {"facecolor": PALETTE[1], "hatch": "\\\\", "label": "rejected, retried"},
    "failed": {"facecolor": PALETTE[5], "hatch": "xx", "label": "failed (report)"},
    "cancelled": {"facecolor": "white", "edgecolor": GREY, "hatch": "///", "label": "cancelled"},
}
_BY_OUTCOME = {"pass": "accepted", "wrong": "wrong", "reject": "rejected"}
#: Characters of a line of the title: a 640-pixel figure's axes are about 370 pixels wide.
_TITLE_WIDTH = 40


class _WorkerLabel(Text):
    """A bar's worker ("w0"), drawn only where it fits within the bar's width at the size
    the figure is drawn: on a narrower bar it ran over the hatch and the neighbours. Drawn,
    not decided once, as an explorer's figure changes width with the notebook."""

    def __init__(self, bar, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.bar = bar

    @allow_rasterization
    def draw(self, renderer):
        room = self.bar.get_window_extent(renderer).width
        if self.get_window_extent(renderer).width <= room - 2:
            super().draw(renderer)


def _bars(events) -> list[list]:
    """``[node, worker, start, end, style]`` for every attempt in the trace, in order."""
    started = {}
    bars = []
    last = {}  # node -> its latest bar
    for e in events:
        if e.kind == "attempt":
            started[e.node] = e.time
        elif e.kind in ("verdict", "cancel"):
            outcome = e.detail.split(":", 1)[0]
            style = "cancelled" if e.kind == "cancel" else _BY_OUTCOME.get(outcome, "failed")
            last[e.node] = [e.node, e.worker, started.pop(e.node), e.time, style]
            bars.append(last[e.node])
        elif e.kind == "fail":
            last[e.node][4] = "failed"  # a rejection that ends the node is its failure
    return bars


def plot_trace_gantt(result, ax=None):
    """Draw a scheduler trace as a Gantt chart: one row per node, one bar per attempt.

    Parameters
    ----------
    result : decompkit.scheduler.ScheduleResult
        What :func:`decompkit.scheduler.schedule` or
        :func:`~decompkit.scheduler.run_with_repair` returned.
    ax : matplotlib.axes.Axes, optional
        Axes to draw on; a new figure is made when omitted.

    Returns
    -------
    matplotlib.figure.Figure

    Notes
    -----
    Each bar is one attempt, labelled with its worker where the label fits within the bar
    at the size drawn; its colour says how the attempt ended (accepted, accepted but wrong,
    rejected and retried, failed, cancelled). A blocked node gets a grey cross at the time it
    was blocked. Dotted lines mark the start of each repair round, numbered above the chart
    (the legend's "repair round k"). Rows follow a topological order, top to bottom. The
    title names each failed task once, with its failed copies counted (a copy ``x'`` is a
    repair's retry of ``x``).

    Examples
    --------
    >>> from decompkit.scheduler import schedule, scripted
    >>> g = {"b": ["a"], "c": ["a"], "d": ["b", "c"]}
    >>> d = {"a": 1, "b": 3, "c": 2, "d": 1}
    >>> fig = plot_trace_gantt(schedule(g, d, workers=2, step=scripted({"c": ["fail"]})))
    >>> print(fig.axes[0].get_title())
    2 workers, makespan 3
    c failed, 1 blocked, 1 cancelled
    >>> [t.get_text() for t in fig.axes[0].get_yticklabels()]
    ['a', 'b', 'c', 'd']
    """
    fig, ax = new_axes(ax)
    events = result.events
    order = topological_order(result.graph)
    rows = [str(node) for node in order]
    y = {node: i for i, node in enumerate(order)}
    used = []
    for node, worker, start, end, style in _bars(events):
        kw = dict(_STYLE[style])
        kw.pop("label")
        kw.setdefault("edgecolor", "white")
        (bar,) = ax.barh(y[node], end - start, left=start, height=0.6, **kw)
        if end > start:
            label = _WorkerLabel(
                bar,
                (start + end) / 2,
                y[node],
                f"w{worker}",
                ha="center",
                va="center",
                fontsize=9,
                color="black" if style in ("cancelled", "wrong") else "white",
            )
            ax._add_text(label)  # what ax.text does, for a Text of our class
        if style not in used:
            used.append(style)
    blocks = [e for e in events if e.kind == "block"]
    for e in blocks:
        ax.plot(
            e.time, y[e.node], marker="x", color=GREY, markersize=9, linestyle="none", clip_on=False
        )
    repairs = _repair_starts(events)
    for start in repairs.values():
        ax.axvline(start, color=GREY, linestyle=":", linewidth=1)
    if repairs:
        _number_rounds(ax, repairs)

    handles = [Patch(**_STYLE[s]) for s in _STYLE if s in used]
    if blocks:
        handles.append(
            ax.plot([], [], marker="x", color=GREY, linestyle="none", label="blocked")[0]
        )
    if repairs:
        handles.append(
            Line2D([], [], color=GREY, linestyle=":", linewidth=1, label="repair round k")
        )
    if handles:
        ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=9)
    ax.set_yticks(range(len(rows)), rows)
    ax.set_ylim(len(rows) - 0.4, -0.6)
    ax.set_xlim(0, max(result.makespan, 1e-9) * 1.04)
    ax.set(xlabel="virtual time", ylabel="node", title=_title(result))
    return fig


def _repair_starts(events) -> dict:
    """``{round: time of its first event}`` of every repair round (round 0 is the first call)."""
    starts = {}
    for e in events:
        if e.round > 0:
            starts.setdefault(e.round, e.time)
    return starts


def _number_rounds(ax, repairs):
    """Each repair round's number above the frame, at its dotted line, as a tick of a top axis.

    A number, not "repair round k": round starts lie as little as a tenth of the time axis
    apart (students' runs), 40 pixels of a 400-pixel chart, where the words ran into each
    other; the legend says what the numbers count. As ticks of a secondary axis they push
    the title up, whoever sets it later. Each label's gid names its round (an SVG's id).
    """
    top = ax.secondary_xaxis("top")
    top.set_xticks(list(repairs.values()), [str(rnd) for rnd in repairs])
    top.tick_params(color=GREY, length=4, pad=1)
    top.spines["top"].set_visible(False)  # the axes' own frame is there
    for rnd, label in zip(repairs, top.get_xticklabels(), strict=True):
        label.set_gid(f"repair round {rnd}")


def _failed(result) -> list:
    """Each failed task once, its failed copies counted: ``["run_tests and 3 copies"]``.

    A copy ``x'`` is a repair's retry of ``x`` (a copy of a copy counts as a copy of ``x``);
    naming every copy ran the title past both sides of the chart.
    """
    origin = {}
    for repair in getattr(result, "repairs", ()):
        # A lab run's repairs (PlanRepair) write new steps, not copies.
        for original, copy in getattr(repair, "copies", {}).items():
            origin[copy] = origin.get(original, original)
    by_task = {}
    for node in result.failed:
        by_task.setdefault(origin.get(node, node), []).append(node)
    named = []
    for task, nodes in by_task.items():
        copies = sum(1 for node in nodes if node in origin)
        if copies == 0:
            named.append(str(task))
        elif copies < len(nodes):
            named.append(f"{task} and {'its copy' if copies == 1 else f'{copies} copies'}")
        else:
            named.append(str(nodes[0]) if copies == 1 else f"{copies} copies of {task}")
    return sorted(named)


def _title(result) -> str:
    """Two lines where they fit 40 characters (a 640-pixel figure's axes): the run, with its
    repair rounds, then what failed, was blocked or cancelled; "Trace on" and the name of
    every copy made the lines of students' runs wider than the chart, a third line left
    the rows too little height."""
    repairs = getattr(result, "rounds", 1) - 1
    run = f"{result.workers} workers, makespan {result.makespan:g}"
    if repairs:
        run += f", {repairs} repair round{'s' if repairs > 1 else ''}"
    parts = []
    failed = _failed(result)
    if failed:
        parts.append(f"{', '.join(failed)} failed")
    if result.blocked:
        parts.append(f"{len(result.blocked)} blocked")
    if result.cancelled:
        parts.append(f"{len(result.cancelled)} cancelled")
    lines = [run, parts[0] if parts else "every node done"]
    for part in parts[1:]:  # a line breaks after a comma, where it would grow too wide
        if len(lines[-1]) + 2 + len(part) <= _TITLE_WIDTH:
            lines[-1] += f", {part}"
        else:
            lines[-1] += ","
            lines.append(part)
    return "\n".join(lines)
