"""decompkit.validate: the count and probability checks every compute module relies on."""

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from decompkit.validate import (
    INT64_MAX,
    count,
    finite,
    finite_result,
    large_count,
    probability,
    random_generator,
    whole,
)

# --- count: exact int64, never wrapped ----------------------------------------------------------


@pytest.mark.parametrize(
    "value", [0, 7, 7.0, np.int8(7), np.uint64(7), np.float32(7), Fraction(14, 2), 2**63 - 1]
)
def test_count_accepts_whole_numbers_of_every_type(value):
    got = count("n", value)
    assert got.dtype == np.int64 and got.ndim == 0 and got == value


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (1e19, r"1e\+19"),
        (2.0**63, r"9\.223372036854776e\+18"),
        (2**63, "9223372036854775808"),
        (10**30, "1" + "0" * 30),
        (np.uint64(2**64 - 1), r"np.uint64\(18446744073709551615\)"),
        (np.float64(1e300), r"np.float64\(1e\+300\)"),
        ([3, 2**63], r"9\.223372036854776e\+18"),
        ([3, 10**30], "1" + "0" * 30),
    ],
)
def test_count_refuses_what_int64_cannot_hold(value, shown):
    # These used to come back as -2**63 (a float cast to int64 wraps around).
    with pytest.raises(ValueError, match=rf"^n must be an integer <= 2\*\*63 - 1, got {shown}$"):
        count("n", value)


def test_count_maximum_and_reason():
    assert count("trials", 10, maximum=10) == 10
    with pytest.raises(ValueError, match=r"^trials must be an integer <= 10 \(memory\), got 11$"):
        count("trials", 11, maximum=10, why=" (memory)")
    with pytest.raises(ValueError, match=r"^trials must be an integer <= 10, got 12\.0$"):
        count("trials", [1, 12.0], maximum=10)
    with pytest.raises(ValueError, match=r"^trials must be an integer >= 1, got 0$"):
        count("trials", 0, minimum=1, maximum=10)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (-1, r"n must be an integer >= 0, got -1"),
        (2.5, r"n must be an integer >= 0, got 2\.5"),
        (float("nan"), r"n must be an integer >= 0, got nan"),
        (float("inf"), r"n must be an integer >= 0, got inf"),
        ([1, -(2**70)], r"n must be an integer >= 0, got -1180591620717411303424"),
        (True, r"n must be a number, got True"),
        (np.array([True, False]), r"n must be a number or an array of numbers"),
        ("3", r"n must be a number or an array of numbers, got '3'"),
        (None, r"n must be a number or an array of numbers, got None"),
        (1j, r"n must be a number or an array of numbers, got 1j"),
        ([[1, 2], [3]], r"n must be a number or an array of numbers"),
    ],
)
def test_count_refuses_what_is_not_a_count(value, message):
    with pytest.raises(ValueError, match=message):
        count("n", value)


@given(st.integers(0, 2**80))
def test_count_of_an_int_is_exact_or_refused(k):
    if k <= INT64_MAX:
        assert int(count("n", k)) == k
        assert int(count("n", [k])[0]) == k
    else:
        with pytest.raises(ValueError, match=r"must be an integer <= 2\*\*63 - 1"):
            count("n", k)


@given(st.floats(0, 1e300))
def test_count_of_a_whole_float_is_exact_or_refused(x):
    x = float(math.floor(x))
    if x < 2.0**63:
        assert int(count("n", x)) == int(x)
        assert int(count("n", np.float64(x))) == int(x)
    else:
        with pytest.raises(ValueError, match=r"must be an integer <= 2\*\*63 - 1"):
            count("n", x)
        with pytest.raises(ValueError, match=r"must be an integer <= 2\*\*63 - 1"):
            count("n", np.array([1.0, x]))


@given(st.integers(-(2**64), 2**64), st.integers(-(2**10), 2**10), st.integers(0, 2**63 - 1))
def test_count_range_is_exact_at_both_ends(k, minimum, maximum):
    inside = minimum <= k <= maximum
    try:
        got = count("n", k, minimum=minimum, maximum=maximum)
    except ValueError:
        assert not inside
    else:
        assert inside and int(got) == k


# --- large_count: any size a float holds ---------------------------------------------------------


@pytest.mark.parametrize(
    "value", [1e19, 2**63, 10**30, 1e300, np.float64(1e300), np.uint64(2**64 - 1)]
)
def test_large_count_keeps_huge_counts(value):
    got = large_count("n", value)
    assert got.dtype == np.float64 and got == float(value)


@given(st.one_of(st.integers(0, 2**1000), st.floats(0, 1e308).map(math.floor)))
def test_large_count_is_the_nearest_double(k):
    assert large_count("n", k) == float(k)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (10**400, r"n holds a number beyond the float range \(about 1\.8e308\), got 1000"),
        ([1, 10**400], r"n holds a number beyond the float range"),
        (float("inf"), r"n must be an integer >= 0, got inf"),
        (-1e19, r"n must be an integer >= 0, got -1e\+19"),
        (0.5, r"n must be an integer >= 0, got 0\.5"),
        (False, r"n must be a number, got False"),
    ],
)
def test_large_count_refuses_what_is_not_a_count(value, message):
    with pytest.raises(ValueError, match=message):
        large_count("n", value)


# --- probability and seeds -----------------------------------------------------------------------


def test_probability_shows_the_offending_value():
    assert probability("p", np.float32(0.5)) == 0.5
    with pytest.raises(ValueError, match=r"^p must be in \[0, 1\], got 1\.5$"):
        probability("p", [0.2, 1.5])
    with pytest.raises(
        ValueError, match=r"^p must be a number or an array of numbers, got '0\.5'$"
    ):
        probability("p", "0.5")
    with pytest.raises(ValueError, match=r"^p must be in \[0, 1\], got 10{30}$"):
        probability("p", 10**30)


@pytest.mark.parametrize("seed", [-1, 1.5, "abc", True, np.bool_(False)])
def test_random_generator_refuses_bad_seeds(seed):
    with pytest.raises(ValueError, match=r"seed must be None, an integer >= 0"):
        random_generator(seed)


def test_random_generator_passes_a_generator_through():
    g = np.random.default_rng(0)
    assert random_generator(g) is g
    assert random_generator(np.int64(3)).random() == np.random.default_rng(3).random()


# --- finite_result: the one overflow check of a float formula ----------------------------------


def test_finite_result_passes_finite_values_through():
    assert finite_result("f", np.asarray(2.5), x=np.asarray(1.0)) == 2.5
    values = finite_result("f", np.array([1.0, 2.0]), x=np.array([3.0, 4.0]))
    assert isinstance(values, np.ndarray) and values.tolist() == [1.0, 2.0]


@pytest.mark.parametrize("bad", [math.inf, -math.inf, math.nan])
def test_finite_result_names_the_arguments_at_the_first_overflow(bad):
    value = np.array([[1.0, bad], [bad, 2.0]])
    x, y = np.array([[1.0, 2.0], [3.0, 4.0]]), np.array([[0.5, 1e300], [7.0, 8.0]])
    with pytest.raises(
        ValueError, match=r"^f is beyond the float range \(about 1\.8e308\) at x=2, y=1e\+300$"
    ):
        finite_result("f", value, x=x, y=y)


# --- finite and whole: one scalar each, as a plain Python number --------------------------------


@pytest.mark.parametrize(
    ("value", "kept"),
    [
        (3, 3),
        (10**400, 10**400),
        (np.int64(-4), -4),
        (np.float32(0.5), 0.5),
        (Fraction(1, 4), 0.25),
    ],
)
def test_finite_keeps_a_finite_number_as_a_plain_one(value, kept):
    got = finite("time", value)
    assert got == kept and type(got) is type(kept)


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (math.nan, "nan"),
        (-math.inf, "-inf"),
        (np.float64(math.inf), r"np.float64\(inf\)"),
        (Fraction(10**400), "Fraction"),
        (True, "True"),
        ("1", "'1'"),
        (None, "None"),
        ([1.0], r"\[1\.0\]"),
    ],
)
def test_finite_refuses_what_is_not_a_finite_number(value, shown):
    with pytest.raises(ValueError, match=rf"^time must be a finite number, got {shown}"):
        finite("time", value)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (-1, r"seq must be an integer >= 0, got -1"),
        (2**63, r"seq must be an integer <= 2\*\*63"),
        (math.nan, "seq must be an integer >= 0, got nan"),
        ("3", "seq must be an integer >= 0, got '3'"),
        ([3], r"seq must be an integer >= 0, got \[3\]"),
        (True, "seq must be a number, got True"),
    ],
)
def test_whole_refuses_what_is_not_one_count(value, message):
    with pytest.raises(ValueError, match=message):
        whole("seq", value, minimum=0)
    assert whole("seq", np.uint8(7), minimum=0) == 7 and type(whole("seq", 7.0, minimum=0)) is int
