"""What the layout tests (test_trace_layout.py, test_explorer_layout.py,
test_trace_gantt_labels.py) call illegible, from the extents of a figure's texts rather than
its pixels, and which texts a draw paints."""

from __future__ import annotations

import itertools

from matplotlib.figure import Figure
from matplotlib.text import Text


def painted_texts(draw) -> list:
    """``(text, box)`` of every visible, non-empty text the last figure draw made while
    ``draw()`` ran paints (an explorer's ``png``, a canvas's ``draw``); a box is the text's
    frame where it has one. Only the last draw counts: ``png`` may lay the figure out first."""
    draws = []
    original_text, original_figure = Text.draw, Figure.draw

    def record(text, renderer):
        original_text(text, renderer)
        if draws and text.get_visible() and text.get_text().strip():
            draws[-1].append((text, (text.get_bbox_patch() or text).get_window_extent(renderer)))

    def figure_draw(figure, renderer):
        draws.append([])
        return original_figure(figure, renderer)

    Text.draw, Figure.draw = record, figure_draw
    try:
        draw()
    finally:
        Text.draw, Figure.draw = original_text, original_figure
    assert draws, "nothing was drawn"
    return draws[-1]


def text_problems(boxes, bound) -> list:
    """``("leaves the figure", text)`` for each ``(text, box)`` of ``boxes`` that reaches more
    than a pixel outside ``bound`` (the figure's box), and ``("overlap", a, b)`` for each pair
    that overlaps by more than a pixel each way."""
    found = [
        ("leaves the figure", name)
        for name, box in boxes
        if box.x0 < bound.x0 - 1
        or box.x1 > bound.x1 + 1
        or box.y0 < bound.y0 - 1
        or box.y1 > bound.y1 + 1
    ]
    for (a, one), (b, other) in itertools.combinations(boxes, 2):
        wide = min(one.x1, other.x1) - max(one.x0, other.x0)
        high = min(one.y1, other.y1) - max(one.y0, other.y0)
        if wide > 1 and high > 1:
            found.append(("overlap", a, b))
    return found
