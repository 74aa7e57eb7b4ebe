"""The feedback page of a hostile submission (tests/grading/hostile.py), graded by the kit and
opened from disk in Chromium as a student would: no script of the submission runs, nothing is
requested, and the page still reads (maths typeset, the answers and verdicts, notes where the
grader removed something)."""

from __future__ import annotations

import shutil

import pytest

from decompkit.course import feedback

from .hostile import ARTIFACTS, CHAIN, MARK, Watch, chromium_browser, grade_hostile, surface
from .submissions import ROOT

STUDENT = "mallory"


@pytest.fixture(scope="module")
def page_path(tmp_path_factory):
    root = tmp_path_factory.mktemp("hostile-feedback")
    shutil.copy2(ROOT / "nbgrader_config.py", root / "nbgrader_config.py")
    shutil.copytree(ROOT / "solutions", root / "solutions")
    grade_hostile(root, STUDENT)
    feedback.generate(root, "decomp", [STUDENT])
    return root / "feedback" / STUDENT / "decomp" / f"{CHAIN}.html"


@pytest.fixture(scope="module")
def browser():
    with chromium_browser() as chromium:
        yield chromium


def test_the_page_holds_nothing_a_browser_would_run(page_path):
    page = page_path.read_text(encoding="utf-8")
    assert "<script" not in page.lower()
    body = page.split("<body", 1)[1]
    assert surface(body, allow=frozenset({"math"})) == []  # MathML made by the kit


@pytest.mark.browser
def test_no_script_of_the_submission_runs_in_its_feedback_page(page_path, browser):
    view = browser.new_page(viewport={"width": 1280, "height": 720})
    watch = Watch(view)
    view.goto(page_path.as_uri())
    view.wait_for_timeout(1000)  # time for any handler or refresh that could fire to fire
    ARTIFACTS.mkdir(exist_ok=True)
    view.screenshot(path=str(ARTIFACTS / "hostile-feedback-summary.png"))
    state = watch.state()

    assert MARK not in state["title"] and MARK not in state["name"], state
    assert watch.api_calls() == []
    # Only the page and the student's relative image (<img src=x>, which the policy blocks).
    folder = page_path.parent.as_uri() + "/"
    assert [url for _, url in watch.requests if not url.startswith(folder)] == []
    assert [v for v in state["violations"] if "script" in v] == []  # none even tried
    assert state["scriptable"] == [] and state["handlers"] == []
    assert [m for m in watch.console if MARK in m] == []

    # ... and the page still reads: maths, the student's table, answers, outputs, notes.
    view.get_by_role("heading", name="My notes").scroll_into_view_if_needed()
    view.evaluate("window.scrollBy(0, -120)")
    view.screenshot(path=str(ARTIFACTS / "hostile-feedback-markdown.png"))
    view.get_by_text("bold HTML output", exact=True).scroll_into_view_if_needed()
    view.evaluate("window.scrollBy(0, -120)")
    view.screenshot(path=str(ARTIFACTS / "hostile-feedback-outputs.png"))
    assert view.locator("math").count() >= 20
    assert view.locator("td math").count() >= 1  # a formula in the student's own table
    assert view.locator("#p_prime_value").inner_text().count("Hint:") == 1
    assert view.get_by_text("bold HTML output", exact=True).is_visible()
    assert view.locator('img[src^="data:image/png"]').count() >= 1
    assert view.locator('img[src^="data:image/svg+xml"]').count() == 1
    assert view.get_by_text("application/javascript output removed by the grader").is_visible()
    assert view.get_by_text("The grader removed HTML, links or TeX").count() >= 1
    assert view.get_by_text("could not show this cell safely").count() == 1
    view.close()
