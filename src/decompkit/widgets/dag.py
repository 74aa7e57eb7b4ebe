r"""DAG explorer: critical path, slack and the list schedule of a worked example under sliders.

With durations :math:`d_v`: :math:`EF_v = d_v + \max_{u \to v} EF_u`, the critical path is
:math:`T_\infty = \max_v EF_v` and the slack :math:`LS_v - ES_v`; a list schedule on
:math:`m` workers finishes within :math:`W/m + (1 - 1/m) T_\infty` with :math:`W = \sum_v d_v`.
"""

from __future__ import annotations

import html
import math

import ipywidgets as widgets
from matplotlib.text import Annotation

from .. import dag, examples
from ..plots._style import GREY, PALETTE
from ..plots.dag import plot_dag, plot_gantt
from ._base import Explorer, int_slider, rows_html

__all__ = ["DagExplorer", "dag_explorer"]

#: The worked examples by the letter the lecture gives them.
EXAMPLES = {"A": examples.coding_task, "B": examples.migration}
#: Colours of critical and other tasks, as plot_dag draws them.
_CRITICAL, _NORMAL = PALETTE[5], PALETTE[0]
#: Largest worker count on the slider: more than the widest generation of either example.
_MAX_WORKERS = 6


def _fmt(x) -> str:
    return f"{x:g}"


class DagExplorer(Explorer):
    """Example, durations and workers over critical path and list schedule; see
    :func:`dag_explorer`."""

    def __init__(self, example="A", workers=2):
        if example not in EXAMPLES:
            raise ValueError(f"example must be one of {sorted(EXAMPLES)}, got {example!r}")
        super().__init__(figsize=(10.0, 7.0))
        self.controls = {
            "example": widgets.Dropdown(
                options=[(f"{key}: {make().name}", key) for key, make in EXAMPLES.items()],
                value=example,
                description="example",
                tooltip="the worked example of the lecture",
            ),
            "workers": int_slider(
                "workers", workers, 1, _MAX_WORKERS, "workers", "workers of the list schedule"
            ),
            "spurious_edge": widgets.Checkbox(
                value=False,
                description="spurious edge",
                tooltip="add the edge that is not a real dependency (example A)",
            ),
            "coordination": widgets.Checkbox(
                value=False,
                description="coordination tax",
                tooltip="pay the coordination slots before the fan-out (example B)",
            ),
            "resources": widgets.Checkbox(
                value=False,
                description="one lock",
                tooltip="tasks that share a resource key never run at once (example B)",
            ),
        }
        self.duration_box = widgets.VBox()
        #: One duration slider per task of the current example (also in ``controls``).
        self.duration_sliders: dict = {}
        self._draw()
        c = self.controls
        self.widget = widgets.VBox(
            [
                widgets.HBox(
                    [
                        widgets.VBox(
                            [
                                c["example"],
                                c["workers"],
                                c["spurious_edge"],
                                c["coordination"],
                                c["resources"],
                            ]
                        ),
                        self.duration_box,
                    ]
                ),
                self.image,
                self.readout,
                self.status,
            ]
        )
        self._watch("workers", "spurious_edge", "coordination", "resources")
        c["example"].observe(self._on_example, names="value")
        self._load_example()
        self.update(full=True)

    # -- controls -------------------------------------------------------------------------------

    def _load_example(self):
        """Build one duration slider per task of the chosen example."""
        self.example = EXAMPLES[self.controls["example"].value]()
        for node, slider in self.duration_sliders.items():
            slider.unobserve(self._on_change, names="value")
            slider.close()
            del self.controls[f"duration {node}"]
        high = max(10, 2 * max(self.example.durations.values()))
        self.duration_sliders = {
            node: int_slider(
                f"duration of {node}",
                duration,
                0,
                high,
                str(node),
                f"duration of '{self.example.labels[node]}' in {self.example.unit}",
            )
            for node, duration in self.example.durations.items()
        }
        for node, slider in self.duration_sliders.items():
            slider.observe(self._on_change, names="value")
            self.controls[f"duration {node}"] = slider
        self.duration_box.children = tuple(self.duration_sliders.values())
        c = self.controls
        c["spurious_edge"].disabled = self.example.spurious_edge is None
        c["coordination"].disabled = not self.example.coordination
        c["resources"].disabled = not self.example.resources

    def _on_example(self, change):
        c = self.controls
        with self._hold():
            for name in ("spurious_edge", "coordination", "resources"):
                c[name].value = False
        self._load_example()
        self.update(full=True)

    # -- drawing --------------------------------------------------------------------------------

    def _draw(self):
        """The two panels; their content follows in the first refresh."""
        self.dag_ax, self.gantt_ax = self.figure.subplots(2, 1, height_ratios=(3, 2))
        self._structure = None
        self._time_axis = 0  # upper end of the Gantt chart's time axis

    def _draw_dag(self, graph, durations, labels):
        """Draw the graph anew (its structure changed) and find the artists to restyle."""
        ax = self.dag_ax
        ax.clear()
        plot_dag(graph, durations, ax=ax, labels=labels, unit=self.example.unit)
        boxes = [t for t in ax.texts if not isinstance(t, Annotation)]
        arrows = [t for t in ax.texts if isinstance(t, Annotation)]
        # plot_dag writes each task's label on the first line of its box.
        first_line = {box.get_text().split("\n", 1)[0]: box for box in boxes}
        self.node_boxes = {node: first_line[str(labels.get(node, node))] for node in graph}
        where = {tuple(box.get_position()): node for node, box in self.node_boxes.items()}
        self.edge_arrows = {
            (where[tuple(arrow.xyann)], where[tuple(arrow.xy)]): arrow for arrow in arrows
        }
        # The arrows change colour with the critical path only. The task boxes, the title and
        # the Gantt chart's axes (time scale, worker rows) do not overlap: each is repainted
        # alone when it changes. The bars change with every control.
        self._set_layers(
            arrows, [*self.node_boxes.values(), ax.title, self.gantt_ax], [], sprites=1
        )
        self._relayout = True

    def _before_layers(self):
        # plot_dag clips each arrow at the boxes of its two tasks, so the boxes must sit where
        # they will be drawn before any arrow is painted.
        renderer = self.figure.canvas.get_renderer()
        for box in self.node_boxes.values():
            box.update_bbox_position_size(renderer)

    def _restyle_dag(self, graph, durations, cp, labels):
        """Show new durations in place: box texts, critical colours, arrows and title.

        Same texts and colours as :func:`~decompkit.plots.dag.plot_dag` (a test checks it).
        """
        path = set(cp.path)
        path_edges = set(zip(cp.path, cp.path[1:], strict=False))
        for node, box in self.node_boxes.items():
            label = labels.get(node, node)
            box.set_text(f"{label}\nd = {_fmt(durations[node])}, slack {_fmt(cp.slack[node])}")
            box.get_bbox_patch().set_edgecolor(_CRITICAL if node in path else _NORMAL)
        for edge, arrow in self.edge_arrows.items():
            hot = edge in path_edges
            arrow.arrow_patch.set_color(_CRITICAL if hot else GREY)
            arrow.arrow_patch.set_linewidth(2.2 if hot else 1.0)
        unit = self.example.unit
        self.dag_ax.title.set_text(
            f"Critical path, {_fmt(cp.makespan)} {unit} of {_fmt(cp.serial_time)} in total: "
            + " → ".join(str(v) for v in cp.path)
        )

    def _draw_gantt(self, schedule, cp):
        """Replace the Gantt chart's bars, labels and title (the last layer)."""
        ax = self.gantt_ax
        for artist in (*ax.patches, *ax.texts, *ax.lines, *ax.collections):
            artist.remove()
        ax.containers.clear()
        plot_gantt(schedule, ax=ax, critical=cp, unit=self.example.unit)
        # A steady time axis while a slider moves: the bars move, not the scale. It changes
        # only when the makespan leaves the range or fills less than half of it.
        low, high = 0.5 * self._time_axis, self._time_axis
        if not low <= schedule.makespan <= high:
            self._time_axis = math.ceil(1.25 * max(schedule.makespan, 1))
        ax.set_xlim(0, self._time_axis)
        self._replace_layer(-1, [*ax.patches, *ax.lines, *ax.collections, *ax.texts, ax.title])

    def _plan(self):
        """Graph, durations and resources of the current setting."""
        ex, c = self.example, self.controls
        graph = {node: list(preds) for node, preds in ex.graph.items()}
        durations = {node: slider.value for node, slider in self.duration_sliders.items()}
        if c["spurious_edge"].value and ex.spurious_edge is not None:
            graph = ex.with_edge(*ex.spurious_edge)
        if c["coordination"].value and ex.coordination:
            graph, extra = ex.with_coordination()
            durations = {examples.COORDINATE: extra[examples.COORDINATE], **durations}
        resources = ex.resources if c["resources"].value and ex.resources else None
        return graph, durations, resources

    def _refresh(self):
        graph, durations, resources = self._plan()
        workers = self.controls["workers"].value
        cp = dag.critical_path(graph, durations)
        schedule = dag.list_schedule(graph, durations, workers, resources=resources)
        ex = self.example
        labels = {examples.COORDINATE: "coordination", **ex.labels}
        structure = (ex.name, tuple((node, tuple(preds)) for node, preds in graph.items()))
        if structure != self._structure:
            self._draw_dag(graph, durations, labels)
            self._structure = structure
        else:
            self._restyle_dag(graph, durations, cp, labels)
        self._draw_gantt(schedule, cp)
        renderer = self.figure.canvas.get_renderer()
        sizes = []
        for box in self.node_boxes.values():  # a box grows with its text: arrows clip at it
            box.update_bbox_position_size(renderer)
            sizes.append(round(box.get_bbox_patch().get_width(), 1))
        self._keys[:] = [
            (structure, tuple(cp.path), tuple(sizes)),
            (structure, tuple(durations.items()), workers, self.gantt_ax.get_xlim()),
        ]
        speedup = examples.speedup(cp.serial_time, schedule.makespan) if schedule.makespan else 1
        rows = [
            (
                str(node),
                labels[node],
                _fmt(durations[node]),
                _fmt(cp.earliest_start[node]),
                _fmt(cp.slack[node]),
                _fmt(schedule.start[node]),
                f"w{schedule.worker[node] + 1}",
            )
            for node in cp.slack
        ]
        self.readout.value = (
            f"<p>Critical path {html.escape(' → '.join(map(str, cp.path)))}: "
            f"{_fmt(cp.makespan)} {ex.unit} (any number of workers); serial "
            f"{_fmt(cp.serial_time)} {ex.unit}; list schedule on {workers} worker"
            f"{'s' if workers > 1 else ''}: makespan {_fmt(schedule.makespan)} {ex.unit}, "
            f"speed-up {speedup:.2f}x.</p>"
            + rows_html(
                rows,
                header=("task", "", "duration", "earliest start", "slack", "starts", "worker"),
            )
        )
        self.values = {"critical_path": cp, "schedule": schedule, "graph": graph}


def dag_explorer(example="A", workers=2):
    r"""Durations and workers over the critical path, slack and list schedule of an example.

    Parameters
    ----------
    example : {"A", "B"}
        Worked example A (coding task, :func:`decompkit.examples.coding_task`) or B
        (connector migration, :func:`decompkit.examples.migration`); a Dropdown switches.
    workers : int
        Start value of the worker count of the list schedule, in [1, 6].

    Returns
    -------
    DagExplorer
        Display it in a notebook. ``.controls`` holds the example Dropdown, the workers
        slider, the checkboxes and one slider ``"duration <task>"`` per task; ``.values``
        holds the :class:`~decompkit.dag.CriticalPath` and :class:`~decompkit.dag.Schedule`
        drawn.

    Raises
    ------
    ValueError
        If ``example`` is unknown or ``workers`` lies outside its slider's range.

    Notes
    -----
    Top: :func:`~decompkit.plots.dag.plot_dag` (critical path highlighted, duration and
    slack per task). Bottom: :func:`~decompkit.plots.dag.plot_gantt` of
    :func:`~decompkit.dag.list_schedule` (critical-path priority). The checkboxes add the
    spurious edge of example A (:meth:`~decompkit.examples.WorkedExample.with_edge`), the
    coordination tax of example B (:meth:`~decompkit.examples.WorkedExample.with_coordination`)
    and its shared lock (``resources``). Every update redraws both panels on the same figure
    with the layout fixed; switching the example lays the figure out again.

    Examples
    --------
    >>> ex = dag_explorer("B", workers=4)
    >>> ex.values["critical_path"].makespan, ex.values["schedule"].makespan
    (18, 18)
    >>> ex.controls["duration E"].value = 6
    >>> ex.values["critical_path"].makespan
    16
    >>> ex.controls["resources"].value = True
    >>> ex.values["schedule"].makespan
    27
    """
    return DagExplorer(example, workers)
