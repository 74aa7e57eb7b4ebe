"""The LMS files column by column (decompkit.course.lmscsv), on rows made by hand.

test_export.py checks the files written from a real gradebook; these check the pieces: which
grade columns there are, which Moodle user field is chosen, and what an unmatched student is
told.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from decompkit.course import lmscsv

NOTEBOOKS = ["nb1", "nb2"]
MAXIMA = {"nb1": 2.0, "nb2": 1.0}


def _row(student, scores=None, **people):
    return SimpleNamespace(student=student, scores=scores or {}, people=people, submitted_at="")


@pytest.mark.parametrize(
    "parts, headers, expected",
    [((), {}, []),
     (("total",), {}, [("decomp total", 3.0)]),
     (("total",), {"decomp": "Decomposition (4711)"}, [("Decomposition (4711)", 3.0)]),
     (("notebooks",), {"nb1": "One (1)"}, [("One (1)", 2.0), ("nb2", 1.0)]),
     (lmscsv.COLUMNS, {}, [("nb1", 2.0), ("nb2", 1.0), ("decomp total", 3.0)])],
)  # fmt: skip
def test_grade_columns(parts, headers, expected):
    found = lmscsv.grade_columns("decomp", NOTEBOOKS, MAXIMA, headers, parts)
    assert [(g.header, g.points) for g in found] == expected


def test_the_total_adds_what_was_graded_and_is_empty_for_nothing():
    (total,) = lmscsv.grade_columns("decomp", NOTEBOOKS, MAXIMA, {}, ("total",))
    assert total.score(_row("s1", {"nb1": 1.5, "nb2": None})) == 1.5
    assert total.score(_row("s2", {"nb1": None})) is None  # nothing to import, not 0


@pytest.mark.parametrize(
    "rows, match, expected",
    [([], None, None),
     ([_row("s1")], None, None),  # nothing known: nobody can be matched
     ([_row("s1", username="a", email="a@x")], None, "username"),  # a tie: username first
     ([_row("s1", email="a@x"), _row("s2", id_number="7", email="b@x")], None, "email"),
     ([_row("s1", username="a")], "idnumber", "idnumber")],  # asked for: as asked
)  # fmt: skip
def test_moodle_field(rows, match, expected):
    assert lmscsv.moodle_field(rows, match) == expected


def test_moodle_table_has_the_field_then_names_then_grades():
    grades = lmscsv.grade_columns("decomp", NOTEBOOKS, MAXIMA, {}, ("total",))
    rows = [_row("s1", {"nb1": 2.0, "nb2": 1.0}, id_number="7", first_name="Ada")]
    header, body = lmscsv.table("moodle", rows, grades, field="idnumber")
    assert header == ["ID number", "First name", "Last name", "decomp total"]
    assert body == [["7", "Ada", "", "3"]]


@pytest.mark.parametrize(
    "field, path, roster, expected",
    [(None, None, None, ["none of them for ['s1', 's2']", "nothing written", "--roster FILE"]),
     (None, None, "r.csv", ["roster 'r.csv'", "'Username', 'ID number' or 'Email address'"]),
     ("email", "out.csv", None, ["2 student(s) left out of out.csv", "'Email address'"]),
     ("username", None, "r.csv", ["left out, nothing written", "'Username' column", "'r.csv'"])],
)  # fmt: skip
def test_an_unmatched_student_is_told_what_to_add(field, path, roster, expected):
    error = lmscsv.UnmatchedError(["s1", "s2"], field, path, roster=roster)
    assert isinstance(error, ValueError) and error.students == ["s1", "s2"]
    assert (error.field, error.path) == (field, path)
    for part in expected:
        assert part in str(error)
    assert "\n" not in str(error)  # one line on the terminal
