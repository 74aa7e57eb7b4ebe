r"""What a growing transcript costs against a fresh bounded context.

Round :math:`t` of an appended transcript reads :math:`L_0 + a t` tokens at quadratic cost, so
:math:`T` rounds cost :math:`\sum_{t<T} (L_0 + a t)^2 = \Theta(a^2 T^3)`, while a fresh context
of :math:`L_*` tokens costs :math:`T L_*^2`; the relevant share of the appended context falls
as :math:`m / (L_0 + a t)`.
"""

from __future__ import annotations

import numpy as np

from .._validate import broadcast, count, scalar_or_array

__all__ = ["appended_context_cost", "fresh_context_cost", "relevant_share"]

#: Largest integer returned as int64 by the context-cost functions; above it, a float.
_INT64_MAX = np.iinfo(np.int64).max


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
