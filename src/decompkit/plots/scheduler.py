"""Gantt chart of a scheduler trace (lecture section 5): attempts, failures, cancels, blocks."""

from __future__ import annotations

from matplotlib.lines import Line2D
from matplotlib.patches import Patch

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
    Each bar is one attempt, labelled with its worker; its colour says how the attempt
    ended (accepted, accepted but wrong, rejected and retried, failed, cancelled). A blocked
    node gets a grey cross at the time it was blocked. Dotted lines mark the start of each
    repair round, numbered above the chart (the legend's "repair round k"). Rows follow a
    topological order, top to bottom.

    Examples
    --------
    >>> from decompkit.scheduler import schedule, scripted
    >>> g = {"b": ["a"], "c": ["a"], "d": ["b", "c"]}
    >>> d = {"a": 1, "b": 3, "c": 2, "d": 1}
    >>> fig = plot_trace_gantt(schedule(g, d, workers=2, step=scripted({"c": ["fail"]})))
    >>> print(fig.axes[0].get_title())
    Trace on 2 workers, makespan 3
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
        ax.barh(y[node], end - start, left=start, height=0.6, **kw)
        if end > start:
            ax.text(
                (start + end) / 2,
                y[node],
                f"w{worker}",
                ha="center",
                va="center",
                fontsize=9,
                color="black" if style in ("cancelled", "wrong") else "white",
            )
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


def _title(result) -> str:
    failed = sorted(map(str, result.failed))
    parts = []
    if failed:
        parts.append(f"{', '.join(failed)} failed")
    if result.blocked:
        parts.append(f"{len(result.blocked)} blocked")
    if result.cancelled:
        parts.append(f"{len(result.cancelled)} cancelled")
    repairs = getattr(result, "rounds", 1) - 1
    if repairs:
        parts.append(f"{repairs} repair round{'s' if repairs > 1 else ''}")
    summary = ", ".join(parts) if parts else "every node done"
    return f"Trace on {result.workers} workers, makespan {result.makespan:g}\n{summary}"
