r"""The audited chain simulated: many runs, one uniform per live run and round.

Each round a live run draws :math:`u \sim U(0, 1)`: :math:`u < p` advances,
:math:`p \le u < p + (1-p)q` is a caught error and anything above corrupts the run. The
fraction of runs that reach :math:`n` within :math:`B` rounds estimates
:math:`(e_0^\top P^B)_n`, with a Wilson 95 % interval (:func:`wilson`, public for
:mod:`decompkit.harness`, as are the bounds ``MAX_RUNS`` and ``MAX_ROUNDS``).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..validate import count, random_generator, scalar_or_array, single
from .exact import chain_args
from .horizon import expected_rounds

__all__ = ["MonteCarloResult", "success_monte_carlo"]

#: Two-sided 95 % normal quantile, for the Wilson interval.
_Z95 = 1.959963984540054
#: Most runs one call simulates (trials times points): each costs ~50 bytes while it lives.
#: :mod:`decompkit.harness` simulates under the same two bounds.
MAX_RUNS = 10**7
#: Most rounds a run may live on average (the loop steps every round of the longest run).
MAX_ROUNDS = 10**6


def _check_work(n, p, q, budget, trials):
    """Refuse a call whose runs would need too much memory or too many rounds."""
    if trials * n.size > MAX_RUNS:
        raise ValueError(
            f"trials must be an integer <= {MAX_RUNS // max(n.size, 1)} for {n.size} points "
            f"({MAX_RUNS:,} simulated runs per call at most), got {trials}"
        )
    if budget.size == 0 or budget.max() <= MAX_ROUNDS:  # no run outlives its budget
        return
    live = (n > 0) & (budget >= n) & (p > 0.0)
    if not live.any():
        return
    n, p, q, budget = n[live], p[live], q[live], budget[live]
    # A run leaves every state after 1/(1 - r) rounds on average, so n/(1 - r) bounds its
    # mean life; only if that is not enough is the exact mean (which counts corruption) used.
    life = np.minimum(budget, n / (p + (1.0 - p) * (1.0 - q)))
    if life.max() <= MAX_ROUNDS:
        return
    life = np.minimum(budget, expected_rounds(n, p, q))
    i = int(np.argmax(life))
    if life[i] > MAX_ROUNDS:
        raise ValueError(
            f"runs at n={int(n[i])}, p={float(p[i])!r}, q={float(q[i])!r}, budget="
            f"{float(budget[i]):g} live about {life[i]:.3g} rounds on average, more than the "
            f"{MAX_ROUNDS:,} the simulation steps through; use success_exact"
        )


class MonteCarloResult(NamedTuple):
    """Estimate of a success probability from simulated runs, with its Wilson 95 % interval."""

    estimate: float | np.ndarray
    low: float | np.ndarray
    high: float | np.ndarray
    trials: int
    successes: int | np.ndarray


def wilson(successes, trials, z=_Z95):
    """Wilson score interval with normal quantile ``z`` (95 % by default), within [0, 1].

    Public for :func:`decompkit.harness.simulate`, which gives its own confidence.
    """
    z2 = z * z
    phat = successes / trials
    centre = (phat + z2 / (2 * trials)) / (1 + z2 / trials)
    half = z * np.sqrt(phat * (1 - phat) / trials + z2 / (4 * trials**2)) / (1 + z2 / trials)
    # The interval always contains phat; min/max keep that true under rounding at 0 and 1.
    low = np.maximum(np.minimum(centre - half, phat), 0.0)
    high = np.minimum(np.maximum(centre + half, phat), 1.0)
    return low, high


def success_monte_carlo(n, p, q, budget, trials=20_000, seed=None):
    r"""Estimate success within ``budget`` rounds by simulating the audited chain.

    Parameters
    ----------
    n, p, q, budget
        As in :func:`success_exact`; they broadcast, and every point gets ``trials`` runs.
    trials : int
        Simulated runs per point, ``>= 1``; at most 10**7 runs per call in all (trials
        times the number of points), about 0.5 GB of working memory at the bound.
    seed : None, int or numpy.random.Generator
        Source of randomness; the same int gives the same result. A Generator is used (and
        advanced) as given.

    Returns
    -------
    MonteCarloResult
        ``estimate`` (fraction of runs that finished), ``low`` and ``high`` (Wilson 95 %
        interval), ``trials`` and ``successes``; floats for scalar input, arrays otherwise.

    Raises
    ------
    ValueError
        On a bad ``n``, ``p``, ``q`` or ``budget`` (as in :func:`success_exact`), ``trials``
        not a whole number >= 1 or above the bound, a ``seed`` of the wrong kind, or a point
        whose runs would live more than 10**6 rounds on average (a tiny ``p`` with ``q``
        near 1 and a huge budget): the simulation steps every round.

    Notes
    -----
    Each round draws one uniform :math:`u` per live run: :math:`u < p` advances,
    :math:`p \le u < p + (1-p)q` is a caught error (the run stays), anything above corrupts
    the run. A run leaves the simulation as soon as its fate is decided: it finished, it was
    corrupted, or it needs more advances than rounds remain (it can no longer finish). Runs
    with ``p = 0`` can never advance and fail at once. The work is proportional to the
    rounds actually lived, not ``trials * budget``. All points of one call share one stream of
    random numbers, so a point's draws depend on the whole call; the same call with the same
    seed reproduces exactly.

    Examples
    --------
    >>> from decompkit.markov import success_exact
    >>> mc = success_monte_carlo(50, 0.95, 0.9, 100, trials=20_000, seed=1)
    >>> mc.low < success_exact(50, 0.95, 0.9, 100) < mc.high
    True
    >>> mc == success_monte_carlo(50, 0.95, 0.9, 100, trials=20_000, seed=1)
    True
    """
    n, p, q, budget = chain_args(n, p, q, budget)
    trials = int(
        single(
            "trials",
            count("trials", trials, minimum=1, maximum=MAX_RUNS, why=" (simulated runs per call)"),
        )
    )
    _check_work(n, p, q, budget, trials)
    generator = random_generator(seed)
    successes = _simulate(n.ravel(), p.ravel(), q.ravel(), budget.ravel(), trials, generator)
    successes = successes.reshape(n.shape)
    low, high = wilson(successes, trials)
    return MonteCarloResult(
        estimate=scalar_or_array(successes / trials),
        low=scalar_or_array(low),
        high=scalar_or_array(high),
        trials=trials,
        successes=scalar_or_array(successes),
    )


def _simulate(n, p, q, budget, trials, generator):
    """Successes per point; every run draws one uniform per round it is alive."""
    # u < advance: advance; advance <= u < keep: caught, stays; u >= keep: corrupted.
    advance = p
    keep = np.where(q == 1.0, 1.0, p + (1.0 - p) * q)
    successes = np.where(n == 0, trials, 0).astype(np.int64)
    live = np.flatnonzero((n > 0) & (budget >= n) & (p > 0.0))
    if live.size == 0:
        return successes
    # No run finishes before round first_finish; none is hopeless before round slack + 1.
    first_finish = int(n[live].min())
    slack = int((budget - n)[live].min())
    dtype = np.int32 if n[live].max() < 2**31 else np.int64
    one_point = live.size == 1
    if one_point:
        i = int(live[0])
        a, c, b = advance[i], keep[i], int(budget[i])
        left = np.full(trials, n[i], dtype=dtype)  # advances still needed, per run
    else:
        point = np.repeat(live, trials)
        left = n[point].astype(dtype)
    t = 0
    while left.size:
        t += 1
        u = generator.random(left.size)
        if not one_point:
            a, c = advance[point], keep[point]
        left -= u < a
        alive = u < c
        if t >= first_finish:
            done = left == 0
            if one_point:
                successes[i] += np.count_nonzero(done)
            else:
                successes += np.bincount(point[done], minlength=n.size)
            alive &= ~done
        if t > slack:
            # Retire runs that need more advances than rounds remain: they cannot finish.
            alive &= left <= (b if one_point else budget[point]) - t
        left = left[alive]
        if not one_point:
            point = point[alive]
    return successes
