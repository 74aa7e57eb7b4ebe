r"""Reliability of a chain of dependent steps, and what a check at each boundary buys.

A chain of :math:`n` steps that each succeed with conditional rate :math:`p` succeeds with
:math:`p^n`. A check with detection rate :math:`d` (and false-positive rate :math:`\varphi`) and
one fresh retry lifts a step to :math:`p' = p + p(1-p)(d-\varphi)`; retried until the check
passes, to :math:`p'_\infty = p / (1 - d(1-p))` at an expected :math:`1/(1-d(1-p))` attempts.

All functions broadcast like NumPy ufuncs: scalars give a Python ``float`` (or ``bool``),
arrays give an array.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .validate import broadcast, large_count, probability, scalar_or_array

__all__ = [
    "chain_success",
    "step_rate",
    "half_life",
    "checked_step",
    "perfect_check_attempts",
    "undetected_floor",
    "checked_step_limit",
    "expected_attempts",
    "checked_step_fallible",
    "check_helps",
    "discrimination_accuracy",
    "per_step_vs_per_graph",
    "StepVsGraph",
]


def chain_success(p, n):
    r"""Probability that all ``n`` dependent steps succeed: :math:`p^n`.

    Parameters
    ----------
    p : float or array_like
        Conditional success rate of one step, given that every earlier step succeeded.
    n : int or array_like of int
        Number of steps, ``n >= 0``: any whole number a float holds, ``1e19`` included.

    Returns
    -------
    float or ndarray
        :math:`p^n`.

    Raises
    ------
    ValueError
        If ``p`` is outside [0, 1] or NaN, or ``n`` is not a whole number >= 0.

    Notes
    -----
    By the chain rule, :math:`P(X_1 = \dots = X_n = 1) = \prod_i P(X_i = 1 \mid X_{<i} = 1)`,
    which is :math:`p^n` when every factor equals :math:`p`. The empty chain (``n = 0``)
    succeeds with probability 1, also when ``p = 0``. The power is taken in floating point,
    which is accurate for any ``n``: a result below the smallest double (about 5e-324)
    correctly rounds to ``0.0``. A count beyond ``2**53`` is used as the nearest double,
    which moves :math:`p^n` by less than one part in :math:`10^{13}` wherever it is above 0.

    Examples
    --------
    >>> round(chain_success(0.9, 10), 4)
    0.3487
    >>> round(chain_success(0.95, 50), 4)
    0.0769
    >>> chain_success(0.9999999, 10**7)  # about exp(-1)
    0.3678794...
    >>> chain_success([0.8, 0.9], 10).round(4)
    array([0.1074, 0.3487])
    >>> chain_success(0.9, 1e19), chain_success(1.0, 1e19)
    (0.0, 1.0)
    """
    p = probability("p", p)
    n = large_count("n", n)
    p, n = broadcast(p=p, n=n)
    return scalar_or_array(np.power(p, n))


def step_rate(success, n):
    r"""Effective per-step rate of a task that succeeds with ``success`` over ``n`` steps.

    Parameters
    ----------
    success : float or array_like
        Probability that the whole task succeeds.
    n : int or array_like of int
        Number of steps, ``n >= 1``, of any size a float holds.

    Returns
    -------
    float or ndarray
        :math:`p_\mathrm{eff} = \mathrm{success}^{1/n}`, the inverse of :func:`chain_success`.

    Raises
    ------
    ValueError
        If ``success`` is outside [0, 1] or ``n`` is not a whole number >= 1.

    Examples
    --------
    >>> round(step_rate(0.9**10, 10), 12)
    0.9
    >>> round(step_rate(0.25, 2), 12)
    0.5
    """
    success = probability("success", success)
    n = large_count("n", n, minimum=1)
    success, n = broadcast(success=success, n=n)
    return scalar_or_array(np.power(success, 1.0 / n))


def half_life(p):
    r"""Number of steps after which a chain's success has fallen to one half.

    Parameters
    ----------
    p : float or array_like
        Per-step success rate.

    Returns
    -------
    float or ndarray
        :math:`n_{1/2} = \ln 2 / (-\ln p)`; ``inf`` at ``p = 1`` and ``0`` at ``p = 0``.

    Notes
    -----
    For :math:`p` near 1, :math:`-\ln p \approx 1 - p`, so :math:`n_{1/2} \approx 0.693/(1-p)`.
    The result is a real number of steps; it need not be a whole number.

    Examples
    --------
    >>> round(half_life(0.95), 1)
    13.5
    >>> half_life(1.0)
    inf
    """
    p = probability("p", p)
    with np.errstate(divide="ignore"):
        # -log(p) is 0 at p = 1 (infinite half-life) and inf at p = 0 (half-life 0).
        result = np.log(2.0) / np.abs(np.log(p))
    return scalar_or_array(result)


def checked_step(p, d):
    r"""Success rate of a step with a check of detection rate ``d`` and one fresh retry.

    Parameters
    ----------
    p : float or array_like
        Success rate of one attempt.
    d : float or array_like
        Probability that the check flags a wrong result; it never flags a correct one.

    Returns
    -------
    float or ndarray
        :math:`p' = p + (1 - p)\,d\,p`.

    Notes
    -----
    The first attempt succeeds with :math:`p`. It is wrong with :math:`1 - p`; the check catches
    that with :math:`d`, and the retry, a fresh attempt with the same rate, then succeeds with
    :math:`p`. For ``d = 0`` the result is ``p``; for ``d = 1`` it is :math:`1 - (1-p)^2`.

    Examples
    --------
    >>> round(checked_step(0.9, 1.0), 4)
    0.99
    >>> round(checked_step(0.9, 0.5), 4)
    0.945
    """
    p = probability("p", p)
    d = probability("d", d)
    p, d = broadcast(p=p, d=d)
    return scalar_or_array(p + (1.0 - p) * d * p)


def perfect_check_attempts(p, k):
    r"""Success rate of a step with a perfect check and up to ``k`` attempts.

    Parameters
    ----------
    p : float or array_like
        Success rate of one attempt.
    k : int or array_like of int
        Number of attempts allowed, ``k >= 0`` (``k = 0`` never succeeds), of any size a
        float holds.

    Returns
    -------
    float or ndarray
        :math:`1 - (1 - p)^k`.

    Raises
    ------
    ValueError
        If ``p`` is outside [0, 1] or NaN, or ``k`` is not a whole number >= 0.

    Examples
    --------
    >>> round(perfect_check_attempts(0.9, 2), 4)
    0.99
    >>> perfect_check_attempts(0.5, [1, 2, 3])
    array([0.5  , 0.75 , 0.875])
    >>> perfect_check_attempts(0.9, 1e19)
    1.0
    """
    p = probability("p", p)
    k = large_count("k", k)
    p, k = broadcast(p=p, k=k)
    return scalar_or_array(1.0 - np.power(1.0 - p, k))


def undetected_floor(p, d):
    r"""Failure probability of a checked step that no number of retries removes.

    Parameters
    ----------
    p : float or array_like
        Success rate of one attempt.
    d : float or array_like
        Detection rate of the check.

    Returns
    -------
    float or ndarray
        :math:`(1 - p)(1 - d)`: the first attempt is wrong and the check lets it through, so the
        step ends at once with a wrong result.

    Examples
    --------
    >>> round(undetected_floor(0.9, 0.8), 4)
    0.02
    """
    p = probability("p", p)
    d = probability("d", d)
    p, d = broadcast(p=p, d=d)
    return scalar_or_array((1.0 - p) * (1.0 - d))


def _retry_denominator(p, d):
    """``1 - d (1 - p)``: the probability that one attempt ends the retry loop, as
    ``(1 - d) + d p`` (two terms that never cancel: 1 - (1 - p) lost digits at a small p)."""
    p = probability("p", p)
    d = probability("d", d)
    p, d = broadcast(p=p, d=d)
    return p, (1.0 - d) + d * p


def checked_step_limit(p, d):
    r"""Success rate of a step retried until its check passes.

    Parameters
    ----------
    p : float or array_like
        Success rate of one attempt.
    d : float or array_like
        Detection rate of the check (no false positives).

    Returns
    -------
    float or ndarray
        :math:`p'_\infty = p / (1 - d(1 - p)) = p\,E[N]`.

    Notes
    -----
    Each attempt ends the loop with probability :math:`1 - d(1-p)` (it is right, or it is wrong
    and slips through); it ends the loop *correctly* with probability :math:`p`. Hence
    :math:`p'_\infty = p / (1 - d(1-p))`: ``d = 0`` gives ``p``, ``d = 1`` gives 1 for any
    ``p > 0``. At ``p = 0`` and ``d = 1`` the loop never ends and never succeeds: the result
    is 0 (and :func:`expected_attempts` is infinite).

    Examples
    --------
    >>> round(checked_step_limit(0.9, 1.0), 12)
    1.0
    >>> round(checked_step_limit(0.9, 0.5), 4)
    0.9474
    >>> checked_step_limit(0.0, 1.0)
    0.0
    """
    p, denominator = _retry_denominator(p, d)
    safe = np.where(denominator > 0.0, denominator, 1.0)
    return scalar_or_array(np.where(denominator > 0.0, p / safe, 0.0))


def expected_attempts(p, d):
    r"""Expected number of attempts when a step is retried until its check passes.

    Parameters
    ----------
    p : float or array_like
        Success rate of one attempt.
    d : float or array_like
        Detection rate of the check.

    Returns
    -------
    float or ndarray
        :math:`E[N] = 1 / (1 - d(1 - p))`, with :math:`P(N > j) = [(1-p)d]^j`; ``inf`` when
        ``p = 0`` and ``d = 1``.

    Examples
    --------
    >>> round(expected_attempts(0.9, 1.0), 2)
    1.11
    >>> expected_attempts(0.5, 1.0)
    2.0
    """
    _, denominator = _retry_denominator(p, d)
    with np.errstate(divide="ignore"):
        return scalar_or_array(1.0 / denominator)


def checked_step_fallible(p, d, phi):
    r"""Success rate of a step with one retry behind a check that also flags correct results.

    Parameters
    ----------
    p : float or array_like
        Success rate of one attempt.
    d : float or array_like
        Detection rate: probability that a wrong result is flagged.
    phi : float or array_like
        False-positive rate: probability that a correct result is flagged.

    Returns
    -------
    float or ndarray
        :math:`p' = p[(1-\varphi) + \varphi p] + (1-p)\,d\,p = p + p(1-p)(d - \varphi)`.

    Notes
    -----
    A flagged correct result is thrown away and replaced by a fresh attempt, which is right
    with :math:`p`. The check therefore helps exactly when :math:`d > \varphi`, and at
    :math:`d = \varphi` it changes nothing.

    Examples
    --------
    >>> round(checked_step_fallible(0.9, 0.8, 0.1), 4)
    0.963
    >>> round(checked_step_fallible(0.9, 0.3, 0.3), 12)
    0.9
    """
    p = probability("p", p)
    d = probability("d", d)
    phi = probability("phi", phi)
    p, d, phi = broadcast(p=p, d=d, phi=phi)
    return scalar_or_array(p + p * (1.0 - p) * (d - phi))


def check_helps(d, phi):
    r"""Whether a check with detection ``d`` and false positives ``phi`` raises success.

    Returns
    -------
    bool or ndarray of bool
        ``d > phi`` (see :func:`checked_step_fallible`). For ``0 < p < 1`` this is exactly when
        :math:`p' > p`.

    Examples
    --------
    >>> check_helps(0.8, 0.1)
    True
    >>> check_helps([0.2, 0.5], 0.3)
    array([False,  True])
    """
    d = probability("d", d)
    phi = probability("phi", phi)
    d, phi = broadcast(d=d, phi=phi)
    return scalar_or_array(d > phi)


def discrimination_accuracy(d, phi):
    r"""Accuracy of a pass/flag critic on pairs of one correct and one wrong candidate.

    Returns
    -------
    float or ndarray
        :math:`(1 - \varphi)\,d`: the critic passes the correct candidate and flags the wrong one.

    Examples
    --------
    >>> round(discrimination_accuracy(0.9, 0.1), 4)
    0.81
    """
    d = probability("d", d)
    phi = probability("phi", phi)
    d, phi = broadcast(d=d, phi=phi)
    return scalar_or_array((1.0 - phi) * d)


class StepVsGraph(NamedTuple):
    """Success of an n-step chain with a check per step and with one check per graph."""

    per_step: float | np.ndarray
    per_graph: float | np.ndarray


def per_step_vs_per_graph(p, n, d):
    r"""Compare a check (one retry) at every step with a single check of the whole chain.

    Parameters
    ----------
    p : float or array_like
        Success rate of one step.
    n : int or array_like of int
        Number of steps.
    d : float or array_like
        Detection rate of the check (no false positives).

    Returns
    -------
    StepVsGraph
        ``per_step`` :math:`= (p + (1-p)dp)^n` and ``per_graph``
        :math:`= p^n + (1 - p^n)\,d\,p^n`: a graph-level retry re-derives all n steps.

    Examples
    --------
    >>> r = per_step_vs_per_graph(0.9, 10, 1.0)
    >>> round(r.per_step, 3), round(r.per_graph, 3)
    (0.904, 0.576)
    """
    p = probability("p", p)
    n = large_count("n", n)
    d = probability("d", d)
    p, n, d = broadcast(p=p, n=n, d=d)
    chain = np.power(p, n)
    per_step = np.power(p + (1.0 - p) * d * p, n)
    per_graph = chain + (1.0 - chain) * d * chain
    return StepVsGraph(scalar_or_array(per_step), scalar_or_array(per_graph))
