"""Recorded agent runs held against the chain model: pass^k, fits of p^n and a p^n, the data.

- :mod:`.estimators`: :func:`pass_hat_k` (tau-bench's unbiased pass^k), :func:`fit_chain`
  (maximum likelihood of success against the steps n, with AIC) and :func:`bootstrap_fit`
  (intervals by resampling tasks).
- :mod:`.recorded`: :func:`records` and :func:`by_task`, the tau-bench runs shipped in
  ``data/`` (source, licence and derivation in ``data/README.md``).

It imports numpy and the standard library only, no other room of the package; nothing is
downloaded.
"""

from . import estimators, recorded
from .estimators import *  # noqa: F403
from .recorded import *  # noqa: F403

__all__ = [*estimators.__all__, *recorded.__all__]
