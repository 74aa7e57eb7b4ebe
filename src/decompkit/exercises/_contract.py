"""The contract every exercise module fulfils: one named object instead of a convention.

A notebook's exercise module ends with ``EXERCISE = Exercise(...)``; the registry
(:data:`decompkit.exercises.params.EXERCISES`) draws the parameters, the answer key lists the
graded cells and the hidden tests ask the key through it, so the three cannot drift apart.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

__all__ = ["Exercise"]


@dataclass(frozen=True, eq=False)  # functions as fields: identity is equality
class Exercise:
    """What the teaching layer knows of one exercise notebook.

    Attributes
    ----------
    name : str
        The notebook's short name, as ``params(name)`` takes it (``"chain"``).
    file : str
        The notebook's file name without ``.ipynb`` (``"01-chain-reliability"``).
    Params : type
        Its parameter class (a frozen dataclass); ``Params()`` holds the lecture's numbers.
    draw : callable
        ``draw(rng) -> Params``: one candidate of per-student numbers from a NumPy generator.
    key : callable
        ``key(P) -> dict``: every answer for the parameters ``P``.
    check : callable
        ``check(item, answer, P) -> bool``: the visible check of one item of the key.
    degenerate : callable
        ``degenerate(P) -> list of str``: why ``P`` would spoil an exercise (empty if usable).
    grade_cells : mapping of str to str
        ``{grade cell id: key item}`` for every graded cell of the notebook.

    Examples
    --------
    >>> from decompkit.exercises.chain import EXERCISE
    >>> EXERCISE.name, EXERCISE.file, EXERCISE.grade_cells["chain_success_value"]
    ('chain', '01-chain-reliability', 'chain_success')
    """

    name: str
    file: str
    Params: type
    draw: Callable
    key: Callable
    check: Callable
    degenerate: Callable
    grade_cells: Mapping[str, str]

    def __post_init__(self):
        for field in ("name", "file"):
            value = getattr(self, field)
            if not isinstance(value, str) or not value:
                raise ValueError(f"{field} must be a non-empty string, got {value!r}")
        cells = dict(self.grade_cells)
        bad = {k: v for k, v in cells.items() if not (isinstance(k, str) and isinstance(v, str))}
        if bad:
            raise ValueError(f"grade_cells must map cell ids to key items (str), got {bad!r}")
        # Read-only, so a table shared by the answer key and the registry cannot be edited.
        object.__setattr__(self, "grade_cells", MappingProxyType(cells))
