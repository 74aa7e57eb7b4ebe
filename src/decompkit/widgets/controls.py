"""The explorers' controls and HTML pieces: labelled sliders that refuse a start value out of
range, the readout tables and status text, and the projector's font sizes."""

from __future__ import annotations

import html
from contextlib import contextmanager

import ipywidgets as widgets
import matplotlib

__all__ = [
    "FONTS",
    "MIN_FONT_PT",
    "error_html",
    "float_slider",
    "int_slider",
    "projector_fonts",
    "rows_html",
]

#: Width of slider descriptions, so that the sliders of one explorer line up.
_STYLE = {"description_width": "120px"}

#: Font sizes of the explorers' figures (points; 9 pt = 12 CSS pixels, the smallest text).
FONTS = {
    "font.size": 10,
    "axes.titlesize": 10.5,
    "axes.labelsize": 10,
    "xtick.labelsize": 9,
    "ytick.labelsize": 9,
    "legend.fontsize": 9,
    "legend.title_fontsize": 9,
    "figure.titlesize": 11,
}
#: Smallest font of an explorer's figure, in points (tests hold every text to it).
MIN_FONT_PT = 9

#: Padded cells for the readout tables (read from the back of a lecture hall).
_TABLE_CSS = (
    "<style>.decompkit-table{border-collapse:collapse;margin:2px 0}"
    ".decompkit-table th,.decompkit-table td{padding:2px 10px;line-height:1.35;"
    "text-align:left;border-bottom:1px solid #ddd}"
    ".decompkit-table th{border-bottom:2px solid #999}"
    ".decompkit-table tr.current{background:#FFE9B3;font-weight:bold}"
    ".decompkit-note{margin:2px 0;line-height:1.35}</style>"
)


@contextmanager
def projector_fonts():
    """Font sizes of :data:`FONTS` for the artists created inside the block.

    Sets and restores just these keys: ``matplotlib.rc_context`` copies every setting and
    costs milliseconds, more than a whole update of an explorer.
    """
    params = matplotlib.rcParams
    saved = {key: params[key] for key in FONTS}
    params.update(FONTS)
    try:
        yield
    finally:
        params.update(saved)


def _checked(name, value, low, high):
    """Refuse a start value outside a control's range: a slider would clamp it silently."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{name} must be a number, got {value!r}")
    if not low <= value <= high:
        raise ValueError(f"{name} must be in [{low:g}, {high:g}], got {value!r}")
    return value


def _slider(kind, name, value, low, high, step, description, tooltip, style, **more):
    return kind(
        value=_checked(name, value, low, high),
        min=low,
        max=high,
        step=step,
        description=description,
        tooltip=tooltip,
        continuous_update=True,
        style=style or _STYLE,
        **more,
    )


def float_slider(name, value, low, high, step, description, tooltip, *, fmt=".2f", style=None):
    """A labelled FloatSlider; a start value outside ``[low, high]`` raises ValueError."""
    return _slider(
        widgets.FloatSlider,
        name,
        value,
        low,
        high,
        step,
        description,
        tooltip,
        style,
        readout_format=fmt,
    )


def int_slider(name, value, low, high, description, tooltip, *, step=1, style=None):
    """A labelled IntSlider; a start value that is not a whole number in range raises."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    return _slider(widgets.IntSlider, name, value, low, high, step, description, tooltip, style)


def error_html(message: str) -> str:
    """Status text for a rejected setting."""
    return f'<span style="color:#D55E00"><b>Not computed:</b> {html.escape(message)}</span>'


def rows_html(rows, *, header=None, current=None) -> str:
    """A padded HTML table from rows of already formatted cells; row ``current`` stands out."""
    head = ""
    if header is not None:
        head = "<tr>" + "".join(f"<th>{html.escape(str(h))}</th>" for h in header) + "</tr>"
    body = "".join(
        ('<tr class="current">' if i == current else "<tr>")
        + "".join(f"<td>{html.escape(str(cell))}</td>" for cell in row)
        + "</tr>"
        for i, row in enumerate(rows)
    )
    return f'{_TABLE_CSS}<table class="decompkit-table">{head}{body}</table>'
