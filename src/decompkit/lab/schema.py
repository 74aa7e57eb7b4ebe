r"""Typed plans and answers: the contracts that cross a model's boundary, checked twice.

A plan is a list of steps :math:`s_i = (\mathrm{id}_i, \mathrm{tool}_i, \mathrm{args}_i, D_i)`.
The *schema* check (Pydantic) accepts exactly the well-typed plans: it never rejects a correct
one (:math:`\varphi = 0`) and catches format faults only. The *structure* check then asks for
known tools, no cycle in :math:`\{\mathrm{id}_i: D_i\}`, and :math:`D_i` equal to the steps
that the ``#E`` placeholders in :math:`\mathrm{args}_i` read. :func:`require_plan`, the
argument check of every runner, is public for the lab's modules; the package lifts ``__all__``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from pydantic import BaseModel, ConfigDict, Field

from ..plan import PlanError, edge_contradictions, validate_plan

__all__ = [
    "TypedStep",
    "TypedPlan",
    "Quote",
    "Answer",
    "Code",
    "PlanRepair",
    "check_plan",
    "plan_problems",
    "substitute",
]


class TypedStep(BaseModel):
    """One step of a plan: a tool call whose arguments may read earlier steps."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(description="Unique id of the step, e.g. 'E3'.")
    tool: str = Field(description="Name of the tool the step calls.")
    args: dict[str, str | list[str]] = Field(
        description="Arguments of the tool; '#E2' in a value stands for the output of step E2."
    )
    depends_on: list[str] = Field(
        default_factory=list, description="Ids of the steps whose output the arguments read."
    )


class TypedPlan(BaseModel):
    """A plan as a planner writes it: the goal and its steps, in the planner's order."""

    model_config = ConfigDict(extra="forbid")

    goal: str
    steps: list[TypedStep]

    def as_dict(self) -> dict:
        """The plan as plain data, the form :mod:`decompkit.plan` checks."""
        return self.model_dump()

    def step(self, sid: str) -> TypedStep:
        """The step with id ``sid``.

        Raises
        ------
        ValueError
            If no step has that id.
        """
        for step in self.steps:
            if step.id == sid:
                return step
        raise ValueError(f"sid must name a step of the plan, got {sid!r}")


class Quote(BaseModel):
    """A supplier's quote, read off a web page (the typed output of the first tutorial)."""

    model_config = ConfigDict(extra="forbid")

    supplier: str = Field(description="Name of the supplier, e.g. 'Q'.")
    price_eur: float = Field(gt=0, description="Price per unit in euros.")
    units: int = Field(gt=0, description="Number of units the quote is for.")


class Answer(BaseModel):
    """The solver's answer and the evidence it rests on."""

    text: str
    cites: list[str] = Field(description="Ids of the steps whose output the answer uses.")


class Code(BaseModel):
    """A code change written by the coding step of the third tutorial."""

    summary: str
    handles_empty_input: bool


class PlanRepair(BaseModel):
    """What a replanner writes after a failure: new steps, and who reads them instead.

    ``repoint`` maps a failed step to the new step whose output replaces it; every step not
    yet run that read the failed one reads the new one instead. Executed steps never change.
    """

    model_config = ConfigDict(extra="forbid")

    steps: list[TypedStep]
    repoint: dict[str, str]


# --------------------------------------------------------------------------------------------
# The structure check
# --------------------------------------------------------------------------------------------


def require_plan(plan) -> TypedPlan:
    """``plan`` itself if it is a :class:`TypedPlan`; a ValueError naming its type otherwise."""
    if not isinstance(plan, TypedPlan):
        raise ValueError(f"plan must be a TypedPlan, got {type(plan).__name__}")
    return plan


def _as_data(plan) -> dict:
    if isinstance(plan, TypedPlan):
        return plan.as_dict()
    if isinstance(plan, Mapping):
        return dict(plan)
    raise ValueError(f"plan must be a TypedPlan or a mapping, got {type(plan).__name__}")


def plan_problems(plan, tools, *, max_steps: int = 20) -> list:
    """Every structural problem of a plan, or ``[]``: nothing has to run to find them.

    Parameters
    ----------
    plan : TypedPlan or Mapping
        A typed plan, or the same as plain data.
    tools : iterable of str
        The tools the executor offers.
    max_steps : int, optional
        The largest plan accepted (default 20).

    Returns
    -------
    list of decompkit.plan.PlanProblem
        The problems :func:`decompkit.plan.validate_plan` reports, then the disagreements of
        ``depends_on`` with the placeholders (:func:`decompkit.plan.edge_contradictions`);
        a problem both find is listed once.

    Raises
    ------
    ValueError
        If ``plan`` is neither a TypedPlan nor a mapping, or ``tools``/``max_steps`` are invalid.

    Examples
    --------
    >>> plan = TypedPlan(goal="g", steps=[
    ...     TypedStep(id="E1", tool="search", args={"query": "x"}),
    ...     TypedStep(id="E2", tool="fetch_page", args={"url": "#E1"}),
    ... ])
    >>> [(p.kind, p.steps) for p in plan_problems(plan, {"search", "fetch_page"})]
    [('placeholder_without_dependency', ('E2', 'E1'))]
    """
    data = _as_data(plan)
    problems = []
    try:
        validate_plan(data, tools, max_steps=max_steps)
    except PlanError as error:
        problems.extend(error.problems)
    try:
        found = edge_contradictions(data)
    except PlanError as error:
        found = error.problems
    seen = {(p.kind, p.steps) for p in problems}
    problems.extend(p for p in found if (p.kind, p.steps) not in seen)
    return problems


def check_plan(plan, tools, *, max_steps: int = 20) -> dict:
    """Check a generated plan before anything runs, and return its dependency graph.

    Parameters
    ----------
    plan : TypedPlan or Mapping
    tools : iterable of str
    max_steps : int, optional

    Returns
    -------
    dict
        ``{id: tuple of ids it depends on}`` in plan order.

    Raises
    ------
    decompkit.plan.PlanError
        If :func:`plan_problems` finds anything; ``.problems`` lists all of it.

    Examples
    --------
    >>> plan = TypedPlan(goal="g", steps=[
    ...     TypedStep(id="E1", tool="search", args={"query": "x"}),
    ...     TypedStep(id="E2", tool="fetch_page", args={"url": "#E1"}, depends_on=["E1"]),
    ... ])
    >>> check_plan(plan, {"search", "fetch_page"})
    {'E1': (), 'E2': ('E1',)}
    """
    problems = plan_problems(plan, tools, max_steps=max_steps)
    if problems:
        raise PlanError(problems)
    return validate_plan(_as_data(plan), tools, max_steps=max_steps)


# --------------------------------------------------------------------------------------------
# Placeholders
# --------------------------------------------------------------------------------------------

# The two placeholder forms decompkit.plan reads: ``#E3`` (ReWOO) and ``$3``/``${3}``.
_TOKEN = re.compile(r"#E(\d+)|\$(?:\{(\d+)\}|(\d+))")


def _target(match, ids: list) -> str:
    """The step a placeholder names, by the rule of :func:`decompkit.plan.placeholder_edges`."""
    token = match.group(0)
    if match.group(1) is not None:
        digits, name = match.group(1), "E" + match.group(1)
    else:
        digits = match.group(2) or match.group(3)
        name = digits
    for candidate in (token, name):
        if candidate in ids:
            return candidate
    position = int(digits)
    if 1 <= position <= len(ids):
        return ids[position - 1]
    raise ValueError(f"placeholder {token!r} names no step of the plan")


def substitute(args, evidence: Mapping, ids=None):
    """The arguments with every placeholder replaced by the output of the step it names.

    Parameters
    ----------
    args : str, list or Mapping
        A step's arguments, nested to any depth.
    evidence : Mapping
        ``{step id: output}`` of the steps run so far.
    ids : list of str, optional
        The step ids of the plan in order, for placeholders that name a step by position
        (default: the keys of ``evidence``).

    Returns
    -------
    The same shape as ``args``.

    Raises
    ------
    ValueError
        If ``evidence`` is not a mapping, ``ids`` is neither None nor an iterable of step
        ids (a str is not one), or a placeholder names no step, or a step whose output is
        not in ``evidence``.

    Examples
    --------
    >>> substitute({"url": "#E1", "pages": ["#E1", "x"]}, {"E1": "https://p.example"})
    {'url': 'https://p.example', 'pages': ['https://p.example', 'x']}
    """
    if not isinstance(evidence, Mapping):
        raise ValueError(f"evidence must be a mapping {{step id: output}}, got {evidence!r}")
    if isinstance(ids, (str, bytes)) or not (ids is None or isinstance(ids, Iterable)):
        raise ValueError(f"ids must be None or an iterable of step ids, got {ids!r}")
    ids = list(evidence) if ids is None else list(ids)

    def text(value: str) -> str:
        def output(match):
            sid = _target(match, ids)
            if sid not in evidence:
                raise ValueError(
                    f"placeholder {match.group(0)!r} reads {sid!r}, which has no output"
                )
            return str(evidence[sid])

        return _TOKEN.sub(output, value)

    def walk(value):
        if isinstance(value, str):
            return text(value)
        if isinstance(value, Mapping):
            return {k: walk(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [walk(v) for v in value]
        return value

    return walk(args)
