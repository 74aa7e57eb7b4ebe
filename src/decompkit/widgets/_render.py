"""The explorers' pictures: a background drawn once per layout, and a scene per update.

Why it is built this way (``bench/bench_browser.py`` measures it in a real browser): a control
change must reach the screen within about 50 ms, on a shared 2-core machine too, so an update
must cost little in the kernel, on the wire and in the browser. matplotlib draws each figure
once per layout, without its moving artists, and that PNG is the *background*. On every
update the moving artists are drawn through :class:`SceneRecorder`, a matplotlib renderer
that writes down what it is asked to draw instead of painting pixels: paths (curves, bars,
boxes, arrows, ticks) become vertex lists with their colours, width, dashes, hatch and clip,
in device pixels; each line of text becomes a small bitmap that Agg renders as in a full draw,
kept by its look (string, font, colour) and sent to the browser once. The browser
(``explorer.js``) paints the background and the scene on a canvas. So an update costs the
kernel about a millisecond plus a few for any text it has not drawn before, and sends a few
kilobytes; no picture is encoded or decoded on the way.

The figure is rendered at ``96 * devicePixelRatio`` dots per inch and shown at its CSS size
(no browser scaling, no soft text), as wide as the notebook gives it.
"""

from __future__ import annotations

import hashlib
import math
import pathlib
import struct
import time
import zlib
from collections import OrderedDict

import anywidget
import numpy as np
import traitlets
from ipywidgets import widget_serialization
from matplotlib.backend_bases import GraphicsContextBase, RendererBase
from matplotlib.backends.backend_agg import RendererAgg
from matplotlib.path import Path
from matplotlib.transforms import Affine2D

__all__: list[str] = []

#: CSS pixels per inch: a figure of w inches is shown w * 96 CSS pixels wide, and a font of
#: s points is s * 96 / 72 CSS pixels tall (9 pt -> 12 px).
CSS_DPI = 96
#: Highest device pixel ratio rendered for; a 3x phone gets 2x pixels, scaled by the browser.
#: explorer.js has the same bound.
MAX_RATIO = 2.0
#: zlib level of the PNGs: level 1 with no row filter is several times faster than Pillow's
#: default on flat line drawings, and the file is no larger.
_PNG_LEVEL = 1
#: Bitmaps (texts, hatch tiles, images) kept by look in the kernel, most recent last.
_SPRITES = 4000
#: matplotlib's cap styles by their canvas names.
_CAPS = {"butt": "butt", "projecting": "square", "round": "round"}


def _png_chunk(tag: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data))


def encode_png(rgba, *, alpha: bool = False) -> bytes:
    """PNG bytes of an ``(height, width, 4)`` uint8 RGBA buffer: opaque RGB, or RGBA.

    Each row gets filter type 0 (none); see the PNG specification, sections 9 and 11.

    Examples
    --------
    >>> png = encode_png(np.zeros((2, 3, 4), dtype=np.uint8))
    >>> png[:8] == b"\\x89PNG\\r\\n\\x1a\\n", struct.unpack(">II", png[16:24])
    (True, (3, 2))
    """
    pixels = np.asarray(rgba)
    height, width = pixels.shape[:2]
    channels = 4 if alpha else 3
    rows = np.empty((height, 1 + channels * width), dtype=np.uint8)
    rows[:, 0] = 0
    rows[:, 1:] = pixels[:, :, :channels].reshape(height, channels * width)
    colour_type = 6 if alpha else 2  # 8-bit RGBA or RGB
    header = struct.pack(">IIBBBBB", width, height, 8, colour_type, 0, 0, 0)
    return b"".join(
        [
            b"\x89PNG\r\n\x1a\n",
            _png_chunk(b"IHDR", header),
            _png_chunk(b"IDAT", zlib.compress(rows.tobytes(), _PNG_LEVEL)),
            _png_chunk(b"IEND", b""),
        ]
    )


def _css(rgba) -> str:
    """A canvas colour from an RGBA tuple of floats in [0, 1]."""
    r, g, b, a = (float(v) for v in rgba)
    return f"rgba({round(255 * r)},{round(255 * g)},{round(255 * b)},{round(a, 4):g})"


def _round(value) -> int:
    """Round half up, as Agg rounds pixel positions."""
    return math.floor(value + 0.5)


def _snaps(vertices, codes, snap) -> bool:
    """Whether Agg snaps this path to the pixel grid: crisp axis-parallel lines.

    It snaps a path made of horizontal and vertical segments only, or any path when ``snap``
    is True (matplotlib's ``PathSnapper``).
    """
    if snap is False or len(vertices) < 2:
        return False
    if snap is None:
        if len(vertices) > 1024 or not np.isfinite(vertices).all():
            return False
        if codes is not None and np.any((codes == Path.CURVE3) | (codes == Path.CURVE4)):
            return False
        steps = np.abs(np.diff(vertices, axis=0))
        lines = np.ones(len(steps), bool) if codes is None else codes[1:] == Path.LINETO
        if np.any(lines & (steps[:, 0] >= 1e-4) & (steps[:, 1] >= 1e-4)):
            return False
    return True


def _snapped(vertices, width):
    """Vertices on pixel centres for odd stroke widths (pixels), on pixel corners for even."""
    return np.floor(vertices + 0.5) + (0.5 if _round(width) % 2 else 0.0)


class Sprites:
    """Bitmaps by look, each with the id the browser keeps it under (most recent last)."""

    def __init__(self, limit: int = _SPRITES):
        self._by_look: OrderedDict = OrderedDict()
        self._limit = limit
        self._made = 0
        #: How many bitmaps have been rendered (a look seen before costs nothing).
        self.rendered = 0

    def get(self, look, make):
        """``(id, png, dx, dy)`` of the bitmap with this look; ``make()`` renders a new one."""
        hit = self._by_look.get(look)
        if hit is None:
            png, dx, dy = make()
            self._made += 1
            self.rendered += 1
            hit = (f"{self._made:x}", png, dx, dy)
            self._by_look[look] = hit
            while len(self._by_look) > self._limit:
                self._by_look.popitem(last=False)
        else:
            self._by_look.move_to_end(look)
        return hit


class SceneRecorder(RendererBase):
    """A matplotlib renderer that records drawing commands for the browser's canvas.

    ``artist.draw(recorder)`` appends to :attr:`items` one dict per drawing call, in device
    pixels with y downwards, and to :attr:`used` the PNG of every bitmap the items name:

    - ``{"t": "p", "xy", "c", ...}``: a path (float32 vertices, uint8 Path codes), filled
      (``fill``), hatched (``hatch``: id of the tile) and stroked (``stroke``, ``lw``,
      ``dash``, ``off``, ``cap``, ``join``);
    - ``{"t": "m", "xy", "c", "at", ...}``: one marker path painted at every point of ``at``;
    - ``{"t": "i", "id", "x", "y"[, "w", "h"]}``: a bitmap (a line of text, an image, a
      mesh of flat cells scaled without smoothing).

    Any item may carry ``clip``: ``[x0, y0, x1, y1]``. Text metrics come from the figure's
    own Agg renderer, so the layout is the one of a full draw, and each line of text is drawn
    by Agg at its own fraction of a pixel: the scene paints what a full draw paints.
    """

    def __init__(self, agg: RendererAgg, sprites: Sprites):
        super().__init__()
        self._agg = agg
        self.width, self.height, self.dpi = agg.width, agg.height, agg.dpi
        self.sprites = sprites
        self.items: list[dict] = []
        self.used: dict[str, bytes] = {}

    # -- what matplotlib asks a renderer ------------------------------------------------------

    def flipy(self):
        return True

    def get_canvas_width_height(self):
        return self.width, self.height

    def get_text_width_height_descent(self, s, prop, ismath):
        return self._agg.get_text_width_height_descent(s, prop, ismath)

    def points_to_pixels(self, points):
        return points * self.dpi / 72

    def option_image_nocomposite(self):
        return True

    def new_gc(self):
        return GraphicsContextBase()

    # -- drawing ------------------------------------------------------------------------------

    def draw_path(self, gc, path, transform, rgbFace=None):
        item = self._paint(gc, rgbFace)
        if item is not None:
            tpath = transform.transform_path(path)
            vertices = self._down(tpath.vertices)
            if _snaps(vertices, tpath.codes, gc.get_snap()):
                vertices = _snapped(vertices, item.get("lw", 0))
            self._add(item, gc, vertices, tpath.codes)

    def draw_markers(self, gc, marker_path, marker_trans, path, trans, rgbFace=None):
        item = self._paint(gc, rgbFace)
        if item is None:
            return
        points = [v[-2:] for v, _ in path.iter_segments(trans, simplify=False) if len(v)]
        if not points:
            return
        marker = marker_trans.transform_path(marker_path)
        shape = marker.vertices * (1, -1)
        if _snaps(shape, marker.codes, gc.get_snap()):
            shape = _snapped(shape, item.get("lw", 0))
        else:  # Agg centres a marker it does not snap (a circle) on the pixel's centre
            shape = shape + 0.5
        # Agg puts each marker on a whole pixel.
        item["at"] = np.floor(self._down(np.array(points, float)) + 0.5).astype("<f4").tobytes()
        item["t"] = "m"
        self._add(item, gc, shape, marker.codes)

    def draw_text(self, gc, x, y, s, prop, angle, ismath=False, mtext=None):
        if ismath == "TeX":
            raise NotImplementedError("the explorers' scenes draw no TeX text")
        # Agg places glyphs to 1/64 pixel: a bitmap is kept per string and phase.
        xi, yi = math.floor(x), math.floor(y)
        fx, fy = round(64 * (x - xi)), round(64 * (y - yi))
        if fx == 64:  # a hair below a whole pixel is the whole pixel
            xi, fx = xi + 1, 0
        if fy == 64:
            yi, fy = yi + 1, 0
        look = (
            "text",
            fx,
            fy,
            s,
            prop.get_fontconfig_pattern(),
            prop.get_math_fontfamily(),
            tuple(gc.get_rgb()),
            gc.get_alpha() if gc.get_forced_alpha() else None,
            angle,
            ismath,
            gc.get_antialiased(),
            self.dpi,
        )
        sid, png, dx, dy = self.sprites.get(
            look, lambda: self._text_bitmap(gc, fx / 64, fy / 64, s, prop, angle, ismath, mtext)
        )
        self.used[sid] = png
        self._add({"t": "i", "id": sid, "x": xi + dx, "y": yi + dy}, gc)

    def draw_image(self, gc, x, y, im, transform=None):
        pixels = np.ascontiguousarray(im)
        height = pixels.shape[0]
        look = ("image", pixels.shape, hashlib.blake2b(pixels.tobytes(), digest_size=16).digest())
        sid, png, _, _ = self.sprites.get(look, lambda: (encode_png(pixels, alpha=True), 0, 0))
        self.used[sid] = png
        self._add({"t": "i", "id": sid, "x": _round(x), "y": _round(self.height - y - height)}, gc)

    def draw_quad_mesh(
        self,
        gc,
        master_transform,
        meshWidth,  # noqa: N803 - matplotlib's argument names
        meshHeight,  # noqa: N803
        coordinates,
        offsets,
        offsetTrans,  # noqa: N803
        facecolors,
        antialiased,
        edgecolors,
    ):
        """A mesh of flat axis-parallel cells becomes one bitmap, a pixel per cell."""
        corners = master_transform.transform(np.reshape(coordinates, (-1, 2)))
        corners = corners.reshape(meshHeight + 1, meshWidth + 1, 2)
        xs, ys = corners[0, :, 0], corners[:, 0, 1]
        edged = edgecolors is not None and len(edgecolors) and np.any(edgecolors[:, 3] > 0)
        regular = (
            np.allclose(corners[..., 0], xs[None, :])
            and np.allclose(corners[..., 1], ys[:, None])
            and np.allclose(np.diff(xs), np.diff(xs)[0])
            and np.allclose(np.diff(ys), np.diff(ys)[0])
        )
        if edged or not regular or len(offsets) > 1:
            return super().draw_quad_mesh(
                gc,
                master_transform,
                meshWidth,
                meshHeight,
                coordinates,
                offsets,
                offsetTrans,
                facecolors,
                antialiased,
                edgecolors,
            )
        cells = np.reshape(facecolors, (meshHeight, meshWidth, 4))
        cells = np.rint(np.clip(cells, 0, 1) * 255).astype(np.uint8)
        if ys[-1] > ys[0]:  # display y grows upwards, image rows downwards
            cells = cells[::-1]
        if xs[-1] < xs[0]:
            cells = cells[:, ::-1]
        pixels = np.ascontiguousarray(cells)
        look = ("cells", pixels.shape, hashlib.blake2b(pixels.tobytes(), digest_size=16).digest())
        sid, png, _, _ = self.sprites.get(look, lambda: (encode_png(pixels, alpha=True), 0, 0))
        self.used[sid] = png
        left, top = min(xs[0], xs[-1]), self.height - max(ys[0], ys[-1])
        item = {"t": "i", "id": sid, "x": float(left), "y": float(top)}
        item.update(w=float(abs(xs[-1] - xs[0])), h=float(abs(ys[-1] - ys[0])), cells=True)
        self._add(item, gc)
        return None

    # -- helpers ------------------------------------------------------------------------------

    def _down(self, vertices):
        """Display coordinates (y up) as canvas coordinates (y down), a new array."""
        out = np.array(vertices, dtype=float, copy=True)
        out[:, 1] = self.height - out[:, 1]
        return out

    def _paint(self, gc, rgb_face):
        """Fill, hatch and stroke of a path as item fields; None when nothing would show."""
        item: dict = {"t": "p"}
        if rgb_face is not None:
            face = tuple(rgb_face)
            if len(face) == 3 or gc.get_forced_alpha():
                face = face[:3] + (gc.get_alpha(),)
            if face[3] > 0:
                item["fill"] = _css(face)
        if gc.get_hatch():
            item["hatch"] = self._hatch_tile(gc)
        width = self.points_to_pixels(gc.get_linewidth())
        rgb = gc.get_rgb()
        if width > 0 and rgb[3] > 0:
            item.update(
                stroke=_css(rgb),
                lw=round(float(width), 3),
                cap=_CAPS[gc.get_capstyle()],
                join=gc.get_joinstyle(),
            )
            offset, dashes = gc.get_dashes()
            if dashes is not None and len(dashes):
                item["dash"] = [round(float(self.points_to_pixels(d)), 3) for d in dashes]
                item["off"] = round(float(self.points_to_pixels(offset or 0)), 3)
        return item if len(item) > 1 else None

    def _hatch_tile(self, gc) -> str:
        """Id of the hatch's tile: one inch square, repeated from the canvas' corner as in Agg."""
        size = int(self.dpi)
        colour = tuple(gc.get_hatch_color())
        width = gc.get_hatch_linewidth()

        def make():
            tile = RendererAgg(size, size, self.dpi)
            pen = GraphicsContextBase()
            pen.set_foreground(colour, isRGBA=True)
            pen.set_linewidth(width)
            tile.draw_path(pen, gc.get_hatch_path(), Affine2D().scale(size), colour)
            return encode_png(np.asarray(tile.buffer_rgba()), alpha=True), 0, 0

        sid, png, _, _ = self.sprites.get(("hatch", gc.get_hatch(), colour, width, size), make)
        self.used[sid] = png
        return sid

    def _text_bitmap(self, gc, fx, fy, s, prop, angle, ismath, mtext):
        """``(png, dx, dy)``: the text drawn by Agg at the anchor's fraction of a pixel
        ``(fx, fy)``, and its corner ``(dx, dy)`` from the anchor's whole pixel."""
        width, height, descent = self._agg.get_text_width_height_descent(s, prop, ismath)
        cos, sin = math.cos(math.radians(angle)), math.sin(math.radians(angle))
        # The anchor is the left end of the baseline; y grows downwards, angles turn left.
        corners = [(0, descent - height), (width, descent - height), (width, descent), (0, descent)]
        xs = [px * cos + py * sin for px, py in corners]
        ys = [py * cos - px * sin for px, py in corners]
        margin = 4  # glyphs may reach a little past their advance box
        x0, y0 = math.floor(min(xs)) - margin, math.floor(min(ys)) - margin
        x1, y1 = math.ceil(max(xs)) + margin, math.ceil(max(ys)) + margin
        scratch = RendererAgg(x1 - x0, y1 - y0, self.dpi)
        pen = GraphicsContextBase()
        pen.copy_properties(gc)
        pen.set_clip_rectangle(None)
        pen.set_clip_path(None)
        scratch.draw_text(pen, fx - x0, fy - y0, s, prop, angle, ismath=ismath, mtext=mtext)
        return encode_png(np.asarray(scratch.buffer_rgba()), alpha=True), x0, y0

    def _add(self, item, gc, vertices=None, codes=None):
        if vertices is not None:
            item["xy"] = np.asarray(vertices, "<f4").tobytes()
            if codes is not None:
                item["c"] = np.asarray(codes, np.uint8).tobytes()
        boxes = []
        rect = gc.get_clip_rectangle()
        if rect is not None:
            boxes.append(rect.extents)
        clip_path, clip_transform = gc.get_clip_path()
        if clip_path is not None:
            boxes.append(clip_transform.transform_path(clip_path).get_extents().extents)
        if boxes:
            x0, y0 = max(b[0] for b in boxes), max(b[1] for b in boxes)
            x1, y1 = min(b[2] for b in boxes), min(b[3] for b in boxes)
            top, bottom = self.height - y1, self.height - y0
            item["clip"] = [_round(x0), _round(top), _round(x1), _round(bottom)]
        self.items.append(item)

    def record(self, artists):
        """``(items, used)``: the scene of ``artists``, drawn in order.

        An Axes among them draws its frame, ticks and labels and those of its children that
        are not animated: the explorers mark the artists they record one by one as animated.
        One recorder serves every update of a figure, so that matplotlib's cache of text
        metrics (per renderer) keeps working.
        """
        self.items, self.used = [], {}
        for artist in artists:
            artist.draw(self)
        return self.items, self.used


def setting_key(pairs) -> str:
    """The key of a setting, ``[(control, value), ...]``, as the view's script writes it.

    A slider's value counts as its step number from the minimum, so the kernel's and the
    browser's floating-point values give one key; a checkbox is 1 or 0; a choice among
    options (toggle buttons: the browser knows only the index) is its index; anything else
    its text.

    Examples
    --------
    >>> import ipywidgets as w
    >>> setting_key([(w.FloatSlider(min=0.5, step=0.01), 0.53), (w.Checkbox(), True)])
    '3|1'
    >>> setting_key([(w.ToggleButtons(options=["A", "B"], value="B"), "B")])
    '1'
    """
    parts = []
    for control, value in pairs:
        step = getattr(control, "step", None)
        if hasattr(control, "index") and hasattr(control, "options"):
            values = [o[1] if isinstance(o, tuple) else o for o in control.options]
            parts.append(str(values.index(value)))
        elif isinstance(value, bool):
            parts.append("1" if value else "0")
        elif isinstance(value, (int, float)) and isinstance(step, (int, float)) and step > 0:
            parts.append(str(round((value - control.min) / step)))
        else:
            parts.append(str(value))
    return "|".join(parts)


#: The browser side of the view (its limits and timeouts are constants at its top), and the
#: style of an explorer in the page: files beside this one, read by anywidget.
_HERE = pathlib.Path(__file__).parent


class FigureView(anywidget.AnyWidget):
    """A figure on a canvas: its background and the scene painted over it.

    Attributes
    ----------
    frame : bytes
        PNG of the background, at ``ratio`` device pixels per CSS pixel.
    backdrop : int
        Counts the backgrounds sent (a new layout, size or pixel density). Not ``layout``:
        that trait is the view's ``ipywidgets.Layout``, which the browser side styles.
    scene : list of dict
        The drawing commands of the moving artists (see :class:`SceneRecorder`).
    sprites : dict of str to bytes
        PNG of every bitmap the scene names; the browser decodes each id once.
    seq : int
        Counts the pictures sent; every update sends a new one, even an unchanged picture.
    css_width, css_height : int
        Size of the figure on the page, in CSS pixels.
    screen : list
        ``[width, ratio]`` reported by the browser: the CSS width the figure may take and
        ``devicePixelRatio`` (at most 2).
    setting : str
        Key of the controls' setting the picture shows (see :func:`setting_key`).
    epoch : int
        Counts changes of what the pictures of a setting show (say, a simulation added):
        pictures sent ahead before one no longer hold.
    controls : list of ipywidgets.Widget
        The explorer's controls, in the order of the setting's key: the view draws a
        picture sent ahead as soon as they reach its setting, and steps the sliders on
        arrow keys (Notebook 7).
    stepper : list
        ``[slider, back_button, forward_button]`` of a stepper whose buttons the view handles
        itself (one slider step, at once), or empty.
    kernel_ms : list
        ``[wall, cpu]``: milliseconds the kernel spent on the update that sent this picture,
        from the control's change to the picture sent (the benchmark reports them).
    alt : str
        Text alternative of the picture.
    """

    _esm = _HERE / "explorer.js"
    _css = _HERE / "explorer.css"
    frame = traitlets.Bytes(b"").tag(sync=True)
    backdrop = traitlets.Int(0).tag(sync=True)
    scene = traitlets.List().tag(sync=True)
    sprites = traitlets.Dict().tag(sync=True)
    seq = traitlets.Int(0).tag(sync=True)
    css_width = traitlets.Int(0).tag(sync=True)
    css_height = traitlets.Int(0).tag(sync=True)
    screen = traitlets.List([0, 1.0]).tag(sync=True)
    setting = traitlets.Unicode("").tag(sync=True)
    epoch = traitlets.Int(0).tag(sync=True)
    kernel_ms = traitlets.List([0.0, 0.0]).tag(sync=True)
    controls = traitlets.List().tag(sync=True, **widget_serialization)
    stepper = traitlets.List().tag(sync=True, **widget_serialization)
    alt = traitlets.Unicode("").tag(sync=True)

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        #: Bytes of the scene and of the bitmaps new to the browser in the last update.
        self.last_bytes = 0
        self._shipped: set = set()  # ids of the bitmaps the browser has
        #: Counts the views that started in a page (each pings once): a new one (the page
        #: was reloaded) has none of the pictures sent ahead before.
        self.views = 0
        self.on_msg(self._answer)

    def _answer(self, _widget, content, _buffers):
        if isinstance(content, dict) and content.get("type") == "ping":
            self._shipped = set(self.sprites)  # a new view: it has what the state holds
            self.views += 1
            self.send({"type": "pong"})

    def send_ahead(self, key, items, used):
        """Send the picture of setting ``key`` ahead, with the bitmaps the browser lacks.

        Bytes travel as message buffers; in the message they are ``{"b": index}``.
        """
        buffers = []

        def pack(value):
            if isinstance(value, bytes):
                buffers.append(value)
                return {"b": len(buffers) - 1}
            return value

        scene = [{k: pack(v) for k, v in item.items()} for item in items]
        new = {sid: pack(png) for sid, png in used.items() if sid not in self._shipped}
        self._shipped.update(used)
        message = {
            "type": "ahead",
            "key": key,
            "backdrop": self.backdrop,
            "epoch": self.epoch,
            "scene": scene,
            "sprites": new,
        }
        self.send(message, buffers)

    def show(self, items, used, css_size, *, background=None, started=None, setting=""):
        """Send a picture: the scene ``items`` with the bitmaps ``used``, and a new background.

        The bitmaps go out again only when the set the scene names changes.
        """
        with self.hold_sync():
            sent = 0
            if background is not None:
                self.frame = background
                self.backdrop += 1
                sent += len(background)
            if set(used) != set(self.sprites):
                sent += sum(len(png) for png in used.values())
                self.sprites = dict(used)
                self._shipped.update(used)
            self.scene = items
            self.setting = setting
            self.css_width, self.css_height = (round(v) for v in css_size)
            if started is not None:
                wall, cpu = time.perf_counter() - started[0], time.process_time() - started[1]
                self.kernel_ms = [round(1e3 * wall, 2), round(1e3 * cpu, 2)]
            self.seq += 1
        self.last_bytes = sent + sum(
            len(v) for item in items for v in item.values() if isinstance(v, bytes)
        )
