"""When two artists draw alike: the key of an artist's look, read off the artist itself.

An update changes some of the moving artists and leaves the others as they were, and a
slider moved back brings earlier looks back. So the renderer (:mod:`.render`) records an
artist only in a look it has not recorded before and replays the recording otherwise; the
explorers say which artists move, never when they look the same.

The key of a look is the state an artist draws from: its attributes and those of the objects
it holds (a text's font and box style, an arrow's style and the boxes it joins), each
transform as the matrix it applies now (new axis limits or a new layout make a new key),
each array by its contents. Left out are matplotlib's bookkeeping (parents, callbacks, the
stale flag, labels and ids) and what matplotlib derives from the rest while drawing (a line's
cached path, the box fitted round a text, an annotation's arrow ends, a mesh's mapped
colours), so that a key depends on what is set, not on what was drawn last. An Axes counts
by its place, its limits, its ticks as the axis will label them (tick parameters set on the
axis; a tick styled by hand is not seen) and the artists it draws itself. An artist that
holds what no key can read (a transform that is not affine, an object without attributes)
has no key and is recorded at every update.
"""

from __future__ import annotations

import enum
import functools
import hashlib
import types

import numpy as np
from matplotlib.axes import Axes
from matplotlib.axis import Axis
from matplotlib.collections import Collection, QuadMesh
from matplotlib.colors import Colormap
from matplotlib.figure import FigureBase
from matplotlib.font_manager import FontProperties
from matplotlib.lines import Line2D
from matplotlib.path import Path
from matplotlib.spines import Spine
from matplotlib.transforms import BboxBase, Transform, TransformedPath, TransformNode

__all__ = ["look"]

#: matplotlib's bookkeeping: where an artist sits and who listens, not what it draws.
_BOOKKEEPING = frozenset(
    {
        "_axes",
        "_parent_figure",
        "figure",
        "axis",  # a spine's axis, which it only registers
        "colorbar",  # a mappable's colour bar, drawn on an Axes of its own
        "_remove_method",
        "_callbacks",
        "callbacks",
        "_id_norm",  # ids of callbacks
        "_id_colorizer",
        "colorbar_cid",
        "stale_callback",
        "_stale",
        "_animated",  # the renderer sets it on every moving artist
        "_mouseover",
        "_picker",
        "_pickradius",
        "_gid",
        "_label",
        "_url",
        "_in_autoscale",
        "_in_layout",
        "_sticky_edges",
        "_transformSet",
        "_draggable",
        "_renderer",  # a text's last renderer
    }
)
#: What matplotlib derives from the rest of an artist while drawing it, by artist class.
_DERIVED = (
    (
        Line2D,
        {"_x", "_y", "_xy", "_path", "_transformed_path", "_invalidx", "_invalidy"}
        | {"_subslice", "_x_filled"},
    ),
    (
        Collection,
        {"_mapped_colors", "_facecolors", "_edgecolors", "_face_is_mapped", "_edge_is_mapped"},
    ),
    (QuadMesh, {"_paths"}),
    (Spine, {"_path"}),  # a spine's ends, set from the axes' limits or its bounds
)
#: Parts an artist owns and places while drawing: a text's box, fitted round the text, and
#: an annotation's arrow, between its ends; their style counts, their place does not.
_OWNED = {
    "_bbox_patch": frozenset({"_x", "_y", "_width", "_height", "_transform", "_mutation_scale"}),
    "arrow_patch": frozenset({"_posA_posB", "_mutation_scale", "_dpi_cor", "patchA"}),
}
#: Arrays longer than this many bytes count by a digest of their contents.
_DIGEST_FROM = 256
#: Values that are their own key; the exact types first, as most attributes are one of them.
_PLAIN_TYPES = frozenset({str, int, float, bool, complex, bytes, type(None), np.float64})
_PLAIN = (str, int, float, complex, bytes, type(None), np.number, np.bool_, enum.Enum)
#: Held by identity (the key keeps them alive): code, which does not change.
_CODE = (type, types.FunctionType, types.BuiltinFunctionType, functools.partial)
_NOTHING = frozenset()


class _NoKey(Exception):
    """The artist holds something a key cannot read."""


def look(artist, seen=None):
    """A hashable key of what ``artist`` draws now, or None when it has none.

    Two artists with equal keys draw the same items. ``seen`` (a dict, for one update)
    shares the keys of objects met before: a box that two arrows join is read once.

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> ax = Figure().subplots()
    >>> (a,), (b,) = ax.plot([0, 1], [0, 1], "k"), ax.plot([0, 1], [1, 0], "k")
    >>> look(a) == look(b)
    False
    >>> b.set_ydata(a.get_ydata())  # the same numbers
    >>> look(a) == look(b)
    True
    >>> ax.set_xscale("log")  # a transform that is not affine
    >>> look(a) is None
    True
    """
    try:
        return _key(artist, {} if seen is None else seen)
    except _NoKey:
        return None


def _key(value, seen, leave_out=_NOTHING):
    kind = type(value)
    make = _MAKERS.get(kind)
    if make is None:
        make = _MAKERS[kind] = _maker(kind)
    if make is _same:
        return value
    mark = (id(value), leave_out)
    found = seen.get(mark)
    if found is not None:
        return found[1]
    # Met again while its key is being made: a cycle, read once. The value is held, so that
    # its id is not reused by another object within the update.
    seen[mark] = (value, ("cycle",))
    key = make(value, seen, leave_out)
    seen[mark] = (value, key)
    return key


def _same(value, seen, leave_out):
    return value


def _array(value, seen, leave_out):
    mask = np.ma.getmask(value)
    data = np.ma.getdata(value).tobytes() + (b"" if mask is np.ma.nomask else mask.tobytes())
    if len(data) > _DIGEST_FROM:
        data = hashlib.blake2b(data, digest_size=16).digest()
    return (value.dtype.str, value.shape, data)


def _sequence(value, seen, leave_out):
    if _PLAIN_TYPES.issuperset(map(type, value)):
        return (type(value), *value)
    return (type(value), *[_key(item, seen) for item in value])


def _mapping(value, seen, leave_out):
    return (dict, *[(name, _key(item, seen)) for name, item in value.items()])


def _transform(value, seen, leave_out):
    if not value.is_affine:
        raise _NoKey
    return (Transform, value.get_matrix().tobytes())


def _bbox(value, seen, leave_out):
    return (BboxBase, *value.extents)


def _clip_path(value, seen, leave_out):  # where it lies now
    return _key(value.get_fully_transformed_path(), seen)


def _path(value, seen, leave_out):
    codes = None if value.codes is None else value.codes.tobytes()
    return (Path, _key(value.vertices, seen), codes, value._interpolation_steps)


def _font(value, seen, leave_out):
    return (FontProperties, hash(value))


def _colormap(value, seen, leave_out):  # what it maps to: its table and its extremes
    table = _array(value(np.arange(value.N)), seen, leave_out)
    return (
        Colormap,
        value.N,
        table,
        value.get_bad().tobytes(),
        value.get_under().tobytes(),
        value.get_over().tobytes(),
    )


def _method(value, seen, leave_out):  # its code, and the object it works on
    return (types.MethodType, value.__func__, _key(value.__self__, seen))


def _no_key(value, seen, leave_out):
    raise _NoKey


def _attributes(value, seen, leave_out):
    """The key of an object by its attributes, bookkeeping and derived state left out."""
    kind = type(value)
    skip = _SKIPS.get((kind, leave_out))
    if skip is None:
        derived = (names for base, names in _DERIVED if issubclass(kind, base))
        skip = _SKIPS[kind, leave_out] = _BOOKKEEPING.union(leave_out, *derived)
    try:
        state = vars(value)
    except TypeError:  # slots, or a type written in C: nothing to read
        raise _NoKey from None
    parts = [kind]
    for name, item in state.items():
        if name in skip:
            continue
        if type(item) in _PLAIN_TYPES:
            parts += (name, item)
        elif item is not None and name in _OWNED:
            parts += (name, _key(item, seen, _OWNED[name]))
        else:
            parts += (name, _key(item, seen))
    return tuple(parts)


#: How to read a value, by its class (the first that fits), and per exact type once found.
_READERS = (
    (_PLAIN + _CODE, _same),
    (np.ndarray, _array),
    ((tuple, list), _sequence),
    (dict, _mapping),
    (Transform, _transform),
    (BboxBase, _bbox),
    (TransformedPath, _clip_path),
    (Path, _path),
    (FontProperties, _font),
    (Colormap, _colormap),
    (types.MethodType, _method),
    ((Axis, FigureBase, TransformNode), _no_key),
)
_MAKERS: dict = {}
_SKIPS: dict = {}


def _maker(kind):
    if issubclass(kind, Axes):
        return _axes
    for bases, reader in _READERS:
        if issubclass(kind, bases):
            return reader
    return _attributes


def _axes(ax, seen, leave_out=_NOTHING):
    """An Axes' frame, ticks and labels and the artists it draws itself (the ones that are
    not animated): what recording it draws, besides its moving artists."""
    parts = [Axes, ax.get_visible(), ax.axison, *ax.bbox.extents, *ax.viewLim.extents]
    for child in ax.get_children():
        if child.get_animated():
            continue
        parts.append(_axis(child, seen) if isinstance(child, Axis) else _key(child, seen))
    return tuple(parts)


def _axis(axis, seen):
    """An axis by its ticks as it will draw them: places, labels, parameters, its label."""
    parts = [type(axis), axis.get_visible(), axis.get_scale(), axis.get_label_position()]
    for which, ticks in (("major", axis.major), ("minor", axis.minor)):
        places = np.asarray(ticks.locator(), dtype=float)
        labels = ticks.formatter.format_ticks(places)
        offset = ticks.formatter.get_offset() if which == "major" else ""
        params = _key(axis.get_tick_params(which=which), seen)
        parts += (places.tobytes(), tuple(labels), offset, params)
    parts += (_key(axis.label, seen), _key(axis.offsetText, seen))
    return tuple(parts)
