"""decompkit: an interactive teaching kit for task decomposition in LLM agents.

The compute modules (``reliability``, ``markov``, ``dag``, ``scheduler``, ``plan``, ...) are
pure and import no plotting library; ``decompkit.plots`` draws their results and
``decompkit.widgets`` wires both to sliders. Import the module you need, e.g.
``from decompkit import reliability``.
"""

__version__ = "0.1.0"
__all__ = ["__version__"]
