"""Every solution and released notebook runs top to bottom in a fresh kernel; the graded path
stays light and every hidden test follows one convention."""

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

import nbclient
import nbformat
import pytest

from decompkit.exercises.params import EXERCISES

ROOT = Path(__file__).resolve().parents[1]


def _notebooks(folder):
    paths = sorted((ROOT / folder).rglob("*.ipynb"))
    return [p for p in paths if ".ipynb_checkpoints" not in p.parts and ".edited-" not in p.name]


# The lab's solution runs in test_lab_notebook.py, behind a guard that refuses the network.
SOLUTIONS = [p for p in _notebooks("solutions") if p.parent.name != "lab"]
RELEASED = _notebooks("notebooks")


def _run(path):
    nb = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(
        nb, timeout=60, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}
    )
    client.execute()
    return nb


def _outputs(nb, kind):
    return [o for c in nb.cells for o in c.get("outputs", []) if o.output_type == kind]


def _graded(nb):
    return [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade")]


def test_there_are_notebooks():
    assert SOLUTIONS and RELEASED


def _items(path):
    """The graded items of an exercise notebook, by graded cell (the lab has none)."""
    by_file = {e.file: e for e in EXERCISES.values()}
    exercise = by_file.get(path.stem)
    return {} if exercise is None else {i.grade_cell: i for i in exercise.items}


def _echoes(nb):
    """Results a cell echoed under its output (True, False) instead of saying something."""
    return [
        o["data"]["text/plain"]
        for c in nb.cells
        for o in c.get("outputs", [])
        if o.output_type == "execute_result" and o["data"].get("text/plain") in ("True", "False")
    ]


@pytest.mark.parametrize("path", SOLUTIONS, ids=lambda p: str(p.relative_to(ROOT)))
def test_solution_notebook_passes_every_check(path):
    nb = _run(path)
    assert not _outputs(nb, "error"), _outputs(nb, "error")
    items = _items(path)
    for cell in _graded(nb):
        text = "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream")
        item = items[cell.metadata.nbgrader.grade_id]
        mark = "[?]" if item.form_only else "[ok]"  # a form-only check cannot say right
        assert text.startswith(f"{mark} {item.title}: "), (cell.metadata.nbgrader, text)
        assert text.count("\n") == 1, text  # one line, nothing echoed under it
    assert "hidden until" not in json.dumps([c.get("outputs", []) for c in nb.cells])
    assert not _echoes(nb)


@pytest.mark.parametrize("path", RELEASED, ids=lambda p: str(p.relative_to(ROOT)))
def test_released_notebook_runs_and_reports_unanswered(path):
    nb = _run(path)
    assert not _outputs(nb, "error"), _outputs(nb, "error")
    graded = _graded(nb)
    assert graded
    items = _items(path)
    for cell in graded:
        text = "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream")
        assert "not answered yet" in text, (cell.metadata.nbgrader, text)
        if items:
            item = items[cell.metadata.nbgrader.grade_id]
            assert text.startswith(f"[ ] {item.title}: not answered yet  [LECTURE NUMBERS"), text
    if items:
        assert not _echoes(nb)
        hidden = [
            c
            for c in nb.cells
            if any("hidden until" in o.get("text", "") for o in c.get("outputs", []))
        ]
        assert hidden, "no cell waits for an answer before it shows the package's result"


def test_nbconvert_html_shows_the_explorers_as_static_figures(tmp_path):
    # Without widget state (so no widget front end in the page) an explorer falls back to its
    # current image. With stored state, nbconvert embeds the live widget view instead.
    import subprocess
    import sys

    # The solution: its answers are on track, so the explorer's cell opens.
    path = ROOT / "solutions" / "decomp" / "02-long-horizons.ipynb"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "jupyter",
            "nbconvert",
            "--to",
            "html",
            "--execute",
            "--ExecutePreprocessor.store_widget_state=False",
            "--output-dir",
            str(tmp_path),
            str(path),
        ],
        check=True,
        capture_output=True,
    )
    html = (tmp_path / "02-long-horizons.html").read_text()
    call = html.rindex('horizon_explorer</span><span class="p">(')  # the explorer's cell
    image = html.find("data:image/png;base64", call)
    assert call < image < html.index("Summary", call)  # inside the explorer's output


ALL_SOLUTIONS = _notebooks("solutions")
HIDDEN = re.compile(r"### BEGIN HIDDEN TESTS\n(.*?)### END HIDDEN TESTS", re.S)
#: Where a hidden test may take what it uses from: the key, the parameters, the comparisons.
HIDDEN_IMPORTS = ("decompkit.exercises", "decompkit.grading", "decompkit.lab.checks")
#: Graded items with many right answers: their hidden test asks a predicate, not the key.
MANY_ANSWERS = {"order_a", "path_a", "path_b", "fixed_plan"}


def _bound(tree) -> set:
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, ast.arg):
            names.add(node.arg)
    return names


@pytest.mark.parametrize("path", ALL_SOLUTIONS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_hidden_test_follows_the_convention(path):
    """Every name a hidden test binds ends with an underscore (it never rebinds a student's
    name); it imports only the key, the parameters and the comparisons; it sits below the
    visible check; and in an exercise notebook it asks the key for its cell's item."""
    by_file = {e.file: e for e in EXERCISES.values()}
    exercise = by_file.get(path.stem)
    for cell in nbformat.read(path, as_version=4).cells:
        meta = cell.metadata.get("nbgrader", {})
        if not meta.get("grade"):
            continue
        (block,) = HIDDEN.findall(cell.source)
        visible = cell.source.split("### BEGIN HIDDEN TESTS")[0].strip()
        assert visible and "\n" not in visible, (meta["grade_id"], visible)
        tree = ast.parse(block)
        bound = sorted(n for n in _bound(tree) if not n.endswith("_"))
        assert not bound, (meta["grade_id"], bound)
        modules = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
        assert not any(isinstance(n, ast.Import) for n in ast.walk(tree)), meta["grade_id"]
        assert all(m.startswith(HIDDEN_IMPORTS) for m in modules), (meta["grade_id"], modules)
        if exercise is not None:
            item = exercise.grade_cells[meta["grade_id"]]
            asks_key = f'expected_("{exercise.name}", "{item}")' in block
            assert asks_key or item in MANY_ANSWERS, (meta["grade_id"], block)


@pytest.mark.parametrize("path", ALL_SOLUTIONS + RELEASED, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_notebook_chooses_a_matplotlib_backend(path):
    # ipykernel's default backend already draws inline; the magic only imported matplotlib.
    for cell in nbformat.read(path, as_version=4).cells:
        assert "%matplotlib" not in cell.source, cell.source


#: Runs the code cells a grader runs (all but those tagged explore, hidden tests included)
#: of each notebook in one process, and names the plotting and widget libraries loaded.
GRADED_PATH = """
import ast, asyncio, json, sys
import nbformat

async def main(paths):
    loaded = {}
    for path in paths:
        namespace = {"__name__": "__main__"}
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.cell_type != "code" or "explore" in cell.metadata.get("tags", []):
                continue
            code = compile(cell.source, path, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
            result = eval(code, namespace)
            if asyncio.iscoroutine(result):
                await result
        loaded[path] = sorted(m for m in ("matplotlib", "ipywidgets") if m in sys.modules)
    return loaded

print("LOADED " + json.dumps(asyncio.run(main(sys.argv[1:]))))
"""


def test_the_graded_path_loads_no_plotting_or_widget_library():
    # Importing matplotlib costs every grading kernel about 1.8 s; only cells tagged explore
    # (which the grader skips) may draw. The lab runs last: it is the slowest to import.
    paths = sorted(ALL_SOLUTIONS, key=lambda p: p.parent.name == "lab")
    done = subprocess.run(
        [sys.executable, "-c", GRADED_PATH, *map(str, paths)],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    line = next(x for x in done.stdout.splitlines() if x.startswith("LOADED "))
    loaded = json.loads(line[len("LOADED ") :])
    assert set(loaded) == set(map(str, paths))
    assert loaded == {str(p): [] for p in paths}
