"""Collecting an LMS download as it comes: Canvas and Moodle names, resubmissions, browser
duplicates, names that fit no notebook, ids that differ only in case, spaces or accents.

No kernel runs here: these tests read zip files and folders only.
"""

from __future__ import annotations

import functools
import json
import re
import time
import zipfile

import nbformat
import pytest

from decompkit.course import collect as collecting
from decompkit.course.grade import find_submissions
from decompkit.course.key import answer_key
from decompkit.exercises.ids import normalise_id

from .submissions import NOTEBOOKS, RELEASED, ROOT

CHAIN, HORIZON, PLANS = NOTEBOOKS[0], NOTEBOOKS[1], NOTEBOOKS[2]
OLD, NEW = (2026, 11, 28, 10, 0, 0), (2026, 11, 30, 23, 58, 10)


@functools.cache
def _notebook(tag: str) -> bytes:
    """A released notebook with a cell naming ``tag``, so each file can be told apart."""
    notebook = CHAIN if "chain" in tag else HORIZON if "horizon" in tag else PLANS
    nb = nbformat.read(RELEASED / f"{notebook}.ipynb", as_version=4)
    nb.cells.append(nbformat.v4.new_markdown_cell(f"handed in as {tag}"))
    return nbformat.writes(nb).encode()


#: (name inside the zip, its time, content tag or None for a fixed text)
DOWNLOAD = [
    # Canvas: name, user id, submission id; a resubmission gets "-1"
    ("doejane_12345_67890_01-chain-reliability.ipynb", NEW, "canvas-first chain"),
    ("doejane_12345_67891_01-chain-reliability-1.ipynb", NEW, "canvas-resubmitted chain"),
    ("smithbob_LATE_22222_55555_02-long-horizons.ipynb", NEW, "canvas-late horizon"),
    # Moodle: a folder per student, or the flat form; two students named Jane Doe
    ("Zoë Müller_333_assignsubmission_file_/01-chain-reliability.ipynb", NEW, "moodle chain"),
    ("Jane Doe_444_assignsubmission_file_02-long-horizons.ipynb", NEW, "moodle-444 horizon"),
    ("Jane Doe_555_assignsubmission_file_/01-chain-reliability.ipynb", NEW, "moodle-555 chain"),
    # plain names; one student typed the id in upper case for one of the notebooks
    ("S2001_01-chain-reliability.ipynb", NEW, "s2001 chain"),
    ("s2001_02-long-horizons.ipynb", NEW, "s2001 horizon"),
    # a browser's duplicate mark: the later one by time wins; an identical copy counts once
    ("s2003_01-chain-reliability.ipynb", OLD, "s2003-old chain"),
    ("s2003_01-chain-reliability (1).ipynb", NEW, "s2003-new chain"),
    ("s2004_01-chain-reliability.ipynb", NEW, "s2004 chain"),
    ("s2004_01-chain-reliability (1).ipynb", NEW, "s2004 chain"),
    # a resubmission mark on an older file: the LMS time decides
    ("s2005_01-chain-reliability.ipynb", NEW, "s2005-newer chain"),
    ("s2005_01-chain-reliability-1.ipynb", OLD, "s2005-older chain"),
    # names that fit no notebook, or no student
    ("s2006_chain.ipynb", NEW, "s2006-misnamed chain"),
    ("s2006_01-chain-reliability.ipynb", NEW, "s2006 chain"),
    ("notes.ipynb", NEW, "no-student chain"),
    # nbgrader's own layout inside a folder of the zip
    ("export/s2007/decomp/03-plans-as-objects.ipynb", NEW, "s2007 plans"),
    # not submissions at all
    ("readme.txt", NEW, None),
    ("__MACOSX/._s2001_01-chain-reliability.ipynb", NEW, None),
]

#: (student, notebook) -> content tag of the file that must be in submitted/
EXPECTED = {
    ("doejane", CHAIN): "canvas-resubmitted chain",
    ("smithbob", HORIZON): "canvas-late horizon",
    ("zoe-muller", CHAIN): "moodle chain",
    ("jane-doe-444", HORIZON): "moodle-444 horizon",
    ("jane-doe-555", CHAIN): "moodle-555 chain",
    ("s2001", CHAIN): "s2001 chain",
    ("s2001", HORIZON): "s2001 horizon",
    ("s2003", CHAIN): "s2003-new chain",
    ("s2004", CHAIN): "s2004 chain",
    ("s2005", CHAIN): "s2005-newer chain",
    ("s2006", CHAIN): "s2006 chain",
    ("s2007", PLANS): "s2007 plans",
}


def _course(tmp_path):
    root = tmp_path / "course"
    (root / "solutions" / "decomp").mkdir(parents=True)
    for notebook in NOTEBOOKS:
        source = ROOT / "solutions" / "decomp" / f"{notebook}.ipynb"
        (root / "solutions" / "decomp" / f"{notebook}.ipynb").write_bytes(source.read_bytes())
    return root


def _zip(path, entries):
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w") as archive:
        for name, when, tag in entries:
            info = zipfile.ZipInfo(name, date_time=when)
            archive.writestr(info, _notebook(tag) if tag else b"not a submission")


@pytest.fixture
def collected(tmp_path, capsys):
    root = _course(tmp_path)
    _zip(root / "downloaded" / "decomp" / "archive" / "submissions.zip", DOWNLOAD)
    status = collecting.main(["decomp", "--root", str(root)])
    return root, status, capsys.readouterr().out


def _filed(root) -> dict:
    found = {}
    for path in (root / "submitted").glob("*/decomp/*.ipynb"):
        nb = nbformat.read(path, as_version=4)
        found[(path.parent.parent.name, path.stem)] = nb.cells[-1].source.removeprefix(
            "handed in as "
        )
    return found


def test_every_placeable_notebook_is_filed_under_one_id_and_the_latest_upload_wins(collected):
    root, _, _ = collected
    assert _filed(root) == EXPECTED


def test_what_could_not_be_placed_is_reported_by_name_and_left_out(collected):
    root, status, out = collected
    assert status == 1  # something was left out: a script notices
    assert "NOT placed (2)" in out
    assert "s2006_chain.ipynb: no notebook of the assignment in its name" in out
    assert "notes.ipynb: no notebook" in out or "notes.ipynb: no student" in out
    assert "ignored 1 files that are not notebooks (readme.txt)" in out
    assert "2 students in the LMS share the id jane-doe" in out
    assert "1 identical copies counted once" in out
    assert "marked late by the LMS: smithbob" in out
    assert "set aside 3 older uploads" in out
    kept = (root / "downloaded" / "decomp" / "collect-report.txt").read_text()
    assert kept == out.split("  report kept in")[0]
    assert not (root / "submitted" / "notes").exists()


def test_where_each_notebook_came_from_is_kept_for_the_grading_record(collected):
    root, _, _ = collected
    manifest = json.loads((root / "downloaded" / "decomp" / "collected.json").read_text())
    smith = manifest["students"]["smithbob"]
    assert smith["late"] is True
    assert (
        smith["notebooks"][HORIZON]["source"] == "smithbob_LATE_22222_55555_02-long-horizons.ipynb"
    )
    assert smith["submitted_at"].startswith("2026-11-30T23:58:10")
    assert manifest["students"]["doejane"]["notebooks"][CHAIN]["format"] == "Canvas"


def test_collecting_again_keeps_what_is_there_and_replaces_only_changed_files(collected, capsys):
    root, _, _ = collected
    again = [("S2001_01-chain-reliability.ipynb", NEW, "s2001-resubmitted chain")]
    later = root / "downloaded" / "decomp" / "archive" / "later.zip"
    _zip(later, again)
    assert collecting.main(["decomp", "--root", str(root), "--from", str(later)]) == 0
    out = capsys.readouterr().out
    assert "(0 new, 1 replaced, 0 unchanged)" in out
    assert _filed(root)[("s2001", CHAIN)] == "s2001-resubmitted chain"
    old = root / "downloaded" / "decomp" / "replaced" / "s2001" / f"{CHAIN}.1.ipynb"
    assert "handed in as s2001 chain" in old.read_text()


def test_nothing_to_collect_and_a_wrong_assignment_are_one_line_errors(tmp_path, capsys):
    root = _course(tmp_path)
    assert collecting.main(["decomp", "--root", str(root)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: nothing to collect: downloaded/decomp/archive/")
    assert err.count("\n") == 1
    assert collecting.main(["decmp", "--root", str(root)]) == 2
    err = capsys.readouterr().err
    assert "no assignment 'decmp' in solutions/ (assignments here: decomp)" in err


def test_the_grader_groups_folders_by_the_same_id_and_reports_what_it_cannot_grade(tmp_path):
    # What nbgrader's zip_collect or a hand copy leaves: S2001 and s2001 are one student; a
    # browser duplicate in submitted/ is no notebook of the assignment and must not be graded
    # (nbgrader's autograde then fails writing scores for the whole class).
    root = tmp_path / "course"
    for folder, name in [("S2001", CHAIN), ("s2001", HORIZON), ("s2003", f"{CHAIN} (1)"),
                         ("---", CHAIN), ("Zoë Müller", CHAIN)]:  # fmt: skip
        inbox = root / "submitted" / folder / "decomp"
        inbox.mkdir(parents=True, exist_ok=True)
        (inbox / f"{name}.ipynb").write_bytes(_notebook("chain"))
        time.sleep(0.01)
    found, left_out = find_submissions(root, "submitted", "decomp", NOTEBOOKS)
    assert sorted(found) == ["s2001", "s2003", "zoe-muller"]
    assert sorted(found["s2001"].files) == [CHAIN, HORIZON]
    assert found["s2003"].files == {}
    assert any(f"{CHAIN} (1).ipynb: not a notebook of decomp" in line for line in left_out)
    assert any(line.startswith("submitted/---/: a student id needs") for line in left_out)


@pytest.mark.parametrize("raw", ["S2001", "Zoë Müller", "Jane Doe", "jane_doe", "李雷"])
def test_the_answer_key_accepts_every_id_the_grader_grades(raw):
    graded_as = normalise_id(raw)
    assert answer_key(raw, ["chain"]) == answer_key(graded_as, ["chain"])
    assert answer_key(raw, ["chain"])[0].student == graded_as


def test_a_notebook_without_a_student_is_refused_for_the_student(tmp_path, capsys):
    root = _course(tmp_path)
    download = root / "downloaded" / "decomp" / "archive" / "bare.zip"
    _zip(download, [(f"{CHAIN}.ipynb", NEW, "bare chain"), ("notes.ipynb", NEW, "notes")])
    assert collecting.main(["decomp", "--root", str(root)]) == 1
    out = capsys.readouterr().out
    assert f"bare.zip:{CHAIN}.ipynb: no student in its name" in out
    assert "notes.ipynb: no notebook of the assignment in its name" in out
    lone = tmp_path / f"{CHAIN}.ipynb"
    lone.write_bytes(_notebook("lone chain"))
    assert collecting.main(["decomp", "--root", str(root), "--from", str(lone)]) == 1
    out = capsys.readouterr().out
    assert f"{CHAIN}.ipynb: a notebook on its own, with no student in its name" in out
    assert "zip" not in out.split("NOT placed")[1]
    assert not (root / "submitted").exists()


def test_collecting_the_same_download_again_lists_only_what_changed(collected, capsys):
    root, _, first = collected
    assert "s2003-old" not in first  # the entries' tags never show; their names do
    again = [*DOWNLOAD, ("s2099_01-chain-reliability.ipynb", NEW, "s2099 chain")]
    _zip(root / "downloaded" / "decomp" / "archive" / "submissions-2.zip", again)
    collecting.main(["decomp", "--root", str(root)])
    out = capsys.readouterr().out
    placed, students = len(EXPECTED) + 1, len({s for s, _ in EXPECTED}) + 1
    said = f"placed {placed} notebooks of {students} students in submitted/ (1 new, 0 replaced, "
    assert said in out
    assert "  new: s2099 (01-chain-reliability)\n" in out
    # the first download's copies of the second are counted, not listed; nor are the older
    # uploads set aside again for the same files
    duplicates = [line for line in out.splitlines() if "identical copies" in line]
    assert len(duplicates) == 1
    assert re.fullmatch(r"  \d+ identical copies counted once", duplicates[0])
    assert "(kept " not in out
    assert "doejane" not in out and "s2005" not in out
    assert len(out.splitlines()) < 15, out
