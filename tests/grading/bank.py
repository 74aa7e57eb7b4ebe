"""The grading bank: submissions with the score each must receive.

Each case maps a notebook to a builder of its submission and to what must be lost:
``set()`` full marks; a set of grade_ids that must score 0 while every other item keeps its
points; ``ALL`` nothing earned; ``FAILED`` the notebook cannot be graded (and earns nothing).
Correct-but-different answers measure the grader's false-positive rate (phi); common wrong
answers its detection rate (d); hostile submissions its robustness.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import nbformat

from .submissions import (
    NOTEBOOKS,
    RELEASED,
    insert_after,
    remove_cell,
    replace_source,
    submission,
)

ALL = "all"
FAILED = "failed"
CHAIN, HORIZON = "01-chain-reliability", "02-long-horizons"


@dataclass
class Case:
    student: str
    kind: str  # "reference", "different", "wrong" or "hostile"
    notebooks: dict = field(default_factory=dict)  # notebook -> callable returning nb or bytes
    lose: dict = field(default_factory=dict)  # notebook -> set of grade_ids, ALL or FAILED


def _solved(nb):
    return lambda: submission(nb)


def _with(nb, **answers):
    return lambda: submission(nb, answers)


CASES = [
    Case("solved", "reference", {nb: _solved(nb) for nb in NOTEBOOKS}, {nb: set() for nb in NOTEBOOKS}),
    Case(
        "untouched",
        "reference",
        {nb: (lambda nb=nb: nbformat.read(RELEASED / f"{nb}.ipynb", as_version=4)) for nb in NOTEBOOKS},
        {nb: ALL for nb in NOTEBOOKS},
    ),
    # --- correct, in another form: every one must keep full marks (phi = 0) -----------------
    Case(
        "different_forms",
        "different",
        {
            CHAIN: lambda: insert_after(
                submission(
                    CHAIN,
                    {
                        "chain_success_answer": (
                            "from fractions import Fraction\n"
                            "p_chain = Fraction(P.p).limit_denominator() ** P.n"
                        ),
                        "effective_rate_answer": "p_eff = np.float32(P.task_success) ** np.float32(1 / P.n)",
                        "half_life_answer": "import math\nn_half = math.log(0.5) / math.log(P.p_half)",
                        "p_prime_answer": "p_prime = np.float64(P.p) * (1 + (1 - P.p) * P.d)",
                        "check_helps_answer": "other_helps = np.bool_(P.d_other > P.phi_other)",
                        "check_kinds_answer": (
                            "kinds = {k: ('Formal ' if k not in ('answers_question', 'tone_fits',"
                            " 'reasoning_sound') else 'SEMANTIC') for k in chain.CHECK_ITEMS}"
                        ),
                    },
                ),
                "retry_limit_answer",
                "def geometric_mean_attempts(p, d):\n    return 1 / (1 - d * (1 - p))\n\n"
                "e_attempts = geometric_mean_attempts(P.p, P.d)",
            ),
            HORIZON: _with(
                HORIZON,
                transition_matrix_answer=(
                    "n, p, q = P.n_small, P.p, P.q\n"
                    "T_small = [[0.0] * (n + 2) for _ in range(n + 2)]\n"
                    "for i in range(n):\n"
                    "    T_small[i][i + 1] = p\n"
                    "    T_small[i][i] = (1 - p) * q\n"
                    "    T_small[i][n + 1] = (1 - p) * (1 - q)\n"
                    "T_small[n][n] = T_small[n + 1][n + 1] = 1.0"
                ),
                success_answer="success = markov.success_exact(P.n, P.p, P.q, P.budget)",
                collapse_answer="n_collapse = np.int64(markov.collapse_horizon(P.p, P.q, P.budget_factor))",
            ),
        },
        {CHAIN: set(), HORIZON: set()},
    ),
    Case(
        "out_of_order",
        "different",
        {CHAIN: lambda: _scramble_counts(submission(CHAIN))},
        {CHAIN: set()},
    ),
    # --- common wrong answers: each must lose exactly its own item (d = 1) -------------------
    Case(
        "wrong_chain",
        "wrong",
        {
            CHAIN: _with(
                CHAIN,
                chain_success_answer="p_chain = P.p * P.n",
                p_prime_answer="p_prime = P.p + (1 - P.p) * P.d",
                k_attempts_answer="p_k = 1 - P.k * (1 - P.p)",
                undetected_floor_answer="floor = (1 - P.p) * P.d",
                retry_limit_answer="e_attempts = 1 / P.p\np_inf = P.p / (1 - (1 - P.p))",
                fallible_answer="p_prime_phi = P.p + (1 - P.p) * P.d * P.p",
                check_helps_answer="other_helps = True",
                per_step_answer=(
                    "p_graph = (P.p + (1 - P.p) * P.d_graph * P.p) ** P.n\n"
                    "p_step = P.p**P.n + (1 - P.p**P.n) * P.d_graph * P.p**P.n"
                ),
                check_reads_answer="reads = {item: 'artifact' for item in chain.CHECK_ITEMS}",
            )
        },
        {
            CHAIN: {
                "chain_success_value",
                "p_prime_value",
                "k_attempts_value",
                "undetected_floor_value",
                "retry_limit_value",
                "expected_attempts_value",
                "fallible_value",
                "check_helps_value",
                "per_step_value",
                "per_graph_value",
                "check_reads_value",
            }
        },
    ),
    Case(
        "wrong_chain_2",
        "wrong",
        {
            CHAIN: _with(
                CHAIN,
                effective_rate_answer="p_eff = P.task_success / P.n",
                half_life_answer="n_half = np.log(2) / (1 - P.p_half)",
                check_kinds_answer="kinds = {item: 'formal' for item in chain.CHECK_ITEMS}",
            )
        },
        {CHAIN: {"effective_rate_value", "half_life_value", "check_kinds_value"}},
    ),
    Case(
        "wrong_horizon",
        "wrong",
        {
            HORIZON: _with(
                HORIZON,
                transition_matrix_answer=(
                    "T_small = markov.transition_matrix(P.n_small, P.p, P.q).T.copy()"
                ),
                escape_rate_answer="escape = 1 - P.q",
                success_answer="success = P.p**P.n",
                success_no_audit_answer="success_no_audit = markov.success_exact(P.n, P.p, P.q, P.budget)",
                grounded_answer="grounded = 1 - (1 - P.p) * (1 - P.q) * P.t",
                grounded_half_life_answer="grounded_half = np.log(2) / ((1 - P.p) * (1 - P.q))",
                min_budget_factor_answer="gamma_min = P.p",
                collapse_answer="n_collapse = markov.collapse_horizon(P.p, P.q, P.budget_factor) - 5",
            )
        },
        {HORIZON: ALL},
    ),
    # --- hostile and broken submissions ----------------------------------------------------
    Case(
        "infinite_loop",
        "hostile",
        {CHAIN: _with(CHAIN, effective_rate_answer="while True:\n    pass")},
        {CHAIN: {"effective_rate_value"}},
    ),
    Case(
        "kernel_death",
        "hostile",
        {
            CHAIN: _with(CHAIN, effective_rate_answer="import os\nos._exit(1)"),
            HORIZON: _solved(HORIZON),
        },
        {CHAIN: FAILED, HORIZON: set()},
    ),
    Case(
        "system_exit",
        "hostile",
        {CHAIN: _with(CHAIN, half_life_answer="n_half = np.log(2) / -np.log(P.p_half)\nraise SystemExit(3)")},
        {CHAIN: set()},
    ),
    Case(
        "output_flood",
        "hostile",
        {CHAIN: _with(CHAIN, half_life_answer="n_half = np.log(2) / -np.log(P.p_half)\nprint('x' * 50_000_000)")},
        {CHAIN: set()},
    ),
    Case(
        "deleted_test",
        "hostile",
        {CHAIN: lambda: remove_cell(submission(CHAIN, {"chain_success_answer": "p_chain = 0.5"}), "chain_success_value")},
        {CHAIN: {"chain_success_value"}},
    ),
    Case(
        "edited_test",
        "hostile",
        {CHAIN: lambda: replace_source(submission(CHAIN, {"chain_success_answer": "p_chain = 0.5"}), "chain_success_value", "pass")},
        {CHAIN: {"chain_success_value"}},
    ),
    Case(
        "rebinding",
        "hostile",
        {
            CHAIN: lambda: insert_after(
                submission(CHAIN, {"chain_success_answer": "p_chain = 0.5", "p_prime_answer": "p_prime = 0.5"}),
                "chain_success_answer",
                "close = same_bool = same_choices = lambda *args, **kwargs: True\n"
                "params = lambda name: None\n"
                "rel_ = P_ = None\n"
                "AssertionError = type('Quiet', (Exception,), {})\n"
                "float = lambda value: 0.0",
            )
        },
        {CHAIN: {"chain_success_value", "p_prime_value"}},
    ),
    Case(
        "writes_outside",
        "hostile",
        {
            CHAIN: _with(
                CHAIN,
                chain_success_answer=(
                    "import pathlib\n"
                    "for up in range(1, 6):\n"
                    "    base = pathlib.Path('../' * up)\n"
                    "    for name in ('gradebook.db', 'nbgrader_config.py'):\n"
                    "        try:\n"
                    "            (base / name).write_text('overwritten by a submission')\n"
                    "        except OSError:\n"
                    "            pass\n"
                    "p_chain = P.p**P.n"
                ),
            ),
            HORIZON: _solved(HORIZON),
        },
        # A student may damage their own scratch copy; the others' grades must not move.
        {CHAIN: None, HORIZON: None},
    ),
    Case(
        "invalid_json",
        "hostile",
        {CHAIN: lambda: b'{"cells": [ this is not json', HORIZON: _solved(HORIZON)},
        {CHAIN: FAILED, HORIZON: set()},
    ),
]


def _scramble_counts(nb):
    """Execution counts as if the cells had been run bottom-up (they are re-run top-down)."""
    code = [c for c in nb.cells if c.cell_type == "code"]
    for count, cell in enumerate(reversed(code), start=1):
        cell.execution_count = count
    return nb
