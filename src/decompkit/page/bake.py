"""An explorer's figure baked for the static page: background, axes and the look of its moving
artists, at each width and pixel ratio the page may show it at.

The background is the explorer's own (:meth:`~decompkit.widgets.render.Renderer.background`):
matplotlib draws the figure once without the artists the page moves. Those are recorded once by
the explorers' :class:`~decompkit.widgets.recorder.SceneRecorder` as *templates*: their
colour, width, dashes, caps, clip and marker shape, without their data. The page (``page.js``)
computes the data in JavaScript, maps it to device pixels with each axes' transform written
here, and paints the templates with the explorers' own painting code (``explorer.js``).
Artists that never move but a full draw paints over the curves (the spines) are recorded
whole, as *overlay*.
"""

from __future__ import annotations

import base64
import io
import json
import re

import numpy as np
from PIL import Image

from ..widgets.controls import projector_fonts
from ..widgets.moving import Moving, layout_of
from ..widgets.view import CSS_DPI

__all__ = [
    "BACKGROUND",
    "RATIOS",
    "background_file",
    "b64",
    "bake",
    "bake_stepper",
    "controls_of",
    "squeeze_png",
]

#: Device pixel ratios baked: the page picks 2 on a screen of ratio 1.5 or more.
RATIOS = (1, 2)
#: The names :func:`background_file` gives (a rebuild removes these and nothing else).
BACKGROUND = re.compile(r"[a-z]+(-[a-z]+)?-\d+@\dx\.png")


def background_file(name: str, width: int, ratio: int, panel: str | None = None) -> str:
    """The file of explorer ``name``'s background baked ``width`` CSS pixels wide at
    ``ratio``: ``<name>-<width>@<ratio>x.png``, or ``<name>-<panel>-<width>@<ratio>x.png``
    for one ``panel`` of a figure that shows one at a time there."""
    stem = name if panel is None else f"{name}-{panel}"
    return f"{stem}-{width}@{ratio}x.png"


def squeeze_png(png: bytes) -> bytes:
    """The same picture as a smaller PNG (filtered rows, best zlib level): the explorers'
    encoder favours speed, a page that is downloaded once favours size. A bitmap of one grey
    (a text) is stored as grey and alpha, half the bytes, the same picture wherever it is
    not fully transparent."""
    image = Image.open(io.BytesIO(png)).convert("RGBA")
    pixels = np.asarray(image)
    seen = pixels[pixels[..., 3] > 0, :3]
    if len(seen) and (seen == seen[0]).all() and len(set(seen[0])) == 1:
        grey = np.full(pixels.shape[:2], seen[0][0], np.uint8)
        image = Image.fromarray(np.dstack([grey, pixels[..., 3]]), "LA")
    out = io.BytesIO()
    image.save(out, format="PNG", optimize=True)
    return out.getvalue()


def b64(data: bytes) -> str:
    """``data`` as base64 text, as the page's data carry bytes."""
    return base64.b64encode(data).decode("ascii")


def _unstyled(html: str) -> str:
    return re.sub(r"<style>.*?</style>", "", html, flags=re.S)


def _portable(item: dict, keep_vertices: bool) -> dict:
    """A recorded item as JSON: bytes as base64; a template's own data left out."""
    out = {}
    for key, value in item.items():
        if isinstance(value, bytes):
            if key == "at" or (key in ("xy", "c") and not keep_vertices):
                continue
            out[key] = b64(value)
        else:
            out[key] = value
    return out


def bake(stage, *, widths, folder, name) -> dict:
    """Backgrounds (PNG files in ``folder``), axes and templates of a staged explorer's figure.

    Parameters
    ----------
    stage : decompkit.page.build.Stage
        The explorer as the page shows it: its axes by the names page.js uses, the artists
        the page computes and draws (by name, in drawing order), the artists that never move
        but a full draw paints over the curves (``overlay``), and ``restyle(width)``.
    widths : sequence of int
        Widths of the figure in CSS pixels to bake (the page takes the widest that fits).
    folder : pathlib.Path
        Where the backgrounds go (``<name>-<width>@<ratio>x.png``).
    name : str
        Stem of the background files.

    Returns
    -------
    dict
        ``{"layouts": [{"css": [w, h], "ratios": {r: {"background", "size", "axes",
        "templates", "overlay"}}}]}``, ready for JSON.
    """
    explorer, axes, moving, overlay = stage.explorer, stage.axes, stage.moving, stage.overlay
    figure = explorer.figure
    css_height = figure.get_size_inches()[1] * CSS_DPI
    layouts = []
    for width in widths:
        stage.restyle(width)
        ratios = {}
        for ratio in RATIOS:
            figure.set_size_inches(width / CSS_DPI, css_height / CSS_DPI)
            figure.set_dpi(CSS_DPI * ratio)
            with projector_fonts():
                png = explorer.renderer.background()
                layout = layout_of(figure, Moving(name, {}, axes, moving, overlay))
            file = background_file(name, width, ratio)
            (folder / file).write_bytes(squeeze_png(png))
            ratios[str(ratio)] = {
                "background": file,
                "size": layout["size"],
                "axes": layout["axes"],
                "templates": {
                    key: [_portable(item, keep_vertices=True) for item in items]
                    for key, items in layout["templates"].items()
                },
                "overlay": [_portable(item, keep_vertices=True) for item in layout["overlay"]],
            }
        layouts.append({"css": [width, round(css_height)], "ratios": ratios})
    return {"layouts": layouts}


def controls_of(explorer, names) -> list[dict]:
    """The explorer's sliders as the page builds them: name, label, range, step, start, tooltip."""
    out = []
    for name in names:
        control = explorer.controls[name]
        whole = isinstance(control.value, int)
        out.append(
            {
                "name": name,
                "label": control.description,
                "min": control.min,
                "max": control.max,
                "step": control.step,
                "value": control.value,
                "tooltip": control.tooltip or "",
                "digits": 0 if whole else int(control.readout_format.strip(".f")),
            }
        )
    return out


def bake_stepper(explorer, *, widths, folder, name) -> dict:
    """Every step of a stepper's slider as the notebook explorer draws it, at each width and
    pixel ratio: its background (a file in ``folder``) and, per step, its scene.

    A stepper's setting is one whole number from a short range (the events of a trace), so
    the kit records each step's scene here (:meth:`Explorer.update` as in a notebook) and the
    page only paints them. Items repeated between steps are stored once (``items``); a step is
    the list of its items' indices; each bitmap (``sprites``, PNG in base64) is stored once
    per pixel ratio (a text looks the same at every width). Where the explorer shows one
    panel at a time (its ``panel`` buttons are enabled at that width), each panel is a layout
    of its own, named by its ``"panel"``.

    Returns
    -------
    dict
        ``{"layouts": [...], "sprites": {ratio: {id: png}}, "steps": [{"readout", "table"}]}``,
        and ``"panels"``, ``[[label, panel], ...]`` of the buttons, where a width shows one
        panel at a time.
    """
    slider = explorer.controls["event"]
    steps = range(slider.min, slider.max + 1)
    texts = []
    layouts = []
    sprites = {str(ratio): {} for ratio in RATIOS}
    panels = getattr(explorer, "panel", None)
    for width in widths:
        slider.value = slider.min
        explorer._on_screen({"new": [width, 1, 0]})  # which panels it shows at this width
        shown = [None] if panels is None or panels.disabled else [v for _, v in panels.options]
        for panel in shown:
            ratios = {}
            for ratio in RATIOS:
                # As in a notebook: the explorer at its first step gets the page's size (and
                # the panel), then steps.
                slider.value = slider.min
                explorer._on_screen({"new": [width, ratio, 0]})
                if panel is not None:
                    panels.value = panel
                ratios[str(ratio)] = _bake_steps(explorer, steps, sprites[str(ratio)], texts, name)
                file = background_file(name, width, ratio, panel)
                (folder / file).write_bytes(squeeze_png(explorer.view.frame))
                ratios[str(ratio)]["background"] = file
            css = [round(v) for v in explorer.figure.get_size_inches() * CSS_DPI]
            layouts.append({"css": css, "ratios": ratios, **({"panel": panel} if panel else {})})
        if panels is not None:
            panels.value = panels.options[0][1]
    baked = {"layouts": layouts, "sprites": sprites, "steps": texts}
    if any("panel" in layout for layout in layouts):
        baked["panels"] = [list(option) for option in panels.options]
    return baked


def _bake_steps(explorer, steps, sprites, texts, name) -> dict:
    """The scene of each step on the explorer's current background: ``{"size", "items",
    "scenes"}``; new bitmaps go into ``sprites``, the steps' texts into ``texts`` once."""
    slider = explorer.controls["event"]
    backdrop = explorer.view.backdrop
    items, index, scenes = [], {}, []
    for k in steps:
        slider.value = k
        if explorer.view.backdrop != backdrop:  # the page holds one per layout
            raise RuntimeError(f"{name}: step {k} changed the background")
        scene = []
        for item in explorer.view.scene:
            portable = _portable(item, keep_vertices=True)
            if "at" in item:
                portable["at"] = b64(item["at"])
            key = json.dumps(portable, sort_keys=True)
            if key not in index:
                index[key] = len(items)
                items.append(portable)
            scene.append(index[key])
        scenes.append(scene)
        for sid, png in explorer.view.sprites.items():
            if sid not in sprites:
                sprites[sid] = b64(squeeze_png(png))
        if len(texts) < len(steps):  # the page carries the tables' style once
            texts.append({k: _unstyled(getattr(explorer, k).value) for k in ("readout", "table")})
    figure = explorer.figure
    return {
        "size": [round(figure.bbox.width), round(figure.bbox.height)],
        "items": items,
        "scenes": scenes,
    }
