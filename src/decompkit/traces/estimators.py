r"""Estimators for recorded agent runs: pass^k, and the chain model fitted to success against n.

pass^k (tau-bench) is the probability that all k i.i.d. trials of a task succeed, averaged over
tasks. From :math:`c_i` successes in :math:`n_i` trials of task *i*, the unbiased estimate is

.. math:: \widehat{\mathrm{pass}^k} = \frac1T \sum_{i=1}^{T} \binom{c_i}{k} \Big/ \binom{n_i}{k}.

The chain model says a task of *n* steps succeeds with :math:`a\,p^n`: a per-step rate *p* and,
with the start-up factor *a*, a share :math:`1 - a` of runs lost before the first step. Both
(:math:`a = 1` fixed, or *a* free in (0, 1]) are fitted by maximum likelihood over Bernoulli
trials, :math:`\ell = \sum s \log(a p^n) + (t - s) \log(1 - a p^n)`; AIC is
:math:`2 \cdot \text{parameters} - 2 \ell`. Confidence intervals resample whole tasks.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

__all__ = ["pass_hat_k", "mixture_pass_k", "Fit", "fit_chain", "bootstrap_fit"]

# Bounds of the rates searched: p = 1 or a = 0 would make a failure or a success impossible.
_LOW, _HIGH = 1e-9, 1.0 - 1e-12
#: Points of the coarse grid over p that brackets the start-up fit's maximum.
_GRID = 41
#: Bisection and golden-section steps: brackets end below 3e-14 and 1e-10 wide.
_BISECT, _GOLDEN = 45, 45
#: Newton steps for the best a at a given p, at most (8 sufficed at 10^5 random points, p^n
#: down to 0); a step below this share of a is rounding, and the search stops there.
_NEWTON, _SETTLED = 40, 4e-16


def _outcome_counts(outcomes) -> tuple[np.ndarray, np.ndarray]:
    if isinstance(outcomes, (str, bytes)) or not hasattr(outcomes, "__len__"):
        raise ValueError(f"outcomes must hold one sequence of booleans per task, got {outcomes!r}")
    if len(outcomes) == 0:
        raise ValueError(f"outcomes must hold at least one task, got {outcomes!r}")
    wins, trials = [], []
    for task in outcomes:
        values = np.asarray(task)
        if values.ndim != 1 or values.size == 0 or not np.isin(values, (0, 1)).all():
            raise ValueError(f"outcomes must hold one sequence of booleans per task, got {task!r}")
        wins.append(int(values.astype(bool).sum()))
        trials.append(values.size)
    return np.array(wins), np.array(trials)


def pass_hat_k(outcomes, k):
    r"""The unbiased estimate of pass^k: the chance that all k trials of a task succeed.

    Parameters
    ----------
    outcomes : sequence of sequences of bool
        One sequence of trial outcomes per task (1/0 accepted); tasks may have different
        numbers of trials, each at least ``k``.
    k : int or array_like of int
        Trials that must all succeed, at least 1; an array gives one estimate per entry.

    Returns
    -------
    float or numpy.ndarray
        :math:`\frac1T\sum_i \binom{c_i}{k}/\binom{n_i}{k}`, shaped like ``k``.

    Raises
    ------
    ValueError
        If ``outcomes`` is empty or holds no booleans, or ``k`` is not a whole number in
        [1, fewest trials of a task].

    Notes
    -----
    :math:`\binom{c}{k}/\binom{n}{k}` is the chance that k trials drawn without replacement
    from the task's n all succeed: unbiased for :math:`p_i^k` when the n trials are i.i.d. with
    rate :math:`p_i`. pass^1 is the mean success; pass^k falls with k, more slowly than
    :math:`(\text{pass}^1)^k` when tasks differ (Jensen: :math:`E[p_i^k] \ge (E p_i)^k`).

    References
    ----------
    S. Yao et al., "tau-bench: A Benchmark for Tool-Agent-User Interaction in Real-World
    Domains", 2024 (section 3, pass^k).

    Examples
    --------
    >>> pass_hat_k([[1, 1, 0, 1], [0, 0, 0, 0]], 2)
    0.25
    >>> pass_hat_k([[True, True], [True, False]], [1, 2]).tolist()
    [0.75, 0.5]
    >>> pass_hat_k([[1, 0]], 3)
    Traceback (most recent call last):
    ...
    ValueError: k must be a whole number in [1, 2] (the fewest trials of a task), got 3
    """
    wins, trials = _outcome_counts(outcomes)
    ks = np.asarray(k)
    most = int(trials.min())
    flat = ks.ravel().tolist()
    if ks.dtype == bool or not all(isinstance(x, int) and 1 <= x <= most for x in flat):
        raise ValueError(
            f"k must be a whole number in [1, {most}] (the fewest trials of a task), got {k!r}"
        )
    values = [
        sum(math.comb(c, x) / math.comb(n, x) for c, n in zip(wins, trials, strict=True))
        / len(wins)
        for x in flat
    ]
    return float(values[0]) if ks.ndim == 0 else np.array(values).reshape(ks.shape)


def mixture_pass_k(mean, spread, k):
    r"""pass^k of tasks whose rates differ: :math:`E[p_i^k]` for Beta-distributed rates.

    Parameters
    ----------
    mean : float or array_like
        The mean rate :math:`E[p_i]` over tasks, in [0, 1].
    spread : float or array_like
        How much the tasks differ, in [0, 1]: 0 gives every task the rate ``mean``; 1 splits
        them into tasks always solved (a share ``mean``) and tasks never solved. In between,
        :math:`p_i \sim \mathrm{Beta}(m c, (1 - m) c)` with :math:`c = 1/\text{spread} - 1`,
        so that :math:`\mathrm{Var}\,p_i = \text{spread} \cdot m (1 - m)`.
    k : int or array_like of int
        Trials that must all succeed, at least 1.

    Returns
    -------
    float or numpy.ndarray
        :math:`\prod_{j=0}^{k-1} (m c + j) / (c + j)`, broadcast over the arguments.

    Raises
    ------
    ValueError
        If ``mean`` or ``spread`` lies outside [0, 1], or ``k`` is not a whole number >= 1.

    Notes
    -----
    pass^1 is the mean whatever the spread; for k >= 2 pass^k grows with the spread from
    :math:`m^k` (Jensen) up to :math:`m`.

    Examples
    --------
    >>> float(mixture_pass_k(0.5, 0.0, 3)), float(mixture_pass_k(0.5, 1.0, 3))
    (0.125, 0.5)
    >>> mixture_pass_k(0.42, [0.0, 0.3, 1.0], 2).round(4).tolist()
    [0.1764, 0.2495, 0.42]
    >>> mixture_pass_k(1.2, 0.1, 2)
    Traceback (most recent call last):
    ...
    ValueError: mean must be in [0, 1], got 1.2
    """
    arrays = []
    for name, value in (("mean", mean), ("spread", spread)):
        array = np.asarray(value, dtype=float)
        if not np.all((array >= 0) & (array <= 1)):
            raise ValueError(f"mean must be in [0, 1], got {value!r}".replace("mean", name, 1))
        arrays.append(array)
    ks = np.asarray(k)
    if ks.dtype.kind not in "iu" or np.any(ks < 1):
        raise ValueError(f"k must be a whole number >= 1, got {k!r}")
    m, s, ks = np.broadcast_arrays(*arrays, ks)
    top = int(ks.max()) if ks.size else 1
    with np.errstate(divide="ignore", invalid="ignore"):
        c = np.where(s > 0, 1 / s - 1, np.inf)
        j = np.arange(top).reshape((top,) + (1,) * m.ndim)
        factors = np.where(np.isinf(c), m, (m * c + j) / (c + j))
        factors = np.where(s == 1, np.where(j == 0, m, 1.0), factors)  # all or nothing
    factors = np.where(j < ks, factors, 1.0)
    result = factors.prod(axis=0)
    return float(result) if result.ndim == 0 else result


@dataclass(frozen=True)
class Fit:
    """A maximum-likelihood fit of success :math:`a p^n` against the steps n.

    Attributes
    ----------
    a : float
        The start-up factor (1.0 when it was held fixed).
    p : float
        The per-step rate.
    log_likelihood : float
        :math:`\\ell` at the fit, over Bernoulli trials.
    parameters : int
        1 for :math:`p^n`, 2 for :math:`a p^n`.
    """

    a: float
    p: float
    log_likelihood: float
    parameters: int

    @property
    def aic(self) -> float:
        """Akaike's criterion :math:`2 \\cdot \\text{parameters} - 2\\ell` (lower is better)."""
        return 2 * self.parameters - 2 * self.log_likelihood

    def success(self, n):
        """The fitted success :math:`a p^n` for n steps (broadcasts)."""
        return self.a * np.asarray(self.p, dtype=float) ** n


def _counts(n, successes, trials):
    """Validated per-observation arrays (n, s, t), broadcast together and flattened."""
    arrays = {}
    for name, value in (("n", n), ("successes", successes), ("trials", trials)):
        array = np.asarray(value)
        if array.dtype == bool and name == "successes":
            array = array.astype(int)
        if array.dtype.kind not in "iu" and not (
            array.dtype.kind == "f" and np.all(np.isfinite(array)) and np.all(array % 1 == 0)
        ):
            raise ValueError(f"{name} must hold whole numbers, got {value!r}")
        arrays[name] = array.astype(np.int64)
    try:
        n, s, t = (a.ravel() for a in np.broadcast_arrays(*arrays.values()))
    except ValueError:
        raise ValueError(
            f"n, successes and trials must broadcast together, got shapes "
            f"{[np.shape(v) for v in (n, successes, trials)]}"
        ) from None
    if n.size == 0:
        raise ValueError(f"n must hold at least one observation, got {n!r}")
    if (n < 1).any():
        raise ValueError(f"n must be >= 1 step (p^0 = 1 forbids a failure), got {int(n.min())!r}")
    if (t < 1).any() or (s < 0).any() or (s > t).any():
        raise ValueError(
            "successes must lie in [0, trials] with trials >= 1, "
            f"got {s.tolist()!r} of {t.tolist()!r}"
        )
    return n, s, t


def _grouped(n, s, t):
    """Totals per distinct n: the likelihood depends on nothing else."""
    steps, index = np.unique(n, return_inverse=True)
    return steps, np.bincount(index, s), np.bincount(index, t)


def _log_likelihood(a, p, steps, wins, trials):
    """:math:`\\ell(a, p)` over grouped counts; a and p broadcast against a leading axis."""
    q = a[..., None] * p[..., None] ** steps
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = wins * np.log(q) + (trials - wins) * np.log1p(-q)
    # 0 * log(0) is 0: a count of zero contributes nothing whatever the rate.
    terms = np.where(((wins == 0) & (q == 0)) | ((trials == wins) & (q == 1)), 0.0, terms)
    return terms.sum(axis=-1)


def _best_a(p, steps, wins, trials):
    """The a in (0, 1] maximising the likelihood at each p (any shape; counts broadcast along
    the last axis), or the highest a allowed if the likelihood still rises there.

    a times the score in a is :math:`W - \\sum_i L_i x_i / (1 - x_i)` with :math:`x_i = a p^{n_i}`,
    W the wins and :math:`L_i` the losses: it falls with a and bends down, so Newton's method
    started above its root descends to the root without overshooting. A start above it: the
    smallest a at which the losses of one step count alone balance all the wins.
    """
    power = p[..., None] ** steps
    total = wins.sum(axis=-1)
    losses = trials - wins
    # p^n may round to 0 and a step count of a resample may hold no trials: such terms are
    # left out of the start (inf) and add nothing to the sums.
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        top = np.minimum(1.0, _HIGH / power.max(axis=-1))
        balance = np.where(
            (losses > 0) & (power > 0),
            total[..., None] / (total[..., None] + losses) / power,
            np.inf,
        )
    a = np.clip(balance.min(axis=-1), _LOW, top)
    weighted = losses * power
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):  # no losses: 0 / 0
        for _ in range(_NEWTON):
            x = a[..., None] * power
            rest = 1 - x
            step = ((losses * x / rest).sum(axis=-1) - total) / (weighted / rest**2).sum(axis=-1)
            lower = np.maximum(np.where(step > _SETTLED * a, a - step, a), _LOW)
            if (lower == a).all():
                break
            a = lower
    return a


def _best_p(steps, wins, trials):
    """The p maximising :math:`\\ell(1, p)`: its score falls with p, so bisect on it."""
    low, high = np.full(wins.shape[:-1], _LOW), np.full(wins.shape[:-1], _HIGH)
    for _ in range(_BISECT):
        middle = (low + high) / 2
        power = middle[..., None] ** steps
        up = (steps * (wins - trials * power) / (1 - power)).sum(axis=-1) > 0
        low, high = np.where(up, middle, low), np.where(up, high, middle)
    return (low + high) / 2


def _fit_arrays(steps, wins, trials, start_up):
    """:func:`_fitted` for these counts, computed once: a notebook's cells, its answer key and
    its checks fit the same records, and a bootstrap with a fixed seed the same resamples.
    Kept arrays are read-only and shared; the public functions hand out floats. Counts over
    :data:`_KEPT_BYTES` (a bootstrap with many resamples) are fitted every time, so that a
    loop over seeds cannot fill a kernel's memory."""
    if steps.nbytes + wins.nbytes + trials.nbytes > _KEPT_BYTES:
        return _fitted(steps, wins, trials, start_up)
    key = tuple((x.dtype.str, x.shape, x.tobytes()) for x in (steps, wins, trials))
    return _fitted_once(key, bool(start_up))


#: The largest counts (bytes) whose fit is kept: 200 resamples of 40 step counts, twice over.
_KEPT_BYTES = 2 * 200 * 40 * 8 + 40 * 8


@functools.lru_cache(maxsize=512)
def _fitted_once(key, start_up):
    steps, wins, trials = (np.frombuffer(data, dtype).reshape(shape) for dtype, shape, data in key)
    fitted = tuple(np.array(values) for values in _fitted(steps, wins, trials, start_up))
    for values in fitted:
        values.flags.writeable = False
    return fitted


def _fitted(steps, wins, trials, start_up):
    """(a, p, log-likelihood) for counts with any leading (resample) axes."""
    if not start_up:
        p = _best_p(steps, wins, trials)
        a = np.ones_like(p)
        return a, p, _log_likelihood(a, p, steps, wins, trials)
    # The profile over p on a coarse grid, every resample at once, brackets the maximum ...
    grid = np.linspace(_LOW, _HIGH, _GRID)
    wide = np.broadcast_to(grid, (*wins.shape[:-1], _GRID))
    on_grid = (wins[..., None, :], trials[..., None, :])
    values = _log_likelihood(_best_a(wide, steps, *on_grid), wide, steps, *on_grid)
    best = values.argmax(axis=-1)
    low, high = grid[np.maximum(best - 1, 0)], grid[np.minimum(best + 1, _GRID - 1)]

    def profile(p):
        return _log_likelihood(_best_a(p, steps, wins, trials), p, steps, wins, trials)

    # ... and golden sections refine it, one new point per step.
    ratio = (math.sqrt(5) - 1) / 2
    left, right = high - ratio * (high - low), low + ratio * (high - low)
    f_left, f_right = profile(left), profile(right)
    for _ in range(_GOLDEN):
        keep_left = f_left >= f_right
        low = np.where(keep_left, low, left)
        high = np.where(keep_left, right, high)
        left, right = (
            np.where(keep_left, high - ratio * (high - low), right),
            np.where(keep_left, left, low + ratio * (high - low)),
        )
        fresh = profile(np.where(keep_left, left, right))
        f_left, f_right = np.where(keep_left, fresh, f_right), np.where(keep_left, f_left, fresh)
    p = (low + high) / 2
    a = _best_a(p, steps, wins, trials)
    return a, p, _log_likelihood(a, p, steps, wins, trials)


def fit_chain(n, successes, trials=1, *, start_up=False) -> Fit:
    r"""Maximum-likelihood fit of success :math:`p^n` (or :math:`a p^n`) against the steps n.

    Parameters
    ----------
    n : array_like of int
        Steps of each observation, at least 1.
    successes : array_like of int or bool
        Successful trials of each observation (a bool for a single trial).
    trials : array_like of int
        Trials of each observation (default 1: one row per run); broadcasts with the others.
    start_up : bool
        Fit :math:`a p^n` with a start-up factor *a* in (0, 1]; else :math:`p^n` (a = 1).

    Returns
    -------
    Fit
        The rates, the log-likelihood and the number of parameters (see :attr:`Fit.aic`).

    Raises
    ------
    ValueError
        If an entry is not a whole number, n < 1, successes outside [0, trials], or the
        arrays do not broadcast together.

    Notes
    -----
    :math:`p^n` has one parameter: its score :math:`\sum n (s - t p^n) / (p (1 - p^n))`
    falls with p, so bisection finds the root. For :math:`a p^n` the best *a* at a given *p*
    is the root of a falling score (or 1), found by Newton's method; the profile over *p* is
    searched on a grid, then refined by golden sections. Rates are kept in
    :math:`[10^{-9}, 1 - 10^{-12}]`: a record without failures would otherwise push p to 1.

    Examples
    --------
    Steps 1, 2, 3 with 9, 8, 7 successes out of 10 each:

    >>> fit = fit_chain([1, 2, 3], [9, 8, 7], 10)
    >>> round(fit.p, 4), fit.a, fit.parameters
    (0.8923, 1.0, 1)
    >>> both = fit_chain([1, 2, 3], [9, 8, 7], 10, start_up=True)
    >>> round(both.a, 4), round(both.p, 4), both.aic > fit.aic
    (1.0, 0.8923, True)

    tau-bench's airline runs of gpt-4o, tasks with at least one action (the shipped data):

    >>> from decompkit.traces import by_task, records
    >>> tasks = by_task(records())
    >>> n, s, t = (x[tasks.n_actions > 0] for x in (tasks.n_actions, tasks.successes, tasks.trials))
    >>> plain, start = fit_chain(n, s, t), fit_chain(n, s, t, start_up=True)
    >>> round(plain.p, 3), round(start.a, 3), round(start.p, 3), round(plain.aic - start.aic, 1)
    (0.718, 0.452, 0.934, 32.6)
    >>> fit_chain([0, 1], [0, 1])
    Traceback (most recent call last):
    ...
    ValueError: n must be >= 1 step (p^0 = 1 forbids a failure), got 0
    """
    steps, wins, total = _grouped(*_counts(n, successes, trials))
    a, p, ll = _fit_arrays(steps, wins, total, bool(start_up))
    return Fit(float(a), float(p), float(ll), 2 if start_up else 1)


def bootstrap_fit(n, successes, trials=1, *, start_up=False, resamples=200, level=0.95, seed=0):
    """Percentile confidence intervals of a chain fit, resampling whole tasks.

    Parameters
    ----------
    n, successes, trials : array_like of int
        One entry per task: its steps, its successful trials and its trials.
    start_up : bool
        As for :func:`fit_chain`.
    resamples : int
        Bootstrap resamples, at least 10.
    level : float
        Coverage of the intervals, in (0, 1).
    seed : int or numpy.random.Generator
        The randomness of the resamples.

    Returns
    -------
    dict
        ``{"a": (low, high), "p": (low, high)}``; a's interval is (1.0, 1.0) when a is fixed.

    Raises
    ------
    ValueError
        As :func:`fit_chain`, or for ``resamples`` < 10 or ``level`` outside (0, 1).

    Notes
    -----
    Tasks are drawn with replacement, each keeping its steps and all its trials, so the
    intervals carry the spread between tasks, not only between trials of one task. All
    resamples are fitted at once (arrays with a leading resample axis).

    Examples
    --------
    >>> ci = bootstrap_fit([1, 2, 3, 4] * 5, [4, 3, 3, 2] * 5, 4, resamples=100, seed=1)
    >>> low, high = ci["p"]
    >>> bool(low < fit_chain([1, 2, 3, 4] * 5, [4, 3, 3, 2] * 5, 4).p < high), ci["a"]
    (True, (1.0, 1.0))
    """
    tasks, wins, total = _counts(n, successes, trials)
    if isinstance(resamples, bool) or not isinstance(resamples, int) or resamples < 10:
        raise ValueError(f"resamples must be an integer >= 10, got {resamples!r}")
    if not (isinstance(level, (int, float)) and 0 < level < 1):
        raise ValueError(f"level must be in (0, 1), got {level!r}")
    rng = np.random.default_rng(seed)
    steps, index = np.unique(tasks, return_inverse=True)
    picks = rng.integers(0, tasks.size, size=(resamples, tasks.size))
    # Counts per distinct n in each resample: the fit needs nothing else.
    rows = np.repeat(np.arange(resamples), tasks.size)
    cells = rows * steps.size + index[picks].ravel()
    size = resamples * steps.size
    w = np.bincount(cells, wins[picks].ravel(), size).reshape(resamples, steps.size)
    t = np.bincount(cells, total[picks].ravel(), size).reshape(resamples, steps.size)
    a, p, _ = _fit_arrays(steps, w, t, bool(start_up))
    tail = (1 - level) / 2 * 100
    return {
        name: tuple(float(x) for x in np.percentile(values, [tail, 100 - tail]))
        for name, values in (("a", a), ("p", p))
    }
