"""The path evaluator: does a file operation write outside the working folder W?

A path expression p is read piece by piece. A literal piece leaves W when it is absolute at
the head of p or holds ``..``; a name stands for every value it was bound to; a join (``/``,
``os.path.join``, ``Path(a, b)``, ``joinpath``) leaves W when one of its pieces does; the
working folder itself (``Path.cwd()``) stays, the home and temporary folders and ``.parent``
leave. What cannot be read this way (a value computed at run time) makes the operation a note,
not a flag: ``(problem, unknown)`` is what every step returns.
"""

from __future__ import annotations

import ast
import re

from .rules import (
    ELSEWHERE,
    HERE,
    JOINS,
    OPENERS,
    PATH_BUILDERS,
    PATH_KEYWORDS,
    PATH_METHODS,
    PATHLIKE_METHODS,
    SAME_PATH_METHODS,
    WRITERS,
    const_str,
    literal_path_problem,
)

__all__ = ["PathEvaluator"]


def _depth(path: str | None) -> int:
    """Folders below the working folder a relative literal path reaches (0 if unknown)."""
    if path is None or literal_path_problem(path, head=True):
        return 0
    return len([part for part in re.split(r"[\\/]+", path) if part not in ("", ".")])


class PathEvaluator:
    """The file-writing checks of the integrity scan's visitor (mixed into it).

    It relies on three methods of the visitor: ``resolve(node)`` (the dotted names an
    expression may denote), ``lookup(name)`` (the origins and the expressions a name was bound
    to) and ``report(node, kind, severity, reason)``.
    """

    def check_files(self, node, func) -> None:
        """Report the call ``node`` (of a function that may be ``func``) if it writes a file
        outside the working folder: an opener in a writing mode, a writer, a path method."""
        if func & OPENERS:
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
            if name in WRITERS:
                paths = [self.argument(node, i, ()) for i in range(WRITERS[name])]
                paths += [k.value for k in node.keywords if k.arg in PATH_KEYWORDS]
                self.check_path_args(node, paths, certain=True)
                return
        if not isinstance(node.func, ast.Attribute):
            return
        method, receiver = node.func.attr, node.func.value
        if method in PATH_METHODS:
            self.check_path_args(node, [receiver], certain=True)
        elif method in PATHLIKE_METHODS and self.pathlike(receiver):
            if method == "open":
                self.check_open(node, receiver, self.argument(node, 0, ("mode",)))
            elif method == "mkdir":
                self.check_path_args(node, [receiver], certain=True)
            else:
                target = self.argument(node, 0, ("target",))
                self.check_path_args(node, [receiver, target], certain=True)

    @staticmethod
    def argument(node, index, keywords):
        """Argument ``index`` of a call, or the first of ``keywords`` given (None if absent)."""
        if len(node.args) > index and not any(isinstance(a, ast.Starred) for a in node.args):
            return node.args[index]
        for keyword in node.keywords:
            if keyword.arg in keywords:
                return keyword.value
        return None

    def check_open(self, node, path, mode) -> None:
        if mode is None:
            return  # the default mode reads
        text = const_str(mode)
        if text is not None and not set(text) & set("wax+"):
            return
        self.check_path_args(node, [path], certain=text is not None)

    def check_path_args(self, node, paths, certain: bool) -> None:
        """Report a file operation on ``paths``: a flag when one leaves the working folder, a
        note when one cannot be read; ``certain`` says whether the call surely writes."""
        problem, unknown = "", False
        for path in paths:
            if path is None:
                continue
            found, missing = self.path_problem(path, head=True, join=False, depth=0)
            problem = problem or found
            unknown = unknown or missing
        if problem:
            reason = problem if certain else f"{problem}; mode not checkable"
            self.report(node, "file-write", "flag", reason)
        elif unknown:
            reason = "path not checkable" if certain else "path and mode not checkable"
            self.report(node, "file-write", "note", reason)

    def path_problem(self, node, head: bool, join: bool, depth: int) -> tuple[str, bool]:
        """(why the path leaves the working folder or '', whether some part is unknown).

        ``head``: the piece may start the path, where an absolute literal leaves W. ``join``:
        the piece is an argument of a join, where an absolute piece replaces what came before.
        ``depth`` counts the pieces walked into; past 8 the path is unknown.
        """
        if depth > 8:
            return "", True
        if isinstance(node, ast.Constant):
            if isinstance(node.value, (str, bytes)):
                text = node.value if isinstance(node.value, str) else node.value.decode("latin-1")
                return literal_path_problem(text, head=head or join), False
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
            if names & HERE:
                return "", False
            for name in sorted(names):
                if name in ELSEWHERE:
                    return f"writes into {ELSEWHERE[name]}", False
            return "", True
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute):
            if node.value.attr == "parents":
                return "goes up a folder (.parents)", False
        if isinstance(node, ast.Call):
            return self.call_path_problem(node, head, join, depth)
        return "", True

    def call_path_problem(self, node, head, join, depth) -> tuple[str, bool]:
        """:meth:`path_problem` of a call: a join of path pieces, a path method, a known place."""
        names = self.resolve(node.func)
        if names & HERE:
            return "", False
        for name in sorted(names):
            if name in ELSEWHERE:
                return f"writes into {ELSEWHERE[name]}", False
        if names & JOINS:
            if any(isinstance(a, ast.Starred) for a in node.args):
                return "", True
            parts = [(argument, number == 0) for number, argument in enumerate(node.args)]
            return self.combine(parts, head, True, depth)
        if isinstance(node.func, ast.Attribute):
            method, receiver = node.func.attr, node.func.value
            if method == "joinpath":
                parts = [(receiver, True)] + [(a, False) for a in node.args]
                return self.combine(parts, head, True, depth)
            if method in SAME_PATH_METHODS or (method == "format" and const_str(receiver)):
                parts = [(receiver, True)] + [(a, False) for a in node.args]
                return self.combine(parts, head, False, depth)
        return "", True

    def fold(self, node) -> str | None:
        """The literal path an expression builds from constants only (None if it does not)."""
        text = const_str(node)
        if text is not None:
            return text
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            left, right = self.fold(node.left), self.fold(node.right)
            return None if left is None or right is None else f"{left}/{right}"
        if isinstance(node, ast.Call) and self.resolve(node.func) & PATH_BUILDERS:
            parts = [self.fold(argument) for argument in node.args]
            return None if None in parts or node.keywords else "/".join(parts or ["."])
        return None

    def combine(self, parts, head, join, depth) -> tuple[str, bool]:
        """:meth:`path_problem` over ``(piece, may be the head)`` pairs, the first problem kept."""
        problem, unknown = "", False
        for part, first in parts:
            found, missing = self.path_problem(part, head and first, join, depth + 1)
            problem = problem or found
            unknown = unknown or missing
        return problem, unknown

    def pathlike(self, node, depth: int = 0) -> bool:
        """Built as a pathlib path (so ``.rename``/``.open`` are file operations)."""
        if depth > 8:
            return False
        if isinstance(node, ast.Call):
            names = self.resolve(node.func)
            if names & (PATH_BUILDERS | {"pathlib.Path.cwd", "pathlib.Path.home"}):
                return True
            if isinstance(node.func, ast.Attribute) and (
                node.func.attr in SAME_PATH_METHODS | {"joinpath"}
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
