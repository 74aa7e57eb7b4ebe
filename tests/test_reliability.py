"""decompkit.reliability against the lecture's figures, its limits, properties and bad input."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from numpy.testing import assert_allclose

from decompkit import reliability as rel

prob = st.floats(0.0, 1.0, allow_nan=False)


# --- the lecture's figures (sections 1-2), to the digits the lecture prints -----------------


def test_chain_of_ten_at_ninety_percent():
    assert round(rel.chain_success(0.9, 10), 4) == 0.3487


def test_monolithic_prompt_rates_and_their_factor():
    low, high = rel.chain_success(0.8, 10), rel.chain_success(0.9, 10)
    assert (round(low, 4), round(high, 4)) == (0.1074, 0.3487)
    assert round(high / low, 2) == 3.25
    # p_eff inverts the chain: the task-level rate gives back the step rate.
    assert_allclose(rel.step_rate(high, 10), 0.9, rtol=1e-12)
    assert_allclose(rel.step_rate(low, 10), 0.8, rtol=1e-12)


def test_half_life_at_095():
    assert round(rel.half_life(0.95), 1) == 13.5
    assert round(rel.chain_success(0.95, 50), 4) == 0.0769
    # The approximation 0.693 / (1 - p) is within 3 % at p = 0.95.
    assert abs(rel.half_life(0.95) - math.log(2) / 0.05) / rel.half_life(0.95) < 0.03


def test_retry_until_pass_costs():
    assert round(rel.expected_attempts(0.9, 1.0), 2) == 1.11
    assert rel.expected_attempts(0.5, 1.0) == 2.0
    # 11 % more calls lift a 10-step chain from 0.35 to 1.
    assert round(rel.chain_success(0.9, 10), 2) == 0.35
    assert_allclose(rel.chain_success(rel.checked_step_limit(0.9, 1.0), 10), 1.0, rtol=1e-12)


def test_check_per_step_vs_per_graph():
    result = rel.per_step_vs_per_graph(0.9, 10, 1.0)
    assert (round(result.per_step, 3), round(result.per_graph, 3)) == (0.904, 0.576)


def test_one_retry_formula_by_hand():
    # p = 0.9, d = 0.5: 0.9 + 0.1 * 0.5 * 0.9 = 0.945
    assert_allclose(rel.checked_step(0.9, 0.5), 0.945, rtol=1e-15)
    # with false positives: 0.9 + 0.9 * 0.1 * (0.8 - 0.1) = 0.963
    assert_allclose(rel.checked_step_fallible(0.9, 0.8, 0.1), 0.963, rtol=1e-15)
    assert_allclose(rel.discrimination_accuracy(0.9, 0.1), 0.81, rtol=1e-15)
    assert_allclose(rel.undetected_floor(0.9, 0.8), 0.02, rtol=1e-12)
    assert_allclose(rel.perfect_check_attempts(0.9, 3), 0.999, rtol=1e-12)


# --- limits ------------------------------------------------------------------------------------


@pytest.mark.parametrize("p", [0.0, 0.3, 0.9, 1.0])
def test_detection_limits(p):
    assert_allclose(rel.checked_step(p, 0.0), p)
    assert_allclose(rel.checked_step_limit(p, 0.0), p)
    assert_allclose(rel.checked_step_fallible(p, 0.4, 0.4), p)
    assert_allclose(rel.checked_step(p, 1.0), rel.perfect_check_attempts(p, 2))


@pytest.mark.parametrize("p", [0.01, 0.5, 0.9, 1.0])
def test_perfect_check_retried_forever_always_succeeds(p):
    assert_allclose(rel.checked_step_limit(p, 1.0), 1.0, rtol=1e-12)


def test_hopeless_step_never_passes():
    assert rel.checked_step_limit(0.0, 1.0) == 0.0
    assert rel.expected_attempts(0.0, 1.0) == math.inf


def test_empty_chain_and_edges():
    assert rel.chain_success(0.0, 0) == 1.0
    assert rel.chain_success(0.0, 3) == 0.0
    assert rel.chain_success(1.0, 10**9) == 1.0
    assert rel.perfect_check_attempts(0.9, 0) == 0.0
    assert rel.half_life(1.0) == math.inf
    assert rel.half_life(0.0) == 0.0


def test_long_chains_are_accurate():
    # exp(10**7 * log(0.9999999)) = exp(-1.00000005...), well inside float range.
    expected = math.exp(10**7 * math.log1p(-1e-7))
    assert_allclose(rel.chain_success(0.9999999, 10**7), expected, rtol=1e-9)
    small = rel.chain_success(0.999, 10**5)  # about 3.5e-44: small, positive, exact
    assert_allclose(small, math.exp(10**5 * math.log1p(-0.001)), rtol=1e-9)
    assert small > 0
    # 0.999 ** 10**7 is about 1e-4345, below the smallest double: the rounded answer is 0.
    assert rel.chain_success(0.999, 10**7) == 0.0


# --- types and broadcasting ----------------------------------------------------------------------


def test_scalar_in_float_out():
    for value in (
        rel.chain_success(0.9, 10),
        rel.checked_step(0.9, 0.5),
        rel.half_life(0.9),
        rel.expected_attempts(np.float32(0.9), 1),
    ):
        assert type(value) is float
    assert type(rel.check_helps(0.5, 0.1)) is bool


def test_broadcasting_matches_elementwise():
    p = np.array([[0.5], [0.9]])
    d = np.array([0.0, 0.5, 1.0])
    grid = rel.checked_step(p, d)
    assert grid.shape == (2, 3)
    for i in range(2):
        for j in range(3):
            assert_allclose(grid[i, j], rel.checked_step(p[i, 0], d[j]))
    assert rel.chain_success(0.9, [1, 2, 3]).shape == (3,)


def test_shapes_that_cannot_broadcast_are_named():
    with pytest.raises(ValueError, match=r"p \(2,\), d \(3,\)"):
        rel.checked_step([0.5, 0.6], [0.1, 0.2, 0.3])


# --- properties --------------------------------------------------------------------------------


@given(p=prob, d1=prob, d2=prob)
def test_monotone_in_d(p, d1, d2):
    lo, hi = sorted((d1, d2))
    assert rel.checked_step(p, lo) <= rel.checked_step(p, hi) + 1e-15
    assert rel.checked_step_limit(p, lo) <= rel.checked_step_limit(p, hi) + 1e-12


@given(p1=prob, p2=prob, d=prob)
def test_monotone_in_p(p1, p2, d):
    lo, hi = sorted((p1, p2))
    assert rel.checked_step(lo, d) <= rel.checked_step(hi, d) + 1e-15
    assert rel.checked_step_limit(lo, d) <= rel.checked_step_limit(hi, d) + 1e-12


@given(p=prob, d=prob)
def test_ordering_of_the_check_rates(p, d):
    one_retry = rel.checked_step(p, d)
    forever = rel.checked_step_limit(p, d)
    assert p <= one_retry + 1e-15
    assert one_retry <= forever + 1e-12
    assert forever <= 1.0 + 1e-12
    # the undetected floor bounds every number of retries
    assert forever <= 1.0 - rel.undetected_floor(p, d) + 1e-12


def test_a_perfect_check_lifts_even_a_tiny_rate_to_exactly_one():
    """Found by the property above: with d = 1 the loop ends only on a right attempt, so
    p / (1 - (1 - p)) is 1; computed as 1 - (1 - p) it came out 1 + 4.6e-12 at p = 1e-5."""
    for p in (1e-5, 1e-9, 3e-17, 0.3):
        assert rel.checked_step_limit(p, 1.0) == 1.0
        assert rel.expected_attempts(p, 1.0) == pytest.approx(1 / p, rel=1e-15)


@given(p=st.floats(1e-6, 1.0), d=prob)
def test_limit_equals_p_times_expected_attempts(p, d):
    assert_allclose(rel.checked_step_limit(p, d), p * rel.expected_attempts(p, d), rtol=1e-12)


@given(p=st.floats(0.001, 0.999), d=prob, phi=prob)
def test_check_helps_iff_d_exceeds_phi(p, d, phi):
    gain = rel.checked_step_fallible(p, d, phi) - p
    # The exact gain is p(1-p)(d - phi); in floating point a gain far below the last digit of
    # p rounds to 0, so strictness is asserted only where the gain is representable.
    representable = p * (1 - p) * abs(d - phi) > 1e-12
    if rel.check_helps(d, phi):
        assert gain > 0 if representable else gain >= 0
    else:
        assert gain < 0 if representable else gain <= 0


@given(p=prob, d=prob, phi=prob)
def test_fallible_check_matches_its_long_form(p, d, phi):
    long_form = p * ((1 - phi) + phi * p) + (1 - p) * d * p
    assert_allclose(rel.checked_step_fallible(p, d, phi), long_form, atol=1e-15)


@given(p=prob, k=st.integers(0, 50))
def test_more_attempts_never_hurt(p, k):
    assert rel.perfect_check_attempts(p, k) <= rel.perfect_check_attempts(p, k + 1) + 1e-15


@given(p=prob, n=st.integers(0, 200), d=prob)
def test_per_step_check_beats_one_graph_check(p, n, d):
    result = rel.per_step_vs_per_graph(p, n, d)
    assert result.per_graph <= result.per_step + 1e-12
    assert rel.chain_success(p, n) <= result.per_graph + 1e-15


# --- bad input -----------------------------------------------------------------------------------

FUNCTIONS_OF_P = [
    lambda p: rel.chain_success(p, 3),
    rel.half_life,
    lambda p: rel.checked_step(p, 0.5),
    lambda p: rel.checked_step_limit(p, 0.5),
    lambda p: rel.expected_attempts(p, 0.5),
    lambda p: rel.perfect_check_attempts(p, 2),
    lambda p: rel.checked_step_fallible(p, 0.5, 0.1),
    lambda p: rel.per_step_vs_per_graph(p, 3, 0.5),
]


@pytest.mark.parametrize("func", FUNCTIONS_OF_P)
@pytest.mark.parametrize(
    ("bad", "shown"), [(1.2, r"1\.2"), (-0.1, r"-0\.1"), (float("nan"), "nan"), ("x", "'x'")]
)
def test_bad_probability_is_named(func, bad, shown):
    with pytest.raises(ValueError, match=rf"^p must be .*got {shown}"):
        func(bad)


def test_bad_probability_inside_an_array_is_shown():
    with pytest.raises(ValueError, match=r"d must be in \[0, 1\], got 1\.5"):
        rel.checked_step(0.9, [0.2, 1.5, 0.3])


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: rel.checked_step(0.9, 2), r"d must be in \[0, 1\], got 2"),
        (lambda: rel.checked_step_fallible(0.9, 0.5, -1), r"phi must be in \[0, 1\], got -1"),
        (lambda: rel.check_helps(0.5, float("inf")), r"phi must be in \[0, 1\], got inf"),
        (lambda: rel.discrimination_accuracy(True, 0.1), r"d must be a number, got True"),
        (lambda: rel.step_rate(1.5, 3), r"success must be in \[0, 1\], got 1\.5"),
        (lambda: rel.undetected_floor(0.5, None), r"d must be .*got None"),
    ],
)
def test_bad_rates_are_named(call, message):
    with pytest.raises(ValueError, match=message):
        call()


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: rel.chain_success(0.9, -1), r"n must be an integer >= 0, got -1"),
        (lambda: rel.chain_success(0.9, 2.5), r"n must be an integer >= 0, got 2\.5"),
        (lambda: rel.chain_success(0.9, [3, 2.5]), r"n must be an integer >= 0, got 2\.5"),
        (lambda: rel.chain_success(0.9, float("nan")), r"n must be an integer >= 0, got nan"),
        (lambda: rel.step_rate(0.5, 0), r"n must be an integer >= 1, got 0"),
        (lambda: rel.perfect_check_attempts(0.5, -2), r"k must be an integer >= 0, got -2"),
        (lambda: rel.per_step_vs_per_graph(0.5, 1.5, 1), r"n must be an integer >= 0, got 1\.5"),
        (lambda: rel.chain_success(0.9, float("inf")), r"n must be an integer >= 0, got inf"),
        (lambda: rel.chain_success(0.9, 10**400), r"n holds a number beyond the float range"),
        (lambda: rel.chain_success(0.9, np.bool_(True)), r"n must be a number, got"),
        (lambda: rel.chain_success(0.9, "3"), r"n must be a number or an array of numbers"),
    ],
)
def test_bad_counts_are_named(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_integral_floats_are_accepted_as_counts():
    assert rel.chain_success(0.5, 2.0) == 0.25


# --- counts beyond int64 ----------------------------------------------------------------------
# A count given as a float >= 2**63 (or a Python int that large) used to wrap around to -2**63
# in the count check, so p**n became inf and 1 - (1-p)**k became -inf.

HUGE = [1e19, 2.0**63, 2**63, 10**30, 1e300]


@pytest.mark.parametrize("n", HUGE)
def test_huge_counts_give_the_limits(n):
    assert rel.chain_success(0.9, n) == 0.0
    assert rel.chain_success(1.0, n) == 1.0
    assert rel.chain_success(0.0, n) == 0.0
    assert rel.perfect_check_attempts(0.9, n) == 1.0
    assert rel.perfect_check_attempts(0.0, n) == 0.0
    assert rel.step_rate(0.5, n) == 1.0  # exp(-0.69 / n) is within 1e-19 of 1
    assert rel.step_rate(0.0, n) == 0.0
    result = rel.per_step_vs_per_graph(0.9, n, 0.5)
    assert (result.per_step, result.per_graph) == (0.0, 0.0)


def test_huge_count_in_an_array():
    assert rel.chain_success(0.9, [1, 1e19]).tolist() == [0.9, 0.0]
    assert rel.chain_success(0.9, np.array([2, 2**63], dtype=np.uint64)).tolist() == [
        pytest.approx(0.81),
        0.0,
    ]


counts = st.one_of(
    st.integers(0, 2**70),
    st.floats(0, 1e300).map(math.floor),
    st.floats(0, 1e300).map(lambda x: float(math.floor(x))),
    st.integers(0, 2**63 - 1).map(np.int64),
    st.integers(0, 2**64 - 1).map(np.uint64),
    st.integers(0, 2**31 - 1).map(np.int32),
    st.floats(0, 1e30).map(lambda x: np.float64(math.floor(x))),
)


@given(p=prob, n=counts)
def test_chain_success_of_any_count_matches_exact_powers(p, n):
    got = rel.chain_success(p, n)
    assert 0.0 <= got <= 1.0
    # p**n through logarithms, in Python floats: the same limit, never inf or NaN.
    if p == 0.0:
        assert got == (1.0 if n == 0 else 0.0)
    else:
        assert_allclose(got, math.exp(float(n) * math.log(p)), rtol=1e-9, atol=1e-300)
    assert_allclose(rel.perfect_check_attempts(p, n), 1.0 - rel.chain_success(1.0 - p, n))


@given(p=prob, n1=counts, n2=counts)
def test_longer_chains_never_succeed_more_often(p, n1, n2):
    lo, hi = sorted((n1, n2))
    assert rel.chain_success(p, hi) <= rel.chain_success(p, lo)
    assert rel.perfect_check_attempts(p, lo) <= rel.perfect_check_attempts(p, hi)


@given(
    p=st.one_of(prob, prob.map(np.float64), prob.map(np.float32)),
    n=st.one_of(st.integers(0, 100), st.integers(0, 100).map(np.int64)),
)
def test_numpy_scalars_are_plain_numbers(p, n):
    assert type(rel.chain_success(p, n)) is float
    assert_allclose(rel.chain_success(p, n), float(p) ** int(n), rtol=1e-6)
