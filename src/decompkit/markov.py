r"""Long-horizon execution as an absorbing Markov chain (Manage-Execute-Audit).

State :math:`i \in \{0, \dots, n\}` counts subtasks verifiably done; :math:`C` is corrupted.
From :math:`i < n` one round moves to :math:`i+1` with :math:`p`, stays with :math:`(1-p)q`
(the audit caught the error) and falls to :math:`C` with :math:`\lambda = (1-p)(1-q)`;
:math:`n` and :math:`C` absorb. Within a budget of :math:`B` rounds,

.. math:: P_\mathrm{success} = (e_0^\top P^B)_n
          = \sum_{t=n}^{B} \binom{t-1}{n-1} p^n \big((1-p)q\big)^{t-n}.

Numeric functions broadcast like NumPy ufuncs: scalars give a Python ``float``, arrays an array.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from ._validate import broadcast, count, probability, scalar_or_array

__all__ = [
    "transition_matrix",
    "success_matrix_power",
    "success_exact",
    "success_monte_carlo",
    "MonteCarloResult",
    "grounded_survival",
    "grounded_half_life",
    "expected_rounds",
    "min_budget_factor",
    "collapse_horizon",
    "reference_table",
    "ReferenceTable",
    "ReferenceRow",
]

#: Largest n the dense matrix method accepts: (n+2)^2 doubles and O(n^3 log B) work.
_MATRIX_MAX_N = 2000
#: Relative size of the tail that success_exact drops (far below double precision).
_TAIL_TOL = 1e-18
#: Elements per work array in success_exact; bounds memory for long curves of huge n.
_CHUNK = 1 << 20
#: Rows up to this many terms share one block whatever their lengths (padding is cheap).
_SHORT = 512
#: Points needing more terms than this are summed one at a time, segment by segment.
_LONG = 1 << 18
_SEGMENT = 1 << 16
#: Refuse (with a ValueError) a point whose sum would need more terms than this.
_MAX_TERMS = 1 << 27
#: Products below this (far above the subnormal range) are redone as sums of logs.
_TINY = 1e-280
#: exp() of anything below this rounds to 0.0 in double precision.
_LOG_UNDERFLOW = -746.0
#: Two-sided 95 % normal quantile, for the Wilson interval.
_Z95 = 1.959963984540054


def _scalar(name: str, arr: np.ndarray):
    """Reject arrays where a single number is required."""
    if arr.ndim != 0:
        raise ValueError(f"{name} must be a single number, got an array of shape {arr.shape}")
    return arr.item()


def transition_matrix(n, p, q):
    r"""The :math:`(n+2) \times (n+2)` row-stochastic matrix of the audited chain.

    Parameters
    ----------
    n : int
        Number of subtasks, ``n >= 0``.
    p : float
        Probability that one round of the executor is correct.
    q : float
        Probability that the audit catches a wrong round.

    Returns
    -------
    ndarray
        ``P[i, j]`` is the probability of moving from state ``i`` to ``j`` in one round.
        States are ordered ``0, 1, ..., n`` and then ``C`` (index ``n + 1``).

    Raises
    ------
    ValueError
        If ``p`` or ``q`` is outside [0, 1], ``n`` is not a whole number >= 0, or an
        argument is an array.

    Notes
    -----
    Row ``i < n`` holds ``p`` at ``i + 1``, ``(1-p) q`` at ``i`` and ``(1-p)(1-q)`` at ``C``.
    Rows ``n`` and ``C`` put 1 on the diagonal: both states absorb.

    Examples
    --------
    >>> transition_matrix(2, 0.9, 0.5)
    array([[0.05, 0.9 , 0.  , 0.05],
           [0.  , 0.05, 0.9 , 0.05],
           [0.  , 0.  , 1.  , 0.  ],
           [0.  , 0.  , 0.  , 1.  ]])
    """
    n = int(_scalar("n", count("n", n)))
    p = _scalar("p", probability("p", p))
    q = _scalar("q", probability("q", q))
    size = n + 2
    P = np.zeros((size, size))
    i = np.arange(n)
    P[i, i + 1] = p
    P[i, i] = (1.0 - p) * q
    P[i, n + 1] = (1.0 - p) * (1.0 - q)
    P[n, n] = 1.0
    P[n + 1, n + 1] = 1.0
    return P


def success_matrix_power(n, p, q, budget):
    r"""Success within ``budget`` rounds by the textbook method, :math:`(e_0^\top P^B)_n`.

    Parameters
    ----------
    n : int or array_like of int
        Number of subtasks, ``0 <= n <= 2000``.
    p, q : float or array_like
        Executor accuracy per round and audit detection probability.
    budget : int or array_like of int
        Round budget ``B >= 0``; ``B < n`` is legal and gives 0.

    Returns
    -------
    float or ndarray
        Probability that state ``n`` is reached within ``budget`` rounds.

    Raises
    ------
    ValueError
        On a bad argument (see :func:`success_exact`) or ``n > 2000``: the dense matrix has
        ``(n+2)^2`` entries and each product costs :math:`O(n^3)`.

    Notes
    -----
    The row vector :math:`e_0^\top` is carried through the binary digits of ``B``
    (square-and-multiply): :math:`O(n^3 \log B)` per point. This is the readable reference
    against which :func:`success_exact` is tested; use that function for real work.

    Examples
    --------
    >>> round(success_matrix_power(10, 0.95, 0.5, 20), 3)
    0.771
    """
    n, p, q, budget = _chain_args(n, p, q, budget)
    if n.size and n.max() > _MATRIX_MAX_N:
        raise ValueError(
            f"n must be <= {_MATRIX_MAX_N} for the matrix method, got {int(n.max())!r}; "
            "use success_exact"
        )
    out = np.empty(n.shape)
    for idx in np.ndindex(n.shape):
        P = transition_matrix(int(n[idx]), float(p[idx]), float(q[idx]))
        row = np.zeros(P.shape[0])
        row[0] = 1.0
        power, b = P, int(budget[idx])
        while b:
            if b & 1:
                row = row @ power
            b >>= 1
            if b:
                power = power @ power
        out[idx] = row[int(n[idx])]
    return scalar_or_array(out)


def _chain_args(n, p, q, budget):
    """Validate and broadcast the four chain arguments."""
    n = count("n", n)
    p = probability("p", p)
    q = probability("q", q)
    budget = count("budget", budget)
    return broadcast(n=n, p=p, q=q, budget=budget)


def success_exact(n, p, q, budget):
    r"""Probability of finishing all ``n`` subtasks within ``budget`` rounds, exactly and fast.

    Parameters
    ----------
    n : int or array_like of int
        Number of subtasks, ``n >= 0``.
    p : float or array_like
        Probability that one round of the executor is correct.
    q : float or array_like
        Probability that the audit catches a wrong round.
    budget : int or array_like of int
        Round budget ``B >= 0``. ``B < n`` is legal: the task cannot finish, success is 0.

    Returns
    -------
    float or ndarray
        :math:`(e_0^\top P^B)_n`, broadcast over the four arguments.

    Raises
    ------
    ValueError
        If ``p`` or ``q`` is outside [0, 1] or NaN, ``n`` or ``budget`` is not a whole number
        >= 0, or the arguments cannot be broadcast together; also for a point whose sum would
        need more than 2**27 terms (only a tiny ``p`` with ``q`` near 1 and a budget of many
        times ``n / p`` rounds gets there).

    Notes
    -----
    A success path has ``n`` advances and ``k = t - n`` caught errors, the last round an
    advance, so with :math:`r = (1-p)q`

    .. math:: P = p^n \sum_{k=0}^{B-n} \binom{n-1+k}{k} r^k ,

    the probability that the ``n``-th advance of a negative-binomial sequence comes by round
    ``B``. Edge cases: ``n = 0`` gives 1; ``B < n`` gives 0; ``p = 0`` gives 0; ``r = 0``
    (``q = 0`` or ``p = 1``) gives :math:`p^n` for every ``B >= n``; ``q = 1`` gives the
    binomial tail :math:`P[\mathrm{Bin}(B, p) \ge n]`.

    The terms :math:`a_k` are unimodal with ratio :math:`a_{k+1}/a_k = r(n+k)/(k+1)`. The sum
    is taken relative to the largest term: from the mode outwards the running products of
    ratios are at most 1 (no overflow, relative error about ``k`` ulps), and the largest term
    is :math:`p^n` times the product of the ratios below the mode, taken in log space (as a
    sum of logs where the product would underflow). Once the ratio is below
    :math:`\rho = r + \theta(1-r)` the tail is geometric and is cut where it falls below
    :math:`10^{-18}` of the sum (best of :math:`\theta \in \{1/4, 1/2, 3/4\}`), so the
    work per point is :math:`O(\min(B - n,\; nr/(1-r)))` and a huge budget costs no more than
    a large one. Points are summed together in padded blocks of similar length, all
    vectorised; ``n = 10**5`` takes milliseconds. Points longer than 2**18 terms are summed
    one by one from an ``lgamma`` value of the largest term, walking outwards until the terms
    underflow (relative accuracy about 1e-10 there). ``n = 1`` is summed in closed form, and
    a point whose upper bound :math:`\min\{(p/(1-r))^n, (eBp/n)^n\}` is below the smallest
    double returns 0 at once. Checked against exact rational arithmetic for ``n <= 300``,
    the absolute error stayed below 1e-13.

    References
    ----------
    J. G. Kemeny and J. L. Snell, *Finite Markov Chains*, Springer, 1976 (absorbing chains).

    Examples
    --------
    >>> round(success_exact(50, 0.95, 0.9, 100), 3)
    0.769
    >>> success_exact([10, 25, 50], 0.95, 0.0, [20, 50, 100]).round(3)
    array([0.599, 0.277, 0.077])
    >>> success_exact(5, 0.95, 0.5, 4)  # budget below n: cannot finish
    0.0
    >>> 0.0 < success_exact(10**5, 0.95, 0.9, 2 * 10**5) < 1.0
    True
    """
    n, p, q, budget = _chain_args(n, p, q, budget)
    out = _success_flat(n.ravel(), p.ravel(), q.ravel(), budget.ravel())
    return scalar_or_array(out.reshape(n.shape))


def _success_flat(n, p, q, budget):
    """success_exact on validated 1-d arrays."""
    out = np.zeros(n.shape)
    out[n == 0] = 1.0
    r = (1.0 - p) * q
    reachable = (budget >= n) & (n > 0)
    # r = 0: no caught errors, so the only success path is n advances in a row.
    plain = reachable & (r == 0.0)
    if plain.any():
        with np.errstate(under="ignore"):
            out[plain] = np.power(p[plain], n[plain].astype(float))
    rest = np.flatnonzero(reachable & (r > 0.0) & (p > 0.0))
    if rest.size:
        out[rest] = _series(n[rest], p[rest], q[rest], r[rest], budget[rest])
    return out


def _series(n, p, q, r, budget):
    r"""Success for ``n >= 1``, ``budget >= n``, ``p > 0`` and ``r > 0``."""
    out = np.zeros(n.shape)
    # 1 - r written without cancellation (it is >= p > 0).
    one_minus_r = p + (1.0 - p) * (1.0 - q)
    with np.errstate(divide="ignore"):
        # Two upper bounds on success: s^n with s = p/(1-r) (unlimited budget), and
        # P[Bin(B, p) >= n] <= (e B p / n)^n (n advances among B rounds). Below e^-746 the
        # answer rounds to 0.0 in double precision, so no sum is needed.
        log_bound = n * np.minimum(np.log(p / one_minus_r), 1.0 + np.log(budget * p / n))
    live = log_bound > _LOG_UNDERFLOW
    # n = 1 is a geometric series, p (1 - r^B) / (1 - r), summed in closed form.
    single = live & (n == 1)
    if single.any():
        omr, r1 = one_minus_r[single], r[single]
        # log r, from whichever of r and 1 - r is known to more digits.
        log_r = np.where(omr < 0.5, np.log1p(-np.minimum(omr, 0.5)), np.log(r1))
        out[single] = p[single] / omr * -np.expm1(budget[single] * log_r)
        live &= n > 1
    if live.all():
        return _negative_binomial_sum(n, p, r, one_minus_r, budget - n)
    if live.any():
        out[live] = _negative_binomial_sum(
            n[live], p[live], r[live], one_minus_r[live], budget[live] - n[live]
        )
    return out


def _negative_binomial_sum(n, p, r, one_minus_r, extra):
    r"""Sum :math:`p^n \sum_{k \le K} \binom{n-1+k}{k} r^k` for ``n >= 2``, ``0 < p``, ``0 < r``."""
    keff = _tail_cut(n, r, one_minus_r, extra)
    # Mode of the terms: the first k whose ratio r(n+k)/(k+1) is at most 1.
    with np.errstate(over="ignore"):
        mode = np.ceil((r * n - 1.0) / one_minus_r)
    mode = np.clip(mode, 0, keff).astype(np.int64)
    longest = int(keff.max())
    if longest <= _SHORT and n.size * (longest + 1) <= _CHUNK:  # usual: one block, no sort
        return np.minimum(_block_sum(n, p, r, keff, mode), 1.0)
    out = np.empty(n.shape)
    long = keff > _LONG
    for i in np.flatnonzero(long):
        out[i] = _walk_sum(
            int(n[i]), float(p[i]), float(r[i]), float(one_minus_r[i]), int(keff[i]), int(mode[i])
        )
    short = np.flatnonzero(~long)
    order = short[np.argsort(keff[short], kind="stable")]
    lengths = keff[order]
    start = 0
    while start < order.size:
        # Group points of similar length so padding wastes at most half of each block.
        width = max(2 * int(lengths[start]), _SHORT)
        stop = int(np.searchsorted(lengths, width, side="right"))
        stop = min(stop, start + max(1, _CHUNK // (width + 1)))
        rows = order[start:stop]
        out[rows] = _block_sum(n[rows], p[rows], r[rows], keff[rows], mode[rows])
        start = stop
    return np.minimum(out, 1.0)


def _tail_cut(n, r, one_minus_r, extra):
    """Number of terms beyond which the rest of the series is below _TAIL_TOL of the sum."""
    # Pick a ratio bound rho = r + theta (1 - r) < 1. From k1 = (r n - rho)/(rho - r) on, the
    # ratio is at most rho, so the tail after k1 + m terms is at most
    # a_k1 rho^m / (1 - rho) <= sum * rho^m / (1 - rho). Keep the best of a few thetas.
    theta = np.array([[0.25], [0.5], [0.75]])
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        gap = (1.0 - theta) * one_minus_r  # 1 - rho, without cancellation
        k1 = np.maximum((r * n - (1.0 - gap)) / (theta * one_minus_r), 0.0)
        m = (-math.log(_TAIL_TOL) - np.log(gap)) / -np.log1p(-gap)
        cut = np.fmin.reduce(np.ceil(k1) + np.ceil(m), axis=0)
    keff = extra.copy()
    shorter = cut < extra  # fmin skipped any NaN from degenerate 1 - r
    keff[shorter] = cut[shorter].astype(np.int64)
    return keff


def _block_sum(n, p, r, keff, mode):
    """The series for a block of points, relative to each point's largest term."""
    rows = np.arange(n.size)
    nf = n[:, None].astype(float)
    rc = r[:, None]
    # Right of the mode: ratios a_{k+1}/a_k for k = mode, mode + 1, ..., all <= 1. A zero
    # at k = keff ends each row: the running product carries it to the padding.
    span = keff - mode
    k = (mode[:, None] + np.arange(int(span.max()))).astype(float)
    ratio = rc * (nf + k) / (k + 1.0)
    ends = span < ratio.shape[1]
    ratio[rows[ends], span[ends]] = 0.0
    right = np.cumprod(ratio, axis=1).sum(axis=1)
    # Left of the mode: inverse ratios a_k/a_{k+1} for k = mode - 1, ..., 0, all < 1. The
    # padding uses k = -1, whose factor (k + 1)/(r (n + k)) is exactly 0.
    k = np.maximum(mode[:, None] - 1 - np.arange(int(mode.max())), -1).astype(float)
    inverse = (k + 1.0) / (rc * (nf + k))
    run = np.cumprod(inverse, axis=1)
    left = run.sum(axis=1)
    # log a_mode = n log p - log(a_0 / a_mode), and a_0 / a_mode is the full left product.
    # Where that product is too small to trust, sum the logs of the factors instead.
    product = np.ones(n.size)
    has_left = mode > 0
    product[has_left] = run[rows[has_left], mode[has_left] - 1]
    log_ratio = np.log(np.maximum(product, _TINY))
    small = product < _TINY
    if small.any():
        factors = inverse[small]
        log_ratio[small] = np.log(np.where(factors > 0.0, factors, 1.0)).sum(axis=1)
    return np.exp(n * np.log(p) - log_ratio) * (1.0 + right + left)


def _walk_sum(n, p, r, one_minus_r, keff, mode):
    """The series for one long point: walk out from the mode until the terms underflow."""
    # The terms fall like a normal density of sd sqrt(n r)/(1 - r) around the mode and
    # underflow about 39 sd away; refuse at once a walk that is clearly too long.
    reach = 40.0 * math.sqrt(n * r) / one_minus_r + 64.0
    if min(keff - mode, reach) + min(mode, reach) > 4 * _MAX_TERMS:
        raise _too_long(n, p, r)
    # The mode's log size from lgamma (relative accuracy ~1e-16 times its magnitude, so
    # about 1e-10 for the millions of terms that send a point here).
    log_mode = (
        n * math.log(p)
        + mode * math.log(r)
        + math.lgamma(n + mode)
        - math.lgamma(mode + 1)
        - math.lgamma(n)
    )
    total, walked = 1.0, 0
    for direction in (+1, -1):
        carry, k = 1.0, mode
        while carry > 0.0 and (k < keff if direction > 0 else k > 0):
            if direction > 0:  # ratios a_{k+1}/a_k for k = mode, mode + 1, ...
                ks = np.arange(k, min(k + _SEGMENT, keff), dtype=float)
                factors = r * (n + ks) / (ks + 1.0)
                k += ks.size
            else:  # inverse ratios a_k/a_{k+1} for k = mode - 1, mode - 2, ..., 0
                ks = np.arange(k - 1, max(k - 1 - _SEGMENT, -1), -1, dtype=float)
                factors = (ks + 1.0) / (r * (n + ks))
                k -= ks.size
            run = carry * np.cumprod(factors)
            total += run.sum()
            carry = run[-1]
            walked += ks.size
            if walked > _MAX_TERMS:
                raise _too_long(n, p, r)
    return math.exp(log_mode) * total


def _too_long(n, p, r) -> ValueError:
    return ValueError(
        f"success_exact needs more than {_MAX_TERMS} terms at n={n}, p={p!r} with "
        f"(1-p)q={r!r}: the executor almost never advances while nearly every error is "
        "caught, over a huge budget; use a smaller budget"
    )


class MonteCarloResult(NamedTuple):
    """Estimate of a success probability from simulated runs, with its Wilson 95 % interval."""

    estimate: float | np.ndarray
    low: float | np.ndarray
    high: float | np.ndarray
    trials: int
    successes: int | np.ndarray


def _rng(seed) -> np.random.Generator:
    if isinstance(seed, np.random.Generator):
        return seed
    if seed is None or (
        isinstance(seed, numbers.Integral) and not isinstance(seed, bool) and seed >= 0
    ):
        return np.random.default_rng(seed)
    raise ValueError(
        f"seed must be None, an integer >= 0 or a numpy.random.Generator, got {seed!r}"
    )


def _wilson(successes, trials):
    """Wilson score interval at 95 %, within [0, 1]."""
    z2 = _Z95 * _Z95
    phat = successes / trials
    centre = (phat + z2 / (2 * trials)) / (1 + z2 / trials)
    half = _Z95 * np.sqrt(phat * (1 - phat) / trials + z2 / (4 * trials**2)) / (1 + z2 / trials)
    # The interval always contains phat; min/max keep that true under rounding at 0 and 1.
    return np.maximum(np.minimum(centre - half, phat), 0.0), np.minimum(
        np.maximum(centre + half, phat), 1.0
    )


def success_monte_carlo(n, p, q, budget, trials=20_000, seed=None):
    r"""Estimate success within ``budget`` rounds by simulating the audited chain.

    Parameters
    ----------
    n, p, q, budget
        As in :func:`success_exact`; they broadcast, and every point gets ``trials`` runs.
    trials : int
        Simulated runs per point, ``>= 1``.
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
        not a whole number >= 1, or a ``seed`` of the wrong kind.

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
    >>> mc = success_monte_carlo(50, 0.95, 0.9, 100, trials=20_000, seed=1)
    >>> mc.low < success_exact(50, 0.95, 0.9, 100) < mc.high
    True
    >>> mc == success_monte_carlo(50, 0.95, 0.9, 100, trials=20_000, seed=1)
    True
    """
    n, p, q, budget = _chain_args(n, p, q, budget)
    trials = int(_scalar("trials", count("trials", trials, minimum=1)))
    rng = _rng(seed)
    successes = _simulate(n.ravel(), p.ravel(), q.ravel(), budget.ravel(), trials, rng)
    successes = successes.reshape(n.shape)
    low, high = _wilson(successes, trials)
    return MonteCarloResult(
        estimate=scalar_or_array(successes / trials),
        low=scalar_or_array(low),
        high=scalar_or_array(high),
        trials=trials,
        successes=scalar_or_array(successes),
    )


def _simulate(n, p, q, budget, trials, rng):
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
    single = live.size == 1
    if single:
        i = int(live[0])
        a, c, b = advance[i], keep[i], int(budget[i])
        left = np.full(trials, n[i], dtype=dtype)  # advances still needed, per run
    else:
        point = np.repeat(live, trials)
        left = n[point].astype(dtype)
    t = 0
    while left.size:
        t += 1
        u = rng.random(left.size)
        if not single:
            a, c = advance[point], keep[point]
        left -= u < a
        alive = u < c
        if t >= first_finish:
            done = left == 0
            if single:
                successes[i] += np.count_nonzero(done)
            else:
                successes += np.bincount(point[done], minlength=n.size)
            alive &= ~done
        if t > slack:
            # Retire runs that need more advances than rounds remain: they cannot finish.
            alive &= left <= (b if single else budget[point]) - t
        left = left[alive]
        if not single:
            point = point[alive]
    return successes


def _escape_args(p, q, **counts):
    """Validate p, q and any whole-number arguments, broadcast all, add lambda."""
    arrays = {name: count(name, value) for name, value in counts.items()}
    arrays = broadcast(**arrays, p=probability("p", p), q=probability("q", q))
    p, q = arrays[-2], arrays[-1]
    return (*arrays, (1.0 - p) * (1.0 - q))


def grounded_survival(t, p, q):
    r"""Probability that the run is still uncorrupted after ``t`` rounds, ignoring completion.

    Parameters
    ----------
    t : int or array_like of int
        Rounds, ``t >= 0``.
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

    Examples
    --------
    >>> round(grounded_survival(100, 0.95, 0.9), 4)
    0.6058
    >>> grounded_survival([0, 1, 2], 0.5, 0.0).tolist()
    [1.0, 0.5, 0.25]
    """
    t, _, _, lam = _escape_args(p, q, t=t)
    return scalar_or_array(np.power(1.0 - lam, t.astype(float)))


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
        Number of subtasks, ``n >= 0``.
    p, q : float or array_like
        Executor accuracy and audit detection probability.

    Returns
    -------
    float or ndarray
        :math:`(1 - s^n)/\lambda` with :math:`s = p / (p + \lambda)`; :math:`n/p` when
        :math:`\lambda = 0`; ``inf`` when ``p = 0`` and ``q = 1`` (the run never moves).

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
    """
    n, p, _, lam = _escape_args(p, q, n=n)
    out = np.empty(n.shape)
    moving = p > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        # 1 - s^n as -expm1(n log s), accurate when lambda is tiny and s close to 1.
        log_s = np.log1p(-lam[moving] / (p[moving] + lam[moving]))
        finite = -np.expm1(n[moving] * log_s) / lam[moving]
    out[moving] = np.where(lam[moving] > 0, finite, n[moving] / p[moving])
    # p = 0: each round either corrupts (lambda = 1 - q) or stays; never moves if q = 1.
    stuck = ~moving
    with np.errstate(divide="ignore"):
        out[stuck] = np.where(n[stuck] > 0, 1.0 / lam[stuck], 0.0)
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


def _budget_factor(value) -> float:
    if isinstance(value, (numbers.Real, np.floating)) and not isinstance(value, bool):
        value = float(value)
        if math.isfinite(value) and value >= 0:
            return value
    raise ValueError(f"budget_factor must be a finite number >= 0, got {value!r}")


def _budgets(ns: np.ndarray, budget_factor: float) -> np.ndarray:
    """round(budget_factor * n), half to even like Python's round."""
    return np.rint(budget_factor * ns).astype(np.int64)


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
        ``budget_factor`` is negative or not finite, or ``grid`` is empty or holds
        something other than whole numbers >= 0.

    Examples
    --------
    >>> [collapse_horizon(0.95, q) for q in (0.0, 0.5, 0.9, 1.0)]
    [15, 30, 135, None]
    """
    p = _scalar("p", probability("p", p))
    q = _scalar("q", probability("q", q))
    threshold = _scalar("threshold", probability("threshold", threshold))
    budget_factor = _budget_factor(budget_factor)
    grid = list(grid) if isinstance(grid, Iterable) else grid
    if isinstance(grid, list) and not grid:
        raise ValueError("grid must hold at least one horizon, got an empty grid")
    ns = count("grid", grid)
    if ns.ndim != 1:
        raise ValueError(f"grid must be a flat sequence of horizons, got {grid!r}")
    ns = np.sort(ns)
    below = np.asarray(success_exact(ns, p, q, _budgets(ns, budget_factor))) < threshold
    return int(ns[np.argmax(below)]) if below.any() else None


@dataclass(frozen=True)
class ReferenceRow:
    """One audit level of the reference table.

    ``success`` maps each horizon ``n`` to the success within ``round(budget_factor * n)``.
    """

    q: float
    success: dict[int, float]
    collapse_n: int | None
    half_life: float


@dataclass(frozen=True)
class ReferenceTable:
    """Success against horizon for a few audit levels, with collapse horizon and half-life."""

    p: float
    budget_factor: float
    ns: tuple[int, ...]
    grid_max: int
    rows: tuple[ReferenceRow, ...]

    def to_records(self) -> list[dict]:
        """The rows as plain dicts with the column names of :meth:`to_text`."""
        records = []
        for row in self.rows:
            record = {"q": row.q}
            record.update({f"n={n}": row.success[n] for n in self.ns})
            record["collapse n"] = row.collapse_n
            record["half-life"] = row.half_life
            records.append(record)
        return records

    def to_text(self) -> str:
        """A Markdown table: success to 3 decimals, half-life to 1, ``>max`` for no collapse."""
        header = ["q", *(f"n={n}" for n in self.ns), "collapse n", "half-life"]
        body = []
        for row in self.rows:
            collapse = f">{self.grid_max}" if row.collapse_n is None else str(row.collapse_n)
            half = "inf" if math.isinf(row.half_life) else f"{row.half_life:.1f}"
            cells = [f"{row.q:.2f}", *(f"{row.success[n]:.3f}" for n in self.ns)]
            body.append([*cells, collapse, half])
        widths = [max(len(r[i]) for r in [header, *body]) for i in range(len(header))]

        def line(cells):
            return "| " + " | ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)) + " |"

        rule = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
        return "\n".join([line(header), rule, *(line(r) for r in body)])

    _repr_markdown_ = to_text


def reference_table(
    p=0.95,
    budget_factor=2.0,
    qs=(0.0, 0.5, 0.9, 1.0),
    ns=(10, 25, 50, 100, 200),
    *,
    grid=range(5, 205, 5),
):
    r"""The lecture's reference table: success against horizon for several audit levels.

    Parameters
    ----------
    p : float
        Executor accuracy per round.
    budget_factor : float
        Budget per subtask; horizon ``n`` gets ``round(budget_factor * n)`` rounds.
    qs : sequence of float
        Audit detection probabilities, one row each.
    ns : sequence of int
        Horizons shown as columns.
    grid : iterable of int
        Horizons searched for the collapse horizon (see :func:`collapse_horizon`).

    Returns
    -------
    ReferenceTable
        ``rows`` (one :class:`ReferenceRow` per ``q``), ``to_records()`` for a data frame
        and ``to_text()`` for the Markdown rendering (also how Jupyter shows the table).

    Raises
    ------
    ValueError
        On a bad ``p``, ``q``, horizon, ``budget_factor`` or ``grid``.

    Examples
    --------
    >>> print(reference_table().to_text())
    | q    | n=10  | n=25  | n=50  | n=100 | n=200 | collapse n | half-life |
    |------|-------|-------|-------|-------|-------|------------|-----------|
    | 0.00 | 0.599 | 0.277 | 0.077 | 0.006 | 0.000 | 15         | 13.5      |
    | 0.50 | 0.771 | 0.522 | 0.273 | 0.074 | 0.006 | 30         | 27.4      |
    | 0.90 | 0.949 | 0.877 | 0.769 | 0.592 | 0.350 | 135        | 138.3     |
    | 1.00 | 1.000 | 1.000 | 1.000 | 1.000 | 1.000 | >200       | inf       |
    """
    p = _scalar("p", probability("p", p))
    budget_factor = _budget_factor(budget_factor)
    qs_arr = probability("q", qs).ravel()
    ns_arr = count("n", ns).ravel()
    grid = list(grid)
    success = success_exact(ns_arr[None, :], p, qs_arr[:, None], _budgets(ns_arr, budget_factor))
    success = np.asarray(success).reshape(qs_arr.size, ns_arr.size)
    rows = tuple(
        ReferenceRow(
            q=float(q),
            success={int(n): float(s) for n, s in zip(ns_arr, success[i], strict=True)},
            collapse_n=collapse_horizon(p, q, budget_factor, grid=grid),
            half_life=grounded_half_life(p, q),
        )
        for i, q in enumerate(qs_arr)
    )
    grid_max = int(max(grid)) if grid else 0
    return ReferenceTable(p, budget_factor, tuple(int(n) for n in ns_arr), grid_max, rows)
