"""Hostile downloads: a submission whose inner names claim a classmate, links that point out of
the download, and downloads too large to read whole.

Everything inside a download is the students' (file names, folders, links, sizes); only the
top-level name of each entry is the LMS's. No kernel runs here: these tests read zip files
and folders only.
"""

from __future__ import annotations

import os
import stat
import zipfile

import pytest

from decompkit.course import collect as collecting

from .test_collect import CHAIN, HORIZON, NEW, OLD, _course, _filed, _notebook, _zip

PLANTED = "planted by mallory"


def _run(root, *extra):
    status = collecting.main(["decomp", "--root", str(root), *extra])
    report = (root / "downloaded" / "decomp" / "collect-report.txt").read_text()
    return status, report


def _line(report: str, text: str) -> str:
    """The one line of ``report`` that holds ``text``."""
    found = [line for line in report.splitlines() if text in line]
    assert len(found) == 1, f"{text!r} in {len(found)} lines of\n{report}"
    return found[0]


# --- a name inside one student's submission that claims a classmate ---------------------------

#: (path of Mallory's planted notebook, the name in it that claims a classmate, the classmate's
#: id, Mallory's id): every layout where an inner name names another student than the outer one
CLAIMS = [
    # Moodle: a folder in Mallory's Moodle folder named like the victim's Moodle folder
    (
        "Mallory Evil_111_assignsubmission_file_/Victim Name_222_assignsubmission_file_/"
        f"{CHAIN}.ipynb",
        "Victim Name_222_assignsubmission_file_",
        "victim-name",
        "mallory-evil",
    ),
    # ... one folder further in
    (
        "Mallory Evil_111_assignsubmission_file_/work/Victim Name_222_assignsubmission_file_/"
        f"{CHAIN}.ipynb",
        "Victim Name_222_assignsubmission_file_",
        "victim-name",
        "mallory-evil",
    ),
    # ... a file named like the victim's flat Moodle name
    (
        f"Mallory Evil_111_assignsubmission_file_/Victim Name_222_assignsubmission_file_{CHAIN}"
        ".ipynb",
        "Victim Name_222_assignsubmission_file_",
        "victim-name",
        "mallory-evil",
    ),
    # ... a file named like a Canvas download
    (
        f"Mallory Evil_111_assignsubmission_file_/victimname_222_333_{CHAIN}.ipynb",
        "victimname_222_333_",
        "victimname",
        "mallory-evil",
    ),
    # a flat Moodle name whose uploaded file is named like the victim's Moodle name
    (
        f"Mallory Evil_111_assignsubmission_file_Victim Name_222_assignsubmission_file_{CHAIN}"
        ".ipynb",
        "Victim Name_222_assignsubmission_file_",
        "victim-name",
        "mallory-evil",
    ),
    # Canvas: the uploaded file is named like the victim's Moodle or Canvas name
    (
        f"evilmallory_111_999_Victim Name_222_assignsubmission_file_{CHAIN}.ipynb",
        "Victim Name_222_assignsubmission_file_",
        "victim-name",
        "evilmallory",
    ),
    (
        f"evilmallory_111_999_victimname_222_333_{CHAIN}.ipynb",
        "victimname_222_333_",
        "victimname",
        "evilmallory",
    ),
    # plain folders: an LMS name, or another id before the notebook's name, inside mallory/
    (
        f"mallory/Victim Name_222_assignsubmission_file_/{CHAIN}.ipynb",
        "Victim Name_222_assignsubmission_file_",
        "victim-name",
        "mallory",
    ),
    (f"mallory/victimname_222_333_{CHAIN}.ipynb", "victimname_222_333_", "victimname", "mallory"),
    (f"mallory/victim_{CHAIN}.ipynb", f"victim_{CHAIN}.ipynb", "victim", "mallory"),
]


@pytest.mark.parametrize("planted, claim, victim, mallory", CLAIMS)
def test_a_name_inside_a_submission_never_files_it_under_a_classmate(
    tmp_path, planted, claim, victim, mallory
):
    root = _course(tmp_path)
    _zip(
        root / "downloaded" / "decomp" / "archive" / "submissions.zip",
        [
            (f"{victim}_{CHAIN}.ipynb", OLD, "victim chain"),  # the victim's own work
            (f"{mallory}_{HORIZON}.ipynb", OLD, "mallory horizon"),
            (planted, NEW, f"{PLANTED} chain"),  # newer: it would replace the victim's
        ],
    )
    status, report = _run(root)
    filed = _filed(root)
    assert filed[(victim, CHAIN)] == "victim chain"
    assert f"{PLANTED} chain" not in filed.values()
    assert status == 1  # something was left out: a script notices
    message = _line(report, claim).split(f"{planted}: ", 1)[1]  # what follows the path
    assert mallory in message and claim in message and "another student" in message


#: (path of a notebook inside mallory's own folder, where it must be filed)
OWN_FOLDERS = [
    (f"mallory/victim/{HORIZON}.ipynb", "mallory"),
    (f"mallory/victim/decomp/{HORIZON}.ipynb", "mallory"),
    (f"Mallory Evil_111_assignsubmission_file_/victim/{HORIZON}.ipynb", "mallory-evil"),
]


@pytest.mark.parametrize("planted, owner", OWN_FOLDERS)
def test_a_folder_inside_a_student_folder_stays_that_students(tmp_path, planted, owner):
    root = _course(tmp_path)
    top = planted.split("/", 1)[0]
    _zip(
        root / "downloaded" / "decomp" / "archive" / "submissions.zip",
        [
            (f"{top}/{CHAIN}.ipynb", NEW, "mallory chain"),
            (f"victim_{CHAIN}.ipynb", NEW, "victim chain"),
            (planted, NEW, f"{PLANTED} horizon"),
        ],
    )
    assert _run(root)[0] == 0
    assert _filed(root) == {
        (owner, CHAIN): "mallory chain",
        (owner, HORIZON): f"{PLANTED} horizon",
        ("victim", CHAIN): "victim chain",
    }


def test_a_folder_around_the_whole_download_is_no_student(tmp_path):
    # A zip of a folder: every entry sits in one folder, which names no student.
    root = _course(tmp_path)
    _zip(
        root / "downloaded" / "decomp" / "archive" / "rezipped.zip",
        [
            (f"Assignment 1/Jane Doe_444_assignsubmission_file_/{CHAIN}.ipynb", NEW, "jane chain"),
            (f"Assignment 1/s2001_{HORIZON}.ipynb", NEW, "s2001 horizon"),
            (f"Assignment 1/s2002/{CHAIN}.ipynb", NEW, "s2002 chain"),
        ],
    )
    assert _run(root)[0] == 0
    assert _filed(root) == {
        ("jane-doe", CHAIN): "jane chain",
        ("s2001", HORIZON): "s2001 horizon",
        ("s2002", CHAIN): "s2002 chain",
    }


def test_a_colon_in_the_downloads_own_name_is_no_part_of_a_student(tmp_path):
    root = _course(tmp_path)
    _zip(
        root / "downloaded" / "decomp" / "archive" / "week:1.zip",
        [(f"s2001_{CHAIN}.ipynb", NEW, "s2001 chain")],
    )
    assert _run(root)[0] == 0
    assert _filed(root) == {("s2001", CHAIN): "s2001 chain"}


def test_a_name_cannot_write_lines_or_terminal_codes_into_the_report(tmp_path, capsys):
    # A zip entry's name is the student's: a line break in it would forge a line of the
    # report, an escape sequence would drive the instructor's terminal.
    root = _course(tmp_path)
    forged = "  placed 9 notebooks of 9 students in submitted/ (all fine)"
    names = [
        f"notes\n{forged}\x1b[2J.ipynb",
        f"s2001\u2028{forged}\u202e_{CHAIN}.ipynb",
    ]
    path = root / "downloaded" / "decomp" / "archive" / "submissions.zip"
    _zip(path, [(name, NEW, "chain") for name in names])
    status, report = _run(root)
    printed = capsys.readouterr().out
    assert status == 1
    for text in (report, printed):
        assert forged not in text.splitlines()
        assert not any(c in text for c in "\x1b\u2028\u202e")
        assert len(text.splitlines()) == len(text.split("\n")) - 1  # no other line breaks
    assert "\\n  placed 9 notebooks" in report  # shown, escaped, inside its own line


def test_a_name_that_is_not_utf8_is_read_and_reported(tmp_path):
    # An unpacked folder keeps the bytes of a name as the student's zip gave them.
    root = _course(tmp_path)
    unpacked = root / "downloaded" / "decomp" / "archive" / "unpacked"
    unpacked.mkdir(parents=True)
    folder = os.path.join(os.fsencode(unpacked), b"s2001\xff")
    os.mkdir(folder)
    with open(os.path.join(folder, f"{CHAIN}.ipynb".encode()), "wb") as handle:
        handle.write(_notebook("s2001 chain"))
    with open(os.path.join(os.fsencode(unpacked), b"notes\xfe.ipynb"), "wb") as handle:
        handle.write(_notebook("notes chain"))
    status, report = _run(root)
    assert status == 1  # notes\xfe.ipynb names no notebook
    assert _filed(root) == {("s2001", CHAIN): "s2001 chain"}
    assert "unpacked:notes\ufffd.ipynb: no notebook" in report


# --- links out of the download ----------------------------------------------------------------


def test_links_in_an_unpacked_download_are_never_followed(tmp_path):
    root = _course(tmp_path)
    archive = root / "downloaded" / "decomp" / "archive"
    unpacked = archive / "unpacked"
    (unpacked / "s2003").mkdir(parents=True)
    (unpacked / f"s2001_{CHAIN}.ipynb").write_bytes(_notebook("s2001 chain"))
    solutions = root / "solutions" / "decomp"
    links = {  # link -> what it points to
        unpacked / "s2003" / f"{CHAIN}.ipynb": solutions / f"{CHAIN}.ipynb",
        unpacked / "s2004": solutions,  # a folder: s2004/<every notebook>
        unpacked / f"s2005_{CHAIN}.ipynb": "../../../../../solutions/decomp/01-x.ipynb",
        archive / "solutions": root / "solutions",  # a whole download that is a link
    }
    for link, target in links.items():
        os.symlink(target, link)
    status, report = _run(root)
    assert _filed(root) == {("s2001", CHAIN): "s2001 chain"}
    assert status == 1
    for link in links:
        inner = link.relative_to(unpacked).as_posix() if unpacked in link.parents else link.name
        assert "symbolic link" in _line(report, inner + ":")


def test_link_entries_of_a_zip_are_never_followed(tmp_path):
    root = _course(tmp_path)
    path = root / "downloaded" / "decomp" / "archive" / "submissions.zip"
    _zip(path, [(f"s2001_{CHAIN}.ipynb", NEW, "s2001 chain")])
    with zipfile.ZipFile(path, "a") as archive:
        for name, target in [
            (f"s2003_{CHAIN}.ipynb", f"../../solutions/decomp/{CHAIN}.ipynb"),
            ("s2004", "../../solutions/decomp"),
        ]:
            info = zipfile.ZipInfo(name, date_time=NEW)
            info.external_attr = (stat.S_IFLNK | 0o777) << 16  # how zip stores a Unix link
            info.create_system = 3
            archive.writestr(info, target)
    status, report = _run(root)
    assert _filed(root) == {("s2001", CHAIN): "s2001 chain"}
    assert status == 1
    for name in (f"s2003_{CHAIN}.ipynb", "s2004"):
        assert "symbolic link" in _line(report, f"submissions.zip:{name}:")


# --- downloads too large to read whole --------------------------------------------------------


def _tiny_zip(path, names) -> None:
    """A zip of small entries (the collector reads names and bytes, never a notebook's JSON)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w") as archive:
        for name in names:
            archive.writestr(zipfile.ZipInfo(name, date_time=NEW), b"{}")


def test_one_download_creates_at_most_the_bound_of_students(tmp_path):
    root = _course(tmp_path)
    extra = collecting.MAX_STUDENTS + 2
    names = [f"s{n:05d}_{CHAIN}.ipynb" for n in range(extra)]
    _tiny_zip(root / "downloaded" / "decomp" / "archive" / "submissions.zip", names)
    status, report = _run(root)
    students = sorted(p.name for p in (root / "submitted").iterdir())
    assert len(students) == collecting.MAX_STUDENTS
    assert students == [f"s{n:05d}" for n in range(collecting.MAX_STUDENTS)]
    assert status == 1
    line = _line(report, "--max-students")
    assert f"{collecting.MAX_STUDENTS} students" in line
    assert f"s{extra - 2:05d}" in line and f"s{extra - 1:05d}" in line
    assert "--max-students" in line


def test_one_download_reads_at_most_the_bound_of_entries(tmp_path):
    root = _course(tmp_path)
    names = [f"padding/{n}.txt" for n in range(collecting.MAX_ENTRIES - 1)]
    names += [f"s2001_{CHAIN}.ipynb", f"s2002_{CHAIN}.ipynb", f"s2003_{CHAIN}.ipynb"]
    _tiny_zip(root / "downloaded" / "decomp" / "archive" / "submissions.zip", names)
    status, report = _run(root)
    assert sorted(p.name for p in (root / "submitted").iterdir()) == ["s2001"]
    assert status == 1
    line = _line(report, "--max-entries")
    assert f"{collecting.MAX_ENTRIES} entries" in line and "2 entries" in line
    assert f"s2002_{CHAIN}.ipynb" in line  # what was left unread is named


@pytest.mark.parametrize("students, entries", [(2, 100), (10, 4)])
def test_the_bounds_are_options(tmp_path, students, entries):
    root = _course(tmp_path)
    names = [f"s{n}_{CHAIN}.ipynb" for n in range(6)]
    _tiny_zip(root / "downloaded" / "decomp" / "archive" / "submissions.zip", names)
    status, _ = _run(root, "--max-students", str(students), "--max-entries", str(entries))
    assert status == 1
    assert len(list((root / "submitted").iterdir())) == min(students, entries)


def test_the_notebooks_of_one_download_are_bounded_in_size_together(tmp_path):
    root = _course(tmp_path)
    size = len(_notebook("s2001 chain"))
    _zip(
        root / "downloaded" / "decomp" / "archive" / "submissions.zip",
        [(f"s200{n}_{CHAIN}.ipynb", NEW, f"s200{n} chain") for n in range(1, 5)],
    )
    total_mb = 2.5 * size / 1e6  # room for two notebooks and a half
    status, report = _run(root, "--max-total-mb", f"{total_mb:.6f}")
    assert sorted(p.name for p in (root / "submitted").iterdir()) == ["s2001", "s2002"]
    assert status == 1
    line = _line(report, "--max-total-mb")
    assert "2 notebooks" in line and f"s2004_{CHAIN}.ipynb" in line


def test_an_entry_larger_than_it_says_is_refused_alone(tmp_path):
    # A zip bomb's trick: the entry declares a small size; only that many bytes are read,
    # the entry fails its check, and the rest of the download is still read.
    root = _course(tmp_path)
    path = root / "downloaded" / "decomp" / "archive" / "submissions.zip"
    path.parent.mkdir(parents=True)
    entries = [(1, _notebook("s2001 chain")), (2, b" " * 10_000_000), (3, _notebook("s2003 chain"))]
    with zipfile.ZipFile(path, "w") as archive:
        for n, data in entries:
            info = zipfile.ZipInfo(f"s200{n}_{CHAIN}.ipynb", date_time=NEW)
            archive.writestr(info, data, compress_type=zipfile.ZIP_DEFLATED)
        archive.filelist[1].file_size = 1_000  # what the central directory will claim
    status, report = _run(root)
    assert _filed(root) == {("s2001", CHAIN): "s2001 chain", ("s2003", CHAIN): "s2003 chain"}
    assert status == 1
    assert "could not be read" in _line(report, f"submissions.zip:s2002_{CHAIN}.ipynb:")
