r"""DAG explorer: critical path, slack and the list schedule of a worked example under sliders.

With durations :math:`d_v`: :math:`EF_v = d_v + \max_{u \to v} EF_u`, the critical path is
:math:`T_\infty = \max_v EF_v` and the slack :math:`LS_v - ES_v`; a list schedule on
:math:`m` workers finishes within :math:`W/m + (1 - 1/m) T_\infty` with :math:`W = \sum_v d_v`.
"""

from __future__ import annotations

import math

import ipywidgets as widgets
from matplotlib.text import Annotation
from matplotlib.ticker import MaxNLocator

from .. import dag, examples
from ..plots.dag import (
    CRITICAL_ARROW,
    CRITICAL_BOX,
    NORMAL_ARROW,
    NORMAL_BOX,
    gantt_frame,
    place_task,
    plot_dag,
    task_artists,
)
from ..plots.style import GREY
from .base import Explorer, serialised
from .controls import int_slider, projector_fonts, rows_html
from .panels import ONE_PANEL, TwoPanels

__all__ = ["DagExplorer", "dag_explorer"]

#: The worked examples by the letter the lecture gives them.
EXAMPLES = {"A": examples.coding_task, "B": examples.migration}
#: Largest worker count on the slider: more than the widest generation of either example.
MAX_WORKERS = 6
#: Which checkbox belongs to which example: only those of the example shown are on screen.
_OPTIONS = {"spurious_edge": "A", "coordination": "B", "resources": "B"}
_DURATION_STYLE = {"description_width": "150px"}
#: The figure's height (CSS pixels) with the plan above the Gantt chart, and with one panel
#: at a time where the notebook is narrower than :data:`~.panels.ONE_PANEL_BELOW` (a projector
#: at 150 % zoom: 673 x 359 CSS pixels in JupyterLab, controls included). There the panel
#: takes the room under the controls down to :data:`ONE_PANEL_LOWEST`: three rows of two-line
#: boxes, the title and the generations' ticks.
HEIGHTS = {"one above the other": 368, "one panel": 280}
ONE_PANEL_LOWEST = 190
#: The plan's axis labels in each arrangement. The y label on two lines: on one, at the
#: plan's height in the full figure, it reached the figure's top edge. One panel has no room
#: for it across, the x label says what a column is instead.
PLAN_LABELS = {
    "one above the other": (
        "generation (Kahn layer): arrows point from a task to one that waits for it",
        "tasks that may\nrun together",
    ),
    "one panel": ("generation (Kahn layer): the tasks of a column may run together", ""),
}


def _fmt(x) -> str:
    return f"{x:g}"


def _worked_examples(source):
    """``{"A": WorkedExample, "B": WorkedExample}`` from None, a parameter object or a mapping."""
    if source is None:
        return {key: make() for key, make in EXAMPLES.items()}
    if isinstance(source, dict):
        found = {key: source.get(key) for key in EXAMPLES}
    else:
        found = {key: getattr(source, key, None) for key in EXAMPLES}
    for key, example in found.items():
        if not isinstance(example, examples.WorkedExample):
            raise ValueError(
                "params must be None, the notebook's parameter object P (with worked examples "
                f"P.A and P.B) or a dict of them, got {type(source).__name__} whose {key!r} is "
                f"{type(example).__name__}"
            )
    return found


#: Round numbers the Gantt chart's time axis may end at (10, 12, 15, 20, 25, ...).
AXIS_ENDS = [round(m * 10**k) for k in range(1, 12) for m in (1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8)]


def time_axis_end(makespan) -> int:
    """End of the Gantt chart's time axis: the first round number >= 1.1 x the makespan.

    Examples
    --------
    >>> [time_axis_end(m) for m in (0, 9, 18, 21, 30, 95)]
    [10, 10, 20, 25, 40, 120]
    """
    need = 1.1 * makespan
    return next((end for end in AXIS_ENDS if end >= need), math.ceil(need))


def duration_range(durations) -> int:
    """Upper end of the duration sliders: twice the longest task, at least 10.

    Examples
    --------
    >>> duration_range({"a": 3, "b": 37})
    74
    """
    return max(10, 2 * math.ceil(max(durations.values(), default=0)))


class DagExplorer(TwoPanels, Explorer):
    """Example, durations and workers over critical path and list schedule; see
    :func:`dag_explorer`."""

    BOTH = "one above the other"
    BOTH_GRID = {"nrows": 2, "ncols": 1, "height_ratios": (3, 2)}

    def __init__(self, params=None, example="A", workers=None):
        if isinstance(params, str):  # dag_explorer("B"): the example, lecture numbers
            params, example = None, params
        self.examples = _worked_examples(params)
        if example not in EXAMPLES:
            raise ValueError(f"example must be one of {sorted(EXAMPLES)}, got {example!r}")
        if workers is None:
            workers = getattr(params, "workers", 2) if params is not None else 2
        super().__init__(height=HEIGHTS[self.BOTH])
        self.controls = {
            "example": widgets.ToggleButtons(
                options=[(f"{key}: {ex.name}", key) for key, ex in self.examples.items()],
                value=example,
                description="example",
                tooltip="the worked example of the lecture, with your numbers",
                tooltips=[f"worked example {key} of the lecture" for key in self.examples],
                style={"button_width": "auto", "description_width": "60px"},
            ),
            "workers": int_slider(
                "workers",
                workers,
                1,
                MAX_WORKERS,
                "workers",
                "workers of the list schedule",
                style={"description_width": "70px"},
            ),
            "spurious_edge": widgets.Checkbox(
                value=False,
                description="spurious edge",
                tooltip="add the edge that is not a real dependency",
                indent=False,
            ),
            "coordination": widgets.Checkbox(
                value=False,
                description="coordination tax",
                tooltip="pay the coordination slots before the fan-out",
                indent=False,
            ),
            "resources": widgets.Checkbox(
                value=False,
                description="one lock",
                tooltip="tasks that share a resource key never run at once",
                indent=False,
            ),
        }
        # As many columns of sliders as the notebook's width holds (three at 1100 pixels).
        self.duration_box = widgets.GridBox(
            layout=widgets.Layout(
                grid_template_columns="repeat(auto-fill, minmax(350px, 1fr))",
                grid_gap="0 8px",
                width="100%",
            )
        )
        self.duration_box.add_class("decompkit-durations")  # three columns at 150 % zoom
        #: The panel shown where the notebook is narrow (hidden where both are shown).
        self._panel_buttons("the plan: critical path and slack", "the list schedule's Gantt chart")
        #: One duration slider per task of the current example (also in ``controls``).
        self.duration_sliders: dict = {}
        self._sliders: dict = {}  # every example's duration sliders, by example
        with projector_fonts():
            self._draw()
        self._show_panels()
        c = self.controls
        # One row for the example, the workers and the checkboxes at 1100 pixels: the label
        # beside the buttons, boxes no wider than their text.
        c["example"].layout.display, c["example"].layout.align_items = "flex", "center"
        c["workers"].layout.width = "290px"
        for name in _OPTIONS:
            c[name].layout.width = "auto"
            c[name].layout.margin = "4px 12px 0 0"
        self.options_box = widgets.HBox()
        self.table = widgets.HTML()
        self.table_box = widgets.Accordion([self.table], titles=("every task",))
        self.table_box.selected_index = None
        self.widget = self._box(
            [
                # The panel buttons beside the example's: at 150 % zoom the workers and
                # the options take the second row.
                self._row([c["example"], self.panel, c["workers"], self.options_box]),
                self.duration_box,
                self.view,
                self.readout,
                self.table_box,
                self.status,
            ]
        )
        self._watch("workers", "spurious_edge", "coordination", "resources")
        c["example"].observe(self._on_example, names="value")
        self._load_example()
        self.update()

    # -- controls -------------------------------------------------------------------------------

    def _sliders_of(self, key):
        """The duration sliders of example ``key``, made on first use and kept: switching
        back and forth makes no new widgets and keeps each example's numbers."""
        if key not in self._sliders:
            example = self.examples[key]
            high = duration_range(example.durations)
            self._sliders[key] = {
                node: int_slider(
                    f"duration of {node}",
                    duration,
                    0,
                    high,
                    str(example.labels.get(node, node)),
                    f"duration of {node} ({example.labels.get(node, node)}) in {example.unit}",
                    style=_DURATION_STYLE,
                )
                for node, duration in example.durations.items()
            }
            for slider in self._sliders[key].values():
                slider.observe(self._on_change, names="value")
        return self._sliders[key]

    def _keyed(self):
        # Every example's sliders, in one fixed order: the view's key of a setting then
        # reads the example's picture as soon as the buttons switch, before the kernel.
        # Those of the example shown are named as in ``controls``.
        shown = self.controls["example"].value
        fixed = [(n, c) for n, c in super()._keyed() if not n.startswith("duration ")]
        sliders = [
            (f"duration {node}" if key == shown else f"{key} {node}", slider)
            for key in EXAMPLES
            for node, slider in self._sliders_of(key).items()
        ]
        return fixed + sliders

    def _load_example(self):
        """Show the duration sliders of the chosen example, one per task, named like its box."""
        key = self.controls["example"].value
        self.example = self.examples[key]
        for node in self.duration_sliders:
            del self.controls[f"duration {node}"]
        self.duration_sliders = dict(self._sliders_of(key))
        for node, slider in self.duration_sliders.items():
            self.controls[f"duration {node}"] = slider
        self.duration_box.children = tuple(self.duration_sliders.values())
        c = self.controls
        c["spurious_edge"].disabled = self.example.spurious_edge is None
        c["coordination"].disabled = not (self.example.coordination and self.example.fan_out)
        c["resources"].disabled = not self.example.resources
        if self.example.coordination:
            c["coordination"].description = f"coordination tax ({self.example.coordination:g})"
        self.options_box.children = tuple(
            c[name] for name, owner in _OPTIONS.items() if owner == key and not c[name].disabled
        )

    @serialised
    def _on_example(self, change):
        c = self.controls
        with self._hold():
            for name in ("spurious_edge", "coordination", "resources"):
                c[name].value = False
        self._load_example()
        self.update()

    # -- drawing --------------------------------------------------------------------------------

    def _height_of(self, arrangement) -> int:
        return HEIGHTS[arrangement]

    def _fitted_height(self, room) -> int:
        # One panel takes the room under the controls; both keep their height (the plan's
        # rows and the Gantt chart's are not legible shorter).
        if self.arrangement == ONE_PANEL:
            if not room or room >= self._height:
                return self._height
            return max(int(room), ONE_PANEL_LOWEST)
        return self._height

    def _show_panels(self):
        """Show the panels of the arrangement, the plan's labels for it, and name the
        artists an update moves in them."""
        shown = self._shown()
        self._show_buttons()
        for ax, name in ((self.dag_ax, "plan"), (self.gantt_ax, "gantt")):
            ax.set_visible(name in shown)
            ax.set_in_layout(name in shown)
        self._plan_labels()
        if self._structure is not None:
            self._moving()

    def _plan_labels(self):
        """The plan's axis labels for the arrangement (plot_dag writes its own)."""
        xlabel, ylabel = PLAN_LABELS[self.arrangement]
        self.dag_ax.set_xlabel(xlabel)
        self.dag_ax.set_ylabel(ylabel)

    def _draw(self):
        """The two panels; their content follows in the first refresh."""
        self.dag_ax, self.gantt_ax = self.figure.subplots(**self.BOTH_GRID)
        self._plan_slot = self.dag_ax  # where the plan sits in either arrangement
        # Whole time steps on the axis (durations are whole units): 0, 5, 10, not 2.5.
        self.gantt_ax.xaxis.set_major_locator(MaxNLocator(integer=True, steps=[1, 2, 5, 10]))
        self._structure = None
        self._time_axis = 0  # upper end of the Gantt chart's time axis
        #: Per task its bar, label and tick (for a task of length 0), restyled in place.
        self.tasks: dict = {}
        self._makespan_line = self.gantt_ax.axvline(0, color=GREY, linestyle="--", lw=1)
        self._workers = None  # (workers, unit) the Gantt chart's rows and label are drawn for

    def _draw_dag(self, graph, durations, labels, unit):
        """Draw the graph anew (its structure changed) and find the artists to restyle."""
        ax = self.dag_ax
        for artist in list(ax.texts):  # the task boxes and the arrows between them
            artist.remove()
        with projector_fonts():
            plot_dag(graph, durations, ax=ax, labels=labels, unit=unit)
        self._plan_labels()
        boxes = [t for t in ax.texts if not isinstance(t, Annotation)]
        arrows = [t for t in ax.texts if isinstance(t, Annotation)]
        # plot_dag writes each task's label on the first line of its box.
        first_line = {box.get_text().split("\n", 1)[0]: box for box in boxes}
        self.node_boxes = {node: first_line[str(labels.get(node, node))] for node in graph}
        where = {tuple(box.get_position()): node for node, box in self.node_boxes.items()}
        self.edge_arrows = {
            (where[tuple(arrow.xyann)], where[tuple(arrow.xy)]): arrow for arrow in arrows
        }

    def _restyle_dag(self, graph, durations, cp, labels):
        """Show new durations in place: box texts, critical colours and arrows.

        Same texts and colours as :func:`~decompkit.plots.dag.plot_dag` (a test checks it).
        """
        path = set(cp.path)
        path_edges = set(zip(cp.path, cp.path[1:], strict=False))
        for node, box in self.node_boxes.items():
            label = labels.get(node, node)
            box.set_text(f"{label}\nd = {_fmt(durations[node])}, slack {_fmt(cp.slack[node])}")
            box.get_bbox_patch().set(**(CRITICAL_BOX if node in path else NORMAL_BOX))
        for edge, arrow in self.edge_arrows.items():
            arrow.arrow_patch.set(**(CRITICAL_ARROW if edge in path_edges else NORMAL_ARROW))

    def _draw_gantt(self, schedule, cp, labels, unit):
        """Move and restyle the Gantt chart's bars, labels, makespan line and title."""
        ax = self.gantt_ax
        if set(self.tasks) != set(schedule.start):  # another example, or the coordination
            for artist in (a for task in self.tasks.values() for a in task):
                artist.remove()
            self.tasks = {node: task_artists(ax) for node in schedule.start}
        if (schedule.workers, unit) != self._workers:
            gantt_frame(ax, schedule, unit)
            self._workers = (schedule.workers, unit)
        # A steady time axis while a slider moves: the bars move, not the scale, which steps
        # along round numbers. It depends on the setting alone (a picture made ahead must be
        # the picture of its setting, whatever was drawn before).
        end = time_axis_end(schedule.makespan)
        if end != self._time_axis:
            self._time_axis = end
            ax.set_xlim(0, end)
        on_path = set(cp.path)
        for node, task in self.tasks.items():
            place_task(task, schedule, node, on_path, labels, self._time_axis)
        self._makespan_line.set_xdata([schedule.makespan] * 2)

    def _lay_out(self):
        # The layout stays while the time axis steps along its round ends (10, 12, 15, 20):
        # it leaves room for a value of three digits at the axis' right end, whatever end
        # it is laid out at (laid out at 15, whose last tick is 14, a later 20 left the figure).
        ax = self.gantt_ax
        xlim = ax.get_xlim()
        ax.set_xlim(0, 100)
        try:
            return super()._lay_out()
        finally:
            ax.set_xlim(xlim)

    def _moving(self):
        """Name the artists a change moves in the panels shown, in the order of a full draw
        (by zorder)."""
        gantt, shown = self.gantt_ax, self._shown()
        plan = [
            self.dag_ax,
            *self.edge_arrows.values(),
            *self.node_boxes.values(),
            self.dag_ax.title,
        ]
        schedule = [
            gantt,
            # bars, lines, the frame, then labels
            *(bar for bar, _, _ in self.tasks.values()),
            *(tick for _, _, tick in self.tasks.values()),
            self._makespan_line,
            *self._spines(gantt),
            *(label for _, label, _ in self.tasks.values()),
            gantt.title,
        ]
        self._set_scene(*(plan if "plan" in shown else ()), *(schedule if "gantt" in shown else ()))

    def _plan(self, key):
        """Graph, durations and resources of the setting, for example ``key``."""
        ex = self.examples[key]
        shown = self.controls["example"].value
        graph = {node: list(preds) for node, preds in ex.graph.items()}
        names = {node: f"duration {node}" if key == shown else f"{key} {node}" for node in ex.graph}
        durations = {node: self._value(names[node]) for node in self._sliders_of(key)}
        if self._value("spurious_edge") and ex.spurious_edge is not None:
            graph = ex.with_edge(*ex.spurious_edge)
        if self._value("coordination") and ex.coordination:
            graph, extra = ex.with_coordination()
            durations = {examples.COORDINATE: extra[examples.COORDINATE], **durations}
        resources = ex.resources if self._value("resources") and ex.resources else None
        return graph, durations, resources

    def _refresh(self):
        key = self._value("example")  # the example shown, or the other one made ahead
        ex = self.examples[key]
        graph, durations, resources = self._plan(key)
        workers = self._value("workers")
        cp = dag.critical_path(graph, durations)
        schedule = dag.list_schedule(graph, durations, workers, resources=resources)
        labels = {examples.COORDINATE: "coordination", **ex.labels}
        structure = (ex.name, tuple((node, tuple(preds)) for node, preds in graph.items()))
        if structure != self._structure:
            self._draw_dag(graph, durations, labels, ex.unit)
            self._structure = structure
        else:
            self._restyle_dag(graph, durations, cp, labels)
        self._draw_gantt(schedule, cp, labels, ex.unit)
        # Short titles that change with the path and the makespans only: the totals and the
        # share of busy time are in the readout right under the figure.
        unit = ex.unit
        # The path is highlighted in the plan and its tasks have slack 0 in the table: named
        # in a title or the readout its tasks would not fit (and node ids would not match
        # the boxes' names).
        self.dag_ax.set_title(
            f"Critical path (highlighted): {_fmt(cp.makespan)} {unit}", fontsize=10
        )
        self.gantt_ax.set_title(
            f"List schedule on {workers} worker{'s' if workers > 1 else ''}: "
            f"makespan {_fmt(schedule.makespan)} {unit}",
            fontsize=10,
        )
        self._moving()
        speedup = examples.speedup(cp.serial_time, schedule.makespan) if schedule.makespan else 1
        busy = schedule.work / (workers * schedule.makespan) if schedule.makespan else 0.0
        rows = [
            (
                labels[node],
                str(node),
                _fmt(durations[node]),
                _fmt(cp.earliest_start[node]),
                _fmt(cp.slack[node]),
                _fmt(schedule.start[node]),
                f"worker {schedule.worker[node] + 1}",
            )
            for node in cp.slack
        ]
        self._text(
            self.readout,
            f"<p>Critical path (highlighted): "
            f"{_fmt(cp.makespan)} {ex.unit}; serial {_fmt(cp.serial_time)}; on {workers} "
            f"worker{'s' if workers > 1 else ''}: makespan {_fmt(schedule.makespan)} {ex.unit} "
            f"({100 * busy:.0f} % busy), speed-up {speedup:.2f}x.</p>",
        )
        self._text(
            self.table,
            rows_html(
                rows,
                header=("task", "", "duration", "earliest start", "slack", "starts", "worker"),
            ),
        )
        self.values = {"critical_path": cp, "schedule": schedule, "graph": graph}


def dag_explorer(params=None, example="A", workers=None):
    r"""Durations and workers over the critical path, slack and list schedule of an example.

    Parameters
    ----------
    params : object with attributes A and B, or dict, optional
        Where the worked examples come from: the notebook's parameter object ``P`` (its
        ``P.A`` and ``P.B`` carry the student's own durations and coordination tax, and
        ``P.workers`` the worker count), a dict ``{"A": ..., "B": ...}`` of
        :class:`~decompkit.examples.WorkedExample`, or None for the lecture's numbers. A
        string is taken for ``example`` (``dag_explorer("B")``: example B, lecture numbers).
    example : {"A", "B"}
        The example shown first: A (coding task) or B (connector migration); buttons switch.
    workers : int, optional
        Start value of the worker count of the list schedule, in [1, 6] (default
        ``params.workers`` if there is one, else 2).

    Returns
    -------
    DagExplorer
        Display it in a notebook. ``.controls`` holds the example buttons, the workers
        slider, the checkboxes and one slider ``"duration <task>"`` per task, labelled with
        the task's name; ``.values`` holds the :class:`~decompkit.dag.CriticalPath` and
        :class:`~decompkit.dag.Schedule` drawn; ``.panel`` chooses the panel shown
        (``"plan"`` or ``"gantt"``) where the notebook is narrow.

    Raises
    ------
    ValueError
        If ``params`` holds no worked examples A and B, ``example`` is unknown or
        ``workers`` lies outside its slider's range.

    Notes
    -----
    Top: :func:`~decompkit.plots.dag.plot_dag` (critical path highlighted, duration and
    slack per task). Bottom: :func:`~decompkit.plots.dag.plot_gantt` of
    :func:`~decompkit.dag.list_schedule` (critical-path priority). Each duration slider
    reaches twice the example's longest task (at least 10). The checkboxes shown are those
    of the example on screen: A's spurious edge
    (:meth:`~decompkit.examples.WorkedExample.with_edge`), B's coordination tax
    (:meth:`~decompkit.examples.WorkedExample.with_coordination`) and B's shared lock
    (``resources``). Every update redraws both panels on the same figure, on a fixed layout.
    Where the notebook is narrower than :data:`~decompkit.widgets.panels.ONE_PANEL_BELOW` CSS
    pixels (a projector at 150 % zoom) the figure shows one panel at a time, chosen with the
    *plan* and *Gantt chart* buttons (``.panel``), and takes the height left under the
    controls (down to :data:`ONE_PANEL_LOWEST`).

    Examples
    --------
    >>> ex = dag_explorer(example="B", workers=4)
    >>> ex.values["critical_path"].makespan, ex.values["schedule"].makespan
    (18, 18)
    >>> ex.controls["duration E"].description
    'patch ETL'
    >>> ex.controls["duration E"].value = 6
    >>> ex.values["critical_path"].makespan
    16
    >>> ex.controls["resources"].value = True
    >>> ex.values["schedule"].makespan
    27
    """
    return DagExplorer(params, example, workers)
