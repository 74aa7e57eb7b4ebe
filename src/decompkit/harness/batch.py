r"""Many runs of the loop at once, the caveat switches, and the exact reference.

With accuracy :math:`a_j` on subtask :math:`j` (first attempt or retry) and detection
:math:`q'`, each round advances with :math:`a_j`, is caught with :math:`(1-a_j)q'` and corrupts
with :math:`(1-a_j)(1-q')`. Without the switches :math:`a_j = p`, :math:`q' = q` and success is
the chain's :math:`(e_0^\top P^B)_n`; clustered errors (:class:`Correlation`) and a
trace-reading auditor (:math:`q' = q(1-\pi)`) both lower it.

What :mod:`decompkit.harness.loop` shares with the batch is public here, outside ``__all__``:
``PERSUASION``, ``MAX_SUBTASKS``, :func:`as_correlation` and :func:`mean_rounds`.
"""

from __future__ import annotations

import numbers
import statistics
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from ..markov.exact import success_exact
from ..markov.horizon import expected_rounds
from ..markov.montecarlo import MAX_ROUNDS, MAX_RUNS, wilson
from ..validate import (
    broadcast,
    count,
    flag,
    large_count,
    probability,
    random_generator,
    scalar_or_array,
    single,
)
from .lockstep import simulate_flat

__all__ = ["Correlation", "SimulationResult", "simulate", "exact_success"]

#: Default persuasion of a trace-reading auditor: it misses nine slips in ten.
PERSUASION = 0.9
#: The exact sum stops once the unfinished mass is below this share of the success so far.
_REL_TOL = 1e-17
#: The exact sum refuses to walk more rounds than this (a ValueError, not a hang).
_MAX_ROUNDS = 1 << 20
#: ... and more subtask-rounds (n times rounds) than this, a few seconds of work.
_MAX_CELLS = 1 << 28
#: Most subtasks with clustered errors: one first-attempt and one retry rate each.
MAX_SUBTASKS = 10**6


def _confidence(value) -> float:
    if isinstance(value, numbers.Real) and not isinstance(value, bool) and 0 < value < 1:
        return float(value)
    raise ValueError(f"confidence must be a number in (0, 1), got {value!r}")


@dataclass(frozen=True)
class Correlation:
    r"""Errors clustered on hard subtasks, at the same mean accuracy :math:`p`.

    Parameters
    ----------
    hard_fraction : float
        Share of the subtasks that are hard; ``k = round(hard_fraction * n)`` of them (to
        the nearest integer, half to even), spread evenly over the sequence.
    spread : float
        How much of the error moves onto the hard subtasks, in [0, 1]. Easy subtasks get
        :math:`p_e = p + s\Delta`, hard ones :math:`p_h = p - s\Delta (n-k)/k`, with
        :math:`\Delta = \min(1 - p,\; p k/(n-k))`, so the mean over subtasks stays exactly
        :math:`p`. ``spread=1`` clusters as far as possible: easy subtasks never fail, or
        hard ones never succeed.
    retry_penalty : float
        In [0, 1]. After a caught failure a subtask stays harder: every retry of subtask
        :math:`j` succeeds with :math:`p_j (1 - r)` (the failure revealed a difficulty, not
        bad luck). The executor's context is still fresh; the difficulty is the world's.

    Raises
    ------
    ValueError
        If a field is not a single number in [0, 1].

    Notes
    -----
    With ``k = 0`` or ``k = n`` every subtask has rate :math:`p` (there is nothing to
    cluster on), so only the retry penalty acts.

    Examples
    --------
    >>> first, retry = Correlation(0.2, spread=1.0, retry_penalty=0.5).rates(5, 0.95)
    >>> first.round(3).tolist(), retry.round(3).tolist()
    ([1.0, 1.0, 1.0, 1.0, 0.75], [0.5, 0.5, 0.5, 0.5, 0.375])
    """

    hard_fraction: float = 0.2
    spread: float = 0.5
    retry_penalty: float = 0.5

    def __post_init__(self):
        for name in ("hard_fraction", "spread", "retry_penalty"):
            value = single(name, probability(name, getattr(self, name)))
            object.__setattr__(self, name, float(value))

    def rates(self, n, p):
        """Per-subtask accuracy of the first attempt and of every retry.

        Parameters
        ----------
        n : int
            Number of subtasks, ``n >= 1``.
        p : float
            Mean accuracy over the subtasks.

        Returns
        -------
        first, retry : ndarray
            Arrays of shape ``(n,)``; ``first.mean()`` equals ``p`` up to rounding.

        Raises
        ------
        ValueError
            If ``n`` is not a whole number in [1, 10**6] or ``p`` is outside [0, 1].
        """
        why = " (one first-attempt and one retry rate per subtask)"
        n = int(single("n", count("n", n, minimum=1, maximum=MAX_SUBTASKS, why=why)))
        p = float(single("p", probability("p", p)))
        k = int(np.rint(self.hard_fraction * n))
        first = np.full(n, p)
        if 0 < k < n:
            j = np.arange(n + 1)
            # Bresenham: subtask j is hard where floor(j k / n) steps up, k times in all.
            hard = np.diff(j * k // n) > 0
            delta = min(1.0 - p, p * k / (n - k))
            first[~hard] = p + self.spread * delta
            first[hard] = p - self.spread * delta * (n - k) / k
            np.clip(first, 0.0, 1.0, out=first)  # rounding only
        return first, first * (1.0 - self.retry_penalty)


def as_correlation(value) -> Correlation | None:
    if value is None or value is False:
        return None
    if value is True:
        return Correlation()
    if isinstance(value, Correlation):
        return value
    raise ValueError(f"correlated must be None, True, False or a Correlation, got {value!r}")


def _loop_args(n, p, q, budget, auditor_reads_trace, persuasion):
    """Validate and broadcast; q becomes the detection the audit actually achieves."""
    n = count("n", n)
    p = probability("p", p)
    q = probability("q", q)
    budget = large_count("budget", budget)
    reads = flag("auditor_reads_trace", auditor_reads_trace)
    persuasion = probability("persuasion", persuasion)
    if not reads:
        return broadcast(n=n, p=p, q=q, budget=budget)
    n, p, q, budget, persuasion = broadcast(n=n, p=p, q=q, budget=budget, persuasion=persuasion)
    return n, p, q * (1.0 - persuasion), budget


def mean_rounds(first, retry, q, *, retire_stuck):
    """An upper bound on the mean rounds of a run: the rounds until each subtask is accepted.

    Subtask ``j`` takes one first attempt, and after a caught failure (chance
    ``(1 - first[j]) q``) retries until one is accepted, ``1 / (1 - (1 - retry[j]) q)``
    rounds on average; corruption only ends a run sooner. With ``retire_stuck`` a state whose
    rate is 0 costs nothing (the simulation settles such runs at once).
    """
    caught = (1.0 - retry) * q
    with np.errstate(divide="ignore"):
        retries = 1.0 / (1.0 - caught)
    if retire_stuck:
        retries = np.where(retry > 0.0, retries, 0.0)
        per_subtask = np.where(first > 0.0, 1.0 + (1.0 - first) * q * retries, 0.0)
    else:
        per_subtask = 1.0 + (1.0 - first) * q * retries
    return float(per_subtask.sum())


def _check_lifetime(n, p, q, budget, tables):
    """Refuse points whose runs would live more than MAX_ROUNDS rounds on average."""
    if budget.size == 0 or budget.max() <= MAX_ROUNDS:  # no run outlives its budget
        return
    live = np.flatnonzero((budget >= n) & (p > 0.0))
    if tables is None:
        life = np.minimum(budget[live], expected_rounds(n[live], p[live], q[live]))
    else:
        first, retry = tables
        life = np.array(
            [
                min(
                    budget[i],
                    mean_rounds(first[i, : n[i]], retry[i, : n[i]], q[i], retire_stuck=True),
                )
                for i in live
            ]
        )
    if life.size and life.max() > MAX_ROUNDS:
        i = live[int(np.argmax(life))]
        raise ValueError(
            f"runs at n={int(n[i])}, p={float(p[i])!r}, q={float(q[i])!r}, budget="
            f"{float(budget[i]):g} live about {life.max():.3g} rounds on average, more than "
            f"the {MAX_ROUNDS:,} the simulation steps through; use exact_success"
        )


class SimulationResult(NamedTuple):
    """Outcome counts of many simulated runs and the success estimate with its interval.

    ``successes + corrupted + out_of_budget == runs`` at every point.
    """

    estimate: float | np.ndarray
    low: float | np.ndarray
    high: float | np.ndarray
    runs: int
    successes: int | np.ndarray
    corrupted: int | np.ndarray
    out_of_budget: int | np.ndarray
    confidence: float


def _rate_tables(n, p, correlation):
    """First-attempt and retry rates per point and subtask, padded to the longest n."""
    if n.size * int(n.max()) > MAX_SUBTASKS:
        raise ValueError(
            f"points times n must be <= {MAX_SUBTASKS:,} with clustered errors (one rate per "
            f"subtask and point), got {n.size} points and n up to {int(n.max())}"
        )
    first = np.zeros((n.size, int(n.max())))
    retry = np.zeros_like(first)
    for i in np.flatnonzero(n):  # n = 0 has no subtask and no rate
        f, r = correlation.rates(int(n[i]), float(p[i]))
        first[i, : f.size], retry[i, : r.size] = f, r
    return first, retry


def simulate(
    n,
    p,
    q,
    budget,
    runs=10_000,
    *,
    seed=None,
    correlated=None,
    auditor_reads_trace=False,
    persuasion=PERSUASION,
    confidence=0.95,
):
    r"""Simulate many runs of the loop at once and estimate success within ``budget``.

    Parameters
    ----------
    n, p, q, budget
        As in :func:`run_loop`; they broadcast (with ``persuasion`` when the auditor reads
        the trace), and every point gets ``runs`` runs.
    runs : int
        Simulated runs per point, ``>= 1``; at most 10**7 runs per call in all (runs times
        the number of points), about 0.5 GB of working memory at the bound.
    seed : None, int or numpy.random.Generator
        Source of randomness; the same int reproduces the result exactly.
    correlated : None, bool or Correlation
        Cluster errors on hard subtasks (see :class:`Correlation`).
    auditor_reads_trace : bool
        The auditor reads the narration: its detection becomes :math:`q(1-\pi)`.
    persuasion : float or array_like
        :math:`\pi`, the chance that a narration hides a slip, in [0, 1].
    confidence : float
        Level of the Wilson interval, in (0, 1).

    Returns
    -------
    SimulationResult
        ``estimate``, ``low``, ``high``, ``runs``, ``successes``, ``corrupted``,
        ``out_of_budget`` and ``confidence``; Python numbers for scalar input.

    Raises
    ------
    ValueError
        If ``p``, ``q`` or ``persuasion`` is outside [0, 1], ``n`` is not a whole number
        >= 0, ``budget`` not a whole number >= 0, ``runs`` not a whole number >= 1 or above
        the bound, the arguments do not broadcast, ``confidence`` is outside (0, 1),
        ``seed``, ``correlated`` or ``auditor_reads_trace`` is of the wrong kind; with
        ``correlated``, points times ``n`` above 10**6 (one rate per subtask and point);
        or a point whose runs would live more than 10**6 rounds on average (capped by the
        budget; with ``correlated``, the rounds until every subtask is accepted): the
        simulation steps every round.

    Notes
    -----
    The process is :func:`run_loop`'s, stepped for all live runs together with one uniform
    :math:`u` per run and round: with the current subtask's rate :math:`a` (first attempt or
    retry), :math:`u < a` advances, :math:`a \le u < a + (1-a)q'` is a caught error and
    anything above lets a wrong result in (corrupted). A run retires as soon as its outcome
    is sealed: all ``n`` verified, corrupted, or fewer rounds left than open subtasks; so the
    work is the rounds actually lived, at most ``runs * budget`` per point. With ``n = 0``
    every run has succeeded before its first round and draws nothing, as in
    :func:`decompkit.markov.success_monte_carlo`. A run whose next attempts all have rate 0
    (``p = 0``, or a hard subtask clustering left at 0) can never advance: it is settled at
    once with one uniform, corrupted with :math:`1 - q'^m` for the :math:`m` rounds it would
    still play, else out of budget. All points of a call share one stream of random numbers.

    Examples
    --------
    >>> sim = simulate(50, 0.95, 0.5, 100, runs=10_000, seed=1)
    >>> sim.low < success_exact(50, 0.95, 0.5, 100) < sim.high
    True
    >>> sim.successes + sim.corrupted + sim.out_of_budget
    10000
    >>> simulate(50, 0.95, 1.0, 100, runs=2000, seed=1).corrupted  # q = 1 never corrupts
    0
    """
    n, p, q_eff, budget = _loop_args(n, p, q, budget, auditor_reads_trace, persuasion)
    why = " (simulated runs per call)"
    runs = int(single("runs", count("runs", runs, minimum=1, maximum=MAX_RUNS, why=why)))
    if runs * n.size > MAX_RUNS:
        raise ValueError(
            f"runs must be an integer <= {MAX_RUNS // n.size} for {n.size} points "
            f"({MAX_RUNS:,} simulated runs per call at most), got {runs}"
        )
    correlation = as_correlation(correlated)
    z = statistics.NormalDist().inv_cdf(0.5 + _confidence(confidence) / 2)
    generator = random_generator(seed)
    shape = n.shape
    n, p, q_eff, budget = n.ravel(), p.ravel(), q_eff.ravel(), budget.ravel()
    tables = None if correlation is None else _rate_tables(n, p, correlation)
    _check_lifetime(n, p, q_eff, budget, tables)
    counts = simulate_flat(n, p, q_eff, budget, tables, runs, generator)
    successes, corrupted, out_of_budget = (c.reshape(shape) for c in counts)
    low, high = wilson(successes, runs, z)
    return SimulationResult(
        estimate=scalar_or_array(successes / runs),
        low=scalar_or_array(low),
        high=scalar_or_array(high),
        runs=runs,
        successes=scalar_or_array(successes),
        corrupted=scalar_or_array(corrupted),
        out_of_budget=scalar_or_array(out_of_budget),
        confidence=float(confidence),
    )


def exact_success(
    n, p, q, budget, *, correlated=None, auditor_reads_trace=False, persuasion=PERSUASION
):
    r"""Exact success of the loop within ``budget`` rounds, with or without the caveats.

    Parameters
    ----------
    n, p, q, budget, correlated, auditor_reads_trace, persuasion
        As in :func:`simulate`; ``n``, ``p``, ``q``, ``budget`` and (for a trace-reading
        auditor) ``persuasion`` broadcast.

    Returns
    -------
    float or ndarray
        The probability that all ``n`` subtasks are verified, all correct, within
        ``budget`` rounds; 1 for ``n = 0``, as :func:`decompkit.markov.success_exact` gives.

    Raises
    ------
    ValueError
        On a bad argument (as in :func:`simulate`), or with ``correlated`` when the sum
        would need more than 2**20 rounds, or ``n`` times the rounds more than 2**28, to
        settle.

    Notes
    -----
    Without ``correlated`` the loop is the chain of :mod:`decompkit.markov` with detection
    :math:`q' = q` (or :math:`q(1-\pi)` for a trace-reading auditor), and this is
    :func:`decompkit.markov.success_exact`. With it, the mass over the transient states
    (subtask ``i``, first attempt or retry) is carried forward round by round,
    :math:`O(nB)` per point, stopping early once the unfinished mass is below
    :math:`10^{-17}` of the success so far (or below :math:`10^{-297}`); mass retrying at
    rate 0 can never advance and is dropped.

    **Why clustering lowers success at the same mean** :math:`p`. With no budget limit a
    subtask of rate :math:`p_j` is eventually verified without corruption with
    :math:`s(p_j) = p_j / (1 - (1-p_j) q)`, and success is :math:`\prod_j s(p_j)`. Here
    :math:`\log s(p) = \log p - \log(1 - q + qp)` has second derivative
    :math:`-1/p^2 + q^2/(1-q+qp)^2 \le 0` (as :math:`1 - q + qp \ge qp`), so by Jensen
    :math:`\frac1n \sum_j \log s(p_j) \le \log s(\bar p)`, i.e.
    :math:`\prod_j s(p_j) \le s(\bar p)^n`, with equality only for equal rates or (with
    all rates positive) ``q = 1``. A budget adds a second loss: subtask :math:`j` is settled
    (verified or corrupted) after :math:`1/(1 - (1-p_j)q)` rounds on average, convex in
    :math:`p_j`, so clustered runs burn more rounds (for ``q = 1``,
    :math:`\sum_j 1/p_j \ge n/\bar p`). That second part is an argument about means, not
    a proof; the tests check the inequality on random parameters. A retry penalty lowers
    every retry's rate; a higher rate advances more and corrupts less in every round, so
    the penalty can only lower success. A trace-reading auditor has :math:`q' \le q`, and
    success rises with ``q``, so it falls toward :math:`p^n`, reached at :math:`\pi = 1`.

    Examples
    --------
    >>> round(exact_success(50, 0.95, 0.5, 100), 3)  # the chain's value
    0.273
    >>> round(exact_success(50, 0.95, 0.5, 100, correlated=True), 3)  # clustered errors
    0.167
    >>> exact_success(50, 0.95, 0.5, 100, auditor_reads_trace=True, persuasion=1.0) == 0.95**50
    True
    """
    n, p, q_eff, budget = _loop_args(n, p, q, budget, auditor_reads_trace, persuasion)
    correlation = as_correlation(correlated)
    if correlation is None:
        return success_exact(n, p, q_eff, budget)
    out = np.ones(n.shape)  # n = 0: nothing to do, success with certainty
    for idx in np.ndindex(n.shape):
        if n[idx] == 0:
            continue
        first, retry = correlation.rates(int(n[idx]), float(p[idx]))
        out[idx] = _carry_forward(first, retry, float(q_eff[idx]), budget[idx])
    return scalar_or_array(out)


def _carry_forward(first, retry, q, budget):
    """Success within ``budget`` rounds for per-subtask rates, by carrying mass forward."""
    n = first.size
    if budget < n:
        return 0.0
    fresh = np.zeros(n)  # mass at subtask i (i done), first attempt
    fresh[0] = 1.0
    again = np.zeros(n)  # mass at subtask i, a retry
    caught_fresh = (1.0 - first) * q
    # Mass retrying at rate 0 can never advance: drop it, so that it does not keep the sum
    # from settling (it adds nothing to success).
    caught_again = np.where(retry > 0.0, (1.0 - retry) * q, 0.0)
    success = 0.0
    rounds = int(min(budget, _MAX_ROUNDS))
    for t in range(1, rounds + 1):
        moved = fresh * first + again * retry
        success += moved[-1]
        again = fresh * caught_fresh + again * caught_again
        fresh = np.concatenate(([0.0], moved[:-1]))
        # Settled: what is left could add less than 1e-17 of the success (or of 1e-280; the
        # smallest subnormal mass never rounds away to 0).
        if t >= n and t % 16 == 0 and fresh.sum() + again.sum() <= _REL_TOL * max(success, 1e-280):
            break
        if t < budget and (t == _MAX_ROUNDS or t * n > _MAX_CELLS):
            raise ValueError(
                f"exact_success with correlated errors needs more than {t} rounds to "
                f"settle at n={n}, budget={budget:.15g} (at most {_MAX_ROUNDS} rounds and "
                f"{_MAX_CELLS:,} subtask-rounds); use a smaller budget"
            )
    return min(success, 1.0)
