"""Feedback pages of a really graded submission: hints, no tracebacks, no hidden tests, no
paths of the grading machine, no script (maths as MathML), always current, the same page from
nbgrader's own command; and a look at the page in Chromium."""

from __future__ import annotations

import html
import os
import re
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import nbformat
import pytest

from decompkit.course import feedback
from decompkit.course.grade import autograde
from decompkit.exercises import chain
from decompkit.exercises.params import params

from .classroom import CHAIN, chain_record, write_record
from .conftest import write_submissions
from .submissions import ROOT

STUDENT = "wrong_chain"  # the bank's submission with ten wrong answers in notebook 1
PAGE = Path("feedback") / STUDENT / "decomp" / f"{CHAIN}.html"
#: What the visible check says of the bank's B1 answer (a retry taken as always right).
_P = params("chain", STUDENT)
HINT_B1 = chain.EXERCISE.diagnose("p_prime", _P.p + (1 - _P.p) * _P.d, _P).message


def _answers(student: str) -> dict:
    """The wrong answers the bank's submission computes, as the grader would read them."""
    P = params("chain", student)
    return {
        "chain_success_value": P.p * P.n,
        "p_prime_value": P.p + (1 - P.p) * P.d,
        "k_attempts_value": 1 - P.k * (1 - P.p),
        "undetected_floor_value": (1 - P.p) * P.d,
        "retry_limit_value": 1.0,
        "expected_attempts_value": 1 / P.p,
        "fallible_value": P.p + (1 - P.p) * P.d * P.p,
        "check_helps_value": P.phi_other > P.d_other,
        "per_step_value": P.p**P.n + (1 - P.p**P.n) * P.d_graph * P.p**P.n,
        "per_graph_value": (P.p + (1 - P.p) * P.d_graph * P.p) ** P.n,
    }


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    root = tmp_path_factory.mktemp("feedback-course")
    shutil.copy2(ROOT / "nbgrader_config.py", root / "nbgrader_config.py")
    shutil.copytree(ROOT / "solutions", root / "solutions")
    write_submissions(root, [STUDENT])
    results = autograde(root, "decomp", workers=1, timeout=30)
    chain_only = [r for r in results if r.notebook == CHAIN]
    assert [r.status for r in chain_only] == ["graded"], [r.message for r in results]
    return root  # the grader's own record of the student is what feedback reads


def _read(path: Path) -> str:
    """The page's HTML with every run of white space as one space."""
    return " ".join(path.read_text(encoding="utf-8").split())


@pytest.fixture(scope="module")
def page(graded):
    run = feedback.generate(graded, "decomp")
    assert graded / PAGE in run.written
    return _read(graded / PAGE)


def test_a_wrong_answer_gets_its_hint_in_plain_words(page):
    assert f"Hint: {HINT_B1}" in html.unescape(page)
    assert "B1 p_prime: 0 / 1 — not right" in page
    assert f"Your answer: <code>{html.escape(repr(_answers(STUDENT)['p_prime_value']))}" in page


def test_no_traceback_no_hidden_tests_no_paths(page, graded):
    assert "Traceback" not in page and "CheckFailed" not in page
    assert "HIDDEN TESTS" not in page and "rel_.checked_step(P_.p, P_.d)" not in page
    assert "assert close(" not in page
    for path in {str(graded), str(ROOT), sys.prefix, "/tmp/", str(Path.home()) + "/"}:
        assert path not in page


def test_items_are_named_in_the_table_of_contents(page):
    assert "Test cell" not in page
    for title in ("A1 p_chain", "B1 p_prime", "B4 e_attempts", "D2 reads"):  # label, variable
        assert f">{title}</a>" in page


def test_the_page_runs_no_script_and_its_maths_is_mathml(page):
    policy = html.escape(feedback.CONTENT_SECURITY_POLICY, quote=False)
    assert f'<meta content="{policy}" http-equiv="Content-Security-Policy"/>' in page
    assert "<script" not in page and "MathJax" not in page
    assert page.count("<math ") >= 20 and 'xmlns="http://www.w3.org/1998/Math/MathML"' in page
    assert 'class="dk-tex"' not in page  # every formula of the notebook converts
    for cdn in ("cdnjs", "jsdelivr", "unpkg", "mathjax.org"):
        assert cdn not in page
    assert len(page) < 150_000  # was 1.2 MB with MathJax inside


def _set_manual(root: Path, score: float) -> None:
    from nbgrader.api import Gradebook
    from sqlalchemy.exc import SAWarning

    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb, warnings.catch_warnings():
        warnings.simplefilter("ignore", SAWarning)
        gb.find_grade("p_prime_value", CHAIN, "decomp", STUDENT).manual_score = score
        gb.db.commit()


def test_a_manual_grade_counts_as_a_change(graded, page):
    again = feedback.generate(graded, "decomp")
    assert again.written == () and graded / PAGE in again.current
    _set_manual(graded, 0.0)  # formgrader's manual score: the same points, still a change
    pages = sorted((graded / "feedback" / STUDENT / "decomp").glob("*.html"))
    assert sorted(feedback.generate(graded, "decomp").written) == pages
    assert feedback.generate(graded, "decomp").written == ()


def test_a_manual_grade_shows_without_a_flag_on_both_command_paths(graded, page):
    _set_manual(graded, 1.0)
    assert graded / PAGE in feedback.generate(graded, "decomp").written
    kit_page = _read(graded / PAGE)
    assert "B1 p_prime: 1 / 1 — not right (score set by your grader)" in kit_page
    assert "Score: 4 / 14" in kit_page
    _set_manual(graded, 0.5)
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run(
        [sys.executable, "-m", "nbgrader", "generate_feedback", "decomp"],
        cwd=graded, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    nbgrader_page = _read(graded / PAGE)
    assert "B1 p_prime: 0.5 / 1" in nbgrader_page
    assert (
        nbgrader_page.replace("0.5 / 1", "1 / 1").replace("Score: 3.5 / 14", "Score: 4 / 14")
        == kit_page
    )


def test_a_kernel_death_is_stated_as_such(graded):
    record = chain_record("kernel_death", {}, status="kernel_died",
                          message="the kernel died while running this notebook")  # fmt: skip
    write_record(graded, record)
    feedback.generate(graded, "decomp", ["kernel_death"])
    page = _read(graded / "feedback" / "kernel_death" / "decomp" / f"{CHAIN}.html")
    assert "The Python kernel died while running this notebook" in page
    text = " ".join(re.sub(r"<[^>]+>", " ", page).split())  # what a reader sees
    assert "B1 p_prime 0 / 1 not graded: the notebook stopped before this cell ran" in text
    assert "What the grader saw: the kernel died while running this notebook." in text
    assert "not answered" not in page


def test_a_timed_out_item_is_not_called_unanswered(graded, tmp_path):
    record = chain_record("timed", {}, status="timeout", message="a cell ran past 30 s")
    record["notebooks"][CHAIN]["items"]["effective_rate_value"]["status"] = "timeout"
    write_record(tmp_path, record)
    nb = nbformat.read(graded / "autograded" / STUDENT / "decomp" / f"{CHAIN}.ipynb", 4)
    exporter = feedback.FeedbackExporter()
    exporter.register_preprocessor(feedback.FeedbackView, enabled=True)
    resources = {"nbgrader": {"student": "timed", "assignment": "decomp", "notebook": CHAIN,
                              "db_url": f"sqlite:///{tmp_path / 'gradebook.db'}"}}  # fmt: skip
    page, _ = exporter.from_notebook_node(nb, resources=resources)
    page = " ".join(page.split())
    assert "A cell of this notebook ran past the time limit and was stopped." in page
    assert "A2 effective_rate: 0 / 1 — not graded: the notebook was stopped at the time" in page


# --- in a browser -------------------------------------------------------------------------

CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = Path(__file__).resolve().parents[1] / "browser" / "artifacts"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
        "--disable-background-networking"]  # fmt: skip


@pytest.fixture(scope="module")
def chromium():
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        sync_playwright = None
    if sync_playwright is None or not CHROMIUM.exists():
        if os.environ.get("DECOMPKIT_REQUIRE_BROWSER") == "1":
            pytest.fail("Chromium or Playwright missing (run .ci/install-browser)")
        pytest.skip("Chromium or Playwright missing")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        yield browser
        browser.close()


def _open(browser, path: Path):
    page = browser.new_page(viewport={"width": 1280, "height": 720})
    requests = []
    page.on("request", lambda r: requests.append(r.url))
    page.goto(path.as_uri())
    return page, requests


@pytest.mark.browser
def test_the_page_in_chromium(graded, page, chromium):
    view, requests = _open(chromium, graded / PAGE)
    ARTIFACTS.mkdir(exist_ok=True)
    view.screenshot(path=str(ARTIFACTS / "feedback-summary.png"))
    assert [u for u in requests if not u.startswith("file:")] == []
    assert view.locator("math").count() >= 20  # typeset, not raw TeX
    assert view.locator("math").first.bounding_box()["width"] > 5  # rendered as MathML
    assert view.get_by_text("$p^n$").count() == 0
    row = view.locator("table.dk-toc tbody tr").nth(3)
    boxes = [row.locator("td").nth(i).bounding_box() for i in range(3)]
    assert boxes[0]["x"] + boxes[0]["width"] <= boxes[1]["x"] < boxes[2]["x"]
    view.locator("table.dk-toc a", has_text="B1 p_prime").click()
    verdict = view.locator("#p_prime_value")
    assert verdict.is_visible() and HINT_B1 in verdict.inner_text()
    view.screenshot(path=str(ARTIFACTS / "feedback-item.png"))
    view.close()


@pytest.mark.browser
def test_markdown_tables_render_as_tables(chromium, tmp_path):
    released = nbformat.read(ROOT / "notebooks" / "decomp" / "02-long-horizons.ipynb", 4)
    exporter = feedback.FeedbackExporter()
    exporter.register_preprocessor(feedback.FeedbackView, enabled=True)
    resources = {"nbgrader": {"student": "s1", "assignment": "decomp",
                              "notebook": "02-long-horizons"}}  # fmt: skip
    body, _ = exporter.from_notebook_node(released, resources=resources)
    (tmp_path / "page.html").write_text(body, encoding="utf-8")
    view, _ = _open(chromium, tmp_path / "page.html")
    table = view.locator(".jp-RenderedMarkdown table").first
    table.scroll_into_view_if_needed()
    view.screenshot(path=str(ARTIFACTS / "feedback-table.png"))
    cells = table.locator("tr").nth(1).locator("td")
    first, second = cells.nth(0).bounding_box(), cells.nth(1).bounding_box()
    assert first["x"] + first["width"] <= second["x"]
    assert float(cells.nth(0).evaluate("c => parseFloat(getComputedStyle(c).paddingLeft)")) > 0
    view.close()


def test_without_a_record_the_hint_comes_from_the_check_itself(graded, tmp_path):
    """A course graded by plain nbgrader (no grading record): the visible check's own message
    is the hint, still without its traceback."""
    nb = nbformat.read(graded / "autograded" / STUDENT / "decomp" / f"{CHAIN}.ipynb", 4)
    exporter = feedback.FeedbackExporter()
    exporter.register_preprocessor(feedback.FeedbackView, enabled=True)
    resources = {"nbgrader": {"student": STUDENT, "assignment": "decomp", "notebook": CHAIN,
                              "db_url": f"sqlite:///{tmp_path / 'gradebook.db'}"}}  # fmt: skip
    page = " ".join(exporter.from_notebook_node(nb, resources=resources)[0].split())
    assert f"Hint: {HINT_B1}" in html.unescape(page)
    assert ">B1 p_prime</a>" in page and "Traceback" not in page and "HIDDEN TESTS" not in page
