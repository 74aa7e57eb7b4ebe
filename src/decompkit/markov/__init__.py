r"""Long-horizon execution as an absorbing Markov chain (Manage-Execute-Audit).

State :math:`i \in \{0, \dots, n\}` counts subtasks verifiably done; :math:`C` is corrupted.
From :math:`i < n` one round moves to :math:`i+1` with :math:`p`, stays with :math:`(1-p)q`
(the audit caught the error) and falls to :math:`C` with :math:`\lambda = (1-p)(1-q)`;
:math:`n` and :math:`C` absorb. Within a budget of :math:`B` rounds,

.. math:: P_\mathrm{success} = (e_0^\top P^B)_n
          = \sum_{t=n}^{B} \binom{t-1}{n-1} p^n \big((1-p)q\big)^{t-n}.

What lives where: :mod:`~decompkit.markov.matrix` builds :math:`P` and takes the textbook
matrix power; :mod:`~decompkit.markov.exact` states the closed form and hands the sum to the
long-sum engine :mod:`~decompkit.markov.longsum` (the benchmark's fast path);
:mod:`~decompkit.markov.montecarlo` simulates the chain; :mod:`~decompkit.markov.horizon` holds
survival, expected rounds and the collapse horizon; :mod:`~decompkit.markov.reference` builds
the lecture's reference table. Numeric functions broadcast like NumPy ufuncs: scalars give a
Python ``float``, arrays an array. The package lifts the ``__all__`` of every module but the
engine.

The package may import NumPy and :mod:`decompkit.validate` only; :mod:`decompkit.harness`
builds on it, never the other way round.
"""

from . import exact, horizon, matrix, montecarlo, reference
from .exact import *  # noqa: F403
from .horizon import *  # noqa: F403
from .matrix import *  # noqa: F403
from .montecarlo import *  # noqa: F403
from .reference import *  # noqa: F403

__all__ = [
    *matrix.__all__,
    *exact.__all__,
    *montecarlo.__all__,
    *horizon.__all__,
    *reference.__all__,
]
