r"""How long a run stays grounded, how long it lives, and where success collapses.

Every round of an unfinished run falls to :math:`C` with :math:`\lambda = (1-p)(1-q)`, so it is
still grounded after :math:`t` rounds with :math:`g_t = (1-\lambda)^t` and half the runs are
corrupted after :math:`t_{1/2} = \ln 2 / (-\ln(1-\lambda))` rounds; the chain absorbs after
:math:`(1 - s^n)/\lambda` rounds on average, :math:`s = p/(p+\lambda)`. The collapse horizon is
the smallest :math:`n` whose success within :math:`\gamma n` rounds falls below a threshold.

The checks of ``budget_factor`` and ``grid`` and the budgets :math:`\gamma n`
(:func:`check_budget_factor`, :func:`check_grid`, :func:`rounded_budgets`) are public for
:mod:`decompkit.markov.reference`, which reads the same arguments; the package lifts only
``__all__``.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable

import numpy as np

from ..validate import broadcast, count, large_count, probability, scalar_or_array, single
from .exact import success_exact

__all__ = [
    "grounded_survival",
    "grounded_half_life",
    "expected_rounds",
    "min_budget_factor",
    "collapse_horizon",
]


def _escape_args(p, q, **counts):
    """Validate p, q and any counts (floats of any size), broadcast all, add lambda."""
    arrays = {name: large_count(name, value) for name, value in counts.items()}
    arrays = broadcast(**arrays, p=probability("p", p), q=probability("q", q))
    p, q = arrays[-2], arrays[-1]
    return (*arrays, (1.0 - p) * (1.0 - q))


def grounded_survival(t, p, q):
    r"""Probability that the run is still uncorrupted after ``t`` rounds, ignoring completion.

    Parameters
    ----------
    t : int or array_like of int
        Rounds, ``t >= 0``, of any size a float holds.
    p, q : float or array_like
        Executor accuracy and audit detection probability.

    Returns
    -------
    float or ndarray
        :math:`g_t = (1 - \lambda)^t` with escape rate :math:`\lambda = (1-p)(1-q)`.

    Raises
    ------
    ValueError
        If ``p`` or ``q`` is outside [0, 1] or ``t`` is not a whole number >= 0.

    Notes
    -----
    Every round of an unfinished run falls to ``C`` with :math:`\lambda`, whatever the state,
    so the grounded time is geometric. For ``q < 1`` (and ``p < 1``) ``C`` is the only closed
    class: :math:`g_t \to 0`, and ``q`` only rescales the rate.

    Neither form loses digits to cancellation: for :math:`\lambda \ge 1/2` the base is
    :math:`1 - \lambda = p + q(1 - p)`, two terms >= 0 (``1 - (1-p)(1-q)`` would keep
    almost nothing of a tiny ``p`` and ``q``); below, :math:`g_t = \exp(t \log(1 - \lambda))`
    with ``log1p``, which keeps the digits of a small :math:`\lambda` that rounding
    :math:`1 - \lambda` to a double drops (they matter after many rounds).

    Examples
    --------
    >>> round(grounded_survival(100, 0.95, 0.9), 4)
    0.6058
    >>> grounded_survival([0, 1, 2], 0.5, 0.0).tolist()
    [1.0, 0.5, 0.25]
    >>> grounded_survival(1, 0.0, 1e-15)  # not 9.99e-16
    1e-15
    """
    t, p, q, lam = _escape_args(p, q, t=t)
    with np.errstate(divide="ignore", invalid="ignore"):  # only in the branch not taken
        g = np.where(lam < 0.5, np.exp(t * np.log1p(-lam)), np.power(p + q * (1.0 - p), t))
    return scalar_or_array(g)


def grounded_half_life(p, q):
    r"""Rounds after which half of all runs have been corrupted (if none finished first).

    Parameters
    ----------
    p, q : float or array_like
        Executor accuracy and audit detection probability.

    Returns
    -------
    float or ndarray
        :math:`t_{1/2} = \ln 2 / (-\ln(1 - \lambda))`, ``inf`` when :math:`\lambda = 0`
        and ``0`` when :math:`\lambda = 1`.

    Raises
    ------
    ValueError
        If ``p`` or ``q`` is outside [0, 1].

    Notes
    -----
    For small :math:`\lambda`, :math:`t_{1/2} \approx 0.693/\lambda`: halving the escape rate
    (say by catching half the errors) doubles the half-life.

    Examples
    --------
    >>> [round(grounded_half_life(0.95, q), 1) for q in (0.0, 0.5, 0.9)]
    [13.5, 27.4, 138.3]
    >>> grounded_half_life(0.95, 1.0)
    inf
    """
    _, _, lam = _escape_args(p, q)
    with np.errstate(divide="ignore"):
        # -log1p(-lam) is 0 at lam = 0 (infinite half-life) and inf at lam = 1 (zero).
        result = math.log(2.0) / -np.log1p(-lam)
    return scalar_or_array(result)


def expected_rounds(n, p, q):
    r"""Expected rounds from state 0 until the chain absorbs (all ``n`` done, or corrupted).

    Parameters
    ----------
    n : int or array_like of int
        Number of subtasks, ``n >= 0``, of any size a float holds (``1e19`` gives
        :math:`1/\lambda` to double precision).
    p, q : float or array_like
        Executor accuracy and audit detection probability.

    Returns
    -------
    float or ndarray
        :math:`(1 - s^n)/\lambda` with :math:`s = p / (p + \lambda)`; :math:`n/p` when
        :math:`\lambda = 0`; ``inf`` when ``p = 0`` and ``q = 1`` (the run never moves), or
        where the mean is beyond the float range.

    Raises
    ------
    ValueError
        If ``p`` or ``q`` is outside [0, 1] or ``n`` is not a whole number >= 0.

    Notes
    -----
    This is the first row sum of the fundamental matrix :math:`(I - Q)^{-1}`. In closed form:
    a state is left after a geometric number of rounds with mean :math:`1/(p + \lambda)`, and
    the next state is reached with probability :math:`s`, so the expected time is
    :math:`\sum_{i<n} s^i / (p + \lambda)`, which sums to the formula above because
    :math:`(p + \lambda)(1 - s) = \lambda`. With full verification (``q = 1``) it is
    :math:`n/p`: the budget factor must exceed :math:`1/p`.

    Examples
    --------
    >>> round(expected_rounds(10, 0.95, 1.0), 4)  # 10 / 0.95
    10.5263
    >>> round(expected_rounds(10, 0.95, 0.0), 4)
    8.0253
    >>> expected_rounds(1e19, 0.9, 0.5), expected_rounds(0, 1e-20, 0.0)
    (20.0, 0.0)
    """
    n, p, _, lam = _escape_args(p, q, n=n)
    out = np.zeros(n.shape)  # n = 0: absorbed already, also where log s below is -inf
    moving = (n > 0) & (p > 0)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        # 1 - s^n as -expm1(n log s), accurate when lambda is tiny and s close to 1; n / p
        # beyond the float range (n near 1e308) is inf.
        log_s = np.log1p(-lam[moving] / (p[moving] + lam[moving]))
        finite = -np.expm1(n[moving] * log_s) / lam[moving]
        out[moving] = np.where(lam[moving] > 0, finite, n[moving] / p[moving])
    # p = 0: each round either corrupts (lambda = 1 - q) or stays; never moves if q = 1.
    stuck = (n > 0) & (p == 0)
    with np.errstate(divide="ignore"):
        out[stuck] = 1.0 / lam[stuck]
    return scalar_or_array(out)


def min_budget_factor(p):
    r"""Smallest budget factor :math:`\gamma = B/n` that full verification can live with.

    Parameters
    ----------
    p : float or array_like
        Executor accuracy per round.

    Returns
    -------
    float or ndarray
        :math:`1/p` (``inf`` at ``p = 0``): the expected rounds per subtask when every error
        is caught and retried.

    Raises
    ------
    ValueError
        If ``p`` is outside [0, 1].

    Examples
    --------
    >>> round(min_budget_factor(0.95), 3)
    1.053
    """
    p = probability("p", p)
    with np.errstate(divide="ignore"):
        return scalar_or_array(1.0 / p)


def check_budget_factor(value) -> float:
    if isinstance(value, (numbers.Real, np.floating)) and not isinstance(value, bool):
        value = float(value)
        if math.isfinite(value) and value >= 0:
            return value
    raise ValueError(f"budget_factor must be a finite number >= 0, got {value!r}")


def rounded_budgets(ns: np.ndarray, budget_factor: float) -> np.ndarray:
    """round(budget_factor * n) as floats, half to even like Python's round."""
    with np.errstate(over="ignore"):
        budgets = np.rint(budget_factor * ns.astype(float))
    if not np.isfinite(budgets).all():
        raise ValueError(
            f"budget_factor * n must stay within the float range (about 1.8e308) for every "
            f"horizon, got budget_factor={budget_factor!r} and n up to {int(ns.max())}"
        )
    return budgets


def check_grid(grid) -> np.ndarray:
    """The horizons of ``grid`` in increasing order, as int64; else a ValueError naming it."""
    if isinstance(grid, (str, bytes)) or not isinstance(grid, Iterable):
        raise ValueError(f"grid must be an iterable of horizons (whole numbers >= 0), got {grid!r}")
    grid = list(grid)
    if not grid:
        raise ValueError("grid must hold at least one horizon, got an empty grid")
    ns = count("grid", grid)
    if ns.ndim != 1:
        raise ValueError(f"grid must be a flat sequence of horizons, got {grid!r}")
    return np.sort(ns)


def collapse_horizon(p, q, budget_factor=2.0, threshold=0.5, grid=range(5, 205, 5)):
    r"""Smallest horizon ``n`` on ``grid`` whose success within ``round(budget_factor * n)``
    rounds is below ``threshold``.

    Parameters
    ----------
    p, q : float
        Executor accuracy and audit detection probability.
    budget_factor : float
        Rounds allowed per subtask, :math:`\gamma = B/n >= 0`.
    threshold : float
        Success level that counts as collapse, in [0, 1].
    grid : iterable of int
        Horizons to try (whole numbers >= 0, not empty).

    Returns
    -------
    int or None
        The smallest collapsing ``n``, or ``None`` when nothing on the grid collapses.

    Raises
    ------
    ValueError
        If ``p``, ``q`` or ``threshold`` is outside [0, 1] or not a single number,
        ``budget_factor`` is negative or not finite (or so large that
        ``budget_factor * n`` overflows a float), or ``grid`` is not an iterable, is empty
        or holds something other than whole numbers >= 0.

    Examples
    --------
    >>> [collapse_horizon(0.95, q) for q in (0.0, 0.5, 0.9, 1.0)]
    [15, 30, 135, None]
    >>> collapse_horizon(0.95, 0.5, budget_factor=1e300)  # unlimited: (p / (1 - r))^n
    30
    """
    p = single("p", probability("p", p))
    q = single("q", probability("q", q))
    threshold = single("threshold", probability("threshold", threshold))
    budget_factor = check_budget_factor(budget_factor)
    ns = check_grid(grid)
    below = np.asarray(success_exact(ns, p, q, rounded_budgets(ns, budget_factor))) < threshold
    return int(ns[np.argmax(below)]) if below.any() else None
