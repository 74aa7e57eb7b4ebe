"""Tests for decompkit.markov: the audited long-horizon chain (lecture section 3)."""

from __future__ import annotations

import decimal
import math
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from numpy.testing import assert_allclose

from decompkit import markov
from decompkit.markov import (
    collapse_horizon,
    expected_rounds,
    grounded_half_life,
    grounded_survival,
    longsum,
    min_budget_factor,
    montecarlo,
    reference_table,
    success_exact,
    success_matrix_power,
    success_monte_carlo,
    transition_matrix,
)

# The lecture's reference table (p = 0.95, B = 2n), verbatim.
LECTURE_TABLE = """\
| q    | n=10  | n=25  | n=50  | n=100 | n=200 | collapse n | half-life |
|------|-------|-------|-------|-------|-------|-----------|-----------|
| 0.00 | 0.599 | 0.277 | 0.077 | 0.006 | 0.000 | 15        | 13.5      |
| 0.50 | 0.771 | 0.522 | 0.273 | 0.074 | 0.006 | 30        | 27.4      |
| 0.90 | 0.949 | 0.877 | 0.769 | 0.592 | 0.350 | 135       | 138.3     |
| 1.00 | 1.000 | 1.000 | 1.000 | 1.000 | 1.000 | >200      | inf       |"""

LECTURE_SUCCESS = {
    0.0: [0.599, 0.277, 0.077, 0.006, 0.000],
    0.5: [0.771, 0.522, 0.273, 0.074, 0.006],
    0.9: [0.949, 0.877, 0.769, 0.592, 0.350],
    1.0: [1.000, 1.000, 1.000, 1.000, 1.000],
}
LECTURE_NS = (10, 25, 50, 100, 200)

# Absolute agreement required between the two exact methods. Both are sums of at most a few
# hundred positive terms in double precision; 1e-12 leaves a factor ~50 over the worst
# difference observed (about 2e-14).
EXACT_TOL = 1e-12


def cells(line):
    return [c.strip() for c in line.strip().strip("|").split("|")]


def binomial_tail(budget, p, n):
    """P[Bin(budget, p) >= n], summed directly."""
    return sum(math.comb(budget, k) * p**k * (1 - p) ** (budget - k) for k in range(n, budget + 1))


def fundamental_expected_rounds(n, p, q):
    """First row sum of (I - Q)^-1, Q the transient block of the transition matrix."""
    Q = transition_matrix(n, p, q)[:n, :n]
    return np.linalg.solve(np.eye(n) - Q, np.ones(n))[0]


# ---------------------------------------------------------------- lecture figures


@pytest.mark.parametrize("q", sorted(LECTURE_SUCCESS))
def test_reference_table_success_to_three_decimals(q):
    ns = np.array(LECTURE_NS)
    got = success_exact(ns, 0.95, q, 2 * ns)
    assert [f"{v:.3f}" for v in got] == [f"{v:.3f}" for v in LECTURE_SUCCESS[q]]
    assert_allclose(got, LECTURE_SUCCESS[q], atol=5e-4)  # rounding to 3 decimals


def test_reference_table_rows():
    table = reference_table()
    assert [row.q for row in table.rows] == [0.0, 0.5, 0.9, 1.0]
    assert table.ns == LECTURE_NS
    for row in table.rows:
        assert list(row.success) == list(LECTURE_NS)
        assert_allclose(list(row.success.values()), LECTURE_SUCCESS[row.q], atol=5e-4)
    assert [row.collapse_n for row in table.rows] == [15, 30, 135, None]
    assert [round(row.half_life, 1) for row in table.rows] == [13.5, 27.4, 138.3, math.inf]


def test_reference_table_text_matches_lecture_cell_for_cell():
    text = reference_table().to_text()
    got, want = text.splitlines(), LECTURE_TABLE.splitlines()
    assert len(got) == len(want)
    # Header and data rows: every cell, digit for digit. The lecture's rule line has one
    # dash fewer under "collapse n"; the rendering aligns its columns, so rule lines are
    # compared as dashes only.
    for g, w in zip(got[:1] + got[2:], want[:1] + want[2:], strict=True):
        assert cells(g) == cells(w)
    assert all(set(c) == {"-"} for c in cells(got[1]))
    assert len(cells(got[1])) == len(cells(want[1]))
    assert len({len(line) for line in got}) == 1  # columns aligned


def test_reference_table_records_and_markdown():
    table = reference_table()
    records = table.to_records()
    assert list(records[2]) == ["q", *(f"n={n}" for n in LECTURE_NS), "collapse n", "half-life"]
    assert records[2]["collapse n"] == 135
    assert f"{records[2]['n=50']:.3f}" == "0.769"
    assert table._repr_markdown_() == table.to_text()


@pytest.mark.parametrize(("q", "expected"), [(0.0, 15), (0.5, 30), (0.9, 135), (1.0, None)])
def test_collapse_horizons(q, expected):
    assert collapse_horizon(0.95, q) == expected


@pytest.mark.parametrize(
    ("q", "expected"), [(0.0, 13.5), (0.5, 27.4), (0.9, 138.3), (1.0, math.inf)]
)
def test_half_lives(q, expected):
    assert round(grounded_half_life(0.95, q), 1) == expected


def test_half_life_edges_and_meaning():
    assert grounded_half_life(0.0, 0.0) == 0.0  # lambda = 1: corrupted in the first round
    assert grounded_half_life(1.0, 0.3) == math.inf  # lambda = 0
    h = grounded_half_life(0.9, 0.2)
    assert_allclose((1 - 0.1 * 0.8) ** h, 0.5, rtol=1e-12)


def test_min_budget_factor():
    assert round(min_budget_factor(0.95), 3) == 1.053
    assert min_budget_factor(0.0) == math.inf
    # It is the expected rounds per subtask under full verification.
    assert_allclose(expected_rounds(40, 0.95, 1.0) / 40, min_budget_factor(0.95), rtol=1e-12)


# ---------------------------------------------------------------- transition matrix


@pytest.mark.parametrize("n", [0, 1, 2, 7])
@pytest.mark.parametrize(("p", "q"), [(0.95, 0.5), (0.0, 0.0), (1.0, 1.0), (0.3, 1.0)])
def test_transition_matrix_is_row_stochastic(n, p, q):
    P = transition_matrix(n, p, q)
    assert P.shape == (n + 2, n + 2)
    assert (P >= 0).all()
    assert_allclose(P.sum(axis=1), 1.0, rtol=0, atol=1e-15)
    assert P[n, n] == 1.0 and P[n + 1, n + 1] == 1.0  # both absorb


def test_transition_matrix_entries():
    P = transition_matrix(3, 0.8, 0.25)
    for i in range(3):
        assert P[i, i + 1] == pytest.approx(0.8)
        assert P[i, i] == pytest.approx(0.2 * 0.25)
        assert P[i, 4] == pytest.approx(0.2 * 0.75)
    assert np.count_nonzero(P) == 3 * 3 + 2


# ---------------------------------------------------------------- exact vs matrix power


def test_exact_equals_matrix_power_on_reference_figure():
    ns = np.arange(5, 205, 5)
    qs = np.array([0.0, 0.5, 0.9, 1.0])[:, None]
    assert_allclose(
        success_exact(ns, 0.95, qs, 2 * ns),
        success_matrix_power(ns, 0.95, qs, 2 * ns),
        rtol=0,
        atol=EXACT_TOL,
    )
    sweep = np.linspace(0, 1, 21)
    assert_allclose(
        success_exact(50, 0.95, sweep, 100),
        success_matrix_power(50, 0.95, sweep, 100),
        rtol=0,
        atol=EXACT_TOL,
    )


@pytest.mark.parametrize("n", [0, 1, 2, 10, 60])
@pytest.mark.parametrize("p", [0.0, 0.3, 0.9, 1.0])
def test_exact_equals_matrix_power_on_grid(n, p):
    qs = np.array([0.0, 0.2, 0.5, 0.9, 1.0])[:, None]
    budgets = np.array([0, max(n - 1, 0), n, n + 1, 2 * n, 5 * n + 7])
    assert_allclose(
        success_exact(n, p, qs, budgets),
        success_matrix_power(n, p, qs, budgets),
        rtol=0,
        atol=EXACT_TOL,
    )


@given(
    n=st.integers(0, 40),
    extra=st.integers(-5, 120),
    p=st.floats(0, 1),
    q=st.floats(0, 1),
)
def test_exact_equals_matrix_power_property(n, extra, p, q):
    budget = max(n + extra, 0)
    assert abs(success_exact(n, p, q, budget) - success_matrix_power(n, p, q, budget)) <= (
        EXACT_TOL
    )


@pytest.mark.parametrize(
    ("n", "p", "q", "budget"),
    [(3, 0.37, 0.81, 9), (40, 0.62, 1.0, 90), (120, 0.9, 0.95, 300), (250, 0.5, 1.0, 520)],
)
def test_exact_equals_rational_arithmetic(n, p, q, budget):
    # The closed form summed with Fractions from the very same doubles p and q: exact.
    pf, qf = Fraction(p), Fraction(q)
    rf = (1 - pf) * qf
    exact = pf**n * sum(math.comb(n - 1 + k, k) * rf**k for k in range(budget - n + 1))
    assert abs(success_exact(n, p, q, budget) - float(exact)) <= 1e-13


# ---------------------------------------------------------------- limits and edge cases


@pytest.mark.parametrize("p", [0.0, 0.5, 0.95, 1.0])
@pytest.mark.parametrize("n", [0, 1, 13, 200])
def test_q0_gives_p_to_the_n_for_every_budget(p, n):
    budgets = np.array([n, n + 1, 2 * n + 3, 10**6, 10**15])
    assert_allclose(success_exact(n, p, 0.0, budgets), p**n, rtol=1e-14, atol=0)


@pytest.mark.parametrize(("n", "budget"), [(1, 1), (5, 12), (20, 40), (50, 100), (40, 41)])
@pytest.mark.parametrize("p", [0.2, 0.6, 0.95])
def test_q1_gives_binomial_tail(n, budget, p):
    assert_allclose(success_exact(n, p, 1.0, budget), binomial_tail(budget, p, n), rtol=1e-12)


@pytest.mark.parametrize(
    ("n", "p", "q", "budget", "expected"),
    [
        (0, 0.0, 0.0, 0, 1.0),  # nothing to do: already done
        (0, 0.5, 1.0, 10, 1.0),
        (5, 0.95, 0.5, 4, 0.0),  # budget below n
        (5, 1.0, 0.0, 4, 0.0),
        (5, 1.0, 0.3, 5, 1.0),  # p = 1 finishes in exactly n rounds
        (5, 1.0, 1.0, 10**12, 1.0),
        (1, 0.0, 0.5, 100, 0.0),  # p = 0 never advances
        (7, 0.0, 1.0, 10**12, 0.0),
        (1, 0.5, 1.0, 3, 1 - 0.5**3),
    ],
)
def test_edge_cases(n, p, q, budget, expected):
    assert success_exact(n, p, q, budget) == pytest.approx(expected, abs=1e-15)


def test_extreme_parameters_stay_finite_and_in_range():
    # Any NaN, inf or floating-point warning along the way would fail (warnings are errors).
    tiny = 1e-300
    values = [0.0, tiny, 0.5, 1 - 1e-16, 1.0]
    p, q = np.meshgrid(values, values)
    for n, budget in [(1, 1), (3, 10), (200, 10**9), (10**5, 10**18)]:
        s = success_exact(n, p, q, budget)
        assert np.isfinite(s).all()
        assert ((s >= 0) & (s <= 1)).all()


def test_long_points_agree_with_block_sums(monkeypatch):
    # Points beyond longsum._LONG terms are walked one at a time outwards from their mode;
    # force that path on ordinary points and compare with the vectorised block sums.
    args = (
        np.array([300, 1000, 50, 2000, 40]),
        np.array([0.3, 0.2, 0.05, 0.5, 0.9]),
        np.array([1.0, 0.9, 1.0, 1.0, 0.99]),
        np.array([2000, 20000, 5000, 5000, 80]),
    )
    blocks = success_exact(*args)
    monkeypatch.setattr(longsum, "_LONG", 10)
    assert_allclose(success_exact(*args), blocks, rtol=1e-11, atol=1e-300)


def test_long_point_with_huge_n():
    # q = 1: P[Bin(B, 0.01) >= 10^5] at B = 10^7 (mean 10^5) is 1/2 plus a skew correction
    # of order 1/sqrt(variance); at B = 2 * 10^7 (50 sd above) it is 1 to ~1e-9.
    assert 0.5 < success_exact(10**5, 0.01, 1.0, 10**7) < 0.51
    assert success_exact(10**5, 0.01, 1.0, 2 * 10**7) == pytest.approx(1.0, abs=1e-8)


def test_refuses_a_sum_too_long_to_evaluate():
    with pytest.raises(ValueError, match=r"success_exact needs more than \d+ terms at n=2"):
        success_exact(2, 1e-12, 1.0, 10**18)


def test_infinite_budget_limit():
    # As B grows, success tends to sum_k C(n-1+k, k) r^k p^n = (p / (1 - r))^n.
    n, p, q = 50, 0.95, 0.9
    r = (1 - p) * q
    assert_allclose(success_exact(n, p, q, 10**15), (p / (1 - r)) ** n, rtol=1e-12)


def test_huge_n_is_finite_and_right():
    n = 10**5
    # q = 1, p = 1/2, B = 2n: P[Bin(2n, 1/2) >= n] = (1 + P[Bin = n]) / 2 by symmetry.
    central = math.exp(math.lgamma(2 * n + 1) - 2 * math.lgamma(n + 1) - 2 * n * math.log(2))
    assert_allclose(success_exact(n, 0.5, 1.0, 2 * n), (1 + central) / 2, rtol=1e-9)
    # q = 0: p^n, here about exp(-0.1).
    assert_allclose(
        success_exact(n, 1 - 1e-6, 0.0, 2 * n), math.exp(n * math.log1p(-1e-6)), rtol=1e-9
    )
    s = success_exact(n, 0.95, [0.0, 0.5, 0.9, 0.99, 1.0], 2 * n)
    assert np.isfinite(s).all() and s[-1] == pytest.approx(1.0)


def test_broadcasting_and_scalar_output():
    assert isinstance(success_exact(10, 0.9, 0.5, 20), float)
    out = success_exact(np.array([5, 10, 20])[:, None], 0.9, [0.0, 0.5, 1.0, 0.2], 30)
    assert out.shape == (3, 4)
    assert out[1, 2] == pytest.approx(success_exact(10, 0.9, 1.0, 30))
    # Points of very different lengths in one call agree with one-at-a-time calls.
    ns = np.array([1, 3000, 7, 500, 50])
    qs = np.array([0.9, 0.99, 1.0, 0.5, 0.7])
    each = [success_exact(n, 0.97, q, 3 * n) for n, q in zip(ns, qs, strict=True)]
    assert_allclose(success_exact(ns, 0.97, qs, 3 * ns), each, rtol=1e-14)


# ---------------------------------------------------------------- properties

probs = st.floats(0, 1)


@given(n=st.integers(0, 60), budget=st.integers(0, 200), p=probs, q1=probs, q2=probs)
def test_success_non_decreasing_in_q(n, budget, p, q1, q2):
    lo, hi = sorted((q1, q2))
    # Tolerance for rounding only: both values are computed to ~1e-14.
    assert success_exact(n, p, lo, budget) <= success_exact(n, p, hi, budget) + 1e-12


@given(n=st.integers(0, 60), budget=st.integers(0, 200), p1=probs, p2=probs, q=probs)
def test_success_non_decreasing_in_p(n, budget, p1, p2, q):
    lo, hi = sorted((p1, p2))
    assert success_exact(n, lo, q, budget) <= success_exact(n, hi, q, budget) + 1e-12


@given(n=st.integers(0, 60), b1=st.integers(0, 200), b2=st.integers(0, 200), p=probs, q=probs)
def test_success_non_decreasing_in_budget(n, b1, b2, p, q):
    lo, hi = sorted((b1, b2))
    assert success_exact(n, p, q, lo) <= success_exact(n, p, q, hi) + 1e-12


@given(n1=st.integers(0, 60), n2=st.integers(0, 60), budget=st.integers(0, 200), p=probs, q=probs)
def test_success_non_increasing_in_n(n1, n2, budget, p, q):
    lo, hi = sorted((n1, n2))
    assert success_exact(hi, p, q, budget) <= success_exact(lo, p, q, budget) + 1e-12


# Budgets of every kind: small ints, NumPy scalars, and counts far beyond int64.
any_budget = st.one_of(
    st.integers(0, 200),
    st.integers(0, 200).map(np.int64),
    st.integers(0, 200).map(np.float64),
    st.integers(2**53, 2**80),
    st.floats(1e15, 1e300).map(math.floor),
    st.floats(1e15, 1e300).map(lambda x: np.float64(math.floor(x))),
)


@given(n=st.integers(0, 60), b1=any_budget, b2=any_budget, p=probs, q=probs)
def test_success_non_decreasing_in_any_budget_up_to_its_limit(n, b1, b2, p, q):
    lo, hi = sorted((b1, b2), key=float)
    try:
        low, high = success_exact(n, p, q, lo), success_exact(n, p, q, hi)
    except ValueError as error:
        # Only a point that almost never advances while nearly every error is caught needs
        # more terms than the engine sums (see test_refuses_a_sum_too_long_to_evaluate).
        assert "needs more than" in str(error) and p < 1e-5 and q > 1 - 1e-5
        return
    assert 0.0 <= low <= high + 1e-12
    if p > 0:
        assert high <= unlimited(n, p, q) * (1 + 1e-12) + 1e-300


@given(n=st.integers(0, 60).map(np.int64), budget=any_budget, p=probs, q=probs)
def test_numpy_and_huge_arguments_give_plain_floats(n, budget, p, q):
    try:
        value = success_exact(n, np.float64(p), q, budget)
    except ValueError as error:
        assert "needs more than" in str(error)
        return
    assert type(value) is float and 0.0 <= value <= 1.0
    assert type(expected_rounds(budget, p, q)) is float
    assert grounded_survival(budget, p, q) <= 1.0


# ---------------------------------------------------------------- survival and rounds


def test_grounded_survival_matches_the_chain():
    # With more subtasks than rounds the run cannot finish, so P(not in C after t rounds)
    # is exactly g_t; read it off the t-th power of the transition matrix.
    p, q = 0.8, 0.3
    for t in (0, 1, 5, 17):
        P = transition_matrix(t + 1, p, q)
        corrupted = np.linalg.matrix_power(P, t)[0, -1]
        assert_allclose(grounded_survival(t, p, q), 1 - corrupted, rtol=1e-13)
    assert grounded_survival([0, 1, 2], 0.5, 0.0).tolist() == [1.0, 0.5, 0.25]
    assert grounded_survival(0, 0.0, 0.0) == 1.0


EPS = np.finfo(float).eps


def assert_survival_exact_to_a_few_ulp(t, p, q):
    """grounded_survival(t, p, q) against (1 - (1-p)(1-q))^t in exact rational arithmetic.

    p + q(1-p) adds two terms >= 0 (three roundings of eps/2) and the power's rounding
    adds one more, so (2t + 1) eps relative; results in the subnormal range (t >= 2 of a
    tiny p and q) are rounded to a multiple of 2**-1074, hence the absolute term.
    """
    exact = (1 - (1 - Fraction(p)) * (1 - Fraction(q))) ** t
    got = grounded_survival(t, p, q)
    assert abs(Fraction(got) - exact) <= (2 * t + 1) * Fraction(EPS) * exact + Fraction(2.0**-1074)


@pytest.mark.parametrize("t", [1, 2, 3])
@pytest.mark.parametrize(
    ("p", "q"),
    [
        (0.0, 1e-15),
        (1e-15, 0.0),
        (1e-15, 1e-15),
        (0.0, 5e-324),
        (1e-300, 3e-301),
        (2e-8, 7e-9),
        (0.001, 0.0),
        (0.1, 0.2),
    ],
)
def test_grounded_survival_of_small_p_and_q_has_no_cancellation(t, p, q):
    # 1 - (1-p)(1-q) used to cancel: grounded_survival(1, 0.0, 1e-15) gave 9.99e-16.
    assert_survival_exact_to_a_few_ulp(t, p, q)


@given(
    t=st.integers(0, 6),
    p=st.one_of(st.just(0.0), st.floats(0, 1e-3)),
    q=st.one_of(st.just(0.0), st.floats(0, 1e-3)),
)
def test_grounded_survival_is_accurate_to_a_few_ulp_for_small_p_and_q(t, p, q):
    assert_survival_exact_to_a_few_ulp(t, p, q)


@pytest.mark.parametrize(("p", "q", "t"), [(1 - 2**-20, 0.999, 10**9), (0.999999, 0.5, 10**6)])
def test_grounded_survival_over_many_rounds_keeps_the_escape_rates_digits(p, q, t):
    # Rounding 1 - lambda to a double costs up to eps/2 of it, t eps/2 of g_t after t rounds
    # (1e-10 and 1e-7 here); exp(t log1p(-lambda)) keeps lambda's digits: about |log g_t| eps.
    context = decimal.Context(prec=40)
    lam = (1 - decimal.Decimal(p)) * (1 - decimal.Decimal(q))
    exact = context.exp(context.multiply(t, context.ln(1 - lam)))
    got = grounded_survival(t, p, q)
    assert abs(decimal.Decimal(got) / exact - 1) <= 10 * EPS


@pytest.mark.parametrize("n", [1, 2, 10, 60])
@pytest.mark.parametrize(
    ("p", "q"), [(0.95, 0.0), (0.95, 0.5), (0.95, 0.9), (0.95, 1.0), (0.3, 0.7), (0.0, 0.4)]
)
def test_expected_rounds_closed_form_matches_fundamental_matrix(n, p, q):
    assert_allclose(expected_rounds(n, p, q), fundamental_expected_rounds(n, p, q), rtol=1e-12)


def test_expected_rounds_edges():
    assert expected_rounds(0, 0.5, 0.5) == 0.0
    assert expected_rounds(3, 0.0, 1.0) == math.inf  # never moves, never absorbs
    assert expected_rounds(3, 0.0, 0.0) == 1.0  # corrupted in the first round
    assert_allclose(expected_rounds(10, 0.95, 1.0), 10 / 0.95, rtol=1e-14)
    # Tiny escape rate: no cancellation, close to the q = 1 value.
    assert_allclose(expected_rounds(10, 0.5, 1 - 1e-12), 20.0, rtol=1e-9)
    assert expected_rounds([1, 2], 0.5, [[0.0], [1.0]]).shape == (2, 2)


# ---------------------------------------------------------------- Monte Carlo


def wilson(successes, trials, z=1.959963984540054):
    """Textbook Wilson score interval (Wilson 1927)."""
    phat = successes / trials
    denom = 1 + z**2 / trials
    centre = (phat + z**2 / (2 * trials)) / denom
    half = z / denom * math.sqrt(phat * (1 - phat) / trials + z**2 / (4 * trials**2))
    return centre - half, centre + half


def test_monte_carlo_inside_its_interval_for_a_fixed_seed():
    mc = success_monte_carlo(25, 0.95, 0.5, 50, trials=20_000, seed=7)
    assert mc.low <= success_exact(25, 0.95, 0.5, 50) <= mc.high
    assert mc.trials == 20_000 and mc.estimate == mc.successes / 20_000


def test_monte_carlo_interval_is_wilson():
    mc = success_monte_carlo(10, 0.9, 0.5, 15, trials=300, seed=3)
    low, high = wilson(mc.successes, 300)
    assert_allclose([mc.low, mc.high], [low, high], rtol=1e-12)
    one = success_monte_carlo(2, 1.0, 0.5, 2, trials=50, seed=0)
    assert (one.estimate, one.high) == (1.0, 1.0) and one.low < 1.0


def test_monte_carlo_interval_covers_about_95_percent():
    # 200 fixed seeds, 200 runs each, n = 10, p = 0.9, q = 0.5, B = 15 (success 0.5823).
    # Summing binomial probabilities over the 201 possible outcomes, the Wilson interval at
    # 200 runs covers 0.5823 with probability c = 0.9556, so the count of covering seeds is
    # Bin(200, c): mean 191.1, sd 2.9. P(count < 180) = 2.6e-4 and P(count = 200) = 1.1e-4,
    # so [180, 199] holds for all but about 4 in 10,000 seed sets, while an interval of the
    # wrong width (coverage 0.90 or 0.99) fails with good probability. The seeds are fixed,
    # so the outcome is deterministic and cannot flake.
    exact = success_exact(10, 0.9, 0.5, 15)
    covered = 0
    for seed in range(200):
        mc = success_monte_carlo(10, 0.9, 0.5, 15, trials=200, seed=seed)
        covered += mc.low <= exact <= mc.high
    assert 180 <= covered <= 199


def test_monte_carlo_q_sweep_at_n50_agrees_with_exact():
    # Lecture: 20,000 runs per point over a q sweep at n = 50 agree within 0.0035. That is
    # the largest standard error of the sweep, sqrt(s (1 - s) / 20,000) at s near 1/2; each
    # point is checked against 4 of its own standard errors (a correct simulation passes a
    # point with probability 0.99994, all 21 with 0.9987), and the squared z-scores of the
    # 20 non-degenerate points must sum to at most 45.3 (the 0.999 quantile of chi-squared
    # with 20 degrees of freedom), which catches a bias far smaller than one standard error
    # per point. Fixed seed: deterministic.
    qs = np.linspace(0, 1, 21)
    exact = success_exact(50, 0.95, qs, 100)
    mc = success_monte_carlo(50, 0.95, qs, 100, trials=20_000, seed=0)
    se = np.sqrt(exact * (1 - exact) / 20_000)
    assert round(se.max(), 4) == 0.0035
    assert np.all(np.abs(mc.estimate - exact) <= 4 * se + 1e-12)
    live = se > 1e-6  # q = 1 gives success 1 - 1e-40: no spread
    z = (mc.estimate[live] - exact[live]) / se[live]
    assert live.sum() == 20 and (z**2).sum() <= 45.3
    assert np.all((mc.low <= mc.estimate) & (mc.estimate <= mc.high))


def test_monte_carlo_reproducible():
    a = success_monte_carlo(30, 0.9, 0.7, 60, trials=5000, seed=123)
    assert a == success_monte_carlo(30, 0.9, 0.7, 60, trials=5000, seed=123)
    g1, g2 = np.random.default_rng(9), np.random.default_rng(9)
    b = success_monte_carlo(30, 0.9, 0.7, 60, trials=5000, seed=g1)
    assert b == success_monte_carlo(30, 0.9, 0.7, 60, trials=5000, seed=g2)
    # A Generator is advanced, so the next call draws new numbers.
    assert success_monte_carlo(30, 0.9, 0.7, 60, trials=5000, seed=g1) != b


@pytest.mark.parametrize(("n", "budget", "trials"), [(1, 10, 100), (3, 3, 40), (4, 50, 7)])
def test_monte_carlo_draws_one_uniform_per_live_round(n, budget, trials):
    # With p = 1 every run advances every round and finishes after exactly n rounds, so the
    # simulation must consume exactly n * trials uniforms: one per run per round it is alive.
    rng = np.random.default_rng(11)
    mc = success_monte_carlo(n, 1.0, 0.5, budget, trials=trials, seed=rng)
    assert mc.estimate == 1.0
    reference = np.random.default_rng(11)
    reference.random(n * trials)
    assert rng.random() == reference.random()


@pytest.mark.parametrize(
    ("n", "p", "q", "budget", "expected"),
    [
        (0, 0.3, 0.5, 0, 1.0),
        (5, 0.95, 0.5, 4, 0.0),
        (3, 0.0, 1.0, 10**15, 0.0),  # never moves: retired at once, no endless loop
        (3, 1.0, 0.0, 3, 1.0),
        (3, 0.5, 0.0, 2, 0.0),
    ],
)
def test_monte_carlo_edge_cases(n, p, q, budget, expected):
    assert success_monte_carlo(n, p, q, budget, trials=500, seed=1).estimate == expected


def test_monte_carlo_broadcasts():
    mc = success_monte_carlo([[10], [20]], 0.9, [0.0, 0.5, 1.0], [[20], [40]], 4000, seed=5)
    assert mc.estimate.shape == mc.low.shape == mc.high.shape == mc.successes.shape == (2, 3)
    exact = success_exact([[10], [20]], 0.9, [0.0, 0.5, 1.0], [[20], [40]])
    se = np.sqrt(exact * (1 - exact) / 4000)
    assert np.all(np.abs(mc.estimate - exact) <= 4 * se + 1e-3)  # 4 sd, and q = 1 is near 1


# ---------------------------------------------------------------- bad input

BAD_CHAIN_ARGS = [
    (dict(p=1.2), r"p must be in \[0, 1\], got 1.2"),
    (dict(p=float("nan")), r"p must be in \[0, 1\], got nan"),
    (dict(q=-0.1), r"q must be in \[0, 1\], got -0.1"),
    (dict(q=[0.5, 2.0]), r"q must be in \[0, 1\], got 2.0"),
    (dict(p="high"), r"p must be a number or an array of numbers, got 'high'"),
    (dict(n=-1), r"n must be an integer >= 0, got -1"),
    (dict(n=2.5), r"n must be an integer >= 0, got 2.5"),
    (dict(n=True), r"n must be a number, got True"),
    (dict(budget=-3), r"budget must be an integer >= 0, got -3"),
    (dict(budget=1.5), r"budget must be an integer >= 0, got 1.5"),
    (dict(n=[1, 2, 3], q=[0.1, 0.2]), r"cannot be broadcast together: n \(3,\).*q \(2,\)"),
]


@pytest.mark.parametrize(("bad", "message"), BAD_CHAIN_ARGS)
@pytest.mark.parametrize("func", [success_exact, success_matrix_power, success_monte_carlo])
def test_chain_functions_reject_bad_input(func, bad, message):
    args = dict(n=5, p=0.9, q=0.5, budget=10) | bad
    with pytest.raises(ValueError, match=message):
        func(**args)


def test_matrix_power_refuses_huge_n():
    with pytest.raises(
        ValueError,
        match=r"n must be an integer <= 2000 for the matrix method \(use success_exact\), got 2001",
    ):
        success_matrix_power(2001, 0.9, 0.5, 4000)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (dict(trials=0), r"trials must be an integer >= 1, got 0"),
        (dict(trials=2.5), r"trials must be an integer >= 1, got 2.5"),
        (dict(trials=[10, 20]), r"trials must be a single number, got an array of shape \(2,\)"),
        (dict(seed=-1), r"seed must be None, an integer >= 0 or a numpy.random.Generator, got -1"),
        (dict(seed="abc"), r"seed must be None, .* got 'abc'"),
        (dict(seed=1.5), r"seed must be None, .* got 1.5"),
    ],
)
def test_monte_carlo_rejects_bad_trials_and_seed(kwargs, message):
    with pytest.raises(ValueError, match=message):
        success_monte_carlo(5, 0.9, 0.5, 10, **kwargs)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: transition_matrix(-1, 0.5, 0.5), r"n must be an integer >= 0, got -1"),
        (lambda: transition_matrix([1, 2], 0.5, 0.5), r"n must be a single number"),
        (lambda: transition_matrix(3, 2.0, 0.5), r"p must be in \[0, 1\], got 2.0"),
        (lambda: transition_matrix(3, 0.5, [0.1, 0.2]), r"q must be a single number"),
        (lambda: grounded_survival(-1, 0.9, 0.5), r"t must be an integer >= 0, got -1"),
        (lambda: grounded_survival(3, 0.9, 1.5), r"q must be in \[0, 1\], got 1.5"),
        (lambda: grounded_survival([1, 2, 3], [0.1, 0.2], 0.5), r"cannot be broadcast"),
        (lambda: grounded_half_life(-0.5, 0.5), r"p must be in \[0, 1\], got -0.5"),
        (lambda: grounded_half_life(0.5, float("nan")), r"q must be in \[0, 1\], got nan"),
        (lambda: expected_rounds(1.5, 0.9, 0.5), r"n must be an integer >= 0, got 1.5"),
        (lambda: expected_rounds(3, 0.9, 7), r"q must be in \[0, 1\], got 7"),
        (lambda: min_budget_factor(1.01), r"p must be in \[0, 1\], got 1.01"),
    ],
)
def test_other_functions_reject_bad_input(call, message):
    with pytest.raises(ValueError, match=message):
        call()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (dict(p=1.5), r"p must be in \[0, 1\], got 1.5"),
        (dict(q=[0.5, 0.9]), r"q must be a single number"),
        (dict(budget_factor=-1.0), r"budget_factor must be a finite number >= 0, got -1.0"),
        (dict(budget_factor=float("inf")), r"budget_factor must be a finite .* got inf"),
        (dict(budget_factor="2"), r"budget_factor must be a finite number >= 0, got '2'"),
        (dict(threshold=1.5), r"threshold must be in \[0, 1\], got 1.5"),
        (dict(grid=[]), r"grid must hold at least one horizon, got an empty grid"),
        (dict(grid=[5, -5]), r"grid must be an integer >= 0, got -5"),
        (dict(grid=[5, 7.5]), r"grid must be an integer >= 0, got 7.5"),
        (dict(grid=[[5, 10]]), r"grid must be a flat sequence of horizons"),
        (dict(grid=None), r"^grid must be an iterable of horizons .*, got None$"),
    ],
)
def test_collapse_horizon_rejects_bad_input(kwargs, message):
    args = dict(p=0.95, q=0.5) | kwargs
    with pytest.raises(ValueError, match=message):
        collapse_horizon(**args)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (dict(qs=(0.5, 1.2)), r"q must be in \[0, 1\], got 1.2"),
        (dict(ns=(10, -1)), r"n must be an integer >= 0, got -1"),
        (dict(p=-0.1), r"p must be in \[0, 1\], got -0.1"),
        (dict(budget_factor=-2), r"budget_factor must be a finite number >= 0, got -2"),
        # grid=None was a bare TypeError; an empty grid was accepted when qs was empty.
        (dict(grid=None), r"^grid must be an iterable of horizons .*, got None$"),
        (dict(grid=5), r"^grid must be an iterable of horizons .*, got 5$"),
        (dict(grid="5"), r"^grid must be an iterable of horizons .*, got '5'$"),
        (dict(grid=[], qs=()), r"grid must hold at least one horizon, got an empty grid"),
        (dict(grid=[5, -5], qs=()), r"grid must be an integer >= 0, got -5"),
    ],
)
def test_reference_table_rejects_bad_input(kwargs, message):
    with pytest.raises(ValueError, match=message):
        reference_table(**kwargs)


# ---------------------------------------------------------------- huge counts and size limits
# A count given as a float >= 2**63 used to wrap to -2**63 in the count check: success 0.0
# at a budget of 1e19 (the limit is 0.58236), expected rounds -inf, the matrix power looping
# for ever, and collapse_horizon naming an argument the caller never passed.

HUGE = [1e19, 2.0**63, 2**63, 10**30, 1e300, np.float64(1e19), np.uint64(2**64 - 1)]


def unlimited(n, p, q):
    """Success with no budget limit: (p / (1 - r))^n."""
    return (p / (p + (1 - p) * (1 - q))) ** n


@pytest.mark.parametrize("budget", HUGE)
def test_huge_budget_gives_the_unlimited_limit(budget):
    assert success_exact(10, 0.9, 0.5, budget) == pytest.approx(0.5823566532299396, rel=1e-14)
    ns = np.array([1, 2, 50, 10**4])
    assert_allclose(success_exact(ns, 0.95, 0.9, budget), unlimited(ns, 0.95, 0.9), rtol=1e-12)
    assert success_exact(10, 0.9, 0.5, [20, budget])[1] == success_exact(10, 0.9, 0.5, budget)


def test_a_huge_budget_can_still_matter():
    # n = 1, p = 1e-19, every error caught: 1 - (1 - p)^B, about 1 - e^-1 at B = 1e19.
    assert_allclose(success_exact(1, 1e-19, 1.0, [1e19, 2e19]), -np.expm1([-1.0, -2.0]), rtol=1e-12)


def test_a_huge_budget_too_long_to_sum_is_refused():
    with pytest.raises(ValueError, match=r"success_exact needs more than \d+ terms at n=2"):
        success_exact(2, 1e-12, 1.0, 1e19)


@pytest.mark.parametrize("n", HUGE)
def test_huge_counts_in_survival_and_expected_rounds(n):
    assert grounded_survival(n, 0.9, 0.5) == 0.0
    assert grounded_survival(n, 1.0, 0.5) == 1.0
    assert_allclose(expected_rounds(n, 0.9, 0.5), 1 / 0.05, rtol=1e-14)  # 1 / lambda
    assert_allclose(expected_rounds(n, 0.5, 1.0), float(n) / 0.5, rtol=1e-15)  # n / p


def test_expected_rounds_of_nothing_is_zero():
    # log s is -inf here, and 0 * -inf used to give NaN.
    assert expected_rounds(0, 1e-20, 0.0) == 0.0
    assert expected_rounds([0, 0], [1e-300, 0.0], 0.0).tolist() == [0.0, 0.0]
    assert expected_rounds(1, 1e-20, 0.0) == pytest.approx(1.0)


def test_matrix_power_takes_int64_budgets_and_refuses_larger_ones():
    assert_allclose(
        success_matrix_power(3, 0.9, 0.5, 2**63 - 1), success_exact(3, 0.9, 0.5, 2**63 - 1)
    )
    for budget in (1e19, 2**63, 2.0**63):
        with pytest.raises(ValueError, match=r"budget must be an integer <= 2\*\*63 - 1 for the"):
            success_matrix_power(3, 0.9, 0.5, budget)


def test_transition_matrix_has_a_size_limit():
    assert transition_matrix(2000, 0.9, 0.5).shape == (2002, 2002)
    with pytest.raises(ValueError, match=r"n must be an integer <= 2000 \(the dense matrix"):
        transition_matrix(10**6, 0.9, 0.5)
    with pytest.raises(ValueError, match=r"n must be an integer <= 2000"):
        transition_matrix(1e19, 0.9, 0.5)


def test_collapse_horizon_with_an_unlimited_budget():
    limit = unlimited(np.arange(5, 205, 5), 0.9, 0.5)
    expected = int(np.arange(5, 205, 5)[np.argmax(limit < 0.5)])
    assert collapse_horizon(0.9, 0.5, budget_factor=1e300) == expected == 15
    assert reference_table(budget_factor=1e300).rows[1].collapse_n == 30
    with pytest.raises(ValueError, match=r"budget_factor \* n must stay within the float range.*"
                       r"budget_factor=1e\+307 and n up to 200"):  # fmt: skip
        collapse_horizon(0.9, 0.5, budget_factor=1e307)


def test_monte_carlo_with_a_huge_budget():
    mc = success_monte_carlo(10, 0.9, 0.5, 1e19, trials=4000, seed=2)
    assert mc.low <= unlimited(10, 0.9, 0.5) <= mc.high


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (dict(trials=10**12), r"trials must be an integer <= 10000000 \(simulated runs per"),
        (dict(trials=10**6, q=np.linspace(0, 1, 21)), r"trials must be an integer <= 476190 for "
         r"21 points \(10,000,000 simulated runs per call at most\), got 1000000"),
        (dict(p=1e-9, q=1.0, budget=1e19), r"runs at n=3, p=1e-09, q=1.0, budget=1e\+19 live "
         r"about 3e\+09 rounds on average, more than the 1,000,000"),
    ],
)  # fmt: skip
def test_monte_carlo_refuses_work_it_cannot_do(kwargs, message):
    args = dict(n=3, p=0.5, q=0.5, budget=6) | kwargs
    with pytest.raises(ValueError, match=message):
        success_monte_carlo(**args)


def test_monte_carlo_takes_long_runs_that_corrupt_early():
    # n = 10**6 would need 10**6 rounds to finish, but at q = 0.5 a run is corrupted after
    # about 1/lambda = 40 rounds: the mean life (expected_rounds) is what counts.
    mc = success_monte_carlo(10**6, 0.95, 0.5, 3 * 10**6, trials=20, seed=0)
    assert mc.estimate == 0.0


# ---------------------------------------------------------------- accuracy of long sums


def decimal_success(n, p, q, budget, digits=45):
    """The series summed term by term in 45-digit decimal arithmetic, from the same doubles."""
    context = decimal.Context(prec=digits)
    p, q = decimal.Decimal(p), decimal.Decimal(q)
    r = context.multiply(context.subtract(1, p), q)
    term = context.power(p, n)
    total = term
    for k in range(budget - n):
        term = context.divide(context.multiply(context.multiply(term, r), n + k), k + 1)
        total = context.add(total, term)
    return float(total)


@pytest.mark.parametrize(
    ("n", "p", "q", "budget"),
    # Past the mode, before it (the budget cuts the sum), and long enough for the lgamma
    # anchor the engine used to take (its error grew with n: 5e-9 at the last point).
    [(3000, 0.5, 0.9, 6000), (5000, 0.3, 1.0, 17000), (20000, 0.9, 0.99, 24000),
     (200000, 0.95, 0.99, 220000)],
)  # fmt: skip
def test_long_sums_agree_with_decimal_arithmetic(n, p, q, budget):
    assert_allclose(success_exact(n, p, q, budget), decimal_success(n, p, q, budget), rtol=2e-13)


def test_the_longest_sums_are_accurate():
    # 45-digit reference: the series summed in Python's decimal module from the same doubles
    # (decimal_success above, about 3 s here): 0.904837422607773015147604865616...
    assert success_exact(10**6, 0.5, 1 - 1e-7, 3 * 10**6) == pytest.approx(
        0.904837422607773015, rel=1e-13
    )


# ---------------------------------------------------------------- collapse horizon details


def test_collapse_horizon_options():
    # Without audit the budget is irrelevant (success p^n): 0.95^14 = 0.488 < 0.5 <= 0.95^13.
    assert collapse_horizon(0.95, 0.0, grid=range(1, 40)) == 14
    assert collapse_horizon(0.95, 0.0, grid=[40, 10, 20]) == 20  # unsorted grid
    assert collapse_horizon(0.95, 0.9, threshold=0.0) is None  # nothing is below 0
    # Full verification with a budget factor below 1/p collapses; above it, it does not.
    assert collapse_horizon(0.95, 1.0, budget_factor=1.0) == 15
    assert collapse_horizon(0.95, 1.0, budget_factor=1.2) is None
    assert collapse_horizon(0.95, 0.5, grid=np.arange(5, 205, 5)) == 30


# ---------------------------------------------------------------- the benchmark script


def test_bench_quick_mode_runs():
    root = Path(__file__).resolve().parents[1]
    result = subprocess.run(
        [sys.executable, str(root / "bench" / "bench_markov.py"), "--quick"],
        capture_output=True,
        text=True,
        timeout=120,
        env={"PYTHONPATH": str(root / "src"), "PATH": ""},
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.count("ratio") == 3
    assert "max |difference|" in result.stdout


def test_all_is_exported():
    for name in markov.__all__:
        assert hasattr(markov, name)


# ---------------------------------------------------------------- size limits, generated

too_many = st.one_of(st.integers(2001, 2**70), st.floats(2001, 1e300).map(math.floor))


@given(n=too_many)
def test_matrix_methods_refuse_every_n_beyond_their_limit(n):
    with pytest.raises(ValueError, match=r"n must be an integer <= 2000"):
        transition_matrix(n, 0.9, 0.5)
    with pytest.raises(ValueError, match=r"n must be an integer <= 2000 for the matrix method"):
        success_matrix_power(n, 0.9, 0.5, 10)


@given(points=st.integers(1, 50), trials=st.integers(1, 2**40))
def test_monte_carlo_refuses_exactly_the_calls_beyond_its_run_limit(points, trials):
    assume(trials * points > montecarlo.MAX_RUNS)  # within it, a run would only cost time
    qs = np.linspace(0.0, 1.0, points)
    with pytest.raises(ValueError, match=r"trials must be an integer <= \d+"):
        success_monte_carlo(3, 0.5, qs, 6, trials=trials)


@given(
    trials=st.one_of(st.integers(1, 300), st.integers(1, 300).map(np.int64)),
    points=st.integers(1, 4),
)
def test_monte_carlo_within_its_limits_counts_every_run(trials, points):
    mc = success_monte_carlo(5, 0.9, np.linspace(0.2, 0.8, points), 12, trials=trials, seed=0)
    assert mc.trials == int(trials) and np.all(mc.successes <= trials)
