"""Moving artists the browser computes: what it needs of a figure's layout to draw them.

An explorer whose moving artists follow the lecture's formulas alone (the reliability and
horizon explorers) names them; the browser (``page/moving.js``) computes their data from the
controls with the lecture's formulas in JavaScript and draws them at once, before the
kernel's picture of the setting arrives. For that it needs, per layout, each axes' transform
and the *template* of each artist: its look (colour, width, dashes, caps, clip, marker
shape) without its data, recorded by :class:`~.recorder.SceneRecorder`. The static lecture
page (:mod:`decompkit.page.bake`) bakes the same at each width it offers.
"""

from __future__ import annotations

from typing import NamedTuple

from .recorder import SceneRecorder, Sprites

__all__ = ["Moving", "axes_of", "layout_of", "template"]


class Moving(NamedTuple):
    """What an explorer gives the browser to compute its moving artists.

    Attributes
    ----------
    kind : str
        Whose formulas: a name of ``MOVING`` in ``page/moving.js``.
    spec : dict
        The numbers those formulas need besides the controls' values (JSON).
    axes : dict
        The axes by the names the formulas use.
    artists : dict
        The artists the browser computes, by the formulas' names, in drawing order.
    overlay : list
        Artists that never move but are painted over them (the spines).
    whole : dict
        Artists recorded with their data, by name (a simulation's points): the formulas
        decide only whether they are drawn.
    """

    kind: str
    spec: dict
    axes: dict
    artists: dict
    overlay: list
    whole: dict = {}


def template(recorder: SceneRecorder, artist) -> list[dict]:
    """The look of ``artist``'s drawing calls, without their data (a marker keeps its shape),
    and the artist's ``snap`` (None: Agg snaps an axis-parallel path only).

    A line with no data draws nothing: it is recorded at one point inside its axes, then its
    data are put back.

    Raises
    ------
    ValueError
        If the artist draws nothing even so: it has no look to record.
    """
    saved = None
    if hasattr(artist, "get_xydata") and len(artist.get_xydata()) == 0:
        saved = artist.get_data()
        x0, x1 = artist.axes.get_xlim()
        y0, y1 = artist.axes.get_ylim()
        artist.set_data([(x0 + x1) / 2], [(y0 + y1) / 2])
    try:
        items, _ = recorder.record([artist])
    finally:
        if saved is not None:
            artist.set_data(*saved)
    if not items:
        raise ValueError(f"the artist {artist!r} draws nothing: no look to record")
    out = []
    for item in items:
        keep = ("xy", "c") if item["t"] == "m" else ()
        look = {k: v for k, v in item.items() if not isinstance(v, bytes) or k in keep}
        out.append({**look, "snap": artist.get_snap()})  # whether Agg may snap its path
    return out


def axes_of(ax, height: float) -> dict:
    """Where ``ax`` is in device pixels (y down) and how data map onto it."""
    x0, y0, x1, y1 = ax.bbox.extents
    matrix = (ax.transLimits + ax.transAxes).get_matrix()
    return {
        "box": [x0, height - y1, x1, height - y0],
        # display = matrix @ scaled data; the browser applies the scale (log10) first
        "m": [matrix[0, 0], matrix[0, 2], matrix[1, 1], matrix[1, 2]],
        "xscale": ax.get_xscale(),
        "yscale": ax.get_yscale(),
        "xlim": list(ax.get_xlim()),
        "ylim": list(ax.get_ylim()),
    }


def layout_of(figure, moving: Moving) -> dict:
    """The layout the browser draws ``moving`` in: ``{"size", "axes", "templates",
    "overlay"}``, for the figure as last drawn (after its background).

    Raises
    ------
    ValueError
        If the overlay draws text (a bitmap), which the browser's drawing does not carry.
    """
    agg = figure.canvas.get_renderer()
    recorder = SceneRecorder(agg, Sprites())
    templates = {key: template(recorder, artist) for key, artist in moving.artists.items()}
    for key, artists in moving.whole.items():
        templates[key] = list(recorder.record(list(artists))[0])
    overlay, used = recorder.record(list(moving.overlay))
    if used:
        raise ValueError(f"the overlay of {moving.kind} draws text, which the browser cannot show")
    return {
        "size": [agg.width, agg.height],
        "axes": {key: axes_of(ax, agg.height) for key, ax in moving.axes.items()},
        "templates": templates,
        "overlay": list(overlay),
    }
