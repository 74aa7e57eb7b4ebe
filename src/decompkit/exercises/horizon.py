"""Parameters, answer key and visible checks of the long-horizon notebook (the audited
Markov chain).

``key(P)`` computes every answer with :mod:`decompkit.markov`; ``judge(item, answer, P)``
names the likely mistake of an answer that is off, and ``check(item, answer, P)`` prints the
notebook's one-line check.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .. import markov
from .checks import ON_TRACK, Mistake, judge_number
from .contract import Diagnosis, Exercise, Item
from .page import NumbersDisplay, report
from .support import cached_key, grid, known_item, mistake_clashes, two_digits_slip_through

__all__ = ["HorizonParams", "draw", "degenerate", "key", "judge", "check", "ITEMS", "EXERCISE"]


@dataclass(frozen=True)
class HorizonParams(NumbersDisplay):
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
    for item in two_digits_slip_through(expected):
        found.append(f"{item}: two significant digits would pass the four-digit rule")
    return found


def _mistakes(item: str, P: HorizonParams) -> list[Mistake]:
    p, q, n, B, t = P.p, P.q, P.n, P.budget, P.t
    lam = (1 - p) * (1 - q)
    return {
        "escape_rate": [
            Mistake(
                "caught_share",
                (1 - p) * q,
                "that is the share of caught errors; an escape is an error the audit misses",
            ),
            Mistake(
                "forgot_the_error",
                1 - q,
                "an escape needs an error first: the audit can only miss what went wrong",
            ),
        ],
        "success": [
            Mistake(
                "no_audit",
                p**n,
                "that is the chain without an audit; here a caught error is retried within "
                "the budget",
            ),
        ],
        "success_no_audit": [
            Mistake(
                "kept_the_audit",
                markov.success_exact(n, p, q, B),
                "that is the success with the audit; without it every error corrupts the run",
            ),
        ],
        "grounded": [
            Mistake(
                "linear_in_t",
                1 - lam * t,
                "grounded means no escape in any of the t rounds: the rounds multiply, they "
                "do not subtract",
            ),
            Mistake(
                "ignored_the_audit",
                p**t,
                "that counts every error as an escape; a caught error keeps the state grounded",
            ),
        ],
        "grounded_half_life": [
            Mistake(
                "used_approximation",
                math.log(2) / lam,
                "that is the approximation for a small escape rate; solve for the exact half-life",
            ),
            Mistake(
                "chain_half_life",
                math.log(2) / -math.log(p),
                "that is the chain's half-life, which ignores the audit: here only escapes "
                "end the grounded run",
            ),
        ],
        "min_budget_factor": [
            Mistake(
                "used_p",
                p,
                "a verified subtask costs more than one round on average, not less",
            ),
        ],
    }.get(item, [])


_IDEAS = {
    "escape_rate": "an escape is one round in which an error happens and the audit misses it",
    "success": "success is the n-th advance within P.budget rounds: entry (0, n) of the "
    "matrix power",
    "success_no_audit": "with q = 0 every error corrupts the run at once; does the budget "
    "still matter?",
    "grounded": "grounded after t rounds means no escape in any of them",
    "grounded_half_life": "solve g_t = 1/2 for t exactly",
    "min_budget_factor": "with every error caught, a subtask takes as many rounds on average "
    "as a geometric wait for an advance",
    "collapse": "walk the grid 5, 10, ..., 200 with B = round(budget factor * n) and find the "
    "first horizon whose success is below one half",
}


def judge(item: str, answer, P: HorizonParams) -> Diagnosis:
    """The verdict on one answer of the notebook (see :func:`key` for the items).

    ``"T_small"`` is the transition matrix built by hand (see :func:`judge_matrix`).

    Raises
    ------
    ValueError
        When ``item`` is not an item of this notebook.

    Examples
    --------
    >>> P = HorizonParams()
    >>> judge("T_small", key(P)["T_small"], P).status
    'ok'
    >>> judge("grounded", 1 - (1 - P.p) * (1 - P.q) * P.t, P).mistake
    'linear_in_t'
    """
    expected = known_item(key(P), item)[item]
    if item == "T_small":
        return judge_matrix(answer, P)
    if item == "collapse":
        if expected is None:
            if answer is not False:
                return Diagnosis("off", "nothing on the grid collapses here: answer False")
            return ON_TRACK
        if isinstance(answer, (bool, np.bool_)):
            return Diagnosis("off", "a horizon on the grid collapses: answer its n")
        grid_hint = "the grid is 5, 10, ..., 200; success must be *below* one half"
        return judge_number(
            answer,
            expected,
            rtol=0,
            atol=0.5,
            mistakes=[
                Mistake(
                    "not_yet_below_half",
                    expected - 5,
                    "on that horizon success is not yet below one half",
                )
            ],
            bounds=(5, 200),
            bounds_hint=grid_hint,
            idea=_IDEAS[item],
        )
    bounds = {"grounded_half_life": (0.0, math.inf), "min_budget_factor": (1.0, math.inf)}
    return judge_number(
        answer,
        expected,
        mistakes=_mistakes(item, P),
        bounds=bounds.get(item, (0.0, 1.0)),
        bounds_hint={
            "grounded_half_life": "a half-life is a positive number of rounds",
            "min_budget_factor": "a subtask takes at least one round",
        }.get(item, "a probability lies in [0, 1]"),
        idea=_IDEAS[item],
    )


def judge_matrix(answer, P: HorizonParams) -> Diagnosis:
    """The verdict on the transition matrix built by hand for ``P.n_small`` subtasks."""
    want = markov.transition_matrix(P.n_small, P.p, P.q)
    try:
        got = np.asarray(answer, dtype=float)
    except (TypeError, ValueError):
        return Diagnosis("invalid", "expected a square array of numbers (rows of equal length)")
    if got.shape != want.shape:
        return Diagnosis(
            "invalid", f"expected shape {want.shape} (states 0..n and C), got {got.shape}"
        )
    if not np.isfinite(got).all():
        return Diagnosis("invalid", "the matrix holds a NaN or an infinity")
    sums = got.sum(axis=1)
    bad = np.flatnonzero(~np.isclose(sums, 1.0))
    if bad.size:
        row = int(bad[0])
        return Diagnosis(
            "off",
            f"row {row} sums to {sums[row]:.4g}: the moves out of a state sum to 1",
            "row_sum",
        )
    if not np.isclose(got[-1, -1], 1.0) or not np.isclose(got[-2, -2], 1.0):
        return Diagnosis(
            "off", "the done state n and the corrupted state C must absorb", "not_absorbing"
        )
    if np.allclose(got, want.T):
        return Diagnosis("off", "transposed: row i holds the moves *out of* state i", "transposed")
    if not np.allclose(got, want, atol=1e-9):
        return Diagnosis("off", "a move is off: compare each row with the table of moves above")
    return ON_TRACK


def check(item: str, answer, P: HorizonParams) -> None:
    """The visible check of one item: prints ``[ok] B1 success: on track`` or a hint."""
    report(EXERCISE, item, answer, P)


#: Every graded item of the notebook, in its order.
ITEMS = (
    Item("T_small", "A1", ("T_small",), "transition_matrix_value", "matrix"),
    Item("escape_rate", "A2", ("escape",), "escape_rate_value", "number"),
    Item("success", "B1", ("success",), "success_value", "number"),
    Item("success_no_audit", "B2", ("success_no_audit",), "success_no_audit_value", "number"),
    Item("grounded", "C1", ("grounded",), "grounded_value", "number"),
    Item("grounded_half_life", "C2", ("grounded_half",), "grounded_half_life_value", "number"),
    Item("min_budget_factor", "C3", ("gamma_min",), "min_budget_factor_value", "number"),
    Item("collapse", "D1", ("n_collapse",), "collapse_value", "number"),
)

#: The notebook as the teaching layer knows it (see :class:`decompkit.exercises.Exercise`).
EXERCISE = Exercise(
    name="horizon",
    file="02-long-horizons",
    Params=HorizonParams,
    draw=draw,
    key=key,
    judge=judge,
    degenerate=degenerate,
    items=ITEMS,
)
