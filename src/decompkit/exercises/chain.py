"""Parameters, answer key and visible checks of the chain-reliability notebook.

``key(P)`` computes every answer from the parameter object with :mod:`decompkit.reliability`;
``check(item, answer, P)`` compares a student's answer with it and names the likely mistake.
The expected value is never printed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .. import reliability as rel
from ._contract import Exercise
from ._support import cached_key, grid, known_item, mistake_clashes
from .checks import check_choices, check_number

__all__ = [
    "ChainParams",
    "draw",
    "degenerate",
    "key",
    "check",
    "CHECK_ITEMS",
    "check_kinds",
    "check_reads",
    "EXERCISE",
]


@dataclass(frozen=True)
class ChainParams:
    """Numbers of the chain-reliability notebook (lecture sections 1-2).

    Attributes
    ----------
    p, n : per-step success rate and chain length of the worked chain.
    p_monolithic : per-step rate behind the monolithic prompt whose task success is given.
    p_half : per-step rate for the half-life exercise.
    d, phi : detection and false-positive rates of the boundary check.
    k : attempts allowed behind a perfect check.
    d_other, phi_other : a second check, to decide whether it is worth adding.
    d_graph : detection rate in the per-step vs per-graph comparison.
    """

    p: float = 0.9
    n: int = 10
    p_monolithic: float = 0.8
    p_half: float = 0.95
    d: float = 0.8
    phi: float = 0.1
    k: int = 3
    d_other: float = 0.3
    phi_other: float = 0.4
    d_graph: float = 1.0

    @property
    def task_success(self) -> float:
        """Success of the monolithic prompt over n steps, rounded as a measurement would be."""
        return round(self.p_monolithic**self.n, 4)


def draw(rng) -> ChainParams:
    """One candidate of per-student numbers (see :func:`decompkit.exercises.params.params`)."""
    p = grid(rng, 0.60, 0.88, 0.001)
    d = grid(rng, 0.40, 0.90, 0.001)
    d_other = grid(rng, 0.20, 0.80, 0.001)
    gap = grid(rng, 0.05, 0.20, 0.001)
    helps = bool(rng.integers(0, 2))
    return ChainParams(
        p=p,
        n=int(rng.integers(5, 13)),
        p_monolithic=round(p - grid(rng, 0.03, 0.10, 0.001), 3),
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
    found = mistake_clashes(key(P), lambda item: _mistakes(item, P))
    if not 0.02 <= P.task_success <= 0.5:
        found.append(f"the monolithic task success {P.task_success} is too extreme to read")
    if abs(P.d_other - P.phi_other) < 0.05:
        found.append("the second check's d and phi are too close to decide by eye")
    graph = rel.per_step_vs_per_graph(P.p, P.n, P.d_graph)
    if graph.per_step - graph.per_graph < 0.05:
        found.append("per-step and per-graph checks come out too close to compare")
    return found


def _mistakes(item: str, P: ChainParams) -> dict[str, float]:
    p, n, d, phi, k = P.p, P.n, P.d, P.phi, P.k
    table = {
        "chain_success": {
            "you multiplied p by n; independent successes multiply as a power, p**n": p * n,
            "that is P(at least one step right), 1 - (1-p)**n; all must be right": 1 - (1 - p) ** n,
            "one factor short: a chain of n steps has n factors of p": p ** (n - 1),
        },
        "effective_rate": {
            "you divided the task success by n; take the n-th root instead": P.task_success / n,
            "you raised to the n-th power; the step rate is the n-th root": P.task_success**n,
        },
        "half_life": {
            "that is the approximation ln 2 / (1 - p); use the exact -ln p": math.log(2) / (1 - p),
            "you used 1/(1 - p), the mean run length, not the half-life": 1 / (1 - P.p_half),
        },
        "p_prime": {
            "the retry itself succeeds only with probability p: (1-p) d p, not (1-p) d": (
                p + (1 - p) * d
            ),
            "you used the miss rate (1 - d) where the detection rate d belongs": (
                p + (1 - p) * (1 - d) * p
            ),
        },
        "k_attempts": {
            "all k attempts must fail for the step to fail: (1-p)**k, not k (1-p)": 1 - k * (1 - p),
            "that is P(all k attempts right), p**k; one right attempt is enough": p**k,
            "k attempts means k factors of (1 - p), not k - 1": 1 - (1 - p) ** (k - 1),
        },
        "undetected_floor": {
            "that is the detected share (1-p) d; the floor is what slips through": (1 - p) * d,
            "the floor also needs a wrong first attempt: multiply by (1 - p)": 1 - d,
        },
        "retry_limit": {
            "that is a single retry, p'; retrying until it passes goes further": rel.checked_step(
                p, d
            ),
            "with d < 1 some wrong results slip through; p/(1 - d(1-p)), not 1": 1.0,
        },
        "expected_attempts": {
            "1/p counts attempts when every wrong one is caught (d = 1); here d < 1": 1 / p,
            "a flagged attempt happens with (1-p) d, not d alone": 1 / (1 - d),
        },
        "p_prime_fallible": {
            "you left out the false positives: a flagged correct result costs p(1-p) phi": (
                rel.checked_step(p, d)
            ),
            "the gain is p(1-p)(d - phi); you used (d + phi)": p + p * (1 - p) * (d + phi),
        },
        "per_step": {
            "that is one check for the whole graph; a check per step raises each factor": (
                rel.per_step_vs_per_graph(p, n, P.d_graph).per_graph
            ),
        },
        "per_graph": {
            "that is a check per step; the graph check retries all n steps at once": (
                rel.per_step_vs_per_graph(p, n, P.d_graph).per_step
            ),
            "the retry of the graph succeeds only with p**n": (p**n + (1 - p**n) * P.d_graph),
        },
    }
    return table.get(item, {})


_BOUNDS = {
    "chain_success": ((0.0, 1.0), "a probability lies in [0, 1]"),
    "effective_rate": ((0.0, 1.0), "a rate per step lies in [0, 1]"),
    "half_life": ((0.0, math.inf), "a half-life is a positive number of steps"),
    "p_prime": ("p..1", "a check with one retry never makes a step worse: p <= p' <= 1"),
    "k_attempts": ("p..1", "more attempts never hurt: p <= answer <= 1"),
    "undetected_floor": ((0.0, 1.0), "a probability lies in [0, 1]"),
    "retry_limit": ("p..1", "retrying until the check passes gives p <= p'_inf <= 1"),
    "expected_attempts": ((1.0, math.inf), "at least one attempt is always made: E[N] >= 1"),
    "p_prime_fallible": ((0.0, 1.0), "a probability lies in [0, 1]"),
    "per_step": ((0.0, 1.0), "a probability lies in [0, 1]"),
    "per_graph": ((0.0, 1.0), "a probability lies in [0, 1]"),
}


def check(item: str, answer, P: ChainParams) -> bool:
    """Visible check of one numeric answer of the notebook (see :func:`key` for the items).

    Raises
    ------
    decompkit.exercises.checks.CheckFailed
        When the answer is off, with a hint naming the likely mistake.
    ValueError
        When ``item`` is not an item of this notebook.
    """
    expected = known_item(key(P), item)
    if item == "check_kinds":
        return check_kinds(answer)
    if item == "check_reads":
        return check_reads(answer)
    if item == "other_check_helps":
        return check_choices(
            item,
            None if answer is None else {item: str(answer)},
            {item: str(expected[item])},
            ["True", "False"],
            {item: "a check helps exactly when d > phi"},
        )
    bounds, hint = _BOUNDS[item]
    if bounds == "p..1":
        bounds = (P.p, 1.0)
    return check_number(
        item,
        answer,
        expected[item],
        mistakes=_mistakes(item, P),
        bounds=bounds,
        bounds_hint=hint,
    )


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


def check_kinds(answer) -> bool:
    """Visible check of the formal/semantic classification of :data:`CHECK_ITEMS`."""
    return check_choices(
        "check_kinds",
        answer,
        _KIND,
        ["formal", "semantic"],
        {
            "tone_fits": "no program can decide tone; it needs a critic or a person",
            "answers_question": "whether it does what was asked is a semantic property",
            "quote_in_source": "a substring test is a program: a formal property",
        },
    )


def check_reads(answer) -> bool:
    """Visible check of what each check of :data:`CHECK_ITEMS` reads: artifact or narration."""
    return check_choices(
        "check_reads",
        answer,
        _READS,
        ["artifact", "narration"],
        {"reasoning_sound": "the chain of thought is the model's narration, not its artifact"},
    )


#: The notebook as the teaching layer knows it (see :class:`decompkit.exercises.Exercise`).
EXERCISE = Exercise(
    name="chain",
    file="01-chain-reliability",
    Params=ChainParams,
    draw=draw,
    key=key,
    check=check,
    degenerate=degenerate,
    grade_cells={
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
        "check_kinds_value": "check_kinds",
        "check_reads_value": "check_reads",
    },
)
