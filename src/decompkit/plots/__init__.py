"""Plot functions: each takes numbers or results, draws on ``ax=None`` and returns the Figure.

No function here calls ``pyplot``, shows a figure or seeds a random generator. The plots may
import matplotlib and the lecture's maths, never ipywidgets or notebook machinery.
"""

from .dag import plot_dag, plot_gantt
from .harness import plot_context_growth, plot_loop_vs_chain
from .markov import plot_grounded_survival, plot_q_sweep, plot_success_vs_horizon
from .reliability import plot_chain_decay, plot_check_value, plot_d_phi_plane
from .scheduler import plot_trace_gantt

__all__ = [
    "plot_chain_decay",
    "plot_check_value",
    "plot_d_phi_plane",
    "plot_success_vs_horizon",
    "plot_q_sweep",
    "plot_grounded_survival",
    "plot_dag",
    "plot_gantt",
    "plot_trace_gantt",
    "plot_loop_vs_chain",
    "plot_context_growth",
]
