"""The explorers' renderer: a background drawn once per layout, and a scene per update.

Why it is built this way (``bench/bench_browser.py`` measures it in a real browser): a control
change must reach the screen within about 50 ms, on a shared 2-core machine too, so an update
must cost little in the kernel, on the wire and in the browser. An explorer names the artists
its controls move (:meth:`Renderer.move`) and updates them in place; the renderer does the
rest. matplotlib draws the figure once per layout without the moving artists, and that PNG
is the *background*. On every update the moving artists are recorded as a *scene*
(:mod:`.recorder`: paths and markers in device pixels, each line of text a bitmap sent to the
browser once), and an artist in a look recorded before (:mod:`.looks`) is replayed, not
drawn again. The browser (``explorer.js``) paints the background and the scene on a canvas.
So an update costs the kernel a few milliseconds plus a little for any text it has not drawn
before, and sends a few kilobytes; no picture is encoded or decoded on the way.

Every text of the figure starts on a whole pixel (:class:`~.recorder.Canvas`), in the
background, the scene and a full draw alike: a label that moves needs no new bitmap.
"""

from __future__ import annotations

from collections import OrderedDict

from .looks import look
from .recorder import Canvas, SceneRecorder, Sprites, encode_png

__all__ = ["Renderer"]

#: Recordings kept by look, most recent last: moving a slider back and forth, or a box whose
#: text comes back, then records nothing again.
_RECORDINGS = 3000


class Renderer:
    """Draws one figure for the browser: its background, the scene of its moving artists,
    and the whole picture.

    Attributes
    ----------
    figure : matplotlib.figure.Figure
        The figure drawn, on a :class:`~.recorder.Canvas`.
    sprites : Sprites
        Bitmaps (texts, hatch tiles, images) by look, shared by every scene of the figure.
    recorded : int
        How many artists have been recorded (drawn) so far; a replayed look counts nothing.
    """

    def __init__(self, figure):
        Canvas(figure)
        self.figure = figure
        self.sprites = Sprites()
        self.recorded = 0
        self._moving: list = []
        self._recordings: OrderedDict = OrderedDict()  # look -> (items, used)
        self._recorder = None

    @property
    def moving(self) -> tuple:
        """The moving artists, in drawing order."""
        return tuple(self._moving)

    def move(self, *artists) -> None:
        """Name the artists updates move, in drawing order; the rest is background.

        An Axes among them is recorded with its frame, ticks and labels only: its own
        children that are listed are recorded one by one.
        """
        moving = list(artists)
        if moving == self._moving:  # the same artists (an update names them again)
            return
        for artist in self._moving:
            artist.set_animated(False)
        self._moving = moving
        for artist in moving:
            artist.set_animated(True)

    def background(self) -> bytes:
        """Lay the figure out, freeze the layout and return the background as PNG bytes."""
        canvas = self.figure.canvas
        self.figure.set_layout_engine("constrained")
        canvas.draw()  # animated artists (the moving ones) are left out of the picture
        self.figure.set_layout_engine("none")
        self._recordings.clear()
        return encode_png(canvas.buffer_rgba())

    def scene(self, *, replay: bool = True):
        """``(items, used)`` of the moving artists: recorded, or replayed by look.

        With ``replay=False`` every artist is recorded afresh and nothing is kept: the
        scene a replay must equal.
        """
        agg = self.figure.canvas.get_renderer()
        if self._recorder is None or self._recorder.agg is not agg:
            self._recorder = SceneRecorder(agg, self.sprites)
        items, used, kept, seen = [], {}, self._recordings, {}
        for artist in self._moving:
            key = look(artist, seen) if replay else None
            part = None if key is None else kept.get(key)
            if part is None:
                part = self._recorder.record([artist])
                self.recorded += 1
                if key is not None:
                    kept[key] = part
                    while len(kept) > _RECORDINGS:
                        kept.popitem(last=False)
            else:
                kept.move_to_end(key)
            items += part[0]
            used.update(part[1])
        return items, used

    def full(self) -> bytes:
        """The picture drawn whole by matplotlib, moving artists included, as PNG bytes."""
        for artist in self._moving:
            artist.set_animated(False)
        try:
            self.figure.canvas.draw()
        finally:
            for artist in self._moving:
                artist.set_animated(True)
        return encode_png(self.figure.canvas.buffer_rgba())

    def forget(self) -> None:
        """Drop the recordings (a closed explorer keeps none)."""
        self._recordings.clear()
