r"""Each student's own version of the five planning architectures, for Part A of notebook 03.

A version :math:`v` of architecture :math:`a` changes the lecture's placement :math:`\pi_a` on
a few dimensions :math:`C_v \subset D` and keeps it elsewhere:
:math:`\pi_v(d) = \pi_a(d)` for :math:`d \notin C_v`. Its sentence states the change in the
architecture's own terms, never in the vocabulary of the answer, so placing it still means
reading the description and deciding each cell; version 0 is the lecture's own.
"""

from __future__ import annotations

from typing import NamedTuple

from .. import architectures

__all__ = ["Version", "VERSIONS", "architecture_name", "version", "placement", "grade"]


class Version(NamedTuple):
    """One way a team's build differs from the published architecture.

    Attributes
    ----------
    sentence : str
        What the build does differently, in the architecture's terms.
    changes : dict
        ``{dimension: choice}`` where the placement differs from the lecture's.
    """

    sentence: str
    changes: dict


_SAME = "Your version works exactly as described above (the lecture's own)."

#: ``{architecture: (version 1, version 2, ...)}``; version 0 is the lecture's placement.
VERSIONS = {
    "Plan-and-Execute": (
        Version(
            "Before the planner reads a step's result, a unit test written by the programmer "
            "checks it.",
            {"step_verification": "deterministic assertion"},
        ),
        Version(
            "Each item of the to-do list names the tool to call and its input; the item is "
            "run as that single tool call, without an agent loop.",
            {"executor_choice": "planner names the tool"},
        ),
        Version(
            "The planner writes the list once, before any step runs; the steps then run one "
            "after the other in the order written, and the planner is never called again.",
            {
                "generation_time": "before execution",
                "execution_order": "list order",
                "replanning": "none",
            },
        ),
        Version(
            "After each step the executor states whether it succeeded, and the planner takes "
            "that statement as the step's outcome.",
            {"step_verification": "executor's own report"},
        ),
        Version(
            "The programmer writes the first to-do list as a fixed template for this kind of "
            "task; the planner only rewrites it after each step.",
            {"provenance": "hybrid"},
        ),
    ),
    "ReWOO": (
        Version(
            "The worker launches every line whose cited evidence already exists, several at "
            "once, instead of walking the lines as written.",
            {"execution_order": "parallel ready set"},
        ),
        Version(
            "When the solver finds the evidence insufficient, it sends the question back to the "
            "planner, which writes a new plan.",
            {"replanning": "on demand"},
        ),
        Version(
            "The plan is not written by a model: a programmer wrote it once for this kind of "
            "question, with the #E slots; the model only solves.",
            {"provenance": "fixed in code"},
        ),
        Version(
            "The lines name no tool: each is a sub-question handed to one general ReAct agent "
            "holding all the tools.",
            {"executor_choice": "one react executor"},
        ),
        Version(
            "Code checks each tool output against the type its line expects (a number, a URL) "
            "before it is pasted anywhere.",
            {"step_verification": "deterministic assertion"},
        ),
    ),
    "LLMCompiler": (
        Version(
            "The planner finishes the whole plan before the first task is sent to the fetcher.",
            {"generation_time": "before execution"},
        ),
        Version(
            "There is no joiner: whatever the tasks return is the answer, and the planner is "
            "never called again.",
            {"replanning": "none"},
        ),
        Version(
            "The fetcher has a single slot: it launches the tasks one at a time, in the order "
            "the planner wrote them.",
            {"execution_order": "list order"},
        ),
        Version(
            "Code checks each task's output against a schema before any task that cites it may "
            "start.",
            {"step_verification": "deterministic assertion"},
        ),
        Version(
            "Each task is a sub-question handed to one general ReAct agent holding all the "
            "tools, instead of a function call.",
            {"executor_choice": "one react executor"},
        ),
    ),
    "ADaPT": (
        Version(
            "Whether a task succeeded is decided by a check written in code on the "
            "environment's state, not by what the executor says.",
            {"step_verification": "deterministic assertion"},
        ),
        Version(
            "The sub-tasks of a failed task come from a table the programmer wrote; no model "
            "is asked to decompose.",
            {"provenance": "fixed in code"},
        ),
        Version(
            "The first split of every task is fixed in code by the programmer; deeper splits, "
            "when a sub-task fails, are written by the model.",
            {"provenance": "hybrid"},
        ),
        Version(
            "A failed task is split into a plain sequence of sub-tasks, never joined by OR; "
            "the controller still calls itself on each.",
            {"plan_representation": "list"},
        ),
        Version(
            "The sub-tasks of a failed task come from a classical planner run on a PDDL model "
            "of the environment; no language model writes them.",
            {"provenance": "pddl + classical planner"},
        ),
    ),
    "AdaPlanner": (
        Version(
            "The program has no assertions: each sub-goal's action runs, and nothing checks "
            "what it achieved or sends the program back to the planner.",
            {"step_verification": "none", "replanning": "none"},
        ),
        Version(
            "The program's skeleton (loops and assertions) is written by the programmer; the "
            "model fills in the actions.",
            {"provenance": "hybrid"},
        ),
        Version(
            "Instead of assertions, the acting model is asked after each action whether it "
            "worked, and its answer is taken as the outcome.",
            {"step_verification": "executor's own report"},
        ),
        Version(
            "The planner writes the program statement by statement, and each statement runs "
            "as soon as it is written.",
            {"generation_time": "streamed"},
        ),
        Version(
            "After every action the planner is called again and rewrites the rest of the "
            "program, whether or not an assertion failed.",
            {"generation_time": "after every step", "replanning": "after every step"},
        ),
    ),
}

_CHANGED_HINT = (
    "your version differs from the published one here: reread the sentence under its description"
)


def version(architecture: str, index: int) -> Version:
    """Version ``index`` of ``architecture`` (0: the lecture's own, no change).

    Raises
    ------
    ValueError
        If the architecture is unknown or ``index`` is not one of its versions.

    Examples
    --------
    >>> version("ReWOO", 1).changes
    {'execution_order': 'parallel ready set'}
    >>> version("ReWOO", 0).changes
    {}
    """
    name = architecture_name(architecture)
    versions = VERSIONS[name]
    if not (isinstance(index, int) and 0 <= index <= len(versions)):
        raise ValueError(f"index must be an int in [0, {len(versions)}], got {index!r}")
    return Version(_SAME, {}) if index == 0 else versions[index - 1]


def architecture_name(architecture: str) -> str:
    """The name in :data:`decompkit.architectures.ARCHITECTURES` that ``architecture`` spells
    (case, spaces and hyphens do not matter).

    Raises
    ------
    ValueError
        If it spells none of them.
    """
    key = "".join(c for c in str(architecture).lower() if c.isalnum())
    for known in architectures.ARCHITECTURES:
        if "".join(c for c in known.lower() if c.isalnum()) == key:
            return known
    raise ValueError(
        f"architecture must be one of {list(architectures.ARCHITECTURES)}, got {architecture!r}"
    )


def placement(architecture: str, index: int) -> dict:
    """The placement of version ``index`` of ``architecture``: the lecture's, changed.

    Examples
    --------
    >>> placement("AdaPlanner", 1)["replanning"], placement("AdaPlanner", 0)["replanning"]
    ('none', 'rewrite on a failed assertion')
    """
    return architectures.placement(architecture) | version(architecture, index).changes


def grade(architecture: str, index: int, answers) -> dict:
    """:func:`decompkit.architectures.grade_placement` against version ``index``: a changed
    cell is right when it matches the version, and its hint points at the version's sentence.
    """
    changes = version(architecture, index).changes
    return architectures.grade_placement(
        architecture, answers, changes={d: (c, _CHANGED_HINT) for d, c in changes.items()}
    )
