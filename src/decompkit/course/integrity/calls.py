"""What a call of a getter or of a small function gives: the scan's call evaluator.

``operator.attrgetter("key")(chain)`` is ``chain.key``, ``(lambda m: m.key)(chain)`` too, and
so is ``pick(chain)`` after ``def pick(m): return m.key``: the visitor (:mod:`.visitor`)
resolves such calls through :class:`CallEvaluator`, which binds the parameters to what the
arguments may denote and resolves what the function returns (three calls deep at most).
``operator.methodcaller("key", P)(chain)`` runs ``chain.key`` itself (:meth:`invoked`).
:class:`Scope` is the visitor's record of the names bound in one scope.
"""

from __future__ import annotations

import ast

from .rules import const_str

__all__ = ["CallEvaluator", "Scope"]


class Scope:
    """Names bound in one scope: the dotted origins they may hold and the expressions bound."""

    def __init__(self, function: bool):
        self.function = function
        self.origins: dict[str, set[str]] = {}
        self.values: dict[str, list] = {}
        self.declared_global: set[str] = set()
        self.star: list[str] = []


class CallEvaluator:
    """Mixed into the visitor; relies on its ``resolve``, ``lookup``, ``scopes`` and the
    counter ``applying``."""

    def makers(self, func) -> list:
        """The expressions that say what calling ``func`` does: a getter built by ``operator``,
        a lambda, or a function defined in the notebook (directly or through a name)."""
        kinds = (ast.Lambda, ast.Call, ast.FunctionDef, ast.AsyncFunctionDef)
        if isinstance(func, (ast.Lambda, ast.Call)):
            return [func]
        if isinstance(func, ast.Name):
            return [v for v in self.lookup(func.id)[1] if isinstance(v, kinds)]
        return []

    def getter(self, maker) -> tuple[str, list] | None:
        """``("attr" | "method", names)`` for ``operator.attrgetter/methodcaller(...)``."""
        if not isinstance(maker, ast.Call):
            return None
        names = [const_str(a) for a in maker.args]
        kind = self.resolve(maker.func)
        if kind & {"operator.attrgetter"} and names and None not in names:
            return "attr", names
        if kind & {"operator.methodcaller"} and names[:1] and names[0] is not None:
            return "method", names[:1]
        return None

    def invoked(self, node: ast.Call) -> set[str]:
        """The names a call runs besides its function: ``methodcaller("m")(obj)`` runs obj.m."""
        found = set()
        for maker in self.makers(node.func):
            got = self.getter(maker)
            if got is not None and got[0] == "method" and node.args:
                found |= {f"{b}.{got[1][0]}" for b in self.resolve(node.args[0])}
        return found

    def applied(self, node: ast.Call) -> set[str]:
        """What a call returns, when its function is a getter, a lambda or a small function
        of the notebook whose return value the arguments decide."""
        found = set()
        if self.applying >= 3:
            return found
        for maker in self.makers(node.func):
            got = self.getter(maker)
            if got is not None:
                if got[0] == "attr" and node.args:
                    bases = self.resolve(node.args[0])
                    found |= {f"{b}.{name}" for b in bases for name in got[1]}
            elif isinstance(maker, (ast.Lambda, ast.FunctionDef, ast.AsyncFunctionDef)):
                found |= self.returned(maker, node)
        return found

    def returned(self, function, call: ast.Call) -> set[str]:
        """The names ``function`` may return when called as ``call``."""
        params = [a.arg for a in [*function.args.posonlyargs, *function.args.args]]
        scope = Scope(function=True)
        for name, argument in zip(params, call.args, strict=False):
            if isinstance(argument, ast.Starred):
                break
            scope.origins[name], scope.values[name] = self.resolve(argument), [None]
        for keyword in call.keywords:
            if keyword.arg in params:
                scope.origins[keyword.arg] = self.resolve(keyword.value)
                scope.values[keyword.arg] = [None]
        if isinstance(function, ast.Lambda):
            results = [function.body]
        else:
            results = [n.value for n in ast.walk(function) if isinstance(n, ast.Return) and n.value]
        self.scopes.append(scope)
        self.applying += 1
        try:
            return set().union(*(self.resolve(r) for r in results)) if results else set()
        finally:
            self.applying -= 1
            self.scopes.pop()
