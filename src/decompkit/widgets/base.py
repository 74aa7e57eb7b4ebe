"""Shared machinery of the explorers: one Figure per explorer, its pictures and the display
(the sliders, tables and fonts they are built from are in :mod:`decompkit.widgets.controls`).

Each explorer draws its matplotlib Figure once (no pyplot) and names the artists a control
change moves. A change updates those artists in place, and the picture in the browser is
brought up to date by sending their scene alone (:mod:`decompkit.widgets.render`, which also
knows when an artist looks as it did before): no new figure per event, no PNG per update.

*Pictures ahead.* The round trip from the page to the kernel and back takes tens of
milliseconds on a busy machine, whatever the kernel does. So after each update, while the
kernel waits, it makes the pictures of the settings next to the current one, one per turn of
its event loop: two steps either side on the control moved last, then, once the hand has
rested a moment, one step on every other control (a checkbox flipped, the other example). It
sends each to the view, which draws it the moment its controls reach that setting; the
kernel's own answer follows and sets the readouts. A change empties the queue, so this work
never holds up an answer for longer than one picture takes (a few milliseconds).

Sliders use ``continuous_update=True``: an update takes a few milliseconds in the kernel
(``bench/bench_widgets.py``), and the widget front end sends at most one pending change at a
time and keeps only the latest value, so a slow kernel never builds up a backlog.

*A cell run again* closes the explorers its earlier runs showed, every widget they made, so
that neither the kernel nor the widget state a saved notebook keeps grows with each run.

Sizes are for a 1280 x 720 projector: a figure is as wide as the notebook gives it (within
a range per explorer) and of a fixed height in CSS pixels, text is at least 9 pt (12 CSS
pixels), and every explorer, controls and figure, fits in 1280 x 800.
"""

from __future__ import annotations

import asyncio
import base64
import functools
import threading
import time
import weakref
from contextlib import contextmanager

import ipywidgets as widgets
from matplotlib.figure import Figure

from .controls import error_html, projector_fonts
from .moving import Moving, layout_of
from .render import Renderer
from .view import CSS_DPI, MAX_RATIO, FigureView, setting_key

__all__ = ["LIVE_NOTE", "MAKE_AHEAD", "Explorer", "serialised"]

LIVE_NOTE = (
    "{name}: the live controls need a running Jupyter kernel with ipywidgets; "
    "the image shows the explorer's current state."
)

#: One explorer draws at a time, in one thread at a time. ipykernel 7 may run a widget
#: message's handler in a subshell thread while the main thread makes pictures ahead, and
#: neither a matplotlib figure nor matplotlib's rcParams may be changed from two threads at
#: once (a picture then mixes two settings: texts twice, boxes missing).
_DRAWING = threading.RLock()


def serialised(method):
    """Run ``method`` holding the explorers' drawing lock (re-entrant: nested calls are
    fine). Every handler that changes an explorer's figure or state takes it."""

    @functools.wraps(method)
    def locked(*args, **kwargs):
        with _DRAWING:
            return method(*args, **kwargs)

    return locked


def _running_loop():
    """The event loop the kernel runs its handlers in, or None outside a kernel."""
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


#: Whether explorers make pictures ahead (``bench/bench_browser.py --no-ahead`` turns it off
#: to measure the round trip alone).
MAKE_AHEAD = True
#: Whether the browser computes the moving artists of the explorers that name them
#: (:meth:`Explorer.moving_in_browser`); the benchmark's kernel mode turns it off.
COMPUTE_IN_BROWSER = True
#: Seconds the kernel waits after an update before it makes a picture ahead for the control
#: moved last, and for the others: a hand that steps or drags is answered first, and the
#: other controls' pictures wait until it rests.
_AHEAD_PAUSE = 0.02
_AHEAD_REST = 0.25
#: Sliders, whose neighbouring steps pictures are made ahead for.
_SLIDERS = (widgets.IntSlider, widgets.FloatSlider)


def _current_run() -> tuple[str | None, str | None]:
    """``(cell id, request id)`` of the cell the kernel is running, as far as it is known.

    JupyterLab and Notebook 7 name the cell in each execute request's metadata
    (``cellId``); anything else (a console, a script) gives ``(None, None)``.
    """
    try:
        from IPython import get_ipython

        kernel = getattr(get_ipython(), "kernel", None)
        parent = kernel.get_parent("shell") if kernel is not None else None
    except Exception:  # noqa: BLE001 - no kernel, or one without get_parent: nothing known
        return None, None
    if not isinstance(parent, dict):
        return None, None
    cell = (parent.get("metadata") or {}).get("cellId")
    request = (parent.get("header") or {}).get("msg_id")
    return (cell, request) if cell and request else (None, None)


#: The explorers each cell showed, with the request that ran the cell: running the cell
#: again closes them, so neither the kernel nor a saved notebook keeps every earlier run's.
_SHOWN_IN_CELL: dict[str, list] = {}


def _widgets_in(value, depth=2):
    """The widgets in an attribute's value: itself, or inside its dicts, lists and tuples."""
    if isinstance(value, widgets.Widget):
        yield value
    elif depth and isinstance(value, dict):
        for item in value.values():
            yield from _widgets_in(item, depth - 1)
    elif depth and isinstance(value, (list, tuple)):
        for item in value:
            yield from _widgets_in(item, depth - 1)


def _close_tree(widget) -> None:
    """Close ``widget``, the widgets it contains and their layout and style models."""
    if not isinstance(widget, widgets.Widget):
        return
    for child in getattr(widget, "children", ()) or ():
        _close_tree(child)
    for part in ("layout", "style"):
        inner = getattr(widget, part, None)
        if isinstance(inner, widgets.Widget):
            inner.close()
    widget.close()


class Explorer:
    """Base class of the explorers: controls, one Figure, its scene and the display.

    Attributes
    ----------
    controls : dict of str to ipywidgets.Widget
        The controls by name; changing a value redraws the figure.
    figure : matplotlib.figure.Figure
        The explorer's only figure (not registered with pyplot).
    renderer : Renderer
        Draws the figure: its background, the scene of the artists the controls move, and
        the whole picture.
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
        How many pictures have been sent to the view.
    """

    #: Range of the figure's width in CSS pixels: it takes the notebook's width within it.
    WIDTHS = (640, 1200)
    #: Lowest height of the figure in CSS pixels where the page is short (a projector at
    #: 150 % zoom): the figure takes the room below the controls down to it. None: the
    #: figure keeps its height (an explorer whose panels are not legible shorter).
    MIN_HEIGHT: int | None = None

    def __init__(self, height, *, width=1104):
        self._height = height
        self.figure = Figure(
            figsize=(width / CSS_DPI, height / CSS_DPI), dpi=CSS_DPI, layout="constrained"
        )
        self.renderer = Renderer(self.figure)
        self.view = FigureView(alt=type(self).__name__)
        self.view.observe(self._on_screen, names="screen")
        self.readout = widgets.HTML()
        self.status = widgets.HTML()
        self.controls: dict[str, widgets.Widget] = {}
        self.widget: widgets.Box  # each explorer builds its own box
        self._muted = False
        #: Number of pictures sent so far.
        self.renders = 0
        self._laid_out = False
        self._texts: dict = {}  # readouts to set once the picture is on its way
        #: Values that a picture made ahead uses instead of the controls' (or None).
        self._override = None
        self._moved = None  # the control changed last
        self._ahead: list = []  # settings whose pictures to make ahead, next first
        self._ahead_rest: list = []  # and those once the hand has rested
        self._ahead_handle = None  # the scheduled call that makes the next one
        self._ahead_plans = 0  # counts the plans of pictures ahead (a stale call is dropped)
        self._made_ahead: set = set()  # their keys, on the current layout
        self._views = 0  # the view's count of views when they were made
        self._stale = False  # the artists show a setting made ahead
        self._closed = False  # closed by close(), e.g. when its cell ran again
        self._moving_epoch = None  # the view's epoch when the browser got its layout

    @staticmethod
    def _row(children, **layout):
        """Controls side by side, wrapping onto a new line where the notebook is narrow."""
        layout = widgets.Layout(flex_flow="row wrap", align_items="flex-start", **layout)
        return widgets.HBox(children, layout=layout)

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
        self.view.controls = [c for _, c in self._keyed()]

    @serialised
    def _on_change(self, change):
        if not self._muted:
            self._moved = change["owner"]
            self.update()

    def _fitted_height(self, room) -> int:
        """The figure's height in CSS pixels: its own (``_height``), or less where the page
        shows only ``room`` pixels below the controls, down to :attr:`MIN_HEIGHT`.

        >>> class Short(Explorer):
        ...     MIN_HEIGHT = 200
        >>> short = Short(300)
        >>> short._fitted_height(250), short._fitted_height(100), short._fitted_height(0)
        (250, 200, 300)
        >>> Explorer(300)._fitted_height(250)
        300
        """
        if self.MIN_HEIGHT is None or not room or room >= self._height:
            return self._height
        return max(int(room), min(self.MIN_HEIGHT, self._height))

    @serialised
    def _on_screen(self, change):
        """The browser reported the width the figure may take, a new pixel density, or the
        height it may take below the controls (``[width, ratio]`` or ``[width, ratio, room]``)."""
        width, ratio, *rest = change["new"]
        low, high = self.WIDTHS
        width = min(max(int(width), low), high)
        ratio = min(max(float(ratio), 1.0), MAX_RATIO)
        height = self._fitted_height(rest[0] if rest else 0)
        size = (width / CSS_DPI, height / CSS_DPI)
        if tuple(self.figure.get_size_inches()) != size or self.figure.dpi != CSS_DPI * ratio:
            self.figure.set_size_inches(size)
            self.figure.set_dpi(CSS_DPI * ratio)
            self._resized(width, height)
            self._laid_out = False
            self.update()

    def _resized(self, width, height):
        """Hook run when the figure takes a new size in CSS pixels, before it is laid out
        again (default: nothing; an explorer may shorten its texts where it is narrow)."""

    @contextmanager
    def _hold(self):
        """Change several controls without an update per change."""
        self._muted = True
        try:
            yield
        finally:
            self._muted = False

    def _value(self, name):
        """The value of control ``name`` (a name of :meth:`_keyed`) for the picture being
        made: one ahead, or the controls' own."""
        if self._override is not None and name in self._override:
            return self._override[name]
        control = self.controls.get(name)
        return control.value if control is not None else dict(self._keyed())[name].value

    def _text(self, widget, value, trait="value"):
        """Set a readout (or a button state) right after the picture has been sent; a
        picture made ahead changes no readout."""
        if self._override is None:
            self._texts[(widget, trait)] = value

    # -- pictures ahead -------------------------------------------------------------------------

    def _keyed(self):
        """``[(name, control)]`` whose values make the setting a picture shows, in the
        order of the view's ``controls``."""
        return [(n, c) for n, c in self.controls.items() if hasattr(c, "value")]

    def _key(self, values=None) -> str:
        values = values or {}
        return setting_key([(c, values.get(n, c.value)) for n, c in self._keyed()])

    @staticmethod
    def _next_to(name, control, reach):
        """Settings next to the current one on ``control``: up to ``reach`` steps either side
        on a slider, the checkbox flipped, or another option of a choice."""
        if control.disabled:
            return []
        if isinstance(control, _SLIDERS):
            whole = isinstance(control.value, int)
            values = (control.value + d * control.step for d in (1, -1, 2, -2)[: 2 * reach])
            return [
                {name: round(v) if whole else round(v, 12)}
                for v in values
                if control.min <= v <= control.max
            ]
        if isinstance(control, widgets.Checkbox):
            return [{name: not control.value}]
        if isinstance(control, widgets.ToggleButtons):
            values = (o[1] if isinstance(o, tuple) else o for o in control.options)
            return [{name: v} for v in values if v != control.value]
        return []

    def _plan_ahead(self, controls, moved=None):
        """Queue two steps either side on the control ``moved``, made at once, and one step
        on every other control, made once the hand has rested a moment."""
        if self.view.views != self._views:  # a new view in the page has no pictures yet
            self._made_ahead.clear()
            self._views = self.view.views
        self._ahead, self._ahead_rest = [], []
        self._ahead_plans += 1
        for name, control in controls if MAKE_AHEAD else ():
            if control is moved:
                self._ahead += self._next_to(name, control, reach=2)
            else:
                self._ahead_rest += self._next_to(name, control, reach=1)
        if self._ahead_handle is not None:
            self._ahead_handle.cancel()
            self._ahead_handle = None
        self._next_ahead()

    def _next_ahead(self):
        loop = _running_loop()
        if loop is None or self._ahead_handle is not None:
            return
        # The call may come in another thread's loop (a kernel subshell): it carries the
        # plan it was made for and does nothing once a newer plan has replaced it.
        if self._ahead:
            self._ahead_handle = loop.call_later(_AHEAD_PAUSE, self._one_ahead, self._ahead_plans)
        elif self._ahead_rest:
            self._ahead, self._ahead_rest = self._ahead_rest, []
            self._ahead_handle = loop.call_later(_AHEAD_REST, self._one_ahead, self._ahead_plans)

    @serialised
    def _one_ahead(self, plan=None):
        """Make one picture of the queue and send it to the view; then the next, later.

        One per turn of the kernel's event loop: a control change that arrives meanwhile
        is served before the next one, and it empties the queue. ``plan`` is the count of
        plans when the call was scheduled: an older one does nothing.
        """
        if self._closed or plan is not None and plan != self._ahead_plans:
            return
        self._ahead_handle = None
        while self._ahead:
            values = self._ahead.pop(0)
            key = self._key(values)
            if key in self._made_ahead:
                continue
            values_now = getattr(self, "values", None)
            self._override, self._stale = values, True
            try:
                with projector_fonts():
                    self._refresh()
                    items, used = self.renderer.scene()
            except ValueError:
                continue
            finally:
                self._override = None
                self.values = values_now
            self.view.send_ahead(key, items, used)
            self._made_ahead.add(key)
            break
        self._next_ahead()

    def _forget_ahead(self):
        """The pictures made ahead no longer hold (say, a simulation was added to them)."""
        self._made_ahead.clear()
        self.view.epoch += 1

    def _restore(self):
        """Bring the artists back to the controls' setting after pictures made ahead."""
        if self._stale:
            with projector_fonts():
                self._refresh()
            self._texts.clear()
            self._stale = False

    # -- the scene ------------------------------------------------------------------------------

    def _set_scene(self, *artists):
        """Name the artists updates move, in drawing order; the rest is background.

        An Axes among them is recorded with its frame, ticks and labels only: its own
        children that are listed are recorded one by one (:meth:`Renderer.move`).
        """
        self.renderer.move(*artists)

    @staticmethod
    def _spines(*axes):
        """The visible spines of ``axes``: a full draw paints them over the curves and bars,
        so a scene lists them after those."""
        return [s for ax in axes for s in ax.spines.values() if s.get_visible()]

    def _lay_out(self) -> bytes:
        """Lay the figure out, freeze the layout and return the background as PNG bytes."""
        background = self.renderer.background()
        self._after_layout()
        self._laid_out = True
        return background

    def _after_layout(self):
        """Hook run after each layout pass (default: nothing)."""

    def _refresh(self):
        """Recompute from the controls and update the artists and the readout in place."""
        raise NotImplementedError

    @serialised
    def update(self, *, full: bool = False) -> bool:
        """Recompute, update the figure in place and send the new picture to :attr:`view`.

        Parameters
        ----------
        full : bool
            Lay the figure out again and send a new background (after a change of size).

        Returns
        -------
        bool
            False when the compute functions rejected the setting with a ValueError; the
            message is then shown in :attr:`status` and the picture keeps the last good state;
            also False, drawing nothing, once the explorer is closed.
        """
        if self._closed:
            return False
        self._started = (time.perf_counter(), time.process_time())
        self._ahead_plans += 1  # a call still scheduled for the last plan does nothing now
        if self._ahead_handle is not None:
            self._ahead_handle.cancel()
            self._ahead_handle = None
        self._stale = False
        background = None
        try:
            with projector_fonts():
                self._refresh()
                if full or not self._laid_out:
                    background = self._lay_out()
                    self._refresh()  # what depends on the layout (say, which labels fit)
        except ValueError as err:
            self._texts.clear()
            self.status.value = error_html(str(err))
            return False
        self._send(background)
        self.status.value = ""
        texts, self._texts = self._texts, {}
        for (widget, trait), value in texts.items():
            setattr(widget, trait, value)
        if background is not None:  # a new layout: the pictures made so far no longer fit
            self._made_ahead.clear()
        self._plan_ahead([(n, c) for n, c in self._keyed() if n in self.controls], self._moved)
        return True

    @serialised
    def render(self):
        """Send the scene of the current state of the artists to :attr:`view`."""
        self._restore()
        with projector_fonts():
            background = None if self._laid_out else self._lay_out()
        self._send(background)

    def moving_in_browser(self) -> Moving | None:
        """The moving artists the browser may compute from the controls itself
        (:mod:`.moving`), or None: the kernel draws every picture (the default)."""
        return None

    def _browser_layout(self) -> dict:
        """What the browser needs to compute the moving artists in the current layout
        (``{}`` if it computes none), drawn after the background."""
        moving = self.moving_in_browser() if COMPUTE_IN_BROWSER else None
        if moving is None:
            return {}
        with projector_fonts():
            layout = layout_of(self.figure, moving)
        names = [name for name, _ in self._keyed()]
        return {"kind": moving.kind, "names": names, "spec": moving.spec, "layout": layout}

    def _send(self, background):
        moving = None
        if background is not None or self._moving_epoch != self.view.epoch:
            moving = self._browser_layout()  # a new layout, or new artists (a simulation)
            self._moving_epoch = self.view.epoch
        with projector_fonts():
            items, used = self.renderer.scene()
        ratio = self.figure.dpi / CSS_DPI
        size = (self.figure.bbox.width / ratio, self.figure.bbox.height / ratio)
        started, self._started = getattr(self, "_started", None), None
        self.view.show(
            items,
            used,
            size,
            background=background,
            started=started,
            setting=self._key(),
            moving=moving,
        )
        self.renders += 1

    @serialised
    def png(self) -> bytes:
        """The picture of the current state, drawn whole, as PNG bytes (opaque RGB)."""
        self._restore()
        with projector_fonts():
            if not self._laid_out:
                self.update()
            return self.renderer.full()

    # -- display --------------------------------------------------------------------------------

    @serialised
    def close(self) -> None:
        """Close the explorer's widgets in the kernel and the page, and drop its pictures.

        Its cell shows nothing live any more; running the cell again, which calls this for
        the explorers of the cell's earlier runs, shows a new one.
        """
        self._closed = True
        self._ahead_plans += 1  # a picture already scheduled is dropped
        self._ahead, self._ahead_rest = [], []
        if self._ahead_handle is not None:
            self._ahead_handle.cancel()
            self._ahead_handle = None
        for held in vars(self).values():  # the widgets shown and those kept aside
            for widget in _widgets_in(held):
                _close_tree(widget)
        self.renderer.forget()
        self.figure.clear()

    def _replace_earlier_runs(self) -> None:
        cell, request = _current_run()
        if cell is None:
            return
        kept = []
        for run, ref in _SHOWN_IN_CELL.get(cell, []):
            other = ref()
            if other is None or other is self:
                continue
            if run == request:  # a cell that shows two explorers keeps both
                kept.append((run, ref))
            elif not getattr(other, "_closed", False):
                other.close()
        _SHOWN_IN_CELL[cell] = [*kept, (request, weakref.ref(self))]

    def _repr_mimebundle_(self, include=None, exclude=None, **kwargs):
        """The live widget, plus a PNG and a note for front ends that cannot show widgets."""
        self._replace_earlier_runs()
        bundle = dict(self.widget._repr_mimebundle_(include=include, exclude=exclude) or {})
        bundle["image/png"] = base64.b64encode(self.png()).decode("ascii")
        bundle["text/plain"] = LIVE_NOTE.format(name=type(self).__name__)
        return bundle
