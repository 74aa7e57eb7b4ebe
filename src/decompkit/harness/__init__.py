r"""The Manage-Execute-Audit loop, simulated: the process that :mod:`decompkit.markov` models.

Each round the executor attempts the next subtask in a fresh context and is right with
probability :math:`p`; a read-only audit of the environment catches a wrong result with
probability :math:`q`. A caught error burns the round, a missed one corrupts the state, so
:math:`P(\text{all } n \text{ verified within } B) = (e_0^\top P^B)_n`, as in the chain.
Two switches break the match: errors clustered on hard subtasks, and an auditor that reads
the executor's narration (effective :math:`q' = q(1 - \pi)` for persuasion :math:`\pi`).
The context-growth functions compare :math:`\sum_{t<T} (L_0 + a t)^2 = \Theta(a^2 T^3)`
with a fresh bounded context, :math:`T L_*^2`.

What lives where: :mod:`~decompkit.harness.loop` plays one run with its actors and keeps the
trace; :mod:`~decompkit.harness.batch` holds the caveat switches, many runs at once
(its vectorised engine is the private ``_batch``) and the exact reference;
:mod:`~decompkit.harness.context` the context-growth costs. The package may import NumPy,
:mod:`decompkit._validate` and :mod:`decompkit.markov`, nothing above them.
"""

from .batch import Correlation, SimulationResult, exact_success, simulate
from .context import appended_context_cost, fresh_context_cost, relevant_share
from .loop import (
    Auditor,
    Context,
    Environment,
    Executor,
    LoopRun,
    Manager,
    Result,
    RoundRecord,
    run_loop,
)

__all__ = [
    "Correlation",
    "Context",
    "Result",
    "Environment",
    "Executor",
    "Auditor",
    "Manager",
    "RoundRecord",
    "LoopRun",
    "run_loop",
    "SimulationResult",
    "simulate",
    "exact_success",
    "appended_context_cost",
    "fresh_context_cost",
    "relevant_share",
]
