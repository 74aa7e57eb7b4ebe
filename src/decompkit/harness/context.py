r"""What a growing transcript costs against a fresh bounded context.

Round :math:`t` of an appended transcript reads :math:`L_0 + a t` tokens at quadratic cost, so
:math:`T` rounds cost :math:`\sum_{t<T} (L_0 + a t)^2 = \Theta(a^2 T^3)`, while a fresh context
of :math:`L_*` tokens costs :math:`T L_*^2`; the relevant share of the appended context falls
as :math:`m / (L_0 + a t)`.
"""

from __future__ import annotations

import numpy as np

from ..validate import broadcast, finite_result, large_count, nonnegative, scalar_or_array

__all__ = ["appended_context_cost", "fresh_context_cost", "relevant_share"]


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
    float or ndarray
        :math:`\sum_{t=0}^{T-1} (L_0 + a t)^2`, round ``t`` reading :math:`L_0 + a t`
        tokens at quadratic cost (``T = 0`` costs 0).

    Raises
    ------
    ValueError
        If ``T`` is not a whole number >= 0, ``a`` or ``L0`` is negative or not finite,
        the arguments do not broadcast, or the cost is beyond the float range (about
        1.8e308), naming the arguments where it is.

    Notes
    -----
    In closed form, :math:`T L_0^2 + a L_0 T(T-1) + a^2 T(T-1)(T-\tfrac12)/3`, which is
    :math:`\Theta(a^2 T^3)` once :math:`aT \gg L_0`: doubling ``T`` multiplies the cost by
    a ratio that rises toward 8. It is summed in plain floats: all terms are >= 0, so there
    is no cancellation, and whole inputs give the exact integer while three times the cost
    stays below :math:`2^{53}` (:math:`T - \tfrac12` is exact, only the division by 3
    rounds). The last term's product before that division is three times the term, so a
    cost within a factor 3 of the float limit may be refused too.

    Examples
    --------
    >>> appended_context_cost(3, 10, 100)  # 100**2 + 110**2 + 120**2
    36500.0
    >>> appended_context_cost([1, 2, 4], 1, 0).tolist()
    [0.0, 1.0, 14.0]
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
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is the ValueError below
        # Every product starts from a factor T or T - 1, so T = 0 costs 0 and T = 1 reads L0
        # alone even where a * a would overflow; each a is paired with a T, so a tiny a and
        # a huge T neither underflow nor overflow on the way.
        aTT = (a * T) * (T - 1)
        cost = (T * L0) * L0 + aTT * L0 + aTT * (a * (T - 0.5)) / 3
    return finite_result("appended_context_cost", cost, T=T, a=a, L0=L0)


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
    float or ndarray
        :math:`T L_*^2`, linear in ``T``: doubling ``T`` doubles the cost.

    Raises
    ------
    ValueError
        If ``T`` is not a whole number >= 0, ``L_star`` is negative or not finite, the
        arguments do not broadcast, or the cost is beyond the float range (about 1.8e308),
        naming the arguments where it is.

    Examples
    --------
    >>> fresh_context_cost(10, 4000)
    160000000.0
    >>> fresh_context_cost([1, 2], 1.5).tolist()
    [2.25, 4.5]
    >>> fresh_context_cost(1e19, 1)
    1e+19
    """
    T = large_count("T", T)
    L_star = nonnegative("L_star", L_star)
    T, L_star = broadcast(T=T, L_star=L_star)
    with np.errstate(over="ignore"):  # an overflow is the ValueError below
        cost = (T * L_star) * L_star  # T first: T = 0 costs 0 even where L_star**2 overflows
    return finite_result("fresh_context_cost", cost, T=T, L_star=L_star)


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
