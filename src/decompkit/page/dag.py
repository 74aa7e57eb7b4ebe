"""The DAG explorer baked for the static page: every piece its picture is made of, recorded
once from the notebook explorer (:class:`~decompkit.widgets.dag.DagExplorer`).

A duration or the worker count changes every text, box and bar of that figure, so the page
cannot paint templates over one background as for the curves. The kit records instead, per
width and pixel ratio: each plan structure's frame, task boxes and arrows (in both looks,
critical and not), the Gantt chart's axes for every worker count and time-axis end a setting
can reach, a bar, a tick and a label of each task in both looks, and the pieces the changing
texts are set from ("d = ", ", slack ", each digit: DejaVu's digits have one advance, in whole
pixels, so a number set from them is the string Agg draws). The page (``dag.js``) computes
the critical path and the schedule (``plans.js``) and assembles these pieces: a box widens
about its centre with its text, an arrow ends where the line between two centres crosses the
new outlines (as ``plots.dag._Arrow`` does), a bar and its label go where the schedule puts
them.
"""

from __future__ import annotations

from matplotlib.backend_bases import GraphicsContextBase

from .. import examples
from ..plots.dag import (
    CRITICAL_ARROW,
    CRITICAL_BAR,
    CRITICAL_BOX,
    LABEL_MARGIN,
    NORMAL_ARROW,
    NORMAL_BAR,
    NORMAL_BOX,
    axes_points,
    gantt_frame,
    label_width,
)
from ..widgets.controls import projector_fonts
from ..widgets.dag import (
    AXIS_ENDS,
    EXAMPLES,
    MAX_WORKERS,
    DagExplorer,
    duration_range,
    time_axis_end,
)
from ..widgets.recorder import SceneRecorder, Sprites, whole_pixel
from .bake import RATIOS, b64, background_file, squeeze_png

__all__ = ["bake_dag", "dag_examples"]

#: The plan structures a setting can show: (example, the option that changes the graph).
STRUCTURES = (("A", None), ("A", "spurious_edge"), ("B", None), ("B", "coordination"))
#: Pieces of the changing texts, besides the digits.
_BOX_PIECES = ("d = ", ", slack ")
_LOOKS = {"critical": True, "normal": False}


def _pairs(graph) -> list:
    return [[node, list(preds)] for node, preds in graph.items()]


def dag_examples(numbers) -> dict:
    """The worked examples as the page computes with them: graphs of each structure, start
    durations, labels, the duration sliders' range and the options."""
    out = {}
    for key in EXAMPLES:
        ex = getattr(numbers, key)
        graphs = {"plain": _pairs(ex.graph)}
        if ex.spurious_edge is not None:
            graphs["spurious_edge"] = _pairs(ex.with_edge(*ex.spurious_edge))
        if ex.coordination and ex.fan_out:
            graphs["coordination"] = _pairs(ex.with_coordination()[0])
        out[key] = {
            "name": ex.name,
            "unit": ex.unit,
            "durations": [[node, d] for node, d in ex.durations.items()],
            "labels": {examples.COORDINATE: "coordination", **ex.labels},
            "high": duration_range(ex.durations),
            "graphs": graphs,
            "coordination": ex.coordination,
            "resources": {node: list(keys) for node, keys in ex.resources.items()},
        }
    return out


class _Baker:
    """Records the pieces at one width and pixel ratio."""

    def __init__(self, ex: DagExplorer, sprites: Sprites):
        self.ex = ex
        self.agg = ex.figure.canvas.get_renderer()
        self.recorder = SceneRecorder(self.agg, sprites)
        self.used: dict = {}
        self.height = self.agg.height

    def record(self, artists) -> list:
        items, used = self.recorder.record(list(artists))
        self.used.update(used)
        return [{k: b64(v) if isinstance(v, bytes) else v for k, v in i.items()} for i in items]

    def piece(self, text, prop, colour) -> list:
        """``[id, dx, dy, advance]``: one piece of a changing text, from its baseline's left end."""
        gc = GraphicsContextBase()
        gc.set_foreground(colour)
        self.recorder.items, self.recorder.used = [], {}
        self.recorder.draw_text(gc, 0, 0, text, prop, 0)
        (item,) = self.recorder.items
        self.used.update(self.recorder.used)
        width = self.agg.get_text_width_height_descent(text, prop, False)[0]
        return [item["id"], item["x"], item["y"], width]

    def pieces(self, text_artist, words) -> dict:
        prop, colour = text_artist.get_fontproperties(), text_artist.get_color()
        digits = [str(k) for k in range(10)]
        return {w: self.piece(w, prop, colour) for w in (*words, *digits)}

    def line(self, text_artist, index=0) -> dict:
        """Line ``index`` of a centred text: its anchor (``ax``, ``ay``), where the line
        starts (``lx``: the anchor less half its width) and its baseline (``ly``), its width."""
        _, info, _ = text_artist._get_layout(self.agg)
        line, (w, _, _), (x, y) = info[index]
        posx, posy = text_artist.get_transform().transform(text_artist.get_unitless_position())
        if abs(x + w / 2) > 1e-6 * max(1.0, w):  # the page centres each line on the anchor
            raise RuntimeError(f"the line {line!r} is not centred on its anchor")
        h = self.height
        return {
            "ax": float(posx),
            "ay": float(h - posy),
            "lx": float(posx + x),
            "ly": float(h - (posy + y)),
            "w": float(w),
        }


def _box(ax, height) -> list:
    """Where ``ax`` is in device pixels, y down: ``[left, top, right, bottom]``."""
    x0, y0, x1, y1 = ax.bbox.extents
    return [x0, height - y1, x1, height - y0]


def _shape(item) -> dict:
    """A recorded path's geometry alone (its look is kept once per kind)."""
    return {k: item[k] for k in ("xy", "c") if k in item}


def _look(item) -> dict:
    return {k: v for k, v in item.items() if k not in ("xy", "c", "at")}


def _structure(b: _Baker, looks: dict) -> dict:
    """The frame, boxes, arrows and title of the plan on screen; the looks of a box and an
    arrow go into ``looks``."""
    ex = b.ex
    boxes = {}
    for node, box in ex.node_boxes.items():
        for look, critical in _LOOKS.items():
            box.get_bbox_patch().set(**(CRITICAL_BOX if critical else NORMAL_BOX))
            patch, label, _ = b.record([box])
            looks["box"][look] = _look(patch)
        first, second = b.line(box, 0), b.line(box, 1)
        boxes[str(node)] = {
            **_shape(patch),
            "label": label,
            "x": first["ax"],
            "cy": first["ay"],
            "wl": first["w"],
            "w": max(first["w"], second["w"]),
            "y": second["ly"],
        }
    arrows = []
    for (u, v), arrow in ex.edge_arrows.items():
        shapes = {}
        for look, critical in _LOOKS.items():
            arrow.arrow_patch.set(**(CRITICAL_ARROW if critical else NORMAL_ARROW))
            items = b.record([arrow])
            looks["arrow"][look] = [_look(item) for item in items]
            shapes[look] = [_shape(item) for item in items]
        ends = [[float(x), float(b.height - y)] for x, y in arrow.arrow_patch._posA_posB]
        arrows.append({"u": str(u), "v": str(v), **shapes, "ends": ends})
    return {
        "frame": b.record([ex.dag_ax]),
        "boxes": boxes,
        "arrows": arrows,
        "title": b.line(ex.dag_ax.title),
    }


class _Workers:
    """A stand-in schedule for :func:`gantt_frame`: the rows are all it reads."""

    def __init__(self, workers):
        self.workers = workers


def _label(b: _Baker, label, name) -> dict:
    """A bar's label ``name``: its text's bitmap and box, placed from the label's anchor."""
    label.set_text(name)
    line = b.line(label)
    patch, sprite = b.record([label])
    x0, y0, x1, y1 = label.get_bbox_patch().get_window_extent(b.agg).extents
    h = b.height
    return {
        "points": float(label_width(name)),
        "id": sprite["id"],
        # the line's start from the anchor, the bitmap's corner from that start (on a pixel)
        "off": [line["lx"] - line["ax"], line["ly"] - line["ay"]],
        "d": [sprite["x"] - whole_pixel(line["lx"]), sprite["y"] - whole_pixel(line["ly"])],
        "box": [x0 - line["ax"], h - y1 - line["ay"], x1 - line["ax"], h - y0 - line["ay"]],
    }


def _gantt(b: _Baker, ends: dict, looks: dict) -> dict:
    """The Gantt chart's pieces: its axes for each worker count, the ticks of each time-axis
    end, a bar, a tick and a label of every task name, the makespan line, spines, title."""
    ex, ax = b.ex, b.ex.gantt_ax
    bar, label, tick = next(iter(ex.tasks.values()))
    shown = (bar.get_visible(), label.get_visible(), tick.get_visible())
    for artist in (bar, label, tick):
        artist.set_visible(True)
    for look, critical in _LOOKS.items():
        style = CRITICAL_BAR if critical else NORMAL_BAR
        bar.set_facecolor(style["color"])
        bar.set_hatch(style["hatch"])
        (item,) = b.record([bar])
        looks["bar"][look] = _look(item)
        tick.set_color(style["color"])
        (item,) = b.record([tick])
        looks["tick"][look] = _look(item)
        label.get_bbox_patch().set_facecolor(style["color"])
        patch, _ = b.record([label])
        looks["label"][look] = _look(patch)
    labels = {}
    for example in ex.examples.values():
        names = {examples.COORDINATE: "coordination", **example.labels}
        for name in {str(n) for pair in names.items() for n in pair}:
            labels.setdefault(name, _label(b, label, name))
    for artist, visible in zip((bar, label, tick), shown, strict=True):
        artist.set_visible(visible)
    # The frame: the axes' own patch; the y axis per worker count; the x axis as its label
    # per unit and, per time-axis end, the values of its ticks (set from digits).
    ax.xaxis.set_animated(True)
    ax.yaxis.set_animated(True)
    base = b.record([ax])
    ax.xaxis.set_animated(False)
    ax.yaxis.set_animated(False)
    yaxes = {}
    for workers in range(1, MAX_WORKERS + 1):
        gantt_frame(ax, _Workers(workers), "units")
        yaxes[str(workers)] = b.record([ax.yaxis])
    xlabels, xticks = {}, {}
    for unit, unit_ends in ends.items():
        gantt_frame(ax, _Workers(1), unit)
        xlabels[unit] = b.record([ax.xaxis.label])
        for end in unit_ends:
            ax.set_xlim(0, end)
            ticks = [t for t in ax.xaxis.get_majorticklocs() if 0 <= t <= end]
            if any(t != int(t) for t in ticks):
                raise RuntimeError(f"the time axis up to {end} has ticks between whole numbers")
            xticks[str(end)] = [int(t) for t in ticks]
    ax.set_xlim(0, ends[next(iter(ends))][0])
    one = ax.xaxis.get_major_ticks()[0]
    (mark,) = b.record([one.tick1line])
    looks["xtick"] = _look(mark)
    return {
        "base": base,
        "y": yaxes,
        "xlabel": xlabels,
        "xticks": xticks,
        "xtick": {**_shape(mark), "y": b.line(one.label1)["ly"]},
        "labels": labels,
        "makespan": _look(b.record([ex._makespan_line])[0]),
        "spines": b.record(ex._spines(ax)),
        "title": b.line(ax.title),
        "points": float(axes_points(ax)),
        "margin": LABEL_MARGIN,
    }


def _ends(examples_: dict) -> dict:
    """Every time-axis end a setting can reach, per unit: up to the work of all tasks at
    their longest (one worker), the coordination tax included."""
    out = {}
    for ex in examples_.values():
        high = duration_range(ex.durations) * len(ex.durations) + (ex.coordination or 0)
        last = time_axis_end(high)
        out.setdefault(ex.unit, set()).update(e for e in AXIS_ENDS if e <= last)
    return {unit: sorted(ends) for unit, ends in out.items()}


def _show(ex: DagExplorer, key, option=None):
    """Put the explorer on example ``key`` with ``option`` on (or none), at its start durations."""
    ex.controls["example"].value = key  # which turns the options off
    for name in ("spurious_edge", "coordination", "resources"):
        ex.controls[name].value = name == option


def bake_dag(numbers, *, widths, folder, name="dag", start="B") -> dict:
    """The DAG explorer's pieces at each width and pixel ratio (see the module's docstring).

    Parameters
    ----------
    numbers : decompkit.exercises.dag.DagParams
        The notebook's parameter object: worked examples ``A`` and ``B`` and ``workers``.
    widths : sequence of int
        Widths of the figure in CSS pixels.
    folder : pathlib.Path
        Where the backgrounds go.
    name : str
        Stem of the background files.
    start : {"A", "B"}
        The example the notebook shows first: its plan lays the figure out.

    Returns
    -------
    dict
        ``{"layouts": [{"css", "ratios": {r: {"background", "size", "axes", "structures",
        "gantt", "pieces"}}}], "sprites": {r: {id: png}}}``, ready for JSON. Where a width
        shows one panel at a time (the explorer's ``panel`` buttons are enabled there), each
        panel is a layout of its own, named by its ``"panel"``, with the pieces of that
        panel alone, and ``"panels"`` lists ``[label, panel]`` of the buttons.
    """
    ex = DagExplorer(numbers, example=start, workers=numbers.workers)
    ends = _ends(ex.examples)
    sprites = {str(r): Sprites() for r in RATIOS}
    used = {str(r): {} for r in RATIOS}
    layouts = []
    for width in widths:
        _show(ex, start)  # a new width is laid out on the start example, as in the notebook
        ex._on_screen({"new": [width, 1, 0]})  # which panels it shows at this width
        panels = [None] if ex.panel.disabled else [v for _, v in ex.panel.options]
        for panel in panels:
            ratios = {}
            for ratio in RATIOS:
                _show(ex, start)
                ex._on_screen({"new": [width, ratio, 0]})  # lays the figure out, as on a screen
                if panel is not None:
                    ex.panel.value = panel
                ratios[str(ratio)] = _bake_layout(ex, sprites[str(ratio)], ends)
                used[str(ratio)].update(ratios[str(ratio)].pop("used"))
                file = background_file(name, width, ratio, panel)
                (folder / file).write_bytes(squeeze_png(ex.view.frame))
                ratios[str(ratio)]["background"] = file
            css = [round(v) for v in ex.figure.get_size_inches() * 96]
            layouts.append({"css": css, "ratios": ratios, **({"panel": panel} if panel else {})})
        ex.panel.value = ex.panel.options[0][1]
    _show(ex, start)
    pngs = {r: {sid: b64(squeeze_png(png)) for sid, png in u.items()} for r, u in used.items()}
    baked = {"layouts": layouts, "sprites": pngs, "ends": ends}
    if any("panel" in layout for layout in layouts):
        baked["panels"] = [list(option) for option in ex.panel.options]
    return baked


def _bake_layout(ex: DagExplorer, sprites: Sprites, ends: dict) -> dict:
    """The pieces of the panels the explorer shows, on its current layout; the bitmaps they
    use under ``"used"``."""
    shown = ex._shown()
    with projector_fonts():
        b = _Baker(ex, sprites)
        looks = {k: {} for k in ("box", "arrow", "bar", "tick", "label")}
        structures = {}
        if "plan" in shown:
            for key, option in STRUCTURES:
                _show(ex, key, option)
                structures[f"{key} {option or 'plain'}"] = _structure(b, looks)
        gantt = _gantt(b, ends, looks) if "gantt" in shown else None
        ex._workers, ex._time_axis = None, 0  # the explorer draws its own frame again
        words = {
            "box": b.pieces(next(iter(ex.node_boxes.values())), _BOX_PIECES),
            "tick": b.pieces(ex.gantt_ax.xaxis.get_major_ticks()[0].label1, ()),
            "title": b.pieces(
                ex.dag_ax.title,
                (
                    "Critical path (highlighted): ",
                    "List schedule on ",
                    " worker: makespan ",
                    " workers: makespan ",
                    *(f" {unit}" for unit in ends),
                ),
            ),
        }
    return {
        "size": [b.agg.width, b.agg.height],
        "axes": {"gantt": {"box": _box(ex.gantt_ax, b.height)}},
        "structures": structures,
        "gantt": gantt,
        "looks": looks,
        "pieces": words,
        "pt": b.recorder.points_to_pixels(1.0),
        "used": b.used,
    }
