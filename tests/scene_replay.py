"""Paint a FigureView's state in Python, as the browser's canvas paints it, for headless tests.

The background PNG, then every scene item in order: paths filled, hatched and stroked with
Agg, markers, bitmaps composited "source over", flat-cell bitmaps scaled without smoothing,
each inside its clip rectangle. The canvas in the browser does the same with its own
rasteriser (tests/browser compares the two).
"""

from __future__ import annotations

import io
import re

import numpy as np
from matplotlib.backends.backend_agg import RendererAgg
from matplotlib.path import Path
from matplotlib.transforms import Bbox, IdentityTransform
from PIL import Image

_CAPS = {"butt": "butt", "square": "projecting", "round": "round"}


def _rgba(css):
    r, g, b, a = (float(v) for v in re.fullmatch(r"rgba\((.*)\)", css).group(1).split(","))
    return (r / 255, g / 255, b / 255, a)


def decode(png: bytes) -> np.ndarray:
    with Image.open(io.BytesIO(png)) as image:
        return np.asarray(image.convert("RGBA")).copy()


def _over(canvas, image, x, y, clip):
    """Composite straight-alpha ``image`` onto ``canvas`` at integer (x, y), inside ``clip``."""
    height, width = canvas.shape[:2]
    x0, y0, x1, y1 = clip if clip else (0, 0, width, height)
    x0, y0 = max(x0, x, 0), max(y0, y, 0)
    x1 = min(x1, x + image.shape[1], width)
    y1 = min(y1, y + image.shape[0], height)
    if x0 >= x1 or y0 >= y1:
        return
    src = image[y0 - y : y1 - y, x0 - x : x1 - x].astype(float) / 255
    dst = canvas[y0:y1, x0:x1].astype(float) / 255
    alpha = src[..., 3:4]
    out_alpha = alpha + dst[..., 3:4] * (1 - alpha)
    colour = src[..., :3] * alpha + dst[..., :3] * dst[..., 3:4] * (1 - alpha)
    colour = np.divide(colour, out_alpha, out=np.zeros_like(colour), where=out_alpha > 0)
    result = np.concatenate([colour, out_alpha], axis=-1)
    canvas[y0:y1, x0:x1] = np.rint(result * 255).astype(np.uint8)


def replay(view) -> np.ndarray:
    """``(height, width, 3)`` uint8: the picture a browser paints from ``view``'s state."""
    background = decode(view.frame)
    height, width = background.shape[:2]
    # At 72 dpi a point is a pixel: the items' widths and dashes are in pixels.
    renderer = RendererAgg(width, height, 72)
    canvas = np.asarray(renderer.buffer_rgba())
    canvas[:] = background
    bitmaps = {sid: decode(png) for sid, png in view.sprites.items()}

    def path_of(item, at=(0.0, 0.0)):
        """The item's path in Agg's coordinates (y up), moved by ``at`` (canvas pixels)."""
        xy = np.frombuffer(item["xy"], "<f4").reshape(-1, 2).astype(float) + at
        xy[:, 1] = height - xy[:, 1]
        codes = np.frombuffer(item["c"], np.uint8) if "c" in item else None
        return Path(xy, codes)

    def pen(item, clip, *, fill=False, stroke=False):
        gc = renderer.new_gc()
        gc.set_snap(False)  # the recorder snapped already
        if clip:
            x0, y0, x1, y1 = clip
            gc.set_clip_rectangle(Bbox([[x0, height - y1], [x1, height - y0]]))
        if stroke and "stroke" in item:
            gc.set_foreground(_rgba(item["stroke"]), isRGBA=True)
            gc.set_linewidth(item["lw"])
            gc.set_capstyle(_CAPS[item["cap"]])
            gc.set_joinstyle(item["join"])
            if "dash" in item:
                gc.set_dashes(item["off"], item["dash"])
        else:
            gc.set_linewidth(0)
        face = _rgba(item["fill"]) if fill and "fill" in item else None
        return gc, face

    def paint(item, clip, at=(0.0, 0.0)):
        path, transform = path_of(item, at), IdentityTransform()
        if "fill" in item:
            gc, face = pen(item, clip, fill=True)
            renderer.draw_path(gc, path, transform, face)
        if "hatch" in item:
            # The hatch tile repeated from the canvas' corner, where the path is filled.
            mask_renderer = RendererAgg(width, height, 72)
            gc = mask_renderer.new_gc()
            gc.set_linewidth(0)
            mask_renderer.draw_path(gc, path, transform, (1, 1, 1, 1))
            coverage = np.asarray(mask_renderer.buffer_rgba())[..., 3:4] / 255
            tile = bitmaps[item["hatch"]]
            reps = (height // tile.shape[0] + 1, width // tile.shape[1] + 1, 1)
            pattern = np.tile(tile, reps)[:height, :width].astype(float)
            pattern[..., 3:4] *= coverage
            _over(canvas, np.rint(pattern).astype(np.uint8), 0, 0, clip)
        if "stroke" in item:
            gc, _ = pen(item, clip, stroke=True)
            renderer.draw_path(gc, path, transform, None)

    for item in view.scene:
        clip = item.get("clip")
        if item["t"] == "p":
            paint(item, clip)
        elif item["t"] == "m":  # the marker's path is about its point, in canvas pixels
            for point in np.frombuffer(item["at"], "<f4").reshape(-1, 2).tolist():
                paint(item, clip, point)
        elif item["t"] == "i":
            image = bitmaps[item["id"]]
            if item.get("cells"):
                x0, y0 = item["x"], item["y"]
                columns = np.arange(width) + 0.5
                rows = np.arange(height) + 0.5
                ix = np.floor((columns - x0) / item["w"] * image.shape[1]).astype(int)
                iy = np.floor((rows - y0) / item["h"] * image.shape[0]).astype(int)
                inside_x = (ix >= 0) & (ix < image.shape[1])
                inside_y = (iy >= 0) & (iy < image.shape[0])
                scaled = np.zeros((height, width, 4), np.uint8)
                block = image[np.clip(iy, 0, image.shape[0] - 1)][
                    :, np.clip(ix, 0, image.shape[1] - 1)
                ]
                keep = inside_y[:, None] & inside_x[None, :]
                scaled[keep] = block[keep]
                _over(canvas, scaled, 0, 0, clip)
            else:
                _over(canvas, image, int(item["x"]), int(item["y"]), clip)
    return canvas[..., :3].copy()
