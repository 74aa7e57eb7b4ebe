"""The fast path of the explorers: layered rendering, the PNG encoder and the figure view.

Why it exists (``bench/bench_browser.py`` measures it in a real browser): a control change
must reach the screen as a new picture within about 50 ms. Three things keep it there.

- *Layers.* The static part of a figure is drawn once and kept as pixels; the artists that
  move are declared as layers, each repainted only when its key changes and otherwise copied
  from a small cache; one layer may hold *sprites* (non-overlapping texts or axes) repainted
  one by one. The layout is computed on the first render and after a change of structure.
- *Changed pixels only.* :class:`FigureView` keeps a key frame (a whole PNG) in the browser
  and, per update, receives PNGs of just the rectangles that differ from it. The key frame
  plus the current rectangles is always the whole picture, so a saved widget state shows it.
- *The pixel density of the screen.* The view reports ``devicePixelRatio`` and the figure is
  rendered at ``96 * ratio`` dots per inch, shown at its CSS size: no browser scaling, no soft
  text, and no more pixels than the screen has.
"""

from __future__ import annotations

import struct
import zlib
from collections import OrderedDict

import anywidget
import numpy as np
import traitlets
from ipywidgets import widget_serialization
from matplotlib.axes import Axes
from matplotlib.colors import to_rgba
from matplotlib.transforms import Bbox

from ._frontend import ESM as _ESM

__all__: list[str] = []

#: CSS pixels per inch: a figure of w inches is shown w * 96 CSS pixels wide, and a font of
#: s points is s * 96 / 72 CSS pixels tall (9 pt -> 12 px).
CSS_DPI = 96
#: Highest device pixel ratio rendered for; a 3x phone gets 2x pixels, scaled by the browser.
MAX_RATIO = 2.0

#: zlib level for the PNG. Level 1 with no row filter encodes a line drawing with flat colours
#: about three times faster than Pillow's default (adaptive filters, level 6) and the file is
#: no larger.
_PNG_LEVEL = 1

#: Images kept per layer, most recently used first: moving a slider back and forth, or a
#: critical path that flips between two routes, then costs no repaint.
_CACHED_IMAGES = 4

#: Changed columns closer than this (device pixels) go into one rectangle.
_GAP = 24
#: More changed rectangles than this are sent as the one rectangle around them all.
_MAX_TILES = 4
#: Pictures computed ahead per pause of the kernel, and the pause (seconds) between batches:
#: short batches keep the kernel free for the next real change.
_PREFETCH_BATCH = 1
_PREFETCH_PAUSE = 0.005
#: Messages of pictures ahead on their way to the browser at most (it acknowledges each).
_IN_FLIGHT = 2
#: Slider steps computed ahead on each side of the current value, for the control moved last
#: and for every other slider.
_AHEAD_MOVED = 60
_AHEAD_OTHERS = 4


def _png_chunk(tag: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data))


def encode_png(rgba) -> bytes:
    """PNG bytes of an ``(height, width, 4)`` uint8 RGBA buffer, written as opaque RGB.

    Each row gets filter type 0 (none); see the PNG specification, sections 9 and 11.

    Examples
    --------
    >>> png = encode_png(np.zeros((2, 3, 4), dtype=np.uint8))
    >>> png[:8] == b"\\x89PNG\\r\\n\\x1a\\n", struct.unpack(">II", png[16:24])
    (True, (3, 2))
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


def changed_boxes(old, new):
    """Rectangles ``(x0, y0, x1, y1)`` (pixels, y down) that hold every pixel that differs.

    Columns that changed are grouped into runs (closer than ``_GAP`` pixels: one run); each
    run becomes one rectangle, from its first to its last changed row.

    Examples
    --------
    >>> a = np.zeros((10, 100, 4), dtype=np.uint8)
    >>> b = a.copy(); b[2:4, 5:8] = 255; b[6, 90] = 1
    >>> changed_boxes(a, b)
    [(5, 2, 8, 4), (90, 6, 91, 7)]
    """
    diff = np.any(old != new, axis=2)
    columns = np.flatnonzero(diff.any(axis=0))
    if columns.size == 0:
        return []
    breaks = np.flatnonzero(np.diff(columns) > _GAP)
    starts = np.concatenate([columns[:1], columns[breaks + 1]])
    ends = np.concatenate([columns[breaks], columns[-1:]]) + 1
    boxes = []
    for x0, x1 in zip(starts.tolist(), ends.tolist(), strict=True):
        rows = np.flatnonzero(diff[:, x0:x1].any(axis=1))
        boxes.append((x0, int(rows[0]), x1, int(rows[-1]) + 1))
    return boxes


#: How long the browser waits for the kernel's answer before it says the picture is saved.
_PING_TIMEOUT_MS = 4000
#: Pictures the browser keeps by setting (sent ahead or seen), most recent first.
_CACHE_SIZE = 1500


class FigureView(anywidget.AnyWidget):
    """A figure shown at its CSS size on a canvas: a key frame and the rectangles changed since.

    Attributes
    ----------
    frame : bytes
        PNG of the key frame, at ``ratio`` device pixels per CSS pixel.
    tiles : list of dict
        ``{"x", "y", "png"}``: rectangles that differ from the key frame, drawn over it.
    seq : int
        Counts the pictures sent; every update sends a new one, even an unchanged picture.
    keyframe : int
        Counts the key frames; pictures sent ahead are rectangles over key frame ``keyframe``.
    setting : str
        The key of the setting the picture shows (see :func:`setting_key`).
    controls : list of ipywidgets.Widget
        The controls whose values the key is made of, in order; the view watches them and
        draws a picture sent ahead as soon as one matches, without waiting for the kernel.
    stepper : list
        ``[slider, back_button, forward_button]`` of a stepper whose buttons the view handles
        itself (one slider step, at once), or empty.
    css_width, css_height : int
        Size of the figure on the page, in CSS pixels.
    ratio : float
        The browser's ``devicePixelRatio`` (at most 2), reported by the view.
    alt : str
        Text alternative of the picture.
    """

    _esm = _ESM % {
        "max_ratio": MAX_RATIO,
        "timeout_ms": _PING_TIMEOUT_MS,
        "cache_size": _CACHE_SIZE,
    }
    frame = traitlets.Bytes(b"").tag(sync=True)
    tiles = traitlets.List().tag(sync=True)
    seq = traitlets.Int(0).tag(sync=True)
    keyframe = traitlets.Int(0).tag(sync=True)
    setting = traitlets.Unicode("").tag(sync=True)
    controls = traitlets.List().tag(sync=True, **widget_serialization)
    stepper = traitlets.List().tag(sync=True, **widget_serialization)
    css_width = traitlets.Int(0).tag(sync=True)
    css_height = traitlets.Int(0).tag(sync=True)
    ratio = traitlets.Float(1.0).tag(sync=True)
    alt = traitlets.Unicode("").tag(sync=True)

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self._key = None  # the key frame's pixels
        #: Messages of pictures sent ahead that the browser has not acknowledged yet.
        self.in_flight = 0
        #: Called when the browser acknowledges pictures sent ahead.
        self.on_ack = None
        self.on_msg(self._answer)

    def _answer(self, _widget, content, _buffers):
        kind = content.get("type") if isinstance(content, dict) else None
        if kind == "ping":
            self.send({"type": "pong"})
        elif kind == "ack":
            self.in_flight = max(self.in_flight - 1, 0)
            if self.on_ack is not None:
                self.on_ack()

    def tiles_for(self, rgba):
        """``(boxes, pngs)``: the rectangles of ``rgba`` that differ from the key frame."""
        pixels = np.asarray(rgba)
        boxes = changed_boxes(self._key, pixels)
        if len(boxes) > _MAX_TILES:
            x0s, y0s, x1s, y1s = zip(*boxes, strict=True)
            boxes = [(min(x0s), min(y0s), max(x1s), max(y1s))]
        return boxes, [encode_png(pixels[y0:y1, x0:x1]) for x0, y0, x1, y1 in boxes]

    def show(self, rgba, css_size, *, key="", keyframe=False):
        """Send the picture ``rgba`` (H x W x 4 uint8) of setting ``key``.

        Rectangles that differ from the key frame are sent, or with ``keyframe=True`` (a new
        layout), or a new size, the whole picture as the new key frame.
        """
        pixels = np.asarray(rgba)
        with self.hold_sync():
            if keyframe or self._key is None or self._key.shape != pixels.shape:
                self._key = pixels.copy()
                self.frame = encode_png(pixels)
                self.keyframe += 1
                tiles = []
            else:
                boxes, pngs = self.tiles_for(pixels)
                tiles = [
                    {"x": x0, "y": y0, "png": png}
                    for (x0, y0, _, _), png in zip(boxes, pngs, strict=True)
                ]
            self.tiles = tiles
            self.setting = key
            self.css_width, self.css_height = (round(v) for v in css_size)
            self.seq += 1

    def send_ahead(self, entries):
        """Send pictures of settings not shown yet, ``[(key, (boxes, pngs)), ...]``."""
        meta, buffers = [], []
        for key, (boxes, pngs) in entries:
            meta.append({"key": key, "tiles": [[x0, y0] for x0, y0, _, _ in boxes]})
            buffers += pngs
        self.send({"type": "ahead", "keyframe": self.keyframe, "entries": meta}, buffers)
        self.in_flight += 1


def setting_key(pairs) -> str:
    """The key of a setting, ``[(control, value), ...]``, as the view's script writes it.

    A slider's value counts as its step number from the minimum, so the kernel's and the
    browser's floating-point values give one key; a checkbox is 1 or 0; anything else its text.

    Examples
    --------
    >>> import ipywidgets as w
    >>> setting_key([(w.FloatSlider(min=0.5, step=0.01), 0.53), (w.Checkbox(), True)])
    '3|1'
    """
    parts = []
    for control, value in pairs:
        step = getattr(control, "step", None)
        if isinstance(value, bool):
            parts.append("1" if value else "0")
        elif isinstance(value, (int, float)) and isinstance(step, (int, float)) and step > 0:
            parts.append(str(round((value - control.min) / step)))
        else:
            parts.append(str(value))
    return "|".join(parts)


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
        look += (
            tuple(patch.get_facecolor()),
            tuple(patch.get_edgecolor()),
            patch.get_hatch(),
            patch.get_linestyle(),
            patch.get_linewidth(),
        )
    return look


def _extent(artist, renderer):
    """Display box of what painting the sprite covers."""
    if isinstance(artist, Axes):
        return artist.get_tightbbox(renderer)
    extents = [artist.get_window_extent(renderer)]
    if artist.get_bbox_patch() is not None:
        extents.append(artist.get_bbox_patch().get_window_extent(renderer))
    return Bbox.union(extents)


class LayeredRendering:
    """Mixin of :class:`~decompkit.widgets._base.Explorer`: draws ``self.figure`` in layers.

    The explorer declares its moving artists with :meth:`_set_layers` and sets
    ``self._keys`` in its refresh; :meth:`_draw_frame` then brings the canvas up to date.
    """

    def _init_layers(self):
        #: Layers of artists that updates repaint, their keys and cached images.
        self._layers: list = []
        self._keys: list = []
        self._cache: list = []
        self._sprites = None
        self._painted: dict = {}
        self._background = None
        self._frozen = False
        self._overlays = None
        #: Set by a refresh that changed the figure's structure: the next render lays it out.
        self._relayout = False

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

    def _invalidate(self):
        """Forget the layout and every cached pixel (after a change of size or resolution)."""
        self._frozen = False
        self._background = None

    def _draw_frame(self, *, full=False) -> bool:
        """Bring the canvas up to date; the first call, or ``full=True``, lays out the figure.

        Returns True when the figure was laid out (a new key frame for the view).

        The layout then stays fixed, which keeps the costly layout pass out of ordinary
        updates. When the explorer has layers, the static rest is kept as a pixel background
        and an update repaints only the layers on a copy of it; otherwise the figure is drawn
        whole, on the fixed layout.
        """
        canvas = self.figure.canvas
        blitting = bool(self._layers)
        drawn = laid_out = False
        if full or self._relayout or not self._frozen:
            laid_out = True
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
        return laid_out

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
