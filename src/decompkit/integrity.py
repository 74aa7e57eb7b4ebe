"""A static integrity scan of a submission, run before grading.

A notebook is a sequence of code cells c_1, ..., c_n run in order in one kernel. The scan reads
each c_i as the kernel would (IPython's own input transforms, then ``ast``), with the import
aliases and simple assignments of c_1, ..., c_{i-1} in scope, and reports every construct whose
effect reaches past the student's own namespace: a hook into the kernel, an assignment into a
shared module object (``builtins``, ``sys.modules``, ``numpy``, ``decompkit``, ...), a write
to a path p outside the working folder W (p absolute, or ``..`` among its parts), a new process.
An honest answer needs none of them.

Each finding is a :class:`Flag` with a severity: ``"flag"`` (the instructor should look) or
``"note"`` (the scan could not decide, or the construct is merely unusual: a write whose path
is computed at run time, ``%run``, a shell line ``!...``, a cell that does not parse). Kinds:

================  ============================================================================
``hook``          ``get_ipython()`` and the kernel's internals; tracing hooks (``sys.settrace``)
``builtins``      assignment into ``builtins`` / ``__builtins__``
``sys.modules``   assignment into ``sys.modules`` or the import machinery (``sys.meta_path``)
``module-patch``  attribute/item assignment, ``setattr``, ``delattr`` on a protected module
``code-patch``    assignment to ``__code__``, ``__defaults__``, ``f_lineno``, ... of any object
``file-write``    a write, rename or deletion whose path leaves the working folder
``environment``   a change to ``os.environ`` (``putenv``, item stores, ``update``, ...): the
                  grader names the student whose numbers a submission is checked against there
``answer-key``    a call into the answer keys (``decompkit.exercises.<notebook>.key``,
                  ``decompkit.exercises.expected``, ``decompkit.answer_key``): the checks
                  need them in the package, no answer does
``process``       ``subprocess``, ``os.system``, ``os.exec*``, ``os.kill``, ``os._exit``, ...
``dynamic-code``  ``exec``/``eval``/``__import__`` of a string the scan cannot read
``magic``         ``%run``, ``!shell``, ``%%bash``, ``%cd`` and kin
``syntax``        a cell that does not parse (note: it cannot run either) or is too deeply
                  nested for the scan to follow (flag: the kernel may still run it)
``notebook``      a file that is not a readable notebook
================  ============================================================================

The scan is a screen, not a sandbox: code can always be written that it cannot see through
(``getattr`` with computed names, objects found through ``gc``). The grader's isolation of each
student in a scratch course is the defence; the scan tells the instructor where to look.
"""

from __future__ import annotations
import __future__ as _future

import ast
import builtins
import json
import os
import re
import sys
import warnings
from dataclasses import asdict, dataclass
from pathlib import Path

__all__ = [
    "Flag",
    "KINDS",
    "PROTECTED_MODULES",
    "scan_notebook",
    "scan_submission",
    "format_report",
    "to_rows",
]

#: Every kind of finding, with what it means (the module docstring has the long form).
KINDS = {
    "hook": "hooks into the IPython kernel or the interpreter's tracing",
    "builtins": "assigns into builtins",
    "sys.modules": "assigns into sys.modules or the import machinery",
    "module-patch": "assigns into a module the tests rely on",
    "code-patch": "replaces the code or the frame of a function",
    "file-write": "writes, renames or deletes outside the working folder",
    "environment": "changes the process environment, where the grader names the student",
    "answer-key": "reads the answer key",
    "process": "starts or controls a process",
    "dynamic-code": "runs code the scan cannot read",
    "magic": "IPython magic or shell command",
    "syntax": "cell does not parse",
    "notebook": "not a readable notebook",
}

#: Modules (and everything under them) into which no honest answer assigns.
PROTECTED_MODULES = (
    "builtins",
    "sys",
    "numpy",
    "math",
    "numbers",
    "decompkit",
    "nbgrader",
    "IPython",
    "ipykernel",
)

_SEVERITIES = ("flag", "note")
_WIDTH = 80

# --- what counts as what ------------------------------------------------------------------

_IPYTHON_HOOKS = tuple(
    "IPython.get_ipython IPython.core IPython.InteractiveShell IPython.terminal IPython.kernel"
    " IPython.embed IPython.start_ipython IPython.start_kernel ipykernel".split()
)
_IPYTHON_ALLOWED = ("IPython.core.display", "IPython.core.pylabtools")
_TRACE_HOOKS = tuple(
    "sys.settrace sys.setprofile sys.monitoring threading.settrace threading.setprofile"
    " threading.settrace_all_threads threading.setprofile_all_threads".split()
)
_PROCESS_MODULES = tuple(
    "subprocess _posixsubprocess pty multiprocessing ctypes _ctypes cffi pexpect signal".split()
)
# Prefixes: "os.exec" covers os.execl, os.execv, ...; "os.spawn" covers os.spawnl, ...
_PROCESS_NAMES = tuple(
    "os.system os.popen os.exec os.spawn os.posix_spawn os.fork os.forkpty os.kill os.killpg"
    " os._exit os.abort os.startfile asyncio.create_subprocess_"
    " concurrent.futures.ProcessPoolExecutor concurrent.futures.process".split()
)
_ENVIRONMENT = ("os.environ", "os.environb", "posix.environ")
_ENVIRONMENT_CALLS = {"os.putenv", "os.unsetenv", "posix.putenv", "posix.unsetenv"}
_IMPORT_MACHINERY = ("sys.modules", "sys.meta_path", "sys.path_hooks", "sys.path_importer_cache")
_CODE_ATTRS = set(
    "__code__ __defaults__ __kwdefaults__ __globals__ __closure__ f_lineno f_trace"
    " f_trace_lines".split()
)
_DICT_MUTATORS = {"update", "setdefault", "pop", "popitem", "clear", "__setitem__", "__delitem__"}
# Container methods that are also NumPy functions (np.append, np.sort, ...): they count only on
# a package constant, never on a module.
_LIST_MUTATORS = {"append", "extend", "insert", "remove", "discard", "add", "sort", "reverse"}

# Calls that open a file; the mode says whether they write.
_OPENERS = set(
    "builtins.open io.open io.FileIO codecs.open gzip.open bz2.open lzma.open tarfile.open"
    " zipfile.ZipFile".split()
)
# Calls that always change the file system, with how many leading arguments are paths.
_WRITERS = dict.fromkeys(
    "os.remove os.unlink os.rmdir os.removedirs os.mkdir os.makedirs os.chmod os.lchmod"
    " os.chown os.lchown os.truncate os.utime os.mkfifo os.mknod os.chdir shutil.rmtree"
    " shutil.chown shutil.make_archive sqlite3.connect numpy.save numpy.savez"
    " numpy.savez_compressed numpy.savetxt".split(),
    1,
) | dict.fromkeys(
    "os.rename os.renames os.replace os.link os.symlink shutil.move shutil.copy shutil.copy2"
    " shutil.copyfile shutil.copytree shutil.copymode shutil.copystat"
    " shutil.unpack_archive".split(),
    2,
)
_PATH_KEYWORDS = set("path src dst file fname filename name database base_name extract_dir".split())
# Methods only paths have: the receiver is the path written.
_PATH_METHODS = set(
    "write_text write_bytes touch unlink rmdir symlink_to hardlink_to link_to chmod lchmod".split()
)
# Methods strings and data frames have too: checked only on something built as a Path.
_PATHLIKE_METHODS = {"rename", "replace", "mkdir", "open"}
_PATH_BUILDERS = {
    f"pathlib.{name}"
    for name in "Path PurePath PosixPath PurePosixPath WindowsPath PureWindowsPath".split()
}
_JOINS = _PATH_BUILDERS | set(
    "os.path.join posixpath.join ntpath.join os.fspath os.path.normpath os.path.abspath"
    " os.path.realpath builtins.str builtins.bytes".split()
)
_HERE = {"pathlib.Path.cwd", "os.getcwd", "os.getcwdb", "os.curdir", "os.path.curdir"}
_ELSEWHERE = {
    "pathlib.Path.home": "the home folder",
    "os.path.expanduser": "the home folder",
    "tempfile.gettempdir": "the temporary folder",
    "tempfile.mkdtemp": "the temporary folder",
    "os.pardir": "the parent folder",
    "os.path.pardir": "the parent folder",
}
_SAME_PATH_METHODS = {"resolve", "absolute", "expanduser", "with_name", "with_suffix", "with_stem"}

# IPython magics: the ones whose argument is Python code, and the ones worth a note.
_CODE_LINE_MAGICS = {"time", "timeit", "prun"}
_CODE_CELL_MAGICS = {"time", "timeit", "prun", "capture"}
_DISPLAY_CELL_MAGICS = {"html", "HTML", "markdown", "latex", "svg", "javascript", "js"}
_NOTED_LINE_MAGICS = {
    "run": "runs another file",
    "sx": "shell command",
    "system": "shell command",
    "sc": "shell command",
    "cd": "changes the working folder",
    "pushd": "changes the working folder",
    "load_ext": "loads an extension",
    "alias": "defines a shell alias",
    "rerun": "runs earlier input again",
    "macro": "defines a macro",
}
_SHELL_CELL_MAGICS = set("bash sh script system ! sx perl ruby python python2 python3 pypy".split())
_WRITE_CELL_MAGICS = {"writefile", "file"}
_GENERATED = {"run_line_magic", "run_cell_magic", "system", "getoutput"}
_SETATTR_METHODS = {"__setattr__", "__delattr__"}


@dataclass(frozen=True)
class Flag:
    """One finding of the integrity scan.

    Attributes
    ----------
    notebook : str
        The notebook's file name (or the ``name`` given to :func:`scan_notebook`).
    cell : int or None
        Index of the cell in the notebook's ``cells`` list (``None`` for the whole file).
    grade_id : str or None
        The cell's nbgrader ``grade_id``, if it has one.
    line : int or None
        Line within the cell, counted from 1.
    kind : str
        One of :data:`KINDS`.
    construct : str
        The source text of the offending construct, shortened to one line.
    severity : str
        ``"flag"`` (look at it) or ``"note"`` (could not be decided, or merely unusual).
    reason : str
        Why it was reported, in a few words.
    """

    notebook: str
    cell: int | None
    grade_id: str | None
    line: int | None
    kind: str
    construct: str
    severity: str
    reason: str = ""

    def __post_init__(self):
        if self.severity not in _SEVERITIES:
            raise ValueError(f"severity must be 'flag' or 'note', got {self.severity!r}")
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {sorted(KINDS)}, got {self.kind!r}")


# --- helpers ------------------------------------------------------------------------------


def _shorten(text: str, width: int = _WIDTH) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 3] + "..."


def _under(name: str, roots) -> bool:
    """True when the dotted ``name`` is one of ``roots`` or lies under one of them."""
    return any(name == root or name.startswith(root + ".") for root in roots)


def _root_kind(name: str) -> str:
    if _under(name, ("builtins",)):
        return "builtins"
    if _under(name, _IMPORT_MACHINERY):
        return "sys.modules"
    return "module-patch"


def _is_process(name: str) -> bool:
    return _under(name, _PROCESS_MODULES) or any(name.startswith(p) for p in _PROCESS_NAMES)


def _is_answer_key(name: str) -> bool:
    parts = name.split(".")
    exercise_key = parts[:2] == ["decompkit", "exercises"] and parts[-1] in (
        "key",
        "_mistakes",
        "expected",
    )
    return exercise_key or _under(name, ("decompkit.answer_key",))


def _is_hook(name: str) -> bool:
    if _under(name, _IPYTHON_ALLOWED):
        return False
    return _under(name, _IPYTHON_HOOKS) or _under(name, _TRACE_HOOKS)


def _depth(path: str | None) -> int:
    """Folders below the working folder a relative literal path reaches (0 if unknown)."""
    if path is None or _literal_path_problem(path, head=True):
        return 0
    return len([part for part in re.split(r"[\\/]+", path) if part not in ("", ".")])


def _const_str(node) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


def _literal_path_problem(text: str, *, head: bool) -> str:
    """Why a literal path piece leaves the working folder ('' when it does not)."""
    if ".." in re.split(r"[\\/]+", text):
        return "path contains '..'"
    if head and (text[:1] in ("/", "\\", "~") or re.match(r"^[A-Za-z]:", text)):
        return "absolute path"
    return ""


def _may_hold_ipython_syntax(text: str, lines: list[str]) -> bool:
    """False when IPython's token transforms would leave ``text`` as it is (a fast path).

    They act on escapes at the start of a line (``%``, ``!``, ``?``, and the autocall escapes
    ``/``, ``,``, ``;``), on ``x = %magic`` / ``x = !cmd`` and on a trailing ``?``.
    """
    if "?" in text or re.search(r"=\s*[%!]", text):
        return True
    return any(line.lstrip()[:1] in ("%", "!", "/", ",", ";") for line in lines)


_TRANSFORMER = None


def _transformer():
    """IPython's own input transformer (the one the kernel runs), built once."""
    global _TRANSFORMER
    if _TRANSFORMER is None:
        from IPython.core.inputtransformer2 import TransformerManager

        _TRANSFORMER = TransformerManager()
    return _TRANSFORMER


# --- the scanner --------------------------------------------------------------------------


class _Scope:
    """Names bound in one scope: the dotted origins they may hold and the expressions bound."""

    def __init__(self, function: bool):
        self.function = function
        self.origins: dict[str, set[str]] = {}
        self.values: dict[str, list] = {}
        self.declared_global: set[str] = set()
        self.star: list[str] = []


class _Scanner:
    """Walks the cells of one notebook in order, keeping the module scope across cells."""

    def __init__(self, notebook: str):
        self.notebook = notebook
        self.test_cell = False  # set per cell by scan_notebook
        self.flags: list[Flag] = []
        self.seen: set[tuple] = set()
        self.module = _Scope(function=False)
        self.future_flags = 0
        # per cell / per nested source
        self.scopes: list[_Scope] = [self.module]
        self.branch = 0
        self.cell: int | None = None
        self.grade_id: str | None = None
        self.source = ""
        self.offset = 0
        self.fixed_line: int | None = None
        self.escaped_lines: set[int] = set()
        self.parents: dict[int, ast.AST] = {}
        self.depth = 0
        self.shown: list[str] | None = None

    # -- reporting --

    def report(self, node, kind, severity, reason, text=None, line=None):
        if text is None:
            text = ast.get_source_segment(self.source, node) or ast.unparse(node)
            lines = self.source.splitlines()
            if self.shown and len(self.shown) == len(lines):
                # on a line IPython rewrote, show what the student wrote
                original = self.shown[node.lineno - 1].rstrip("\n")
                if original != lines[node.lineno - 1]:
                    text = original
        if line is None:
            line = self.fixed_line if self.fixed_line is not None else node.lineno + self.offset
        key = (self.cell, line, kind, severity, _shorten(text))
        if key in self.seen:
            return
        self.seen.add(key)
        self.flags.append(
            Flag(
                self.notebook,
                self.cell,
                self.grade_id,
                line,
                kind,
                _shorten(text),
                severity,
                reason,
            )
        )

    # -- cells --

    def scan_cell(self, index: int, grade_id: str | None, source: str) -> None:
        self.cell, self.grade_id = index, grade_id
        self.scan_source(source, offset=0)

    def scan_source(self, source: str, offset: int) -> None:
        """Scan a cell's source as IPython would run it; ``offset`` lines precede it."""
        lines = source.splitlines(keepends=True)
        blank = 0
        while blank < len(lines) and not lines[blank].strip():
            blank += 1
        lines = lines[blank:]
        if not lines:
            return
        offset += blank
        manager = _transformer()
        cleaned = lines
        for transform in manager.cleanup_transforms:
            cleaned = transform(cleaned)
        if cleaned and cleaned[0].startswith("%%"):
            self.cell_magic(cleaned, offset)
            return
        code = "".join(cleaned)
        if _may_hold_ipython_syntax(code, cleaned):
            try:
                code = manager.transform_cell("".join(lines))
            except Exception:  # IPython gives up on some inputs; the kernel would too
                pass
        # A get_ipython() call on a line whose text has none was written by the transformer
        # (a magic or a shell line); lines match one to one unless a magic spans lines.
        written = {n for n, text in enumerate(cleaned, start=1) if "get_ipython" in text}
        if not written:
            escaped = set(range(1, len(code.splitlines()) + 1))
        elif len(code.splitlines()) == len(cleaned):
            escaped = set(range(1, len(cleaned) + 1)) - written
        else:
            escaped = set()
        self.scan_python(code, offset, escaped, cleaned)

    def scan_python(self, code, offset, escaped=frozenset(), shown=None, fixed_line=None):
        saved = (
            self.source,
            self.offset,
            self.escaped_lines,
            self.parents,
            self.fixed_line,
            self.shown,
        )
        self.source, self.offset, self.escaped_lines = code, offset, set(escaped)
        self.fixed_line, self.shown = fixed_line, shown
        try:
            tree = self.parse(code)
            if tree is not None:
                self.parents = {
                    id(child): parent
                    for parent in ast.walk(tree)
                    for child in ast.iter_child_nodes(parent)
                }
                for statement in tree.body:
                    self.visit_statement(statement)
        finally:
            (
                self.source,
                self.offset,
                self.escaped_lines,
                self.parents,
                self.fixed_line,
                self.shown,
            ) = saved

    def visit_statement(self, statement) -> None:
        try:
            self.visit(statement)
        except RecursionError:
            # The kernel may still run what is too deep for this walk: someone should look.
            text = self.source.splitlines()[statement.lineno - 1]
            self.report(statement, "syntax", "flag", "too deeply nested to scan", text)

    def parse(self, code: str):
        flags = ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT | self.future_flags
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # invalid escapes warn; the kernel only warns
                return compile(code, "<cell>", "exec", flags=flags, dont_inherit=True)
        except (SyntaxError, ValueError, RecursionError) as error:
            # The kernel compiles the same way: what fails here cannot run there either.
            number = getattr(error, "lineno", None) or 1
            lines = code.splitlines() or [""]
            text = lines[min(number, len(lines)) - 1]
            line = self.fixed_line if self.fixed_line is not None else number + self.offset
            message = getattr(error, "msg", None) or str(error)
            self.report(None, "syntax", "note", f"does not parse: {message}", text, line=line)
            return None

    def cell_magic(self, lines: list[str], offset: int) -> None:
        name, _, argument = lines[0][2:].rstrip().partition(" ")
        line = offset + 1
        if name in _CODE_CELL_MAGICS:
            self.scan_source("".join(lines[1:]), offset + 1)
        elif name in _DISPLAY_CELL_MAGICS:
            return
        elif name in _WRITE_CELL_MAGICS:
            target = [word for word in argument.split() if word != "-a"]
            problem = _literal_path_problem(target[0], head=True) if target else ""
            if problem:
                self.report(None, "file-write", "flag", problem, lines[0], line=line)
            else:
                self.report(None, "magic", "note", "writes a file", lines[0], line=line)
        elif name in _SHELL_CELL_MAGICS:
            self.report(None, "magic", "note", "runs a script; body not scanned", lines[0], line)
        else:
            self.report(None, "magic", "note", "cell magic; body not scanned", lines[0], line)

    # -- scopes and names --

    def bind(self, name: str, origins=(), value=None, union=False) -> None:
        scope = self.scopes[-1]
        if name in scope.declared_global:
            scope, union = self.module, True
        union = union or scope.function or self.branch > 0
        old = scope.origins.get(name, set()) if union else set()
        scope.origins[name] = old | set(origins)
        values = scope.values.get(name, []) if union else []
        scope.values[name] = values + ([value] if value is not None else [None])

    def lookup(self, name: str) -> tuple[set[str], list]:
        for scope in reversed(self.scopes):
            if name in scope.origins:
                return scope.origins[name], scope.values[name]
        origins = set()
        if name == "__builtins__":
            origins.add("builtins")
        elif name == "get_ipython":
            origins.add("IPython.get_ipython")
        elif hasattr(builtins, name):
            origins.add(f"builtins.{name}")
        for scope in self.scopes:
            origins |= {f"{module}.{name}" for module in scope.star}
        return origins, []

    def resolve(self, node) -> set[str]:
        """The dotted names a Name/Attribute/Subscript/Call chain may denote (empty: unknown)."""
        if isinstance(node, ast.Name):
            return set(self.lookup(node.id)[0])
        if isinstance(node, ast.Attribute):
            return {f"{base}.{node.attr}" for base in self.resolve(node.value)}
        if isinstance(node, ast.Subscript):
            key = _const_str(node.slice)
            base = self.resolve(node.value)
            if key is not None and "sys.modules" in base:
                return {key}
            if key is not None and isinstance(node.value, ast.Call):
                if self.resolve(node.value.func) & {"builtins.globals", "builtins.locals"}:
                    return set(self.lookup(key)[0])
            return set()
        if isinstance(node, ast.Call):
            return self.resolve_call(node)
        if isinstance(node, ast.NamedExpr):
            return self.resolve(node.value)
        return set()

    def resolve_call(self, node: ast.Call) -> set[str]:
        func = self.resolve(node.func)
        first = _const_str(node.args[0]) if node.args else None
        if func & {"importlib.import_module"} and first and not first.startswith("."):
            return {first}
        if func & {"builtins.__import__"} and first:
            fromlist = node.args[3] if len(node.args) > 3 else None
            for keyword in node.keywords:
                if keyword.arg == "fromlist":
                    fromlist = keyword.value
            empty = fromlist is None or (isinstance(fromlist, ast.Constant) and not fromlist.value)
            return {first.split(".")[0] if empty else first}
        if func & {"builtins.getattr"} and len(node.args) >= 2:
            name = _const_str(node.args[1])
            if name is not None:
                return {f"{base}.{name}" for base in self.resolve(node.args[0])}
        if func & {"builtins.vars"} and len(node.args) == 1:
            return {f"{base}.__dict__" for base in self.resolve(node.args[0])}
        if isinstance(node.func, ast.Attribute) and node.func.attr == "get" and first:
            if "sys.modules" in self.resolve(node.func.value):
                return {first}
        return set()

    def protected(self, names) -> str | None:
        for name in sorted(names):
            if _under(name, PROTECTED_MODULES):
                return name
        return None

    # -- the visitor --

    def visit(self, node) -> None:
        method = getattr(self, f"visit_{type(node).__name__}", None)
        if method is not None:
            method(node)
        else:
            self.generic_visit(node)

    def generic_visit(self, node) -> None:
        for child in ast.iter_child_nodes(node):
            self.visit(child)

    def visit_body(self, statements) -> None:
        self.branch += 1
        try:
            for statement in statements:
                self.visit(statement)
        finally:
            self.branch -= 1

    def visit_If(self, node) -> None:
        self.visit(node.test)
        self.visit_body(node.body)
        self.visit_body(node.orelse)

    visit_While = visit_If

    def visit_For(self, node) -> None:
        self.visit(node.iter)
        self.branch += 1
        try:
            if isinstance(node.iter, (ast.Tuple, ast.List, ast.Set)) and isinstance(
                node.target, ast.Name
            ):
                for element in node.iter.elts:
                    self.bind(node.target.id, self.resolve(element), element, union=True)
            else:
                self.bind_targets(node.target)
        finally:
            self.branch -= 1
        self.visit_body(node.body)
        self.visit_body(node.orelse)

    visit_AsyncFor = visit_For

    def visit_With(self, node) -> None:
        for item in node.items:
            self.visit(item.context_expr)
            if item.optional_vars is not None:
                self.bind_targets(item.optional_vars)
        self.visit_body(node.body)

    visit_AsyncWith = visit_With

    def visit_Try(self, node) -> None:
        self.visit_body(node.body)
        for handler in node.handlers:
            if handler.type is not None:
                self.visit(handler.type)
            if handler.name:
                self.bind(handler.name, union=True)
            self.visit_body(handler.body)
        self.visit_body(node.orelse)
        self.visit_body(node.finalbody)

    visit_TryStar = visit_Try

    def visit_Match(self, node) -> None:
        self.visit(node.subject)
        self.branch += 1
        try:
            for case in node.cases:
                for child in ast.walk(case.pattern):
                    for name in ("name", "rest"):
                        if isinstance(getattr(child, name, None), str):
                            self.bind(getattr(child, name), union=True)
                if case.guard is not None:
                    self.visit(case.guard)
                for statement in case.body:
                    self.visit(statement)
        finally:
            self.branch -= 1

    def visit_Global(self, node) -> None:
        self.scopes[-1].declared_global.update(node.names)

    visit_Nonlocal = visit_Global

    def function_scope(self, node, body, args) -> None:
        self.scopes.append(_Scope(function=True))
        try:
            for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]:
                if arg is not None:
                    self.bind(arg.arg)
            if isinstance(body, list):
                for statement in body:
                    self.visit(statement)
            else:
                self.visit(body)
        finally:
            self.scopes.pop()

    def visit_FunctionDef(self, node) -> None:
        for decorator in node.decorator_list:
            self.visit(decorator)
        for default in [*node.args.defaults, *node.args.kw_defaults]:
            if default is not None:
                self.visit(default)
        self.function_scope(node, node.body, node.args)
        self.bind(node.name)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Lambda(self, node) -> None:
        for default in [*node.args.defaults, *node.args.kw_defaults]:
            if default is not None:
                self.visit(default)
        self.function_scope(node, node.body, node.args)

    def visit_ClassDef(self, node) -> None:
        for child in [*node.decorator_list, *node.bases, *(k.value for k in node.keywords)]:
            self.visit(child)
        self.scopes.append(_Scope(function=True))
        try:
            for statement in node.body:
                self.visit(statement)
        finally:
            self.scopes.pop()
        self.bind(node.name)

    def visit_comprehension_scope(self, node, results) -> None:
        self.visit(node.generators[0].iter)
        self.scopes.append(_Scope(function=True))
        try:
            for number, generator in enumerate(node.generators):
                if number:
                    self.visit(generator.iter)
                self.bind_targets(generator.target)
                for condition in generator.ifs:
                    self.visit(condition)
            for result in results:
                self.visit(result)
        finally:
            self.scopes.pop()

    def visit_ListComp(self, node) -> None:
        self.visit_comprehension_scope(node, [node.elt])

    visit_SetComp = visit_GeneratorExp = visit_ListComp

    def visit_DictComp(self, node) -> None:
        self.visit_comprehension_scope(node, [node.key, node.value])

    # imports

    def visit_Import(self, node) -> None:
        for alias in node.names:
            if alias.asname:
                self.bind(alias.asname, {alias.name})
            else:
                self.bind(alias.name.split(".")[0], {alias.name.split(".")[0]})
            self.check_imported(node, alias.name)

    def visit_ImportFrom(self, node) -> None:
        if node.level or not node.module:
            for alias in node.names:
                if alias.name != "*":
                    self.bind(alias.asname or alias.name)
            return
        for alias in node.names:
            if node.module == "__future__":
                feature = getattr(_future, alias.name, None)
                self.future_flags |= getattr(feature, "compiler_flag", 0)
            if alias.name == "*":
                self.scopes[-1].star.append(node.module)
                self.check_imported(node, node.module)
                continue
            name = f"{node.module}.{alias.name}"
            self.bind(alias.asname or alias.name, {name})
            self.check_imported(node, name)

    def check_imported(self, node, name: str) -> None:
        if _is_process(name):
            self.report(node, "process", "flag", f"imports {name}")
        elif _is_hook(name):
            self.report(node, "hook", "flag", f"imports {name}")

    # assignments

    def visit_Assign(self, node) -> None:
        self.visit(node.value)
        for target in node.targets:
            self.assign(target, node.value, node)

    def visit_AnnAssign(self, node) -> None:
        self.visit(node.annotation)
        if node.value is not None:
            self.visit(node.value)
            self.assign(node.target, node.value, node)
        elif not isinstance(node.target, ast.Name):
            self.assign(node.target, None, node)

    def visit_AugAssign(self, node) -> None:
        self.visit(node.value)
        if isinstance(node.target, ast.Name):
            self.bind(node.target.id, union=True)
        else:
            self.assign(node.target, None, node)

    def visit_NamedExpr(self, node) -> None:
        self.visit(node.value)
        self.bind(node.target.id, self.resolve(node.value), node.value)

    def visit_Delete(self, node) -> None:
        for target in node.targets:
            if isinstance(target, (ast.Attribute, ast.Subscript)):
                self.store_into(target, node)

    def assign(self, target, value, statement) -> None:
        if isinstance(target, ast.Name):
            if target.id == "__builtins__":
                self.report(statement, "builtins", "flag", "rebinds __builtins__")
            if value is None:
                self.bind(target.id)
            else:
                self.bind(target.id, self.resolve(value), value)
        elif isinstance(target, (ast.Tuple, ast.List)):
            pairs = isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts)
            if pairs and not any(isinstance(e, ast.Starred) for e in target.elts):
                for element, part in zip(target.elts, value.elts, strict=True):
                    self.assign(element, part, statement)
            else:
                for element in target.elts:
                    self.assign(element, None, statement)
        elif isinstance(target, ast.Starred):
            self.assign(target.value, None, statement)
        else:
            self.store_into(target, statement)

    def bind_targets(self, target) -> None:
        for node in ast.walk(target):
            if isinstance(node, ast.Name):
                self.bind(node.id, union=True)
            elif isinstance(node, (ast.Attribute, ast.Subscript)):
                self.store_into(node, node)

    def store_into(self, target, statement) -> None:
        """An attribute or item store (or delete): into a shared object?"""
        self.visit(target.value)
        if isinstance(target, ast.Subscript):
            self.visit(target.slice)
        if isinstance(target, ast.Attribute) and target.attr in _CODE_ATTRS:
            self.report(statement, "code-patch", "flag", f"replaces {target.attr}")
            return
        bases = self.resolve(target.value)
        if isinstance(target, ast.Attribute):
            full = {f"{base}.{target.attr}" for base in bases}
        else:
            full = bases
            if isinstance(target.value, ast.Call) and _const_str(target.slice) == "__builtins__":
                if self.resolve(target.value.func) & {"builtins.globals", "builtins.locals"}:
                    full = {"builtins"}
        hit = self.protected(full)
        if hit is not None:
            self.report(statement, _root_kind(hit), "flag", f"assigns into {hit}")
        elif isinstance(target, ast.Subscript) and any(_under(b, _ENVIRONMENT) for b in bases):
            self.report(statement, "environment", "flag", "changes an environment variable")

    # calls

    def visit_Call(self, node) -> None:
        if self.is_generated_magic(node):
            self.magic(node)
            return
        self.visit(node.func)
        for argument in node.args:
            self.visit(argument)
        for keyword in node.keywords:
            self.visit(keyword.value)
        self.check_reference(node, self.resolve_call(node))  # getattr(os, "system"), ...
        func = self.resolve(node.func)
        keys = sorted(name for name in func if _is_answer_key(name))
        if keys and not self.test_cell:
            self.report(node, "answer-key", "flag", f"calls {keys[0]}")
        if func & _ENVIRONMENT_CALLS:
            self.report(node, "environment", "flag", f"calls {min(func & _ENVIRONMENT_CALLS)}")
        self.check_setattr(node, func)
        self.check_dynamic(node, func)
        self.check_files(node, func)
        if isinstance(node.func, ast.Attribute):
            self.check_mutator(node)

    def check_setattr(self, node, func) -> None:
        """``setattr(m, a, v)``, ``object.__setattr__(m, a, v)`` and ``m.__setattr__(a, v)``."""
        unbound = {f"builtins.{t}.__{a}attr__" for t in ("object", "type") for a in ("set", "del")}
        if func & ({"builtins.setattr", "builtins.delattr"} | unbound) and node.args:
            target, rest = node.args[0], node.args[1:]
        elif isinstance(node.func, ast.Attribute) and node.func.attr in _SETATTR_METHODS:
            target, rest = node.func.value, node.args
        else:
            return
        attribute = _const_str(rest[0]) if rest else None
        if attribute in _CODE_ATTRS:
            self.report(node, "code-patch", "flag", f"replaces {attribute}")
            return
        names = self.resolve(target)
        if attribute is not None:
            names = names | {f"{name}.{attribute}" for name in names}
        hit = self.protected(names)
        if hit is not None:
            self.report(node, _root_kind(hit), "flag", f"sets an attribute of {hit}")

    def check_mutator(self, node) -> None:
        method = node.func.attr
        if method not in _DICT_MUTATORS | _LIST_MUTATORS:
            return
        for name in sorted(self.resolve(node.func.value)):
            if _under(name, _ENVIRONMENT) and method in _DICT_MUTATORS:
                self.report(node, "environment", "flag", f"changes {name} in place")
                return
            container = (
                _under(name, _IMPORT_MACHINERY)
                or (name.endswith(".__dict__") and _under(name, PROTECTED_MODULES))
                or (name == "builtins" and method in _DICT_MUTATORS)
            )
            constant = _under(name, ("decompkit",)) and (
                name.rsplit(".", 1)[-1].isupper() or name.rsplit(".", 1)[-1].startswith("_")
            )
            if container or constant:
                self.report(node, _root_kind(name), "flag", f"changes {name} in place")
                return

    def check_dynamic(self, node, func) -> None:
        if func & {"builtins.exec", "builtins.eval", "builtins.compile"} and node.args:
            code = _const_str(node.args[0])
            if code is None or self.depth >= 5:
                self.report(node, "dynamic-code", "note", "runs code the scan cannot read")
                return
            literal = node.args[0]
            line = self.fixed_line
            if line is None:
                line = node.lineno + self.offset
            spans = literal.end_lineno is not None and literal.end_lineno > literal.lineno
            self.depth += 1
            try:
                if spans:
                    self.scan_python(code, line - 1)
                else:
                    self.scan_python(code, 0, fixed_line=line)
            finally:
                self.depth -= 1
        elif func & {"builtins.__import__", "importlib.import_module"}:
            if not node.args or _const_str(node.args[0]) is None:
                self.report(node, "dynamic-code", "note", "imports a module named at run time")
        elif func & {"builtins.getattr"} and len(node.args) >= 2:
            if _const_str(node.args[1]) is None and self.resolve(node.args[0]):
                self.report(node, "dynamic-code", "note", "looks up a name at run time")

    def visit_Subscript(self, node) -> None:
        self.generic_visit(node)
        if isinstance(node.value, ast.Call) and _const_str(node.slice) is None:
            if self.resolve(node.value.func) & {"builtins.globals", "builtins.locals"}:
                self.report(node, "dynamic-code", "note", "looks up a name at run time")

    # -- IPython magics, as the kernel's transformer rewrites them --

    def is_generated_magic(self, node) -> bool:
        func = node.func
        return (
            isinstance(func, ast.Attribute)
            and func.attr in _GENERATED
            and isinstance(func.value, ast.Call)
            and isinstance(func.value.func, ast.Name)
            and func.value.func.id == "get_ipython"
            and self.fixed_line is None
            and node.lineno in self.escaped_lines
        )

    def magic(self, node) -> None:
        line = node.lineno + self.offset
        if self.shown and node.lineno <= len(self.shown):
            shown = self.shown[node.lineno - 1]
        else:
            shown = ast.unparse(node)
        args = [_const_str(a) for a in node.args]
        kind = node.func.attr
        if kind in ("system", "getoutput"):
            self.report(None, "magic", "note", "shell command", shown, line=line)
            return
        name = args[0] if args else None
        argument = args[1] if len(args) > 1 else None
        if name in _CODE_LINE_MAGICS and argument is not None:
            self.magic_code(argument, line, shown)
        elif name in _NOTED_LINE_MAGICS:
            self.report(None, "magic", "note", _NOTED_LINE_MAGICS[name], shown, line=line)

    def magic_code(self, argument: str, line: int, shown: str) -> None:
        """Scan the Python code given to %time / %timeit / %prun (options dropped)."""
        words = argument.split(" ")
        for start in range(min(len(words), 8)):
            code = " ".join(words[start:])
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    ast.parse(code)
            except (SyntaxError, ValueError):
                continue
            self.depth += 1
            try:
                self.scan_python(code, 0, fixed_line=line)
            finally:
                self.depth -= 1
            return
        self.report(None, "magic", "note", "magic argument not checkable", shown, line=line)

    # -- references to hooks and processes --

    def visit_Name(self, node) -> None:
        if isinstance(node.ctx, ast.Load):
            self.check_reference(node)

    def visit_Attribute(self, node) -> None:
        if isinstance(node.ctx, ast.Load):
            self.check_reference(node)
        self.visit(node.value)

    def check_reference(self, node, names=None) -> None:
        parent = self.parents.get(id(node))
        if (
            isinstance(parent, ast.Attribute)
            and parent.value is node
            and isinstance(parent.ctx, ast.Load)
        ):
            return  # the longer chain is checked instead
        names = self.resolve(node) if names is None else names
        shown = self.chain(node)
        for name in sorted(names):
            if _is_hook(name):
                self.report(shown, "hook", "flag", f"uses {name}")
                return
            if _is_process(name):
                self.report(shown, "process", "flag", f"uses {name}")
                return

    def chain(self, node):
        """The whole expression a reference heads: ``get_ipython().events.register(f)``."""
        while True:
            parent = self.parents.get(id(node))
            if isinstance(parent, (ast.Attribute, ast.Subscript)) and parent.value is node:
                node = parent
            elif isinstance(parent, ast.Call) and parent.func is node:
                node = parent
            else:
                return node

    # -- files --

    def check_files(self, node, func) -> None:
        if func & _OPENERS:
            path = self.argument(node, 0, ("file", "name", "filename", "path"))
            mode = self.argument(node, 1, ("mode",))
            self.check_open(node, path, mode)
            return
        if func & {"os.open"}:
            path = self.argument(node, 0, ("path",))
            flags = self.argument(node, 1, ("flags",)) or ast.Constant(None)
            names = {n.attr for n in ast.walk(flags) if isinstance(n, ast.Attribute)}
            if names & {"O_WRONLY", "O_RDWR", "O_CREAT", "O_TRUNC", "O_APPEND"}:
                self.check_path_args(node, [path], certain=True)
            elif not names or not names <= {"O_RDONLY", "O_CLOEXEC", "O_NOFOLLOW"}:
                self.check_path_args(node, [path], certain=False)
            return
        for name in sorted(func):
            if name in _WRITERS:
                paths = [self.argument(node, i, ()) for i in range(_WRITERS[name])]
                paths += [k.value for k in node.keywords if k.arg in _PATH_KEYWORDS]
                self.check_path_args(node, paths, certain=True)
                return
        if not isinstance(node.func, ast.Attribute):
            return
        method, receiver = node.func.attr, node.func.value
        if method in _PATH_METHODS:
            self.check_path_args(node, [receiver], certain=True)
        elif method in _PATHLIKE_METHODS and self.pathlike(receiver):
            if method == "open":
                self.check_open(node, receiver, self.argument(node, 0, ("mode",)))
            elif method == "mkdir":
                self.check_path_args(node, [receiver], certain=True)
            else:
                target = self.argument(node, 0, ("target",))
                self.check_path_args(node, [receiver, target], certain=True)

    @staticmethod
    def argument(node, index, keywords):
        if len(node.args) > index and not any(isinstance(a, ast.Starred) for a in node.args):
            return node.args[index]
        for keyword in node.keywords:
            if keyword.arg in keywords:
                return keyword.value
        return None

    def check_open(self, node, path, mode) -> None:
        if mode is None:
            return  # the default mode reads
        text = _const_str(mode)
        if text is not None and not set(text) & set("wax+"):
            return
        self.check_path_args(node, [path], certain=text is not None)

    def check_path_args(self, node, paths, certain: bool) -> None:
        problem, unknown = "", False
        for path in paths:
            if path is None:
                continue
            found, missing = self.judge(path, head=True, join=False, depth=0)
            problem = problem or found
            unknown = unknown or missing
        if problem:
            reason = problem if certain else f"{problem}; mode not checkable"
            self.report(node, "file-write", "flag", reason)
        elif unknown:
            reason = "path not checkable" if certain else "path and mode not checkable"
            self.report(node, "file-write", "note", reason)

    def judge(self, node, head: bool, join: bool, depth: int) -> tuple[str, bool]:
        """(why the path leaves the working folder or '', whether some part is unknown)."""
        if depth > 8:
            return "", True
        if isinstance(node, ast.Constant):
            if isinstance(node.value, (str, bytes)):
                text = node.value if isinstance(node.value, str) else node.value.decode("latin-1")
                return _literal_path_problem(text, head=head or join), False
            return "", False
        if isinstance(node, ast.JoinedStr):
            parts = [
                (value if isinstance(value, ast.Constant) else value.value, number == 0)
                for number, value in enumerate(node.values)
            ]
            return self.combine(parts, head, False, depth)
        if isinstance(node, ast.BinOp):
            if isinstance(node.op, ast.Div):
                return self.combine([(node.left, True), (node.right, False)], head, True, depth)
            if isinstance(node.op, (ast.Add, ast.Mult, ast.Mod)):
                return self.combine([(node.left, True), (node.right, False)], head, False, depth)
            return "", True
        if isinstance(node, ast.IfExp):
            return self.combine([(node.body, True), (node.orelse, True)], head, join, depth)
        if isinstance(node, ast.Name):
            _, values = self.lookup(node.id)
            if not values or any(v is None for v in values):
                return "", True
            return self.combine([(v, True) for v in values], head, join, depth)
        if isinstance(node, ast.Attribute):
            if node.attr == "parent" and _depth(self.fold(node.value)) >= 2:
                return "", False  # Path("results/fig.png").parent stays inside
            if node.attr in ("parent", "parents"):
                return "goes up a folder (.parent)", False
            names = self.resolve(node)
            if names & _HERE:
                return "", False
            for name in sorted(names):
                if name in _ELSEWHERE:
                    return f"writes into {_ELSEWHERE[name]}", False
            return "", True
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute):
            if node.value.attr == "parents":
                return "goes up a folder (.parents)", False
        if isinstance(node, ast.Call):
            return self.judge_call(node, head, join, depth)
        return "", True

    def judge_call(self, node, head, join, depth) -> tuple[str, bool]:
        names = self.resolve(node.func)
        if names & _HERE:
            return "", False
        for name in sorted(names):
            if name in _ELSEWHERE:
                return f"writes into {_ELSEWHERE[name]}", False
        if names & _JOINS:
            if any(isinstance(a, ast.Starred) for a in node.args):
                return "", True
            parts = [(argument, number == 0) for number, argument in enumerate(node.args)]
            return self.combine(parts, head, True, depth)
        if isinstance(node.func, ast.Attribute):
            method, receiver = node.func.attr, node.func.value
            if method == "joinpath":
                parts = [(receiver, True)] + [(a, False) for a in node.args]
                return self.combine(parts, head, True, depth)
            if method in _SAME_PATH_METHODS or (method == "format" and _const_str(receiver)):
                parts = [(receiver, True)] + [(a, False) for a in node.args]
                return self.combine(parts, head, False, depth)
        return "", True

    def fold(self, node) -> str | None:
        """The literal path an expression builds from constants only (None if it does not)."""
        text = _const_str(node)
        if text is not None:
            return text
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            left, right = self.fold(node.left), self.fold(node.right)
            return None if left is None or right is None else f"{left}/{right}"
        if isinstance(node, ast.Call) and self.resolve(node.func) & _PATH_BUILDERS:
            parts = [self.fold(argument) for argument in node.args]
            return None if None in parts or node.keywords else "/".join(parts or ["."])
        return None

    def combine(self, parts, head, join, depth) -> tuple[str, bool]:
        problem, unknown = "", False
        for part, first in parts:
            found, missing = self.judge(part, head and first, join, depth + 1)
            problem = problem or found
            unknown = unknown or missing
        return problem, unknown

    def pathlike(self, node, depth: int = 0) -> bool:
        """Built as a pathlib path (so ``.rename``/``.open`` are file operations)."""
        if depth > 8:
            return False
        if isinstance(node, ast.Call):
            names = self.resolve(node.func)
            if names & (_PATH_BUILDERS | {"pathlib.Path.cwd", "pathlib.Path.home"}):
                return True
            if isinstance(node.func, ast.Attribute) and (
                node.func.attr in _SAME_PATH_METHODS | {"joinpath"}
            ):
                return self.pathlike(node.func.value, depth + 1)
            return False
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            return self.pathlike(node.left, depth + 1) or self.pathlike(node.right, depth + 1)
        if isinstance(node, ast.Attribute) and node.attr == "parent":
            return self.pathlike(node.value, depth + 1)
        if isinstance(node, ast.Name):
            values = self.lookup(node.id)[1]
            return any(v is not None and self.pathlike(v, depth + 1) for v in values)
        return False


# --- public API ---------------------------------------------------------------------------


def _source(cell) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def _unreadable(name: str, reason: str) -> list[Flag]:
    return [Flag(name, None, None, None, "notebook", name, "flag", reason)]


def scan_notebook(nb_or_path, *, name: str | None = None) -> list[Flag]:
    """Scan one notebook for constructs no honest answer needs.

    Parameters
    ----------
    nb_or_path : dict or path
        A notebook already read (a ``dict`` or ``nbformat.NotebookNode``, version 4) or the
        path of an ``.ipynb`` file.
    name : str, optional
        The name reported in each :class:`Flag` (default: the file name, or ``"<notebook>"``).

    Returns
    -------
    list of Flag
        Ordered by cell and line. A file that is not a readable notebook gives one flag of kind
        ``"notebook"`` and no exception.

    Raises
    ------
    ValueError
        If ``nb_or_path`` is neither a notebook dict nor a path.

    Notes
    -----
    Code cells are read in order with IPython's own input transforms, so ``%time`` and
    ``%%capture`` bodies are scanned as Python, ``%run``, ``!cmd`` and shell cell magics give
    notes, and ``get_ipython()`` written by the student is flagged. Import aliases
    (``import numpy as n``, ``from decompkit import grading as g``) and simple assignments
    (``b = builtins``) are followed across cells. Calling functions and reading attributes of
    any module is fine; assigning into a protected module (:data:`PROTECTED_MODULES`) is not.
    A write whose path is computed at run time is a note ("path not checkable").

    Examples
    --------
    >>> nb = {"cells": [
    ...     {"cell_type": "code", "metadata": {}, "source": "import numpy as np"},
    ...     {"cell_type": "code", "metadata": {"nbgrader": {"grade_id": "answer"}},
    ...      "source": "x = np.isclose(1, 1)\\nnp.isclose = lambda *a, **k: True"},
    ... ]}
    >>> [(f.cell, f.grade_id, f.line, f.kind, f.severity) for f in scan_notebook(nb)]
    [(1, 'answer', 2, 'module-patch', 'flag')]
    """
    if isinstance(nb_or_path, dict):
        nb, label = nb_or_path, name or "<notebook>"
    elif isinstance(nb_or_path, (str, os.PathLike)):
        path = Path(nb_or_path)
        label = name or path.name
        try:
            nb = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError) as error:
            return _unreadable(label, f"not a readable notebook ({type(error).__name__})")
    else:
        raise ValueError(f"nb_or_path must be a notebook dict or a path, got {nb_or_path!r}")
    cells = nb.get("cells") if isinstance(nb, dict) else None
    if not isinstance(cells, list) or not all(isinstance(c, dict) for c in cells):
        return _unreadable(label, "not a notebook (no list of cells)")
    scanner = _Scanner(label)
    for index, cell in enumerate(cells):
        if cell.get("cell_type") != "code":
            continue
        metadata = cell.get("metadata") or {}
        grading = (metadata.get("nbgrader") or {}) if isinstance(metadata, dict) else {}
        grade_id = grading.get("grade_id") if isinstance(grading, dict) else None
        # Test cells are the instructor's (nbgrader restores them from the source before it
        # grades): their hidden tests read the answer keys, as they must.
        scanner.test_cell = isinstance(grading, dict) and grading.get("grade") is True
        scanner.scan_cell(index, grade_id, _source(cell))
    return sorted(scanner.flags, key=lambda f: (f.cell, f.line or 0))


def scan_submission(folder) -> list[Flag]:
    """Scan every ``*.ipynb`` directly inside ``folder`` (in name order).

    Parameters
    ----------
    folder : path
        A student's submission folder, e.g. ``submitted/<student>/<assignment>``.

    Returns
    -------
    list of Flag
        The findings of :func:`scan_notebook` for each notebook, one after the other.

    Raises
    ------
    ValueError
        If ``folder`` is not an existing folder.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     _ = (Path(folder) / "broken.ipynb").write_text("{ not json")
    ...     [(f.notebook, f.kind, f.severity) for f in scan_submission(folder)]
    [('broken.ipynb', 'notebook', 'flag')]
    """
    root = Path(folder)
    if not root.is_dir():
        raise ValueError(f"folder must be an existing folder, got {str(folder)!r}")
    flags = []
    for path in sorted(root.glob("*.ipynb")):
        flags.extend(scan_notebook(path))
    return flags


_COLUMNS = ("severity", "notebook", "cell", "grade_id", "line", "kind", "construct", "reason")


def to_rows(flags) -> list[dict]:
    """The flags as dicts (one per flag, keys in :class:`Flag` field order), e.g. for a CSV.

    Examples
    --------
    >>> import csv, io
    >>> rows = to_rows([Flag("a.ipynb", 3, "x_answer", 2, "process", "os._exit(0)", "flag")])
    >>> out = io.StringIO()
    >>> writer = csv.DictWriter(out, fieldnames=list(rows[0]), lineterminator="\\n")
    >>> _ = writer.writeheader()
    >>> writer.writerows(rows)
    >>> print(out.getvalue(), end="")
    notebook,cell,grade_id,line,kind,construct,severity,reason
    a.ipynb,3,x_answer,2,process,os._exit(0),flag,
    """
    return [asdict(flag) for flag in flags]


def format_report(flags) -> str:
    """A plain-text table of the flags for the instructor, flags before notes.

    Examples
    --------
    >>> print(format_report([]))
    Integrity scan: nothing to report.
    >>> report = format_report(
    ...     [Flag("a.ipynb", 3, "x_answer", 2, "process", "os._exit(0)", "flag", "uses os._exit")]
    ... )
    >>> print(report)
    Integrity scan: 1 flag, 0 notes.
    severity  notebook  cell  grade_id  line  kind     construct    reason
    --------  --------  ----  --------  ----  -------  -----------  -------------
    flag      a.ipynb   3     x_answer  2     process  os._exit(0)  uses os._exit
    """
    flags = sorted(
        flags,
        key=lambda f: (
            f.severity != "flag",
            f.notebook,
            f.cell if f.cell is not None else -1,
            f.line or 0,
        ),
    )
    if not flags:
        return "Integrity scan: nothing to report."
    n_flags = sum(f.severity == "flag" for f in flags)
    n_notes = len(flags) - n_flags
    title = (
        f"Integrity scan: {n_flags} flag{'s' * (n_flags != 1)}, "
        f"{n_notes} note{'s' * (n_notes != 1)}."
    )
    rows = [
        [("" if getattr(f, c) is None else str(getattr(f, c))) for c in _COLUMNS] for f in flags
    ]
    widths = [max(len(c), *(len(r[i]) for r in rows)) for i, c in enumerate(_COLUMNS)]
    lines = [
        "  ".join(c.ljust(w) for c, w in zip(_COLUMNS, widths, strict=True)).rstrip(),
        "  ".join("-" * w for w in widths),
    ]
    lines += ["  ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    return "\n".join([title, *lines])


def main(argv: list[str] | None = None) -> int:
    """Print the report for each folder given; exit status 1 when anything is flagged."""
    import argparse
    import csv

    parser = argparse.ArgumentParser(
        prog="python -m decompkit.integrity",
        description="Static integrity scan of submitted notebooks, before grading.",
    )
    parser.add_argument("folders", nargs="+", help="submission folders (each holds *.ipynb)")
    parser.add_argument("--csv", help="also write the findings to this CSV file")
    args = parser.parse_args(argv)
    flags = []
    for folder in args.folders:
        flags.extend(scan_submission(folder))
    print(format_report(flags))
    if args.csv:
        with open(args.csv, "w", newline="", encoding="utf-8") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(Flag.__dataclass_fields__))
            writer.writeheader()
            writer.writerows(to_rows(flags))
    return int(any(f.severity == "flag" for f in flags))


if __name__ == "__main__":
    sys.exit(main())
