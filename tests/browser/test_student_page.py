"""The exercise page a student sees: nothing given away, hints as one-line messages, numbers
that say whose they are, explorers that survive a reopen.

Run All on every released exercise notebook, under the lecture's numbers (no id) in
JupyterLab and under two student ids through nbclient, must show no graded item's answer in
any output: numbers at 2 to 6 significant digits, sets, orders, paths and choices as text,
figure titles and explorer readouts included. A first cell added for the test makes every
figure and explorer also show its texts (titles, legends, annotations, readouts) as
``text/plain``, so the scan reads what the pictures say. The detector itself is tested on the
package's own outputs (the cells the gates hold back), so that it can fail.

In JupyterLab, three known mistakes typed into the chain notebook get their one-line hints,
a right answer rounded to two digits is told to keep more digits, a strict-mode check fails
its cell with that one line, and the saved notebook reopened without a kernel shows the
explorer's figure. Screenshots go to tests/browser/artifacts/ (page-*.png).
"""

from __future__ import annotations

import html as html_module
import json
import re
import time
from pathlib import Path

import nbformat
import pytest

from decompkit import dag as dag_lib
from decompkit.exercises import EXERCISES, plans
from decompkit.exercises.params import params
from decompkit.plan import validate_plan

from .conftest import NOTEBOOKS, code_notebook, with_answers

ROOT = Path(__file__).resolve().parents[2]
RELEASED = NOTEBOOKS / "decomp"
FILES = {e.file: name for name, e in EXERCISES.items()}
#: Two students besides the lecture's numbers (any ids: every id draws numbers of its own).
STUDENTS = ("s1000", "s2718")
ANSI = re.compile(r"\x1b\[[0-9;]*m")
RUN_ALL_TIMEOUT_MS = 180_000

#: The cell the test puts first: every figure and explorer shows its texts as text/plain too.
#: Its functions take what they use as default arguments, so a %reset between notebooks run in
#: one kernel leaves them working; run again, it wraps the explorers' display only once.
TEXTS_HOOK = r"""
# Added by the page test: figures and explorers also show what they say as text/plain.
import html as _html_, re as _re_
import matplotlib.figure as _figure_

def _figure_texts_(fig):
    found = [fig._suptitle] if getattr(fig, "_suptitle", None) else []
    for ax in fig.axes:
        found += [ax.title, ax._left_title, ax._right_title, ax.xaxis.label, ax.yaxis.label]
        found += list(ax.texts)
        legend = ax.get_legend()
        if legend is not None:
            found += [legend.get_title(), *legend.get_texts()]
    found += list(fig.texts)
    return " | ".join(t.get_text() for t in found if t is not None and t.get_text().strip())

def _widget_texts_(widget, re=_re_, html=_html_):
    found, todo = [], [widget]
    while todo:
        w = todo.pop(0)
        value = getattr(w, "value", None)
        if isinstance(value, str) and hasattr(w, "description"):
            found.append(re.sub(r"<[^>]+>", " ", html.unescape(value)))
        todo += list(getattr(w, "children", ()))
    return found

get_ipython().display_formatter.formatters["text/plain"].for_type(
    _figure_.Figure, lambda fig, p, cycle, texts=_figure_texts_: p.text("Figure: " + texts(fig))
)
from decompkit.widgets.base import Explorer as _Explorer_  # no hook would hide a leak

if not hasattr(_Explorer_, "_page_test_bundle_"):
    _Explorer_._page_test_bundle_ = _Explorer_._repr_mimebundle_

    def _with_texts_(
        self, include=None, exclude=None, figure=_figure_texts_, widgets=_widget_texts_, **kw
    ):
        bundle = type(self)._page_test_bundle_(self, include=include, exclude=exclude, **kw)
        texts = " | ".join(widgets(self.widget))
        bundle["text/plain"] += "\nFigure: " + figure(self.figure) + "\nReadout: " + texts
        return bundle

    _Explorer_._repr_mimebundle_ = _with_texts_
"""


# -- what an answer looks like as text ----------------------------------------------------------


_NUMBER = re.compile(r"(?<![\w.])-?(\d+)(?:\.(\d+))?(?:[eE]([-+]?\d+))?(?![\d.]|\.\d)(\s?%)?")


def _shows_number(value: float, text: str) -> bool:
    """Whether ``text`` writes ``value`` to 2 or more significant digits: some number in it,
    read to its own precision (``0.35`` to two decimals), is ``value`` rounded that far.
    Whole numbers (``3``, ``1.0``) count only for answers of 100 or more, since small counts
    and durations fill every table; a share also counts written as "5 of 6"."""
    for match in _NUMBER.finditer(text):
        whole, decimals, exponent, percent = match.groups()
        digits = (whole + (decimals or "")).lstrip("0")
        # "1.0" is how Python prints any whole float, not a rounding to two digits.
        integral = exponent is None and decimals in (None, "0")
        if len(digits) < 2 or (integral and abs(value) < 100):
            continue
        places = len(decimals or "") - int(exponent or 0) + (2 if percent else 0)
        shown = float(match.group(0).rstrip("% ")) / (100 if percent else 1)
        if abs(shown - value) <= 0.5 * 10.0**-places * (1 + 1e-9) + 1e-15:
            return True
    # A share written in words as a count of a count: "5 of 6".
    for a, b in re.findall(r"(?<![\w.])(\d+)\s+of\s+(\d+)(?![\d.])", text):
        if int(b) and abs(int(a) / int(b) - value) <= 1e-9 * abs(value):
            return True
    return False


_NAME_GAP = r"[\s'\",\[\]()>-]+"  # what lies between two task names in a printed list


def _sequence(names) -> str:
    return r"(?<![\w'])'?" + _NAME_GAP.join(re.escape(n) for n in names) + r"'?(?![\w'])"


def _integer_contexts(value: int, item: str, P) -> list[str]:
    v = rf"(?<![\w.]){value}(?![\d]|\.\d)"
    found = [
        rf"(?i)\b(makespan|wall time|ends at|returns at|gives up at|finishes at)"
        rf"\W{{0,3}}(=|:|is|at)?\W{{0,3}}{v}",
        rf"{v}\s*(slots|units|ms)\b",
    ]
    if item in ("slack_a", "slack_spurious"):  # a pass's slack table, or "slack 5" on a figure
        found += [
            rf"slack=\{{[^}}]*'{re.escape(P.slack_node)}':\s*{v}",
            rf"(?i)slack\W{{0,3}}{v}",
        ]
    if item == "collapse":
        found += [rf"(?i)collapse[^\n|]{{0,20}}{v}", rf"\|\s*{P.q:.2f}\s*\|[^\n]*\|\s*{value}\s*\|"]
    if item in ("repairs_made",):
        found += [rf"(?i){v}\s+repair", rf"(?i)repairs?\W{{0,3}}(=|:)?\W{{0,3}}{v}"]
    if item in ("n_orders_a", "n_orders_b"):
        found += [rf"(?i){v}\s+(topological\s+)?orders"]
    return found


def _quoted(text: str) -> list:
    return [a or b for a, b in re.findall(r"'([^']*)'|\"([^\"]*)\"", text)]


def _set_leaks(members: set, text: str, given=frozenset()) -> bool:
    """Whether ``text`` lists exactly ``members``: as one bracketed literal, or (two or more
    members) as the only quoted names of one line. A predecessor list of the plan as the
    notebook gives it (``'run_tests': ['write_code', 'write_tests']`` in its graph, a pair of
    ``given``) is the exercise's data, not an answer."""
    if all(isinstance(m, tuple) for m in members):  # pairs: every pair literal in one output
        return all(re.search(rf"\(\s*'{a}'\s*,\s*'{b}'\s*\)", text) for a, b in members)
    wanted = {str(m) for m in members}
    for node, preds in {(n, p) for n, p in given}:  # the plan's own edges, as printed
        listed = r"\s*,\s*".join(["'(?:" + "|".join(map(re.escape, preds)) + ")'"] * len(preds))
        text = re.sub(rf"'{re.escape(node)}':\s*[\[\(\{{]\s*{listed}\s*,?\s*[\]\)\}}]", "", text)
    for group in re.finditer(r"[\[\{\(]([^\[\]\{\}\(\)\n]*)[\]\}\)]", text):
        rest = re.sub(r"'[^']*'|\"[^\"]*\"|[\s,]", "", group.group(1))
        if rest or set(_quoted(group.group(1))) != wanted:
            continue
        return True
    if len(wanted) >= 2:
        return any(set(_quoted(line)) == wanted for line in text.splitlines())
    return False


def _given(name: str, P) -> frozenset:
    """``(task, predecessors)`` of the plans a notebook shows as its data."""
    graphs = []
    if name == "dag":
        graphs = [P.A.graph, P.B.graph, P.B.with_coordination()[0]]
    elif name == "trace":
        graphs = [P.A.graph]
    return frozenset((n, frozenset(preds)) for g in graphs for n, preds in g.items())


def answer_checks(exercise, P) -> dict:
    """``{item: test(text) -> bool}``: whether a text shows the item's answer."""
    key = exercise.key(P)
    given = _given(exercise.name, P)
    checks = {}
    for item in exercise.items:
        value = key[item.key]
        regexes: list[str] = []
        test = None
        if (
            item.kind == "number"
            and isinstance(value, (int, float))
            and not isinstance(value, bool)
        ):
            if float(value).is_integer():
                regexes = _integer_contexts(int(value), item.key, P)
            else:

                def test(text, v=float(value)):
                    return _shows_number(v, text)

        elif item.kind == "order":
            A = P.A
            orders = dag_lib.all_topological_orders(A.graph)
            regexes = [_sequence(order) for order in orders]
        elif item.kind == "sequence":
            regexes = [_sequence(value)]
        elif item.kind == "set":
            members = set(value)
            extra = []
            if item.key in ("blocked_late", "blocked_early", "cancelled_stop"):
                word = "cancel" if item.key == "cancelled_stop" else "block"
                extra.append(
                    lambda text, m=members, w=word: all(
                        re.search(rf"\b{w}\s+{re.escape(x)}\b", text) for x in m
                    )
                )
            if item.key == "kinds_a":
                messages = [p.message for p in plans.problems(P.plan_kinds, P)]
                extra.append(lambda text, ms=messages: all(m in text for m in ms))
            if item.key == "cycle_b":
                extra.append(
                    lambda text, m=members: any(
                        " -> " in line and set(_quoted(line)) == {str(x) for x in m}
                        for line in text.splitlines()
                    )
                )

            def test(text, m=members, extra=tuple(extra)):
                return _set_leaks(m, text, given) or any(e(text) for e in extra)

        elif item.kind == "choices":
            pairs = [rf"'{re.escape(k)}':\s*'{re.escape(v)}'" for k, v in value.items()]

            def test(text, pairs=pairs):
                return sum(bool(re.search(p, text, re.I)) for p in pairs) >= max(2, len(pairs) // 2)

        elif item.kind == "choice":
            regexes = [rf"(?i)\b{re.escape(value)}\b"]
        elif item.kind == "mapping":
            entries = [
                rf"'{re.escape(s)}':\s*[\[\(\{{]\s*"
                + r"\s*,\s*".join(["'(?:" + "|".join(map(re.escape, refs)) + ")'"] * len(refs))
                + r"\s*,?\s*[\]\)\}]"
                for s, refs in value.items()
                if refs
            ]

            def test(text, entries=entries):
                return all(re.search(e, text) for e in entries)

        elif item.kind == "plan":
            # The repaired plan's graph as validate_plan prints it; for the lecture's plan also
            # its repaired row (a drawn plan's rows may recur in the student's other plans).
            graph = validate_plan(value, P.tools, max_steps=P.max_steps)
            regexes = [re.escape(str(graph))]
            if P.plan_kinds == "price_check":
                regexes.append(r"s3\s+summarise\s+s2\s+\{'text': '\$2'\}")
        elif item.kind == "matrix":
            entries = ((1 - P.p) * P.q, (1 - P.p) * (1 - P.q))

            def test(text, entries=entries):
                return any(_shows_number(e, text) for e in entries)

        if test is None:
            compiled = [re.compile(r) for r in regexes]

            def test(text, compiled=compiled):
                return any(c.search(text) for c in compiled)

        checks[item] = test
    return checks


def _strip_html(text: str) -> str:
    return html_module.unescape(re.sub(r"<[^>]+>", " ", text))


def output_texts(nb: dict) -> list[tuple[str, str]]:
    """``(cell id, text)`` of every output of a notebook (nbformat JSON or node)."""
    found = []
    for cell in nb["cells"]:
        for output in cell.get("outputs", []):
            kind = output["output_type"]
            if kind == "stream":
                parts = [output["text"]]
            elif kind == "error":
                parts = [output["evalue"], ANSI.sub("", "\n".join(output["traceback"]))]
            else:
                data = output.get("data", {})
                parts = [data.get("text/plain", ""), _strip_html(data.get("text/html", ""))]
                parts.append(_strip_html(data.get("text/markdown", "")))
            for part in parts:
                text = "".join(part) if isinstance(part, list) else part
                if text.strip():
                    found.append((cell.get("id", "?"), text))
    return found


def leaks(name: str, P, texts) -> list[str]:
    """Every (item, cell) where an output shows a graded answer, and every echoed boolean."""
    checks = answer_checks(EXERCISES[name], P)
    found = [
        f"{item.title} in cell {cell}: {text[:160]!r}"
        for cell, text in texts
        for item, test in checks.items()
        if test(text)
    ]
    found += [
        f"an echoed boolean in cell {cell}"
        for cell, text in texts
        if text.strip() in ("True", "False")
    ]
    return found


# -- the detector can fail: the package's own outputs do show the answers -------------------------


def test_the_detector_finds_the_answers_the_package_prints():
    """What the gated cells print, computed here directly, is found for every notebook."""
    from decompkit import markov, scheduler
    from decompkit.exercises import harness as loop
    from decompkit.exercises import trace as trace_module
    from decompkit.plan import PlanError, placeholder_edges, validate_plan

    def found(name, P, *texts):
        hits = leaks(name, P, [("x", t) for t in texts])
        assert hits, (name, texts[0][:200])
        return hits

    for who in (None, "s1000"):
        P = params("chain", who)
        found("chain", P, str(P.p**P.n))
        found("chain", P, f"{P.p + (1 - P.p) * P.d * P.p:.3g}")
        found("chain", P, repr(EXERCISES["chain"].key(P)["check_kinds"]))
        H = params("horizon", who)
        found("horizon", H, str(markov.success_exact(H.n, H.p, H.q, H.budget)))
        found(
            "horizon",
            H,
            markov.reference_table(p=H.p, budget_factor=H.budget_factor, qs=(H.q,)).to_text(),
        )
        L = params("plans", who)
        try:
            validate_plan(plans.plan(L.plan_kinds), L.tools, max_steps=L.max_steps)
        except PlanError as error:
            found("plans", L, str(error))
        found("plans", L, str(placeholder_edges(plans.plan(L.plan_rewoo))))
        D = params("dag", who)
        A = D.A
        found("dag", D, repr(dag_lib.critical_path(A.graph, A.durations)))
        found("dag", D, str(dag_lib.topological_order(A.graph)))
        found("dag", D, "\n".join(map(str, dag_lib.all_topological_orders(A.graph))))
        T = params("trace", who)
        run = scheduler.schedule(
            T.A.graph,
            T.A.durations,
            workers=T.workers,
            onfail="stop",
            step=trace_module.failing_step(T.failing_early),
        )
        hits = found("trace", T, run.events.to_text())
        assert any("A2 blocked_early" in h for h in hits) and any(
            "A3 cancelled_stop" in h for h in hits
        )
        first = scheduler.schedule(
            T.A.graph, T.A.durations, workers=T.workers, step=trace_module.failing_step(T.failing)
        )
        repair = scheduler.unroll_failed_check(
            T.A.graph, first.out, T.failing, T.faulty, T.kappa_plan, durations=T.A.durations
        )
        hits = found("trace", T, str(dict(repair.graph)))
        assert any("B3 repaired_preds" in h for h in hits), hits
        Hn = params("harness", who)
        found("harness", Hn, str(loop.revised_plan(Hn).progress()))  # the student's own plan
        found("harness", Hn, f"{EXERCISES['harness'].key(Hn)['success']:.2f}")
        Ag = params("agents", who)  # what notebook 7's gated cells print
        agents_key = EXERCISES["agents"].key(Ag)
        found("agents", Ag, f"k = {Ag.k}: records {agents_key['pass_k']:.3f}")
        found("agents", Ag, f"with a check at every boundary: {agents_key['checked_success']:.3f}")
    # Figure titles, through the hook: a Gantt chart's title holds the makespan.
    import matplotlib

    matplotlib.use("Agg")
    from decompkit.plots.dag import plot_gantt

    D = params("dag", "s1000")
    coordinated, durations = D.B.with_coordination()
    figure = plot_gantt(dag_lib.list_schedule(coordinated, durations, D.workers))
    title = figure.axes[0].get_title()
    assert any("D1 wall_coordinated" in h for h in leaks("dag", D, [("x", "Figure: " + title)]))


# -- Run All under two student ids (nbclient) -----------------------------------------------------


def _prepared(path: Path, student: str | None):
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if "student-id" in cell.metadata.get("tags", []):
            cell.source = f"STUDENT_ID = {student!r}"
    hook = nbformat.v4.new_code_cell(TEXTS_HOOK)
    hook.metadata["tags"] = ["page-test"]
    nb.cells.insert(0, hook)
    return nb


@pytest.fixture(scope="module")
def student_runs():
    """Every released exercise notebook run top to bottom for each of the two student ids.

    One kernel per student runs the six notebooks one after the other, with ``%reset -f``
    between them (each starts from an empty namespace, as in a fresh kernel): that saves a
    kernel start and the imports per notebook."""
    import nbclient

    paths = sorted(RELEASED.glob("*.ipynb"))
    runs = {}
    for student in STUDENTS:
        books = [_prepared(path, student) for path in paths]
        together = nbformat.v4.new_notebook(metadata=books[0].metadata)
        bounds = []
        for nb in books:
            together.cells.append(nbformat.v4.new_code_cell("%reset -f"))
            start = len(together.cells)
            together.cells += nb.cells
            bounds.append((start, len(together.cells)))
        client = nbclient.NotebookClient(
            together,
            timeout=120,
            kernel_name="python3",
            allow_errors=True,
            resources={"metadata": {"path": str(RELEASED)}},
        )
        client.execute()
        for path, nb, (start, end) in zip(paths, books, bounds, strict=True):
            nb.cells = together.cells[start:end]
            runs[(path.stem, student)] = nb
    return runs


@pytest.mark.parametrize("student", STUDENTS)
def test_run_all_under_a_student_id_shows_no_answer(student_runs, student):
    problems = []
    for (file, who), nb in student_runs.items():
        if who != student:
            continue
        errors = [o for c in nb.cells for o in c.get("outputs", []) if o.output_type == "error"]
        assert not errors, (file, errors[:1])
        P = params(FILES[file], student)
        texts = output_texts(nb)
        assert any(f"numbers of {student}" in t for _, t in texts), file
        assert not any("LECTURE NUMBERS" in t for _, t in texts), file
        problems += [f"{file}: {leak}" for leak in leaks(FILES[file], P, texts)]
    assert not problems, "\n".join(problems)


# -- the browser ----------------------------------------------------------------------------------

#: The notebook on show (other tabs stay in the page, hidden).
SHOWN = ".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook"

# Done when no code cell is queued or running any more and at least one has run.
_RUN_ALL_DONE = """(total) => {
    const shown = '.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook';
    const cells = document.querySelectorAll(shown + ' .jp-Notebook-cell');
    if (cells.length !== total) return false;
    const prompts = [...document.querySelectorAll(shown + ' .jp-CodeCell .jp-InputPrompt')]
        .map(p => p.textContent.trim());
    return !prompts.includes('[*]:') && prompts.some(p => /^\\[\\d+\\]:$/.test(p));
}"""


class Tab:
    """One notebook in a JupyterLab tab: open it, run it all, save it, read it back."""

    def __init__(self, page, server, name: str, artifacts: Path):
        self.page, self.server, self.name, self.artifacts = page, server, name, artifacts

    def shot(self, label: str) -> Path:
        path = self.artifacts / f"page-{label}.png"
        self.page.screenshot(path=path, full_page=True)
        return path

    def fail(self, message: str, label: str):
        pytest.fail(f"{message}\nscreenshot: {self.shot(label)}", pytrace=False)

    def _idle(self, timeout_s: float):
        deadline = time.monotonic() + timeout_s
        while self.server.kernel_state(self.name) != "idle":
            if time.monotonic() > deadline:
                self.fail(f"the kernel of {self.name} did not become idle", "kernel")
            time.sleep(0.2)

    def open(self, total: int):
        # reset: a fresh workspace, so that only this notebook is open
        self.page.goto(self.server.lab_url(self.name) + "&reset")
        self.page.locator(f"{SHOWN} .jp-Notebook-cell").nth(total - 1).wait_for(timeout=60_000)
        self._idle(60)
        self.page.locator("#jp-main-statusbar").get_by_text(re.compile(r"\|\s*Idle")).wait_for(
            timeout=60_000
        )

    def run_all(self, total: int):
        self.page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^Run$")).click()
        self.page.locator(".lm-Menu-itemLabel", has_text=re.compile(r"^Run All Cells$")).click()
        self.page.wait_for_function(_RUN_ALL_DONE, arg=total, timeout=RUN_ALL_TIMEOUT_MS)
        self._idle(RUN_ALL_TIMEOUT_MS / 1000)

    def save(self) -> dict:
        """Save from the toolbar; the notebook as the server then reads it."""
        written = self.server.modified(self.name)
        self.page.locator('.jp-NotebookPanel-toolbar [data-command="docmanager:save"]').click()
        saved = self.server.saved_since(self.name, written, timeout_s=30)
        if saved is None:
            self.fail(f"saving {self.name} did not finish", "save")
        return saved

    def output_of(self, index: int) -> str:
        """The text the page shows under the code cell at ``index``."""
        cell = self.page.locator(f"{SHOWN} .jp-Notebook-cell").nth(index)
        area = cell.locator(".jp-OutputArea-output")
        return "\n".join(area.all_inner_texts())


def _write(server, name: str, nb) -> None:
    path = server.root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)


@pytest.fixture(scope="module")
def page(chromium_context):
    tab = chromium_context.new_page()
    tab.set_viewport_size({"width": 1280, "height": 900})
    yield tab
    tab.close()


@pytest.mark.browser
def test_run_all_in_jupyterlab_under_the_lectures_numbers_shows_no_answer(
    page, lab_server, artifacts
):
    problems = []
    for path in sorted(RELEASED.glob("*.ipynb")):
        nb = _prepared(path, None)
        name = f"decomp/page-{path.name}"
        _write(lab_server, name, nb)
        tab = Tab(page, lab_server, name, artifacts)
        tab.open(len(nb.cells))
        tab.run_all(len(nb.cells))
        saved = tab.save()
        seen = page.locator(f"{SHOWN} .jp-OutputArea-output").all_inner_texts()
        tab.shot(f"lecture-{path.stem}")
        errors = [
            o for c in saved["cells"] for o in c.get("outputs", []) if o["output_type"] == "error"
        ]
        if errors:
            tab.fail(
                f"{path.name}: a cell raised {errors[0]['ename']}: {errors[0]['evalue']}", "error"
            )
        assert "Traceback" not in "\n".join(seen), path.name
        texts = output_texts(saved) + [("page", t) for t in seen]
        assert any("LECTURE NUMBERS" in t for _, t in texts), path.name
        P = params(FILES[path.stem])
        problems += [f"{path.name}: {leak}" for leak in leaks(FILES[path.stem], P, texts)]
    lab_server.shut_down_kernels()
    assert not problems, "\n".join(problems)


#: Known mistakes typed into the chain notebook, by answer cell, with the line each must get.
MISTAKES = {
    "effective_rate_answer": (
        "p_eff = P.task_success / P.n",
        "[x] A2 p_eff: you divided the task success by n",
    ),
    "half_life_answer": (
        "n_half = np.log(2) / (1 - P.p_half)",
        "[x] A3 n_half: that is the approximation for p near 1",
    ),
    "per_step_answer": (
        "p_step = P.p**P.n + (1 - P.p**P.n) * P.d_graph * P.p**P.n\n"
        "p_graph = float(f'{P.p**P.n + (1 - P.p**P.n) * P.d_graph * P.p**P.n:.2g}')",
        "[x] C1 p_step: that is one check for the whole graph",
    ),
}


def _solved_chain():
    """The released chain notebook with every answer cell holding its solution."""
    return with_answers(RELEASED / "01-chain-reliability.ipynb")


def _index(nb, grade_id: str) -> int:
    return next(
        i
        for i, c in enumerate(nb.cells)
        if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id
    )


@pytest.mark.browser
def test_typed_mistakes_get_one_line_hints_and_the_saved_page_keeps_its_explorer(
    page, lab_server, artifacts
):
    nb = _solved_chain()
    name = "decomp/page-typed-01-chain-reliability.ipynb"
    _write(lab_server, name, nb)
    tab = Tab(page, lab_server, name, artifacts)
    tab.open(len(nb.cells))
    for grade_id, (source, _) in MISTAKES.items():  # typed, as a student would
        editor = (
            page.locator(f"{SHOWN} .jp-Notebook-cell")
            .nth(_index(nb, grade_id))
            .locator(".cm-content")
        )
        editor.click()
        page.keyboard.press("Control+a")
        page.keyboard.type(source)
        page.keyboard.press("Escape")
    tab.run_all(len(nb.cells))
    shot = tab.shot("typed-mistakes")
    for grade_id, (_, line) in MISTAKES.items():
        check = _index(nb, grade_id.replace("_answer", "_value"))
        cell = page.locator(f"{SHOWN} .jp-Notebook-cell").nth(check)
        cell.scroll_into_view_if_needed()
        cell.screenshot(path=artifacts / f"page-hint-{grade_id}.png")
        shown = tab.output_of(check).strip()
        if not shown.startswith(line) or "\n" in shown or "Traceback" in shown:
            tab.fail(
                f"{grade_id}: the check shows {shown!r}, not one line starting {line!r}", "hint"
            )
    rounded = tab.output_of(_index(nb, "per_graph_value")).strip()
    assert rounded.startswith("[x] C1 p_graph: close: keep at least 4 significant digits"), rounded
    assert "\n" not in rounded
    text = page.locator(SHOWN).inner_text()
    for item in ("A1 p_chain", "B1 p_prime"):
        assert f"[ok] {item}: " in text, item
    for item in ("B6 other_helps", "D2 reads"):  # checked for their form only: never [ok]
        assert f"[?] {item}: " in text and f"[ok] {item}: " not in text, item
    assert page.get_by_text("Traceback").count() == 0, shot
    explorers = page.locator(".decompkit-figure[data-seq]")
    explorers.first.wait_for(timeout=60_000)  # A and B are on track: the explorer opened
    saved = tab.save()
    assert "widgets" in saved["metadata"], "the saved notebook carries no widget state"
    lab_server.shut_down_kernels()
    page.goto(lab_server.lab_url(name) + "&reset")
    page.locator(".decompkit-figure[data-seq]").first.wait_for(timeout=60_000)
    note = page.locator(".decompkit-figure-note").first
    note.wait_for(state="visible", timeout=15_000)
    explorer = page.locator(".jp-OutputArea-output").filter(has=page.locator(".decompkit-figure"))
    explorer.first.scroll_into_view_if_needed()
    explorer.first.screenshot(path=artifacts / "page-reopened-explorer.png")
    assert "run this cell" in note.inner_text()
    assert page.get_by_text("model not found").count() == 0


@pytest.mark.browser
def test_a_check_in_strict_mode_fails_its_cell_with_the_one_line(page, lab_server, artifacts):
    """What grading and `kit.py check` do to a wrong answer, seen in JupyterLab."""
    cells = [
        "%env DECOMPKIT_STRICT=1",
        "from decompkit.exercises import chain\nfrom decompkit.exercises.params import params\n"
        'P = params("chain", "s1000")',
        "p_prime = P.p + (1 - P.p) * P.d",
        'chain.check("p_prime", p_prime, P)',
    ]
    nb = code_notebook(cells)
    name = "decomp/page-strict.ipynb"
    _write(lab_server, name, nb)
    tab = Tab(page, lab_server, name, artifacts)
    tab.open(len(cells))
    tab.run_all(len(cells))
    tab.shot("strict-mode")
    shown = tab.output_of(3).strip()
    assert shown.startswith("[x] B1 p_prime: you treated the retry as always right"), shown
    assert "\n" not in shown and "Traceback" not in shown and "CheckFailed" not in shown
    assert (
        page.locator(f"{SHOWN} .jp-Notebook-cell")
        .nth(3)
        .locator('[data-mime-type="application/vnd.jupyter.stderr"]')
        .count()
        == 1
    )  # shown as an error: the cell failed
    saved = tab.save()
    (error,) = saved["cells"][3]["outputs"]
    assert error["output_type"] == "error" and error["ename"] == "CheckFailed"
    lab_server.shut_down_kernels()
    json.dumps(saved)  # the saved file is plain JSON
