"""The figure on the page: :class:`FigureView`, the anywidget that carries an explorer's
pictures to the browser, and the key of a controls' setting both sides agree on.

The kernel sends the background (a PNG, once per layout) and, on every update, the scene
(:mod:`.recorder`) as traits; pictures made ahead go as messages with their setting's key.
The browser side is ``explorer.js``, beside this file, which anywidget reads (the kit's
package data ships it): it paints the background and the scene on a canvas at the page's
width and pixel ratio, keeps the pictures sent ahead and draws one the moment the controls
reach its setting.
"""

from __future__ import annotations

import pathlib
import re
import time

import anywidget
import traitlets
from ipywidgets import widget_serialization

from .recorder import png_pixels

__all__ = ["CSS_DPI", "MAX_RATIO", "FigureView", "bundle", "setting_key"]

#: CSS pixels per inch: a figure of w inches is shown w * 96 CSS pixels wide, and a font of
#: s points is s * 96 / 72 CSS pixels tall (9 pt -> 12 px).
CSS_DPI = 96
#: Highest device pixel ratio rendered for; a 3x phone gets 2x pixels, scaled by the browser.
#: explorer.js reports no more.
MAX_RATIO = 2.0


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
#: The view's script and the modules it imports, each after those it imports (by file name):
#: the lecture's formulas and the moving artists computed from them, shared with the static
#: lecture page (``decompkit/page``).
MODULES = (
    _HERE.parent / "page" / "checks.js",
    _HERE.parent / "page" / "lecture.js",
    _HERE.parent / "page" / "moving.js",
    _HERE / "explorer.js",
)
_IMPORT = re.compile(r'^import\s*\{[^}]*\}\s*from\s*"\./([\w.-]+)";\n', re.M)


def bundle(modules=MODULES) -> str:
    """The view's script as one ES module, which is what anywidget loads: ``modules`` in
    order, their imports of the modules before them removed (the names are then in scope).

    Raises
    ------
    ValueError
        If a module imports one that does not come before it, or imports in another form.
    """
    done, parts = set(), []
    for path in modules:

        def inline(match, path=path):
            if match.group(1) not in done:
                raise ValueError(f"{path.name} imports {match.group(1)}, not bundled before it")
            return ""

        source = _IMPORT.sub(inline, path.read_text(encoding="utf-8"))
        if re.search(r"^\s*import\b", source, re.M):
            raise ValueError(f"{path.name} imports in a form the bundle cannot inline")
        parts.append(f"// -- {path.name}\n{source}")
        done.add(path.name)
    return "\n".join(parts)


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
    moving : dict
        What the browser needs to compute the moving artists itself (``page/moving.js``):
        ``{"kind", "names", "spec", "layout", "backdrop", "epoch"}`` for the background
        ``backdrop`` and the pictures of ``epoch`` (see :mod:`.moving`), or empty.
    """

    _esm = bundle()
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
    moving = traitlets.Dict().tag(sync=True)

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

    def _send_pixels(self, pngs) -> None:
        """Send the RGBA pixels of the bitmaps ``pngs`` (``{id: png}``) in a message that
        reaches the browser before the state that names them: a PNG is decoded off the
        browser's main thread, and on a busy page that wait (5 to 28 ms, median 12, for the
        two new texts of a horizon step) held up the picture; pixels are on the canvas at
        once. The state keeps the PNGs, a saved notebook's size, and a saved picture."""
        buffers, sizes = [], {}
        for sid, png in pngs.items():
            found = png_pixels(png)
            if found is not None:
                width, height, rgba = found
                sizes[sid] = [width, height, len(buffers)]
                buffers.append(rgba)
        if sizes:
            self.send({"type": "pixels", "sprites": sizes}, buffers)

    def show(
        self, items, used, css_size, *, background=None, started=None, setting="", moving=None
    ):
        """Send a picture: the scene ``items`` with the bitmaps ``used``, a new background,
        and what the browser needs to compute the moving artists (``moving``, if given).

        The bitmaps go out again only when the set the scene names changes. Those the
        browser has not seen go first as pixels too (:meth:`_send_pixels`).
        """
        self._send_pixels({sid: png for sid, png in used.items() if sid not in self._shipped})
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
            if moving is not None:
                self.moving = (
                    {**moving, "backdrop": self.backdrop, "epoch": self.epoch} if moving else {}
                )
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
