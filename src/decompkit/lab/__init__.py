r"""The lab: the lecture's planning architectures built with Pydantic AI and pydantic-graph.

Models propose typed answers :math:`y \in Y` (a schema check at every boundary); a plan is a
DAG :math:`G` of tool calls, run in list order (ReWOO, wall time :math:`\sum_v d_v`) or
compiled into a graph whose independent steps overlap (LLMCompiler, wall time near the
critical path). Offline by default: scripted models, simulated tools.

The lab may import the lecture's maths and :mod:`decompkit.exercises` (its visible checks),
never plotting or notebook machinery; only the lab notebook and its tests import it.
"""

from .compiler import (
    CompiledPlan,
    Parallel,
    Series,
    ShapeError,
    compile_plan,
    run_if_valid,
    run_on_scheduler,
    series_parallel,
)
from .execute import LabRun, Recorder, durations, run_checked_step
from .models import MODEL_ENV, PLANS, ROLES, SCRIPTS, agent, model, model_in_use
from .replan import (
    ReplanLimitError,
    apply_repair,
    ask_replanner,
    replanner_prompt,
    run_with_replanning,
)
from .rewoo import ReWOOResult, make_plan, run_rewoo, solve, solver_prompt, work
from .schema import (
    Answer,
    Code,
    PlanRepair,
    Quote,
    TypedPlan,
    TypedStep,
    check_plan,
    plan_problems,
    substitute,
)
from .tools import FAILURE_KINDS, LATENCY_MS, PAGES, TOOLS, Call, Toolbox, ToolError, page
from .tutorials import (
    CANDIDATES,
    Extraction,
    ForkJoinRun,
    Task,
    TestsFailed,
    Timeline,
    coding_graph,
    extract_quote,
    fork_join_graph,
    overlap_ms,
    run_fork_join,
    schema_errors,
    source,
    step_through,
)

__all__ = [
    # models
    "MODEL_ENV",
    "ROLES",
    "SCRIPTS",
    "PLANS",
    "model",
    "model_in_use",
    "agent",
    # typed contracts
    "TypedStep",
    "TypedPlan",
    "Quote",
    "Answer",
    "Code",
    "PlanRepair",
    "check_plan",
    "plan_problems",
    "substitute",
    # tools and execution
    "TOOLS",
    "LATENCY_MS",
    "PAGES",
    "FAILURE_KINDS",
    "ToolError",
    "Call",
    "Toolbox",
    "page",
    "LabRun",
    "Recorder",
    "run_checked_step",
    "durations",
    # tutorials
    "Extraction",
    "extract_quote",
    "schema_errors",
    "CANDIDATES",
    "Timeline",
    "fork_join_graph",
    "ForkJoinRun",
    "run_fork_join",
    "overlap_ms",
    "Task",
    "TestsFailed",
    "coding_graph",
    "step_through",
    "source",
    # architectures
    "make_plan",
    "work",
    "solve",
    "solver_prompt",
    "ReWOOResult",
    "run_rewoo",
    "Series",
    "Parallel",
    "ShapeError",
    "series_parallel",
    "CompiledPlan",
    "compile_plan",
    "run_if_valid",
    "run_on_scheduler",
    "ReplanLimitError",
    "replanner_prompt",
    "ask_replanner",
    "apply_repair",
    "run_with_replanning",
]
