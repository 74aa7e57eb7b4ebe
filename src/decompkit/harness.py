r"""The Manage-Execute-Audit loop, simulated: the process that :mod:`decompkit.markov` models.

Each round the executor attempts the next subtask in a fresh context and is right with
probability :math:`p`; a read-only audit of the environment catches a wrong result with
probability :math:`q`. A caught error burns the round, a missed one corrupts the state, so
:math:`P(\text{all } n \text{ verified within } B) = (e_0^\top P^B)_n`, as in the chain.
Two switches break the match: errors clustered on hard subtasks, and an auditor that reads
the executor's narration (effective :math:`q' = q(1 - \pi)` for persuasion :math:`\pi`).
The context-growth functions compare :math:`\sum_{t<T} (L_0 + a t)^2 = \Theta(a^2 T^3)`
with a fresh bounded context, :math:`T L_*^2`.
"""

from __future__ import annotations

import numbers
import statistics
from collections import Counter
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import NamedTuple

import numpy as np

from . import markov
from ._validate import broadcast, count, probability, scalar_or_array
from .markov import _rng

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

#: Default persuasion of a trace-reading auditor: it misses nine slips in ten.
_PERSUASION = 0.9
#: The exact sum stops once the unfinished mass is below this share of the success so far.
_REL_TOL = 1e-17
#: The exact sum refuses to walk more rounds than this (a ValueError, not a hang).
_MAX_ROUNDS = 1 << 20
#: Largest integer returned as int64 by the context-cost functions; above it, a float.
_INT64_MAX = np.iinfo(np.int64).max


# ---------------------------------------------------------------- argument checks


def _single(name: str, arr: np.ndarray):
    if arr.ndim != 0:
        raise ValueError(f"{name} must be a single number, got an array of shape {arr.shape}")
    return arr.item()


def _flag(name: str, value) -> bool:
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise ValueError(f"{name} must be True or False, got {value!r}")


def _nonnegative(name: str, value) -> np.ndarray:
    """A float array of finite numbers >= 0 (token counts may be fractional)."""
    if isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be a number, got {value!r}")
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number or an array of numbers, got {value!r}") from None
    bad = ~(np.isfinite(arr) & (arr >= 0))
    if bad.any():
        shown = value if arr.ndim == 0 else arr[bad].flat[0].item()
        raise ValueError(f"{name} must be a finite number >= 0, got {shown!r}")
    return arr


def _confidence(value) -> float:
    if isinstance(value, numbers.Real) and not isinstance(value, bool) and 0 < value < 1:
        return float(value)
    raise ValueError(f"confidence must be a number in (0, 1), got {value!r}")


# ---------------------------------------------------------------- correlated errors


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
            value = _single(name, probability(name, getattr(self, name)))
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
            If ``n`` is not a whole number >= 1 or ``p`` is outside [0, 1].
        """
        n = int(_single("n", count("n", n, minimum=1)))
        p = float(_single("p", probability("p", p)))
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


def _correlation(value) -> Correlation | None:
    if value is None or value is False:
        return None
    if value is True:
        return Correlation()
    if isinstance(value, Correlation):
        return value
    raise ValueError(f"correlated must be None, True, False or a Correlation, got {value!r}")


def _loop_args(n, p, q, budget, auditor_reads_trace, persuasion):
    """Validate and broadcast; q becomes the detection the audit actually achieves."""
    n = count("n", n, minimum=1)
    p = probability("p", p)
    q = probability("q", q)
    budget = count("budget", budget)
    reads = _flag("auditor_reads_trace", auditor_reads_trace)
    persuasion = probability("persuasion", persuasion)
    if not reads:
        return broadcast(n=n, p=p, q=q, budget=budget)
    n, p, q, budget, persuasion = broadcast(n=n, p=p, q=q, budget=budget, persuasion=persuasion)
    return n, p, q * (1.0 - persuasion), budget


# ---------------------------------------------------------------- the object-level loop


@dataclass(frozen=True)
class Context:
    """All an executor sees: the subtask and the verified facts. No earlier transcript."""

    subtask: int
    facts: tuple[int, ...]


@dataclass(frozen=True)
class Result:
    """What the executor hands back: its own account of the work, not the work itself.

    ``slip_visible`` says whether the narration betrays a wrong result (a correct result's
    narration never does); only a trace-reading auditor looks at it.
    """

    subtask: int
    narration: str
    slip_visible: bool


class Environment:
    """The ground truth: what the executor actually did to each subtask.

    It also holds each subtask's difficulty: the first attempt at subtask ``j`` succeeds
    with ``first[j-1]``, every later attempt with ``retry[j-1]``. ``view`` is a read-only,
    always current mapping ``subtask -> latest result correct?``.

    Examples
    --------
    >>> env = Environment([0.9, 0.8], [0.5, 0.4])
    >>> env.apply(1, False)
    >>> dict(env.view), env.accuracy(1), env.accuracy(2)
    ({1: False}, 0.5, 0.8)
    >>> env.view[1] = True
    Traceback (most recent call last):
    TypeError: 'mappingproxy' object does not support item assignment
    """

    def __init__(self, first, retry):
        self._first = np.asarray(first, dtype=float)
        self._retry = np.asarray(retry, dtype=float)
        self._outcome: dict[int, bool] = {}
        self._attempts: Counter[int] = Counter()
        self.view = MappingProxyType(self._outcome)  # read-only, always current

    def accuracy(self, subtask: int) -> float:
        """Probability that the next attempt at ``subtask`` is correct."""
        rates = self._retry if self._attempts[subtask] else self._first
        return float(rates[subtask - 1])

    def apply(self, subtask: int, correct: bool) -> None:
        """The executor's action: its latest result for ``subtask`` replaces the last one."""
        self._attempts[subtask] += 1
        self._outcome[subtask] = correct


class Executor:
    """Works on one subtask in a fresh context; right with the environment's accuracy.

    Its narration always claims success. For a wrong result it still betrays the slip
    with probability ``1 - persuasion``.
    """

    def __init__(self, persuasion: float = _PERSUASION):
        self.persuasion = persuasion

    def work(self, context: Context, env: Environment, rng) -> Result:
        """Attempt ``context.subtask``, act on ``env`` and report in a narration."""
        correct = bool(rng.random() < env.accuracy(context.subtask))
        env.apply(context.subtask, correct)
        slip_visible = (not correct) and bool(rng.random() >= self.persuasion)
        narration = f"Subtask {context.subtask} is done, building on {len(context.facts)} facts."
        return Result(context.subtask, narration, slip_visible)


class Auditor:
    """Accepts or rejects a result; never rejects a correct one, never writes anything.

    Reading the environment (a read-only view), it catches a wrong result with ``q``.
    Reading the executor's narration instead, it can only catch a slip the narration
    betrays, again with ``q``.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> env = Environment([0.0], [0.0])  # the executor cannot get subtask 1 right
    >>> result = Executor(persuasion=1.0).work(Context(1, ()), env, rng)
    >>> result.narration
    'Subtask 1 is done, building on 0 facts.'
    >>> Auditor(1.0).accepts(result, env.view, rng)  # the environment shows the error
    False
    >>> Auditor(1.0, reads_trace=True).accepts(result, env.view, rng)  # the story convinces
    True
    """

    def __init__(self, q: float, reads_trace: bool = False):
        self.q = q
        self.reads_trace = reads_trace

    def accepts(self, result: Result, view, rng) -> bool:
        """True to let ``result`` into the state; ``view`` is the environment, read-only."""
        wrong_seen = result.slip_visible if self.reads_trace else not view[result.subtask]
        return not (wrong_seen and rng.random() < self.q)


class Manager:
    """Owns the task state: the subtasks verified done, in order. Nothing else enters it.

    Examples
    --------
    >>> manager = Manager(3)
    >>> manager.record(1, accepted=False); manager.state, manager.next_subtask()
    ((), 1)
    >>> manager.record(1, accepted=True); manager.state, manager.next_subtask()
    ((1,), 2)
    """

    def __init__(self, n: int):
        self.n = n
        self._verified: list[int] = []

    @property
    def state(self) -> tuple[int, ...]:
        return tuple(self._verified)

    def next_subtask(self) -> int:
        return len(self._verified) + 1

    def record(self, subtask: int, accepted: bool) -> None:
        """Take the auditor's verdict on ``subtask``; only an accepted one enters the state."""
        if accepted:
            self._verified.append(subtask)


@dataclass(frozen=True)
class RoundRecord:
    """One round of the loop, as it happened.

    ``state_after`` is the manager's state; ``grounded`` says whether every fact in it is
    true in the environment.
    """

    round: int
    subtask: int
    attempt: int
    executor_correct: bool
    accepted: bool
    state_after: tuple[int, ...]
    grounded: bool

    @property
    def verdict(self) -> str:
        return "accepted" if self.accepted else "rejected"


@dataclass(frozen=True)
class LoopRun:
    """One run of the loop: its rounds and how it ended.

    ``outcome`` is ``"success"`` (all ``n`` verified, every one correct), ``"corrupted"``
    (a wrong result entered the state; the manager may still believe it finished) or
    ``"out of budget"`` (too few rounds left for the subtasks still open).
    """

    n: int
    budget: int
    rounds: tuple[RoundRecord, ...] = field(repr=False)
    outcome: str

    @property
    def success(self) -> bool:
        return self.outcome == "success"

    @property
    def manager_believes_done(self) -> bool:
        return bool(self.rounds) and len(self.rounds[-1].state_after) == self.n

    def to_text(self) -> str:
        """The rounds as a fixed-width table, one line per round, then the outcome."""
        lines = ["round  subtask  attempt  executor  auditor   verified  grounded"]
        for r in self.rounds:
            lines.append(
                f"{r.round:5d}  {r.subtask:7d}  {r.attempt:7d}  "
                f"{'right' if r.executor_correct else 'wrong':8s}  {r.verdict:8s}  "
                f"{len(r.state_after):4d}/{self.n:<4d}  {'yes' if r.grounded else 'NO'}"
            )
        believed = " (the manager believes it is done)" if self.manager_believes_done else ""
        lines.append(f"outcome: {self.outcome} after {len(self.rounds)} rounds{believed}")
        return "\n".join(lines)


def run_loop(
    n,
    p,
    q,
    budget,
    *,
    seed=None,
    correlated=None,
    auditor_reads_trace=False,
    persuasion=_PERSUASION,
):
    r"""Run the Manage-Execute-Audit loop once, round by round, and keep the trace.

    Parameters
    ----------
    n : int
        Number of interdependent subtasks, done in order, ``n >= 1``.
    p : float
        Executor accuracy per round (the mean over subtasks when ``correlated``).
    q : float
        Probability that the auditor catches a wrong result it can see.
    budget : int
        Round budget ``B >= 0``.
    seed : None, int or numpy.random.Generator
        Source of randomness; a Generator is used and advanced as given.
    correlated : None, bool or Correlation
        Cluster errors on hard subtasks (``True`` takes ``Correlation()``).
    auditor_reads_trace : bool
        The auditor reads the executor's narration instead of the environment.
    persuasion : float
        Chance that the narration of a wrong result hides the slip, in [0, 1].

    Returns
    -------
    LoopRun
        ``rounds`` (one :class:`RoundRecord` each), ``outcome``, ``success`` and
        ``to_text()`` for a step-by-step printout.

    Raises
    ------
    ValueError
        If ``p``, ``q`` or ``persuasion`` is outside [0, 1], ``n`` is not a whole
        number >= 1, ``budget`` not a whole number >= 0, an argument is an array, or
        ``seed``, ``correlated`` or ``auditor_reads_trace`` is of the wrong kind.

    Notes
    -----
    Each round the manager hands the next open subtask and its verified facts to a fresh
    :class:`Executor`, which acts on the :class:`Environment`; the :class:`Auditor` judges
    the result and only an accepted result enters the manager's state. A missed wrong
    result enters as if done: from then on the state is no longer grounded and the run
    cannot succeed, though the manager, who cannot tell, carries on. The manager stops when
    its state holds all ``n`` subtasks or when fewer rounds remain than open subtasks.

    The chance of each step equals the chain's: advance with :math:`p`, a caught error with
    :math:`(1-p)q`, corruption with :math:`(1-p)(1-q)` (with ``q`` replaced by
    :math:`q(1-\pi)` for a trace-reading auditor), so success has the law of
    :func:`decompkit.markov.success_exact`; :func:`simulate` runs the same process
    vectorised.

    Examples
    --------
    >>> run = run_loop(3, 0.9, 0.5, 6, seed=0)
    >>> run.outcome, len(run.rounds), run.rounds[-1].state_after
    ('success', 3, (1, 2, 3))
    >>> print(run_loop(2, 0.0, 1.0, 3, seed=0).to_text())
    round  subtask  attempt  executor  auditor   verified  grounded
        1        1        1  wrong     rejected     0/2     yes
        2        1        2  wrong     rejected     0/2     yes
    outcome: out of budget after 2 rounds
    """
    n = int(_single("n", count("n", n, minimum=1)))
    p = float(_single("p", probability("p", p)))
    q = float(_single("q", probability("q", q)))
    budget = int(_single("budget", count("budget", budget)))
    reads = _flag("auditor_reads_trace", auditor_reads_trace)
    persuasion = float(_single("persuasion", probability("persuasion", persuasion)))
    correlation = _correlation(correlated)
    rng = _rng(seed)

    if correlation is None:
        env = Environment(np.full(n, p), np.full(n, p))
    else:
        env = Environment(*correlation.rates(n, p))
    manager, executor, auditor = Manager(n), Executor(persuasion), Auditor(q, reads)
    rounds: list[RoundRecord] = []
    grounded, attempts = True, Counter()
    t = 0
    while len(manager.state) < n and n - len(manager.state) <= budget - t:
        t += 1
        subtask = manager.next_subtask()
        attempts[subtask] += 1
        result = executor.work(Context(subtask, manager.state), env, rng)
        accepted = auditor.accepts(result, env.view, rng)
        manager.record(subtask, accepted)
        # The simulation (not the manager) knows whether a wrong fact got in.
        grounded = grounded and not (accepted and not env.view[subtask])
        rounds.append(
            RoundRecord(
                t, subtask, attempts[subtask], env.view[subtask], accepted, manager.state, grounded
            )
        )
    if not grounded:
        outcome = "corrupted"
    elif len(manager.state) == n:
        outcome = "success"
    else:
        outcome = "out of budget"
    return LoopRun(n, budget, tuple(rounds), outcome)


# ---------------------------------------------------------------- many runs, vectorised


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


def _wilson(successes, trials, z):
    """Wilson score interval with normal quantile ``z``, clipped to [0, 1]."""
    z2 = z * z
    phat = successes / trials
    centre = (phat + z2 / (2 * trials)) / (1 + z2 / trials)
    half = z * np.sqrt(phat * (1 - phat) / trials + z2 / (4 * trials**2)) / (1 + z2 / trials)
    # The interval always contains phat; min/max keep that true under rounding at 0 and 1.
    low = np.maximum(np.minimum(centre - half, phat), 0.0)
    high = np.minimum(np.maximum(centre + half, phat), 1.0)
    return low, high


def _rate_tables(n, p, correlation):
    """First-attempt and retry rates per point and subtask, padded to the longest n."""
    first = np.zeros((n.size, int(n.max())))
    retry = np.zeros_like(first)
    for i in range(n.size):
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
    persuasion=_PERSUASION,
    confidence=0.95,
):
    r"""Simulate many runs of the loop at once and estimate success within ``budget``.

    Parameters
    ----------
    n, p, q, budget
        As in :func:`run_loop`; they broadcast (with ``persuasion`` when the auditor reads
        the trace), and every point gets ``runs`` runs.
    runs : int
        Simulated runs per point, ``>= 1``.
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
        >= 1, ``budget`` not a whole number >= 0, ``runs`` not a whole number >= 1, the
        arguments do not broadcast, ``confidence`` is outside (0, 1), or ``seed``,
        ``correlated`` or ``auditor_reads_trace`` is of the wrong kind.

    Notes
    -----
    The process is :func:`run_loop`'s, stepped for all live runs together with one uniform
    :math:`u` per run and round: with the current subtask's rate :math:`a` (first attempt or
    retry), :math:`u < a` advances, :math:`a \le u < a + (1-a)q'` is a caught error and
    anything above lets a wrong result in (corrupted). A run retires as soon as its outcome
    is sealed: all ``n`` verified, corrupted, or fewer rounds left than open subtasks; so the
    work is the rounds actually lived, at most ``runs * budget`` per point. All points of a
    call share one stream of random numbers.

    Examples
    --------
    >>> sim = simulate(50, 0.95, 0.5, 100, runs=10_000, seed=1)
    >>> sim.low < markov.success_exact(50, 0.95, 0.5, 100) < sim.high
    True
    >>> sim.successes + sim.corrupted + sim.out_of_budget
    10000
    >>> simulate(50, 0.95, 1.0, 100, runs=2000, seed=1).corrupted  # q = 1 never corrupts
    0
    """
    n, p, q_eff, budget = _loop_args(n, p, q, budget, auditor_reads_trace, persuasion)
    runs = int(_single("runs", count("runs", runs, minimum=1)))
    correlation = _correlation(correlated)
    z = statistics.NormalDist().inv_cdf(0.5 + _confidence(confidence) / 2)
    rng = _rng(seed)
    shape = n.shape
    n, p, q_eff, budget = n.ravel(), p.ravel(), q_eff.ravel(), budget.ravel()
    tables = None if correlation is None else _rate_tables(n, p, correlation)
    counts = _simulate_flat(n, p, q_eff, budget, tables, runs, rng)
    successes, corrupted, out_of_budget = (c.reshape(shape) for c in counts)
    low, high = _wilson(successes, runs, z)
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


def _simulate_flat(n, p, q, budget, tables, runs, rng):
    """Outcome counts per point for validated 1-d arrays (``tables`` None: independent)."""
    size = n.size
    successes = np.zeros(size, dtype=np.int64)
    corrupted = np.zeros(size, dtype=np.int64)
    out_of_budget = np.where(budget < n, runs, 0).astype(np.int64)
    live = np.flatnonzero(budget >= n)
    if live.size == 0:
        return successes, corrupted, out_of_budget
    single = live.size == 1
    if single:
        # One point: per-run parameters are scalars and no point index is needed.
        idx = int(live[0])
        point = None
        need, rounds, p_run, q_run = int(n[idx]), int(budget[idx]), p[idx], q[idx]
        size_live = runs
    else:
        point = np.repeat(live, runs)
        need, rounds, p_run, q_run = n[point], budget[point], p[point], q[point]
        size_live = point.size
    correlated = tables is not None
    if correlated:
        width = tables[0].shape[1]
        first, retry = tables[0].ravel(), tables[1].ravel()
        base = idx * width if single else point * width
        retrying = np.zeros(size_live, dtype=bool)
    done = np.zeros(size_live, dtype=np.int64)
    slack = int((budget - n)[live].min())  # no run is hopeless before round slack + 1
    t = 0
    while done.size:
        t += 1
        u = rng.random(done.size)
        if correlated:
            cell = base + done
            a = np.where(retrying, retry[cell], first[cell])
        else:
            a = p_run
        # q = 1 must never corrupt: a + (1 - a) may round to just below 1.
        keep = np.where(q_run == 1.0, 1.0, a + (1.0 - a) * q_run)
        advanced = u < a
        lost = u >= keep
        done += advanced
        finished = done == need
        alive = ~(lost | finished)
        hopeless = None
        if t > slack:
            hopeless = alive & (need - done > rounds - t)
            alive &= ~hopeless
        if single:
            successes[idx] += np.count_nonzero(finished)
            corrupted[idx] += np.count_nonzero(lost)
            if hopeless is not None:
                out_of_budget[idx] += np.count_nonzero(hopeless)
        else:
            successes += np.bincount(point[finished], minlength=size)
            corrupted += np.bincount(point[lost], minlength=size)
            if hopeless is not None:
                out_of_budget += np.bincount(point[hopeless], minlength=size)
        if correlated:
            retrying = ~advanced  # a caught error: the next round retries this subtask
        if alive.all():
            continue
        done = done[alive]
        if correlated:
            retrying = retrying[alive]
            if not single:
                base = base[alive]
        if not single:
            point, need, rounds = point[alive], need[alive], rounds[alive]
            p_run, q_run = p_run[alive], q_run[alive]
    return successes, corrupted, out_of_budget


# ---------------------------------------------------------------- the exact reference


def exact_success(
    n, p, q, budget, *, correlated=None, auditor_reads_trace=False, persuasion=_PERSUASION
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
        ``budget`` rounds.

    Raises
    ------
    ValueError
        On a bad argument (as in :func:`simulate`), or with ``correlated`` when the sum
        would need more than 2**20 rounds to settle.

    Notes
    -----
    Without ``correlated`` the loop is the chain of :mod:`decompkit.markov` with detection
    :math:`q' = q` (or :math:`q(1-\pi)` for a trace-reading auditor), and this is
    :func:`decompkit.markov.success_exact`. With it, the mass over the transient states
    (subtask ``i``, first attempt or retry) is carried forward round by round,
    :math:`O(nB)` per point, stopping early once the unfinished mass is below
    :math:`10^{-17}` of the success so far.

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
    correlation = _correlation(correlated)
    if correlation is None:
        return markov.success_exact(n, p, q_eff, budget)
    out = np.empty(n.shape)
    for idx in np.ndindex(n.shape):
        first, retry = correlation.rates(int(n[idx]), float(p[idx]))
        out[idx] = _carry_forward(first, retry, float(q_eff[idx]), int(budget[idx]))
    return scalar_or_array(out)


def _carry_forward(first, retry, q, budget):
    """Success within ``budget`` rounds for per-subtask rates, by carrying mass forward."""
    n = first.size
    if budget < n:
        return 0.0
    fresh = np.zeros(n)  # mass at subtask i (i done), first attempt
    fresh[0] = 1.0
    again = np.zeros(n)  # mass at subtask i, a retry
    caught_fresh, caught_again = (1.0 - first) * q, (1.0 - retry) * q
    success = 0.0
    for t in range(1, budget + 1):
        moved = fresh * first + again * retry
        success += moved[-1]
        again = fresh * caught_fresh + again * caught_again
        fresh = np.concatenate(([0.0], moved[:-1]))
        if t >= n and t % 16 == 0:
            left = fresh.sum() + again.sum()
            if left <= _REL_TOL * success:
                break
            if t >= _MAX_ROUNDS:
                raise ValueError(
                    f"exact_success with correlated errors needs more than {_MAX_ROUNDS} "
                    f"rounds to settle at n={n}, budget={budget}; use a smaller budget"
                )
    return min(success, 1.0)


# ---------------------------------------------------------------- context growth


def _exact_or_float(exact_terms, float_value):
    """int64 results when every input is a whole number and the result fits, else floats."""
    if exact_terms is None:
        return scalar_or_array(float_value)
    exact = np.asarray(exact_terms(), dtype=object)
    if exact.size == 0 or max(exact.flat) <= _INT64_MAX:
        return scalar_or_array(exact.astype(np.int64))
    # Correctly rounded from the exact integer.
    return scalar_or_array(np.asarray(np.frompyfunc(float, 1, 1)(exact), dtype=float))


def _whole(*arrays) -> bool:
    return all(np.all(arr == np.round(arr)) for arr in arrays)


def _as_python_ints(arr):
    """Whole numbers as an object array of Python ints (exact, no overflow)."""
    return np.asarray(np.frompyfunc(int, 1, 1)(arr), dtype=object)


def appended_context_cost(T, a, L0):
    r"""Cumulative attention cost of ``T`` rounds when each round appends ``a`` tokens.

    Parameters
    ----------
    T : int or array_like of int
        Rounds, ``T >= 0``.
    a : float or array_like
        Tokens appended per round, ``>= 0``.
    L0 : float or array_like
        Tokens in the context before the first round, ``>= 0``.

    Returns
    -------
    int, float or ndarray
        :math:`\sum_{t=0}^{T-1} (L_0 + a t)^2`, round ``t`` reading :math:`L_0 + a t`
        tokens at quadratic cost. Exact integers (``int`` or int64) when all inputs are
        whole numbers and the result fits in int64; otherwise floats.

    Raises
    ------
    ValueError
        If ``T`` is not a whole number >= 0, ``a`` or ``L0`` is negative or not finite,
        or the arguments do not broadcast.

    Notes
    -----
    In closed form, :math:`T L_0^2 + a L_0 T(T-1) + a^2 (T-1)T(2T-1)/6`, which is
    :math:`\Theta(a^2 T^3)` once :math:`aT \gg L_0`: doubling ``T`` multiplies the cost by
    a ratio that rises toward 8. All terms are >= 0, so the float form has no cancellation;
    the integer form is computed with Python integers and cannot overflow.

    Examples
    --------
    >>> appended_context_cost(3, 10, 100)  # 100**2 + 110**2 + 120**2
    36500
    >>> appended_context_cost([1, 2, 4], 1, 0).tolist()
    [0, 1, 14]
    >>> appended_context_cost(2, 0.5, 1.0)  # 1 + 1.5**2
    3.25
    """
    T = count("T", T)
    a = _nonnegative("a", a)
    L0 = _nonnegative("L0", L0)
    T, a, L0 = broadcast(T=T, a=a, L0=L0)
    Tf = T.astype(float)
    float_value = Tf * L0**2 + a * L0 * Tf * (Tf - 1) + a**2 * (Tf - 1) * Tf * (2 * Tf - 1) / 6

    def exact():
        Ti, ai, Li = (_as_python_ints(x) for x in (T, a, L0))
        return Ti * Li**2 + ai * Li * Ti * (Ti - 1) + ai**2 * ((Ti - 1) * Ti * (2 * Ti - 1) // 6)

    return _exact_or_float(exact if _whole(a, L0) else None, float_value)


def fresh_context_cost(T, L_star):
    r"""Cumulative attention cost of ``T`` rounds that each start from a fresh context.

    Parameters
    ----------
    T : int or array_like of int
        Rounds, ``T >= 0``.
    L_star : float or array_like
        Tokens of the bounded context every round reads, ``>= 0``.

    Returns
    -------
    int, float or ndarray
        :math:`T L_*^2`, linear in ``T``: doubling ``T`` doubles the cost. Exact integers
        when both inputs are whole numbers and the result fits in int64.

    Raises
    ------
    ValueError
        If ``T`` is not a whole number >= 0 or ``L_star`` is negative or not finite.

    Examples
    --------
    >>> fresh_context_cost(10, 4000)
    160000000
    >>> fresh_context_cost([1, 2], 1.5).tolist()
    [2.25, 4.5]
    """
    T = count("T", T)
    L_star = _nonnegative("L_star", L_star)
    T, L_star = broadcast(T=T, L_star=L_star)

    def exact():
        return _as_python_ints(T) * _as_python_ints(L_star) ** 2

    return _exact_or_float(exact if _whole(L_star) else None, T * L_star**2)


def relevant_share(t, m, a, L0):
    r"""Share of the context that is relevant at round ``t`` of an appended transcript.

    Parameters
    ----------
    t : int or array_like of int
        Round, counted from 0, ``t >= 0``.
    m : float or array_like
        Relevant tokens, part of the starting context: ``0 <= m <= L0``.
    a : float or array_like
        Tokens appended per round, ``>= 0``.
    L0 : float or array_like
        Tokens in the starting context, ``> 0``.

    Returns
    -------
    float or ndarray
        :math:`m / (L_0 + a t)`, which is :math:`\Theta(1/t)` for ``a > 0``; a fresh
        context of :math:`L_*` tokens keeps it at :math:`m / L_*`.

    Raises
    ------
    ValueError
        If an argument is negative or not finite, ``t`` is not a whole number, ``L0`` is 0,
        or ``m > L0``.

    Examples
    --------
    >>> relevant_share([0, 10, 100], 500, 100, 1000).tolist()
    [0.5, 0.25, 0.045454545454545456]
    """
    t = count("t", t)
    m = _nonnegative("m", m)
    a = _nonnegative("a", a)
    L0 = _nonnegative("L0", L0)
    t, m, a, L0 = broadcast(t=t, m=m, a=a, L0=L0)
    if (L0 == 0).any():
        raise ValueError("L0 must be > 0 (the share divides by the context), got 0.0")
    over = m > L0
    if over.any():
        raise ValueError(
            "m must be <= L0 (the relevant tokens sit in the starting context), "
            f"got m={m[over].flat[0].item()!r} and L0={L0[over].flat[0].item()!r}"
        )
    return scalar_or_array(m / (L0 + a * t))
