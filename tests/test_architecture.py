"""The package's layout, read off its source: rooms, import directions, seams, sizes.

docs/architecture.md describes the rooms; these tests hold the code to it. Every import in
``src/decompkit`` counts, wherever it sits (inside a function or under ``TYPE_CHECKING`` as
much as at the top): an import moved into a function to dodge a loop is still a loop. Privacy
is marked once: a name or module with a leading underscore never leaves its file, and a
package lifts whole modules (``from .x import *``) into its namespace, so its ``__all__`` is
built from theirs. Sizes are counted as ``ruff format`` writes a file, never as packed by hand.
"""

from __future__ import annotations

import ast
import graphlib
import importlib
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
PACKAGE = SRC / "decompkit"

#: The rooms of the package, by the dotted prefix of their modules.
ROOMS = {
    "decompkit.validate": "maths",
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
    "decompkit.traces": "maths",
    "decompkit.grading": "grading",
    "decompkit.plots": "plots",
    "decompkit.widgets": "widgets",
    "decompkit.exercises": "exercises",
    "decompkit.lab": "lab",
    "decompkit.course": "course",
    "decompkit.page": "page",
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
    "page": {"widgets", "exercises", "plots", "maths"},
}

_NOTEBOOK_MACHINERY = {"nbformat", "nbgrader", "nbclient", "nbconvert", "jupyter_client"}
_PRESENTATION = {"matplotlib", "ipywidgets", "IPython", "PIL"}
_AGENTS = {"pydantic", "pydantic_ai", "pydantic_graph"}

#: Third-party packages a room must not import.
FORBIDDEN = {
    "root": _NOTEBOOK_MACHINERY | _PRESENTATION | _AGENTS | {"networkx"},
    "maths": _NOTEBOOK_MACHINERY | _PRESENTATION | _AGENTS | {"networkx"},
    "grading": _NOTEBOOK_MACHINERY | _PRESENTATION | _AGENTS | {"networkx"},
    # The check lines' wrapping style goes out through IPython's display, in a kernel only.
    "exercises": _NOTEBOOK_MACHINERY | (_PRESENTATION - {"IPython"}) | _AGENTS | {"networkx"},
    "plots": _NOTEBOOK_MACHINERY | _AGENTS | {"ipywidgets"},
    "widgets": _NOTEBOOK_MACHINERY | _AGENTS,
    "lab": _NOTEBOOK_MACHINERY | _PRESENTATION,
    "course": set(),
    "page": _NOTEBOOK_MACHINERY | _AGENTS,
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
    rooms = [prefix for prefix in ROOMS if module == prefix or module.startswith(prefix + ".")]
    return ROOMS[max(rooms, key=len)]


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


#: ``# fmt: skip`` and ``# fmt: off``/``on``: lines packed past the formatter.
FMT_PRAGMA = re.compile(r"[ \t]*#[ \t]*fmt:[ \t]*(?:skip|off|on)\b")

#: Files allowed to keep lines from ruff format (none: a test below fails when an entry is no
#: longer needed).
FMT_PRAGMA_PENDING: set[str] = set()


@pytest.fixture(scope="module")
def formatted_lines(tmp_path_factory) -> dict[str, int]:
    """Lines of every module as ``ruff format`` writes it once its fmt pragmas are gone."""
    copy = tmp_path_factory.mktemp("formatted")
    for path in MODULES.values():
        target = copy / path.relative_to(SRC)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(FMT_PRAGMA.sub("", path.read_text(encoding="utf-8")), encoding="utf-8")
    config = ROOT / "pyproject.toml"  # the project's line length
    command = [
        sys.executable,
        "-m",
        "ruff",
        "format",
        "--quiet",
        "--config",
        str(config),
        str(copy),
    ]
    subprocess.run(command, check=True, capture_output=True, text=True)
    return {
        name: (copy / path.relative_to(SRC)).read_text(encoding="utf-8").count("\n")
        for name, path in MODULES.items()
    }


@pytest.mark.parametrize("module", sorted(MODULES))
def test_files_read_in_one_sitting(module, formatted_lines):
    lines = formatted_lines[module]
    assert lines <= MAX_LINES, f"{MODULES[module].relative_to(SRC)} has {lines} formatted lines"


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_line_is_packed_past_the_formatter(module):
    packed = [
        number
        for number, line in enumerate(MODULES[module].read_text(encoding="utf-8").splitlines(), 1)
        if FMT_PRAGMA.search(line)
    ]
    if module in FMT_PRAGMA_PENDING:
        pytest.skip(f"TODO: {module} still has fmt pragmas at lines {packed}")
    assert not packed, f"{module} keeps lines from ruff format (# fmt:) at lines {packed}"


def test_pending_fmt_pragmas_are_still_there():
    fixed = sorted(
        name
        for name in FMT_PRAGMA_PENDING
        if name not in MODULES or not FMT_PRAGMA.search(MODULES[name].read_text(encoding="utf-8"))
    )
    assert not fixed, f"no fmt pragma left in {fixed}: take them out of FMT_PRAGMA_PENDING"


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
    "decompkit.course.engine.codec",
]
HEAVY = [
    "matplotlib",
    "ipywidgets",
    "pydantic_ai",
    "pydantic_graph",
    "nbformat",
    "nbgrader",
    "networkx",
    "IPython",
]


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


# --------------------------------------------------------------------------------------------
# Seams: privacy marked once, and __all__ built from the modules a package lifts
# --------------------------------------------------------------------------------------------


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _crossings(module: str) -> list[str]:
    """Private modules and names that ``module`` takes from another file of decompkit."""
    path = MODULES[module]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found, bound = [], {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = _absolute(module, path, node.level, node.module)
            pairs = [
                (f"{base}.{a.name}", None, a) for a in node.names if f"{base}.{a.name}" in MODULES
            ]
            pairs += [(base, a.name, a) for a in node.names if f"{base}.{a.name}" not in MODULES]
        elif isinstance(node, ast.Import):
            pairs = [(a.name, None, a) for a in node.names]  # binds no module unless named
        else:
            continue
        for target, name, alias in pairs:
            if target != "decompkit" and not target.startswith("decompkit."):
                continue
            if name is None and (alias.asname or isinstance(node, ast.ImportFrom)):
                bound[alias.asname or alias.name] = target
            if any(_private(part) for part in target.split(".")):
                found.append(f"line {node.lineno}: module {target}")
            if name is not None and name != "*" and _private(name):
                found.append(f"line {node.lineno}: {target}.{name}")
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in bound
            and _private(node.attr)
        ):
            found.append(f"line {node.lineno}: {bound[node.value.id]}.{node.attr}")
    return found


@pytest.mark.parametrize("module", sorted(MODULES))
def test_private_names_stay_in_their_file(module):
    # A module another file imports is public, and so are the names it takes from it: a
    # leading underscore on either says "this file only", so it must be true.
    crossings = _crossings(module)
    assert not crossings, f"{module} reaches into another file's privates: {crossings}"


#: Packages allowed to list their modules' names by hand (none: a test below fails when an
#: entry is no longer needed).
HAND_LISTED_PENDING: set[str] = set()


def _lifting(package: str) -> tuple[list[str], set[str], set[str], set[str]]:
    """Of a package's ``__init__``: the submodules it star-imports, the names it takes from
    a submodule one by one, the names it defines itself, and the strings written in its
    ``__all__``."""
    path = MODULES[package]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    lifted, by_name, own, written = [], set(), set(), set()
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.level:
            base = _absolute(package, path, node.level, node.module)
            for alias in node.names:
                if alias.name == "*":
                    lifted.append(base)
                elif f"{base}.{alias.name}" not in MODULES:
                    by_name.add(alias.asname or alias.name)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            own.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names = {t.id for t in targets if isinstance(t, ast.Name)}
            if "__all__" in names and node.value is not None:
                written |= {
                    n.value
                    for n in ast.walk(node.value)
                    if isinstance(n, ast.Constant) and isinstance(n.value, str)
                }
            own |= names - {"__all__"}
    return lifted, by_name, own, written


PACKAGES_WITH_ALL = sorted(
    name
    for name in PACKAGES
    if re.search(r"^__all__\b", MODULES[name].read_text(encoding="utf-8"), re.M)
)


@pytest.mark.parametrize("package", PACKAGES_WITH_ALL)
def test_a_package_lifts_whole_modules(package):
    if package in HAND_LISTED_PENDING:
        pytest.skip(f"TODO: {package} still lists its modules' names by hand")
    lifted, by_name, own, written = _lifting(package)
    # Only the package's own names are written in its __all__; a module's come with its __all__.
    second = sorted(written - own)
    assert not second, f"{package} lists {second} a second time: lift their module instead"
    hidden = sorted(by_name & written)
    assert not hidden, f"{package} re-exports {hidden} one by one: lift their module instead"
    exported = importlib.import_module(package).__all__
    assert len(exported) == len(set(exported)), f"{package}.__all__ repeats a name"
    from_modules = [n for m in lifted for n in importlib.import_module(m).__all__]
    assert len(from_modules) == len(set(from_modules)), f"{package} lifts one name twice"
    missing = sorted(set(from_modules) - set(exported))
    assert not missing, f"{package} lifts {missing} but leaves them out of its __all__"
    stray = sorted(set(exported) - set(from_modules) - own)
    assert not stray, f"{package}.__all__ names {stray}, neither lifted nor its own"


def test_pending_hand_listed_packages_are_still_hand_listed():
    fixed = sorted(p for p in HAND_LISTED_PENDING if not _lifting(p)[1] & _lifting(p)[3])
    assert not fixed, f"{fixed} lift whole modules now: take them out of HAND_LISTED_PENDING"
