"""notebooks/ is exactly nbgrader's release of solutions/, and a release never loses work."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from decompkit.course import release

ROOT = Path(__file__).resolve().parents[1]
RELEASED = sorted((ROOT / "notebooks").glob("*/*.ipynb"))
SOURCES = sorted((ROOT / "solutions").glob("*/*.ipynb"))


def _rel(paths, folder):
    return [p.relative_to(ROOT / folder).as_posix() for p in paths]


def test_every_solution_is_released():
    assert _rel(SOURCES, "solutions") == _rel(RELEASED, "notebooks")
    assert {p.parent.name for p in SOURCES} == set(release.ASSIGNMENTS)


@pytest.mark.parametrize("assignment", release.ASSIGNMENTS)
def test_released_notebooks_are_what_nbgrader_generates(tmp_path, assignment):
    written = release.generate(ROOT, assignment, tmp_path)
    assert sorted(p.name for p in written) == [
        p.name for p in RELEASED if p.parent.name == assignment
    ]
    for path in written:
        released = ROOT / "notebooks" / assignment / path.name
        assert released.read_bytes() == path.read_bytes(), (
            f"{released.relative_to(ROOT)} is stale: run `python3 kit.py release`"
        )


def test_manifest_matches_the_released_files():
    manifest = json.loads((ROOT / release.MANIFEST).read_text())
    assert set(manifest) == {p.relative_to(ROOT).as_posix() for p in RELEASED}
    assert not release._edited(ROOT, manifest)


@pytest.mark.parametrize("path", RELEASED, ids=lambda p: p.name)
def test_released_notebook_holds_no_solution_or_hidden_test(path):
    text = path.read_text()
    for marker in ("BEGIN SOLUTION", "END SOLUTION", "BEGIN HIDDEN TESTS", "END HIDDEN TESTS"):
        assert marker not in text
    source = nbformat.read(ROOT / "solutions" / path.parent.name / path.name, as_version=4)
    released = {_grade_id(c): c for c in nbformat.read(path, as_version=4).cells if _grade_id(c)}
    for cell in source.cells:
        if not _grade_id(cell):
            continue
        kept = released[_grade_id(cell)].source.splitlines()
        for block in _marked_blocks(cell.source):
            for line in block:
                if line.strip() and not line.strip().startswith("#"):
                    assert line not in kept, (_grade_id(cell), line)


def _grade_id(cell):
    return cell.metadata.get("nbgrader", {}).get("grade_id")


def _marked_blocks(source):
    lines, block, inside = source.splitlines(), [], False
    for line in lines:
        if "### BEGIN" in line:
            inside, block = True, []
        elif "### END" in line:
            inside = False
            yield block
        elif inside:
            block.append(line)


def _course_copy(tmp_path):
    root = tmp_path / "course"
    root.mkdir()
    for name in ("nbgrader_config.py", release.MANIFEST):
        shutil.copy2(ROOT / name, root / name)
    shutil.copytree(ROOT / "solutions", root / "solutions")
    shutil.copytree(ROOT / "notebooks", root / "notebooks")
    return root


def test_release_refuses_to_overwrite_an_edited_notebook(tmp_path):
    root = _course_copy(tmp_path)
    target = root / "notebooks" / "decomp" / RELEASED[0].name
    nb = nbformat.read(target, as_version=4)
    nb.cells[0].source += "\n\nmy own notes"
    nbformat.write(nb, target)
    edited = target.read_bytes()
    with pytest.raises(release.EditedNotebookError, match=target.name) as info:
        release.release(root)
    assert info.value.paths == [target]
    assert "--force" in str(info.value)
    assert target.read_bytes() == edited


def test_forced_release_keeps_the_edited_copy(tmp_path):
    root = _course_copy(tmp_path)
    target = root / "notebooks" / "decomp" / RELEASED[0].name
    target.write_text(target.read_text().replace("Part A", "Part A (my notes)"))
    edited = target.read_bytes()
    release.release(root, force=True)
    kept = target.with_name(f"{target.stem}.edited-1.ipynb")
    assert kept.read_bytes() == edited
    assert target.read_bytes() == RELEASED[0].read_bytes()
    assert not release._edited(root, json.loads((root / release.MANIFEST).read_text()))


def test_a_second_release_writes_nothing_and_says_so(tmp_path, capsys):
    root = _course_copy(tmp_path)
    release.release(root)
    capsys.readouterr()
    before = {p: p.stat().st_mtime_ns for p in (root / "notebooks").rglob("*.ipynb")}
    assert release.main(["--root", str(root)]) == 0
    out = capsys.readouterr().out
    assert "wrote" not in out
    assert out.splitlines() == [f"unchanged: {len(RELEASED)} notebooks already as released"]
    assert {p: p.stat().st_mtime_ns for p in before} == before  # not even rewritten


def test_release_writes_only_the_notebook_that_changed(tmp_path, capsys):
    root = _course_copy(tmp_path)
    release.release(root)
    source = root / "solutions" / "decomp" / RELEASED[0].name
    nb = nbformat.read(source, as_version=4)
    nb.cells.insert(0, nbformat.v4.new_markdown_cell("A new first line."))
    nbformat.write(nb, source)
    capsys.readouterr()
    assert release.main(["--root", str(root)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out == [
        f"wrote {root / 'notebooks' / 'decomp' / RELEASED[0].name}",
        f"unchanged: {len(RELEASED) - 1} notebooks already as released",
    ]


def test_release_outside_a_course_is_one_line(tmp_path, capsys):
    assert release.main(["--root", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err == (
        f"error: {tmp_path} is not a course folder (no nbgrader_config.py or solutions); "
        "check --root\n"
    )


def test_nbgrader_is_given_an_absolute_course_root(tmp_path):
    """nbgrader warned "root '.' is not absolute" at every command run in the course."""
    root = _course_copy(tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "nbgrader", "db", "student", "list"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "not absolute" not in done.stdout + done.stderr
    from decompkit.course.settings import load_config

    assert load_config(root).CourseDirectory.root == str(root)
