"""The trace stepper is legible at every width a notebook gives it: no two labels or task
boxes overlap and none leaves the figure, at every step of the lecture's repaired run.

Text extents, not pixels: JupyterLab's notebook is about 848 CSS pixels wide with the file
browser open, Notebook 7's about 1108; 640 is the narrowest the explorers draw at.
"""

from __future__ import annotations

import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.text import Annotation, Text
from text_extents import text_problems

from decompkit import scheduler
from decompkit.exercises import trace
from decompkit.exercises.params import params
from decompkit.widgets import trace_stepper
from decompkit.widgets.trace import STACK_BELOW

pytestmark = pytest.mark.slow  # a few dozen full draws of the figure


@pytest.fixture(scope="module")
def repaired_run():
    P = params("trace", "lecture")
    try:
        return scheduler.run_with_repair(
            P.A.graph,
            P.A.durations,
            workers=P.workers,
            step=trace.failing_step(P.failing, runs=P.red_runs),
            faulty={P.failing: P.faulty},
            kappa_plan=P.kappa_plan,
        )
    except scheduler.RepairLimitError as error:
        return error.result


def _problems(figure) -> list:
    """Visible texts (task boxes by their box) that overlap another or leave the figure."""
    FigureCanvasAgg(figure)
    figure.canvas.draw()
    renderer = figure.canvas.get_renderer()
    owners = [ax for ax in figure.axes if ax.get_visible()] + figure.legends + figure.texts
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
    assert stepper.arrangement == ("stacked" if width < STACK_BELOW else "side by side")
    last = len(stepper.events)
    for k in sorted({*range(0, last + 1, 9), last}):
        stepper.controls["event"].value = k
        assert _problems(stepper.figure) == [], (width, k)
    assert len(stepper.values["graph"]) > len(repaired_run.graph) - 1  # repairs are shown


def test_a_narrow_then_wide_notebook_puts_the_panels_back_side_by_side(repaired_run):
    stepper = trace_stepper(repaired_run)
    stepper._on_screen({"new": (848, 1.0)})
    height = stepper.figure.get_figheight()
    stepper._on_screen({"new": (1108, 1.0)})
    assert stepper.arrangement == "side by side" and stepper.figure.get_figheight() < height
    plan, gantt = stepper.dag_ax.get_position(), stepper.gantt_ax.get_position()
    assert plan.x1 <= gantt.x0  # beside each other again
    assert _problems(stepper.figure) == []
