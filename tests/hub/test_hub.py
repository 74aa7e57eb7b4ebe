"""The course on a real JupyterHub: release, fetch, answer, submit, grade, feedback.

One instructor and three students (a full solution, a partial one, a blank notebook) go
through the course as the README's "Running a course" describes, every step by its real
process: the hub and its proxy, one single-user server per Unix user, nbgrader's exchange.
Students act only through their own servers (contents API, kernels over the websocket,
nbgrader's assignment-list endpoints); the instructor releases, collects and hands out
feedback through the formgrader's REST API and grades from a shell, as an instructor does.
Only notebook 01 is answered and graded (the others are deleted before submitting) to keep
the run short.
"""

from __future__ import annotations

import csv
import json
import pwd
import re
import subprocess
from pathlib import Path

import pytest
from course_steps import ASSIGNMENT, NOTEBOOK, answered, ok, solution_cells

from decompkit.exercises.params import params

pytestmark = pytest.mark.hub

# Answered in the partial submission; each answer is graded by exactly one 1-point test.
PARTIAL = {"chain_success_answer", "effective_rate_answer", "half_life_answer"}
REPO = Path(__file__).resolve().parents[2]
QUERY = f"course_id={ASSIGNMENT}&assignment_id={ASSIGNMENT}"


@pytest.fixture(scope="module")
def course(hub):
    """Run the course once, from release to exported grades; the tests look at the result."""
    solution = solution_cells(REPO)
    plans = dict(zip(hub.students, ["full", "partial", "blank"], strict=True))
    answers = {
        "full": solution,
        "partial": {k: v for k, v in solution.items() if k in PARTIAL},
        "blank": {},
    }
    assert len(answers["partial"]) == len(PARTIAL)

    for user in [hub.instructor, *hub.students]:
        hub.log_in(user)
    hub.start_servers([hub.instructor, *hub.students])

    # The instructor releases through the formgrader (notebooks/decomp -> exchange outbound).
    ok(hub.server(hub.instructor, "POST", f"/formgrader/api/assignment/{ASSIGNMENT}/release"))

    seen = {}
    for user, plan in plans.items():
        listed = hub.server(user, "GET", f"/assignments?course_id={ASSIGNMENT}")
        assert [a["assignment_id"] for a in ok(listed)["value"]] == [ASSIGNMENT]
        hub.server(user, "POST", f"/assignments/fetch?{QUERY}", {})
        folder = hub.server(user, "GET", f"/api/contents/{ASSIGNMENT}")
        names = sorted(item["name"] for item in folder["content"])
        assert f"{NOTEBOOK}.ipynb" in names, names
        for name in names:  # submit notebook 01 only: keeps grading short
            if name != f"{NOTEBOOK}.ipynb":
                hub.server(user, "DELETE", f"/api/contents/{ASSIGNMENT}/{name}")
        path = f"/api/contents/{ASSIGNMENT}/{NOTEBOOK}.ipynb"
        model = hub.server(user, "GET", f"{path}?content=1")
        hub.server(user, "PUT", path, answered(model, answers[plan]))
        # The numbers this student sees in a kernel of their own server.
        seen[user] = hub.execute(
            user,
            "import os\nfrom decompkit.exercises.params import params\n"
            "print(os.environ.get('JUPYTERHUB_USER'))\nprint(repr(params('chain')))",
        ).splitlines()
        ok(hub.server(user, "POST", f"/assignments/submit?{QUERY}", {}))

    ok(hub.server(hub.instructor, "POST", f"/formgrader/api/assignment/{ASSIGNMENT}/collect"))
    grading = hub.as_user(
        hub.instructor,
        str(hub.bindir / "python"),
        "-m",
        "decompkit.course",
        "grade",
        ASSIGNMENT,
        "--workers",
        "2",
        cwd=hub.course,
    )
    hub.as_user(hub.instructor, "nbgrader", "export", cwd=hub.course)
    with open(hub.course / "grades.csv") as handle:
        grades = {row["student_id"]: row for row in csv.DictReader(handle)}

    return {
        "plans": plans,
        "seen": seen,
        "grades": grades,
        "grading_log": grading.stdout + grading.stderr,
    }


def _feedback_files(hub, user: str) -> dict[str, str]:
    """Every file under ~user/decomp/feedback/, read through the user's server."""
    found = {}
    pending = [f"{ASSIGNMENT}/feedback"]
    while pending:
        folder = hub.server(user, "GET", f"/api/contents/{pending.pop()}")
        for item in folder["content"]:
            if item["type"] == "directory":
                pending.append(item["path"])
            else:
                found[item["path"]] = hub.server(user, "GET", f"/api/contents/{item['path']}")[
                    "content"
                ]
    return found


def _max_score(hub) -> float:
    """The notebook's total points, from the gradebook the grader filled."""
    code = (
        "from nbgrader.api import Gradebook\n"
        "with Gradebook('sqlite:///gradebook.db') as gb:\n"
        f"    print(gb.find_notebook({NOTEBOOK!r}, {ASSIGNMENT!r}).max_score)"
    )
    result = hub.as_user(hub.instructor, str(hub.bindir / "python"), "-c", code, cwd=hub.course)
    return float(result.stdout.strip())


def test_scores_full_partial_blank(hub, course):
    total = _max_score(hub)
    assert total >= len(PARTIAL) + 1  # the partial score must differ from the full one
    expected = {"full": total, "partial": float(len(PARTIAL)), "blank": 0.0}
    got = {course["plans"][s]: float(course["grades"][s]["score"]) for s in hub.students}
    assert got == expected, course["grading_log"][-3000:]


def test_each_student_sees_their_own_variant(hub, course):
    shown = {}
    for user in hub.students:
        hub_user, numbers = course["seen"][user]
        assert hub_user == user  # the spawner's JUPYTERHUB_USER reaches the kernel
        assert numbers == repr(params("chain", user))  # every number of notebook 01
        shown[user] = numbers
    # Ten numbers per student: equal sets would mean the id is not used at all.
    assert len(set(shown.values())) == len(hub.students), shown
    assert repr(params("chain")) not in shown.values()  # not the lecture's numbers


def _denied(result: subprocess.CompletedProcess) -> bool:
    return result.returncode != 0 and "Permission denied" in result.stderr


def test_students_cannot_read_each_other_or_the_inbound(hub, course):
    inbound = hub.exchange / ASSIGNMENT / "inbound"
    submissions = sorted(p.name for p in inbound.iterdir())
    assert len(submissions) == len(hub.students)
    first, second = hub.students[0], hub.students[1]
    other_copy = f"{pwd.getpwnam(second).pw_dir}/{ASSIGNMENT}/{NOTEBOOK}.ipynb"
    collected = hub.course / "submitted" / second / ASSIGNMENT / f"{NOTEBOOK}.ipynb"
    assert collected.is_file()
    for command in (
        ["ls", str(inbound)],
        ["cat", other_copy],
        ["cat", str(collected)],
        ["ls", str(hub.course)],
    ):
        result = hub.as_user(first, *command, check=False)
        assert _denied(result), (command, result.returncode, result.stdout, result.stderr)
    # The denials are not a broken account: the same user reads their own work.
    own = f"{pwd.getpwnam(first).pw_dir}/{ASSIGNMENT}/{NOTEBOOK}.ipynb"
    assert hub.as_user(first, "cat", own).stdout


def test_feedback_reaches_the_right_student(hub, course):
    for action in ("generate_feedback", "release_feedback"):
        ok(hub.server(hub.instructor, "POST", f"/formgrader/api/assignment/{ASSIGNMENT}/{action}"))
    for user in hub.students:
        hub.server(user, "POST", f"/assignments/fetch_feedback?{QUERY}", {})
        files = _feedback_files(hub, user)
        pages = {path: text for path, text in files.items() if path.endswith(".html")}
        assert [path.rsplit("/", 1)[-1] for path in pages] == [f"{NOTEBOOK}.html"], files
        (page,) = pages.values()
        score = float(course["grades"][user]["score"])
        shown = re.search(r"Score:\s*([\d.]+)\s*/\s*([\d.]+)", page)
        assert shown, page[:2000]
        assert float(shown.group(1)) == score
        # The page is this student's: their own numbers are printed in it.
        assert repr(params("chain", user).p) in page
    scores = [float(course["grades"][u]["score"]) for u in hub.students]
    assert len(set(scores)) == 3


def _disabled_in_lab(hub, user: str) -> list[str]:
    """The JupyterLab plugins disabled in ``user``'s page (the page's own config data)."""
    page = hub.server(user, "GET", "/lab")
    data = re.search(
        r'<script id="jupyter-config-data" type="application/json">(.*?)</script>', page, re.S
    )
    assert data, page[:500]
    return list(json.loads(data.group(1)).get("disabledExtensions", []))


def test_only_the_instructor_has_the_formgrader(hub, course):
    student = hub.students[0]
    with pytest.raises(AssertionError, match=r"-> 404"):
        hub.server(student, "GET", "/formgrader/api/assignments")
    assert "@jupyter/nbgrader:formgrader" in _disabled_in_lab(hub, student)
    listed = hub.server(hub.instructor, "GET", "/formgrader/api/assignments")
    assert ASSIGNMENT in [a["name"] for a in listed]
    assert "@jupyter/nbgrader:formgrader" not in _disabled_in_lab(hub, hub.instructor)
