r"""The audited chain as a matrix, and success by the textbook matrix power.

The :math:`(n+2) \times (n+2)` row-stochastic matrix :math:`P` has :math:`P_{i,i+1} = p`,
:math:`P_{i,i} = (1-p)q` and :math:`P_{i,C} = (1-p)(1-q)` for :math:`i < n`; states :math:`n`
and :math:`C` absorb. Success within :math:`B` rounds is :math:`(e_0^\top P^B)_n`, carried
through the binary digits of :math:`B`: :math:`O(n^3 \log B)`, the readable reference that
:func:`decompkit.markov.success_exact` is tested against.
"""

from __future__ import annotations

import numpy as np

from ..validate import broadcast, count, probability, scalar_or_array, single

__all__ = ["transition_matrix", "success_matrix_power"]

#: Largest n the dense matrix method accepts: (n+2)^2 doubles and O(n^3 log B) work.
_MATRIX_MAX_N = 2000
_WHY = " for the matrix method (use success_exact)"


def transition_matrix(n, p, q):
    r"""The :math:`(n+2) \times (n+2)` row-stochastic matrix of the audited chain.

    Parameters
    ----------
    n : int
        Number of subtasks, ``0 <= n <= 2000`` (32 MB of matrix at the bound).
    p : float
        Probability that one round of the executor is correct.
    q : float
        Probability that the audit catches a wrong round.

    Returns
    -------
    ndarray
        ``P[i, j]`` is the probability of moving from state ``i`` to ``j`` in one round.
        States are ordered ``0, 1, ..., n`` and then ``C`` (index ``n + 1``).

    Raises
    ------
    ValueError
        If ``p`` or ``q`` is outside [0, 1], ``n`` is not a whole number in [0, 2000], or an
        argument is an array.

    Notes
    -----
    Row ``i < n`` holds ``p`` at ``i + 1``, ``(1-p) q`` at ``i`` and ``(1-p)(1-q)`` at ``C``.
    Rows ``n`` and ``C`` put 1 on the diagonal: both states absorb.

    Examples
    --------
    >>> transition_matrix(2, 0.9, 0.5)
    array([[0.05, 0.9 , 0.  , 0.05],
           [0.  , 0.05, 0.9 , 0.05],
           [0.  , 0.  , 1.  , 0.  ],
           [0.  , 0.  , 0.  , 1.  ]])
    """
    why = " (the dense matrix holds (n + 2)**2 numbers)"
    n = int(single("n", count("n", n, maximum=_MATRIX_MAX_N, why=why)))
    p = single("p", probability("p", p))
    q = single("q", probability("q", q))
    size = n + 2
    P = np.zeros((size, size))
    i = np.arange(n)
    P[i, i + 1] = p
    P[i, i] = (1.0 - p) * q
    P[i, n + 1] = (1.0 - p) * (1.0 - q)
    P[n, n] = 1.0
    P[n + 1, n + 1] = 1.0
    return P


def success_matrix_power(n, p, q, budget):
    r"""Success within ``budget`` rounds by the textbook method, :math:`(e_0^\top P^B)_n`.

    Parameters
    ----------
    n : int or array_like of int
        Number of subtasks, ``0 <= n <= 2000``.
    p, q : float or array_like
        Executor accuracy per round and audit detection probability.
    budget : int or array_like of int
        Round budget ``0 <= B <= 2**63 - 1``; ``B < n`` is legal and gives 0.

    Returns
    -------
    float or ndarray
        Probability that state ``n`` is reached within ``budget`` rounds.

    Raises
    ------
    ValueError
        On a bad argument (see :func:`success_exact`), ``n > 2000`` (the dense matrix has
        ``(n+2)^2`` entries and each product costs :math:`O(n^3)`) or a budget beyond int64
        (:func:`success_exact` takes any budget).

    Notes
    -----
    The row vector :math:`e_0^\top` is carried through the binary digits of ``B``
    (square-and-multiply): :math:`O(n^3 \log B)` per point. This is the readable reference
    against which :func:`success_exact` is tested; use that function for real work.

    Examples
    --------
    >>> round(success_matrix_power(10, 0.95, 0.5, 20), 3)
    0.771
    """
    n = count("n", n, maximum=_MATRIX_MAX_N, why=_WHY)
    p = probability("p", p)
    q = probability("q", q)
    budget = count("budget", budget, why=_WHY)
    n, p, q, budget = broadcast(n=n, p=p, q=q, budget=budget)
    out = np.empty(n.shape)
    for idx in np.ndindex(n.shape):
        P = transition_matrix(int(n[idx]), float(p[idx]), float(q[idx]))
        row = np.zeros(P.shape[0])
        row[0] = 1.0
        power, b = P, int(budget[idx])
        while b:
            if b & 1:
                row = row @ power
            b >>= 1
            if b:
                power = power @ power
        out[idx] = row[int(n[idx])]
    return scalar_or_array(out)
