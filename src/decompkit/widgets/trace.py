r"""Trace stepper: walk through a scheduler trace event by event.

After the first :math:`k` events a node is *running* (dispatched, no result yet), *done*
(artifact), *failed* (failure report), *blocked* (in a failure's cone), *cancelled* (stopped
while running), *ready* (:math:`\mathrm{pred}(v) \subseteq \mathrm{done}`, not attempted, not
blocked) or *pending*. Each scheduler call (repair round) derives the blocked set anew.
"""

from __future__ import annotations

import textwrap

import ipywidgets as widgets
from matplotlib.patches import Patch
from matplotlib.text import Annotation

from .. import dag
from ..plots.dag import plot_dag
from ..plots.scheduler import plot_trace_gantt
from ..plots.style import GREY, PALETTE
from .base import Explorer, serialised
from .controls import projector_fonts, rows_html
from .panels import ONE_PANEL, TwoPanels

__all__ = ["TraceStepper", "trace_stepper"]

#: Face colour, text colour and hatch of each state, in the order of the legend. Each box
#: also names its state under the task, so no state is told by its colour alone; the colours
#: stay apart under deuteranopia and protanopia too (tests/test_palette.py).
STATES = {
    "pending": ("white", "black", None),
    "ready": (PALETTE[4], "black", None),
    "running": (PALETTE[6], "black", ".."),
    "done": (PALETTE[2], "white", None),
    "failed": (PALETTE[5], "white", "xx"),
    "blocked": ("#505050", "white", "\\\\"),
    "cancelled": (PALETTE[3], "black", "//"),
}
_COLUMNS = ("time", "round", "kind", "node", "worker", "attempt", "detail")
#: The figure's height (CSS pixels) in each arrangement (:mod:`.panels` says when which).
HEIGHTS = {"side by side": 360, "one panel": 300}
#: Rows of the Gantt chart one panel of HEIGHTS["one panel"] holds; each row more makes the
#: figure ROW_HEIGHT CSS pixels taller (row names at 9 pt are 13 pixels high: students'
#: charts of 15 and 16 rows had them overlap at 300).
ONE_PANEL_ROWS, ROW_HEIGHT = 13, 13


def _applied_repairs(result, k) -> int:
    """How many of the result's repairs the first ``k`` events have applied."""
    unrolled = sum(1 for e in result.events[:k] if e.kind == "unroll")
    applied = 0
    for repair in getattr(result, "repairs", ()):
        unrolled -= len(repair.copies)
        if unrolled < 0:
            break
        applied += 1
    return applied


def _graph_after(result, applied):
    """The plan after ``applied`` repairs: undo the later ones on the final graph."""
    graph = {node: list(preds) for node, preds in result.graph.items()}
    for repair in reversed(getattr(result, "repairs", ())[applied:]):
        for copy in repair.copies.values():
            graph.pop(copy, None)
        for node, (old, _new) in repair.repointed.items():
            if node in graph:
                graph[node] = list(old)
    return graph


def _states_after(result, graph, k) -> dict:
    """The state of every node of ``graph`` after the first ``k`` events of the trace."""
    state = {}
    current_round = 0
    for event in result.events[:k]:
        if event.round != current_round:
            # A new scheduler call: it blocks the cones of the recorded failures anew, and
            # cancelled nodes may run again.
            current_round = event.round
            state = {n: s for n, s in state.items() if s not in ("blocked", "cancelled")}
        kind = event.kind
        if kind in ("dispatch", "attempt"):
            state[event.node] = "running"
        elif kind == "finish":
            state[event.node] = "done"
        elif kind == "fail":
            state[event.node] = "failed"
        elif kind in ("block", "cancel"):
            state[event.node] = "blocked" if kind == "block" else "cancelled"
    done = [n for n, s in state.items() if s == "done"]
    running = [n for n, s in state.items() if s == "running"]
    stopped = [n for n, s in state.items() if s in ("failed", "blocked", "cancelled")]
    ready = set(dag.ready_set(graph, done, running, stopped))
    return {n: state.get(n, "ready" if n in ready else "pending") for n in graph}


class TraceStepper(TwoPanels, Explorer):
    """Buttons and a slider over the events of a scheduler trace; see :func:`trace_stepper`."""

    BOTH = "side by side"
    BOTH_GRID = {"nrows": 1, "ncols": 2, "width_ratios": (1.1, 1.0)}

    def __init__(self, result, *, window=2):
        if not all(hasattr(result, a) for a in ("events", "graph", "makespan", "workers")):
            raise ValueError(
                "result must be what decompkit.scheduler.schedule or run_with_repair returned, "
                f"got {type(result).__name__}"
            )
        if isinstance(window, bool) or not isinstance(window, int) or window < 1:
            raise ValueError(f"window must be an integer >= 1, got {window!r}")
        self.result = result
        self.window = window
        self.events = list(result.events)
        super().__init__(height=HEIGHTS[self.BOTH])
        n = len(self.events)
        self.controls = {
            "back": widgets.Button(description="◀ back", tooltip="one event back"),
            "forward": widgets.Button(description="forward ▶", tooltip="one event forward"),
            "event": widgets.IntSlider(
                value=0,
                min=0,
                max=n,
                description="events done",
                tooltip=f"state after the first k of the {n} events (0: before the run)",
                continuous_update=True,
                style={"description_width": "90px"},
            ),
        }
        self._panel_buttons("the plan, each task in its state", "the Gantt chart of the whole run")
        self.table = widgets.HTML()
        c = self.controls
        for button in (c["back"], c["forward"]):
            button.layout.width = "auto"  # one row with the slider and the panel buttons
        c["back"].on_click(lambda _: self.step(-1))
        c["forward"].on_click(lambda _: self.step(+1))
        # In the browser the view moves the slider itself on a click: no round trip per step.
        c["back"].add_class("decompkit-back")
        c["forward"].add_class("decompkit-forward")
        self.view.stepper = [c["event"], c["back"], c["forward"]]
        self._watch("event")
        with projector_fonts():
            self._draw()
        self._show_panels()
        # The counts and the event table go under the figure: beside it, the table squeezed
        # the figure, and the counts took a second row of controls at 150 % zoom.
        self.widget = self._box(
            [
                self._row([c["back"], c["forward"], c["event"], self.panel]),
                self.view,
                self.readout,
                self.table,
                self.status,
            ]
        )
        self.update(full=True)

    @serialised
    def step(self, delta):
        """Move ``delta`` events forward (negative: back), staying within the trace."""
        slider = self.controls["event"]
        slider.value = min(max(slider.value + delta, slider.min), slider.max)

    # -- drawing --------------------------------------------------------------------------------

    def _height_of(self, arrangement) -> int:
        """The figure's height in an arrangement: one panel grows with the Gantt chart's rows."""
        more = len(self.result.graph) - ONE_PANEL_ROWS if arrangement == ONE_PANEL else 0
        return HEIGHTS[arrangement] + ROW_HEIGHT * max(0, more)

    def _show_panels(self):
        """Show the panels of the arrangement, with their texts and legend, and name the
        artists an update moves in them."""
        shown, one = self._shown(), self._show_buttons()
        self.gantt_ax.set_visible("gantt" in shown)
        self.gantt_ax.set_in_layout("gantt" in shown)
        self._plan_slot.set_in_layout("plan" in shown)
        for ax, _, _ in self._plans.values():
            ax.set_visible(ax is self.dag_ax and "plan" in shown)
            # The panel is half the width side by side: its long label takes two lines.
            label = ax.get_xlabel().replace("\n", " ")
            wanted = label if one else textwrap.fill(label, 60)
            if ax.get_xlabel() != wanted:  # called at every step: the same text stays as it is
                ax.set_xlabel(wanted)
        # Each box names its state, so one panel leaves the states' legend out for room.
        self.legend.set_visible(not one)
        self.legend.set_in_layout(not one)
        scene = []
        if "plan" in shown and self._plans:
            scene += [
                self.dag_ax,
                *self.edge_arrows.values(),
                *self.node_boxes.values(),
                self.dag_ax.title,
            ]
        if "gantt" in shown:
            scene += [self.cursor, *self._spines(self.gantt_ax)]
        self._set_scene(*scene)

    def _draw(self):
        self.dag_ax, self.gantt_ax = self.figure.subplots(**self.BOTH_GRID)
        #: The axes the layout places the plan in; later versions of the plan sit on it.
        self._plan_slot = self.dag_ax
        plot_trace_gantt(self.result, ax=self.gantt_ax)
        self.cursor = self.gantt_ax.axvline(0, color="black", linewidth=1.5)
        handles = [
            Patch(facecolor=face, edgecolor=GREY, hatch=hatch, label=state)
            for state, (face, _, hatch) in STATES.items()
        ]
        self.legend = self.figure.legend(
            handles=handles, loc="outside lower center", ncols=len(STATES)
        )
        #: One drawing of the plan per version of it (a repair makes a new one), by its edges.
        self._plans = {}
        self._graph_key = None

    def _show_graph(self, key, graph):
        """Show the plan as it stands, drawn on first sight into an axes of its own."""
        if key not in self._plans:
            if self._plans:  # later versions sit exactly where the first one was laid out
                ax = self.figure.add_axes(self._plans[next(iter(self._plans))][0].get_position())
            else:
                ax = self.dag_ax
            plot_dag(graph, ax=ax)
            boxes = [t for t in ax.texts if not isinstance(t, Annotation)]
            by_text = {box.get_text(): box for box in boxes}
            nodes = {node: by_text[str(node)] for node in graph}
            where = {tuple(box.get_position()): node for node, box in nodes.items()}
            arrows = {
                (where[tuple(a.xyann)], where[tuple(a.xy)]): a
                for a in ax.texts
                if isinstance(a, Annotation)
            }
            self._plans[key] = (ax, nodes, arrows)
        self.dag_ax, self.node_boxes, self.edge_arrows = self._plans[key]
        self._show_panels()

    def _lay_out(self):
        # The layout leaves an invisible axes no room for its labels: where a later version
        # of the plan is shown, the first one stands in for it (out of the picture).
        slot = self._plan_slot
        stand_in = slot is not self.dag_ax and "plan" in self._shown()
        if stand_in:
            slot.set(visible=True, animated=True)
        try:
            return super()._lay_out()
        finally:
            if stand_in:
                slot.set(visible=False, animated=False)

    def _after_layout(self):
        # Later versions of the plan sit exactly where the layout put the first one.
        first = next(iter(self._plans.values()))[0] if self._plans else None
        for ax, _, _ in self._plans.values():
            if ax is not first:
                ax.set_position(first.get_position())

    def _refresh(self):
        c = self.controls
        k = self._value("event")
        graph = _graph_after(self.result, _applied_repairs(self.result, k))
        key = tuple((node, tuple(preds)) for node, preds in graph.items())
        if key != self._graph_key:
            self._show_graph(key, graph)
            self._graph_key = key
        states = _states_after(self.result, graph, k)
        for node, box in self.node_boxes.items():
            face, ink, hatch = STATES[states[node]]
            box.set_text(f"{node}\n{states[node]}")
            box.get_bbox_patch().set(facecolor=face, hatch=hatch)
            box.set_color(ink)
        current = self.events[k - 1] if k else None
        time = current.time if current else 0
        self.cursor.set_xdata([time, time])
        what = f"{current.kind} {current.node}" if current else "before the first event"
        self.dag_ax.title.set_text(f"After event {k} of {len(self.events)} ({what}), t = {time:g}")
        self._text(c["back"], k == c["event"].min, "disabled")
        self._text(c["forward"], k == c["event"].max, "disabled")
        counts = {s: sum(1 for v in states.values() if v == s) for s in STATES}
        self._text(
            self.readout,
            '<p style="margin:4px 12px">'
            + ", ".join(f"{s}: {n}" for s, n in counts.items() if n)
            + "</p>",
        )
        self._text(self.table, self._table_html(k))
        self.values = {"states": states, "graph": graph, "event": current}

    def _table_html(self, k) -> str:
        """The events around the current one; the current one highlighted."""
        events = self.result.events.table()
        low = max(0, k - 1 - self.window)
        high = min(len(events), k + self.window)
        rows = []
        for i in range(low, high):
            cells = [str(i + 1)]
            for c in _COLUMNS:
                value = events[i][c]
                text = "" if value is None else f"{value:g}" if c == "time" else str(value)
                if c == "worker" and value is not None:
                    text = f"w{value}"
                cells.append(text[:60])
            rows.append(cells)
        note = f"<p>events {low + 1}-{high} of {len(events)}</p>" if events else "<p>no events</p>"
        current = k - 1 - low if k else None
        return rows_html(rows, header=("#", *_COLUMNS), current=current) + note


def trace_stepper(result, *, window=2):
    r"""Step through a scheduler trace: the plan coloured by state, the Gantt chart, the events.

    Parameters
    ----------
    result : ScheduleResult or RepairResult
        What :func:`decompkit.scheduler.schedule` or
        :func:`decompkit.scheduler.run_with_repair` returned.
    window : int
        Events shown before and after the current one in the event table.

    Returns
    -------
    TraceStepper
        Display it in a notebook. ``.controls`` holds the *back* and *forward* buttons and
        the ``"event"`` slider (k = 0 .. number of events: the state after the first k);
        ``.step(delta)`` moves like the buttons; ``.values["states"]`` maps each node to its
        state; ``.table`` is the event table; ``.panel`` chooses the panel shown
        (``"plan"`` or ``"gantt"``) where the notebook is narrow.

    Raises
    ------
    ValueError
        If ``result`` is not a scheduler result or ``window`` is not an integer >= 1.

    Notes
    -----
    Left: :func:`~decompkit.plots.dag.plot_dag` of the plan as it stood after event k (a
    repair round adds the unrolled copies and re-points edges), each task filled with the
    colour of its state (legend below). Right: :func:`~decompkit.plots.scheduler.plot_trace_gantt`
    of the whole run, the black line at the time of event k. Below: the count of tasks in
    each state and the event table around event k. Where the notebook is narrower than
    :data:`~decompkit.widgets.panels.ONE_PANEL_BELOW` CSS pixels (a projector at 150 % zoom)
    the figure shows one of the two panels at a time, as wide as the notebook, chosen with
    the *plan* and *Gantt chart* buttons beside the slider. The state is replayed from the
    trace: dispatch and attempt make a node running, finish done, fail failed, block blocked,
    cancel cancelled; a new round clears blocked and cancelled (the scheduler derives its
    blocked set anew at every call); the rest is ready (:func:`decompkit.dag.ready_set`) or
    pending.

    Examples
    --------
    >>> from decompkit.scheduler import schedule, scripted
    >>> g = {"b": ["a"], "c": ["a"], "d": ["b", "c"]}
    >>> d = {"a": 1, "b": 3, "c": 2, "d": 1}
    >>> st = trace_stepper(schedule(g, d, workers=2, step=scripted({"c": ["fail"]})))
    >>> dict(sorted(st.values["states"].items()))
    {'a': 'ready', 'b': 'pending', 'c': 'pending', 'd': 'pending'}
    >>> st.controls["event"].value = st.controls["event"].max
    >>> dict(sorted(st.values["states"].items()))
    {'a': 'done', 'b': 'cancelled', 'c': 'failed', 'd': 'blocked'}
    """
    return TraceStepper(result, window=window)
