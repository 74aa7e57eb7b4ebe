"""Live explorers for notebooks and the lecture hall: sliders wired to compute and plot functions.

Each explorer draws one matplotlib Figure, updates its artists in place when a control changes
and shows it as a PNG in an ``ipywidgets.Image``. Displayed where no widget front end runs
(nbconvert, a terminal), an explorer falls back to the PNG of its current state and a note.
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
