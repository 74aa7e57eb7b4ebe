"""A class as it comes: an LMS zip of twenty students, collected and graded by the commands.

The download mixes Canvas and Moodle names, a late mark, a resubmission, a browser's duplicate
mark, a misnamed file, ids that differ in case or carry accents, missing notebooks, wrong
answers, a cell that loops, a notebook of many slow cells, a hostile cell, a kernel that dies
and a file that is not JSON. ``collect`` and ``grade`` run as the instructor runs them (their
``main``), with short limits; the tests read the gradebook, the records and what was printed.
"""

from __future__ import annotations

import json
import shutil
import zipfile

import nbformat
import pytest

from decompkit.course import collect, grade

from .bank import ALL, CASES, FAILED, PATCH_MODULES
from .submissions import ROOT, insert_after, points, submission

CHAIN, HORIZON, PLANS = "01-chain-reliability", "02-long-horizons", "03-plans-as-objects"
ASSIGNMENT = [CHAIN, HORIZON, PLANS]
CELL, NOTEBOOK, STUDENT = 3, 8, 40  # seconds: the limits of this run
BANK = {case.student: case for case in CASES}

#: A cell that looks for a gradebook up the folders and overwrites it, then patches the tests.
HOSTILE = (
    "import pathlib\n"
    "for up in range(1, 4):\n"
    "    found = pathlib.Path('../' * up) / 'gradebook.db'\n"
    "    if found.exists():\n"
    "        found.write_text('rewritten by a submission')\n" + PATCH_MODULES
)


def _case(name, notebook):
    return BANK[name].notebooks[notebook]


def _slow():
    nb = submission(CHAIN)
    nb.cells += [
        nbformat.v4.new_code_cell(f"import time\ntime.sleep({CELL - 0.5})") for _ in range(12)
    ]
    return nb


def _hostile():
    nb = submission(
        CHAIN, {"chain_success_answer": "p_chain = 0.5", "p_prime_answer": "p_prime = 0.5"}
    )
    return insert_after(nb, "chain_success_answer", HOSTILE)


SOLVED = lambda notebook: lambda: submission(notebook)  # noqa: E731

#: (file name in the zip, builder) - what the LMS hands back
ZIP = [
    ("abbottann_10001_20001_01-chain-reliability.ipynb", SOLVED(CHAIN)),
    ("abbottann_10001_20002_02-long-horizons.ipynb", SOLVED(HORIZON)),
    ("abbottann_10001_20003_03-plans-as-objects.ipynb", SOLVED(PLANS)),
    ("bakerben_10002_20004_01-chain-reliability.ipynb", SOLVED(CHAIN)),
    ("bakerben_10002_20005_02-long-horizons.ipynb", SOLVED(HORIZON)),
    ("carrcara_LATE_10003_20006_01-chain-reliability.ipynb", _case("wrong_chain", CHAIN)),
    ("carrcara_LATE_10003_20007_02-long-horizons.ipynb", SOLVED(HORIZON)),
    ("diazdan_10004_20008_01-chain-reliability.ipynb", _case("wrong_chain", CHAIN)),
    ("diazdan_10004_20009_01-chain-reliability-1.ipynb", SOLVED(CHAIN)),
    ("Zoë Müller_30005_assignsubmission_file_/01-chain-reliability.ipynb", SOLVED(CHAIN)),
    (
        "Zoë Müller_30005_assignsubmission_file_/02-long-horizons.ipynb",
        _case("wrong_horizon", HORIZON),
    ),  # fmt: skip
    (
        "Jane Doe_30006_assignsubmission_file_01-chain-reliability.ipynb",
        _case("untouched", CHAIN),
    ),  # fmt: skip
    ("S2007_01-chain-reliability.ipynb", SOLVED(CHAIN)),
    ("s2007_02-long-horizons.ipynb", SOLVED(HORIZON)),
    ("s2008_01-chain-reliability (1).ipynb", SOLVED(CHAIN)),
    ("s2009_chain.ipynb", SOLVED(CHAIN)),
    ("s2009_02-long-horizons.ipynb", SOLVED(HORIZON)),
    ("s2010_01-chain-reliability.ipynb", _case("infinite_loop", CHAIN)),
    ("s2010_02-long-horizons.ipynb", SOLVED(HORIZON)),
    ("s2011_01-chain-reliability.ipynb", _slow),
    ("s2011_02-long-horizons.ipynb", SOLVED(HORIZON)),
    ("s2012_01-chain-reliability.ipynb", _hostile),
    ("s2012_02-long-horizons.ipynb", SOLVED(HORIZON)),
    ("s2013_01-chain-reliability.ipynb", _case("kernel_death", CHAIN)),
    ("s2013_02-long-horizons.ipynb", SOLVED(HORIZON)),
    ("s2014_01-chain-reliability.ipynb", _case("invalid_json", CHAIN)),
    ("s2014_02-long-horizons.ipynb", SOLVED(HORIZON)),
    ("s2015_01-chain-reliability.ipynb", _case("wrong_chain_2", CHAIN)),
    *[(f"s20{n}_01-chain-reliability.ipynb", SOLVED(CHAIN)) for n in range(16, 21)],
    ("readme.txt", None),
]

LOST = {  # (student, notebook) -> what it loses (as the bank says), or the grader's status
    ("carrcara", CHAIN): BANK["wrong_chain"].lose[CHAIN],
    ("zoe-muller", HORIZON): ALL,
    ("jane-doe", CHAIN): ALL,
    ("s2010", CHAIN): {"effective_rate_value"},
    ("s2012", CHAIN): {"chain_success_value", "p_prime_value"},
    ("s2013", CHAIN): FAILED,
    ("s2014", CHAIN): FAILED,
    ("s2015", CHAIN): BANK["wrong_chain_2"].lose[CHAIN],
}
STATUS = {
    ("s2010", CHAIN): "timeout",
    ("s2011", CHAIN): "time_limit",
    ("s2013", CHAIN): "kernel_died",
    ("s2014", CHAIN): "unreadable",
}
HANDED_IN = {
    "abbottann": ASSIGNMENT,
    "bakerben": [CHAIN, HORIZON],
    "carrcara": [CHAIN, HORIZON],
    "diazdan": [CHAIN],
    "zoe-muller": [CHAIN, HORIZON],
    "jane-doe": [CHAIN],
    "s2007": [CHAIN, HORIZON],
    "s2008": [CHAIN],
    "s2009": [HORIZON],
    **{s: [CHAIN, HORIZON] for s in ("s2010", "s2011", "s2012", "s2013", "s2014")},
    **{f"s20{n}": [CHAIN] for n in range(15, 21)},
}


def _expected(student, notebook) -> float:
    if notebook not in HANDED_IN[student]:
        return 0.0
    lose = LOST.get((student, notebook), set())
    full = points(notebook)
    if lose in (ALL, FAILED):
        return 0.0
    return sum(v for k, v in full.items() if k not in lose)


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    root = tmp_path_factory.mktemp("class")
    shutil.copy2(ROOT / "nbgrader_config.py", root / "nbgrader_config.py")
    for notebook in ASSIGNMENT:
        target = root / "solutions" / "decomp" / f"{notebook}.ipynb"
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / "solutions" / "decomp" / f"{notebook}.ipynb", target)
    archive = root / "downloaded" / "decomp" / "archive" / "submissions.zip"
    archive.parent.mkdir(parents=True)
    with zipfile.ZipFile(archive, "w") as zf:
        for name, build in ZIP:
            made = build() if build is not None else b"notes"
            zf.writestr(name, made if isinstance(made, bytes) else nbformat.writes(made))
    return root


@pytest.fixture(scope="module")
def outputs(graded):
    import contextlib
    import io

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        collected = collect.main(["decomp", "--root", str(graded)])
        status = grade.main(
            ["decomp", "--root", str(graded), "--workers", "2", "--timeout", str(CELL),
             "--notebook-limit", str(NOTEBOOK), "--student-limit", str(STUDENT),
             "--kit-guard", "report"]
        )  # fmt: skip
    return collected, status, out.getvalue(), err.getvalue()


def _gradebook(root):
    from nbgrader.api import Gradebook

    found = {}
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        for sub in gb.find_assignment("decomp").submissions:
            for nb in sub.notebooks:
                found[(sub.student.id, nb.name)] = (nb.score, nb.flagged)
    return found


def test_every_placeable_notebook_is_graded_and_nobody_is_zeroed(graded, outputs):
    collected, status, out, err = outputs
    assert collected == 1  # the misnamed file was left out, and said so
    assert "s2009_chain.ipynb: no notebook of the assignment" in out
    book = _gradebook(graded)
    assert {s for s, _ in book} == set(HANDED_IN)
    for student in HANDED_IN:
        for notebook in ASSIGNMENT:
            score, _ = book[(student, notebook)]
            assert score == pytest.approx(_expected(student, notebook)), (student, notebook)


def test_what_went_wrong_is_named_in_the_gradebook_the_records_and_the_report(graded, outputs):
    _, status, out, err = outputs
    assert status == 1  # some notebooks could not be graded in full
    book = _gradebook(graded)
    for (student, notebook), state in STATUS.items():
        record = json.loads((graded / "records" / "decomp" / f"{student}.json").read_text())
        entry = record["notebooks"][notebook]
        assert entry["status"] == state and entry["flagged"] and entry["message"]
        assert book[(student, notebook)][1] is True
        assert f"  {student}  {notebook}: " in out
    assert book[("s2012", CHAIN)][1] is True  # the hostile cell is flagged
    hostile = json.loads((graded / "records" / "decomp" / "s2012.json").read_text())
    cells = _hostile().cells  # the flag names the hostile cell by its index in the notebook
    at = next(i for i, c in enumerate(cells) if c.source == HOSTILE)
    assert hostile["notebooks"][CHAIN]["flags"][0].startswith(f"cell {at}, line 5: path contains")
    assert not book[("abbottann", CHAIN)][1] and not book[("s2016", CHAIN)][1]
    loop = json.loads((graded / "records" / "decomp" / "s2010.json").read_text())
    item = loop["notebooks"][CHAIN]["items"]["effective_rate_value"]
    assert (item["status"], item["score"]) == ("timeout", 0.0)
    assert "Could not be graded in full (4)" in out
    assert "Flagged by the integrity scan" in out and "s2012" in out
    assert "Traceback" not in out + err


def test_a_notebook_of_many_slow_cells_is_stopped_by_its_limit(graded, outputs):
    record = json.loads((graded / "records" / "decomp" / "s2011.json").read_text())
    slow = record["notebooks"][CHAIN]
    assert slow["status"] == "time_limit"
    assert f"notebook's {NOTEBOOK:g} s time limit" in slow["message"]
    assert slow["score"] == slow["max_score"]  # every test had run before the slow cells
    assert record["notebooks"][HORIZON]["status"] == "graded"


def test_the_hostile_cell_gains_nothing_and_touches_no_one_else(graded, outputs):
    book = _gradebook(graded)
    assert book[("s2012", HORIZON)][0] == sum(points(HORIZON).values())
    assert (graded / "gradebook.db").read_bytes()[:15] == b"SQLite format 3"


def test_each_record_says_what_was_judged(graded, outputs):
    record = json.loads((graded / "records" / "decomp" / "carrcara.json").read_text())
    assert record["schema"] == 1 and record["student"] == "carrcara"
    assert record["source_names"][0] == "carrcara_LATE_10003_20006_01-chain-reliability.ipynb"
    chain = record["notebooks"][CHAIN]
    assert chain["score"] == _expected("carrcara", CHAIN)
    wrong = chain["items"]["chain_success_value"]
    assert (wrong["status"], wrong["score"], wrong["item"]) == ("off", 0.0, "chain_success")
    assert wrong["answer"] is not None
    blank = json.loads((graded / "records" / "decomp" / "jane-doe.json").read_text())
    assert {i["status"] for i in blank["notebooks"][CHAIN]["items"].values()} <= {
        "unanswered", "off", "invalid"}  # fmt: skip
    assert blank["notebooks"][PLANS]["status"] == "missing"


def test_progress_and_table_are_what_an_instructor_reads(outputs):
    _, _, out, err = outputs
    assert "[ 1/20]" in err and "[20/20]" in err
    assert "decomp: 20 students graded in" in out
    maximum = next(line for line in out.splitlines() if line.startswith("max "))
    assert maximum.split() == ["max", "14", "10", "12", "36"]
    row = next(line for line in out.splitlines() if line.startswith("abbottann"))
    assert row.split() == ["abbottann", "14", "10", "12", "36"]


def test_with_workers_the_likely_longest_submissions_start_first(tmp_path):
    from decompkit.course.engine.workers import _cost
    from decompkit.course.submissions import Submission

    def handed_in(student, sizes):
        files = {}
        for i, size in enumerate(sizes):
            path = tmp_path / f"{student}-{i}.ipynb"
            path.write_bytes(b"x" * size)
            files[f"n{i}"] = path
        return Submission(student, [tmp_path], files)

    lost = handed_in("lost", [5])
    lost.files["n1"] = tmp_path / "gone.ipynb"  # vanished since it was found: no error here
    class_ = [handed_in("one", [900]), handed_in("three", [10, 10, 10]), lost]
    class_.append(handed_in("two_big", [400, 400]))
    class_.append(handed_in("two_small", [10, 20]))
    order = [s.student for s in sorted(class_, key=_cost, reverse=True)]
    assert order == ["three", "two_big", "two_small", "lost", "one"]
