"""CSV injection: a student id, name or flag that a spreadsheet would run as a formula.

Every CSV the kit writes (``exports/`` for Canvas, Moodle and a spreadsheet, the class report's
``items.csv`` and ``students.csv``, the grader's ``integrity.csv``) is opened by an instructor
in a spreadsheet. A cell that begins with ``=``, ``+``, ``-``, ``@``, a tab or a carriage
return is a formula there; every text cell a student can influence must reach the file as
text, and the numbers the kit writes must stay numbers.
"""

from __future__ import annotations

import csv
import re

import pytest

from decompkit.course import export, lmscsv, report
from decompkit.course.integrity import Flag, integrity_files

from .classroom import CHAIN, chain_record, write_record

#: Student ids that a spreadsheet reads as a formula (each a valid file name on Linux).
HOSTILE = ["=1+2", "+cmd", "-2+3", "@sum(1)", "\tx", "\r=1", " =1+1", "\uff1d1+2"]
#: A cell the kit wrote as a number (a plain decimal), which must stay one.
_NUMBER = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")
_FORMULA = tuple("=+-@\t\r\n\uff1d\uff0b\uff0d\uff20")


def _cells(path) -> list[list[str]]:
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.reader(handle))


def _no_formula(rows) -> None:
    for row in rows:
        for cell in row:
            if _NUMBER.match(cell):
                continue
            assert not cell.lstrip().startswith(_FORMULA), f"formula cell {cell!r} in {row}"
            assert not cell.startswith(_FORMULA), f"formula cell {cell!r} in {row}"


@pytest.fixture
def hostile_class(tmp_path):
    for student in [*HOSTILE, "s01"]:
        record = chain_record(
            student, {}, flags=('=HYPERLINK("http://evil.example","x")', "@evil", "-x")
        )
        record["source_names"] = [f"=2+3_4711_99120_{CHAIN}.ipynb"]
        item = record["notebooks"][CHAIN]["items"]["p_prime_value"]
        item.update(label="", names=["@evil"], mistake="-mistake", status="off")
        if student == "s01":
            record["notebooks"][CHAIN]["score"] = -1.0  # a number the kit writes
        write_record(tmp_path, record)
    roster = tmp_path / "roster.csv"
    with open(roster, "w", newline="", encoding="utf-8") as handle:
        out = csv.writer(handle)
        out.writerow(["id", "first_name", "last_name", "email", "section", "username"])
        out.writerow(["s01", "=cmd|' /C calc'!A0", "@Lovelace", "+ada@uni.example", "-A", "s01"])
        for student in HOSTILE:  # Moodle's username: the id itself, as a roster may have it
            out.writerow([student, "", "", "", "", student])
    return tmp_path, roster


def _export(root, fmt, roster):
    try:
        return export.write(root, "decomp", fmt, roster=roster)
    except lmscsv.UnmatchedError as error:  # Moodle leaves out those the roster cannot name
        assert set(error.students) == {"\tx", "\r=1", " =1+1"}  # a roster's cells are stripped
        return error.path


@pytest.mark.parametrize("fmt", export.FORMATS)
def test_exports_write_student_text_as_text(hostile_class, fmt):
    root, roster = hostile_class
    rows = _cells(_export(root, fmt, roster))
    _no_formula(rows)
    column = {"canvas": 3, "moodle": 0, "csv": 0}[fmt]  # the kit's id (Moodle: the username)
    ids = {row[column] for row in rows[1:]}
    assert {"'=1+2", "'+cmd", "'-2+3", "'@sum(1)", "'\uff1d1+2"} <= ids
    assert {"'\tx", "'\r=1", "' =1+1"} <= ids or fmt == "moodle"
    s01 = next(row for row in rows if row[column] == "s01")
    assert "-1" in s01  # s01's score stays a negative number, not text
    assert "'=cmd|' /C calc'!A0" in s01 or fmt == "canvas"
    if fmt == "canvas":
        assert s01[0] == "'@Lovelace, =cmd|' /C calc'!A0" and s01[4] == "'-A"


def test_the_canvas_and_moodle_columns_are_unchanged_for_plain_text(hostile_class):
    # Neutralising touches no cell that needs it not: headers, the Points Possible row,
    # ordinary ids and names reach Canvas and Moodle as they were.
    root, roster = hostile_class
    header, points, *rows = _cells(export.write(root, "decomp", "canvas"))
    assert header[:5] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
    assert points[:5] == ["Points Possible", "", "", "", ""]
    assert ["s01", "", "", "s01", ""] in [row[:5] for row in rows]
    header, *rows = _cells(_export(root, "moodle", roster))
    assert header == ["Username", "First name", "Last name", "decomp total"]
    assert ["s01", "'=cmd|' /C calc'!A0", "'@Lovelace", "-1"] in rows


def test_the_class_reports_csv_files_write_student_text_as_text(hostile_class):
    root, _ = hostile_class
    folder = report.write(root, "decomp")
    items, students = _cells(folder / "items.csv"), _cells(folder / "students.csv")
    _no_formula(items)
    _no_formula(students)
    by_id = {row[0]: row for row in students[1:]}
    assert "'=1+2" in by_id and "'@sum(1)" in by_id
    assert by_id["s01"][2] == "-1"  # the score stays a number
    titles = {row[1]: row for row in items[1:]}
    assert "'@evil" in titles and titles["'@evil"][7].startswith("'-mistake x")


def _flags(student: str) -> dict:
    found = Flag(CHAIN, 3, "=grade_id", 2, "hook", "@register", "flag", "-reason")
    return {student: {CHAIN: [found]}}


def test_integrity_csv_writes_student_text_as_text_and_reads_it_back(tmp_path):
    flags = {**_flags("=1+2"), **_flags("s01")}
    integrity_files(tmp_path, "decomp", {"=1+2": [], "s01": []}, flags)
    rows = _cells(tmp_path / "integrity.csv")
    _no_formula(rows)
    assert [
        "'=1+2",
        CHAIN,
        "3",
        "'=grade_id",
        "2",
        "hook",
        "'@register",
        "flag",
        "'-reason",
    ] in rows
    first = (tmp_path / "integrity.csv").read_bytes()
    integrity_files(tmp_path, "decomp", {"s02": []}, {})  # another run keeps earlier findings
    assert (tmp_path / "integrity.csv").read_bytes() == first  # unchanged, not quoted twice
    assert "== =1+2" in (tmp_path / "integrity.txt").read_text()
    integrity_files(tmp_path, "decomp", {"=1+2": []}, {})  # =1+2 graded again: nothing found
    assert [row[0] for row in _cells(tmp_path / "integrity.csv")[1:]] == ["s01"]
