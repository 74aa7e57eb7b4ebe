"""Live explorers for notebooks and the lecture hall: sliders wired to compute and plot functions.

Each explorer draws one matplotlib Figure and shows it on a canvas in the browser (an anywidget
view). The static part is sent once per layout as a PNG; on every control change the kernel
updates the moving artists in place and sends only those, recorded as vector paths and cached
bitmaps of text (``_render``). While the kernel is idle it also records the settings next to
the current one and sends them ahead, so a slider step or a click usually finds its picture
already in the page (``_base``). Displayed where no widget front end runs (nbconvert, a
terminal), an explorer falls back to the PNG of its current state and a note.

- :func:`reliability_explorer`: p^n against n with a check at each boundary (sections 1-2).
- :func:`horizon_explorer`: the audited long-horizon chain, its q sweep and g_t (section 3).
- :func:`dag_explorer`: critical path, slack and list schedule of example A or B (section 4).
- :func:`trace_stepper`: a scheduler trace event by event (section 5).

In a notebook, the last expression of a cell shows the explorer, e.g. ``reliability_explorer()``.
The explorers import the plots, the lecture's maths, ipywidgets and anywidget (the figure view,
``_render`` and ``explorer.js``), never notebook machinery.
"""

from .dag import DagExplorer, dag_explorer
from .horizon import HorizonExplorer, horizon_explorer
from .reliability import ReliabilityExplorer, reliability_explorer
from .trace import TraceStepper, trace_stepper

__all__ = [
    "ReliabilityExplorer",
    "reliability_explorer",
    "HorizonExplorer",
    "horizon_explorer",
    "DagExplorer",
    "dag_explorer",
    "TraceStepper",
    "trace_stepper",
]
