r"""What a growing transcript costs against a fresh bounded context.

Round :math:`t` of an appended transcript reads :math:`L_0 + a t` tokens at quadratic cost, so
:math:`T` rounds cost :math:`\sum_{t<T} (L_0 + a t)^2 = \Theta(a^2 T^3)`, while a fresh context
of :math:`L_*` tokens costs :math:`T L_*^2`; the relevant share of the appended context falls
as :math:`m / (L_0 + a t)`.
"""

from __future__ import annotations

import math

import numpy as np

from .._validate import INT64_MAX, broadcast, large_count, nonnegative, scalar_or_array

__all__ = ["appended_context_cost", "fresh_context_cost", "relevant_share"]

#: Below this a whole float is an exact integer, and the one the caller gave.
_EXACT = 2.0**53
#: The largest double, and its logarithm.
_FLOAT_MAX = float(np.finfo(float).max)
_LOG_FLOAT_MAX = math.log(_FLOAT_MAX)


def _plain(x: float) -> str:
    return str(int(x)) if x.is_integer() and abs(x) < 1e16 else repr(x)


def _too_big(func: str, arrays: dict, where: np.ndarray) -> ValueError:
    at = ", ".join(f"{k}={_plain(float(v[where].flat[0]))}" for k, v in arrays.items())
    return ValueError(f"{func} is beyond the float range (about 1.8e308) at {at}")


def _exact_inputs(T, *others) -> bool:
    """Whole numbers everywhere, and rounds below 2**53: the cost is an exact integer."""
    return bool((T < _EXACT).all()) and all(np.all(x == np.floor(x)) for x in others)


def _as_python_ints(arr):
    """Whole numbers as an object array of Python ints (exact, no overflow)."""
    return np.asarray(np.frompyfunc(int, 1, 1)(arr), dtype=object)


def _from_exact(func: str, exact, arrays: dict):
    """int64 if every exact cost fits, else the correctly rounded floats; never inf."""
    exact = np.asarray(exact, dtype=object)
    if exact.size == 0 or max(exact.flat) <= INT64_MAX:
        return scalar_or_array(exact.astype(np.int64))
    beyond = np.asarray(exact > int(_FLOAT_MAX), dtype=bool)
    if beyond.any():
        raise _too_big(func, arrays, beyond)
    return scalar_or_array(np.asarray(np.frompyfunc(float, 1, 1)(exact), dtype=float))


def _from_floats(func: str, value, log_value, arrays: dict):
    """``value``, with any term that overflowed on the way redone as ``exp(log_value())``."""
    bad = ~np.isfinite(value)
    if bad.any():
        with np.errstate(divide="ignore"):
            logs = log_value()
        if (logs[bad] > _LOG_FLOAT_MAX).any():
            raise _too_big(func, arrays, bad & (logs > _LOG_FLOAT_MAX))
        value = np.where(bad, np.exp(np.minimum(logs, _LOG_FLOAT_MAX)), value)
    return scalar_or_array(value)


def appended_context_cost(T, a, L0):
    r"""Cumulative attention cost of ``T`` rounds when each round appends ``a`` tokens.

    Parameters
    ----------
    T : int or array_like of int
        Rounds, ``T >= 0``, of any size a float holds.
    a : float or array_like
        Tokens appended per round, ``>= 0``.
    L0 : float or array_like
        Tokens in the context before the first round, ``>= 0``.

    Returns
    -------
    int, float or ndarray
        :math:`\sum_{t=0}^{T-1} (L_0 + a t)^2`, round ``t`` reading :math:`L_0 + a t`
        tokens at quadratic cost. Exact integers (``int`` or int64) when all inputs are
        whole numbers, ``T < 2**53`` and the result fits in int64; otherwise floats
        (``T = 0`` costs 0).

    Raises
    ------
    ValueError
        If ``T`` is not a whole number >= 0, ``a`` or ``L0`` is negative or not finite,
        the arguments do not broadcast, or the cost is beyond the float range (about
        1.8e308), naming the arguments where it is.

    Notes
    -----
    In closed form, :math:`T L_0^2 + a L_0 T(T-1) + a^2 (T-1)T(2T-1)/6`, which is
    :math:`\Theta(a^2 T^3)` once :math:`aT \gg L_0`: doubling ``T`` multiplies the cost by
    a ratio that rises toward 8. All terms are >= 0, so the float form has no cancellation;
    the integer form is computed with Python integers and rounded once at the end. A float
    term whose partial product overflows is redone from logarithms.

    Examples
    --------
    >>> appended_context_cost(3, 10, 100)  # 100**2 + 110**2 + 120**2
    36500
    >>> appended_context_cost([1, 2, 4], 1, 0).tolist()
    [0, 1, 14]
    >>> appended_context_cost(2, 0.5, 1.0)  # 1 + 1.5**2
    3.25
    >>> appended_context_cost(10, 1e300, 0)
    Traceback (most recent call last):
    ...
    ValueError: appended_context_cost is beyond the float range ... at T=10, a=1e+300, L0=0
    """
    T = large_count("T", T)
    a = nonnegative("a", a)
    L0 = nonnegative("L0", L0)
    T, a, L0 = broadcast(T=T, a=a, L0=L0)
    arrays = {"T": T, "a": a, "L0": L0}
    if _exact_inputs(T, a, L0):
        Ti, ai, Li = (_as_python_ints(x) for x in (T, a, L0))
        cost = Ti * Li**2 + ai * Li * Ti * (Ti - 1) + ai**2 * ((Ti - 1) * Ti * (2 * Ti - 1) // 6)
        return _from_exact("appended_context_cost", cost, arrays)
    with np.errstate(over="ignore", invalid="ignore"):
        # Each term is 0 where its factor T or T - 1 is (also when another factor is inf);
        # T is paired with the token counts first, so no product over- or underflows early.
        value = (
            np.where(T > 0, (T * L0) * L0, 0.0)
            + np.where(T > 1, (a * T) * (L0 * (T - 1)), 0.0)
            + np.where(T > 1, (a * (T - 1)) * (a * T) * ((2 * T - 1) / 6), 0.0)
        )

    def log_value():
        lt, la, ll, lt1 = np.log(T), np.log(a), np.log(L0), np.log(np.maximum(T - 1, 0))
        terms = [lt + 2 * ll, la + ll + lt + lt1, 2 * la + lt1 + lt + np.log(2 * T - 1) - np.log(6)]
        return np.logaddexp.reduce(terms)

    return _from_floats("appended_context_cost", value, log_value, arrays)


def fresh_context_cost(T, L_star):
    r"""Cumulative attention cost of ``T`` rounds that each start from a fresh context.

    Parameters
    ----------
    T : int or array_like of int
        Rounds, ``T >= 0``, of any size a float holds.
    L_star : float or array_like
        Tokens of the bounded context every round reads, ``>= 0``.

    Returns
    -------
    int, float or ndarray
        :math:`T L_*^2`, linear in ``T``: doubling ``T`` doubles the cost. Exact integers
        when both inputs are whole numbers, ``T < 2**53`` and the result fits in int64.

    Raises
    ------
    ValueError
        If ``T`` is not a whole number >= 0, ``L_star`` is negative or not finite, or the
        cost is beyond the float range (about 1.8e308).

    Examples
    --------
    >>> fresh_context_cost(10, 4000)
    160000000
    >>> fresh_context_cost([1, 2], 1.5).tolist()
    [2.25, 4.5]
    >>> fresh_context_cost(1e19, 1)
    1e+19
    """
    T = large_count("T", T)
    L_star = nonnegative("L_star", L_star)
    T, L_star = broadcast(T=T, L_star=L_star)
    arrays = {"T": T, "L_star": L_star}
    if _exact_inputs(T, L_star):
        cost = _as_python_ints(T) * _as_python_ints(L_star) ** 2
        return _from_exact("fresh_context_cost", cost, arrays)
    with np.errstate(over="ignore", invalid="ignore"):
        value = np.where(T > 0, T * (L_star * L_star), 0.0)
    return _from_floats("fresh_context_cost", value, lambda: np.log(T) + 2 * np.log(L_star), arrays)


def relevant_share(t, m, a, L0):
    r"""Share of the context that is relevant at round ``t`` of an appended transcript.

    Parameters
    ----------
    t : int or array_like of int
        Round, counted from 0, ``t >= 0``, of any size a float holds.
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
    t = large_count("t", t)
    m = nonnegative("m", m)
    a = nonnegative("a", a)
    L0 = nonnegative("L0", L0)
    t, m, a, L0 = broadcast(t=t, m=m, a=a, L0=L0)
    if (L0 == 0).any():
        raise ValueError("L0 must be > 0 (the share divides by the context), got 0.0")
    over = m > L0
    if over.any():
        raise ValueError(
            "m must be <= L0 (the relevant tokens sit in the starting context), "
            f"got m={m[over].flat[0].item()!r} and L0={L0[over].flat[0].item()!r}"
        )
    with np.errstate(over="ignore"):  # a t beyond the float range: the share rounds to 0
        return scalar_or_array(m / (L0 + a * t))
