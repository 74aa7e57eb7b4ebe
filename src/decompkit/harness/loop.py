r"""One run of the Manage-Execute-Audit loop, actor by actor, with its trace.

Each round the :class:`Manager` hands the next open subtask and the verified facts to a fresh
:class:`Executor`, which acts on the :class:`Environment` and is right with the subtask's
accuracy; the :class:`Auditor` catches a wrong result with :math:`q` and only an accepted
result enters the state. A step advances with :math:`p`, is caught with :math:`(1-p)q` and
corrupts with :math:`(1-p)(1-q)`, as in the chain of :mod:`decompkit.markov`.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from types import MappingProxyType

import numpy as np

from ..validate import (
    count,
    flag,
    large_count,
    probability,
    random_generator,
    single,
    whole,
)
from .batch import MAX_SUBTASKS, PERSUASION, as_correlation, mean_rounds

#: Most rounds one traced run may last on average (a record per round, ~20 us each).
MAX_TRACE_ROUNDS = 10**5
#: Most entries the trace of one run may hold: every round keeps the state (n entries).
MAX_TRACE = 10**7

__all__ = [
    "Context",
    "Result",
    "Environment",
    "Executor",
    "Auditor",
    "Manager",
    "RoundRecord",
    "LoopRun",
    "run_loop",
]


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
    with probability ``1 - persuasion``, a single number in [0, 1] (else ValueError).
    """

    def __init__(self, persuasion: float = PERSUASION):
        self.persuasion = float(single("persuasion", probability("persuasion", persuasion)))

    def work(self, context: Context, env: Environment, rng) -> Result:
        """Attempt ``context.subtask``, act on ``env`` and report in a narration."""
        correct = bool(rng.random() < env.accuracy(context.subtask))
        env.apply(context.subtask, correct)
        slip_visible = (not correct) and bool(rng.random() >= self.persuasion)
        narration = f"Subtask {context.subtask} is done, building on {len(context.facts)} facts."
        return Result(context.subtask, narration, slip_visible)


class Auditor:
    """Accepts or rejects a result; never rejects a correct one, never writes anything.

    Reading the environment (a read-only view), it catches a wrong result with ``q``, a
    single number in [0, 1]. Reading the executor's narration instead (``reads_trace``, a
    bool), it can only catch a slip the narration betrays, again with ``q``.

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
        self.q = float(single("q", probability("q", q)))
        self.reads_trace = flag("reads_trace", reads_trace)

    def accepts(self, result: Result, view, rng) -> bool:
        """True to let ``result`` into the state; ``view`` is the environment, read-only."""
        wrong_seen = result.slip_visible if self.reads_trace else not view[result.subtask]
        return not (wrong_seen and rng.random() < self.q)


class Manager:
    """Owns the task state: the subtasks verified done, in order. Nothing else enters it.

    ``n``, the number of subtasks, is a whole number >= 0 (else ValueError).

    Examples
    --------
    >>> manager = Manager(3)
    >>> manager.record(1, accepted=False); manager.state, manager.next_subtask()
    ((), 1)
    >>> manager.record(1, accepted=True); manager.state, manager.next_subtask()
    ((1,), 2)
    """

    def __init__(self, n: int):
        self.n = whole("n", n, minimum=0)
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
        return (len(self.rounds[-1].state_after) if self.rounds else 0) == self.n

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
    persuasion=PERSUASION,
):
    r"""Run the Manage-Execute-Audit loop once, round by round, and keep the trace.

    Parameters
    ----------
    n : int
        Number of interdependent subtasks, done in order, ``n >= 0``; with none the run
        succeeds before any round, as the chain's success is 1 at ``n = 0``.
    p : float
        Executor accuracy per round (the mean over subtasks when ``correlated``).
    q : float
        Probability that the auditor catches a wrong result it can see.
    budget : int
        Round budget ``B >= 0``, of any size a float holds.
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
        number in [0, 10**6], ``budget`` not a whole number >= 0, an argument is an array,
        ``seed``, ``correlated`` or ``auditor_reads_trace`` is of the wrong kind, or the
        trace would be too long to keep: a run expected to last more than 10**5 rounds
        (capped by the budget), or ``n`` times those rounds above 10**7 (every record holds
        the state). :func:`simulate` has no trace and takes longer runs.

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
    why = " (one accuracy per subtask)"
    n = int(single("n", count("n", n, maximum=MAX_SUBTASKS, why=why)))
    p = float(single("p", probability("p", p)))
    q = float(single("q", probability("q", q)))
    budget = int(single("budget", large_count("budget", budget)))
    reads = flag("auditor_reads_trace", auditor_reads_trace)
    persuasion = float(single("persuasion", probability("persuasion", persuasion)))
    correlation = as_correlation(correlated)
    generator = random_generator(seed)

    if correlation is None or n == 0:
        first = retry = np.full(n, p)
    else:
        first, retry = correlation.rates(n, p)
    q_seen = q * (1.0 - persuasion) if reads else q
    life = min(budget, mean_rounds(first, retry, q_seen, retire_stuck=False))
    if life > MAX_TRACE_ROUNDS or n * life > MAX_TRACE:
        raise ValueError(
            f"run_loop records every round with its state: a run may last at most "
            f"{MAX_TRACE_ROUNDS:,} rounds on average and n times those rounds at most "
            f"{MAX_TRACE:,}, got n={n} and about {life:.3g} rounds; use simulate for long runs"
        )
    env = Environment(first, retry)
    manager, executor, auditor = Manager(n), Executor(persuasion), Auditor(q, reads)
    rounds: list[RoundRecord] = []
    grounded, attempts = True, Counter()
    t = 0
    while len(manager.state) < n and n - len(manager.state) <= budget - t:
        t += 1
        subtask = manager.next_subtask()
        attempts[subtask] += 1
        result = executor.work(Context(subtask, manager.state), env, generator)
        accepted = auditor.accepts(result, env.view, generator)
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
