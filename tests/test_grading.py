"""decompkit.grading: the hidden tests' comparisons never raise on an answer, and refuse a
malformed tolerance (the instructor's own argument) with a ValueError naming it.

The grading pipeline on whole notebooks is tested in tests/grading/.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from decompkit.grading import close, close_array

# (answer, whether close(answer, 0.5) holds): every kind a student may store.
ANSWERS = [
    (0.5, True),
    (Fraction(1, 2), True),
    (np.float32(0.5), True),
    (np.array(0.5), True),
    (0.6, False),
    (None, False),
    ("0.5", False),
    (True, False),
    (np.bool_(False), False),
    ([0.5], False),
    (np.array([0.5]), False),
    ({}, False),
    (object(), False),
    (math.nan, False),
    (math.inf, False),
    (10**400, False),
]


@pytest.mark.parametrize(("answer", "holds"), ANSWERS, ids=lambda x: type(x).__name__)
def test_close_judges_every_answer_and_never_raises(answer, holds):
    assert close(answer, 0.5) is holds


@pytest.mark.parametrize(("answer", "_"), ANSWERS, ids=lambda x: type(x).__name__)
def test_close_array_judges_every_answer_and_never_raises(answer, _):
    holds = type(answer) in (list, np.ndarray) and np.shape(answer) == (1,)  # [0.5] in both
    assert close_array(answer, [0.5]) is holds


@pytest.mark.parametrize("func", [close, close_array])
@pytest.mark.parametrize("name", ["rtol", "atol"])
@pytest.mark.parametrize(
    ("bad", "shown"),
    [
        (None, "None"),
        ("0.1", "'0.1'"),
        (-0.1, "-0.1"),
        (math.nan, "nan"),
        (np.float64(math.inf), r"np.float64\(inf\)"),
        (True, "True"),
        ([0.1], r"\[0\.1\]"),
    ],
)
def test_a_malformed_tolerance_is_the_instructors_error_and_named(func, name, bad, shown):
    # close(..., rtol=None) was a bare TypeError about NoneType and float; None is now the
    # four-digit rule (test below), so only atol refuses it.
    if name == "rtol" and bad is None:
        return
    with pytest.raises(ValueError, match=rf"^{name} must be a finite number >= 0, got {shown}$"):
        func(0.5, 0.5, **{name: bad})


@pytest.mark.parametrize("func", [close, close_array])
def test_tolerances_of_any_real_type_are_taken(func):
    assert func(0.5004, 0.5, rtol=Fraction(1, 1000), atol=0) is True
    assert func(0.5006, 0.5, rtol=np.float32(1e-3), atol=np.int64(0)) is False


@pytest.mark.parametrize("func", [close, lambda a, e, **kw: close_array([a], [e], **kw)])
def test_by_default_four_significant_digits_rounded_or_cut_pass(func):
    exact = 0.348678
    assert func(0.3487, exact) and func(0.3486, exact) and func(exact, exact, rtol=None)
    assert not func(0.3485, exact) and not func(0.349, exact) and not func(0.35, exact)
    assert func(1234.0, 1234.4) and not func(1232.0, 1234.4)  # the band scales with the value
    assert func(0.0, 0.0) and not func(1e-6, 0.0)  # 0 has no digits: atol only
    assert func(68, 68, rtol=0) and not func(68.001, 68, rtol=0)  # times and counts: exact
