"""A second grading run grades only what changed, and the table shows the gradebook's scores.

One small class (the chain notebook only) is graded through the command, then graded again
as an instructor would over a week: nothing changed; a manual grade given, a submission
replaced, a late student, a record from an older kit; one student named with ``--student``;
a setting changed and the run stopped with Ctrl-C, then the same command again; ``--force``.
Each run's output and the records it left are kept; the tests read them.

Runs that do not depend on each other go at the same time, each on its own copy of the
course as the run before left it: "again" beside the week's changes, then "named", the
stopped run with its resumption, and "--force", each from the course as "week" left it
(where every student is up to date, as in a course that goes on).
"""

from __future__ import annotations

import json
import re
import shutil
import signal
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import nbformat
import pytest

from decompkit.course.submissions import find_submissions

from .submissions import ROOT, answer_key, points, submission

CHAIN = "01-chain-reliability"
FULL = sum(points(CHAIN).values())


def _write(root, student: str, nb) -> None:
    folder = root / "submitted" / student / "decomp"
    folder.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, folder / f"{CHAIN}.ipynb")


def _half():
    key = answer_key(CHAIN)
    return submission(CHAIN, {k: key[k] for k in list(key)[::2]}, fill=False)


def _slow(nb):
    """``nb`` taking half a second longer to grade: the run stopped with Ctrl-C after its
    first student (ada) still has cy and dee to grade when the signal lands."""
    nb.cells.append(nbformat.v4.new_code_cell("import time\ntime.sleep(0.5)"))
    return nb


def _command(root, *args):
    return [sys.executable, "-m", "decompkit.course", "grade", "decomp", "--root", str(root),
            "--workers", "1", "--kit-guard", "report", *args]  # fmt: skip


def _grade(root, *args) -> dict:
    done = subprocess.run(_command(root, *args), capture_output=True, text=True, timeout=600)
    return _result(done.returncode, done.stdout, done.stderr)


def _result(status, out, err) -> dict:
    graded = re.findall(r"^\[\s*\d+/\d+\] (\S+)  ", err, re.M)
    return {"status": status, "out": out, "err": err, "graded": sorted(graded)}


def _interrupt_after(root, done: int) -> dict:
    process = subprocess.Popen(
        _command(root), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    seen = []
    for line in process.stderr:
        seen.append(line)
        if re.match(rf"\[\s*{done}/", line):
            process.send_signal(signal.SIGINT)
            break
    out, err = process.communicate(timeout=300)
    return _result(process.returncode, out, "".join(seen) + err)


def _record(root, student: str) -> dict:
    return json.loads((root / "records" / "decomp" / f"{student}.json").read_text())


def _give_manual_point(root, student: str) -> None:
    """A grader's manual score one point above the autograde on a cell that scored 0."""
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        notebook = gb.find_submission_notebook(CHAIN, "decomp", student)
        grade = next(g for g in notebook.grades if g.max_score and not g.auto_score)
        grade.manual_score = 1.0
        gb.db.commit()


def _says(run: dict, graded: int, unchanged: int) -> bool:
    """The run's first line of output counts ``graded`` students and ``unchanged`` ones."""
    first = run["out"].splitlines()[0] if run["out"] else ""
    return bool(
        re.match(rf"decomp: {graded} students? graded in .*, {unchanged} unchanged\b", first)
    )


def _row(out: str, student: str) -> list[str]:
    found = [line.split() for line in out.splitlines() if line.startswith(f"{student} ")]
    assert len(found) == 1, out
    return found[0]


def _copy(root, name: str):
    """A copy of the course at ``root`` as it is now, to run one branch of the week on."""
    return shutil.copytree(root, root.parent / f"{root.name}-{name}")


def _again(root) -> dict:
    return {
        "again": _grade(root),
        "again records": {s: _record(root, s) for s in ("ada", "bob", "cy")},
    }


def _stopped_then_resumed(root) -> dict:
    # A setting every grade depends on changes; the run is stopped after its first student.
    config = root / "nbgrader_config.py"
    config.write_text(
        config.read_text().replace("c.Execute.timeout = 30", "c.Execute.timeout = 29")
    )
    stopped = _interrupt_after(root, 1)
    return {"stopped": stopped, "resumed": _grade(root)}


def _the_week(root) -> dict:
    # A week later: a manual point for bob, cy hands in again, dee is late, and ada's record
    # is from a kit that wrote no fingerprint.
    _give_manual_point(root, "bob")
    _write(root, "cy", _slow(submission(CHAIN)))
    _write(root, "dee", _slow(submission(CHAIN)))
    old = _record(root, "ada")
    del old["fingerprint"]
    (root / "records" / "decomp" / "ada.json").write_text(json.dumps(old))
    return {"week": _grade(root)}


@pytest.fixture(scope="module")
def week(tmp_path_factory):
    root = tmp_path_factory.mktemp("regrade")
    shutil.copy2(ROOT / "nbgrader_config.py", root / "nbgrader_config.py")
    (root / "solutions" / "decomp").mkdir(parents=True)
    shutil.copy2(ROOT / "solutions" / "decomp" / f"{CHAIN}.ipynb", root / "solutions" / "decomp")
    _write(root, "ada", submission(CHAIN))
    _write(root, "bob", _half())
    _write(root, "cy", submission(CHAIN, fill=False))
    runs = {"first": _grade(root)}
    runs["first records"] = {s: _record(root, s) for s in ("ada", "bob", "cy")}

    with ThreadPoolExecutor(3) as pool:
        branches = [pool.submit(_again, _copy(root, "again")), pool.submit(_the_week, root)]
        for branch in branches:
            runs |= branch.result()
        branches = [
            pool.submit(_grade, _copy(root, "named"), "--student", "bob"),
            pool.submit(_stopped_then_resumed, _copy(root, "stopped")),
            pool.submit(_grade, _copy(root, "forced"), "--force"),
        ]
        runs["named"] = branches[0].result()
        runs |= branches[1].result()
        runs["forced"] = branches[2].result()
    return root, runs


def test_a_second_run_with_nothing_changed_grades_nobody(week):
    _, runs = week
    assert runs["first"]["status"] == 0, runs["first"]["err"][-2000:]
    assert runs["first"]["graded"] == ["ada", "bob", "cy"]
    assert _says(runs["first"], 3, 0)
    again = runs["again"]
    assert again["status"] == 0, again["err"][-2000:]
    assert again["graded"] == []
    assert _says(again, 0, 3)
    assert runs["again records"] == runs["first records"]  # not rewritten
    assert _row(again["out"], "ada")[-1] == f"{FULL:g}"  # the table still shows everyone


def test_the_record_holds_what_the_grade_depends_on(week):
    _, runs = week
    stored = runs["first records"]["ada"]["fingerprint"]
    assert set(stored) == {"kit", "assignment", "settings", "submission"}
    assert all(re.fullmatch(r"[0-9a-f]{64}", v) for v in stored.values())
    others = [runs["first records"][s]["fingerprint"] for s in ("bob", "cy")]
    assert len({f["submission"] for f in [stored, *others]}) == 3  # one a student
    assert all(
        f["kit"] == stored["kit"] and f["assignment"] == stored["assignment"] for f in others
    )


def test_changed_new_and_unfingerprinted_students_are_graded_the_rest_kept(week):
    _, runs = week
    week_run = runs["week"]
    assert week_run["status"] == 0, week_run["err"][-2000:]
    assert week_run["graded"] == ["ada", "cy", "dee"]
    assert _says(week_run, 3, 1)
    assert _row(week_run["out"], "cy")[-1] == f"{FULL:g}"


def test_the_table_shows_the_gradebooks_final_score_and_marks_a_manual_one(week):
    _, runs = week
    auto = _row(runs["first"]["out"], "bob")
    assert not auto[-1].endswith("*")
    for name in ("week", "named"):
        row = _row(runs[name]["out"], "bob")
        assert row[-1] == f"{float(auto[-1]) + 1:g}*", runs[name]["out"]
        assert "* a grader's manual score" in runs[name]["out"]


def test_a_named_student_is_graded_even_if_unchanged_and_alone(week):
    _, runs = week
    named = runs["named"]
    assert named["status"] == 0, named["err"][-2000:]
    assert named["graded"] == ["bob"]
    assert _says(named, 1, 0)
    assert [line.split()[0] for line in named["out"].splitlines() if "*" in line][:1] == ["bob"]
    assert not any(line.startswith(("ada ", "cy ", "dee ")) for line in named["out"].splitlines())


def test_after_ctrl_c_the_same_command_grades_exactly_the_rest(week):
    _, runs = week
    stopped, resumed = runs["stopped"], runs["resumed"]
    assert stopped["status"] == 130, stopped["err"][-2000:]
    assert "Run the same command again" in stopped["err"]
    first = stopped["graded"]
    assert len(first) >= 1
    assert resumed["status"] == 0, resumed["err"][-2000:]
    assert sorted(first + resumed["graded"]) == ["ada", "bob", "cy", "dee"]
    assert _says(resumed, 4 - len(first), len(first))


def test_force_regrades_everyone(week):
    _, runs = week
    assert runs["forced"]["status"] == 0, runs["forced"]["err"][-2000:]
    assert runs["forced"]["graded"] == ["ada", "bob", "cy", "dee"]
    assert _says(runs["forced"], 4, 0)


# --- the fingerprint, part by part -----------------------------------------------------------


@pytest.fixture
def small(tmp_path):
    shutil.copy2(ROOT / "nbgrader_config.py", tmp_path / "nbgrader_config.py")
    (tmp_path / "solutions" / "decomp").mkdir(parents=True)
    shutil.copy2(
        ROOT / "solutions" / "decomp" / f"{CHAIN}.ipynb", tmp_path / "solutions" / "decomp"
    )
    _write(tmp_path, "ada", submission(CHAIN))
    return tmp_path


def _parts(root, limits=None, bounds=None, kit="k") -> dict:
    from decompkit.course import fingerprint
    from decompkit.course.engine.limits import Limits

    found, _ = find_submissions(root, "submitted", "decomp", [CHAIN])
    return fingerprint.fingerprint(
        kit,
        fingerprint.assignment_digest(root / "solutions" / "decomp"),
        fingerprint.settings_digest(limits or Limits(), bounds),
        found["ada"],
        {},
    ).to_json()


@pytest.mark.parametrize(
    ("change", "part"),
    [
        ("kit", "kit"),
        ("limit", "settings"),
        ("walls", "settings"),
        ("solution", "assignment"),
        ("notebook", "submission"),
        ("extra file", "submission"),
    ],
)
def test_each_change_moves_its_own_part(small, change, part):
    from decompkit.course.engine.limits import Limits
    from decompkit.course.engine.sandbox import Bounds

    before = _parts(small)
    kwargs = {}
    if change == "kit":
        kwargs["kit"] = "another"
    elif change == "limit":
        kwargs["limits"] = Limits(cell=29.0)
    elif change == "walls":
        kwargs["bounds"] = Bounds()
    elif change == "solution":
        path = small / "solutions" / "decomp" / f"{CHAIN}.ipynb"
        path.write_bytes(path.read_bytes() + b"\n")
    elif change == "notebook":
        _write(small, "ada", _half())
    else:
        (small / "submitted" / "ada" / "decomp" / "timestamp.txt").write_text("2026-12-01 10:00")
    after = _parts(small, **kwargs)
    assert {k for k in before if before[k] != after[k]} == {part}


def test_the_same_files_give_the_same_fingerprint(small):
    assert _parts(small) == _parts(small)


# --- argument mistakes, before anything heavy --------------------------------------------------


def _fresh(root, *args) -> subprocess.CompletedProcess:
    """``grade.main(args)`` in a new interpreter; prints which heavy modules it had loaded."""
    probe = (
        "import sys; from decompkit.course import grade; "
        f"status = grade.main({[*args, '--root', str(root)]!r}); "
        "print(sorted(m for m in ('nbformat', 'nbgrader', 'nbclient', 'sqlalchemy') "
        "if m in sys.modules)); sys.exit(status)"
    )
    return subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["decmop"], "no assignment 'decmop' in solutions/"),
        (["decomp", "--student", "zed"], "no submission of 'decomp' from student 'zed'"),
        (["decomp", "--student", "ad a!"], "no submission of 'decomp' from student 'ad a!'"),
    ],
)
def test_a_mistake_in_the_command_is_one_line_before_any_heavy_import(small, args, words):
    done = _fresh(small, *args)
    assert done.returncode == 2, done.stderr
    assert done.stdout.strip() == "[]", "loaded before the mistake was found: " + done.stdout
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and words in lines[0], done.stderr


def test_an_empty_course_says_so_in_a_whole_sentence(small):
    shutil.rmtree(small / "submitted")
    done = _fresh(small, "decomp")
    assert done.returncode == 2, done.stderr
    line = done.stderr.strip()
    assert len(line.splitlines()) == 1
    assert "nothing collected for 'decomp'" in line and line.endswith(".")


def test_a_course_with_no_notebook_of_the_assignment_says_which_file_is_wrong(small):
    inbox = small / "submitted" / "ada" / "decomp"
    (inbox / f"{CHAIN}.ipynb").rename(inbox / "chain.ipynb")
    done = _fresh(small, "decomp")
    assert done.returncode == 2, done.stderr
    line = done.stderr.strip()
    assert len(line.splitlines()) == 1 and not line.endswith(":"), line
    assert f"is one of decomp's ({CHAIN}), so there is nothing to grade" in line
    assert "the first problem: submitted/ada/decomp/chain.ipynb: not a notebook of decomp" in line
