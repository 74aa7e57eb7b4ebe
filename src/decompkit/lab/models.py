r"""The models of the lab: scripted and offline by default, a real one on request.

Every role (extractor, planner, solver, replanner, coder) is an agent with a typed output
:math:`y \in Y`; the model proposes :math:`y`, the schema of :math:`Y` accepts or rejects it.
Offline, each role is a Pydantic AI ``FunctionModel`` that writes a fixed, deterministic
answer (some of them wrong on purpose). Set ``DECOMPKIT_MODEL`` to a model name such as
``openai:gpt-4o`` and every role uses that model instead; nothing else changes.
"""

from __future__ import annotations

import json
import os
import re

from pydantic_ai import Agent
from pydantic_ai.messages import ModelRequest, ModelResponse, ToolCallPart, UserPromptPart
from pydantic_ai.models.function import FunctionModel

from ..validate import count
from .tools import TOOLS

__all__ = [
    "MODEL_ENV",
    "ROLES",
    "SCRIPTS",
    "PLANS",
    "model",
    "model_in_use",
    "agent",
]

#: The environment variable that names a real model, e.g. ``openai:gpt-4o``.
MODEL_ENV = "DECOMPKIT_MODEL"

#: The roles a model plays in the lab.
ROLES = ("extractor", "planner", "solver", "replanner", "coder")


def _step(sid, tool, args, depends_on=()):
    return {"id": sid, "tool": tool, "args": args, "depends_on": list(depends_on)}


_QUOTES = [
    _step("E1", "search", {"query": "supplier P quote 500 units"}),
    _step("E2", "search", {"query": "supplier Q quote 500 units"}),
    _step("E3", "search", {"query": "supplier R quote 500 units"}),
    _step("E4", "fetch_page", {"url": "#E1"}, ["E1"]),
    _step("E5", "fetch_page", {"url": "#E2"}, ["E2"]),
    _step("E6", "fetch_page", {"url": "#E3"}, ["E3"]),
    _step("E7", "compare", {"pages": ["#E4", "#E5", "#E6"]}, ["E4", "E5", "E6"]),
]


def _edited(**changes):
    """The quotes plan with some steps replaced: ``E5=(tool, args, depends_on)``."""
    steps = []
    for s in _QUOTES:
        if s["id"] in changes:
            steps.append(_step(s["id"], *changes[s["id"]]))
        else:
            steps.append(dict(s))
    return steps


#: The plans the scripted planner writes, by script name: one good plan, one the graph
#: library cannot express, and plans with structural faults put in on purpose.
PLANS = {
    # Three quotes fetched independently, then compared.
    "quotes": _QUOTES,
    # An N: the comparison reads both pages, the delivery search only Q's.
    "n_shape": [
        _step("E1", "fetch_page", {"url": "https://p.example/quote"}),
        _step("E2", "fetch_page", {"url": "https://q.example/quote"}),
        _step("E3", "compare", {"pages": ["#E1", "#E2"]}, ["E1", "E2"]),
        _step("E4", "search", {"query": "delivery time of the offer: #E2"}, ["E2"]),
        _step("E5", "fetch_page", {"url": "#E4"}, ["E4"]),
    ],
    # A tool that does not exist.
    "unknown_tool": _edited(E5=("fetch_pages", {"url": "#E2"}, ["E2"])),
    # The first search waits for the comparison, which waits for it.
    "cycle": _edited(
        E1=("search", {"query": "supplier P quote below #E7"}, ["E7"]),
    ),
    # The comparison reads E6 without listing it: it could start before E6 has an output.
    "contradiction": _edited(
        E7=("compare", {"pages": ["#E4", "#E5", "#E6"]}, ["E4", "E5"]),
    ),
    # All three faults at once, and a spurious dependency.
    "broken": [
        _step("E1", "search", {"query": "supplier P quote 500 units"}),
        _step("E2", "search", {"query": "supplier Q quote 500 units"}),
        _step("E3", "fetch_page", {"url": "#E1"}, ["E1", "E2"]),
        _step("E4", "fetch_pages", {"url": "#E2"}, ["E2"]),
        _step("E5", "compare", {"pages": ["#E3", "#E4", "#E6"]}, ["E3", "E4", "E6"]),
        _step("E6", "fetch_page", {"url": "#E5"}, ["E5"]),
    ],
}

_TOOL_LINES = "\n".join(f"- {name}: {text}" for name, text in TOOLS.items())

_INSTRUCTIONS = {
    "extractor": (
        "Read the web page in the prompt and return the supplier's name, the price per unit "
        "in euros as a number, and the number of units the quote is for."
    ),
    "planner": (
        "Plan before acting; do not run anything. Write the plan as a list of steps. Each "
        f"step calls exactly one of these tools:\n{_TOOL_LINES}\nName the steps E1, E2, ... "
        "In an argument, write #E<k> where the output of step E<k> belongs. List in "
        "depends_on exactly the steps the arguments read, no more and no fewer."
    ),
    "solver": (
        "Answer the goal from the evidence only, in one sentence. Cite the ids of the steps "
        "whose output you use."
    ),
    "replanner": (
        "A step of the plan failed; the prompt holds the plan, the steps that already ran and "
        "the failure report. Write new steps, with fresh ids starting at next_id, that obtain "
        "the same information another way, using only these tools:\n"
        f"{_TOOL_LINES}\nThen map the failed step's id to the id of the new step whose output "
        "replaces it. Never change a step that already ran."
    ),
    "coder": (
        "Write the code change the task asks for and say whether the code handles an empty "
        "input. Read any failure report in the task carefully."
    ),
}


# --------------------------------------------------------------------------------------------
# Scripted behaviour: what each offline model writes
# --------------------------------------------------------------------------------------------


def _prompt(messages) -> str:
    """The user prompt of the run (the first request's text)."""
    for message in messages:
        if isinstance(message, ModelRequest):
            for part in message.parts:
                if isinstance(part, UserPromptPart) and isinstance(part.content, str):
                    return part.content
    return ""


def _attempt(messages) -> int:
    """1 for the model's first answer in this run, 2 after one rejection, ..."""
    return 1 + sum(isinstance(m, ModelResponse) for m in messages)


def _answer(info, data) -> ModelResponse:
    return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, data)])


_PAGE_QUOTE = re.compile(r"Supplier (\w+) quotes (\d+(?:\.\d+)?) EUR per unit for (\d+) units")


def _extractor(script):
    def write(messages, info):
        found = _PAGE_QUOTE.search(_prompt(messages))
        supplier, price, units = found.groups() if found else ("?", "0", "0")
        good = {"supplier": supplier, "price_eur": float(price), "units": int(units)}
        # A format fault: numbers written as text with their units.
        malformed = {"supplier": supplier, "price_eur": f"{price} EUR", "units": f"{units} units"}
        if script == "malformed" or (script == "malformed_once" and _attempt(messages) == 1):
            return _answer(info, malformed)
        if script == "wrong":  # well-formed, but the decimal point slipped
            return _answer(info, {**good, "price_eur": float(price) * 10})
        return _answer(info, good)

    return write


def _planner(script):
    def write(messages, info):
        goal = _prompt(messages).strip() or "no goal given"
        return _answer(info, {"goal": goal, "steps": [dict(s) for s in PLANS[script]]})

    return write


_EVIDENCE = re.compile(r"^(\w+) = (.*)$", re.MULTILINE)


def _solver(script):
    def write(messages, info):
        for sid, text in reversed(_EVIDENCE.findall(_prompt(messages))):
            if "cheapest" in text:
                return _answer(info, {"text": text, "cites": [sid]})
        return _answer(info, {"text": "The evidence does not answer the goal.", "cites": []})

    return write


def _replanner(script):
    def write(messages, info):
        request = json.loads(_prompt(messages))
        steps = {s["id"]: s for s in request["steps"]}
        failed = steps[request["failed"]["id"]]
        n = int(request["next_id"])
        reads = failed["depends_on"]
        source = steps.get(reads[0]) if reads else None
        if failed["tool"] == "fetch_page" and source is not None and source["tool"] == "search":
            # The page is down: look for an archived copy and read that instead.
            query = source["args"]["query"] + ", archived copy"
            new = [
                _step(f"E{n}", "search", {"query": query}),
                _step(f"E{n + 1}", "fetch_page", {"url": f"#E{n}"}, [f"E{n}"]),
            ]
        else:  # run the same call again as a new node
            new = [_step(f"E{n}", failed["tool"], failed["args"], failed["depends_on"])]
        repair = {"steps": new, "repoint": {failed["id"]: new[-1]["id"]}}
        return _answer(info, repair)

    return write


def _coder(script):
    def write(messages, info):
        fixed = "empty" in _prompt(messages).lower()
        summary = (
            "mean() returns 0.0 for an empty list and the average otherwise"
            if fixed
            else "mean() returns sum(xs) / len(xs)"
        )
        return _answer(info, {"summary": summary, "handles_empty_input": fixed})

    return write


#: The scripts each role can follow offline; the first is the default.
SCRIPTS = {
    "extractor": ("clean", "malformed_once", "malformed", "wrong"),
    "planner": tuple(PLANS),
    "solver": ("evidence",),
    "replanner": ("archive",),
    "coder": ("reads_report",),
}
_WRITERS = {
    "extractor": _extractor,
    "planner": _planner,
    "solver": _solver,
    "replanner": _replanner,
    "coder": _coder,
}


def _real_model() -> str | None:
    name = os.environ.get(MODEL_ENV, "").strip()
    return name or None


def model(role: str, *, script: str | None = None):
    """The model for ``role``: the scripted one, or the one ``DECOMPKIT_MODEL`` names.

    Parameters
    ----------
    role : str
        One of :data:`ROLES`.
    script : str, optional
        Which scripted behaviour to follow (one of ``SCRIPTS[role]``; default the first).
        Ignored when a real model is set.

    Returns
    -------
    pydantic_ai.models.function.FunctionModel or str
        The scripted model, or the model name read from the environment, which
        :class:`pydantic_ai.Agent` resolves (credentials from the provider's usual variable).

    Raises
    ------
    ValueError
        If ``role`` or ``script`` is unknown.

    Examples
    --------
    >>> import os
    >>> saved = os.environ.pop(MODEL_ENV, None)
    >>> model("planner").model_name
    'scripted-planner-quotes'
    >>> os.environ[MODEL_ENV] = "openai:gpt-4o"
    >>> model("planner")  # passed through; nothing is contacted here
    'openai:gpt-4o'
    >>> _ = os.environ.pop(MODEL_ENV) if saved is None else os.environ.update({MODEL_ENV: saved})
    """
    if role not in ROLES:
        raise ValueError(f"role must be one of {ROLES}, got {role!r}")
    scripts = SCRIPTS[role]
    script = scripts[0] if script is None else script
    if script not in scripts:
        raise ValueError(f"script for the {role} must be one of {scripts}, got {script!r}")
    real = _real_model()
    if real is not None:
        return real
    return FunctionModel(_WRITERS[role](script), model_name=f"scripted-{role}-{script}")


def model_in_use() -> str:
    """One line saying which model the lab's agents use.

    Examples
    --------
    >>> import os
    >>> saved = os.environ.pop(MODEL_ENV, None)
    >>> print(model_in_use())
    scripted models, offline (set DECOMPKIT_MODEL, e.g. to openai:gpt-4o, to use a real one)
    >>> _ = saved is None or os.environ.update({MODEL_ENV: saved})
    """
    real = _real_model()
    if real is None:
        return (
            "scripted models, offline (set DECOMPKIT_MODEL, e.g. to openai:gpt-4o, "
            "to use a real one)"
        )
    return f"{real} (from {MODEL_ENV}); every role calls it"


def agent(role: str, output_type, *, script: str | None = None, retries: int = 1) -> Agent:
    """An agent for ``role`` whose output is validated against ``output_type``.

    Parameters
    ----------
    role : str
        One of :data:`ROLES`; sets the instructions and the scripted behaviour.
    output_type : type
        A Pydantic model: the schema every answer must satisfy.
    script : str, optional
        See :func:`model`.
    retries : int, optional
        How many times a rejected answer is sent back to the model with the validation
        error before the run gives up (default 1).

    Returns
    -------
    pydantic_ai.Agent
        No model is contacted until the agent runs.

    Examples
    --------
    >>> from decompkit.lab.schema import Quote
    >>> agent("extractor", Quote).name
    'extractor'
    """
    retries = int(count("retries", retries, minimum=0))
    return Agent(
        model(role, script=script),
        output_type=output_type,
        instructions=_INSTRUCTIONS[role],
        retries=retries,
        name=role,
        defer_model_check=True,
    )
