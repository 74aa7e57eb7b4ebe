"""What a figure's moving artists draw, written down for the browser's canvas.

:class:`SceneRecorder` is a matplotlib renderer that records what it is asked to draw instead
of painting pixels: paths (curves, bars, boxes, arrows, ticks) become vertex lists with their
colours, width, dashes, hatch and clip, in device pixels; each line of text becomes a small
bitmap that Agg renders as in a full draw, kept by its look (:class:`Sprites`) and sent to the
browser once. :class:`Canvas` is the Agg canvas of an explorer's figure: it starts every line
of text on a whole pixel, as the recorder does. matplotlib places glyphs to a 64th of a
pixel, so a label that moves by a fraction of a pixel would otherwise need a new bitmap at
every place; on whole pixels one bitmap per string serves everywhere, in a scene and in a
full draw alike (the text moves by less than half a pixel).
"""

from __future__ import annotations

import hashlib
import math
import struct
import zlib
from collections import OrderedDict

import numpy as np
from matplotlib.backend_bases import GraphicsContextBase, RendererBase
from matplotlib.backends.backend_agg import FigureCanvasAgg, RendererAgg
from matplotlib.path import Path
from matplotlib.transforms import Affine2D

__all__ = ["Canvas", "SceneRecorder", "Sprites", "encode_png", "png_pixels", "whole_pixel"]

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


def whole_pixel(value) -> int:
    """Round half up, as Agg rounds pixel positions.

    Examples
    --------
    >>> [whole_pixel(v) for v in (2.4, 2.5, -2.5, 3.0)]
    [2, 3, -2, 3]
    """
    return math.floor(value + 0.5)


def png_pixels(png: bytes) -> tuple[int, int, bytes] | None:
    """``(width, height, RGBA bytes)`` of an RGBA PNG that :func:`encode_png` wrote (every
    row unfiltered), or None for any other PNG.

    Examples
    --------
    >>> rgba = np.arange(24, dtype=np.uint8).reshape(2, 3, 4)
    >>> png_pixels(encode_png(rgba, alpha=True)) == (3, 2, rgba.tobytes())
    True
    >>> png_pixels(encode_png(rgba)) is None  # opaque RGB
    True
    >>> png_pixels(encode_png(np.zeros((0, 3, 4), np.uint8), alpha=True)) is None  # empty
    True
    """
    if png[:8] != b"\x89PNG\r\n\x1a\n" or png[12:16] != b"IHDR":
        return None
    width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", png[16:29])
    if (depth, colour, interlace) != (8, 6, 0) or not width or not height:
        return None  # (the browser's ImageData takes no empty picture)
    data, at = [], 8
    while at + 8 <= len(png):
        (size,), tag = struct.unpack(">I", png[at : at + 4]), png[at + 4 : at + 8]
        if tag == b"IDAT":
            data.append(png[at + 8 : at + 8 + size])
        at += 12 + size
    try:
        rows = np.frombuffer(zlib.decompress(b"".join(data)), dtype=np.uint8)
    except zlib.error:
        return None
    if rows.size != height * (1 + 4 * width):
        return None
    rows = rows.reshape(height, 1 + 4 * width)
    if rows[:, 0].any():  # a filtered row: not one of the kit's
        return None
    return width, height, rows[:, 1:].tobytes()


class WholePixelAgg(RendererAgg):
    """Agg, with every line of text started on the whole pixel nearest its anchor."""

    def draw_text(self, gc, x, y, s, prop, angle, ismath=False, mtext=None):
        super().draw_text(gc, whole_pixel(x), whole_pixel(y), s, prop, angle, ismath, mtext)


class Canvas(FigureCanvasAgg):
    """The Agg canvas of an explorer's figure: its texts start on whole pixels."""

    def get_renderer(self):
        renderer = super().get_renderer()
        if not isinstance(renderer, WholePixelAgg):  # a new size or resolution: a new one
            self.renderer = renderer = WholePixelAgg(renderer.width, renderer.height, renderer.dpi)
        return renderer


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
    return np.floor(vertices + 0.5) + (0.5 if whole_pixel(width) % 2 else 0.0)


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
        self.agg = agg
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
        return self.agg.get_text_width_height_descent(s, prop, ismath)

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
        # On a whole pixel, as the figure's canvas draws it: one bitmap per string and style.
        x, y = whole_pixel(x), whole_pixel(y)
        look = (
            "text",
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
            look, lambda: self._text_bitmap(gc, s, prop, angle, ismath, mtext)
        )
        self.used[sid] = png
        self._add({"t": "i", "id": sid, "x": x + dx, "y": y + dy}, gc)

    def draw_image(self, gc, x, y, im, transform=None):
        pixels = np.ascontiguousarray(im)
        height = pixels.shape[0]
        look = ("image", pixels.shape, hashlib.blake2b(pixels.tobytes(), digest_size=16).digest())
        sid, png, _, _ = self.sprites.get(look, lambda: (encode_png(pixels, alpha=True), 0, 0))
        self.used[sid] = png
        top = whole_pixel(self.height - y - height)
        self._add({"t": "i", "id": sid, "x": whole_pixel(x), "y": top}, gc)

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

    def _text_bitmap(self, gc, s, prop, angle, ismath, mtext):
        """``(png, dx, dy)``: the text drawn by Agg from a whole pixel, and the bitmap's
        corner ``(dx, dy)`` from that pixel."""
        width, height, descent = self.agg.get_text_width_height_descent(s, prop, ismath)
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
        scratch.draw_text(pen, -x0, -y0, s, prop, angle, ismath=ismath, mtext=mtext)
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
            item["clip"] = [whole_pixel(x0), whole_pixel(top), whole_pixel(x1), whole_pixel(bottom)]
        self.items.append(item)

    def record(self, artists):
        """``(items, used)``: the scene of ``artists``, drawn in order.

        An Axes among them draws its frame, ticks and labels and those of its children that
        are not animated: the renderer marks the artists it records one by one as animated.
        One recorder serves every update of a figure, so that matplotlib's cache of text
        metrics (per renderer) keeps working.
        """
        self.items, self.used = [], {}
        for artist in artists:
            artist.draw(self)
        return self.items, self.used
