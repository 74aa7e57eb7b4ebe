"""What the integrity scan looks for: the kinds of finding and the names behind each kind.

A construct is judged by the dotted names it may denote (``os.system``, ``numpy.isclose``,
``sys.modules``), which the visitor (:mod:`.visitor`) resolves through the cell's imports and
assignments. The tables below say which names make which kind of finding; the small functions
after them apply the tables to a set of names (:mod:`.checks` makes those checks where the
visitor meets a call, a reference, a string of code or an IPython magic). A finding is a
:class:`Flag`.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

__all__ = ["KINDS", "PROTECTED_MODULES", "SEVERITIES", "Flag"]

#: Every kind of finding, with what it means (the package docstring has the long form).
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
    "json",
    "decompkit",
    "nbgrader",
    "IPython",
    "ipykernel",
)

SEVERITIES = ("flag", "note")

# --- what counts as what ------------------------------------------------------------------

IPYTHON_HOOKS = tuple(
    "IPython.get_ipython IPython.core IPython.InteractiveShell IPython.terminal IPython.kernel"
    " IPython.embed IPython.start_ipython IPython.start_kernel ipykernel".split()
)
IPYTHON_ALLOWED = ("IPython.core.display", "IPython.core.pylabtools")
TRACE_HOOKS = tuple(
    "sys.settrace sys.setprofile sys.monitoring threading.settrace threading.setprofile"
    " threading.settrace_all_threads threading.setprofile_all_threads".split()
)
PROCESS_MODULES = tuple(
    "subprocess _posixsubprocess pty multiprocessing ctypes _ctypes cffi pexpect signal".split()
)
# Prefixes: "os.exec" covers os.execl, os.execv, ...; "os.spawn" covers os.spawnl, ...
PROCESS_NAMES = tuple(
    "os.system os.popen os.exec os.spawn os.posix_spawn os.fork os.forkpty os.kill os.killpg"
    " os._exit os.abort os.startfile asyncio.create_subprocess_"
    " concurrent.futures.ProcessPoolExecutor concurrent.futures.process".split()
)
ENVIRONMENT = ("os.environ", "os.environb", "posix.environ")
ENVIRONMENT_CALLS = {"os.putenv", "os.unsetenv", "posix.putenv", "posix.unsetenv"}
IMPORT_MACHINERY = ("sys.modules", "sys.meta_path", "sys.path_hooks", "sys.path_importer_cache")
CODE_ATTRS = set(
    "__code__ __defaults__ __kwdefaults__ __globals__ __closure__ f_lineno f_trace"
    " f_trace_lines".split()
)
DICT_MUTATORS = {"update", "setdefault", "pop", "popitem", "clear", "__setitem__", "__delitem__"}
# Container methods that are also NumPy functions (np.append, np.sort, ...): they count only on
# a package constant, never on a module.
LIST_MUTATORS = {"append", "extend", "insert", "remove", "discard", "add", "sort", "reverse"}

# Calls that open a file; the mode says whether they write.
OPENERS = set(
    "builtins.open io.open io.FileIO codecs.open gzip.open bz2.open lzma.open tarfile.open"
    " zipfile.ZipFile".split()
)
# Calls that always change the file system, with how many leading arguments are paths.
WRITERS = dict.fromkeys(
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
PATH_KEYWORDS = set("path src dst file fname filename name database base_name extract_dir".split())
# Methods only paths have: the receiver is the path written.
PATH_METHODS = set(
    "write_text write_bytes touch unlink rmdir symlink_to hardlink_to link_to chmod lchmod".split()
)
# Methods strings and data frames have too: checked only on something built as a Path.
PATHLIKE_METHODS = {"rename", "replace", "mkdir", "open"}
PATH_BUILDERS = {
    f"pathlib.{name}"
    for name in "Path PurePath PosixPath PurePosixPath WindowsPath PureWindowsPath".split()
}
JOINS = PATH_BUILDERS | set(
    "os.path.join posixpath.join ntpath.join os.fspath os.path.normpath os.path.abspath"
    " os.path.realpath builtins.str builtins.bytes".split()
)
HERE = {"pathlib.Path.cwd", "os.getcwd", "os.getcwdb", "os.curdir", "os.path.curdir"}
ELSEWHERE = {
    "pathlib.Path.home": "the home folder",
    "os.path.expanduser": "the home folder",
    "tempfile.gettempdir": "the temporary folder",
    "tempfile.mkdtemp": "the temporary folder",
    "os.pardir": "the parent folder",
    "os.path.pardir": "the parent folder",
}
SAME_PATH_METHODS = {"resolve", "absolute", "expanduser", "with_name", "with_suffix", "with_stem"}

# IPython magics: the ones whose argument is Python code, and the ones worth a note.
CODE_LINE_MAGICS = {"time", "timeit", "prun"}
CODE_CELL_MAGICS = {"time", "timeit", "prun", "capture"}
DISPLAY_CELL_MAGICS = {"html", "HTML", "markdown", "latex", "svg", "javascript", "js"}
NOTED_LINE_MAGICS = {
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
SHELL_CELL_MAGICS = set("bash sh script system ! sx perl ruby python python2 python3 pypy".split())
WRITE_CELL_MAGICS = {"writefile", "file"}
GENERATED = {"run_line_magic", "run_cell_magic", "system", "getoutput"}
SETATTR_METHODS = {"__setattr__", "__delattr__"}


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
        if self.severity not in SEVERITIES:
            raise ValueError(f"severity must be 'flag' or 'note', got {self.severity!r}")
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {sorted(KINDS)}, got {self.kind!r}")


# --- reading the tables -------------------------------------------------------------------

# The functions below that return ``(kind, reason)`` describe a finding before it has a place
# (cell and line); None means there is nothing to report.


def under(name: str, roots) -> bool:
    """True when the dotted ``name`` is one of ``roots`` or lies under one of them."""
    return any(name == root or name.startswith(root + ".") for root in roots)


def root_kind(name: str) -> str:
    if under(name, ("builtins",)):
        return "builtins"
    if under(name, IMPORT_MACHINERY):
        return "sys.modules"
    return "module-patch"


def is_process(name: str) -> bool:
    return under(name, PROCESS_MODULES) or any(name.startswith(p) for p in PROCESS_NAMES)


#: Names in an exercise module (or below one) that hold or compute answers: ``key`` (and
#: ``kinds_key``, ``reads_key``, ...), the mistakes, the hidden tests' ``expected``, cached
#: verdicts.
KEY_PARTS = ("key", "_mistakes", "expected", "_verdicts")


def is_answer_key(name: str) -> bool:
    """Whether the dotted ``name`` is, or lies under, something that holds the answers.

    Examples
    --------
    >>> [is_answer_key(n) for n in ["decompkit.exercises.chain.key.__wrapped__",
    ...  "decompkit.exercises.chain.kinds_key", "decompkit.exercises.chain.check",
    ...  "decompkit.exercises.params.EXERCISES.chain.key", "decompkit.course.key.answer_key",
    ...  "decompkit.lab.checks.expected", "decompkit.lab.checks.check"]]
    [True, True, False, True, True, True, False]
    """
    parts = name.split(".")
    if parts[:2] == ["decompkit", "exercises"]:
        return any(p in KEY_PARTS or p.endswith("_key") for p in parts[2:])
    if parts[:3] == ["decompkit", "lab", "checks"]:  # the lab notebook's hidden tests' key
        return any(p in KEY_PARTS for p in parts[3:])
    return under(name, ("decompkit.course.key",))


def holds_answers(name: str) -> bool:
    """A module whose names a run-time lookup could turn into an answer key."""
    return under(name, ("decompkit.exercises", "decompkit.course", "decompkit.lab.checks")) or (
        name in ("decompkit", "decompkit.lab")
    )


def is_hook(name: str) -> bool:
    if under(name, IPYTHON_ALLOWED):
        return False
    return under(name, IPYTHON_HOOKS) or under(name, TRACE_HOOKS)


def protected(names) -> str | None:
    """The first of ``names`` inside a protected module, or None."""
    for name in sorted(names):
        if under(name, PROTECTED_MODULES):
            return name
    return None


def const_str(node) -> str | None:
    """The text of a string literal (None for any other expression)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


def literal_path_problem(text: str, *, head: bool) -> str:
    """Why a literal path piece leaves the working folder ('' when it does not).

    Examples
    --------
    >>> literal_path_problem("/etc/passwd", head=True), literal_path_problem("a/../..", head=False)
    ('absolute path', "path contains '..'")
    >>> literal_path_problem("results/fig.png", head=True)
    ''
    """
    if ".." in re.split(r"[\\/]+", text):
        return "path contains '..'"
    if head and (text[:1] in ("/", "\\", "~") or re.match(r"^[A-Za-z]:", text)):
        return "absolute path"
    return ""


def imported(name: str) -> tuple[str, str] | None:
    """What importing ``name`` is, when it is a finding."""
    if is_process(name):
        return "process", f"imports {name}"
    if is_hook(name):
        return "hook", f"imports {name}"
    return None


def used(names) -> tuple[str, str] | None:
    """What reading any of ``names`` (the name of a hook or of a process call) is."""
    for name in sorted(names):
        if is_hook(name):
            return "hook", f"uses {name}"
        if is_process(name):
            return "process", f"uses {name}"
    return None


def stored(targets, bases, item: bool) -> tuple[str, str] | None:
    """An attribute or item store into ``targets`` (the store's ``bases`` hold the object)."""
    hit = protected(targets)
    if hit is not None:
        return root_kind(hit), f"assigns into {hit}"
    if item and any(under(base, ENVIRONMENT) for base in bases):
        return "environment", "changes an environment variable"
    return None


def attribute_set(names, attribute: str | None) -> tuple[str, str] | None:
    """``setattr`` (or ``__setattr__``, ``delattr``) of ``attribute`` on an object ``names``."""
    if attribute in CODE_ATTRS:
        return "code-patch", f"replaces {attribute}"
    if attribute is not None:
        names = set(names) | {f"{name}.{attribute}" for name in names}
    hit = protected(names)
    return None if hit is None else (root_kind(hit), f"sets an attribute of {hit}")


def mutated(method: str, names) -> tuple[str, str] | None:
    """A call of the container method ``method`` on an object ``names``, when a finding."""
    if method not in DICT_MUTATORS | LIST_MUTATORS:
        return None
    for name in sorted(names):
        if under(name, ENVIRONMENT) and method in DICT_MUTATORS:
            return "environment", f"changes {name} in place"
        container = (
            under(name, IMPORT_MACHINERY)
            or (name.endswith(".__dict__") and under(name, PROTECTED_MODULES))
            or (name == "builtins" and method in DICT_MUTATORS)
        )
        constant = under(name, ("decompkit",)) and (
            name.rsplit(".", 1)[-1].isupper() or name.rsplit(".", 1)[-1].startswith("_")
        )
        if container or constant:
            return root_kind(name), f"changes {name} in place"
    return None
