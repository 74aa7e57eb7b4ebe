"""Plot functions: each takes numbers or results, draws on ``ax=None`` and returns the Figure.

No function here calls ``pyplot``, shows a figure or seeds a random generator. The package lifts
the ``__all__`` of the lecture's figures (``reliability``, ``markov``, ``dag``, ``scheduler``,
``harness``); the lab's figures stay in :mod:`decompkit.plots.lab`, and the shared look (palette,
figure creation) in :mod:`decompkit.plots.style`, which the explorers use too. The plots may
import matplotlib and the lecture's maths, never ipywidgets or notebook machinery.
"""

from . import dag, harness, markov, reliability, scheduler
from .dag import *  # noqa: F403
from .harness import *  # noqa: F403
from .markov import *  # noqa: F403
from .reliability import *  # noqa: F403
from .scheduler import *  # noqa: F403

__all__ = [
    *reliability.__all__,
    *markov.__all__,
    *dag.__all__,
    *scheduler.__all__,
    *harness.__all__,
]
