r"""The long-sum engine behind :func:`decompkit.markov.success_exact`.

It evaluates :math:`p^n \sum_{k=0}^{K} \binom{n-1+k}{k} r^k` for many points at once. The
terms :math:`a_k` are unimodal with ratio :math:`a_{k+1}/a_k = r(n+k)/(k+1)`, so the sum is
taken relative to the largest term: from the mode outwards the running products of ratios
are at most 1 (no overflow, relative error about ``k`` ulps). The largest term itself is
:math:`p^n` times the product of the ratios below the mode for short points; for points with
``n + mode > 4096`` it comes from Loader's saddle-point form of the binomial probability
(Stirling errors and deviances), whose error does not grow with ``n`` as that product's and
as ``lgamma`` differences' do. Once the ratio is below :math:`\rho = r + \theta(1-r)` the
tail is geometric and is cut where it falls below :math:`10^{-18}` of the sum (best of
:math:`\theta \in \{1/4, 1/2, 3/4\}`); a budget beyond the cut changes nothing, so budgets are
floats of any size. Points are summed together in padded blocks of similar length, all
vectorised; points longer than 2**18 terms are walked one by one outwards from the mode
until the terms underflow. ``n = 1`` is summed in closed form, and a point whose upper bound
:math:`\min\{(p/(1-r))^n, (eBp/n)^n\}` is below the smallest double returns 0 at once.

References
----------
C. Loader, *Fast and Accurate Computation of Binomial Probabilities*, 2000 (the algorithm of
R's ``dbinom``).
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["success_flat"]

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
#: More terms than this (after the tail cut) can never be summed: refused at once.
_MAX_KEFF = float(2**62)
#: Points with n + mode above this take the largest term from Loader's formula instead of
#: the product of the ratios below the mode (whose rounding grows with their number).
_ANCHOR = 4096
#: Loader's series for the Stirling error, and the error itself for m = 0, 1, ..., 15 (the
#: values of R's stirlerr.c; checked against 40-digit Decimal arithmetic).
_S0, _S1, _S2, _S3, _S4 = 1 / 12, 1 / 360, 1 / 1260, 1 / 1680, 1 / 1188
_STIRLING_TABLE = np.array(
    [
        0.0,
        0.0810614667953272582196702,
        0.0413406959554092940938221,
        0.02767792568499833914878929,
        0.02079067210376509311152277,
        0.01664469118982119216319487,
        0.01387612882307074799874573,
        0.01189670994589177009505572,
        0.010411265261972096497478567,
        0.009255462182712732917728637,
        0.008330563433362871256469318,
        0.007573675487951840794972024,
        0.006942840107209529865664152,
        0.006408994188004207068439631,
        0.005951370112758847735624416,
        0.005554733551962801371038690,
    ]
)
#: exp() of anything below this rounds to 0.0 in double precision.
_LOG_UNDERFLOW = -746.0


def success_flat(n, p, q, budget):
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
        return _negative_binomial_sum(n, p, q, r, one_minus_r, budget - n)
    if live.any():
        out[live] = _negative_binomial_sum(
            n[live], p[live], q[live], r[live], one_minus_r[live], budget[live] - n[live]
        )
    return out


def _negative_binomial_sum(n, p, q, r, one_minus_r, extra):
    r"""Sum :math:`p^n \sum_{k \le K} \binom{n-1+k}{k} r^k` for ``n >= 2``, ``0 < p``, ``0 < r``.

    ``extra`` is :math:`B - n` as a float, of any size.
    """
    keff = _tail_cut(n, r, one_minus_r, extra)
    endless = keff > _MAX_KEFF
    if endless.any():
        # The tail never falls below the cut within 2**62 terms, so the terms are still
        # alive far beyond what any walk from the mode could sum.
        i = int(np.argmax(endless))
        raise _too_long(int(n[i]), float(p[i]), float(r[i]))
    keff = keff.astype(np.int64)
    # Mode of the terms: the first k whose ratio r(n+k)/(k+1) is at most 1.
    with np.errstate(over="ignore"):
        mode = np.ceil((r * n - 1.0) / one_minus_r)
    mode = np.clip(mode, 0, keff).astype(np.int64)
    longest = int(keff.max())
    if longest <= _SHORT and n.size * (longest + 1) <= _CHUNK:  # usual: one block, no sort
        return np.minimum(_block_sum(n, p, q, r, keff, mode), 1.0)
    out = np.empty(n.shape)
    long = keff > _LONG
    for i in np.flatnonzero(long):
        out[i] = _walk_sum(
            int(n[i]),
            float(p[i]),
            float(q[i]),
            float(r[i]),
            float(one_minus_r[i]),
            int(keff[i]),
            int(mode[i]),
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
        out[rows] = _block_sum(n[rows], p[rows], q[rows], r[rows], keff[rows], mode[rows])
        start = stop
    return np.minimum(out, 1.0)


def _tail_cut(n, r, one_minus_r, extra):
    """Terms to sum (a float): ``extra``, or fewer where the rest is below _TAIL_TOL of the sum."""
    # Pick a ratio bound rho = r + theta (1 - r) < 1. From k1 = (r n - rho)/(rho - r) on, the
    # ratio is at most rho, so the tail after k1 + m terms is at most
    # a_k1 rho^m / (1 - rho) <= sum * rho^m / (1 - rho). Keep the best of a few thetas.
    theta = np.array([[0.25], [0.5], [0.75]])
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        gap = (1.0 - theta) * one_minus_r  # 1 - rho, without cancellation
        k1 = np.maximum((r * n - (1.0 - gap)) / (theta * one_minus_r), 0.0)
        m = (-math.log(_TAIL_TOL) - np.log(gap)) / -np.log1p(-gap)
        cut = np.fmin.reduce(np.ceil(k1) + np.ceil(m), axis=0)
    return np.fmin(extra, cut)  # fmin skips any NaN from a degenerate 1 - r


def _block_sum(n, p, q, r, keff, mode):
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
    # Where that product is too small to trust, sum the logs of the factors instead. Its
    # rounding grows with the number of factors, so long points use Loader's formula.
    product = np.ones(n.size)
    has_left = mode > 0
    product[has_left] = run[rows[has_left], mode[has_left] - 1]
    log_ratio = np.log(np.maximum(product, _TINY))
    small = product < _TINY
    if small.any():
        factors = inverse[small]
        log_ratio[small] = np.log(np.where(factors > 0.0, factors, 1.0)).sum(axis=1)
    log_mode = n * np.log(p) - log_ratio
    far = has_left & (n + mode > _ANCHOR)
    if far.any():
        log_mode[far] = _log_term(n[far], mode[far], p[far], q[far])
    return np.exp(log_mode) * (1.0 + right + left)


def _stirling_error(m):
    r"""``log(m!) - log(sqrt(2 pi m) (m/e)^m)`` for whole ``m >= 1`` (Loader 2000)."""
    m = np.asarray(m, dtype=float)
    out = _STIRLING_TABLE[np.minimum(m, 15.0).astype(np.int64)]  # larger m: the series
    big = m > 15
    if big.any():
        mb = m[big]
        mm = mb * mb
        out[big] = (_S0 - (_S1 - (_S2 - (_S3 - _S4 / mm) / mm) / mm) / mm) / mb
    return out


def _deviance(x, mean):
    r"""``x log(x / mean) + mean - x`` without cancellation when ``x`` is near ``mean``."""
    d = x - mean
    s = x + mean
    with np.errstate(divide="ignore", invalid="ignore"):
        out = x * np.log(x / mean) + mean - x
    near = np.abs(d) < 0.1 * s
    if near.any():
        # 2x (v + v^3/3 + v^5/5 + ...) - d with v = d/s: each term is below 1/100 of the last.
        v = d[near] / s[near]
        total = d[near] * v
        term = 2.0 * x[near] * v
        for j in range(1, 12):
            term = term * v * v
            total = total + term / (2 * j + 1)
        out[near] = total
    return out


def _log_term(n, k, p, q):
    r"""``log(C(n-1+k, k) p^n r^k)`` for ``n >= 2``, ``k >= 1``, to a few ulps of its size.

    With :math:`P = p/(p+r)` and :math:`R = r/(p+r)` the term is
    :math:`\mathrm{Bin}(k; N, R)\,P\,(p+r)^{n+k}` for :math:`N = n - 1 + k`, and the
    binomial probability comes from Loader's saddle-point form: Stirling errors and
    deviances, all small numbers, instead of three ``lgamma`` values of size :math:`N \log N`
    whose difference loses :math:`\log_{10} N` digits.
    """
    n, k, p, q = (np.atleast_1d(np.asarray(x, dtype=float)) for x in (n, k, p, q))
    big_n = n - 1.0 + k
    lam = (1.0 - p) * (1.0 - q)  # p + r = 1 - lambda, but 1 - (p + r) would cancel
    p_plus_r = p + (1.0 - p) * q
    big_p, big_r = p / p_plus_r, (1.0 - p) * q / p_plus_r
    log_binomial = (
        _stirling_error(big_n)
        - _stirling_error(k)
        - _stirling_error(n - 1.0)
        - _deviance(k, big_n * big_r)
        - _deviance(n - 1.0, big_n * big_p)
        + 0.5 * np.log(big_n / (2.0 * math.pi * k * (n - 1.0)))
    )
    return log_binomial + np.log(big_p) + (n + k) * np.log1p(-lam)


def _walk_sum(n, p, q, r, one_minus_r, keff, mode):
    """The series for one long point: walk out from the mode until the terms underflow."""
    # The terms fall like a normal density of sd sqrt(n r)/(1 - r) around the mode and
    # underflow about 39 sd away; refuse at once a walk that is clearly too long.
    reach = 40.0 * math.sqrt(n * r) / one_minus_r + 64.0
    if min(keff - mode, reach) + min(mode, reach) > 4 * _MAX_TERMS:
        raise _too_long(n, p, r)
    log_mode = n * math.log(p) if mode == 0 else float(_log_term(n, mode, p, q)[0])
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
