r"""The lab: the lecture's planning architectures built with Pydantic AI and pydantic-graph.

Models propose typed answers :math:`y \in Y` (a schema check at every boundary); a plan is a
DAG :math:`G` of tool calls, run in list order (ReWOO, wall time :math:`\sum_v d_v`) or
compiled into a graph whose independent steps overlap (LLMCompiler, wall time near the
critical path). Offline by default: scripted models, simulated tools.

The package lifts the ``__all__`` of every module but :mod:`~decompkit.lab.checks` (the lab
notebook's visible checks and key, reached by their path, like the exercise modules').

The lab may import the lecture's maths and :mod:`decompkit.exercises` (its visible checks),
never plotting or notebook machinery; only the lab notebook and its tests import it.
"""

from . import compiler, execute, models, replan, rewoo, schema, tools, tutorials
from .compiler import *  # noqa: F403
from .execute import *  # noqa: F403
from .models import *  # noqa: F403
from .replan import *  # noqa: F403
from .rewoo import *  # noqa: F403
from .schema import *  # noqa: F403
from .tools import *  # noqa: F403
from .tutorials import *  # noqa: F403

__all__ = [
    *compiler.__all__,
    *execute.__all__,
    *models.__all__,
    *replan.__all__,
    *rewoo.__all__,
    *schema.__all__,
    *tools.__all__,
    *tutorials.__all__,
]
