"""Grades for an LMS: the Canvas and Moodle import columns, the plain CSV, rosters, errors.

The class is a real nbgrader gradebook (made through nbgrader's API, no notebook runs):
three students, two notebooks, one manual grade and one late penalty.
"""

from __future__ import annotations

import csv
import importlib.util
import os
import shutil
import sys
import warnings
from datetime import datetime
from pathlib import Path

import pytest

from decompkit.course import export
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


def test_canvas_csv_has_the_columns_canvas_documents(course):
    path = export.write(course, "decomp", "canvas",
                        columns={CHAIN: "Chain reliability (4711)"})  # fmt: skip
    assert path == course / "exports" / "decomp-canvas.csv"
    header, points, *rows = _read(path)
    assert header == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section",
                      "Chain reliability (4711)", HORIZON, "decomp total"]  # fmt: skip
    assert points == ["Points Possible", "", "", "", "", "2", "1", "3"]
    by_login = {row[3]: row for row in rows}
    assert sorted(by_login) == ["s01", "s02", "s_03"]  # s04 submitted nothing
    assert by_login["s01"][:2] == ["Lovelace, Ada", ""]
    assert by_login["s02"][5:] == ["2", "0", "2"]  # the manual grade counts
    assert by_login["s_03"][1] == "9003" and by_login["s_03"][5:] == ["0", "0.5", "0.5"]


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


def test_moodle_csv_has_an_identifier_column_and_a_column_per_grade_item(course, tmp_path):
    roster = tmp_path / "roster.csv"
    roster.write_text("id,first_name,last_name,email\ns02,Charles,Babbage,cb@uni.example\n")
    header, *rows = _read(export.write(course, "decomp", "moodle", roster=roster))
    assert header == ["Username", "ID number", "Email address", "First name", "Last name",
                      CHAIN, HORIZON, "decomp total"]  # fmt: skip
    found = {row[0]: row for row in rows}
    assert found["s02"] == ["s02", "", "cb@uni.example", "Charles", "Babbage", "2", "0", "2"]
    assert found["s01"][3:5] == ["Ada", "Lovelace"]


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
     ({"columns": {"07-unknown": "X"}}, "--column names notebooks"),
     ({"roster": "roster.csv"}, "no column of roster")],
)  # fmt: skip
def test_bad_requests_say_what_is_wrong(course, kwargs, message):
    (course / "roster.csv").write_text("login,name\nzz1,Zed\n")
    if "roster" in kwargs:
        kwargs["roster"] = course / kwargs["roster"]
    with pytest.raises(ValueError, match=message):
        export.write(course, "decomp", **kwargs)


def test_the_command(course, tmp_path, capsys):
    assert course_main(["export", "--root", str(course), "--to", "moodle"]) == 0
    assert "decomp-moodle.csv" in capsys.readouterr().out
    assert course_main(["export", "--root", str(tmp_path / "empty"), "--to", "csv"]) == 1
    assert "no gradebook with assignment 'decomp'" in capsys.readouterr().err


@pytest.mark.parametrize("command", ["feedback", "export", "report"])
def test_kit_runs_these_commands_in_the_course_package(monkeypatch, command):
    spec = importlib.util.spec_from_file_location("_kit_for_export", ROOT / "kit.py")
    kit = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(kit)
    ran = []
    monkeypatch.setattr(kit, "_run", lambda argv: ran.append(argv) or 0)
    assert kit.COMMANDS[command](["--help"]) == 0
    assert ran == [[str(kit.PYTHON), "-m", "decompkit.course", command, "--help"]]
    with pytest.raises(SystemExit) as done:
        course_main([command, "--help"])
    assert done.value.code == 0
