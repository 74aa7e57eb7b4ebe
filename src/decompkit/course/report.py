"""The class report: what the class got wrong, who copied whose numbers, what changed.

Read from the grading records (:func:`decompkit.course.engine.record.load`); nothing is re-run.
``python -m decompkit.course report`` writes into ``reports/<assignment>/``:

- ``report.html``, one self-contained page (figures as inline SVG, no script, no network):
  per item the share right, the share unanswered and the named mistakes with their counts;
  per notebook the distribution of scores; students whose wrong answers are a classmate's
  right values or the lecture's; integrity flags, time-outs and kernel deaths; and what
  changed since the previous report (old score -> new score per student and item);
- ``items.csv`` (one row per item) and ``students.csv`` (one row per student and notebook),
  a text a spreadsheet would run as a formula written with a ``'`` in front;
- ``data.json``, the scores this report saw, and ``previous.json``, those of the last report
  that saw other scores: the next run diffs against it.

Copied numbers are found from the ids alone: every student's numbers are a pure function of
their id (:func:`decompkit.course.key.answer_key`), so each classmate's right answers can be
recomputed and compared with a wrong answer (:func:`decompkit.grading.close`, the hidden
tests' tolerance). A student is listed when at least :data:`MIN_MATCHES` of their wrong
numeric answers in a notebook, and at least half of them, are one classmate's right values
(or the lecture's, for answers worked out with the lecture's numbers), and when so many
matches would come by chance with probability at most :data:`CHANCE`
(:mod:`decompkit.course.chance`: items with few values are left out, an item asked twice
counts once, and the figure is shown beside the finding).
"""

from __future__ import annotations

import ast
import csv
import html
import io
import json
import math
import re
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from ..exercises.ids import LECTURE
from ..grading import close
from .arguments import Parser
from .chance import odds, spread, tail
from .csvsafe import cell
from .engine.record import load
from .key import FILES, answer_key

__all__ = ["MIN_MATCHES", "CHANCE", "ClassReport", "Match", "analyse", "number", "write", "main"]

#: Wrong numeric answers that must equal one other id's key before a match is reported.
MIN_MATCHES = 2
#: A student is named only when matching that many answers by chance is at most this likely.
CHANCE = 1e-3
_NOT_GRADED = {"timeout", "time_limit", "kernel_died", "failed", "unreadable"}
_WRAPPED = re.compile(r"^[A-Za-z_][\w.]*\((.*)\)$", re.S)


def number(text) -> float | None:
    """The real number an answer's text holds (``"0.9"``, ``"np.float64(0.9)"``), or None.

    Examples
    --------
    >>> number("0.9"), number("np.float64(0.25)"), number("True"), number("[1, 2]")
    (0.9, 0.25, None, None)
    """
    if not isinstance(text, str):
        return None
    text = text.strip()
    inner = _WRAPPED.match(text)
    try:
        value = ast.literal_eval(inner.group(1) if inner else text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    value = float(value)
    return None if math.isnan(value) else value


@dataclass(frozen=True)
class Match:
    """A student whose wrong answers in ``notebook`` are ``source``'s right ones."""

    student: str
    notebook: str
    source: str  # a classmate's id, or "lecture"
    items: tuple[str, ...]  # the grade_ids that match
    wrong: int  # wrong numeric answers of the student in that notebook
    chance: float = 1.0  # how likely so many matches with anyone are without copying

    def describe(self) -> str:
        whose = (
            "the lecture's numbers" if self.source == LECTURE else f"the numbers of {self.source}"
        )
        found = f"{len(self.items)} of {self.wrong} wrong answers match {whose}"
        return f"{found} (by chance: {odds(self.chance)})"


@dataclass
class ClassReport:
    """Everything the report shows, computed once from the records."""

    assignment: str
    students: list[str]
    #: {notebook: {grade_id: {"title", "n", "right", "unanswered", "not_graded", "mistakes":
    #: Counter(id -> count), "hints": {id: message}}}}
    items: dict = field(default_factory=dict)
    #: {notebook: {student: (score, max_score)}}
    scores: dict = field(default_factory=dict)
    matches: list[Match] = field(default_factory=list)
    #: (student, notebook, what) for integrity flags, time-outs and kernel deaths
    flags: list[tuple[str, str, str]] = field(default_factory=list)
    #: {notebook: [students who did not hand it in]} (left out of every share and figure)
    missing: dict = field(default_factory=dict)
    #: (student, notebook, item title or "total", old, new)
    changes: list[tuple] = field(default_factory=list)
    previous_at: str = ""

    def score_table(self) -> dict:
        """``{"student notebook grade_id": score}`` plus notebook totals, as data.json keeps."""
        table = {}
        for notebook, per_item in self._item_scores.items():
            for (student, grade_id), score in per_item.items():
                table[f"{student} {notebook} {grade_id}"] = score
        for notebook, per_student in self.scores.items():
            for student, (score, _) in per_student.items():
                table[f"{student} {notebook} total"] = score
        return table

    _item_scores: dict = field(default_factory=dict, repr=False)
    _titles: dict = field(default_factory=dict, repr=False)


def _keys(students, notebook_file: str) -> dict:
    """{id: {grade_id: right answer}} of every student and the lecture, for one notebook."""
    name = next((n for n, f in FILES.items() if f == notebook_file), None)
    if name is None:
        return {}
    keys = {}
    for who in [*students, None]:
        try:
            rows = answer_key(who, [name])
        except ValueError:  # an id the draws refuse (white space): nothing to compare
            continue
        keys[who or LECTURE] = {row.grade_id: row.answer for row in rows}
    return keys


def _matches(student: str, notebook: str, entry, keys: dict) -> list[Match]:
    name = next((n for n, f in FILES.items() if f == notebook), None)
    if name is None:
        return []
    items = spread(name)
    own = keys.get(student, {})
    wrong = {}
    for grade_id, item in entry.items.items():
        value = number(item.answer)
        if item.status in ("off", "invalid") and value is not None and grade_id in items.kept:
            wrong[grade_id] = value
    shares = [items.share(g, value) for g, value in wrong.items()]
    found = []
    for source, key in keys.items():
        if source == student:
            continue
        hits = tuple(
            g
            for g, value in wrong.items()
            if isinstance(key.get(g), (int, float))
            and close(value, key[g])
            and not close(own[g], key[g])
        )
        if len(hits) < MIN_MATCHES or 2 * len(hits) < len(wrong):
            continue
        # every classmate and the lecture were compared: the chance that any matches so often
        chance = min(1.0, (len(keys) - 1) * tail(shares, len(hits)))
        if chance <= CHANCE:
            found.append(Match(student, notebook, source, hits, len(wrong), chance))
    return found


def analyse(records: dict, assignment: str, previous: dict | None = None) -> ClassReport:
    """Aggregate the records of one assignment (see the module's docstring).

    Parameters
    ----------
    records : dict
        ``{student: Record}`` as :func:`decompkit.course.engine.record.load` returns them.
    assignment : str
        The assignment they belong to.
    previous : dict, optional
        The ``data.json`` of an earlier report, to list what changed since.
    """
    report = ClassReport(assignment, sorted(records))
    by_notebook = defaultdict(dict)
    for student, record in records.items():
        for notebook, entry in record.notebooks.items():
            by_notebook[notebook][student] = entry
    for notebook in sorted(by_notebook):
        entries = by_notebook[notebook]
        keys = _keys(sorted(entries), notebook)
        items, item_scores = {}, {}
        for student, entry in sorted(entries.items()):
            status = entry.status
            if status == "missing":  # not handed in: nothing to count, listed on its own
                report.missing.setdefault(notebook, []).append(student)
                continue
            report.scores.setdefault(notebook, {})[student] = (entry.score, entry.max_score)
            if status in _NOT_GRADED:
                what = status.replace("_", " ")
                report.flags.append((student, notebook, f"{what}: {entry.message}"))
            kind = "integrity (flagged)" if entry.flagged else "integrity"
            for flag in entry.flags:
                report.flags.append((student, notebook, f"{kind}: {flag}"))
            for grade_id, item in entry.items.items():
                row = items.setdefault(
                    grade_id,
                    {
                        "title": item.title(grade_id),
                        "n": 0,
                        "right": 0,
                        "unanswered": 0,
                        "not_graded": 0,
                        "mistakes": Counter(),
                        "hints": {},
                    },
                )
                row["n"] += 1
                kind = item.status
                row["right"] += kind in ("ok", "close")
                row["unanswered"] += kind == "unanswered"
                row["not_graded"] += kind in ("timeout", "error", "not_run")
                if kind == "timeout":
                    report.flags.append((student, notebook, f"{row['title']}: timed out"))
                if item.mistake:
                    row["mistakes"][item.mistake] += 1
                    row["hints"].setdefault(item.mistake, item.message)
                item_scores[(student, grade_id)] = item.score
                report._titles[(notebook, grade_id)] = row["title"]
            report.matches += _matches(student, notebook, entry, keys)
        report.items[notebook] = items
        report._item_scores[notebook] = item_scores
    if previous:
        report.previous_at = str(previous.get("written_at", ""))
        report.changes = _changes(previous.get("scores", {}), report)
    return report


def _changes(old: dict, report: ClassReport) -> list[tuple]:
    new = report.score_table()
    changes = []
    for name in sorted(set(old) | set(new)):
        if old.get(name) == new.get(name):
            continue
        student, notebook, grade_id = name.split(" ", 2)
        what = (
            "total" if grade_id == "total" else report._titles.get((notebook, grade_id), grade_id)
        )
        changes.append((student, notebook, what, old.get(name), new.get(name)))
    return changes


def _figure(report: ClassReport) -> str:
    """The score distribution of every notebook, as one inline SVG."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    notebooks = sorted(report.scores)
    if not notebooks:
        return ""
    columns = min(3, len(notebooks))
    rows = math.ceil(len(notebooks) / columns)
    fig = Figure(figsize=(3.6 * columns, 2.4 * rows), layout="constrained")
    for index, notebook in enumerate(notebooks):
        ax = fig.add_subplot(rows, columns, index + 1)
        values = [score for score, _ in report.scores[notebook].values()]
        top = max((m for _, m in report.scores[notebook].values()), default=1.0) or 1.0
        bins = [x - 0.5 for x in range(int(math.ceil(top)) + 2)]
        ax.hist(values, bins=bins, color="#0072B2", edgecolor="white")
        ax.set_title(notebook, fontsize=9)
        ax.set_xlabel("score", fontsize=8)
        ax.set_ylabel("students", fontsize=8)
        ax.set_xlim(-0.5, top + 0.5)
        ax.yaxis.get_major_locator().set_params(integer=True)
        ax.tick_params(labelsize=7)
    out = io.StringIO()
    fig.savefig(out, format="svg")
    svg = out.getvalue()
    return svg[svg.index("<svg") :]


def _pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.0f}%" if whole else "-"


def _num(value) -> str:
    return "-" if value is None else f"{value:g}"


def _html(report: ClassReport) -> str:
    e = html.escape
    out = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
        f"<title>Class report: {e(report.assignment)}</title><style>{_CSS}</style></head><body>",
        f"<h1>Class report: {e(report.assignment)}</h1>",
        f"<p>{len(report.students)} students graded.</p>",
        "<h2>What changed since the previous report</h2>",
    ]
    if not report.previous_at:
        out.append("<p>No earlier report to compare with.</p>")
    elif not report.changes:
        out.append(f"<p>No score changed since the report of {e(report.previous_at)}.</p>")
    else:
        out.append(f"<p>Since the report of {e(report.previous_at)}:</p>")
        out.append(_HEAD.format("Student", "Notebook", "Item", "Old", "New"))
        out += [
            f"<tr><td>{e(s)}</td><td>{e(n)}</td><td>{e(w)}</td><td class='n'>{_num(a)}</td>"
            f"<td class='n'>{_num(b)}</td></tr>"
            for s, n, w, a, b in report.changes
        ]
        out.append("</table>")
    out.append("<h2>Copied numbers</h2>")
    out.append(
        f"<p>A student is named when at least {MIN_MATCHES} of their wrong answers in a "
        "notebook, and at least half of them, are one classmate's right values (or the "
        "lecture's), and when that many matches with anyone would come by chance with a "
        f"probability of at most {CHANCE:g}. Items whose answer has few values are left out; "
        "a number asked twice counts once.</p>"
    )
    if report.matches:
        out.append(
            "<table><tr><th>Student</th><th>Notebook</th><th>Finding</th><th>Items</th></tr>"
        )
        out += [
            f"<tr><td>{e(m.student)}</td><td>{e(m.notebook)}</td><td>{e(m.describe())}</td>"
            f"<td>{e(', '.join(report._titles.get((m.notebook, g), g) for g in m.items))}</td></tr>"
            for m in report.matches
        ]
        out.append("</table>")
    else:
        out.append("<p>No wrong answers match a classmate's or the lecture's numbers.</p>")
    out.append("<h2>Integrity flags, time-outs and kernel deaths</h2>")
    if report.flags:
        out.append("<table><tr><th>Student</th><th>Notebook</th><th>What</th></tr>")
        out += [
            f"<tr><td>{e(s)}</td><td>{e(n)}</td><td>{e(w)}</td></tr>" for s, n, w in report.flags
        ]
        out.append("</table>")
    else:
        out.append("<p>Nothing flagged.</p>")
    out.append("<h2>Not handed in</h2>")
    if report.missing:
        total = len(report.students)
        out.append("<ul>")
        out += [
            f"<li><b>{e(notebook)}</b>: {len(who)} of {total} ({e(', '.join(who))})</li>"
            for notebook, who in sorted(report.missing.items())
        ]
        out.append("</ul><p>Not handed in counts in no share or figure of this report.</p>")
    else:
        out.append("<p>Every student handed in every notebook.</p>")
    out += ["<h2>Scores per notebook</h2>", f"<figure>{_figure(report)}</figure>"]
    for notebook, items in sorted(report.items.items()):
        out.append(f"<h2>{e(notebook)}</h2>")
        out.append(_HEAD.format("Item", "Right", "Unanswered", "Not graded", "Named mistakes"))
        for row in items.values():
            mistakes = "<br>".join(
                f"<b>{e(m)}</b> &times;{c}: {e(row['hints'].get(m, ''))}"
                for m, c in row["mistakes"].most_common()
            )
            out.append(
                f"<tr><td>{e(row['title'])}</td><td class='n'>{_pct(row['right'], row['n'])}</td>"
                f"<td class='n'>{_pct(row['unanswered'], row['n'])}</td>"
                f"<td class='n'>{_pct(row['not_graded'], row['n'])}</td><td>{mistakes}</td></tr>"
            )
        out.append("</table>")
    out.append("</body></html>")
    return "\n".join(out)


_HEAD = "<table><tr><th>{}</th><th>{}</th><th>{}</th><th>{}</th><th>{}</th></tr>"
_CSS = (
    "body{font-family:system-ui,sans-serif;max-width:70rem;margin:1.5rem auto;padding:0 1rem;"
    "color:#1f2328}table{border-collapse:collapse;margin:.5rem 0 1.2rem}th,td{border:1px solid"
    " #d0d7de;padding:.3rem .6rem;text-align:left;vertical-align:top}th{background:#f6f8fa}"
    "td.n{text-align:right;font-variant-numeric:tabular-nums}figure{margin:0}svg{max-width:100%;"
    "height:auto}"
)


def _write_csv(path: Path, header: list[str], rows) -> None:
    """Write ``header`` and ``rows``, every cell through :func:`.csvsafe.cell` (no formulas)."""
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerows([cell(value) for value in row] for row in [header, *rows])


def write(root, assignment: str = "decomp") -> Path:
    """Write the class report of ``assignment`` (see the module's docstring); return its folder.

    Raises
    ------
    ValueError
        When there is no grading record of ``assignment`` under ``root/records``.
    """
    from datetime import datetime, timezone

    root = Path(root)
    records = load(root, assignment)
    if not records:
        raise ValueError(f"no grading records of {assignment!r} under {root / 'records'}")
    folder = root / "reports" / assignment
    folder.mkdir(parents=True, exist_ok=True)
    latest, earlier = folder / "data.json", folder / "previous.json"
    old = json.loads(latest.read_text(encoding="utf-8")) if latest.is_file() else None
    probe = analyse(records, assignment)
    if old is not None and old.get("scores") != probe.score_table():
        earlier.write_text(json.dumps(old, indent=1), encoding="utf-8")
    previous = json.loads(earlier.read_text(encoding="utf-8")) if earlier.is_file() else old
    report = analyse(records, assignment, previous)
    now = datetime.now(timezone.utc).isoformat(timespec="seconds")
    data = {"assignment": assignment, "written_at": now, "scores": report.score_table()}
    latest.write_text(json.dumps(data, indent=1), encoding="utf-8")
    (folder / "report.html").write_text(_html(report), encoding="utf-8")
    _write_csv(
        folder / "items.csv",
        "notebook item grade_id students right unanswered not_graded mistakes".split(),
        [
            [
                notebook,
                row["title"],
                grade_id,
                row["n"],
                _pct(row["right"], row["n"]),
                _pct(row["unanswered"], row["n"]),
                _pct(row["not_graded"], row["n"]),
                "; ".join(f"{m} x{c}" for m, c in row["mistakes"].most_common()),
            ]
            for notebook, items in sorted(report.items.items())
            for grade_id, row in items.items()
        ],
    )
    matches = defaultdict(list)
    for m in report.matches:
        matches[(m.student, m.notebook)].append(m.describe())
    flags = defaultdict(list)
    for student, notebook, what in report.flags:
        flags[(student, notebook)].append(what)
    _write_csv(
        folder / "students.csv",
        ["student", "notebook", "score", "max_score", "matches", "flags"],
        [
            [
                student,
                notebook,
                f"{score:g}",
                f"{top:g}",
                "; ".join(matches[(student, notebook)]),
                "; ".join(flags[(student, notebook)]),
            ]
            for notebook, per_student in sorted(report.scores.items())
            for student, (score, top) in sorted(per_student.items())
        ],
    )
    return folder


def main(argv: list[str] | None = None) -> int:
    """Command line: write the class report; print where it is."""
    parser = Parser(
        prog="python -m decompkit.course report",
        description="Write reports/<assignment>/report.html, items.csv and students.csv "
        "from the grading records.",
    )
    parser.add_argument("assignment", nargs="?", default="decomp")
    parser.add_argument("--root", type=Path, default=Path.cwd(), help="course folder")
    args = parser.parse_args(argv)
    try:
        folder = write(args.root, args.assignment)
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    print(f"wrote {folder / 'report.html'}, items.csv and students.csv")
    return 0
