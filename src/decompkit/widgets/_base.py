"""Shared machinery of the explorers: one Figure per explorer, re-rendered into an Image.

Each explorer draws its matplotlib Figure once (no pyplot). A control change updates the
existing artists in place and re-renders the same Figure to PNG bytes that replace
``Image.value``: no new figure per event, no flicker. Rendering is layered: the static part
of the figure is drawn once and kept as pixels; the artists that move are declared as
layers, each repainted only when its key changes and otherwise copied from a small cache;
one layer may hold *sprites* (non-overlapping texts or axes) repainted one by one. The
layout is computed on the first render and after a change of structure only.

Sliders use ``continuous_update=True``: an update takes well under 100 ms (see
``bench/bench_widgets.py``), and the widget front end sends at most one pending change at a
time and keeps only the latest value, so a slow kernel never builds up a backlog.
"""

from __future__ import annotations

import base64
import html
import struct
import zlib
from collections import OrderedDict
from contextlib import contextmanager

import ipywidgets as widgets
import numpy as np
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import to_rgba
from matplotlib.figure import Figure
from matplotlib.transforms import Bbox

__all__: list[str] = []

#: Resolution of the rendered figures. Below 80 the tick labels get hard to read; above it the
#: PNG grows and encoding time grows with it.
DPI = 80

#: zlib level for the PNG. Level 1 with no row filter encodes a line drawing with flat colours
#: about three times faster than Pillow's default (adaptive filters, level 6) and the file is
#: no larger.
_PNG_LEVEL = 1

#: Images kept per layer, most recently used first: moving a slider back and forth, or a
#: critical path that flips between two routes, then costs no repaint. Each is one RGBA
#: copy of the figure (about 1.8 MB at 800 x 560 pixels).
_CACHED_IMAGES = 4

#: Width of slider descriptions, so that the sliders of one explorer line up.
_STYLE = {"description_width": "110px"}

LIVE_NOTE = (
    "{name}: the live controls need a running Jupyter kernel with ipywidgets; "
    "the image shows the explorer's current state."
)


def _checked(name, value, low, high):
    """Refuse a start value outside a control's range: a slider would clamp it silently."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{name} must be a number, got {value!r}")
    if not low <= value <= high:
        raise ValueError(f"{name} must be in [{low:g}, {high:g}], got {value!r}")
    return value


def float_slider(name, value, low, high, step, description, tooltip, *, fmt=".2f"):
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
        style=_STYLE,
    )


def int_slider(name, value, low, high, description, tooltip, *, step=1):
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
        style=_STYLE,
    )


def _png_chunk(tag: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data))


def encode_png(rgba) -> bytes:
    """PNG bytes of an ``(height, width, 4)`` uint8 RGBA buffer, written as opaque RGB.

    Each row gets filter type 0 (none); see the PNG specification, sections 9 and 11.
    """
    pixels = np.asarray(rgba)
    height, width = pixels.shape[:2]
    rows = np.empty((height, 1 + 3 * width), dtype=np.uint8)
    rows[:, 0] = 0
    rows[:, 1:] = pixels[:, :, :3].reshape(height, 3 * width)
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)  # 8-bit RGB
    return b"".join(
        [
            b"\x89PNG\r\n\x1a\n",
            _png_chunk(b"IHDR", header),
            _png_chunk(b"IDAT", zlib.compress(rows.tobytes(), _PNG_LEVEL)),
            _png_chunk(b"IEND", b""),
        ]
    )


def _outer_pixels(extents):
    """Whole-pixel box that covers ``(x0, y0, x1, y1)``."""
    x0, y0, x1, y1 = extents
    return int(np.floor(x0)), int(np.floor(y0)), int(np.ceil(x1)), int(np.ceil(y1))


def _look(artist):
    """What a sprite looks like, as far as updates change it: its repaint key.

    A Text: its string, colour, position and box colours. An Axes (its own decorations; the
    layered artists in it are drawn apart): its limits and tick labels.
    """
    if isinstance(artist, Axes):
        labels = (t.get_text() for t in (*artist.get_xticklabels(), *artist.get_yticklabels()))
        return (artist.get_xlim(), artist.get_ylim(), tuple(labels))
    look = (artist.get_text(), to_rgba(artist.get_color()), tuple(artist.get_position()))
    patch = artist.get_bbox_patch()
    if patch is not None:
        look += (tuple(patch.get_facecolor()), tuple(patch.get_edgecolor()))
    return look


def _extent(artist, renderer):
    """Display box of what painting the sprite covers."""
    if isinstance(artist, Axes):
        return artist.get_tightbbox(renderer)
    extents = [artist.get_window_extent(renderer)]
    if artist.get_bbox_patch() is not None:
        extents.append(artist.get_bbox_patch().get_window_extent(renderer))
    return Bbox.union(extents)


def error_html(message: str) -> str:
    """Status text for a rejected setting."""
    return f'<span style="color:#D55E00"><b>Not computed:</b> {html.escape(message)}</span>'


def rows_html(rows, *, header=None) -> str:
    """A small HTML table from rows of already formatted cells."""
    head = ""
    if header is not None:
        head = "<tr>" + "".join(f"<th>{html.escape(str(h))}</th>" for h in header) + "</tr>"
    body = "".join(
        "<tr>" + "".join(f"<td>{html.escape(str(cell))}</td>" for cell in row) + "</tr>"
        for row in rows
    )
    return f'<table style="border-collapse:collapse">{head}{body}</table>'


class Explorer:
    """Base class of the explorers: controls, one Figure, its rendering and the display.

    Attributes
    ----------
    controls : dict of str to ipywidgets.Widget
        The controls by name; changing a value redraws the figure.
    figure : matplotlib.figure.Figure
        The explorer's only figure (not registered with pyplot).
    image : ipywidgets.Image
        The figure rendered as PNG.
    readout : ipywidgets.HTML
        The numbers behind the figure for the current setting.
    status : ipywidgets.HTML
        Empty, or the message of the ValueError that rejected the current setting.
    widget : ipywidgets.Box
        The whole explorer, ready to display.
    values : dict
        The numbers drawn for the current setting (set by each explorer's refresh).
    renders : int
        How many times the image has been rendered.
    """

    def __init__(self, figsize, *, dpi=DPI):
        self.figure = Figure(figsize=figsize, dpi=dpi, layout="constrained")
        FigureCanvasAgg(self.figure)
        self.image = widgets.Image(format="png")
        self.readout = widgets.HTML()
        self.status = widgets.HTML()
        self.controls: dict[str, widgets.Widget] = {}
        self.widget: widgets.Box = widgets.VBox()
        #: Layers of artists that updates repaint, their keys and cached images.
        self._layers: list = []
        self._keys: list = []
        self._cache: list = []
        self._sprites = None
        self._painted: dict = {}
        self._background = None
        self._frozen = False
        self._overlays = None
        self._muted = False
        #: Set by a refresh that changed the figure's structure: the next render lays it out.
        self._relayout = False
        #: Number of renders so far (each replaced ``image.value``).
        self.renders = 0

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
        """Recompute, update the figure in place and re-render it into :attr:`image`.

        Parameters
        ----------
        full : bool
            Lay the figure out again and draw it whole (after a change of structure).

        Returns
        -------
        bool
            False when the compute functions rejected the setting with a ValueError; the
            message is then shown in :attr:`status` and the image keeps the last good state.
        """
        try:
            self._refresh()
        except ValueError as err:
            self.status.value = error_html(str(err))
            return False
        self.status.value = ""
        self.render(full=full)
        return True

    # -- rendering ------------------------------------------------------------------------------

    def _set_layers(self, *layers, sprites=None, keep_background=False):
        """Declare the artists that updates repaint, as layers from back to front.

        Each layer is a list of artists. The last layer is repainted on every update. Every
        other layer ``i`` is repainted only when ``self._keys[i]`` changed (or a layer behind
        it was repainted); otherwise its pixels come from a cache. A colorbar whose scale
        moves with one slider only, say, goes in an early layer keyed by that slider. All
        layered artists are left out of the static background. Drops every cached image.

        ``sprites`` names one layer (not the last) of texts and axes that do not overlap one
        another, say the boxes of a graph's tasks and the frame of a chart beside it. When
        only that layer is out of date, just the sprites whose look changed are erased and
        repainted, not the whole layer.

        ``keep_background=True`` promises that the static part of the figure is unchanged
        (say, one hidden axes swapped for another) and that the keys tell the old layers from
        the new ones: the background is not drawn again and the cached images stay.
        """
        for artist in (a for layer in self._layers for a in layer):
            artist.set_animated(False)
        self._layers = [list(layer) for layer in layers]
        for artist in (a for layer in self._layers for a in layer):
            artist.set_animated(True)
        self._keys = [None] * max(len(self._layers) - 1, 0)
        self._sprites = None if sprites is None else sprites % len(self._layers)
        self._painted = {}  # sprite -> (look, pixel box) when last painted
        if not (keep_background and len(self._cache) == len(self._keys)):
            self._background = None

    def _replace_layer(self, index, artists):
        """Swap the artists of one layer (say, redrawn by a plot function) in place."""
        index %= len(self._layers)
        for artist in self._layers[index]:
            artist.set_animated(False)
        self._layers[index] = list(artists)
        for artist in self._layers[index]:
            artist.set_animated(True)
        for i in range(index, len(self._cache)):
            self._cache[i].clear()
        if index == self._sprites:
            self._painted = {}

    def render(self, *, full: bool = False):
        """Re-render the figure into :attr:`image`.

        The first render, or one with ``full=True`` (after a change of structure), lays the
        figure out and draws it whole; the layout then stays fixed, which keeps the costly
        layout pass out of ordinary updates. When the explorer has layers (see
        :meth:`_set_layers`), the static rest is kept as a pixel background and an update
        repaints only the layers on a copy of it; otherwise the figure is drawn whole, on the
        fixed layout.
        """
        canvas = self.figure.canvas
        blitting = bool(self._layers)
        drawn = False
        if full or self._relayout or not self._frozen:
            self._relayout = False
            self.figure.set_layout_engine("constrained")
            canvas.draw()
            self.figure.set_layout_engine("none")
            self._frozen, drawn = True, True
            self._background = None
        if blitting and self._background is None:
            if not drawn:
                canvas.draw()
            self._background = canvas.copy_from_bbox(self.figure.bbox)
            self._cache = [OrderedDict() for _ in self._keys]
            self._overlays = None
        elif not blitting and not drawn:
            canvas.draw()
        if blitting:
            self._blit()
        self.image.value = self._encode()
        self.renders += 1

    def _before_layers(self):
        """Hook run before the layers are painted, on the final layout (default: nothing)."""

    def _blit(self):
        """Repaint the layers on the cached background, reusing every still valid layer."""
        canvas = self.figure.canvas
        self._before_layers()
        base, first = self._background, 0
        for i, cache in enumerate(self._cache):
            hit = cache.get(tuple(self._keys[: i + 1]))
            if hit is None:
                break
            cache.move_to_end(tuple(self._keys[: i + 1]))
            (base, painted), first = hit, i + 1
            if i == self._sprites:
                self._painted = dict(painted)
        if first == self._sprites:
            # The latest image of this layer over the same layers behind: patch it sprite by
            # sprite instead of repainting the whole layer.
            behind = tuple(self._keys[:first])
            stale = [entry for key, entry in self._cache[first].items() if key[:first] == behind]
            if stale:
                canvas.restore_region(stale[-1][0])
                self._painted = dict(stale[-1][1])
                self._paint_sprites(erase_from=base)
                base = self._keep(first)
                first += 1
        for i in range(first, len(self._layers)):
            if i == first:
                canvas.restore_region(base)
            if i == self._sprites:
                self._painted = {}
                self._paint_sprites(erase_from=None)
            else:
                for artist in self._layers[i]:
                    self.figure.draw_artist(artist)
            if i < len(self._cache):
                base = self._keep(i)
        # Legends and spines belong on top: paint their pixels back from the background.
        height = self.figure.bbox.height
        for x0, y0, x1, y1 in self._overlay_boxes():
            # Agg rows count from the top; display coordinates from the bottom.
            box = (x0, height - y1, x1, height - y0)
            canvas.restore_region(self._background, bbox=box, xy=(0, 0))

    def _keep(self, i):
        """Cache the canvas as layer ``i``'s image under the current keys; return the image."""
        image = self.figure.canvas.copy_from_bbox(self.figure.bbox)
        cache = self._cache[i]
        cache[tuple(self._keys[: i + 1])] = (image, dict(self._painted))
        while len(cache) > _CACHED_IMAGES:
            cache.popitem(last=False)
        return image

    def _paint_sprites(self, erase_from):
        """Paint the sprites whose look changed, first erasing where they were painted."""
        canvas = self.figure.canvas
        renderer = canvas.get_renderer()
        width, height = self.figure.bbox.width, self.figure.bbox.height
        for artist in self._layers[self._sprites]:
            look = _look(artist)
            painted = self._painted.get(artist)
            if painted is not None and painted[0] == look:
                continue
            if painted is not None and erase_from is not None:
                canvas.restore_region(erase_from, bbox=painted[1], xy=(0, 0))
            self.figure.draw_artist(artist)
            x0, y0, x1, y1 = _outer_pixels(_extent(artist, renderer).extents)
            # Agg rows from the top; 2 pixels more for the border and its antialiasing.
            box = (
                max(x0 - 2, 0),
                max(height - y1 - 2, 0),
                min(x1 + 2, width),
                min(height - y0 + 2, height),
            )
            self._painted[artist] = (look, box)

    def _overlay_boxes(self):
        """Pixel boxes of the legends and axes spines, which belong on top of the curves.

        The layout is frozen while blitting, so the boxes are computed once per background.
        """
        if self._overlays is None:
            renderer = self.figure.canvas.get_renderer()
            artists = []
            for ax in self.figure.axes:
                if ax.get_animated() or not ax.get_visible():  # not in the background
                    continue
                artists += [spine for spine in ax.spines.values() if spine.get_visible()]
                if ax.get_legend() is not None:
                    artists.append(ax.get_legend())
            self._overlays = [
                _outer_pixels(artist.get_window_extent(renderer).extents) for artist in artists
            ]
        return self._overlays

    def _encode(self) -> bytes:
        return encode_png(self.figure.canvas.buffer_rgba())

    # -- display --------------------------------------------------------------------------------

    def _repr_mimebundle_(self, include=None, exclude=None, **kwargs):
        """The live widget, plus a PNG and a note for front ends that cannot show widgets."""
        bundle = dict(self.widget._repr_mimebundle_(include=include, exclude=exclude) or {})
        bundle["image/png"] = base64.b64encode(self.image.value).decode("ascii")
        bundle["text/plain"] = LIVE_NOTE.format(name=type(self).__name__)
        return bundle
