"""The scope-tracking visitor of the integrity scan: what each name in a notebook may hold.

The cells run in one kernel, in order, so the visitor keeps one module scope across cells and
a scope per function, class and comprehension inside them. Each binding records the dotted
origins a name may hold (``import numpy as n`` gives ``n`` the origin ``numpy``;
``b = builtins`` gives ``b`` the origin ``builtins``) and the expressions bound to it; a
binding inside a branch or a function adds to what the name held instead of replacing it,
since the scan cannot tell which branch ran. An expression then resolves to the set of names
it may denote, and the rules (:mod:`.rules`) and the path evaluator (:mod:`.paths`) judge it.
"""

from __future__ import annotations
import __future__ as _future

import ast
import builtins
import re
import warnings

from .calls import CallEvaluator, Scope
from .checks import Checks
from .paths import PathEvaluator
from .rules import CODE_ATTRS, Flag, const_str, holds_answers, imported, stored

__all__ = ["Scanner"]

_WIDTH = 80
_SHADOWS_IMPORT = "rebinds __import__, which reading the answers out of the kernel uses"
# What a nested source (a %%time body, an exec string) replaces while it is visited.
_PER_SOURCE = ("source", "offset", "escaped_lines", "parents", "fixed_line", "shown")


def _shorten(text: str, width: int = _WIDTH) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 3] + "..."


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


class Scanner(Checks, PathEvaluator, CallEvaluator):
    """Walks the cells of one notebook in order, keeping the module scope across cells.

    Each cell is read as the kernel reads it (:meth:`scan_source`), then visited statement by
    statement: imports and assignments bind names to the dotted origins they may hold
    (:meth:`bind`, :meth:`resolve`); calls, references and stores are checked against the
    rules (:class:`.checks.Checks`) and file operations against the working folder
    (:class:`.paths.PathEvaluator`). Findings collect in :attr:`flags`.
    """

    def __init__(self, notebook: str):
        self.notebook = notebook
        self.test_cell = False  # set per cell by scan_notebook
        self.flags: list[Flag] = []
        self.seen: set[tuple] = set()
        self.module = Scope(function=False)
        self.future_flags = 0
        # per cell / per nested source
        self.scopes: list[Scope] = [self.module]
        self.branch = 0
        self.cell: int | None = None
        self.grade_id: str | None = None
        self.source = ""
        self.offset = 0
        self.fixed_line: int | None = None
        self.escaped_lines: set[int] = set()
        self.parents: dict[int, ast.AST] = {}
        self.depth = 0
        self.applying = 0
        self.shown: list[str] | None = None

    # -- reporting --

    def report(self, node, kind, severity, reason, text=None, line=None):
        """Record a finding at ``node`` (or at ``line``, showing ``text``), once per place."""
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
        construct = _shorten(text)
        key = (self.cell, line, kind, severity, construct)
        if key in self.seen:
            return
        self.seen.add(key)
        self.flags.append(
            Flag(self.notebook, self.cell, self.grade_id, line, kind, construct, severity, reason)
        )

    def flag(self, node, finding) -> None:
        """Report ``finding`` (a ``(kind, reason)`` from :mod:`.rules`, or None) as a flag."""
        if finding is not None:
            self.report(node, finding[0], "flag", finding[1])

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
        """Visit Python ``code`` (a cell, a %%time body, an exec string), then restore the
        state of the source that holds it."""
        saved = {name: getattr(self, name) for name in _PER_SOURCE}
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
            for name, value in saved.items():
                setattr(self, name, value)

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
            key = const_str(node.slice)
            base = self.resolve(node.value)
            if key is not None and "sys.modules" in base:
                return {key}
            if key is not None and isinstance(node.value, ast.Call):
                if self.resolve(node.value.func) & {"builtins.globals", "builtins.locals"}:
                    return set(self.lookup(key)[0])
            if key is not None:
                # m.__dict__["key"] and vars(m)["key"] are m.key; a table of the package
                # (EXERCISES["chain"]) leads on to what it holds
                return {
                    f"{b[: -len('.__dict__')]}.{key}" if b.endswith(".__dict__") else f"{b}.{key}"
                    for b in base
                    if b.endswith(".__dict__") or b.startswith("decompkit")
                }
            return set()
        if isinstance(node, ast.Call):
            return self.resolve_call(node)
        if isinstance(node, ast.NamedExpr):
            return self.resolve(node.value)
        return set()

    def resolve_call(self, node: ast.Call) -> set[str]:
        func = self.resolve(node.func)
        first = const_str(node.args[0]) if node.args else None
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
            name = const_str(node.args[1])
            if name is not None:
                return {f"{base}.{name}" for base in self.resolve(node.args[0])}
        if func & {"builtins.vars"} and len(node.args) == 1:
            return {f"{base}.__dict__" for base in self.resolve(node.args[0])}
        if isinstance(node.func, ast.Attribute) and node.func.attr == "get" and first:
            owners = self.resolve(node.func.value)
            if "sys.modules" in owners:
                return {first}
            return {f"{o[: -len('.__dict__')]}.{first}" for o in owners if o.endswith(".__dict__")}
        return self.applied(node)

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
        self.scopes.append(Scope(function=True))
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
        if node.name == "__import__":
            self.report(node, "builtins", "flag", _SHADOWS_IMPORT, f"def {node.name}(...)")
        self.bind(node.name, value=node)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Lambda(self, node) -> None:
        for default in [*node.args.defaults, *node.args.kw_defaults]:
            if default is not None:
                self.visit(default)
        self.function_scope(node, node.body, node.args)

    def visit_ClassDef(self, node) -> None:
        for child in [*node.decorator_list, *node.bases, *(k.value for k in node.keywords)]:
            self.visit(child)
        self.scopes.append(Scope(function=True))
        try:
            for statement in node.body:
                self.visit(statement)
        finally:
            self.scopes.pop()
        self.bind(node.name)

    def visit_comprehension_scope(self, node, results) -> None:
        self.visit(node.generators[0].iter)
        self.scopes.append(Scope(function=True))
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
            self.flag(node, imported(alias.name))

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
                self.flag(node, imported(node.module))
                continue
            name = f"{node.module}.{alias.name}"
            self.bind(alias.asname or alias.name, {name})
            self.flag(node, imported(name))

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
            elif target.id == "__import__":
                self.report(statement, "builtins", "flag", _SHADOWS_IMPORT)
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
        if isinstance(target, ast.Attribute) and target.attr in CODE_ATTRS:
            self.report(statement, "code-patch", "flag", f"replaces {target.attr}")
            return
        bases = self.resolve(target.value)
        if isinstance(target, ast.Attribute):
            full = {f"{base}.{target.attr}" for base in bases}
        else:
            full = bases
            name = const_str(target.slice)
            if isinstance(target.value, ast.Call) and name in ("__builtins__", "__import__"):
                if self.resolve(target.value.func) & {"builtins.globals", "builtins.locals"}:
                    full = {"builtins" if name == "__builtins__" else "builtins.__import__"}
        self.flag(statement, stored(full, bases, item=isinstance(target, ast.Subscript)))

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
        self.check_call(node)

    def visit_Subscript(self, node) -> None:
        self.generic_visit(node)
        if const_str(node.slice) is not None:
            return
        if isinstance(node.value, ast.Call):
            if self.resolve(node.value.func) & {"builtins.globals", "builtins.locals"}:
                self.report(node, "dynamic-code", "note", "looks up a name at run time")
                return
        owners = {
            b[: -len(".__dict__")] for b in self.resolve(node.value) if b.endswith(".__dict__")
        }
        if any(holds_answers(o) for o in owners):
            self.run_time_lookup(node, owners)

    # -- references to hooks and processes --

    def visit_Name(self, node) -> None:
        if isinstance(node.ctx, ast.Load):
            self.check_reference(node)

    def visit_Attribute(self, node) -> None:
        if isinstance(node.ctx, ast.Load):
            self.check_reference(node)
        self.visit(node.value)
