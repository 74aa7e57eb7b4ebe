r"""Checked steps: the executor of one task, scripted or seeded, and its prompts.

A checked step makes at most :math:`\kappa` attempts at a node: solve, check the artifact,
accept it, or rebuild the prompt as *original prompt + latest verdict* and try again. After
:math:`\kappa` rejections the node fails with a report. An attempt's outcome is one of
:data:`OUTCOMES`; :func:`scripted` plays them from data, :func:`seeded` draws them from a
solver right with probability :math:`p` and a check of power :math:`d`.
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from ..validate import probability, short, whole

__all__ = [
    "OUTCOMES",
    "ACCEPTED",
    "Verdict",
    "ScriptedStep",
    "SeededStep",
    "scripted",
    "seeded",
    "task_prompt",
    "retry_prompt",
]

#: ``"pass"``: accepted, correct. ``"wrong"``: accepted, but wrong (the check missed it).
#: ``"reject"``: the solver produced an artifact and the check said no (retry if attempts are
#: left). ``"fail"``, ``"crash"``: a hard failure, no artifact at all.
OUTCOMES = ("pass", "wrong", "reject", "fail", "crash")
#: The outcomes that leave an artifact: the scheduler records it and the node is done.
ACCEPTED = ("pass", "wrong")

_DEFAULT_MESSAGES = {
    "pass": "accepted",
    "wrong": "accepted, but the artifact is wrong (the check missed it)",
    "reject": "the check rejected the artifact",
    "fail": "the solver returned no output",
    "crash": "the executor crashed",
}


@dataclass(frozen=True)
class Verdict:
    """The outcome of one attempt and the check's message about it.

    Attributes
    ----------
    outcome : str
        One of :data:`OUTCOMES`.
    message : str
        The verdict as text; after a rejection this is what the retry prompt carries.
    """

    outcome: str
    message: str = ""

    def __post_init__(self):
        if self.outcome not in OUTCOMES:
            raise ValueError(f"outcome must be one of {list(OUTCOMES)}, got {self.outcome!r}")
        if not isinstance(self.message, str):
            raise ValueError(f"message must be a str, got {short.repr(self.message)}")


def _as_verdict(where: str, entry) -> Verdict:
    """A script entry (an outcome, or a pair outcome, message) as a Verdict."""
    if isinstance(entry, str):
        outcome, message = entry, None
    elif isinstance(entry, (tuple, list)) and len(entry) == 2:
        outcome, message = entry
    else:
        raise ValueError(
            f"{where} entries must be an outcome or a pair (outcome, message), "
            f"got {short.repr(entry)}"
        )
    if outcome not in OUTCOMES:
        raise ValueError(f"{where} has outcome {outcome!r}; choose one of {list(OUTCOMES)}")
    return Verdict(outcome, _DEFAULT_MESSAGES[outcome] if message is None else message)


class ScriptedStep:
    """A checked step whose attempts produce outcomes given as data.

    Use :func:`scripted` to build one. The step remembers how many attempts of each node it
    has played, so a node that runs again (after a cancellation) continues its script.
    """

    def __init__(self, script, kappa, default):
        self.kappa = whole("kappa", kappa, minimum=1)
        if not isinstance(script, Mapping):
            raise ValueError(f"script must be a mapping {{node: outcomes}}, got {script!r}")
        self._script = {}
        for node, entries in script.items():
            if isinstance(entries, str):
                raise ValueError(
                    f"script[{node!r}] must be a list of outcomes, not the str {entries!r}; "
                    f"write [{entries!r}]"
                )
            if not isinstance(entries, (list, tuple)):
                raise ValueError(
                    f"script[{node!r}] must be a list of outcomes, got {short.repr(entries)}"
                )
            self._script[node] = [_as_verdict(f"script[{node!r}]", e) for e in entries]
        self.default = _as_verdict("default", default)
        self._played: dict = {}

    def attempt(self, node, prompt: str, number: int) -> Verdict:
        """The next scripted verdict of ``node`` (the default once its script is used up)."""
        k = self._played.get(node, 0)
        self._played[node] = k + 1
        entries = self._script.get(node, ())
        return entries[k] if k < len(entries) else self.default

    def __repr__(self):
        return f"scripted({self._script!r}, kappa={self.kappa})"


class SeededStep:
    """A checked step around a random solver and a random check; see :func:`seeded`."""

    def __init__(self, p, d, kappa, seed, phi, crash):
        self.p = float(probability("p", p))
        self.d = float(probability("d", d))
        self.phi = float(probability("phi", phi))
        self.crash = float(probability("crash", crash))
        self.kappa = whole("kappa", kappa, minimum=1)
        if isinstance(seed, np.random.Generator):
            self._rng = seed
        elif seed is None or isinstance(seed, numbers.Integral) and not isinstance(seed, bool):
            if seed is not None and seed < 0:
                raise ValueError(f"seed must be an integer >= 0 or a Generator, got {seed!r}")
            self._rng = np.random.default_rng(seed)
        else:
            raise ValueError(f"seed must be an integer >= 0 or a Generator, got {seed!r}")

    def attempt(self, node, prompt: str, number: int) -> Verdict:
        """Draw one attempt: three uniforms, whatever the outcome, so streams stay aligned."""
        u_crash, u_solve, u_check = self._rng.random(3)
        if u_crash < self.crash:
            return Verdict("crash", _DEFAULT_MESSAGES["crash"])
        if u_solve < self.p:
            if u_check < self.phi:
                return Verdict("reject", "the check rejected a correct artifact (false alarm)")
            return Verdict("pass", _DEFAULT_MESSAGES["pass"])
        if u_check < self.d:
            return Verdict("reject", "the check caught a wrong artifact")
        return Verdict("wrong", _DEFAULT_MESSAGES["wrong"])

    def __repr__(self):
        return (
            f"seeded(p={self.p}, d={self.d}, kappa={self.kappa}, phi={self.phi}, "
            f"crash={self.crash})"
        )


def scripted(script=None, *, kappa=1, default="pass") -> ScriptedStep:
    """A checked step whose attempts play a script: outcomes given as data, per node.

    Parameters
    ----------
    script : Mapping, optional
        ``{node: [entry, ...]}``: the outcomes of that node's attempts, in order. An entry is
        an outcome from :data:`OUTCOMES` or a pair ``(outcome, message)`` whose message the
        trace (and, after a rejection, the retry prompt) shows. Nodes not listed, and
        attempts past the end of a list, get ``default``.
    kappa : int, optional
        Attempts per node run, at least 1 (default 1: no retry).
    default : str or tuple, optional
        The entry played when the script says nothing (default ``"pass"``).

    Returns
    -------
    ScriptedStep
        Pass it as ``step=`` to :func:`schedule` or :func:`run_with_repair`.

    Raises
    ------
    ValueError
        If ``script`` is not a mapping, a node's entries are a str or not a list, an entry
        is not an outcome, or ``kappa`` is not an integer >= 1.

    Notes
    -----
    The script is consumed attempt by attempt and remembered across calls: with
    ``{"run_tests": ["fail"]}`` the first attempt of ``run_tests`` fails and any later one
    passes. Build a fresh step to replay a script from the start.

    Examples
    --------
    >>> step = scripted({"write_code": ["reject", "pass"]}, kappa=2)
    >>> [step.attempt("write_code", "do write_code", k).outcome for k in (1, 2)]
    ['reject', 'pass']
    >>> step.attempt("report", "do report", 1)
    Verdict(outcome='pass', message='accepted')
    """
    return ScriptedStep({} if script is None else script, kappa, default)


def seeded(p, d, *, kappa=1, seed=None, phi=0.0, crash=0.0) -> SeededStep:
    """A checked step around a solver right with probability ``p`` and a check of power ``d``.

    Parameters
    ----------
    p : float
        Probability that an attempt produces a correct artifact.
    d : float
        Probability that the check rejects a wrong artifact; a wrong artifact it misses is
        accepted with outcome ``"wrong"`` (the artifact records it).
    kappa : int, optional
        Attempts per node run, at least 1.
    seed : int, numpy.random.Generator or None, optional
        The source of randomness. An int makes a fresh generator: two steps built with the
        same seed give identical traces. A Generator is used (and advanced) as it is.
    phi : float, optional
        Probability that the check rejects a correct artifact (a false alarm), default 0.
    crash : float, optional
        Probability that an attempt fails hard, with no output at all, default 0.

    Returns
    -------
    SeededStep

    Raises
    ------
    ValueError
        If a probability is outside [0, 1], ``kappa`` is not an integer >= 1, or ``seed``
        is neither a non-negative int, a Generator nor None.

    Notes
    -----
    Every attempt draws three uniforms (crash, solve, check) from the step's generator, in
    the order the scheduler completes attempts, which the virtual clock fixes. With
    ``crash = phi = 0`` and ``kappa = 2`` a node is accepted correct with probability
    :math:`p + (1-p) d p` (the lecture's :math:`p'`), accepted wrong with
    :math:`(1-p)(1-d)(1 + (1-p)d)`, and rejected twice with :math:`((1-p)d)^2`.

    Examples
    --------
    >>> step = seeded(0.5, 1.0, kappa=3, seed=1)
    >>> [step.attempt("x", "do x", k).outcome for k in (1, 2, 3)]
    ['reject', 'pass', 'pass']
    """
    return SeededStep(p, d, kappa, seed, phi, crash)


def task_prompt(node, inputs=(), context=None) -> str:
    """The original prompt of a node: its name, the artifacts it reads, and any context.

    Parameters
    ----------
    node : hashable
    inputs : iterable of nodes, optional
        The predecessors whose artifacts the node reads.
    context : str, optional
        Extra input from the caller, such as the failure report a repaired node must see.

    Returns
    -------
    str

    Examples
    --------
    >>> task_prompt("run_tests", ["write_code", "write_tests"])
    'do run_tests with write_code, write_tests'
    """
    text = f"do {node}"
    if inputs:
        text += " with " + ", ".join(map(str, inputs))
    if context:
        text += f"; {context}"
    return text


def retry_prompt(prompt: str, verdict: str) -> str:
    """The prompt of a retry: the original prompt plus the latest verdict, nothing else.

    Parameters
    ----------
    prompt : str
        The node's original prompt (never a previous retry prompt).
    verdict : str
        The check's message on the latest attempt.

    Returns
    -------
    str

    Notes
    -----
    The failed attempt itself never enters the new prompt, and neither do older verdicts:
    the context is rebuilt, not accumulated, which keeps an error from being read again and
    again (context poisoning) and spares the solver superfluous text (context confusion).

    Examples
    --------
    >>> retry_prompt("do write_code with fetch_data", "test_empty fails")
    'do write_code with fetch_data | verdict on the last attempt: test_empty fails'
    """
    return f"{prompt} | verdict on the last attempt: {verdict}"
