"""Grades for an LMS: the Canvas and Moodle import columns, the plain CSV, rosters, errors.

The class is a real nbgrader gradebook (made through nbgrader's API, no notebook runs):
three students, two notebooks, one manual grade and one late penalty.

The columns are checked against the LMS's own documentation (URLs in the module docstring of
decompkit.course.export): Canvas, "How do I import grades in the Gradebook?" - ``Student``,
``ID``, ``SIS User ID``, ``SIS Login ID``, ``Section``, then one column per assignment; Moodle,
"Grade import" - one column mapped to a user field (username, ID number or email address), the
others mapped to grade items, and a row whose user is not found stops the whole import.
"""

from __future__ import annotations

import csv
import importlib.util
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import warnings
from datetime import datetime
from pathlib import Path

import pytest

from decompkit.course import export, lmscsv
from decompkit.course.__main__ import main as course_main

from .classroom import chain_record, write_record
from .submissions import ROOT

CHAIN, HORIZON = "01-chain-reliability", "02-long-horizons"
CELLS = {CHAIN: ["chain_success_value", "p_prime_value"], HORIZON: ["success_value"]}
#: student -> {grade cell: automatic score}
AUTO = {
    "s01": {"chain_success_value": 1, "p_prime_value": 1, "success_value": 1},
    "s02": {"chain_success_value": 0, "p_prime_value": 1, "success_value": 0},
    "s_03": {"chain_success_value": 0, "p_prime_value": 0, "success_value": 1},
}
#: student -> the assignment's points: automatic, plus s02's manual grade, minus s_03's penalty
TOTALS = {"s01": 3.0, "s02": 2.0, "s_03": 0.5}
#: The columns Canvas's import requires before the assignment columns, in its order.
CANVAS_IDS = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
#: Moodle's user fields a grade import can match a row by, as headed in Moodle's own export.
MOODLE_IDS = {"Username", "ID number", "Email address"}


@pytest.fixture(scope="module")
def gradebook(tmp_path_factory):
    from nbgrader.api import Gradebook
    from sqlalchemy.exc import SAWarning

    database = tmp_path_factory.mktemp("gradebook") / "gradebook.db"
    # nbgrader runs its `alembic` tool by name to create a gradebook
    path = os.environ["PATH"]
    os.environ["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{path}"
    try:
        with Gradebook(f"sqlite:///{database}") as gb, warnings.catch_warnings():
            warnings.simplefilter("ignore", SAWarning)  # nbgrader's own autoflush notice
            _fill(gb)
    finally:
        os.environ["PATH"] = path
    return database


def _fill(gb) -> None:
    gb.update_or_create_assignment("decomp")
    for notebook, cells in CELLS.items():
        gb.add_notebook(notebook, "decomp")
        for cell in cells:
            gb.add_grade_cell(cell, notebook, "decomp", max_score=1.0, cell_type="code")
    gb.add_student("s01", first_name="Ada", last_name="Lovelace")
    gb.add_student("s02")
    gb.add_student("s_03", lms_user_id="9003")
    gb.add_student("s04")  # enrolled, never submitted
    for student, scores in AUTO.items():
        gb.add_submission("decomp", student, timestamp=datetime(2026, 11, 30, 9, 15))
        for cell, score in scores.items():
            notebook = next(nb for nb, cells in CELLS.items() if cell in cells)
            gb.find_grade(cell, notebook, "decomp", student).auto_score = score
    gb.find_grade("chain_success_value", CHAIN, "decomp", "s02").manual_score = 1.0
    gb.find_submission_notebook(HORIZON, "decomp", "s_03").late_submission_penalty = 0.5
    gb.db.commit()


@pytest.fixture
def course(tmp_path, gradebook):
    shutil.copy2(gradebook, tmp_path / "gradebook.db")
    # the LMS's time of s01's submission, as the collector recorded it
    write_record(tmp_path, chain_record("s01", {}, submitted_at="2026-11-29T23:58:10+00:00"))
    return tmp_path


def _read(path):
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.reader(handle))


def _points(cells) -> float:
    return sum(float(cell) for cell in cells if cell)


def test_canvas_csv_by_default_has_the_documented_columns_and_counts_each_point_once(course):
    path = export.write(course, "decomp", "canvas")
    assert path == course / "exports" / "decomp-canvas.csv"
    header, points, *rows = _read(path)
    assert header[:5] == CANVAS_IDS
    assert header[5:] == ["decomp total"]  # one assignment column: the total, alone
    assert points == ["Points Possible", "", "", "", "", "3"]
    by_login = {row[3]: row for row in rows}
    assert sorted(by_login) == ["s01", "s02", "s_03"]  # s04 submitted nothing
    assert by_login["s01"][:2] == ["Lovelace, Ada", ""]
    assert by_login["s_03"][1] == "9003"
    # what Canvas adds up from the file: every student's points once, out of 3 points once
    assert {who: _points(row[5:]) for who, row in by_login.items()} == TOTALS
    assert _points(points[5:]) == 3


def test_canvas_csv_with_the_notebooks_instead_of_the_total(course):
    header, points, *rows = _read(export.write(
        course, "decomp", "canvas", columns="notebooks",
        headers={CHAIN: "Chain reliability (4711)"}))  # fmt: skip
    assert header == [*CANVAS_IDS, "Chain reliability (4711)", HORIZON]  # no total
    assert points == ["Points Possible", "", "", "", "", "2", "1"]
    by_login = {row[3]: row for row in rows}
    assert by_login["s02"][5:] == ["2", "0"]  # the manual grade counts
    assert by_login["s_03"][5:] == ["0", "0.5"]  # the late penalty too
    assert {who: _points(row[5:]) for who, row in by_login.items()} == TOTALS


def test_canvas_total_can_update_an_existing_assignment(course):
    # Canvas updates the assignment a header "Name (assignment id)" names
    header, *_ = _read(export.write(course, "decomp", "canvas",
                                    headers={"decomp": "Decomposition (4711)"}))  # fmt: skip
    assert header == [*CANVAS_IDS, "Decomposition (4711)"]


def test_canvas_ids_from_a_canvas_gradebook_export(course, tmp_path_factory):
    roster = tmp_path_factory.mktemp("lms") / "canvas-export.csv"
    roster.write_text(
        "Student,ID,SIS User ID,SIS Login ID,Section\n"
        "    Points Possible,,,,\n"
        '"Lovelace, Ada",101,U-1,s01,Lecture A\n'
        '"Babbage, Charles",102,U-2,s02,Lecture B\n',
        encoding="utf-8",
    )
    header, _, *rows = _read(export.write(course, "decomp", "canvas", roster=roster))
    found = {row[3]: row[:5] for row in rows}
    assert found["s01"] == ["Lovelace, Ada", "101", "U-1", "s01", "Lecture A"]
    assert found["s02"] == ["Babbage, Charles", "102", "U-2", "s02", "Lecture B"]
    assert found["s_03"] == ["s_03", "9003", "", "s_03", ""]  # not on the roster


def _moodle_roster(tmp_path, text: str):
    roster = tmp_path / "roster.csv"
    roster.write_text(text, encoding="utf-8")
    return roster


def test_moodle_csv_has_one_user_field_column_and_the_grade_item(course, tmp_path):
    text = "id,Username,first_name,last_name\ns01,alovelace,,\ns02,cbabbage,Charles,Babbage\n"
    roster = _moodle_roster(tmp_path, text + "s_03,cdoe,,\n")
    header, *rows = _read(export.write(course, "decomp", "moodle", roster=roster))
    assert header == ["Username", "First name", "Last name", "decomp total"]
    assert header[0] in MOODLE_IDS and all(row[0] for row in rows)  # every row is matched
    found = {row[0]: row for row in rows}
    assert found["cbabbage"] == ["cbabbage", "Charles", "Babbage", "2"]
    assert found["alovelace"][1:] == ["Ada", "Lovelace", "3"]  # names from the gradebook
    assert {who: _points(row[3:]) for who, row in found.items()} == {
        "alovelace": 3, "cbabbage": 2, "cdoe": 0.5}  # fmt: skip


def test_moodle_names_every_unmatched_student_and_writes_only_the_matched(course, tmp_path):
    roster = _moodle_roster(tmp_path, "id,first_name,last_name,email\n"
                            "s02,Charles,Babbage,cb@uni.example\n")  # fmt: skip
    with pytest.raises(lmscsv.UnmatchedError, match=r"\['s01', 's_03'\]") as raised:
        export.write(course, "decomp", "moodle", roster=roster)
    error = raised.value
    assert error.students == ["s01", "s_03"] and error.field == "email"
    assert error.path == course / "exports" / "decomp-moodle.csv"
    assert "Email address" in str(error) and "roster" in str(error)
    header, *rows = _read(error.path)
    assert header == ["Email address", "First name", "Last name", "decomp total"]
    assert rows == [["cb@uni.example", "Charles", "Babbage", "2"]]  # no kit id in its place


def test_moodle_without_a_roster_writes_nothing_and_says_what_to_pass(course):
    with pytest.raises(lmscsv.UnmatchedError, match="--roster") as raised:
        export.write(course, "decomp", "moodle")
    assert raised.value.students == ["s01", "s02", "s_03"] and raised.value.path is None
    assert not (course / "exports" / "decomp-moodle.csv").exists()


def test_moodle_user_field_can_be_chosen(course, tmp_path):
    text = "id,username,email\ns01,alovelace,\ns02,cbabbage,cb@uni.example\ns_03,cdoe,\n"
    roster = _moodle_roster(tmp_path, text)
    header, *_ = _read(export.write(course, "decomp", "moodle", roster=roster))
    assert header[0] == "Username"  # the field the roster gives for the most students
    with pytest.raises(lmscsv.UnmatchedError) as raised:
        export.write(course, "decomp", "moodle", roster=roster, match="email")
    assert raised.value.students == ["s01", "s_03"]
    header, *rows = _read(export.write(course, "decomp", "moodle", roster=roster,
                                       columns="notebooks"))  # fmt: skip
    assert header == ["Username", "First name", "Last name", CHAIN, HORIZON]


def test_plain_csv_has_the_submission_time_and_a_column_per_notebook(course):
    header, *rows = _read(export.write(course, "decomp", "csv"))
    assert header == ["student", "first_name", "last_name", "submitted_at", CHAIN, HORIZON,
                      "decomp total", "max_total"]  # fmt: skip
    found = {row[0]: row for row in rows}
    assert found["s01"][3] == "2026-11-29T23:58:10+00:00"  # the record's (LMS) time wins
    assert found["s02"][3] == "2026-11-30T09:15:00+00:00"  # else nbgrader's
    assert found["s01"][4:] == ["2", "1", "3", "3"]


def test_canvas_id_from_the_names_of_a_canvas_download(course):
    record = chain_record("s02", {})
    record["source_names"] = ["babbagecharles_LATE_5512_88001_01-chain-reliability.ipynb"]
    write_record(course, record)
    _, _, *rows = _read(export.write(course, "decomp", "canvas"))
    assert {row[3]: row[1] for row in rows} == {"s01": "", "s02": "5512", "s_03": "9003"}


def test_records_alone_are_enough(tmp_path):
    write_record(tmp_path, chain_record("s09", {"p_prime_value": 0.1},
                                        submitted_at="2026-11-30T08:00:00+00:00"))  # fmt: skip
    header, row = _read(export.write(tmp_path, "decomp", "csv"))
    assert header[4:] == [CHAIN, "decomp total", "max_total"]
    assert (
        row[0] == "s09" and row[3] == "2026-11-30T08:00:00+00:00" and row[4:] == ["11", "11", "12"]
    )


@pytest.mark.parametrize(
    "kwargs, message",
    [({"fmt": "blackboard"}, "fmt must be one of"),
     ({"columns": "both"}, "columns must be one of"),
     ({"fmt": "moodle", "match": "userid"}, "match must be one of"),
     ({"fmt": "canvas", "match": "email"}, "match is for Moodle"),
     ({"columns": "notebooks", "headers": {"07-unknown": "X"}}, "names notebooks"),
     ({"fmt": "canvas", "headers": {CHAIN: "X"}}, "--columns total writes one column"),
     ({"columns": "notebooks", "headers": {"decomp": "X"}}, "no total column"),
     ({"roster": "roster.csv"}, "no column of roster"),
     ({"roster": "absent.csv"}, "roster .* not found"),
     ({"assignment": "decomp2"}, r"no assignment 'decomp2' .* \['decomp'\]")],
)  # fmt: skip
def test_bad_requests_say_what_is_wrong(course, kwargs, message):
    (course / "roster.csv").write_text("login,name\nzz1,Zed\n")
    if "roster" in kwargs:
        kwargs["roster"] = course / kwargs["roster"]
    with pytest.raises(ValueError, match=message):
        export.write(course, kwargs.pop("assignment", "decomp"), **kwargs)


def test_an_assignment_nobody_handed_in_is_refused(course):
    with sqlite3.connect(course / "gradebook.db") as db:
        db.execute("DELETE FROM submitted_assignment")
    shutil.rmtree(course / "records")
    with pytest.raises(ValueError, match="nothing to export: no student of 'decomp'"):
        export.write(course, "decomp", "canvas")


def test_the_command(course, tmp_path, capsys):
    (tmp_path / "roster.csv").write_text("id,email\ns01,al@uni.example\ns02,cb@uni.example\n")
    argv = ["export", "--root", str(course), "--to", "moodle"]
    assert course_main([*argv, "--roster", str(tmp_path / "roster.csv")]) == 1
    out, err = capsys.readouterr()
    assert "decomp-moodle.csv" in out and "'useremail'" in out  # written, and how to map it
    assert err.count("\n") == 1 and "['s_03']" in err  # one line naming the unmatched
    assert course_main(["export", "--root", str(course), "--to", "canvas"]) == 0
    assert "decomp-canvas.csv" in capsys.readouterr().out
    assert course_main(["export", "--root", str(tmp_path / "empty"), "--to", "csv"]) == 1
    assert "no gradebook.db and no records/decomp/" in capsys.readouterr().err


def test_help_says_why_the_total_is_the_default(capsys):
    with pytest.raises(SystemExit):
        export.main(["--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "default total" in text and "twice" in text


_FAST = """
import json, sys, time
from decompkit.course import export
found = []
for argv in json.loads(sys.argv[1]):
    start = time.perf_counter()
    try:
        code = export.main(argv)
    except SystemExit as done:
        code = done.code
    found.append([code, time.perf_counter() - start])
print(json.dumps({"runs": found, "nbgrader": "nbgrader" in sys.modules}))
"""


def test_argument_mistakes_fail_in_one_line_before_nbgrader_is_imported(course, tmp_path):
    root = ["--root", str(course)]
    mistakes = [
        ["nosuch", *root, "--to", "csv"],  # an assignment the course does not have
        [*root, "--to", "moodle", "--roster", str(tmp_path / "absent.csv")],
        [*root, "--to", "blackboard"],
        [*root, "--to", "canvas", "--columns", "both"],
    ]
    done = subprocess.run([sys.executable, "-c", _FAST, json.dumps(mistakes)],
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    found = json.loads(done.stdout)
    assert not found["nbgrader"]  # refused before the gradebook's machinery is loaded
    assert [code for code, _ in found["runs"]] == [1, 1, 2, 2]
    assert all(seconds < 2 for _, seconds in found["runs"])
    lines = done.stderr.splitlines()
    assert len(lines) == len(mistakes) and "Traceback" not in done.stderr
    assert "'nosuch'" in lines[0] and "absent.csv" in lines[1] and "blackboard" in lines[2]


@pytest.mark.parametrize("command", ["feedback", "export", "report"])
def test_kit_runs_these_commands_in_the_course_package(monkeypatch, command):
    spec = importlib.util.spec_from_file_location("_kit_for_export", ROOT / "kit.py")
    kit = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(kit)
    ran = []
    monkeypatch.setattr(kit, "run_command", lambda argv: ran.append(argv) or 0)
    assert kit.COMMANDS[command](["--help"]) == 0
    assert ran == [[str(kit.PYTHON), "-m", "decompkit.course", command, "--help"]]
    with pytest.raises(SystemExit) as done:
        course_main([command, "--help"])
    assert done.value.code == 0
