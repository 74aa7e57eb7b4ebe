"""The contract every exercise module fulfils: one named object instead of a convention.

A notebook's exercise module ends with ``EXERCISE = Exercise(...)``; the registry
(:data:`decompkit.exercises.params.EXERCISES`) draws the parameters, the answer key lists the
graded cells and the hidden tests ask the key through it, so the three cannot drift apart.

Every graded item is described once, as data (:class:`Item`: its key, the label the notebook
gives the exercise, the variables the student fills, its graded cell and what kind of answer
it is), and :meth:`Exercise.diagnose` judges one answer into a :class:`Diagnosis`: the status,
a one-line hint that never holds the answer, the id of the named mistake, and whether the
answer is the one the lecture's numbers give instead of the student's own. The visible check
in the notebook (:func:`decompkit.exercises.page.report`), ``kit.py check`` and the grader's
record all print from that one diagnosis. The package lifts ``__all__``; ``UNANSWERED``, the
diagnosis of a placeholder left in place, is public for the judging helpers and the lab.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

__all__ = ["Exercise", "Item", "Diagnosis", "STATUSES", "KINDS", "LECTURE_HINT", "exercise_of"]

#: What a diagnosis can say: right (within the tolerance), wrong, right but rounded too far,
#: still the placeholder ``None``, or not an answer of the kind asked (wrong type, not a choice).
STATUSES = ("ok", "off", "close", "unanswered", "invalid", "answered")

#: What a graded item compares: one number, a yes/no, one choice, a choice per entry, a set,
#: a topological order, a sequence whose order matters, a mapping of sets, a matrix, a plan.
KINDS = (
    "number",
    "bool",
    "choice",
    "choices",
    "set",
    "order",
    "sequence",
    "mapping",
    "matrix",
    "plan",
)

#: The hint for an answer that is right for the lecture's numbers but not for the student's.
LECTURE_HINT = (
    "this is the answer for the lecture's numbers, not for yours: work with the values of P, "
    "which come from your id"
)


@dataclass(frozen=True)
class Item:
    """One graded item of a notebook, as the notebook names it.

    Attributes
    ----------
    key : str
        The answer-key item (``"p_prime"``).
    label : str
        The exercise as the notebook names it (``"B1"``).
    names : tuple of str
        The notebook variables the student fills (``("p_prime",)``).
    grade_cell : str
        The grade_id of the item's graded cell (``"p_prime_value"``).
    kind : str
        What the comparison is, one of :data:`KINDS`.
    form_only : bool
        The item has two or three possible answers (a yes/no, a choice per entry): its visible
        check confirms the form only, since naming what is off would give the answer away, and
        the hidden tests grade the value. :meth:`Exercise.diagnose` still judges the value.

    Examples
    --------
    >>> item = Item("p_prime", "B1", ("p_prime",), "p_prime_value", "number")
    >>> item.title
    'B1 p_prime'
    >>> Item("x", "A1", "x", "x_value", "numbre")
    Traceback (most recent call last):
    ...
    ValueError: kind must be one of ('number', ...), got 'numbre'
    """

    key: str
    label: str
    names: tuple
    grade_cell: str
    kind: str
    form_only: bool = False

    def __post_init__(self):
        for name in ("key", "label", "grade_cell"):
            value = getattr(self, name)
            if not isinstance(value, str) or not value:
                raise ValueError(f"{name} must be a non-empty string, got {value!r}")
        names = (self.names,) if isinstance(self.names, str) else tuple(self.names)
        if not names or not all(isinstance(n, str) and n.isidentifier() for n in names):
            raise ValueError(f"names must be variable names, got {self.names!r}")
        object.__setattr__(self, "names", names)
        if self.kind not in KINDS:
            shown = repr(KINDS[:1])[:-2] + ", ...)"
            raise ValueError(f"kind must be one of {shown}, got {self.kind!r}")

    @property
    def title(self) -> str:
        """The label and the variables, as every message names the item (``"B1 p_prime"``)."""
        return f"{self.label} {', '.join(self.names)}"


@dataclass(frozen=True)
class Diagnosis:
    """The verdict on one answer: what the visible check, the self-check and the record show.

    Attributes
    ----------
    status : str
        One of :data:`STATUSES`.
    message : str
        The one-line hint shown to the student; it never holds the answer or its formula.
    mistake : str or None
        The stable id of the named mistake that matched (``"multiplied_p_by_n"``), else None.
    matches : str or None
        ``"lecture"`` when the answer is the one the lecture's numbers give instead of the
        student's own; None otherwise.

    Examples
    --------
    >>> Diagnosis("ok", "on track").ok
    True
    >>> Diagnosis("wrong", "?")
    Traceback (most recent call last):
    ...
    ValueError: status must be one of ('ok', 'off', ..., 'answered'), got 'wrong'
    """

    status: str
    message: str
    mistake: str | None = None
    matches: str | None = None

    def __post_init__(self):
        if self.status not in STATUSES:
            raise ValueError(f"status must be one of {STATUSES}, got {self.status!r}")
        if not isinstance(self.message, str) or "\n" in self.message:
            raise ValueError(f"message must be one line of text, got {self.message!r}")

    @property
    def ok(self) -> bool:
        """Whether the answer is right (within the item's tolerance)."""
        return self.status == "ok"


#: A diagnosis of the placeholder ``None`` (every item, every notebook).
UNANSWERED = Diagnosis("unanswered", "not answered yet")

#: Every exercise by its parameter class (filled as the exercise modules are imported).
_BY_PARAMS: dict = {}


def exercise_of(P) -> Exercise:
    """The exercise whose parameter object ``P`` is.

    Raises
    ------
    ValueError
        If ``P`` is no exercise notebook's parameter object.

    Examples
    --------
    >>> from decompkit.exercises.chain import ChainParams
    >>> exercise_of(ChainParams()).name
    'chain'
    """
    exercise = _BY_PARAMS.get(type(P))
    if exercise is None:
        raise ValueError(f"P must be the parameter object of an exercise notebook, got {P!r}")
    return exercise


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
    judge : callable
        ``judge(item, answer, P) -> Diagnosis``: the module's verdict on one answer, for the
        numbers ``P`` (:meth:`diagnose` adds what every notebook shares).
    degenerate : callable
        ``degenerate(P) -> list of str``: why ``P`` would spoil an exercise (empty if usable).
    items : tuple of Item
        Every graded item, in notebook order.
    form : callable, optional
        ``form(item, answer, P) -> Diagnosis``: the form check of the items marked
        ``form_only`` (what their visible check says).
    grade_cells : mapping of str to str
        ``{grade cell id: key item}`` for every graded cell, read off :attr:`items`.

    Examples
    --------
    >>> from decompkit.exercises.chain import EXERCISE
    >>> EXERCISE.name, EXERCISE.file, EXERCISE.grade_cells["chain_success_value"]
    ('chain', '01-chain-reliability', 'chain_success')
    >>> EXERCISE.item("p_prime").title
    'B1 p_prime'
    """

    name: str
    file: str
    Params: type
    draw: Callable
    key: Callable
    judge: Callable
    degenerate: Callable
    items: tuple
    form: Callable | None = None
    grade_cells: Mapping[str, str] = field(init=False)

    def __post_init__(self):
        for name in ("name", "file"):
            value = getattr(self, name)
            if not isinstance(value, str) or not value:
                raise ValueError(f"{name} must be a non-empty string, got {value!r}")
        items = tuple(self.items)
        bad = [i for i in items if not isinstance(i, Item)]
        if not items or bad:
            raise ValueError(f"items must be a non-empty sequence of Item, got {bad or items!r}")
        for attribute in ("key", "grade_cell"):
            values = [getattr(i, attribute) for i in items]
            twice = sorted({v for v in values if values.count(v) > 1})
            if twice:
                raise ValueError(f"items must not share a {attribute}, got {twice} twice")
        object.__setattr__(self, "items", items)
        # Read-only, so a table shared by the answer key and the registry cannot be edited.
        cells = MappingProxyType({i.grade_cell: i.key for i in items})
        object.__setattr__(self, "grade_cells", cells)
        _BY_PARAMS[self.Params] = self

    # -- items ------------------------------------------------------------------------------

    def item(self, key: str) -> Item:
        """The item whose answer-key item is ``key``.

        Raises
        ------
        ValueError
            If the notebook has no such item.
        """
        for item in self.items:
            if item.key == key:
                return item
        raise ValueError(f"item must be one of {[i.key for i in self.items]}, got {key!r}")

    def item_of_cell(self, grade_id: str) -> Item:
        """The item graded in the cell ``grade_id``.

        Raises
        ------
        ValueError
            If no item of the notebook is graded there.
        """
        for item in self.items:
            if item.grade_cell == grade_id:
                return item
        raise ValueError(f"grade_id must be one of {list(self.grade_cells)}, got {grade_id!r}")

    def item_of_name(self, name: str) -> Item:
        """The item the notebook variable ``name`` answers.

        Raises
        ------
        ValueError
            If no item of the notebook is filled in ``name``.
        """
        for item in self.items:
            if name in item.names:
                return item
        names = [n for i in self.items for n in i.names]
        raise ValueError(f"name must be one of {names}, got {name!r}")

    # -- verdicts ---------------------------------------------------------------------------

    def diagnose(self, item_key: str, answer, P) -> Diagnosis:
        """The verdict on ``answer`` to the item ``item_key``, for the numbers ``P``.

        Pure: it never prints, and a malformed answer (any type, any value) gets a
        diagnosis, never an exception. An answer that is off for ``P`` but right for the
        lecture's numbers (``Params()``) is told so (``matches="lecture"``), unless it is a
        named mistake with the student's own numbers.

        Raises
        ------
        ValueError
            If ``item_key`` is not an item of this notebook (a mistake in the caller's code,
            not in the answer).

        Examples
        --------
        >>> from decompkit.exercises.params import EXERCISES, params
        >>> chain = EXERCISES["chain"]
        >>> chain.diagnose("chain_success", 0.9 * 10, params("chain")).mistake
        'multiplied_p_by_n'
        >>> P = params("chain", "s0001")
        >>> chain.diagnose("chain_success", 0.9**10, P).matches
        'lecture'
        >>> chain.diagnose("chain_success", object(), P).status
        'invalid'
        """
        item = self.item(item_key)
        verdict = self._judged(item, answer, P)
        if verdict.status not in ("off", "close") or verdict.mistake is not None:
            return verdict  # a named mistake with the student's own numbers says more
        lecture = self.Params()
        if P == lecture:
            return verdict
        if self._judged(item, answer, lecture).ok:
            return Diagnosis("off", LECTURE_HINT, None, "lecture")
        return verdict

    def visible(self, item_key: str, answer, P) -> Diagnosis:
        """What the visible check of the item shows: the diagnosis, or for an item marked
        ``form_only`` only whether the answer has the form asked for."""
        item = self.item(item_key)
        if not item.form_only or self.form is None:
            return self.diagnose(item_key, answer, P)
        if answer is None or answer is Ellipsis:
            return UNANSWERED
        try:
            verdict = self.form(item_key, answer, P)
        except Exception:  # noqa: BLE001 - a malformed answer gets a verdict, not a traceback
            verdict = Diagnosis("invalid", f"could not read this answer as a {item.kind}")
        return verdict

    def _judged(self, item: Item, answer, P) -> Diagnosis:
        if answer is None or answer is Ellipsis:
            return UNANSWERED
        try:
            verdict = self.judge(item.key, answer, P)
        except Exception:  # noqa: BLE001 - a malformed answer gets a verdict, not a traceback
            return Diagnosis("invalid", f"could not read this answer as a {item.kind}")
        if not isinstance(verdict, Diagnosis):
            raise TypeError(f"judge must return a Diagnosis, got {verdict!r}")  # a bug of ours
        return verdict
