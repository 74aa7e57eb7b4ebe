"""Parameters, answer key and visible checks of the long-horizon notebook (the audited
Markov chain)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .. import markov
from ._contract import Exercise
from ._support import cached_key, grid, known_item, mistake_clashes
from .checks import CheckFailed, check_number, not_yet, on_track, unanswered

__all__ = ["HorizonParams", "draw", "degenerate", "key", "check", "check_matrix", "EXERCISE"]


@dataclass(frozen=True)
class HorizonParams:
    """Numbers of the long-horizon notebook (lecture section 3).

    Attributes
    ----------
    p, q : executor accuracy per round and audit detection probability.
    n : horizon (number of subtasks) of the worked example.
    budget_factor : rounds allowed per subtask; the budget is ``round(budget_factor * n)``.
    n_small : horizon of the transition matrix built by hand.
    t : rounds after which the grounded probability is asked for.
    trials, seed : size and seed of the Monte Carlo check.
    """

    p: float = 0.95
    q: float = 0.5
    n: int = 50
    budget_factor: float = 2.0
    n_small: int = 3
    t: int = 20
    trials: int = 20_000
    seed: int = 2026

    @property
    def budget(self) -> int:
        """Round budget of the worked example, ``round(budget_factor * n)``."""
        return round(self.budget_factor * self.n)


def draw(rng) -> HorizonParams:
    """One candidate of per-student numbers (see :func:`decompkit.exercises.params.params`)."""
    return HorizonParams(
        p=grid(rng, 0.90, 0.98, 0.001),
        q=grid(rng, 0.20, 0.80, 0.001),
        n=int(rng.integers(20, 81)),
        budget_factor=grid(rng, 1.5, 2.5, 0.1),
        t=int(rng.integers(10, 41)),
        seed=int(rng.integers(0, 2**31)),
    )


@cached_key
def key(P: HorizonParams) -> dict:
    """Every answer of the notebook for the parameters ``P`` (the matrix as nested lists).

    Examples
    --------
    >>> k = key(HorizonParams())
    >>> round(k["success"], 3), k["T_small"][0]
    (0.273, [0.025, 0.95, 0.0, 0.0, 0.025])
    """
    return {
        "T_small": markov.transition_matrix(P.n_small, P.p, P.q).tolist(),
        "escape_rate": (1 - P.p) * (1 - P.q),
        "success": markov.success_exact(P.n, P.p, P.q, P.budget),
        "success_no_audit": markov.success_exact(P.n, P.p, 0.0, P.budget),
        "grounded": markov.grounded_survival(P.t, P.p, P.q),
        "grounded_half_life": markov.grounded_half_life(P.p, P.q),
        "collapse": markov.collapse_horizon(P.p, P.q, P.budget_factor),
        "min_budget_factor": markov.min_budget_factor(P.p),
    }


def degenerate(P: HorizonParams) -> list[str]:
    """Why ``P`` would make an exercise of the notebook degenerate (empty when usable).

    Examples
    --------
    The lecture's own q = 0.5 makes the caught share (1-p) q equal to the missed share
    (1-p)(1-q), so a hint could not tell the two apart; per-student draws avoid it:

    >>> from decompkit.exercises.params import params
    >>> [problem.split(":")[0] for problem in degenerate(HorizonParams())]
    ['escape_rate']
    >>> degenerate(params("horizon", "s0001"))
    []
    """
    expected = key(P)
    found = mistake_clashes(expected, lambda item: _mistakes(item, P))
    for item in ("success", "grounded"):
        if not 0.05 <= expected[item] <= 0.95:
            found.append(f"{item} = {expected[item]:.4f} is too close to 0 or 1 to be telling")
    if expected["success"] - expected["success_no_audit"] < 0.05:
        found.append("the audit barely changes success: the comparison would be trivial")
    if expected["collapse"] is None:
        found.append("nothing collapses on the grid")
    if P.budget_factor <= expected["min_budget_factor"] + 0.2:
        found.append("the budget factor barely pays for verification")
    return found


def _mistakes(item: str, P: HorizonParams) -> dict[str, float]:
    p, q, n, B, t = P.p, P.q, P.n, P.budget, P.t
    lam = (1 - p) * (1 - q)
    return {
        "escape_rate": {
            "that is the rate of caught errors (1-p) q; the escape is an error the audit misses": (
                (1 - p) * q
            ),
            "an escape needs an error first: multiply by (1 - p)": 1 - q,
        },
        "success": {
            "that is p**n, the chain with no audit; here caught errors are retried": p**n,
        },
        "success_no_audit": {
            "with q = 0 every error corrupts: the budget does not matter, the answer is p**n": (
                markov.success_exact(n, p, q, B)
            ),
        },
        "grounded": {
            "grounded means no escape yet: (1 - lambda)**t, not 1 - lambda t": 1 - lam * t,
            "that is p**t; a caught error keeps the state grounded": p**t,
        },
        "grounded_half_life": {
            "that is the approximation ln 2 / lambda; use -ln(1 - lambda)": math.log(2) / lam,
            "you used the chain's half-life ln 2 / -ln p, which ignores the audit": (
                math.log(2) / -math.log(p)
            ),
        },
        "min_budget_factor": {
            "a verified subtask costs 1/p rounds on average, not p": p,
        },
    }.get(item, {})


def check(item: str, answer, P: HorizonParams) -> bool:
    """Visible check of one numeric answer (see :func:`key` for the items).

    ``"T_small"`` is the transition matrix (see :func:`check_matrix`).

    Raises
    ------
    decompkit.exercises.checks.CheckFailed
        When the answer is off, with a hint naming the likely mistake.
    ValueError
        When ``item`` is not an item of this notebook.
    """
    expected = known_item(key(P), item)
    if item == "T_small":
        return check_matrix(answer, P)
    if item == "collapse":
        if unanswered(answer):
            return not_yet(item)
        if expected[item] is None:
            if answer is not False:
                raise CheckFailed(item, "nothing on the grid collapses here: answer False")
            return on_track(item)
        grid_hint = "the grid is 5, 10, ..., 200; success must be *below* the threshold"
        return check_number(
            item,
            answer,
            expected[item],
            rtol=0,
            atol=0.5,
            mistakes={grid_hint: expected[item] - 5},
            bounds=(5, 200),
            bounds_hint=grid_hint,
        )
    bounds = (1.0, math.inf) if item == "min_budget_factor" else (0.0, math.inf)
    if item not in ("grounded_half_life", "min_budget_factor"):
        bounds = (0.0, 1.0)
    return check_number(item, answer, expected[item], mistakes=_mistakes(item, P), bounds=bounds)


def check_matrix(answer, P: HorizonParams) -> bool:
    """Visible check of the transition matrix built by hand for ``P.n_small`` subtasks."""
    name = "T_small"
    if unanswered(answer):
        return not_yet(name)
    want = markov.transition_matrix(P.n_small, P.p, P.q)
    got = np.asarray(answer, dtype=float)
    if got.shape != want.shape:
        raise CheckFailed(name, f"expected shape {want.shape} (states 0..n and C), got {got.shape}")
    sums = got.sum(axis=1)
    bad = np.flatnonzero(~np.isclose(sums, 1.0))
    if bad.size:
        row = int(bad[0])
        raise CheckFailed(name, f"row {row} sums to {sums[row]:.4g}, expected 1")
    if not np.isclose(got[-1, -1], 1.0) or not np.isclose(got[-2, -2], 1.0):
        raise CheckFailed(name, "the done state n and the corrupted state C must absorb")
    if np.allclose(got, want.T):
        raise CheckFailed(name, "transposed: row i holds the moves *out of* state i")
    if not np.allclose(got, want, atol=1e-9):
        raise CheckFailed(name, "a move is off: advance p, stay (1-p) q, corrupt (1-p)(1-q)")
    return on_track(name)


#: The notebook as the teaching layer knows it (see :class:`decompkit.exercises.Exercise`).
EXERCISE = Exercise(
    name="horizon",
    file="02-long-horizons",
    Params=HorizonParams,
    draw=draw,
    key=key,
    check=check,
    degenerate=degenerate,
    grade_cells={
        "transition_matrix_value": "T_small",
        "escape_rate_value": "escape_rate",
        "success_value": "success",
        "success_no_audit_value": "success_no_audit",
        "grounded_value": "grounded",
        "grounded_half_life_value": "grounded_half_life",
        "min_budget_factor_value": "min_budget_factor",
        "collapse_value": "collapse",
    },
)
