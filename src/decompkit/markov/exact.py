r"""Success within a budget in closed form: the negative-binomial sum of the audited chain.

A success path has ``n`` advances and ``k`` caught errors, the last round an advance, so with
:math:`r = (1-p)q`

.. math:: P_\mathrm{success} = p^n \sum_{k=0}^{B-n} \binom{n-1+k}{k} r^k .

This file states the sum and its edge cases; the private engine ``_longsum`` evaluates it
for many points at once (the fast path the benchmark asked for).
"""

from __future__ import annotations

from .._validate import broadcast, count, probability, scalar_or_array
from ._longsum import success_flat

__all__ = ["success_exact"]


def _chain_args(n, p, q, budget):
    """Validate and broadcast the four chain arguments."""
    n = count("n", n)
    p = probability("p", p)
    q = probability("q", q)
    budget = count("budget", budget)
    return broadcast(n=n, p=p, q=q, budget=budget)


def success_exact(n, p, q, budget):
    r"""Probability of finishing all ``n`` subtasks within ``budget`` rounds, exactly and fast.

    Parameters
    ----------
    n : int or array_like of int
        Number of subtasks, ``n >= 0``.
    p : float or array_like
        Probability that one round of the executor is correct.
    q : float or array_like
        Probability that the audit catches a wrong round.
    budget : int or array_like of int
        Round budget ``B >= 0``. ``B < n`` is legal: the task cannot finish, success is 0.

    Returns
    -------
    float or ndarray
        :math:`(e_0^\top P^B)_n`, broadcast over the four arguments.

    Raises
    ------
    ValueError
        If ``p`` or ``q`` is outside [0, 1] or NaN, ``n`` or ``budget`` is not a whole number
        >= 0, or the arguments cannot be broadcast together; also for a point whose sum would
        need more than 2**27 terms (only a tiny ``p`` with ``q`` near 1 and a budget of many
        times ``n / p`` rounds gets there).

    Notes
    -----
    A success path has ``n`` advances and ``k = t - n`` caught errors, the last round an
    advance, so with :math:`r = (1-p)q`

    .. math:: P = p^n \sum_{k=0}^{B-n} \binom{n-1+k}{k} r^k ,

    the probability that the ``n``-th advance of a negative-binomial sequence comes by round
    ``B``. Edge cases: ``n = 0`` gives 1; ``B < n`` gives 0; ``p = 0`` gives 0; ``r = 0``
    (``q = 0`` or ``p = 1``) gives :math:`p^n` for every ``B >= n``; ``q = 1`` gives the
    binomial tail :math:`P[\mathrm{Bin}(B, p) \ge n]`.

    The terms :math:`a_k` are unimodal with ratio :math:`a_{k+1}/a_k = r(n+k)/(k+1)`. The sum
    is taken relative to the largest term: from the mode outwards the running products of
    ratios are at most 1 (no overflow, relative error about ``k`` ulps), and the largest term
    is :math:`p^n` times the product of the ratios below the mode, taken in log space (as a
    sum of logs where the product would underflow). Once the ratio is below
    :math:`\rho = r + \theta(1-r)` the tail is geometric and is cut where it falls below
    :math:`10^{-18}` of the sum (best of :math:`\theta \in \{1/4, 1/2, 3/4\}`), so the
    work per point is :math:`O(\min(B - n,\; nr/(1-r)))` and a huge budget costs no more than
    a large one. Points are summed together in padded blocks of similar length, all
    vectorised; ``n = 10**5`` takes milliseconds. Points longer than 2**18 terms are summed
    one by one from an ``lgamma`` value of the largest term, walking outwards until the terms
    underflow (relative accuracy about 1e-10 there). ``n = 1`` is summed in closed form, and
    a point whose upper bound :math:`\min\{(p/(1-r))^n, (eBp/n)^n\}` is below the smallest
    double returns 0 at once. Checked against exact rational arithmetic for ``n <= 300``,
    the absolute error stayed below 1e-13.

    References
    ----------
    J. G. Kemeny and J. L. Snell, *Finite Markov Chains*, Springer, 1976 (absorbing chains).

    Examples
    --------
    >>> round(success_exact(50, 0.95, 0.9, 100), 3)
    0.769
    >>> success_exact([10, 25, 50], 0.95, 0.0, [20, 50, 100]).round(3)
    array([0.599, 0.277, 0.077])
    >>> success_exact(5, 0.95, 0.5, 4)  # budget below n: cannot finish
    0.0
    >>> 0.0 < success_exact(10**5, 0.95, 0.9, 2 * 10**5) < 1.0
    True
    """
    n, p, q, budget = _chain_args(n, p, q, budget)
    out = success_flat(n.ravel(), p.ravel(), q.ravel(), budget.ravel())
    return scalar_or_array(out.reshape(n.shape))
