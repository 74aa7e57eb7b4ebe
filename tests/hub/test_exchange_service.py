"""The course as Zero to JupyterHub runs it: one uid for every server, the exchange a service.

Every user's server runs as the same unprivileged Unix user, each in its own mount and PID
namespace with a disk of its own (deploy/jupyterhub_pods_config.py, deploy/pod_entry.sh),
as every Kubernetes pod runs as uid 1000 with its own volume. Nothing is shared on disk:
assignments, submissions and feedback travel through ngshare, a JupyterHub service that
identifies every request by the caller's hub token (deploy/ngshare_service.py).

One instructor and three students (a full solution, a partial one, a blank notebook) go
from release to feedback. The instructor creates the course in ngshare and enrols the
class with ngshare-course-management, grades with the kit's grader and exports grades, all
from their own server (a kernel running the commands, as a terminal in the pod would);
releases, collects and hands out feedback through the formgrader. Students fetch, submit
and fetch feedback through the assignment-list endpoints of their own servers. Then one
student, with their own server's token, tries to read and overwrite a classmate's work
through the service, and to look past their pod. Only notebook 01 is answered and graded,
to keep the run short.
"""

from __future__ import annotations

import csv
import json
import re

import pytest
from course_steps import ASSIGNMENT, NOTEBOOK, answered, ok, solution_cells

from decompkit.exercises.params import params

pytestmark = pytest.mark.hub

COURSE = ASSIGNMENT
PARTIAL = {"chain_success_answer", "effective_rate_answer", "half_life_answer"}
QUERY = f"course_id={COURSE}&assignment_id={ASSIGNMENT}"


def run_in_pod(hub, user: str, *command: str, cwd: str | None = None, check: bool = True):
    """Run ``command`` inside ``user``'s pod, from a kernel of their server (as a terminal
    there would); returns (exit status, stdout, stderr)."""
    code = (
        "import json, subprocess\n"
        f"r = subprocess.run({list(command)!r}, cwd={cwd!r}, capture_output=True, text=True)\n"
        "print(json.dumps([r.returncode, r.stdout[-6000:], r.stderr[-6000:]]))"
    )
    status, out, err = json.loads(_execute(hub, user, code, timeout=600))
    if check and status != 0:
        raise AssertionError(f"{' '.join(command)} in {user}'s pod -> {status}:\n{out}\n{err}")
    return status, out, err


_KERNELS: dict[tuple[int, str], str] = {}


def _execute(hub, user: str, code: str, timeout: float = 60) -> str:
    """Run ``code`` in ``user``'s kernel (one per user, started on first use)."""
    key = (id(hub), user)
    if key not in _KERNELS:
        _KERNELS[key] = hub.server(user, "POST", "/api/kernels", {"name": "python3"})["id"]
    return hub.run_in_kernel(user, _KERNELS[key], code, timeout)


def in_kernel(hub, user: str, code: str):
    """Evaluate ``code`` (which sets ``result``) in a kernel of ``user``'s server."""
    printed = _execute(hub, user, f"{code}\nimport json\nprint(json.dumps(result))")
    return json.loads(printed.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def course(pod_hub):
    """Run the course once, from course creation to exported grades and released feedback."""
    with pod_hub.logs_on_failure():
        return _course(pod_hub)


def _course(pod_hub):
    hub = pod_hub.client
    repo = hub.deploy.REPO
    course_dir = str(pod_hub.home / "course")
    solution = solution_cells(repo)
    plans = dict(zip(hub.students, ["full", "partial", "blank"], strict=True))
    answers = {
        "full": solution,
        "partial": {k: v for k, v in solution.items() if k in PARTIAL},
        "blank": {},
    }
    for user in [hub.instructor, *hub.students]:
        hub.log_in(user)
    hub.start_servers([hub.instructor, *hub.students])

    # The instructor, an ngshare admin, creates the course and enrols the class.
    roster = pod_hub.disk(hub.instructor) / "course" / "students.csv"
    with open(roster, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["student_id", "first_name", "last_name", "email"])
        for index, user in enumerate(hub.students):
            writer.writerow([user, f"Student{index}", "Test", f"{user}@example.edu"])
    # (--no-gb: the grader adds each student to the gradebook when it grades them)
    manage = "ngshare-course-management"
    run_in_pod(hub, hub.instructor, manage, "create_course", COURSE, hub.instructor)
    run_in_pod(
        hub,
        hub.instructor,
        manage,
        "add_students",
        COURSE,
        "students.csv",
        "--no-gb",
        cwd=course_dir,
    )

    ok(hub.server(hub.instructor, "POST", f"/formgrader/api/assignment/{ASSIGNMENT}/release"))

    seen = {}
    for user, plan in plans.items():
        listed = ok(hub.server(user, "GET", f"/assignments?course_id={COURSE}"))["value"]
        assert [a["assignment_id"] for a in listed] == [ASSIGNMENT], listed
        ok(hub.server(user, "POST", f"/assignments/fetch?{QUERY}", {}))
        folder = hub.server(user, "GET", f"/api/contents/{ASSIGNMENT}")
        names = sorted(item["name"] for item in folder["content"])
        assert f"{NOTEBOOK}.ipynb" in names, names
        for name in names:  # submit notebook 01 only: keeps grading short
            if name != f"{NOTEBOOK}.ipynb":
                hub.server(user, "DELETE", f"/api/contents/{ASSIGNMENT}/{name}")
        path = f"/api/contents/{ASSIGNMENT}/{NOTEBOOK}.ipynb"
        model = hub.server(user, "GET", f"{path}?content=1")
        hub.server(user, "PUT", path, answered(model, answers[plan]))
        seen[user] = _execute(
            hub,
            user,
            "import os\nfrom decompkit.exercises.params import params\n"
            "print(os.environ.get('JUPYTERHUB_USER'))\nprint(repr(params('chain')))",
        ).splitlines()
        ok(hub.server(user, "POST", f"/assignments/submit?{QUERY}", {}))

    ok(hub.server(hub.instructor, "POST", f"/formgrader/api/assignment/{ASSIGNMENT}/collect"))
    python = str(hub.bindir / "python")
    _, out, err = run_in_pod(
        hub,
        hub.instructor,
        python,
        "-m",
        "decompkit.course",
        "grade",
        ASSIGNMENT,
        "--workers",
        "2",
        cwd=course_dir,
    )
    run_in_pod(hub, hub.instructor, "nbgrader", "export", cwd=course_dir)
    with open(pod_hub.disk(hub.instructor) / "course" / "grades.csv") as handle:
        grades = {row["student_id"]: row for row in csv.DictReader(handle)}
    for action in ("generate_feedback", "release_feedback"):
        ok(hub.server(hub.instructor, "POST", f"/formgrader/api/assignment/{ASSIGNMENT}/{action}"))
    return {"plans": plans, "seen": seen, "grades": grades, "grading_log": out + err}


def test_every_server_runs_as_the_one_pod_uid(pod_hub, course):
    hub = pod_hub.client
    for user in [hub.instructor, *hub.students]:
        found = in_kernel(
            hub,
            user,
            "import os, pwd\n"
            "result = [os.getuid(), pwd.getpwuid(os.getuid()).pw_name, os.environ['HOME'],"
            " os.environ['JUPYTERHUB_USER']]",
        )
        assert found == [
            found[0],
            pod_hub.pod_user,
            str(pod_hub.home),
            user,
        ], found
        assert found[0] != 0


def test_scores_full_partial_blank(pod_hub, course):
    hub = pod_hub.client
    code = (
        "from nbgrader.api import Gradebook\n"
        "with Gradebook('sqlite:///gradebook.db') as gb:\n"
        f"    print(gb.find_notebook({NOTEBOOK!r}, {ASSIGNMENT!r}).max_score)"
    )
    _, out, _ = run_in_pod(
        hub,
        hub.instructor,
        str(hub.bindir / "python"),
        "-c",
        code,
        cwd=str(pod_hub.home / "course"),
    )
    total = float(out.strip())
    assert total >= len(PARTIAL) + 1
    expected = {"full": total, "partial": float(len(PARTIAL)), "blank": 0.0}
    got = {course["plans"][s]: float(course["grades"][s]["score"]) for s in hub.students}
    assert got == expected, course["grading_log"][-3000:]


def test_each_student_sees_their_own_variant(pod_hub, course):
    hub = pod_hub.client
    shown = {}
    for user in hub.students:
        hub_user, numbers = course["seen"][user]
        assert hub_user == user
        assert numbers == repr(params("chain", user))
        shown[user] = numbers
    assert len(set(shown.values())) == len(hub.students), shown


def _feedback_files(hub, user: str) -> dict[str, str]:
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


def test_feedback_reaches_the_right_student(pod_hub, course):
    hub = pod_hub.client
    for user in hub.students:
        ok(hub.server(user, "POST", f"/assignments/fetch_feedback?{QUERY}", {}))
        files = _feedback_files(hub, user)
        pages = {path: text for path, text in files.items() if path.endswith(".html")}
        assert [path.rsplit("/", 1)[-1] for path in pages] == [f"{NOTEBOOK}.html"], files
        (page,) = pages.values()
        score = float(course["grades"][user]["score"])
        shown = re.search(r"Score:\s*([\d.]+)\s*/\s*([\d.]+)", page)
        assert shown, page[:2000]
        assert float(shown.group(1)) == score
        assert repr(params("chain", user).p) in page
    scores = [float(course["grades"][u]["score"]) for u in hub.students]
    assert len(set(scores)) == 3


# --- one student against another -----------------------------------------------------------

PROBE = """
import json, os, urllib.error, urllib.parse, urllib.request
TOKEN = os.environ["JUPYTERHUB_API_TOKEN"]

def call(method, path, data=None, params=None):
    url = SERVICE + path + ("?" + urllib.parse.urlencode(params) if params else "")
    body = urllib.parse.urlencode(data).encode() if data is not None else None
    request = urllib.request.Request(url, data=body, method=method,
                                     headers={"Authorization": "token " + TOKEN})
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return [answer.status, json.loads(answer.read())]
    except urllib.error.HTTPError as error:
        return [error.code, error.read().decode()[:300]]
"""


def _probe(pod_hub, user: str, calls: str):
    """Run ``calls`` (which set ``result``) in ``user``'s kernel with ``call`` defined."""
    setup = f"SERVICE = {pod_hub.service_url!r}\n{PROBE}\n"
    return in_kernel(pod_hub.client, user, setup + calls)


def test_a_student_token_cannot_reach_a_classmates_work(pod_hub, course):
    hub = pod_hub.client
    attacker, victim = hub.students[0], hub.students[1]
    base = f"/{COURSE}/{ASSIGNMENT}"
    notebook = [{"path": f"{NOTEBOOK}.ipynb", "content": "e30K"}]  # base64 of "{}\n"
    answers = _probe(
        pod_hub,
        attacker,
        "result = {\n"
        f"  'own list': call('GET', '/submissions{base}/{attacker}'),\n"
        f"  'victim list': call('GET', '/submissions{base}/{victim}'),\n"
        f"  'everyone list': call('GET', '/submissions{base}'),\n"
        f"  'victim download': call('GET', '/submission{base}/{victim}'),\n"
        f"  'victim feedback': call('GET', '/feedback{base}/{victim}',"
        "                           params={'timestamp': '2000-01-01 00:00:00.000000'}),\n"
        f"  'feedback upload': call('POST', '/feedback{base}/{victim}',"
        f"                          {{'timestamp': '2000-01-01 00:00:00.000000',"
        f"                            'files': {json.dumps(json.dumps(notebook))}}}),\n"
        f"  'release over': call('POST', '/assignment{base}',"
        f"                       {{'files': {json.dumps(json.dumps(notebook))}}}),\n"
        f"  'unrelease': call('DELETE', '/assignment{base}'),\n"
        f"  'roster': call('GET', '/students/{COURSE}'),\n"
        f"  'enrol': call('POST', '/student/{COURSE}/intruder',"
        "                {'first_name': 'a', 'last_name': 'b', 'email': 'c'}),\n"
        "}",
    )
    assert answers["own list"][0] == 200  # the token works: it is the attacker's own
    assert [s["student_id"] for s in answers["own list"][1]["submissions"]] == [attacker]
    for name, (status, _) in answers.items():
        if name != "own list":
            assert status == 403, (name, answers[name])

    # A submission "as" the victim lands under the attacker's name: the service takes the
    # name from the hub token, never from the request.
    spoofed = _probe(
        pod_hub,
        attacker,
        f"result = call('POST', '/submission{base}',"
        f" {{'user': {victim!r}, 'files': {json.dumps(json.dumps(notebook))}}})",
    )
    assert spoofed[0] == 200, spoofed
    listing = _probe(
        pod_hub,
        hub.instructor,
        f"result = [call('GET', '/submissions{base}/{attacker}'),"
        f" call('GET', '/submissions{base}/{victim}')]",
    )
    attacker_times = [s["timestamp"] for s in listing[0][1]["submissions"]]
    victim_times = [s["timestamp"] for s in listing[1][1]["submissions"]]
    assert len(attacker_times) == 2 and spoofed[1]["timestamp"] in attacker_times, listing
    assert len(victim_times) == 1, listing

    # Nor does the attacker's hub token open the victim's server.
    with pytest.raises(AssertionError, match=r"-> 403"):
        hub.request(
            "GET", f"/user/{victim}/api/contents/{ASSIGNMENT}", hub.tokens[attacker], timeout=30
        )


def test_a_pod_sees_only_its_own_disk_and_processes(pod_hub, course):
    hub = pod_hub.client
    attacker, victim = hub.students[0], hub.students[1]
    seen = in_kernel(
        hub,
        attacker,
        "import os\n"
        f"disks = {str(pod_hub.pods / 'disks')!r}\n"
        "users = set()\n"
        "for pid in filter(str.isdigit, os.listdir('/proc')):\n"
        "    try:\n"
        "        env = open(f'/proc/{pid}/environ', 'rb').read().split(b'\\0')\n"
        "    except OSError:\n"
        "        continue\n"
        "    users |= {e.split(b'=', 1)[1].decode() for e in env"
        " if e.startswith(b'JUPYTERHUB_USER=')}\n"
        "try:\n"
        "    open('/etc/decompkit-probe', 'w')\n"
        "    root_writable = True\n"
        "except OSError:\n"
        "    root_writable = False\n"
        "result = {'disks': os.listdir(disks), 'users': sorted(users),"
        f" 'victim disk': os.path.exists(os.path.join(disks, {victim!r})),"
        " 'own files': sorted(os.listdir(os.environ['HOME'])),"
        " 'root writable': root_writable}",
    )
    assert seen["disks"] == [] and not seen["victim disk"], seen
    assert seen["users"] == [attacker], seen  # no other server's process (or its token)
    assert ASSIGNMENT in seen["own files"], seen
    assert not seen["root writable"], seen
    # The victim's work is still there, on the victim's disk.
    assert (pod_hub.disk(victim) / ASSIGNMENT / f"{NOTEBOOK}.ipynb").is_file()


def test_only_the_instructor_has_the_formgrader(pod_hub, course):
    hub = pod_hub.client
    with pytest.raises(AssertionError, match=r"-> 404"):
        hub.server(hub.students[0], "GET", "/formgrader/api/assignments")
    listed = hub.server(hub.instructor, "GET", "/formgrader/api/assignments")
    assert ASSIGNMENT in [a["name"] for a in listed]
