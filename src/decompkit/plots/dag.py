"""Figures for the plan DAG: the graph drawn by Kahn layer, and the Gantt chart of a schedule.

Both take plain data or results from :mod:`decompkit.dag`, draw on ``ax=None`` (a fresh
figure when absent) and return the Figure.
"""

from __future__ import annotations

import functools

import numpy as np
from matplotlib.font_manager import FontProperties
from matplotlib.patches import Rectangle
from matplotlib.path import Path
from matplotlib.text import Annotation
from matplotlib.textpath import text_to_path

from ..dag import CriticalPath, Schedule, critical_path, generations, predecessors_map
from .style import GREY, PALETTE, new_axes

__all__ = ["plot_dag", "plot_gantt"]

_CRITICAL = PALETTE[5]  # vermillion
_NORMAL = PALETTE[0]  # blue
#: How a critical task and another one look, as box outline, arrow and bar. Colour is never
#: the only cue: critical boxes and arrows are thick and solid, the others thin and dashed
#: or grey, and critical bars are hatched.
CRITICAL_BOX = {"edgecolor": _CRITICAL, "linewidth": 2.6, "linestyle": "-"}
NORMAL_BOX = {"edgecolor": _NORMAL, "linewidth": 1.2, "linestyle": "--"}
CRITICAL_ARROW = {"color": _CRITICAL, "linewidth": 2.4}
NORMAL_ARROW = {"color": GREY, "linewidth": 1.0}
CRITICAL_BAR = {"color": _CRITICAL, "hatch": "//"}
NORMAL_BAR = {"color": _NORMAL, "hatch": None}


def _critical_nodes(critical, nodes) -> list:
    """The highlighted path as a node list, from a CriticalPath or an iterable of nodes."""
    if critical is None:
        return []
    if isinstance(critical, CriticalPath):
        return list(critical.path)
    if isinstance(critical, (str, bytes)):
        raise ValueError(f"critical must be a CriticalPath or a list of nodes, got {critical!r}")
    try:
        path = list(critical)
    except TypeError:
        raise ValueError(
            f"critical must be a CriticalPath or a list of nodes, got {critical!r}"
        ) from None
    for node in path:
        if node not in nodes:
            raise ValueError(f"unknown node {node!r} in critical")
    return path


def _fmt(x) -> str:
    return f"{x:g}"


def _crossings(outline, p, q):
    """Where the line ``p + s (q - p)`` crosses a closed outline, as values of ``s``.

    ``outline`` is a Path in display coordinates made of straight pieces and quadratic
    Bezier curves (the rounded box of a task); each piece gives its crossings exactly.
    """
    d = q - p
    normal = np.array([-d[1], d[0]])
    norm2 = float(d @ d) or 1.0
    found = []

    def along(point):
        return float((point - p) @ d) / norm2

    start = pen = None
    for vertices, code in outline.iter_segments(simplify=False, curves=True):
        points = vertices.reshape(-1, 2)
        if code == Path.MOVETO:
            start = pen = points[-1]
            continue
        if code == Path.CLOSEPOLY:
            points = start[None, :]
        if code in (Path.LINETO, Path.CLOSEPOLY):
            a, b = float(normal @ (pen - p)), float(normal @ (points[-1] - p))
            if a != b and min(a, b) <= 0 <= max(a, b):
                found.append(along(pen + (points[-1] - pen) * (a / (a - b))))
        elif code == Path.CURVE3:
            p0, p1, p2 = pen, points[0], points[1]
            # normal . (B(t) - p) = 0 with B(t) = (1-t)^2 p0 + 2 (1-t) t p1 + t^2 p2
            a = float(normal @ (p0 - 2 * p1 + p2))
            b = float(2 * normal @ (p1 - p0))
            c = float(normal @ (p0 - p))
            if abs(a) > 1e-12:
                disc = b * b - 4 * a * c
                roots = [] if disc < 0 else [(-b + sign * disc**0.5) / (2 * a) for sign in (1, -1)]
            else:
                roots = [-c / b] if b else []
            for t in roots:
                if -1e-9 <= t <= 1 + 1e-9:
                    found.append(along((1 - t) ** 2 * p0 + 2 * (1 - t) * t * p1 + t**2 * p2))
        pen = points[-1]
    return found


class _Arrow(Annotation):
    """An arrow from one task box to another, from the outline of one to that of the other.

    A text sizes and places its box only while the text itself is drawn, and the arrows
    are drawn before the boxes (under them). So each arrow places its two boxes first, with
    the renderer of the current draw, and then ends itself where the line between the two
    centres crosses their outlines (matplotlib's own clipping at a patch searches the
    crossing by bisection and costs milliseconds per arrow). Placing them at draw time, not
    once in advance, keeps them right after a layout pass or at another savefig resolution.
    """

    def __init__(self, tail, head, *, gap=1.0, **arrowprops):
        self._ends = (tail, head)
        self._gap = gap  # points left free between the arrow and each box
        super().__init__(
            "",
            xy=head.get_position(),
            xytext=tail.get_position(),
            arrowprops=arrowprops,
            zorder=1,
        )

    def update_positions(self, renderer):
        super().update_positions(renderer)
        p, q = (box.get_transform().transform(box.get_position()) for box in self._ends)
        tail, head = (box.get_bbox_patch() for box in self._ends)
        outlines = [b.get_transform().transform_path(b.get_path()) for b in (tail, head)]
        leaving = [s for s in _crossings(outlines[0], p, q) if s >= 0]
        entering = [s for s in _crossings(outlines[1], p, q) if s <= 1]
        start = p + (q - p) * (max(leaving) if leaving else 0.0)
        end = p + (q - p) * (min(entering) if entering else 1.0)
        length = float(np.hypot(*(end - start)))
        gap = min(renderer.points_to_pixels(self._gap), length / 3)
        if length > 0:  # matplotlib's shrinkA/shrinkB would search by bisection too
            unit = (end - start) / length
            start, end = start + gap * unit, end - gap * unit
        self.arrow_patch.set_positions(start, end)

    def draw(self, renderer):
        for box in self._ends:
            box.update_bbox_position_size(renderer)
        super().draw(renderer)


def plot_dag(graph, durations=None, critical=None, ax=None, *, labels=None, unit="units"):
    """Draw a plan DAG layer by layer, highlighting the critical path and annotating slack.

    Parameters
    ----------
    graph : Mapping
        ``{node: iterable of predecessors}``.
    durations : Mapping, optional
        ``{node: duration}``. When given, each node shows its duration and slack, and the
        critical path is computed and highlighted unless ``critical`` says otherwise.
    critical : CriticalPath or iterable of nodes, optional
        The path to highlight (default: the critical path when ``durations`` is given).
    ax : matplotlib.axes.Axes, optional
        Axes to draw on; a new figure is made when absent.
    labels : Mapping, optional
        ``{node: text}`` shown instead of ``str(node)``.
    unit : str, optional
        Unit of the durations, for the title.

    Returns
    -------
    matplotlib.figure.Figure

    Raises
    ------
    ValueError
        If ``critical`` names a node outside the graph, or the graph or durations are
        invalid (see :func:`decompkit.dag.critical_path`).
    CycleError
        If the graph has a cycle.

    Notes
    -----
    Column ``k`` holds generation ``k`` (:func:`decompkit.dag.generations`): every arrow
    points to the right, and the nodes of one column may run at the same time.

    Examples
    --------
    >>> from decompkit.examples import coding_task
    >>> a = coding_task()
    >>> fig = plot_dag(a.graph, a.durations, labels=a.labels)
    >>> for part in fig.axes[0].get_title().split(": "):
    ...     print(part)
    Critical path, 10 units of 12 in total
    read_spec → fetch_data → write_code → run_tests → report
    """
    layers = generations(graph)
    preds = predecessors_map(graph)
    cp = critical_path(graph, durations) if durations is not None else None
    if critical is None and cp is not None:
        critical = cp
    path = _critical_nodes(critical, preds)
    on_path = set(path)
    path_edges = set(zip(path, path[1:], strict=False))
    labels = labels or {}

    pos = {}
    for x, layer in enumerate(layers):
        for i, node in enumerate(layer):
            pos[node] = (x, (len(layer) - 1) / 2 - i)

    fig, ax = new_axes(ax, figsize=(max(6.4, 1.9 * len(layers)), 4.2))
    boxes = {}
    for node, (x, y) in pos.items():
        text = str(labels.get(node, node))
        if cp is not None:
            text += f"\nd = {_fmt(durations[node])}, slack {_fmt(cp.slack[node])}"
        boxes[node] = ax.text(
            x,
            y,
            text,
            ha="center",
            va="center",
            fontsize=9,
            zorder=2,
            bbox={"boxstyle": "round,pad=0.35", "facecolor": "white"},
        )
        boxes[node].get_bbox_patch().set(**(CRITICAL_BOX if node in on_path else NORMAL_BOX))
    for v, ps in preds.items():
        for u in ps:
            look = CRITICAL_ARROW if (u, v) in path_edges else NORMAL_ARROW
            arrow = _Arrow(
                boxes[u],
                boxes[v],
                arrowstyle="-|>",
                color=look["color"],
                lw=look["linewidth"],
                shrinkA=0,
                shrinkB=0,
            )
            ax.add_artist(arrow)
    height = max((len(layer) for layer in layers), default=1)
    ax.set_xlim(-0.6, max(len(layers) - 0.4, 0.6))
    ax.set_ylim(-height / 2 - 0.1, height / 2 + 0.1)
    ax.set_xticks(range(len(layers)))
    ax.set_yticks([])
    ax.set_xlabel("generation (Kahn layer): arrows point from a task to one that waits for it")
    ax.set_ylabel("tasks that may run together")
    for side in ("top", "right", "left"):
        ax.spines[side].set_visible(False)
    if cp is not None:
        title = (
            f"Critical path, {_fmt(cp.makespan)} {unit} of {_fmt(cp.serial_time)} in total: "
            + " → ".join(str(v) for v in cp.path)
        )
    elif path:
        title = "Highlighted path: " + " → ".join(str(v) for v in path)
    else:
        title = f"Plan as a DAG: {len(pos)} tasks in {len(layers)} generations"
    ax.set_title(title, fontsize=10)
    return fig


def plot_gantt(schedule, ax=None, *, labels=None, critical=None, unit="units"):
    """Gantt chart of a list schedule: one row per worker, one bar per task.

    Parameters
    ----------
    schedule : Schedule
        Result of :func:`decompkit.dag.list_schedule`.
    ax : matplotlib.axes.Axes, optional
        Axes to draw on; a new figure is made when absent.
    labels : Mapping, optional
        ``{node: text}`` written on the bars instead of ``str(node)``.
    critical : CriticalPath or iterable of nodes, optional
        Tasks to colour as critical.
    unit : str, optional
        Time unit for the axis label and title.

    Returns
    -------
    matplotlib.figure.Figure

    Raises
    ------
    ValueError
        If ``schedule`` is not a :class:`~decompkit.dag.Schedule`, or ``critical`` names a
        task the schedule does not contain.

    Notes
    -----
    The grey line marks the makespan; gaps in a row are idle time, which a list schedule
    only allows when no ready task could start (dependencies or a held resource).

    Examples
    --------
    >>> from decompkit.dag import list_schedule
    >>> from decompkit.examples import migration
    >>> b = migration()
    >>> fig = plot_gantt(list_schedule(b.graph, b.durations, 3), unit=b.unit)
    >>> fig.axes[0].get_title()
    'List schedule on 3 workers: makespan 18 slots (30 slots of work, 56 % busy)'
    """
    if not isinstance(schedule, Schedule):
        raise ValueError(
            f"schedule must be a Schedule from list_schedule, got {type(schedule).__name__}"
        )
    on_path = set(_critical_nodes(critical, schedule.start))
    fig, ax = new_axes(ax, figsize=(7.5, 1.2 + 0.6 * schedule.workers))
    span = max(schedule.makespan, 1) * 1.02
    for node in schedule.start:
        task = task_artists(ax)
        place_task(task, schedule, node, on_path, labels, span)
        for artist in task:  # a bar or a tick, and the label if it fits
            if not artist.get_visible():
                artist.remove()
    ax.axvline(schedule.makespan, color=GREY, linestyle="--", lw=1)
    gantt_frame(ax, schedule, unit)
    ax.set_xlim(0, span)
    ax.set_title(gantt_title(schedule, unit), fontsize=10)
    return fig


def task_artists(ax):
    """``(bar, label, tick)`` of one task on ``ax``, to be placed by :func:`place_task`."""
    bar = Rectangle((0, 0), 0, 0.6, edgecolor="white")
    ax.add_patch(bar)
    label = ax.text(
        0,
        0,
        "",
        ha="center",
        va="center",
        color="white",
        fontsize=9,
        fontweight="bold",
        bbox={"boxstyle": "square,pad=0.1", "ec": "none"},
    )
    (tick,) = ax.plot([], [], lw=2)
    return bar, label, tick


def place_task(task, schedule, node, on_path, labels, span):
    """Place and style one task's bar, label and tick; hide what it does not show.

    A task of length 0 is a tick, so it is not lost. The bar's label is the task's long
    label if it fits the bar, else the node itself, else nothing (widths measured in points,
    the same at any resolution). ``span`` is the time the axes' width stands for.
    """
    bar, label, tick = task
    start, row = schedule.start[node], schedule.worker[node]
    width = schedule.finish[node] - start
    look = CRITICAL_BAR if node in on_path else NORMAL_BAR
    bar.set_bounds(start, row - 0.3, width, 0.6)
    bar.set_facecolor(look["color"])
    bar.set_hatch(look["hatch"])
    bar.set_visible(width > 0)
    room = axes_points(bar.axes) * width / span - LABEL_MARGIN
    names = [str((labels or {}).get(node, node)), str(node)]
    fits = (name for name in names if label_width(name) <= room)
    text = next(fits, None) if width > 0 else None
    label.set_text(text or "")
    label.set_position((start + width / 2, row))
    label.get_bbox_patch().set_facecolor(look["color"])
    label.set_visible(text is not None)
    tick.set_data([start, start], [row - 0.3, row + 0.3])
    tick.set_color(look["color"])
    tick.set_visible(width == 0)


def gantt_frame(ax, schedule, unit):
    """One row per worker, the first at the top, and the axis labels."""
    ax.set_yticks(range(schedule.workers), [f"worker {w + 1}" for w in range(schedule.workers)])
    ax.set_ylim(schedule.workers - 0.5, -0.5)
    ax.set_xlabel(f"time ({unit})")
    ax.set_ylabel("worker")


def gantt_title(schedule, unit) -> str:
    """Workers, makespan, work and how busy the workers were, in one line."""
    busy = schedule.work / (schedule.workers * schedule.makespan) if schedule.makespan else 0.0
    return (
        f"List schedule on {schedule.workers} worker{'s' if schedule.workers > 1 else ''}: "
        f"makespan {_fmt(schedule.makespan)} {unit} ({_fmt(schedule.work)} {unit} of work, "
        f"{100 * busy:.0f} % busy)"
    )


#: Points a bar keeps free around its label: the label's box pad and a little air.
LABEL_MARGIN = 4.0


def axes_points(ax) -> float:
    """Width of the axes in points (before a layout pass: a fair estimate)."""
    return ax.get_position().width * ax.figure.get_figwidth() * 72


@functools.lru_cache(maxsize=512)
def label_width(text) -> float:
    """Width in points of a bar label (9 pt bold), whatever the resolution."""
    prop = FontProperties(size=9, weight="bold")
    return text_to_path.get_text_width_height_descent(text, prop, ismath=False)[0]
