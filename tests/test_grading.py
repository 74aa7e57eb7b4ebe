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
    # close(..., rtol=None) was a bare TypeError about NoneType and float.
    with pytest.raises(ValueError, match=rf"^{name} must be a finite number >= 0, got {shown}$"):
        func(0.5, 0.5, **{name: bad})


@pytest.mark.parametrize("func", [close, close_array])
def test_tolerances_of_any_real_type_are_taken(func):
    assert func(0.5004, 0.5, rtol=Fraction(1, 1000), atol=0) is True
    assert func(0.5006, 0.5, rtol=np.float32(1e-3), atol=np.int64(0)) is False
