"""Every student's parameters and answers, for the instructor.

The answers are computed the way the hidden tests compute them, from
``decompkit.variants.params(notebook, id)`` and the ``key`` of the notebook's exercise module,
so the key can never drift from the grading. From the shell::

    python3 kit.py key s1234                      # one student's numbers and answers
    python3 kit.py key --csv key.csv s1 s2 ...    # the class's key as CSV
    python3 kit.py key --csv key.csv              # ids taken from submitted/<id>/

Every id goes through :func:`decompkit.course.ids.normalise_id` first, as collection and
grading do, so ``S2001`` and ``s2001`` get the same key and any id the grader grades is
accepted here.
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import sys
from pathlib import Path
from typing import NamedTuple

from ..variants import NOTEBOOKS, params
from .ids import IdError, normalise_id

__all__ = ["GRADE_CELLS", "FILES", "KeyRow", "answer_key", "parameters", "write_csv", "main"]

#: Notebook file (without ``.ipynb``) of each parameter object.
FILES = {
    "chain": "01-chain-reliability",
    "horizon": "02-long-horizons",
    "plans": "03-plans-as-objects",
    "dag": "04-plan-dag",
    "trace": "05-scheduler-trace",
    "harness": "06-plan-artefact-and-loop",
}

#: ``{notebook: {grade cell id: answer-key item}}`` for the answers that depend on the
#: student's numbers. The plans notebook asks about structure that every student shares.
GRADE_CELLS = {
    "chain": {
        "chain_success_value": "chain_success",
        "effective_rate_value": "effective_rate",
        "half_life_value": "half_life",
        "p_prime_value": "p_prime",
        "k_attempts_value": "k_attempts",
        "undetected_floor_value": "undetected_floor",
        "retry_limit_value": "retry_limit",
        "expected_attempts_value": "expected_attempts",
        "fallible_value": "p_prime_fallible",
        "check_helps_value": "other_check_helps",
        "per_step_value": "per_step",
        "per_graph_value": "per_graph",
    },
    "horizon": {
        "escape_rate_value": "escape_rate",
        "success_value": "success",
        "success_no_audit_value": "success_no_audit",
        "grounded_value": "grounded",
        "grounded_half_life_value": "grounded_half_life",
        "min_budget_factor_value": "min_budget_factor",
        "collapse_value": "collapse",
    },
    "plans": {},
    "dag": {
        "ready_set_value": "ready_now",
        "count_orders_a_value": "n_orders_a",
        "count_orders_b_value": "n_orders_b",
        "makespan_a_value": "makespan_a",
        "critical_path_a_value": "path_a",
        "slack_value": "slack_a",
        "critical_path_b_value": "path_b",
        "spurious_slack_value": "slack_spurious",
        "spurious_makespan_value": "makespan_spurious",
        "coordinated_wall_value": "wall_coordinated",
        "speedup_value": "speedup_b",
        "locked_value": "locked",
        "locked_coordinated_value": "locked_coordinated",
    },
    "trace": {
        "blocked_late_value": "blocked_late",
        "blocked_early_value": "blocked_early",
        "cancelled_stop_value": "cancelled_stop",
        "done_drain_value": "done_drain",
        "end_drain_value": "end_drain",
        "unrolled_nodes_value": "new_nodes",
        "repointed_edges_value": "report_preds",
        "repaired_inputs_value": "repaired_preds",
        "repaired_makespan_value": "end_repaired",
        "unrolled_nodes_other_value": "new_nodes_other",
        "repairs_made_value": "repairs_made",
        "gives_up_value": "end_gives_up",
    },
    "harness": {
        "ready_now_value": "ready_now",
        "moves_value": "moves",
        "progress_original_value": "progress_original",
        "progress_current_value": "progress_current",
        "refused_value": "refused",
        "success_value": "success",
        "corrupted_value": "corrupted",
        "q_effective_value": "q_effective",
        "success_trace_reader_value": "success_trace_reader",
        "clustered_value": "clustered",
        "appended_cost_value": "appended_cost",
        "cost_ratio_value": "cost_ratio",
    },
}


class KeyRow(NamedTuple):
    """One answer of one student: where it is graded and what it must be."""

    student: str
    notebook: str
    grade_id: str
    item: str
    answer: object


def _text(value) -> str:
    if isinstance(value, (set, frozenset)):
        return "{" + ", ".join(sorted(map(repr, value))) + "}"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k!r}: {_text(v)}" for k, v in value.items()) + "}"
    if isinstance(value, float):
        return f"{value:.10g}"
    return repr(value) if isinstance(value, str) else str(value)


def _exercise_key(notebook: str, P) -> dict:
    """Every answer of ``notebook`` for the parameters ``P``: its exercise module's ``key``.

    The one place where a notebook's name leads to its exercise module.

    Examples
    --------
    >>> round(_exercise_key("chain", params("chain"))["chain_success"], 4)
    0.3487
    """
    from ..exercises import chain, dag, harness, horizon, plans, trace

    modules = {
        "chain": chain,
        "horizon": horizon,
        "plans": plans,
        "dag": dag,
        "trace": trace,
        "harness": harness,
    }
    return modules[notebook].key(P)


def _id(student):
    return None if student is None else normalise_id(student)


def parameters(student, notebook: str) -> dict:
    """The numbers ``student`` works with in ``notebook`` (``None``: the lecture's).

    Examples
    --------
    >>> parameters(None, "chain")["p"]
    0.9
    >>> parameters("S2001", "chain") == parameters(" s2001", "chain")
    True
    """
    return dataclasses.asdict(params(notebook, _id(student)))


def answer_key(student, notebooks=None) -> list[KeyRow]:
    """The answers of every graded cell that depends on the student's numbers.

    Parameters
    ----------
    student : str or None
        The id (as the submission's folder names it); ``None`` for the lecture's numbers.
    notebooks : iterable of str, optional
        Which notebooks (default: all).

    Raises
    ------
    ValueError
        For an unknown notebook or a malformed id.

    Examples
    --------
    >>> rows = answer_key(None, ["chain"])
    >>> rows[0].grade_id, round(rows[0].answer, 4)
    ('chain_success_value', 0.3487)
    """
    rows = []
    student = _id(student)
    for notebook in NOTEBOOKS if notebooks is None else notebooks:
        P = params(notebook, student)
        cells = GRADE_CELLS.get(notebook)
        if cells is None:
            raise ValueError(f"notebook must be one of {sorted(NOTEBOOKS)}, got {notebook!r}")
        if not cells:
            continue
        key = _exercise_key(notebook, P)
        name = student if student is not None else "lecture"
        rows += [KeyRow(name, notebook, cell, item, key[item]) for cell, item in cells.items()]
    return rows


def write_csv(path, students, notebooks=None) -> int:
    """Write the class's answer key (one row per student and graded cell); return the rows.

    Each row also names the student's parameters of that notebook, so a disputed answer can be
    recomputed by hand from the file alone.
    """
    count = 0
    students = list(dict.fromkeys(normalise_id(s) for s in students))
    with open(path, "w", newline="", encoding="utf-8") as handle:
        out = csv.writer(handle)
        out.writerow(["student", "notebook", "file", "grade_id", "item", "answer", "parameters"])
        for student in students:
            numbers = {}
            for row in answer_key(student, notebooks):
                if row.notebook not in numbers:
                    fields = parameters(student, row.notebook)
                    numbers[row.notebook] = "; ".join(f"{k}={_text(v)}" for k, v in fields.items())
                out.writerow(
                    [row.student, row.notebook, FILES[row.notebook], row.grade_id, row.item,
                     _text(row.answer), numbers[row.notebook]]
                )  # fmt: skip
                count += 1
    return count


def _submitted(root: Path) -> list[str]:
    """The normalised ids of the folders in ``submitted/`` (a folder no id fits is skipped;
    the grader reports it)."""
    folder = root / "submitted"
    if not folder.is_dir():
        return []
    found = set()
    for path in folder.iterdir():
        if path.is_dir() and not path.name.startswith("."):
            try:
                found.add(normalise_id(path.name))
            except IdError:
                continue
    return sorted(found)


def main(argv=None) -> int:
    """Command line: print one student's key, or write the class's key as CSV."""
    parser = argparse.ArgumentParser(
        prog="python -m decompkit.course key", description=__doc__.split("\n")[0]
    )
    parser.add_argument("students", nargs="*", help="ids (default for --csv: submitted/<id>/)")
    parser.add_argument("--csv", type=Path, help="write the class's key to this file")
    parser.add_argument("--notebook", action="append", choices=sorted(NOTEBOOKS))
    parser.add_argument("--root", type=Path, default=Path.cwd(), help="the course folder")
    args = parser.parse_args(argv)
    students = args.students or _submitted(args.root)
    try:
        if args.csv:
            if not students:
                parser.error("no ids given and no submitted/<id>/ folders found")
            rows = write_csv(args.csv, students, args.notebook)
            print(f"wrote {rows} answers of {len(students)} students to {args.csv}")
            return 0
        for student in [_id(s) for s in students] or [None]:
            print(f"# {student or 'lecture numbers'}")
            for notebook in args.notebook or NOTEBOOKS:
                fields = parameters(student, notebook)
                print(
                    f"{FILES[notebook]}: " + ", ".join(f"{k}={_text(v)}" for k, v in fields.items())
                )
                for row in answer_key(student, [notebook]):
                    print(f"    {row.grade_id:<28} {row.item:<20} {_text(row.answer)}")
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return 0
