"""The package's layout, read off its source: rooms, import directions, sizes.

docs/architecture.md describes the rooms; these tests hold the code to it. Every import in
``src/decompkit`` counts, wherever it sits (inside a function or under ``TYPE_CHECKING`` as
much as at the top): an import moved into a function to dodge a loop is still a loop.
"""

from __future__ import annotations

import ast
import graphlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = SRC / "decompkit"

#: The rooms of the package, by the dotted prefix of their modules.
ROOMS = {
    "decompkit._validate": "maths",
    "decompkit.reliability": "maths",
    "decompkit.markov": "maths",
    "decompkit.dag": "maths",
    "decompkit.scheduler": "maths",
    "decompkit.plan": "maths",
    "decompkit.artefact": "maths",
    "decompkit.metrics": "maths",
    "decompkit.harness": "maths",
    "decompkit.examples": "maths",
    "decompkit.architectures": "maths",
    "decompkit.grading": "grading",
    "decompkit.plots": "plots",
    "decompkit.widgets": "widgets",
    "decompkit.exercises": "exercises",
    "decompkit.lab": "lab",
    "decompkit.course": "course",
    "decompkit": "root",
}

#: Which other rooms a room may import (its own is always allowed).
MAY_IMPORT = {
    "root": set(),
    "maths": set(),
    "grading": {"maths"},
    "plots": {"maths"},
    "widgets": {"plots", "maths"},
    "exercises": {"maths", "grading"},
    "lab": {"exercises", "maths"},
    "course": {"exercises", "grading", "plots", "lab", "maths"},
}

_NOTEBOOK_MACHINERY = {"nbformat", "nbgrader", "nbclient", "nbconvert", "jupyter_client"}
_PRESENTATION = {"matplotlib", "ipywidgets", "IPython", "PIL"}
_AGENTS = {"pydantic", "pydantic_ai", "pydantic_graph"}

#: Third-party packages a room must not import.
FORBIDDEN = {
    "root": _NOTEBOOK_MACHINERY | _PRESENTATION | _AGENTS | {"networkx"},
    "maths": _NOTEBOOK_MACHINERY | _PRESENTATION | _AGENTS | {"networkx"},
    "grading": _NOTEBOOK_MACHINERY | _PRESENTATION | _AGENTS | {"networkx"},
    "exercises": _NOTEBOOK_MACHINERY | _PRESENTATION | _AGENTS | {"networkx"},
    "plots": _NOTEBOOK_MACHINERY | _AGENTS | {"ipywidgets"},
    "widgets": _NOTEBOOK_MACHINERY | _AGENTS,
    "lab": _NOTEBOOK_MACHINERY | _PRESENTATION,
    "course": set(),
}

MAX_LINES = 600


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _files() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


MODULES = {_module_name(p): p for p in _files()}


def _room(module: str) -> str:
    best = max((prefix for prefix in ROOMS if module == prefix or module.startswith(prefix + ".")),
               key=len)  # fmt: skip
    return ROOMS[best]


def _absolute(module: str, path: Path, level: int, name: str | None) -> str:
    if level == 0:
        return name or ""
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    base = package[: len(package) - level + 1]
    return ".".join([*base, name] if name else base)


def _imports(path: Path) -> tuple[set[str], set[str]]:
    """(decompkit modules, top-level third-party packages) imported anywhere in ``path``."""
    module = _module_name(path)
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    inner, outer = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(module, path, node.level, node.module)
            targets = []
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                targets.append(sub if sub in MODULES else base)
        else:
            continue
        for target in targets:
            if target == "decompkit" or target.startswith("decompkit."):
                # `import decompkit.a.b` binds the package but runs a.b: the module is the edge.
                while target not in MODULES and "." in target:
                    target = target.rsplit(".", 1)[0]
                inner.add(target)
            elif target and target.split(".")[0] not in sys.stdlib_module_names:
                outer.add(target.split(".")[0])
    inner.discard(module)
    return inner, outer


GRAPH = {name: _imports(path) for name, path in MODULES.items()}


def test_no_import_loops():
    sorter = graphlib.TopologicalSorter({name: inner for name, (inner, _) in GRAPH.items()})
    try:
        sorter.prepare()
    except graphlib.CycleError as error:
        pytest.fail(f"import loop: {' -> '.join(error.args[1])}")


@pytest.mark.parametrize("module", sorted(MODULES))
def test_imports_point_down(module):
    inner, outer = GRAPH[module]
    room = _room(module)
    upward = sorted(t for t in inner if _room(t) not in MAY_IMPORT[room] | {room})
    assert not upward, f"{module} ({room}) imports {[(t, _room(t)) for t in upward]}"
    banned = sorted(outer & FORBIDDEN[room])
    assert not banned, f"{module} ({room}) imports {banned}"


@pytest.mark.parametrize("module", sorted(MODULES))
def test_files_read_in_one_sitting(module):
    lines = MODULES[module].read_text(encoding="utf-8").count("\n")
    assert lines <= MAX_LINES, f"{MODULES[module].relative_to(SRC)} has {lines} lines"


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_dynamic_imports(module):
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    dynamic = [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and (
            (isinstance(node.func, ast.Attribute) and node.func.attr == "import_module")
            or (isinstance(node.func, ast.Name) and node.func.id in ("import_module", "__import__"))
        )
    ]
    assert not dynamic, f"{module} imports dynamically at lines {dynamic}"
    names = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
    assert "__getattr__" not in names, f"{module} resolves names lazily with __getattr__"


PACKAGES = sorted(name for name, path in MODULES.items() if path.name == "__init__.py")


@pytest.mark.parametrize("package", PACKAGES)
def test_every_room_says_what_lives_there(package):
    doc = ast.get_docstring(ast.parse(MODULES[package].read_text(encoding="utf-8"))) or ""
    assert len(doc.split()) >= 15, f"{package} needs a docstring saying what lives there"
    assert "import" in doc.lower(), f"{package}'s docstring must say what it may import"


#: What a student's kernel loads for the exercises and the grader loads to read answers out.
KERNEL_SIDE = [
    "decompkit.exercises.chain",
    "decompkit.exercises.horizon",
    "decompkit.exercises.plans",
    "decompkit.exercises.dag",
    "decompkit.exercises.trace",
    "decompkit.exercises.harness",
    "decompkit.grading",
    "decompkit.course.codec",
]
HEAVY = ["matplotlib", "ipywidgets", "pydantic_ai", "pydantic_graph", "nbformat", "nbgrader",
         "networkx", "IPython"]  # fmt: skip


@pytest.mark.parametrize("module", KERNEL_SIDE)
def test_kernel_side_imports_stay_light(module):
    probe = (
        f"import json, sys; import {module}; "
        f"print(json.dumps(sorted(m for m in {HEAVY!r} if m in sys.modules)))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout
    assert json.loads(out) == [], f"importing {module} loads {out.strip()}"
