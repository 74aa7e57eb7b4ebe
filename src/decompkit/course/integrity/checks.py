"""Where the integrity scan applies its rules: calls, references, code strings and magics.

:class:`Checks` is mixed into the visitor (:class:`.visitor.Scanner`); at each call, name or
attribute, string of code and IPython magic it asks the tables of :mod:`.rules` which kind of
finding the names the visitor resolved make, and reports it.
"""

from __future__ import annotations

import ast
import warnings

from .rules import (
    CODE_CELL_MAGICS,
    CODE_LINE_MAGICS,
    DISPLAY_CELL_MAGICS,
    ENVIRONMENT_CALLS,
    GENERATED,
    NOTED_LINE_MAGICS,
    SETATTR_METHODS,
    SHELL_CELL_MAGICS,
    WRITE_CELL_MAGICS,
    attribute_set,
    const_str,
    holds_answers,
    is_answer_key,
    literal_path_problem,
    mutated,
    used,
)

__all__ = ["Checks"]


class Checks:
    """What the visitor checks where it meets a call, a reference, a code string or a magic.

    Mixed into the visitor (:class:`.visitor.Scanner`), whose state it reads: ``resolve``,
    ``resolve_call``, ``report``, ``flag``, ``scan_source`` and ``scan_python`` (a string of
    code or a magic's body is scanned as a source of its own), and the state of the source
    being visited (``parents``, ``offset``, ``fixed_line``, ``escaped_lines``, ``shown``,
    ``depth``, ``test_cell``). File operations go to the path evaluator's ``check_files``.
    """

    def check_call(self, node) -> None:
        """Every check of a call whose function and arguments were visited."""
        self.check_reference(node, self.resolve_call(node))  # getattr(os, "system"), ...
        func = self.resolve(node.func)
        keys = sorted(name for name in func | self.invoked(node) if is_answer_key(name))
        if keys and not self.test_cell:
            self.report(node, "answer-key", "flag", f"calls {keys[0]}")
        if func & ENVIRONMENT_CALLS:
            self.report(node, "environment", "flag", f"calls {min(func & ENVIRONMENT_CALLS)}")
        self.check_setattr(node, func)
        self.check_dynamic(node, func)
        self.check_files(node, func)
        if isinstance(node.func, ast.Attribute):
            self.flag(node, mutated(node.func.attr, self.resolve(node.func.value)))

    def check_setattr(self, node, func) -> None:
        """``setattr(m, a, v)``, ``object.__setattr__(m, a, v)`` and ``m.__setattr__(a, v)``."""
        unbound = {f"builtins.{t}.__{a}attr__" for t in ("object", "type") for a in ("set", "del")}
        if func & ({"builtins.setattr", "builtins.delattr"} | unbound) and node.args:
            target, rest = node.args[0], node.args[1:]
        elif isinstance(node.func, ast.Attribute) and node.func.attr in SETATTR_METHODS:
            target, rest = node.func.value, node.args
        else:
            return
        attribute = const_str(rest[0]) if rest else None
        self.flag(node, attribute_set(self.resolve(target), attribute))

    def check_dynamic(self, node, func) -> None:
        """``exec``/``eval`` of a literal is scanned in place; of anything else, a note."""
        if func & {"builtins.exec", "builtins.eval", "builtins.compile"} and node.args:
            code = const_str(node.args[0])
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
            if not node.args or const_str(node.args[0]) is None:
                pieces = (
                    [n.value for n in ast.walk(node.args[0]) if isinstance(n, ast.Constant)]
                    if node.args
                    else []
                )
                if any(isinstance(p, str) and "exercises" in p for p in pieces):
                    self.report(
                        node, "answer-key", "flag", "imports an exercise module named at run time"
                    )
                else:
                    self.report(node, "dynamic-code", "note", "imports a module named at run time")
        elif func & {"builtins.getattr"} and len(node.args) >= 2:
            bases = self.resolve(node.args[0])
            if const_str(node.args[1]) is None and bases:
                self.run_time_lookup(node, bases)

    def run_time_lookup(self, node, bases) -> None:
        """A name of ``bases`` chosen at run time: a flag on an exercise module (it can be
        the answer key), a note elsewhere."""
        answers = sorted(b for b in bases if holds_answers(b))
        if answers:
            self.report(node, "answer-key", "flag", f"looks up a name of {answers[0]} at run time")
        else:
            self.report(node, "dynamic-code", "note", "looks up a name at run time")

    def check_reference(self, node, names=None) -> None:
        """A hook, a process or an answer key named by ``node`` (or by ``names``), reported
        on its chain."""
        parent = self.parents.get(id(node))
        if (
            isinstance(parent, ast.Attribute)
            and parent.value is node
            and isinstance(parent.ctx, ast.Load)
        ):
            return  # the longer chain is checked instead
        names = self.resolve(node) if names is None else names
        self.flag(self.chain(node), used(names))
        keys = sorted(name for name in names if is_answer_key(name))
        if keys and not self.test_cell:
            self.report(self.chain(node), "answer-key", "flag", f"reads {keys[0]}")

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

    def is_generated_magic(self, node) -> bool:
        """A ``get_ipython().run_line_magic(...)`` call IPython wrote, not the student."""
        func = node.func
        return (
            isinstance(func, ast.Attribute)
            and func.attr in GENERATED
            and isinstance(func.value, ast.Call)
            and isinstance(func.value.func, ast.Name)
            and func.value.func.id == "get_ipython"
            and self.fixed_line is None
            and node.lineno in self.escaped_lines
        )

    def magic(self, node) -> None:
        """A line magic or a shell line, as the transformer rewrote it."""
        line = node.lineno + self.offset
        if self.shown and node.lineno <= len(self.shown):
            shown = self.shown[node.lineno - 1]
        else:
            shown = ast.unparse(node)
        args = [const_str(a) for a in node.args]
        kind = node.func.attr
        if kind in ("system", "getoutput"):
            self.report(None, "magic", "note", "shell command", shown, line=line)
            return
        name = args[0] if args else None
        argument = args[1] if len(args) > 1 else None
        if name in CODE_LINE_MAGICS and argument is not None:
            self.magic_code(argument, line, shown)
        elif name in NOTED_LINE_MAGICS:
            self.report(None, "magic", "note", NOTED_LINE_MAGICS[name], shown, line=line)

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

    def cell_magic(self, lines: list[str], offset: int) -> None:
        """A ``%%`` cell: a ``%%time`` body is scanned, ``%%writefile`` checks its path."""
        name, _, argument = lines[0][2:].rstrip().partition(" ")
        line = offset + 1
        if name in CODE_CELL_MAGICS:
            self.scan_source("".join(lines[1:]), offset + 1)
        elif name in DISPLAY_CELL_MAGICS:
            return
        elif name in WRITE_CELL_MAGICS:
            target = [word for word in argument.split() if word != "-a"]
            problem = literal_path_problem(target[0], head=True) if target else ""
            if problem:
                self.report(None, "file-write", "flag", problem, lines[0], line=line)
            else:
                self.report(None, "magic", "note", "writes a file", lines[0], line=line)
        elif name in SHELL_CELL_MAGICS:
            self.report(None, "magic", "note", "runs a script; body not scanned", lines[0], line)
        else:
            self.report(None, "magic", "note", "cell magic; body not scanned", lines[0], line)
