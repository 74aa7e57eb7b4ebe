"""The static lecture page: one folder, ``index.html`` and its backgrounds, that runs the
explorers with no Python and no network, from a file or any static host.

Each explorer is built with the kit's own code at the lecture's numbers (or a student's,
drawn as the notebooks draw them: :func:`decompkit.exercises.params.params`) and baked by
:func:`~decompkit.page.bake.bake` (the DAG explorer by :func:`~decompkit.page.dag.bake_dag`);
the page's script computes what the controls move with the lecture's formulas in JavaScript
(``lecture.js``, ``plans.js``) and paints it with the explorers' painting code
(``explorer.js``). Chromium refuses module scripts from ``file://`` pages, so the modules
travel inside ``index.html`` and a few lines of it load them from ``blob:`` addresses.
"""

from __future__ import annotations

import html
import json
import pathlib
import re
import textwrap
from collections.abc import Callable
from typing import NamedTuple

from .. import scheduler
from ..exercises import trace as trace_exercise
from ..exercises.page import student_of
from ..exercises.params import LECTURE, params
from ..widgets.controls import rows_html
from ..widgets.dag import DagExplorer
from ..widgets.horizon import HorizonExplorer
from ..widgets.reliability import ReliabilityExplorer
from ..widgets.trace import TraceStepper
from .bake import BACKGROUND, bake, bake_stepper, controls_of
from .dag import bake_dag, dag_examples

__all__ = ["BUDGET_BYTES", "Stage", "build_page", "staged", "trace_run"]

_HERE = pathlib.Path(__file__).parent
_WIDGETS = _HERE.parent / "widgets"
#: The page's modules in the order they are loaded (each imports only those before it).
MODULES = {
    "checks.js": _HERE / "checks.js",
    "lecture.js": _HERE / "lecture.js",
    "moving.js": _HERE / "moving.js",
    "explorer.js": _WIDGETS / "explorer.js",
    "plans.js": _HERE / "plans.js",
    "dag.js": _HERE / "dag.js",
    "page.js": _HERE / "page.js",
}
#: Size budget of the whole folder, in bytes (a course site or a USB stick: any host).
BUDGET_BYTES = 2_000_000

#: How index.html says it is a lecture page (a build may replace it).
GENERATOR = '<meta name="generator" content="decompkit lecture page">'
#: Widths in CSS pixels each figure is baked at: the notebook's, and one that fits a
#: 1280 x 720 screen at 150 % zoom (853 CSS pixels wide).
WIDTHS = (1104, 800)
#: Below this width (CSS pixels) a layout is narrow: titles wrap shorter.
NARROW = 1000


def _spines(*axes):
    return [s for ax in axes for s in ax.spines.values() if s.get_visible()]


class Stage(NamedTuple):
    """An explorer set up as the page shows it: the axes it draws in, the artists it moves
    (by name, in drawing order), those painted over them, and ``restyle(width)``, which puts
    what the explorer's own refresh changes back to the page's look for a layout's width."""

    explorer: object
    axes: dict
    moving: dict
    overlay: list
    restyle: Callable


def _reliability_stage(numbers) -> Stage:
    ex = ReliabilityExplorer(
        p=numbers.p, n=numbers.n, d=numbers.d, phi=numbers.phi, kappa=numbers.k
    )
    # The explorer's shading is one picture for every p, on a scale in units of p(1-p); the
    # page keeps the wide title's words at every width, wrapped to the plane.
    words = " ".join(ex._wide_texts[1].split())

    def restyle(width):  # the plane is narrower in the narrow layout
        ex.plane_title.set_text(textwrap.fill(words, 30 if width >= NARROW else 22))

    moving = ex.moving_in_browser()  # what the notebook's view computes, the page computes
    return Stage(ex, moving.axes, moving.artists, moving.overlay, restyle)


def _reliability(numbers, folder) -> dict:
    """The reliability explorer: curves against n and the (d, phi) plane."""
    stage = staged("reliability", numbers)
    ex = stage.explorer
    baked = bake(stage, widths=WIDTHS, folder=folder, name="reliability")
    return {
        "name": "reliability",
        "title": "Reliability: a check at each step boundary",
        "alt": (
            "Left: probability that all n steps are correct against n, for no check, one "
            "retry behind a fallible check, retry until pass and a perfect check with kappa "
            "attempts. Right: the (d, phi) plane, shaded by the gain of the check, with the "
            "current check as a white dot."
        ),
        "controls": controls_of(ex, ("p", "n", "kappa", "d", "phi")),
        "columns": [["p", "n", "kappa"], ["d", "phi"]],
        "readout": "aside",
        **ex.moving_in_browser().spec,
        **baked,
    }


def _horizon_stage(numbers) -> Stage:
    ex = HorizonExplorer(p=numbers.p, q=numbers.q, n=numbers.n, budget_factor=numbers.budget_factor)
    panels = ex.figure.axes[:3]
    titles = [" ".join(ax.get_title().split()) for ax in panels]

    def restyle(width):  # three panels side by side: shorter lines in the narrow layout
        for ax, title in zip(panels, titles, strict=True):
            ax.set_title(textwrap.fill(title, 40 if width >= NARROW else 28), fontsize=10)

    # No simulation on the page: the legend names the curves only.
    ex.figure.legends[0].remove()
    handles = [*ex.reference_lines, ex.success_line]
    labels = [f"q = {ref:g}" for ref in ex.reference_qs] + ["current q"]
    ex.figure.legend(handles, labels, loc="outside lower center", ncols=len(handles))
    moving = ex.moving_in_browser()
    return Stage(ex, moving.axes, moving.artists, moving.overlay, restyle)


def _horizon(numbers, folder) -> dict:
    """The horizon explorer: success against n and q, and the grounded survival."""
    stage = staged("horizon", numbers)
    ex = stage.explorer
    baked = bake(stage, widths=WIDTHS, folder=folder, name="horizon")
    return {
        "name": "horizon",
        "title": "Long horizons: the audited chain",
        "alt": (
            "Left: probability of finishing all n subtasks within the budget against n, for "
            "reference audit levels and the current q. Middle: the same at the current n "
            "against q. Right: probability that the run is still uncorrupted after t rounds, "
            "with the budget marked."
        ),
        "controls": controls_of(ex, ("p", "q", "n", "budget_factor")),
        "columns": [["p", "q"], ["n", "budget_factor"]],
        "readout": "below",
        **ex.moving_in_browser().spec,
        **baked,
    }


def trace_run(numbers):
    """The repaired run notebook 5 explores at its end, for its parameters ``numbers``: a check
    that stays red for a while, unrolled by repair up to ``kappa_plan`` rounds."""
    example = numbers.A
    try:
        return scheduler.run_with_repair(
            example.graph,
            example.durations,
            workers=numbers.workers,
            step=trace_exercise.failing_step(numbers.failing, runs=numbers.red_runs),
            faulty={numbers.failing: numbers.faulty},
            kappa_plan=numbers.kappa_plan,
        )
    except scheduler.RepairLimitError as error:  # the run as far as repair went
        return error.result


def _trace(numbers, folder) -> dict:
    """The trace stepper over that run."""
    run = trace_run(numbers)
    ex = TraceStepper(run)
    slider = ex.controls["event"]
    baked = bake_stepper(ex, widths=WIDTHS, folder=folder, name="trace")
    return {
        "name": "trace",
        "title": "Trace stepper: a run with repair, event by event",
        "alt": (
            "Left: the plan, each task's box filled with the colour of its state and naming "
            "it. Right: the Gantt chart of the whole run, a black line at the time of the "
            "current event."
        ),
        "controls": [
            {
                "name": "event",
                "label": slider.description,
                "min": slider.min,
                "max": slider.max,
                "step": 1,
                "value": slider.min,
                "tooltip": slider.tooltip or "",
                "digits": 0,
            }
        ],
        "columns": [["event"]],
        "readout": "stepper",
        **baked,
    }


#: The example notebook 4 shows its explorer with first.
_DAG_START = "B"


def _dag(numbers, folder) -> dict:
    """The DAG explorer: durations and workers over the critical path and the list schedule."""
    ex = DagExplorer(numbers, example=_DAG_START, workers=numbers.workers)
    durations = {}
    options = []
    for key in ex.examples:
        ex.controls["example"].value = key
        nodes = list(ex.duration_sliders)
        sliders = controls_of(ex, [f"duration {node}" for node in nodes])
        durations[key] = [
            {**c, "name": f"duration-{key}-{node}"} for node, c in zip(nodes, sliders, strict=True)
        ]
        options += [  # the checkboxes the notebook shows with this example
            {"name": name, "example": key, "label": c.description, "tooltip": c.tooltip or ""}
            for name, c in ex.controls.items()
            if c in ex.options_box.children
        ]
    ex.close()
    return {
        "name": "dag",
        "title": "Plans as DAGs: critical path and list schedule",
        "alt": (
            "Top: the plan, one box per task with its duration and slack, the critical path "
            "in thick solid boxes and arrows, the other tasks in dashed boxes. Bottom: the "
            "list schedule's Gantt chart, one row per worker, critical tasks hatched, a "
            "dashed line at the makespan."
        ),
        "controls": controls_of(ex, ("workers",)),
        "columns": [],
        "readout": "below",
        "table_title": "every task",
        "start": _DAG_START,
        "examples": dag_examples(numbers),
        "options": options,
        "durations": durations,
        **bake_dag(numbers, widths=WIDTHS, folder=folder, name="dag", start=_DAG_START),
    }


def staged(name: str, numbers) -> Stage:
    """The explorer ``name`` (``"reliability"`` or ``"horizon"``) as the page shows it, at
    the numbers of ``numbers`` (a notebook's parameter object); its figure names the
    artists the page moves (:meth:`~decompkit.widgets.render.Renderer.move`)."""
    stage = {"reliability": _reliability_stage, "horizon": _horizon_stage}[name](numbers)
    stage.explorer.renderer.move(*stage.moving.values(), *stage.overlay)
    return stage


#: The explorers on the page, in order, with the notebook whose numbers each starts at.
EXPLORERS = (
    (_reliability, "chain"),
    (_horizon, "horizon"),
    (_dag, "dag"),
    (_trace, "trace"),
)


def _table_css() -> str:
    """The style of the explorers' readout tables, which an empty table carries with it."""
    return re.search(r"<style>(.*?)</style>", rows_html([]), re.S).group(1)


def _inline_json(value) -> str:
    """JSON that can sit inside a <script> element."""
    return json.dumps(value, separators=(",", ":"), allow_nan=False).replace("</", "<\\/")


def _module(name: str, path: pathlib.Path) -> str:
    source = path.read_text(encoding="utf-8")
    if re.search(r"</script", source, re.IGNORECASE):
        raise ValueError(f"the module {name} holds '</script', which would end its element")
    return f'<script type="text/x-module" data-name="{name}">\n{source}</script>'


def _refuse_foreign(folder: pathlib.Path) -> None:
    """Refuse a folder that holds anything but an earlier lecture page: nothing of a
    person's is overwritten or removed."""
    if folder.exists() and not folder.is_dir():
        raise ValueError(f"folder must be a folder, got the file {str(folder)!r}")
    if not folder.exists() or not any(folder.iterdir()):
        return
    index = folder / "index.html"
    try:
        earlier = GENERATOR in index.read_text(encoding="utf-8", errors="replace")
    except OSError:
        earlier = False
    if not earlier:
        names = sorted(p.name for p in folder.iterdir())
        shown = ", ".join(names[:5]) + (", ..." if len(names) > 5 else "")
        raise ValueError(
            f"folder must be new, empty or a lecture page written before; {str(folder)!r} "
            f"holds {shown} (nothing was written: choose another folder with --out)"
        )


def build_page(folder, student=None) -> pathlib.Path:
    """Write the lecture page into ``folder`` (made or emptied of the page's files).

    Parameters
    ----------
    folder : str or pathlib.Path
        The folder to write: new, empty, or a lecture page written before, whose
        ``index.html`` and backgrounds in ``assets/`` are replaced (nothing else is touched).
    student : str or None
        A student's id: the explorers start at that student's numbers, drawn as the notebooks
        draw them (an id in the environment, a grader's or a hub's, comes first). None: the
        lecture's numbers.

    Returns
    -------
    pathlib.Path
        The path of ``index.html``.

    Raises
    ------
    ValueError
        If ``student`` is not a valid id (see :func:`decompkit.exercises.params.params`), or
        ``folder`` holds files of something else than a lecture page.
    """
    folder = pathlib.Path(folder)
    _refuse_foreign(folder)
    # The notebooks' own rule: an id in the environment (a grader's, a hub's) comes first.
    numbers = [
        params(notebook, LECTURE if student is None else student) for _, notebook in EXPLORERS
    ]
    assets = folder / "assets"
    assets.mkdir(parents=True, exist_ok=True)
    for old in assets.iterdir():  # an earlier build's backgrounds
        if BACKGROUND.fullmatch(old.name) and old.is_file():
            old.unlink()
    owners = {student_of(n) for n in numbers}
    explorers = [make(n, assets) for (make, _), n in zip(EXPLORERS, numbers, strict=True)]
    for spec in explorers:  # the backgrounds' paths from index.html
        for layout in spec["layouts"]:
            for ratio in layout["ratios"].values():
                ratio["background"] = f"assets/{ratio['background']}"
    (owner,) = owners
    whose = (
        "the lecture's numbers" if owner in (None, LECTURE) else f"the numbers of student {owner}"
    )
    data = {"whose": whose, "explorers": explorers}
    template = (_HERE / "index.html").read_text(encoding="utf-8")
    page = (
        template.replace("<!--WHOSE-->", html.escape(whose))
        .replace("/*TABLE_CSS*/", _table_css())
        .replace("/*PAGE_CSS*/", (_HERE / "page.css").read_text(encoding="utf-8"))
        .replace("/*EXPLORER_CSS*/", (_WIDGETS / "explorer.css").read_text(encoding="utf-8"))
        .replace("<!--DATA-->", _inline_json(data))
        .replace("<!--MODULES-->", "\n".join(_module(n, p) for n, p in MODULES.items()))
    )
    index = folder / "index.html"
    index.write_text(page, encoding="utf-8")
    return index
