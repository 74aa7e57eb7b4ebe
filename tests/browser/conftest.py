"""One JupyterLab server and one headless Chromium for the browser tests.

The server runs on a temporary copy of ``notebooks/`` (so the tests never write into the
repository) with its configuration, runtime and settings directories in the temporary folder
too, so that a user's own JupyterLab settings cannot change what the tests see. Chromium is
Debian's ``/usr/bin/chromium`` driven by Playwright for Python.

Without Chromium, Playwright or the released notebook the tests are skipped; with
``DECOMPKIT_REQUIRE_BROWSER=1`` (set in CI) they fail instead, so that a broken set-up cannot
pass as a skipped test. Screenshots of the last run are kept in tests/browser/artifacts/.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path
from typing import NoReturn

import pytest

from .jupyter_server import CHROMIUM, TEST_SETTINGS, ServerError, chromium, running_server

ROOT = Path(__file__).resolve().parents[2]


def code_notebook(cells):
    """A notebook of code cells with these sources, for the python3 kernel."""
    import nbformat

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    return nb


NOTEBOOKS = ROOT / "notebooks"
#: The released notebook the browser tests open, relative to notebooks/.
NOTEBOOK = "decomp/02-long-horizons.ipynb"
#: The instructor's notebooks, whose answers fill a released notebook in (see with_answers).
SOLUTIONS = ROOT / "solutions"
#: Screenshots of the last run (the folder is emptied of them when a run starts).
ARTIFACTS = Path(__file__).resolve().parent / "artifacts"

#: User settings of the test server: no news or update check (its toast could cover the page)
#: and every cell kept in the DOM, so that the tests can see all prompts and outputs at once.
LAB_SETTINGS = TEST_SETTINGS

SERVER_START_TIMEOUT = 60.0


def unavailable(reason: str) -> NoReturn:
    """Skip, or fail when the environment promises a browser (``DECOMPKIT_REQUIRE_BROWSER=1``)."""
    if os.environ.get("DECOMPKIT_REQUIRE_BROWSER") == "1":
        pytest.fail(f"{reason} (required because DECOMPKIT_REQUIRE_BROWSER=1)", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="package")
def released_notebook() -> Path:
    """The notebook under test in the repository (only read: the server serves a copy)."""
    path = NOTEBOOKS / NOTEBOOK
    if not path.exists():
        unavailable(f"the released notebook notebooks/{NOTEBOOK} is missing")
    return path


@pytest.fixture(scope="package")
def lab_server(tmp_path_factory):
    """Start JupyterLab (and Notebook 7) on a copy of notebooks/ with the kit's settings."""
    base = tmp_path_factory.mktemp("lab")
    root = base / "notebooks"
    shutil.copytree(NOTEBOOKS, root, ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    try:
        with running_server(root, base, settings=LAB_SETTINGS, source=NOTEBOOKS) as server:
            yield server
    except ServerError as error:
        pytest.fail(str(error), pytrace=False)


# Package scope, not session: Playwright's sync API keeps an asyncio event loop running in this
# thread while it is open, and later tests that call asyncio.run() (the lab's) need it closed.
@pytest.fixture(scope="package")
def chromium_context(tmp_path_factory):
    """A headless Chromium with a fresh profile, as one Playwright browser context."""
    if not CHROMIUM.exists():
        unavailable(f"{CHROMIUM} is missing (install Debian's chromium: .ci/install-browser)")
    try:
        import playwright.sync_api  # noqa: F401 - chromium() needs it
    except ImportError:
        unavailable("the Python package playwright is not installed (pip install playwright)")
    with chromium(tmp_path_factory.mktemp("chromium-profile"), width=1600, height=1000) as context:
        yield context


@pytest.fixture(scope="package")
def artifacts() -> Path:
    """The folder for this run's screenshots; failure messages name the file to look at."""
    ARTIFACTS.mkdir(exist_ok=True)
    for stale in ARTIFACTS.glob("*.png"):
        stale.unlink()
    return ARTIFACTS


def with_answers(released: Path):
    """A released notebook with every answer cell holding the instructor's solution, as a
    student who has worked it through would have it: the cells that wait for right answers
    (an explorer, the package's own result) then run too."""
    import nbformat

    rel = released.relative_to(NOTEBOOKS)
    solved = {
        c.metadata["nbgrader"]["grade_id"]: c.source
        for c in nbformat.read(SOLUTIONS / rel, as_version=4).cells
        if c.metadata.get("nbgrader", {}).get("solution")
    }
    nb = nbformat.read(released, as_version=4)
    for cell in nb.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id in solved:
            cell.source = re.sub(r"### (BEGIN|END) SOLUTION\n?", "", solved[grade_id])
    return nb


@pytest.fixture(scope="package")
def answered_notebook(released_notebook, lab_server) -> Path:
    """The notebook under test with its answers filled in, in the server's folder."""
    import nbformat

    path = lab_server.root / Path(NOTEBOOK).with_name(f"answered-{Path(NOTEBOOK).name}")
    nbformat.write(with_answers(released_notebook), path)
    return path
