"""Parameters, answer key and visible checks of the chain-reliability notebook.

``key(P)`` computes every answer from the parameter object with :mod:`decompkit.reliability`;
``judge(item, answer, P)`` compares a student's answer with it and names the likely mistake,
and ``check(item, answer, P)`` prints the verdict as the notebook's one-line check. The
expected value is never printed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .. import reliability as rel
from .checks import (
    Mistake,
    form_choices,
    judge_bool,
    judge_choices,
    judge_number,
)
from .contract import Diagnosis, Exercise, Item
from .page import GRADED_LATER, NumbersDisplay, report
from .support import cached_key, grid, known_item, mistake_clashes, two_digits_slip_through

__all__ = [
    "ChainParams",
    "draw",
    "degenerate",
    "key",
    "judge",
    "form",
    "check",
    "ITEMS",
    "CHECK_ITEMS",
    "EXERCISE",
]


@dataclass(frozen=True)
class ChainParams(NumbersDisplay):
    """Numbers of the chain-reliability notebook (lecture sections 1-2).

    Attributes
    ----------
    p, n : per-step success rate and chain length of the worked chain.
    task_success : the measured task success of a monolithic prompt over n steps (four
        decimals, as a measurement is reported).
    p_half : per-step rate for the half-life exercise.
    d, phi : detection and false-positive rates of the boundary check.
    k : attempts allowed behind a perfect check.
    d_other, phi_other : a second check, to decide whether it is worth adding.
    d_graph : detection rate in the per-step vs per-graph comparison.
    """

    p: float = 0.9
    n: int = 10
    task_success: float = 0.1074
    p_half: float = 0.95
    d: float = 0.8
    phi: float = 0.1
    k: int = 3
    d_other: float = 0.3
    phi_other: float = 0.4
    d_graph: float = 1.0


def draw(rng) -> ChainParams:
    """One candidate of per-student numbers (see :func:`decompkit.exercises.params.params`).

    The monolithic prompt's per-step rate is drawn a little below ``p`` and only its task
    success over ``n`` steps is kept: the rate itself is what exercise A2 asks for.
    """
    p = grid(rng, 0.60, 0.88, 0.001)
    d = grid(rng, 0.40, 0.90, 0.001)
    d_other = grid(rng, 0.20, 0.80, 0.001)
    gap = grid(rng, 0.05, 0.20, 0.001)
    helps = bool(rng.integers(0, 2))
    n = int(rng.integers(5, 13))
    p_monolithic = round(p - grid(rng, 0.03, 0.10, 0.001), 3)
    return ChainParams(
        p=p,
        n=n,
        task_success=round(p_monolithic**n, 4),
        p_half=grid(rng, 0.90, 0.99, 0.0001),
        d=d,
        phi=grid(rng, 0.01, round(d - 0.15, 3), 0.001),
        k=int(rng.integers(2, 4)),
        d_other=d_other,
        phi_other=round(d_other - gap if helps else d_other + gap, 3),
        d_graph=grid(rng, 0.60, 1.00, 0.01),
    )


@cached_key
def key(P: ChainParams) -> dict:
    """Every answer of the notebook for the parameters ``P``.

    Examples
    --------
    >>> round(key(ChainParams())["chain_success"], 4), key(ChainParams())["check_kinds"]["sql_runs"]
    (0.3487, 'formal')
    """
    graph = rel.per_step_vs_per_graph(P.p, P.n, P.d_graph)
    return {
        "chain_success": rel.chain_success(P.p, P.n),
        "effective_rate": rel.step_rate(P.task_success, P.n),
        "half_life": rel.half_life(P.p_half),
        "p_prime": rel.checked_step(P.p, P.d),
        "k_attempts": rel.perfect_check_attempts(P.p, P.k),
        "undetected_floor": rel.undetected_floor(P.p, P.d),
        "retry_limit": rel.checked_step_limit(P.p, P.d),
        "expected_attempts": rel.expected_attempts(P.p, P.d),
        "p_prime_fallible": rel.checked_step_fallible(P.p, P.d, P.phi),
        "other_check_helps": rel.check_helps(P.d_other, P.phi_other),
        "per_step": graph.per_step,
        "per_graph": graph.per_graph,
        "check_kinds": dict(_KIND),
        "check_reads": dict(_READS),
    }


def degenerate(P: ChainParams) -> list[str]:
    """Why ``P`` would make an exercise of the notebook degenerate (empty when usable).

    Examples
    --------
    >>> degenerate(ChainParams())
    []
    """
    expected = key(P)
    found = mistake_clashes(expected, lambda item: _mistakes(item, P))
    for item in two_digits_slip_through(expected):
        found.append(f"{item}: two significant digits would pass the four-digit rule")
    if not 0.02 <= P.task_success <= 0.5:
        found.append(f"the monolithic task success {P.task_success} is too extreme to read")
    if abs(P.d_other - P.phi_other) < 0.05:
        found.append("the second check's d and phi are too close to decide by eye")
    graph = rel.per_step_vs_per_graph(P.p, P.n, P.d_graph)
    if graph.per_step - graph.per_graph < 0.05:
        found.append("per-step and per-graph checks come out too close to compare")
    return found


def _mistakes(item: str, P: ChainParams) -> list[Mistake]:
    """The classic mistakes of each numeric item, with the value each produces."""
    p, n, d, phi, k = P.p, P.n, P.d, P.phi, P.k
    graph = rel.per_step_vs_per_graph(p, n, P.d_graph)
    table = {
        "chain_success": [
            Mistake(
                "multiplied_p_by_n",
                p * n,
                "you multiplied p by n: the chance that all steps are right takes one factor "
                "per step, it does not grow with n",
            ),
            Mistake(
                "at_least_one_step",
                1 - (1 - p) ** n,
                "that is the chance that at least one step is right; the chain needs every "
                "step right",
            ),
            Mistake(
                "one_factor_short",
                p ** (n - 1),
                "one factor short: each of the n steps contributes a factor of its own",
            ),
        ],
        "effective_rate": [
            Mistake(
                "divided_by_n",
                P.task_success / n,
                "you divided the task success by n; look for the per-step rate that, taken "
                "over all n steps, gives the task success",
            ),
            Mistake(
                "raised_to_n",
                P.task_success**n,
                "you raised the task success to the n-th power; go the other way, from the "
                "whole task back to one step",
            ),
        ],
        "half_life": [
            Mistake(
                "used_approximation",
                math.log(2) / (1 - P.p_half),
                "that is the approximation for p near 1; the question asks for the exact "
                "solution, with the logarithm of p itself",
            ),
            Mistake(
                "mean_run_length",
                1 / (1 - P.p_half),
                "that is the mean run length before the first failure, not where the product "
                "falls to one half",
            ),
        ],
        "p_prime": [
            Mistake(
                "retry_always_right",
                p + (1 - p) * d,
                "you treated the retry as always right; it is an attempt like the first and "
                "succeeds only with the step's own rate",
            ),
            Mistake(
                "used_miss_rate",
                p + (1 - p) * (1 - d) * p,
                "you used the miss rate where the detection rate belongs: the retry happens "
                "when the check catches the error",
            ),
        ],
        "k_attempts": [
            Mistake(
                "added_failures",
                1 - k * (1 - p),
                "you added up the failure chances; the step fails only when all k attempts "
                "fail, and independent failures multiply",
            ),
            Mistake(
                "all_attempts_right",
                p**k,
                "that is the chance that all k attempts are right; one right attempt is enough",
            ),
            Mistake(
                "one_attempt_short",
                1 - (1 - p) ** (k - 1),
                "one attempt short: k attempts give the step k chances to fail",
            ),
        ],
        "undetected_floor": [
            Mistake(
                "detected_share",
                (1 - p) * d,
                "that is the share the check catches; the floor is the share that slips through",
            ),
            Mistake(
                "forgot_wrong_attempt",
                1 - d,
                "the floor also needs a wrong first attempt: a right one is never a failure",
            ),
        ],
        "retry_limit": [
            Mistake(
                "single_retry",
                rel.checked_step(p, d),
                "that is one retry; retrying until the check passes goes further",
            ),
            Mistake(
                "assumed_certain",
                1.0,
                "with d < 1 some wrong results slip through and end the loop, so the limit "
                "stays below 1",
            ),
        ],
        "expected_attempts": [
            Mistake(
                "perfect_check_attempts",
                1 / p,
                "that counts attempts behind a perfect check (d = 1); here some wrong results "
                "are missed and end the loop early",
            ),
            Mistake(
                "catch_without_error",
                1 / (1 - d),
                "an attempt is repeated only when it is wrong and caught; you used the chance "
                "of a catch alone",
            ),
        ],
        "p_prime_fallible": [
            Mistake(
                "no_false_positives",
                rel.checked_step(p, d),
                "you left out the false positives: a correct result the check flags is thrown "
                "away and has to be retried",
            ),
            Mistake(
                "false_positives_help",
                p + p * (1 - p) * (d + phi),
                "false positives cost: they lower the step's rate, they do not add to it",
            ),
        ],
        "per_step": [
            Mistake(
                "checked_the_graph",
                graph.per_graph,
                "that is one check for the whole graph; a check per step raises each factor",
            ),
        ],
        "per_graph": [
            Mistake(
                "checked_each_step",
                graph.per_step,
                "that is a check per step; the graph check retries all n steps at once",
            ),
            Mistake(
                "graph_retry_always_right",
                p**n + (1 - p**n) * P.d_graph,
                "the retry of the whole graph succeeds only as often as the whole chain does",
            ),
        ],
    }
    return table.get(item, [])


#: Where every right answer lies, and the hint for one outside (``"p..1"``: from P.p to 1).
_BOUNDS = {
    "chain_success": ((0.0, 1.0), "a probability lies in [0, 1]"),
    "effective_rate": ((0.0, 1.0), "a rate per step lies in [0, 1]"),
    "half_life": ((0.0, math.inf), "a half-life is a positive number of steps"),
    "p_prime": ("p..1", "a check with one retry never makes a step worse, nor better than sure"),
    "k_attempts": ("p..1", "more attempts never hurt, and no step is better than sure"),
    "undetected_floor": ((0.0, 1.0), "a probability lies in [0, 1]"),
    "retry_limit": (
        "p..1",
        "retrying until the check passes lies between no check and a sure step",
    ),
    "expected_attempts": ((1.0, math.inf), "at least one attempt is always made"),
    "p_prime_fallible": ((0.0, 1.0), "a probability lies in [0, 1]"),
    "per_step": ((0.0, 1.0), "a probability lies in [0, 1]"),
    "per_graph": ((0.0, 1.0), "a probability lies in [0, 1]"),
}

#: The idea to reread when an answer is off in no way the check recognises.
_IDEAS = {
    "chain_success": "every one of the P.n steps must be right, each with rate P.p given the "
    "earlier ones",
    "effective_rate": "look for the per-step rate that, over P.n steps, gives P.task_success",
    "half_life": "find the n at which the product falls to one half at the rate P.p_half, "
    "exactly, with logarithms",
    "p_prime": "add the two ways the step ends right: a right first attempt, or a wrong one "
    "that is caught and then retried successfully",
    "k_attempts": "the step fails only when every one of its P.k attempts fails",
    "undetected_floor": "the floor is a wrong first attempt that the check misses",
    "retry_limit": "each attempt ends the loop unless it is wrong and caught; add the chances "
    "of ending right",
    "expected_attempts": "N is geometric: another attempt follows exactly when one is wrong "
    "and caught",
    "p_prime_fallible": "a correct first result survives only when the check does not flag "
    "it; whatever is flagged is retried once",
    "per_step": "with a check at every step, each of the n factors becomes the one-retry rate",
    "per_graph": "with one check of the graph, the whole chain is one attempt, retried once "
    "when the check catches it",
}


def judge(item: str, answer, P: ChainParams) -> Diagnosis:
    """The verdict on one answer of the notebook (see :func:`key` for the items).

    Use :meth:`EXERCISE.diagnose <decompkit.exercises.Exercise.diagnose>`, which also spots
    the lecture's numbers and never raises on a malformed answer.

    Raises
    ------
    ValueError
        When ``item`` is not an item of this notebook.

    Examples
    --------
    >>> judge("p_prime", 0.9 + 0.1 * 0.8, ChainParams()).mistake
    'retry_always_right'
    """
    expected = known_item(key(P), item)[item]
    if item == "check_kinds":
        return judge_choices(answer, _KIND, ["formal", "semantic"], _KIND_HINTS)
    if item == "check_reads":
        return judge_choices(answer, _READS, ["artifact", "narration"], _READS_HINTS)
    if item == "other_check_helps":
        return judge_bool(
            answer,
            expected,
            "a check helps exactly when it catches wrong results more often than it flags "
            "right ones",
        )
    bounds, hint = _BOUNDS[item]
    if bounds == "p..1":
        bounds = (P.p, 1.0)
    return judge_number(
        answer,
        expected,
        mistakes=_mistakes(item, P),
        bounds=bounds,
        bounds_hint=hint,
        idea=_IDEAS[item],
    )


def form(item: str, answer, P: ChainParams) -> Diagnosis:
    """What the visible check of a yes/no or classification item says: the form only.

    Naming which entries are off would give the answer away when each has two choices; the
    hidden tests grade the values.
    """
    if item == "other_check_helps":
        verdict = judge_bool(answer, True)
        if verdict.status == "invalid":
            return verdict
        return Diagnosis("answered", f"True or False, as asked; {GRADED_LATER}")
    choices = ["formal", "semantic"] if item == "check_kinds" else ["artifact", "narration"]
    problem = form_choices(answer, CHECK_ITEMS, choices)
    if problem is not None:
        return problem
    return Diagnosis("answered", f"a word for every check, as asked; {GRADED_LATER}")


def check(item: str, answer, P: ChainParams) -> None:
    """The visible check of one item: prints ``[ok] A1 p_chain: on track`` or a hint."""
    report(EXERCISE, item, answer, P)


#: Checks to classify: what each decides (formal or semantic) and what it reads.
CHECK_ITEMS = {
    "unit_tests": "run the project's unit tests on the generated code",
    "json_schema": "validate the returned JSON against the step's schema",
    "sql_runs": "execute the generated SQL query against a copy of the database",
    "quote_in_source": "verify that every quoted span occurs verbatim in the source document",
    "answers_question": "judge whether the summary answers the user's actual question",
    "tone_fits": "judge whether the reply's tone suits an upset customer",
    "reasoning_sound": "have a critic read the model's chain of thought and rate it convincing",
    "diff_applies": "apply the produced patch and check the build still compiles",
}

_KIND = {
    "unit_tests": "formal",
    "json_schema": "formal",
    "sql_runs": "formal",
    "quote_in_source": "formal",
    "answers_question": "semantic",
    "tone_fits": "semantic",
    "reasoning_sound": "semantic",
    "diff_applies": "formal",
}
_READS = {item: "artifact" for item in CHECK_ITEMS} | {"reasoning_sound": "narration"}
_KIND_HINTS = {
    "tone_fits": "no program can decide tone; it needs a critic or a person",
    "answers_question": "whether it does what was asked is a semantic property",
    "quote_in_source": "a substring test is a program: a formal property",
}
_READS_HINTS = {
    "reasoning_sound": "the chain of thought is the model's narration, not its artifact",
}

#: Every graded item of the notebook, in its order.
ITEMS = (
    Item("chain_success", "A1", ("p_chain",), "chain_success_value", "number"),
    Item("effective_rate", "A2", ("p_eff",), "effective_rate_value", "number"),
    Item("half_life", "A3", ("n_half",), "half_life_value", "number"),
    Item("p_prime", "B1", ("p_prime",), "p_prime_value", "number"),
    Item("k_attempts", "B2", ("p_k",), "k_attempts_value", "number"),
    Item("undetected_floor", "B3", ("floor",), "undetected_floor_value", "number"),
    Item("retry_limit", "B4", ("p_inf",), "retry_limit_value", "number"),
    Item("expected_attempts", "B4", ("e_attempts",), "expected_attempts_value", "number"),
    Item("p_prime_fallible", "B5", ("p_prime_phi",), "fallible_value", "number"),
    Item("other_check_helps", "B6", ("other_helps",), "check_helps_value", "bool", True),
    Item("per_step", "C1", ("p_step",), "per_step_value", "number"),
    Item("per_graph", "C1", ("p_graph",), "per_graph_value", "number"),
    Item("check_kinds", "D1", ("kinds",), "check_kinds_value", "choices", True),
    Item("check_reads", "D2", ("reads",), "check_reads_value", "choices", True),
)

#: The notebook as the teaching layer knows it (see :class:`decompkit.exercises.Exercise`).
EXERCISE = Exercise(
    name="chain",
    file="01-chain-reliability",
    Params=ChainParams,
    draw=draw,
    key=key,
    judge=judge,
    degenerate=degenerate,
    items=ITEMS,
    form=form,
)
