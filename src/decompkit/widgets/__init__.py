"""Live explorers for notebooks and the lecture hall: sliders wired to compute and plot functions.

Each explorer draws one matplotlib Figure and shows it on a canvas in the browser (an anywidget
view). The static part is sent once per layout as a PNG; on every control change the kernel
updates the moving artists in place and sends only those, recorded as vector paths and cached
bitmaps of text. While the kernel is idle it also records the settings next to the current one
and sends them ahead, so a slider step or a click usually finds its picture already in the
page. Displayed where no widget front end runs (nbconvert, a terminal), an explorer falls back
to the PNG of its current state and a note.

- :func:`reliability_explorer`: p^n against n with a check at each boundary (sections 1-2).
- :func:`horizon_explorer`: the audited long-horizon chain, its q sweep and g_t (section 3).
- :func:`dag_explorer`: critical path, slack and list schedule of example A or B (section 4).
- :func:`trace_stepper`: a scheduler trace event by event (section 5).
- :func:`agents_explorer`: pass^k against k when tasks differ, beside p^k (recorded runs).

In a notebook, the last expression of a cell shows the explorer, e.g. ``reliability_explorer()``.

What they are built from, one module each: :mod:`.base` (the ``Explorer`` every explorer
extends: controls, updates, pictures made ahead, closing a cell's earlier run),
:mod:`.controls` (labelled sliders, readout tables, the projector's fonts), :mod:`.render` (the
renderer an explorer hands its moving artists to), :mod:`.looks` (when an artist looks as it
did before), :mod:`.recorder` (a scene written down for the canvas, texts on whole pixels)
and :mod:`.view` (the anywidget; its browser side is ``explorer.js``, its style
``explorer.css``). Privacy is marked once: every module here is public, since another one
imports it, and a leading underscore marks a name private to its module. Methods with a
leading underscore on ``Explorer`` are what an explorer subclass uses, not the notebook's.

The explorers import the plots, the lecture's maths, matplotlib, ipywidgets and anywidget,
never notebook machinery.
"""

from . import agents, dag, horizon, reliability, trace
from .agents import *  # noqa: F403
from .dag import *  # noqa: F403
from .horizon import *  # noqa: F403
from .reliability import *  # noqa: F403
from .trace import *  # noqa: F403

__all__ = [
    *reliability.__all__,
    *horizon.__all__,
    *dag.__all__,
    *trace.__all__,
    *agents.__all__,
]
