"""What the layout tests (test_trace_layout.py, test_explorer_layout.py) call illegible, from
the extents of a figure's texts rather than its pixels."""

from __future__ import annotations

import itertools


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
