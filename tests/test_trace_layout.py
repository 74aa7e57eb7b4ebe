"""The trace stepper is legible at every width a notebook gives it: no two labels or task
boxes overlap and none leaves the figure, at every step of the lecture's repaired run, in
each panel it shows.

Text extents, not pixels: JupyterLab's notebook is about 848 CSS pixels wide with the file
browser open, Notebook 7's about 1108; 640 is the narrowest the explorers draw at
(tests/test_explorer_layout.py checks the widths of a projector at 150 % zoom).
"""

from __future__ import annotations

import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.text import Annotation, Text
from test_trace_gantt_labels import final_run
from text_extents import text_problems

from decompkit import scheduler
from decompkit.widgets import trace_stepper
from decompkit.widgets.panels import ONE_PANEL_BELOW
from decompkit.widgets.view import CSS_DPI

pytestmark = pytest.mark.slow  # a few dozen full draws of the figure


@pytest.fixture(scope="module")
def repaired_run():
    return final_run("lecture")


def _problems(figure) -> list:
    """Visible texts (task boxes by their box) that overlap another or leave the figure."""
    FigureCanvasAgg(figure)
    figure.canvas.draw()
    renderer = figure.canvas.get_renderer()
    owners = [o for o in (*figure.axes, *figure.legends, *figure.texts) if o.get_visible()]
    texts = [
        t
        for owner in owners
        for t in owner.findobj(Text)
        if t.get_visible() and t.get_text().strip() and not isinstance(t, Annotation)
    ]
    boxes = []
    for text in texts:
        patch = text.get_bbox_patch()
        box = (patch or text).get_window_extent(renderer)
        boxes.append((text.get_text().replace("\n", " "), box))
    return text_problems(boxes, figure.bbox)


@pytest.mark.parametrize("width", [640, 848, 1108])
def test_the_trace_stepper_has_no_overlapping_or_clipped_text(repaired_run, width):
    stepper = trace_stepper(repaired_run)
    stepper._on_screen({"new": (width, 1.0)})
    narrow = width < ONE_PANEL_BELOW
    assert stepper.arrangement == ("one panel" if narrow else "side by side")
    last = len(stepper.events)
    for panel in ("plan", "gantt") if narrow else ("plan",):
        stepper.panel.value = panel
        for k in sorted({*range(0, last + 1, 9), last}):
            stepper.controls["event"].value = k
            assert _problems(stepper.figure) == [], (width, panel, k)
    assert len(stepper.values["graph"]) > len(repaired_run.graph) - 1  # repairs are shown


def test_one_panel_shows_the_plan_or_the_gantt_chart_as_wide_as_the_figure(repaired_run):
    stepper = trace_stepper(repaired_run)
    stepper._on_screen({"new": (848, 1.0)})
    assert stepper.panel.value == "plan" and stepper.panel.layout.display != "none"
    plan = stepper.dag_ax.get_window_extent()
    assert stepper.dag_ax.get_visible() and not stepper.gantt_ax.get_visible()
    assert plan.width > 0.8 * stepper.figure.bbox.width
    stepper.panel.value = "gantt"
    assert stepper.gantt_ax.get_visible() and not stepper.dag_ax.get_visible()
    assert stepper.gantt_ax.get_window_extent().width > 0.6 * stepper.figure.bbox.width
    assert stepper.cursor in stepper.renderer.moving
    assert not set(stepper.node_boxes.values()) & set(stepper.renderer.moving)


def test_the_plan_shown_again_after_a_repair_keeps_its_labels_in_the_figure(repaired_run):
    """Back to the plan at the last step (a repaired plan, not the first one the layout
    places): the layout still leaves room for its labels."""
    stepper = trace_stepper(repaired_run)
    stepper._on_screen({"new": (673, 1.0)})
    stepper.controls["event"].value = len(stepper.events)
    stepper.panel.value = "gantt"
    stepper.panel.value = "plan"
    assert stepper.dag_ax is not stepper._plan_slot  # the repaired plan is shown
    assert _problems(stepper.figure) == []


def test_a_narrow_then_wide_notebook_puts_the_panels_back_side_by_side(repaired_run):
    stepper = trace_stepper(repaired_run)
    stepper._on_screen({"new": (848, 1.0)})
    stepper.panel.value = "gantt"
    stepper._on_screen({"new": (1108, 1.0)})
    assert stepper.arrangement == "side by side" and stepper.panel.layout.display == "none"
    assert stepper.dag_ax.get_visible() and stepper.gantt_ax.get_visible()
    plan, gantt = stepper.dag_ax.get_position(), stepper.gantt_ax.get_position()
    assert plan.x1 <= gantt.x0  # beside each other again
    assert _problems(stepper.figure) == []


@pytest.mark.parametrize(("rows", "height"), [(10, 300), (13, 300), (15, 326), (16, 339)])
def test_one_panel_grows_with_the_gantt_charts_rows(rows, height):
    """Row names at 9 pt need 13 CSS px a row: 300 px hold 13 rows of the one panel
    (tests/test_trace_gantt_labels.py checks students' charts of 15 and 16 rows)."""
    chain = {f"t{i}": [f"t{i - 1}"] if i else [] for i in range(rows)}
    stepper = trace_stepper(scheduler.schedule(chain, dict.fromkeys(chain, 1), workers=2))
    stepper._on_screen({"new": (673, 1.0)})
    assert stepper.arrangement == "one panel"
    assert round(stepper.figure.get_figheight() * CSS_DPI) == height
    stepper._on_screen({"new": (1104, 1.0)})
    assert round(stepper.figure.get_figheight() * CSS_DPI) == 360  # side by side: as before
