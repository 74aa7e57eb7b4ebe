r"""The three short tutorials: a typed output, a fork and a join, a run stepped through.

1. An agent's answer :math:`y` crosses the boundary only if it fits the schema; the check
   never flags a well-formed answer (:math:`\varphi = 0`) and sees format faults only.
2. Two branches of :math:`d` ms each after a fork overlap, so the join fires after about
   :math:`d`, not :math:`2d`.
3. A failed step is repaired by a new task (``write_code'``), never by running the failed
   one again: the graph stays the same, the work it carries grows.
"""

from __future__ import annotations

import inspect
import time
from dataclasses import dataclass, field

from pydantic import ValidationError
from pydantic_ai import capture_run_messages
from pydantic_ai.exceptions import UnexpectedModelBehavior
from pydantic_ai.messages import ModelRequest, RetryPromptPart, ToolReturnPart
from pydantic_graph import GraphBuilder, GraphTaskRequest, StepContext
from pydantic_graph.join import reduce_list_append

from ..scheduler import Event, Trace, task_prompt
from ..validate import count
from .models import agent
from .schema import Code, Quote
from .tools import Toolbox, require_toolbox

__all__ = [
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
]


def source(obj) -> None:
    """Print the source code of a function or class of the kit (to read, not to run)."""
    print(inspect.getsource(obj))


# --------------------------------------------------------------------------------------------
# 1. A typed output
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Extraction:
    """What an extraction run produced.

    Attributes
    ----------
    quote : Quote or None
        The validated answer, or None when the agent gave up.
    attempts : int
        Answers the model wrote.
    rejections : tuple of str
        The schema's verdict on each rejected answer, in order.
    """

    quote: Quote | None
    attempts: int
    rejections: tuple


def _error_text(error) -> str:
    where = ".".join(str(x) for x in error.get("loc", ())) or "answer"
    return f"{where}: {error.get('msg')} (got {error.get('input')!r})"


def _rejections(messages) -> tuple:
    found = []
    for message in messages:
        if not isinstance(message, ModelRequest):
            continue
        for part in message.parts:
            retried = isinstance(part, RetryPromptPart) or (
                isinstance(part, ToolReturnPart) and part.outcome == "retried"
            )
            if retried:
                content = part.content
                if isinstance(content, list):
                    found.append("; ".join(_error_text(e) for e in content))
                else:
                    found.append(str(content))
    return tuple(found)


async def extract_quote(page: str, *, script: str | None = None, retries: int = 1) -> Extraction:
    """Ask the extractor for a :class:`~decompkit.lab.schema.Quote` read off ``page``.

    Parameters
    ----------
    page : str
        The page text.
    script : str, optional
        The scripted extractor's behaviour: ``"clean"`` (default), ``"malformed_once"``,
        ``"malformed"`` or ``"wrong"``.
    retries : int, optional
        How often a rejected answer goes back to the model with the schema's verdict.

    Returns
    -------
    Extraction
        Never raises when the model keeps failing the schema: ``quote`` is None then.

    Examples
    --------
    >>> import asyncio
    >>> from decompkit.lab.tools import page
    >>> run = asyncio.run(extract_quote(page("Q"), script="malformed_once"))
    >>> run.quote, run.attempts
    (Quote(supplier='Q', price_eur=3.95, units=500), 2)
    >>> for verdict in run.rejections[0].split("; "):
    ...     print(verdict)
    price_eur: Input should be a valid number, ... (got '3.95 EUR')
    units: Input should be a valid integer, ... (got '500 units')
    """
    if not isinstance(page, str):
        raise ValueError(f"page must be the page text (a str), got {type(page).__name__}")
    extractor = agent("extractor", Quote, script=script, retries=retries)
    last = ()
    with capture_run_messages() as messages:
        try:
            result = await extractor.run(page)
            quote = result.output
        except UnexpectedModelBehavior as error:
            quote = None
            # The verdict on the last answer never went back to the model: keep it here.
            if isinstance(error.__cause__, ValidationError):
                last = ("; ".join(_error_text(e) for e in error.__cause__.errors()),)
    attempts = sum(1 for m in messages if not isinstance(m, ModelRequest))
    return Extraction(quote, attempts, _rejections(messages) + last)


def schema_errors(data) -> list[str]:
    """The schema's verdict on a candidate answer: ``[]`` if accepted, else one line per error.

    Examples
    --------
    >>> schema_errors({"supplier": "Q", "price_eur": 3.95, "units": 500})
    []
    >>> schema_errors({"supplier": "Q", "price_eur": 3.95, "units": 0})
    ['units: Input should be greater than 0 (got 0)']
    """
    try:
        Quote.model_validate(data)
    except ValidationError as error:
        return [_error_text(e) for e in error.errors()]
    return []


#: Candidate answers for supplier Q's page (3.95 EUR per unit, 500 units).
CANDIDATES = {
    "a": {"supplier": "Q", "price_eur": 3.95, "units": 500},
    "b": {"supplier": "Q", "price_eur": "3,95", "units": 500},
    "c": {"supplier": "Q", "price_eur": 39.5, "units": 500},
    "d": {"supplier": "Q", "price_eur": 3.95, "units": 0},
    "e": {"price_eur": 3.95, "units": 500},
    "f": {"supplier": "Q", "price_eur": "3.95", "units": 500},
}


# --------------------------------------------------------------------------------------------
# 2. A fork and a join
# --------------------------------------------------------------------------------------------


@dataclass
class Timeline:
    """The state of the fork-and-join graph: when each step started and ended (ms)."""

    t0: float = field(default_factory=time.perf_counter)
    spans: dict = field(default_factory=dict)

    def now(self) -> float:
        """Milliseconds since the run began, to 0.1 ms."""
        return round((time.perf_counter() - self.t0) * 1000, 1)


def fork_join_graph():
    """Fetch two quote pages at the same time, join them, compare: a fork and a join.

    Returns
    -------
    pydantic_graph.Graph
        State :class:`Timeline`, deps a :class:`~decompkit.lab.tools.Toolbox`, output the
        comparison (str).

    Examples
    --------
    >>> print(fork_join_graph().render().splitlines()[1])
      state broadcast <<fork>>
    """
    g = GraphBuilder(state_type=Timeline, deps_type=Toolbox, output_type=str, auto_instrument=False)

    async def fetch(ctx, name: str, url: str) -> str:
        start = ctx.state.now()
        text = await ctx.deps.call(name, "fetch_page", {"url": url})
        ctx.state.spans[name] = (start, ctx.state.now())
        return text

    @g.step
    async def fetch_p(ctx: StepContext[Timeline, Toolbox, None]) -> str:
        return await fetch(ctx, "fetch_p", "https://p.example/quote")

    @g.step
    async def fetch_q(ctx: StepContext[Timeline, Toolbox, None]) -> str:
        return await fetch(ctx, "fetch_q", "https://q.example/quote")

    # The join collects one value per branch and fires when both have arrived.
    pages = g.join(reduce_list_append, initial_factory=list)

    @g.step
    async def compare(ctx: StepContext[Timeline, Toolbox, list]) -> str:
        start = ctx.state.now()
        text = await ctx.deps.call("compare", "compare", {"pages": ctx.inputs})
        ctx.state.spans["compare"] = (start, ctx.state.now())
        return text

    g.add(
        g.edge_from(g.start_node).to(fetch_p, fetch_q),  # two destinations: a fork
        g.edge_from(fetch_p).to(pages),
        g.edge_from(fetch_q).to(pages),
        g.edge_from(pages).to(compare),
        g.edge_from(compare).to(g.end_node),
    )
    return g.build()


@dataclass(frozen=True)
class ForkJoinRun:
    """A run of :func:`fork_join_graph`: its output, each step's span (ms), the wall time."""

    output: str
    spans: dict
    wall_ms: float


async def run_fork_join(toolbox: Toolbox | None = None) -> ForkJoinRun:
    """Run :func:`fork_join_graph` once and time it.

    Examples
    --------
    >>> import asyncio
    >>> run = asyncio.run(run_fork_join())
    >>> run.output
    'Supplier Q is cheapest at 3.95 EUR per unit (P 4.20, Q 3.95).'
    >>> sorted(run.spans)
    ['compare', 'fetch_p', 'fetch_q']
    """
    toolbox = Toolbox() if toolbox is None else require_toolbox(toolbox)
    state = Timeline()
    output = await fork_join_graph().run(state=state, deps=toolbox)
    return ForkJoinRun(output, dict(state.spans), state.now())


def overlap_ms(spans, a: str = "fetch_p", b: str = "fetch_q") -> float:
    """How long the spans of ``a`` and ``b`` ran at the same time (0 if never).

    Examples
    --------
    >>> overlap_ms({"x": (0, 60), "y": (10, 65)}, "x", "y")
    50
    """
    if a not in spans or b not in spans:
        raise ValueError(f"spans must hold {a!r} and {b!r}, got {sorted(spans)}")
    (s1, e1), (s2, e2) = spans[a], spans[b]
    return max(0, min(e1, e2) - max(s1, s2))


# --------------------------------------------------------------------------------------------
# 3. A run stepped through, and repaired with a new task
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Task:
    """A unit of work the graph carries: its id (primed when unrolled) and its prompt."""

    id: str
    prompt: str


class TestsFailed(RuntimeError):
    """The test run is red; the message is the failure report."""

    __test__ = False  # not a pytest test class


def _primes(task_id: str) -> str:
    return task_id[len(task_id.rstrip("'")) :]


def coding_graph():
    """The tail of worked example A as a graph: write_code -> run_tests -> report.

    Each node is an executor; what flows along the edges are tasks. ``write_code`` asks
    the coder model for a :class:`~decompkit.lab.schema.Code`; ``run_tests`` raises
    :class:`TestsFailed` when the code does not handle an empty input.

    Returns
    -------
    pydantic_graph.Graph
        Input a :class:`Task`, output the report (str).

    Examples
    --------
    >>> [line.strip() for line in coding_graph().render().splitlines()[-4:]]
    ['[*] --> write_code', 'write_code --> run_tests', 'run_tests --> report', 'report --> [*]']
    """
    g = GraphBuilder(input_type=Task, output_type=str, auto_instrument=False)

    @g.step
    async def write_code(ctx: StepContext[None, None, Task]) -> tuple:
        code = (await agent("coder", Code).run(ctx.inputs.prompt)).output
        tests = "run_tests" + _primes(ctx.inputs.id)
        return Task(tests, task_prompt(tests, [ctx.inputs.id, "write_tests"])), code

    @g.step
    async def run_tests(ctx: StepContext[None, None, tuple]) -> Task:
        task, code = ctx.inputs
        if not code.handles_empty_input:
            raise TestsFailed(f"{task.id}: test_empty_input fails, mean([]) divides by zero")
        return Task("report", task_prompt("report", [task.id]))

    @g.step
    async def report(ctx: StepContext[None, None, Task]) -> str:
        return f"{ctx.inputs.prompt}: all tests pass"

    g.add(
        g.edge_from(g.start_node).to(write_code),
        g.edge_from(write_code).to(run_tests),
        g.edge_from(run_tests).to(report),
        g.edge_from(report).to(g.end_node),
    )
    return g.build()


async def step_through(*, kappa_plan: int = 2) -> Trace:
    """Run :func:`coding_graph` event by event; repair a red test run with a new task.

    Parameters
    ----------
    kappa_plan : int, optional
        How many repairs the caller allows before giving up (default 2).

    Returns
    -------
    decompkit.scheduler.Trace
        One event per step of the iteration: ``dispatch`` (the graph hands a task to a
        node; ``detail`` is its prompt), ``fail`` (a step raised), ``unroll`` (the caller
        sends a new task), ``finish`` (the output). Times are ms since the start.

    Raises
    ------
    TestsFailed
        If the tests are still red after ``kappa_plan`` repairs.

    Notes
    -----
    The caller iterates the run (``anext(run)``). A failing step surfaces there as its
    exception; the caller answers with ``override_next`` and a request for a *new* task at
    ``write_code``, whose prompt carries the failure report: the rebuilt input of the
    lecture's unrolling. The failed task is never sent again.

    Examples
    --------
    >>> import asyncio
    >>> trace = asyncio.run(step_through())
    >>> [(e.kind, e.node) for e in trace]  # doctest: +NORMALIZE_WHITESPACE
    [('dispatch', 'write_code'), ('dispatch', 'run_tests'), ('fail', 'run_tests'),
     ('unroll', "write_code'"), ('dispatch', "run_tests'"), ('dispatch', 'report'),
     ('finish', 'report')]
    """
    kappa_plan = int(count("kappa_plan", kappa_plan, minimum=0))
    t0 = time.perf_counter()
    events: list[Event] = []
    repairs = 0

    def emit(kind, node, detail=""):
        at = round((time.perf_counter() - t0) * 1000, 1)
        events.append(Event(at, kind, node, None, None, detail, repairs))

    first = Task("write_code", task_prompt("write_code", ["fetch_data"]))
    async with coding_graph().iter(inputs=first) as run:
        while True:
            try:
                item = await anext(run)
            except StopAsyncIteration:
                break
            except TestsFailed as error:
                emit("fail", str(error).split(":")[0], str(error))
                if repairs >= kappa_plan:
                    raise
                repairs += 1
                new_id = "write_code" + "'" * repairs
                prompt = task_prompt(new_id, ["fetch_data"], f"failure report: {error}")
                run.override_next([GraphTaskRequest("write_code", Task(new_id, prompt), ())])
                emit("unroll", new_id, prompt)
                continue
            if isinstance(item, list | tuple):
                for task in item:
                    inputs = task.inputs
                    job = inputs[0] if isinstance(inputs, tuple) else inputs
                    if isinstance(job, Task):
                        emit("dispatch", job.id, job.prompt)
            else:
                emit("finish", "report", str(item.value))
    return Trace(events)
