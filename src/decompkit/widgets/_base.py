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

import asyncio
import base64
import html
from contextlib import contextmanager

import ipywidgets as widgets
import matplotlib
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from ._render import (
    _AHEAD_MOVED,
    _AHEAD_OTHERS,
    _IN_FLIGHT,
    _PREFETCH_BATCH,
    _PREFETCH_PAUSE,
    CSS_DPI,
    FigureView,
    LayeredRendering,
    encode_png,
    setting_key,
)

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


def _running_loop():
    """The event loop the kernel runs its handlers in, or None outside a kernel."""
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


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
        self.view.on_ack = self._resume_ahead
        self.readout = widgets.HTML()
        self.status = widgets.HTML()
        self.controls: dict[str, widgets.Widget] = {}
        self.widget: widgets.Box = widgets.VBox()
        self._init_layers()
        self._muted = False
        #: Number of renders so far (each sent a new picture to the view).
        self.renders = 0
        #: Values that a picture computed ahead uses instead of the controls' (or None).
        self._override = None
        self._moved = None  # the control changed last
        self._queue: list = []  # settings to compute ahead
        self._sent: set = set()  # keys of pictures the view has, over the current key frame
        self._ahead = None  # the scheduled batch
        self._stale = False  # the figure shows a setting computed ahead, not the controls'

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
            names = [name for name, c in self.controls.items() if c is change["owner"]]
            self._moved = names[0] if names else None
            self.update()

    def _on_ratio(self, change):
        """The browser's pixel density changed: render the figure for it."""
        self.figure.set_dpi(CSS_DPI * change["new"])
        self._invalidate()
        self.update(full=True)

    # -- settings, and pictures computed ahead ------------------------------------------------

    def _keyed(self):
        """``[(name, control)]`` whose values make the setting a picture shows."""
        return [(name, c) for name, c in self.controls.items() if hasattr(c, "value")]

    def _key(self, values=None) -> str:
        values = values or {name: c.value for name, c in self._keyed()}
        return setting_key([(c, values[name]) for name, c in self._keyed()])

    def _value(self, name):
        """The value of control ``name`` for the picture being computed."""
        if self._override is not None and name in self._override:
            return self._override[name]
        return self.controls[name].value

    def _text(self, widget, value, trait="value"):
        """Show a readout (or a button state) - unless the picture is one computed ahead."""
        if self._override is None:
            setattr(widget, trait, value)

    def _plan_ahead(self):
        """Queue the settings one or a few slider steps away, the moved slider's first.

        They are computed while the kernel waits for the next change, a few at a time, and
        sent to the view, which shows one the moment its controls reach it.
        """
        loop = _running_loop()
        if loop is None:  # no kernel event loop (a script, a test): nothing to wait for
            return
        current = {name: c.value for name, c in self._keyed()}
        sliders = [
            (name, c)
            for name, c in self._keyed()
            if isinstance(getattr(c, "step", None), (int, float)) and not isinstance(c, bool)
        ]
        sliders.sort(key=lambda item: item[0] != self._moved)
        queue = []
        for name, c in sliders:
            reach = _AHEAD_MOVED if name == self._moved else _AHEAD_OTHERS
            last = round((c.max - c.min) / c.step)
            here = round((current[name] - c.min) / c.step)
            for distance in range(1, reach + 1):
                for k in (here + distance, here - distance):
                    if 0 <= k <= last:
                        value = c.min + k * c.step
                        value = round(value) if isinstance(c.value, int) else round(value, 12)
                        queue.append({**current, name: value})
        self._queue = queue
        self._resume_ahead()

    def _resume_ahead(self):
        """Schedule the next batch, unless one is scheduled or too many are on their way."""
        loop = _running_loop()
        if self._ahead is None and self._queue and loop is not None:
            if self.view.in_flight < _IN_FLIGHT:
                self._ahead = loop.call_later(_PREFETCH_PAUSE, self._ahead_batch)

    def _ahead_batch(self):
        """Compute and send a few pictures of the queue; schedule the next batch."""
        self._ahead = None
        entries, values_now = [], getattr(self, "values", None)
        try:
            while self._queue and len(entries) < _PREFETCH_BATCH:
                values = self._queue.pop(0)
                key = self._key(values)
                if key in self._sent:
                    continue
                self._override, self._stale = values, True
                try:
                    with projector_fonts():
                        self._refresh()
                except ValueError:
                    continue
                if self._draw_frame():  # a new layout: the view's key frame would not fit
                    self._queue.clear()
                    break
                entries.append((key, self.view.tiles_for(self.figure.canvas.buffer_rgba())))
                self._sent.add(key)
        finally:
            self._override = None
            self.values = values_now
        if entries:
            self.view.send_ahead(entries)
        self._resume_ahead()

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
        laid_out = self._draw_frame(full=full)
        self._stale = False
        if laid_out:
            self._sent.clear()
        ratio = self.figure.dpi / CSS_DPI
        width, height = self.figure.bbox.width / ratio, self.figure.bbox.height / ratio
        self.view.show(
            self.figure.canvas.buffer_rgba(), (width, height), key=self._key(), keyframe=laid_out
        )
        self.view.controls = [c for _, c in self._keyed()]
        self.renders += 1
        self._plan_ahead()

    def png(self) -> bytes:
        """The picture of the controls' setting, as PNG bytes (opaque RGB)."""
        if self._stale:  # the figure last drew a setting computed ahead
            with projector_fonts():
                self._refresh()
            self._draw_frame()
            self._stale = False
        return encode_png(self.figure.canvas.buffer_rgba())

    # -- display --------------------------------------------------------------------------------

    def _repr_mimebundle_(self, include=None, exclude=None, **kwargs):
        """The live widget, plus a PNG and a note for front ends that cannot show widgets."""
        bundle = dict(self.widget._repr_mimebundle_(include=include, exclude=exclude) or {})
        bundle["image/png"] = base64.b64encode(self.png()).decode("ascii")
        bundle["text/plain"] = LIVE_NOTE.format(name=type(self).__name__)
        return bundle
