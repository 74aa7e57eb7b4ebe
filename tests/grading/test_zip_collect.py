"""``nbgrader zip_collect`` on an LMS download, with the course's nbgrader_config.py.

An LMS hands back one zip whose files are named ``<student>_<notebook>.ipynb``, sometimes
inside folders. zip_collect unpacks ``downloaded/decomp/archive/*.zip`` into
``downloaded/decomp/extracted/<zip name>/`` and files every notebook the configured
FileNameCollectorPlugin regexp recognises as ``submitted/<student>/decomp/<notebook>.ipynb``.
One run of the real command serves every test below.
"""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import nbformat
import pytest

from .submissions import RELEASED, ROOT

# Name inside the zip -> (student, notebook) it must be filed as.
EXPECTED = {
    "alice_01-chain-reliability.ipynb": ("alice", "01-chain-reliability"),
    "alice_02-long-horizons.ipynb": ("alice", "02-long-horizons"),
    "bob_01-chain-reliability.ipynb": ("bob", "01-chain-reliability"),
    # LMS downloads may put each student's files in a folder of their own.
    "carol/carol_03-plans-as-objects.ipynb": ("carol", "03-plans-as-objects"),
    # A student id may hold an underscore; notebook names never do.
    "jane_doe_01-chain-reliability.ipynb": ("jane_doe", "01-chain-reliability"),
}
# Files that are no submission: a text file, and the resource-fork copy macOS adds to a zip.
STRAY = ["readme.txt", "__MACOSX/._alice_01-chain-reliability.ipynb"]


def _content(name: str) -> bytes:
    """A notebook unique to this zip entry: the released notebook plus a cell naming it."""
    notebook = name.rsplit("_", 1)[1]
    nb = nbformat.read(RELEASED / notebook, as_version=4)
    nb.cells.append(nbformat.v4.new_markdown_cell(f"handed in as {name}"))
    return nbformat.writes(nb).encode()


@pytest.fixture(scope="module")
def collected(tmp_path_factory):
    root = tmp_path_factory.mktemp("course")
    (root / "nbgrader_config.py").write_bytes((ROOT / "nbgrader_config.py").read_bytes())
    for folder in ("solutions", "notebooks"):  # notebooks/: zip_collect checks names there
        for path in (ROOT / folder / "decomp").glob("*.ipynb"):
            target = root / folder / "decomp" / path.name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(path.read_bytes())
    archive = root / "downloaded" / "decomp" / "archive"
    archive.mkdir(parents=True)
    zipped = {name: _content(name) for name in EXPECTED}
    with zipfile.ZipFile(archive / "submissions.zip", "w") as zf:
        for name, data in zipped.items():
            zf.writestr(name, data)
        for name in STRAY:
            zf.writestr(name, b"not a submission")
    bindir = str(Path(sys.executable).parent)
    env = {"PATH": f"{bindir}:/usr/bin:/bin", "HOME": str(root)}
    run = subprocess.run(
        [sys.executable, "-m", "nbgrader", "zip_collect", "decomp"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    return root, zipped, run


def _collector():
    """nbgrader's FileNameCollectorPlugin as the course's nbgrader_config.py sets it up."""
    from nbgrader.plugins import FileNameCollectorPlugin
    from traitlets.config import PyFileConfigLoader

    config = PyFileConfigLoader("nbgrader_config.py", path=str(ROOT)).load_config()
    return FileNameCollectorPlugin(config=config)


def test_the_configured_regexp_reaches_nbgrader():
    # traitlets files settings under the class name, FileNameCollectorPlugin; under any other
    # name the regexp is silently dropped and zip_collect files nothing.
    assert _collector().named_regexp, "set c.FileNameCollectorPlugin.named_regexp"


@pytest.mark.parametrize("name", [*EXPECTED, *STRAY])
def test_the_regexp_reads_student_and_notebook_from_each_name(tmp_path, name):
    # zip_collect hands the plugin the absolute path of each extracted file.
    path = tmp_path / "downloaded" / "decomp" / "extracted" / "submissions" / name
    found = _collector().collect(str(path))
    if name in STRAY:
        assert found is None
    else:
        student, notebook = EXPECTED[name]
        assert found is not None
        assert (found["student_id"], found["file_id"]) == (student, f"{notebook}.ipynb")


def test_zip_collect_succeeds_and_unpacks_into_a_folder_named_after_the_zip(collected):
    root, zipped, run = collected
    assert run.returncode == 0, run.stderr[-3000:]
    extracted = root / "downloaded" / "decomp" / "extracted" / "submissions"
    for name in [*zipped, *STRAY]:
        assert (extracted / name).is_file(), name


def test_every_notebook_is_filed_under_its_student(collected):
    root, zipped, run = collected
    for name, (student, notebook) in EXPECTED.items():
        target = root / "submitted" / student / "decomp" / f"{notebook}.ipynb"
        assert target.is_file(), f"{name} not filed as {target}\n{run.stderr[-3000:]}"
        assert target.read_bytes() == zipped[name]


def test_nothing_else_is_filed(collected):
    root, _, run = collected
    filed = sorted(
        str(p.relative_to(root / "submitted"))
        for p in (root / "submitted").rglob("*")
        if p.is_file()
    )
    expected = sorted(f"{s}/decomp/{nb}.ipynb" for s, nb in EXPECTED.values())
    assert filed == expected, run.stderr[-3000:]
