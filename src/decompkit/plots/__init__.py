"""Plot functions: each takes numbers or results, draws on ``ax=None`` and returns the Figure.

No function here calls ``pyplot``, shows a figure or seeds a random generator.
"""

from .reliability import plot_chain_decay, plot_check_value, plot_d_phi_plane

__all__ = ["plot_chain_decay", "plot_check_value", "plot_d_phi_plane"]
