"""Shared machinery of the explorers: controls, one Figure per explorer, and the display.

Each explorer draws its matplotlib Figure once (no pyplot). A control change updates the
existing artists in place and brings the picture in the browser up to date: no new figure
per event, no flicker. How the picture is rendered and sent fast lives in
:mod:`decompkit.widgets._render` (layers, changed rectangles, the screen's pixel density).

Sliders use ``continuous_update=True``: an update takes a few milliseconds in the kernel
(``bench/bench_widgets.py``), and the widget front end sends at most one pending change at a
time and keeps only the latest value, so a slow kernel never builds up a backlog.

Sizes are for a 1280 x 720 projector: a figure of w inches is w * 96 CSS pixels wide, text is
at least 9 pt (12 CSS pixels), and every explorer, controls and figure, fits in 1280 x 800.
"""

from __future__ import annotations

import base64
import html
from contextlib import contextmanager

import ipywidgets as widgets
import matplotlib
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from ._render import CSS_DPI, FigureView, LayeredRendering, encode_png

__all__: list[str] = []

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

LIVE_NOTE = (
    "{name}: the live controls need a running Jupyter kernel with ipywidgets; "
    "the image shows the explorer's current state."
)

#: Padded cells for the readout tables (read from the back of a lecture hall).
_TABLE_CSS = (
    "<style>.decompkit-table{border-collapse:collapse;margin:4px 0}"
    ".decompkit-table th,.decompkit-table td{padding:3px 10px;text-align:left;"
    "border-bottom:1px solid #ddd}.decompkit-table th{border-bottom:2px solid #999}"
    ".decompkit-table tr.current{background:#FFE9B3;font-weight:bold}</style>"
)


@contextmanager
def projector_fonts():
    """Font sizes of :data:`FONTS` for the artists created inside the block."""
    with matplotlib.rc_context(FONTS):
        yield


def _checked(name, value, low, high):
    """Refuse a start value outside a control's range: a slider would clamp it silently."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{name} must be a number, got {value!r}")
    if not low <= value <= high:
        raise ValueError(f"{name} must be in [{low:g}, {high:g}], got {value!r}")
    return value


def float_slider(name, value, low, high, step, description, tooltip, *, fmt=".2f", style=None):
    """A labelled FloatSlider; a start value outside ``[low, high]`` raises ValueError."""
    return widgets.FloatSlider(
        value=_checked(name, value, low, high),
        min=low,
        max=high,
        step=step,
        description=description,
        tooltip=tooltip,
        readout_format=fmt,
        continuous_update=True,
        style=style or _STYLE,
    )


def int_slider(name, value, low, high, description, tooltip, *, step=1, style=None):
    """A labelled IntSlider; a start value that is not a whole number in range raises."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    return widgets.IntSlider(
        value=_checked(name, value, low, high),
        min=low,
        max=high,
        step=step,
        description=description,
        tooltip=tooltip,
        continuous_update=True,
        style=style or _STYLE,
    )


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


class Explorer(LayeredRendering):
    """Base class of the explorers: controls, one Figure, its rendering and the display.

    Attributes
    ----------
    controls : dict of str to ipywidgets.Widget
        The controls by name; changing a value redraws the figure.
    figure : matplotlib.figure.Figure
        The explorer's only figure (not registered with pyplot).
    view : FigureView
        The figure in the browser, at its CSS size and the screen's pixel density.
    readout : ipywidgets.HTML
        The numbers behind the figure for the current setting.
    status : ipywidgets.HTML
        Empty, or the message of the ValueError that rejected the current setting.
    widget : ipywidgets.Box
        The whole explorer, ready to display.
    values : dict
        The numbers drawn for the current setting (set by each explorer's refresh).
    renders : int
        How many times the picture has been rendered.
    """

    def __init__(self, figsize):
        self.figure = Figure(figsize=figsize, dpi=CSS_DPI, layout="constrained")
        FigureCanvasAgg(self.figure)
        self.view = FigureView(alt=type(self).__name__)
        self.view.observe(self._on_ratio, names="ratio")
        self.readout = widgets.HTML()
        self.status = widgets.HTML()
        self.controls: dict[str, widgets.Widget] = {}
        self.widget: widgets.Box = widgets.VBox()
        self._init_layers()
        self._muted = False
        #: Number of renders so far (each sent a new picture to the view).
        self.renders = 0

    def _box(self, children, **layout):
        """The explorer's outer box; the class lets its view find it in the page."""
        box = widgets.VBox(children, layout=widgets.Layout(**layout))
        box.add_class("decompkit-explorer")
        return box

    # -- wiring ---------------------------------------------------------------------------------

    def _watch(self, *names):
        """Redraw whenever the value of one of the named controls (default: all) changes."""
        for name in names or tuple(self.controls):
            control = self.controls[name]
            if hasattr(control, "value"):
                control.observe(self._on_change, names="value")

    def _on_change(self, change):
        if not self._muted:
            self.update()

    def _on_ratio(self, change):
        """The browser's pixel density changed: render the figure for it."""
        self.figure.set_dpi(CSS_DPI * change["new"])
        self._invalidate()
        self.render(full=True)

    @contextmanager
    def _hold(self):
        """Change several controls without an update per change."""
        self._muted = True
        try:
            yield
        finally:
            self._muted = False

    def _refresh(self):
        """Recompute from the controls and update the artists and the readout in place."""
        raise NotImplementedError

    def update(self, *, full: bool = False) -> bool:
        """Recompute, update the figure in place and re-render it into :attr:`view`.

        Parameters
        ----------
        full : bool
            Lay the figure out again and draw it whole (after a change of structure).

        Returns
        -------
        bool
            False when the compute functions rejected the setting with a ValueError; the
            message is then shown in :attr:`status` and the picture keeps the last good state.
        """
        try:
            with projector_fonts():
                self._refresh()
        except ValueError as err:
            self.status.value = error_html(str(err))
            return False
        self.status.value = ""
        self.render(full=full)
        return True

    def render(self, *, full: bool = False):
        """Re-render the figure and send the changed pixels to :attr:`view`."""
        self._draw_frame(full=full)
        ratio = self.figure.dpi / CSS_DPI
        width, height = self.figure.bbox.width / ratio, self.figure.bbox.height / ratio
        self.view.show(self.figure.canvas.buffer_rgba(), (width, height))
        self.renders += 1

    def png(self) -> bytes:
        """The picture now shown, as PNG bytes (opaque RGB)."""
        return encode_png(self.figure.canvas.buffer_rgba())

    # -- display --------------------------------------------------------------------------------

    def _repr_mimebundle_(self, include=None, exclude=None, **kwargs):
        """The live widget, plus a PNG and a note for front ends that cannot show widgets."""
        bundle = dict(self.widget._repr_mimebundle_(include=include, exclude=exclude) or {})
        bundle["image/png"] = base64.b64encode(self.png()).decode("ascii")
        bundle["text/plain"] = LIVE_NOTE.format(name=type(self).__name__)
        return bundle
