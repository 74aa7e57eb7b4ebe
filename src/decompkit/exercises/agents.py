"""Parameters, answer key and visible checks of the real-agents notebook (recorded runs).

Each student works on a sample of tau-bench's recorded airline tasks (gpt-4o, 4 trials per
task; :mod:`decompkit.traces`), drawn from their id: the tasks, the k of pass^k and the
detection rate d of a check. ``key(P)`` computes every answer from that sample with the
package's estimators; ``judge`` names the likely mistake, never the answer.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from .. import traces
from .checks import Mistake, judge_bool, judge_number
from .contract import Diagnosis, Exercise, Item
from .page import GRADED_LATER, NumbersDisplay, report
from .support import cached_key, grid, known_item, mistake_clashes, two_digits_slip_through

__all__ = [
    "AgentsParams",
    "draw",
    "degenerate",
    "key",
    "judge",
    "form",
    "check",
    "sample",
    "ITEMS",
    "EXERCISE",
]

#: Every recorded task, by id (the lecture's sample is all of them).
ALL_TASKS = tuple(range(50))

#: The AIC gap (plain minus start-up) above which the start-up model holds: the usual reading
#: of Akaike's criterion, where a gap of 2 or more is support for the better model.
AIC_SUPPORT = 2.0


@dataclass(frozen=True)
class AgentsParams(NumbersDisplay):
    """Numbers of the real-agents notebook.

    Attributes
    ----------
    tasks : tuple of int
        The recorded tasks of the student's sample (task ids, each once).
    k : int
        The k of pass^k asked for (trials that must all succeed).
    d : float
        Detection rate of the check put at every step boundary in part D.
    """

    tasks: tuple = ALL_TASKS
    k: int = 3
    d: float = 0.8


def draw(rng) -> AgentsParams:
    """One candidate sample (see :func:`decompkit.exercises.params.params`): 36 to 45 of the
    50 tasks, k = 2 or 3, d from 0.50 to 0.95."""
    size = int(rng.integers(36, 46))
    tasks = tuple(sorted(int(t) for t in rng.choice(len(ALL_TASKS), size=size, replace=False)))
    return AgentsParams(tasks=tasks, k=int(rng.integers(2, 4)), d=grid(rng, 0.50, 0.95, 0.01))


def sample(P: AgentsParams) -> traces.Tasks:
    """The student's tasks: their recorded outcomes and numbers of actions.

    Examples
    --------
    >>> table = sample(AgentsParams())
    >>> table.outcomes.shape
    (50, 4)
    """
    return traces.by_task(traces.records(), P.tasks)


def _classes(table) -> dict:
    wins, trials = table.successes, table.trials
    never, always = wins == 0, wins == trials
    middle = ~never & ~always
    return {"never": never, "always": always, "middle": middle}


def _chains(table):
    """(n, successes, trials) of the tasks with at least one action: the ones a chain fits."""
    keep = table.n_actions > 0
    return table.n_actions[keep], table.successes[keep], table.trials[keep]


@functools.lru_cache(maxsize=256)  # the key and every mistake table read the same fits
def _fitted(P: AgentsParams):
    """(the sample, the chains' (n, s, t), the fit of p^n, the fit of a p^n)."""
    table = sample(P)
    chains = _chains(table)
    return table, chains, traces.fit_chain(*chains), traces.fit_chain(*chains, start_up=True)


@cached_key
def key(P: AgentsParams) -> dict:
    """Every answer of the notebook for the parameters ``P``.

    Examples
    --------
    >>> answers = key(AgentsParams())
    >>> round(answers["p_hat"], 2), round(answers["pass_k"], 2), round(answers["p_to_k"], 3)
    (0.42, 0.22, 0.074)
    >>> answers["never_solved"], round(answers["aic_gap"], 1), answers["start_up_holds"]
    (14, 32.6, True)
    """
    table, (n, _, _), plain, start = _fitted(P)
    outcomes = table.outcomes
    p_hat = float(outcomes.mean())
    classes = _classes(table)
    middle = classes["middle"]
    q_middle = float(outcomes[middle].mean())
    p_prime = start.p + (1 - start.p) * P.d * start.p
    return {
        "p_hat": p_hat,
        "pass_k": traces.pass_hat_k(outcomes, P.k),
        "p_to_k": p_hat**P.k,
        "never_solved": int(classes["never"].sum()),
        "mixture_pass_k": float(classes["always"].mean() + middle.mean() * q_middle**P.k),
        "p_plain": plain.p,
        "a_start": start.a,
        "p_step": start.p,
        "aic_gap": plain.aic - start.aic,
        "start_up_holds": bool(plain.aic - start.aic > AIC_SUPPORT),
        "checked_success": float(np.mean(start.a * p_prime**n)),
    }


def degenerate(P: AgentsParams) -> list[str]:
    """Why ``P`` would make an exercise of the notebook degenerate (empty when usable).

    Examples
    --------
    >>> degenerate(AgentsParams())
    []
    """
    answers = key(P)
    found = mistake_clashes(answers, lambda item: _mistakes(item, P))
    if answers["pass_k"] < 1.5 * answers["p_to_k"]:
        found.append("pass^k lies too close to p^k to show the tasks differ")
    if not 1 <= answers["never_solved"]:
        found.append("no task is never solved")
    if abs(answers["aic_gap"] - AIC_SUPPORT) < 2:
        found.append("the AIC gap lies too close to the threshold to judge the models")
    if not 0.1 <= answers["a_start"] <= 0.9:
        found.append("the start-up factor lies too near an end of its range to read")
    for item in two_digits_slip_through(answers):
        found.append(f"{item}: two digits of its answer would pass the four-digit rule")
    # The parameter display shows d to two digits: no answer may read as d.
    shown = [k for k, v in answers.items() if isinstance(v, float) and abs(v - P.d) < 0.006]
    if shown:
        found.append(f"the answers {shown} would read as d on the parameter display")
    return found


def _mistakes(item: str, P: AgentsParams) -> list[Mistake]:
    """The classic mistakes of numeric item ``item``, with the value each produces."""
    return list(_mistake_rows(P).get(item, ()))


@functools.lru_cache(maxsize=256)  # every check of an answer asks for its item's row
def _mistake_rows(P: AgentsParams) -> dict[str, tuple[Mistake, ...]]:
    """The classic mistakes of each numeric item for ``P``."""
    table, (n, wins, trials), plain, start = _fitted(P)
    outcomes, k = table.outcomes, P.k
    p_hat = float(outcomes.mean())
    classes = _classes(table)
    gap = plain.aic - start.aic
    p, d = start.p, P.d
    rows = {
        "p_hat": [
            Mistake(
                "tasks_ever_solved",
                float((table.successes > 0).mean()),
                "that is the share of tasks solved at least once; the rate counts every run",
            ),
        ],
        "pass_k": [
            Mistake(
                "p_hat_to_the_k",
                p_hat**k,
                "that is the mean rate raised to the k: it assumes every task has the same rate",
            ),
            Mistake(
                "first_k_trials",
                float(outcomes[:, :k].all(axis=1).mean()),
                "you looked at the first k trials only; the estimate uses every k of the "
                "task's trials",
            ),
            Mistake(
                "all_trials",
                float(classes["always"].mean()),
                "that is the share of tasks solved in every trial, not in k of them",
            ),
        ],
        "p_to_k": [
            Mistake(
                "the_records_pass_k",
                traces.pass_hat_k(outcomes, k),
                "that is what the records show; the question asks what one shared rate predicts",
            ),
            Mistake("times_k", p_hat * k, "rates of independent trials multiply, not add"),
        ],
        "never_solved": [
            Mistake(
                "always_solved",
                int(classes["always"].sum()),
                "that counts the tasks solved in every trial",
            ),
        ],
        "mixture_pass_k": [
            Mistake(
                "forgot_easy_tasks",
                float(classes["middle"].mean() * outcomes[classes["middle"]].mean() ** k),
                "the tasks solved every time pass all k trials too",
            ),
            Mistake(
                "mean_rate_in_the_middle",
                float(classes["always"].mean() + classes["middle"].mean() * p_hat**k),
                "the middle class has a rate of its own, from its own runs",
            ),
        ],
        "p_plain": [
            Mistake(
                "effective_rate",
                float(wins.sum() / trials.sum()) ** (1 / float(n.mean())),
                "that reads one task of mean length; fit p^n to every task's own n",
            ),
            Mistake(
                "start_up_rate",
                start.p,
                "that is the per-step rate of a p^n, the model with a start-up factor",
            ),
        ],
        "a_start": [
            Mistake("one_minus_a", 1 - start.a, "a is the share of runs that get started"),
        ],
        "p_step": [
            Mistake("plain_rate", plain.p, "that is the fit of p^n alone, without a start-up"),
        ],
        "aic_gap": [
            Mistake("sign", -gap, "the wrong way round: the plain model's AIC comes first"),
            Mistake(
                "log_likelihoods",
                start.log_likelihood - plain.log_likelihood,
                "that is the gain in log-likelihood; AIC doubles it and charges each parameter",
            ),
            Mistake(
                "no_penalty",
                2 * (start.log_likelihood - plain.log_likelihood),
                "AIC charges 2 for each parameter; the start-up model has one more",
            ),
        ],
        "checked_success": [
            Mistake(
                "retry_always_right",
                float(np.mean(start.a * (p + (1 - p) * d) ** n)),
                "the retry is an attempt like the first: it succeeds only with the step's rate",
            ),
            Mistake(
                "forgot_start_up",
                float(np.mean((p + (1 - p) * d * p) ** n)),
                "the check repairs steps; the runs lost at start-up stay lost",
            ),
            Mistake(
                "plain_fit",
                float(np.mean((plain.p + (1 - plain.p) * d * plain.p) ** n)),
                "use the fit of a p^n, the model the records support",
            ),
        ],
    }
    return {name: tuple(row) for name, row in rows.items()}


#: Where every right answer lies, and the hint for one outside.
_BOUNDS = {
    "p_hat": ((0.0, 1.0), "a rate lies in [0, 1]"),
    "pass_k": ((0.0, 1.0), "a probability lies in [0, 1]"),
    "p_to_k": ((0.0, 1.0), "a probability lies in [0, 1]"),
    "never_solved": ((0, len(ALL_TASKS)), "a count of your tasks"),
    "mixture_pass_k": ((0.0, 1.0), "a probability lies in [0, 1]"),
    "p_plain": ((0.0, 1.0), "a rate per step lies in [0, 1]"),
    "a_start": ((0.0, 1.0), "a share of runs lies in [0, 1]"),
    "p_step": ((0.0, 1.0), "a rate per step lies in [0, 1]"),
    "aic_gap": ((-2.0, math.inf), "a nested model never fits worse: the gap is at least -2"),
    "checked_success": ((0.0, 1.0), "a probability lies in [0, 1]"),
}

#: The idea to reread when an answer is off in no way the check recognises.
_IDEAS = {
    "p_hat": "count the successful runs of your tasks over all their runs",
    "pass_k": "per task, the chance that k of its trials drawn together all succeed; then "
    "the mean over your tasks (traces.pass_hat_k)",
    "p_to_k": "one rate shared by every task, for all P.k trials",
    "never_solved": "tasks whose trials all failed",
    "mixture_pass_k": "three classes: never solved (rate 0), always (rate 1), the rest at "
    "their own pooled rate; pass^k of each class, weighted by its share",
    "p_plain": "maximum likelihood of p^n over the tasks with at least one action "
    "(traces.fit_chain)",
    "a_start": "the fit with start_up=True, over the tasks with at least one action",
    "p_step": "the fit with start_up=True, over the tasks with at least one action",
    "aic_gap": "AIC of p^n minus AIC of a p^n (Fit.aic)",
    "checked_success": "each step's rate becomes p' = p + (1 - p) d p; the start-up factor "
    "stays; average over the tasks with at least one action",
}


def judge(item: str, answer, P: AgentsParams) -> Diagnosis:
    """The verdict on one answer of the notebook (see :func:`key` for the items).

    Raises
    ------
    ValueError
        When ``item`` is not an item of this notebook.

    Examples
    --------
    >>> P = AgentsParams()
    >>> judge("pass_k", key(P)["p_hat"] ** 3, P).mistake
    'p_hat_to_the_k'
    """
    expected = known_item(key(P), item)[item]
    if item == "start_up_holds":
        return judge_bool(
            answer,
            expected,
            "read the AIC gap: a gap above 2 supports the model with the lower AIC",
        )
    bounds, hint = _BOUNDS[item]
    return judge_number(
        answer,
        expected,
        rtol=0 if item == "never_solved" else None,
        mistakes=_mistakes(item, P),
        bounds=bounds,
        bounds_hint=hint,
        idea=_IDEAS[item],
    )


def form(item: str, answer, P: AgentsParams) -> Diagnosis:
    """What the visible check of the yes/no item says: the form only."""
    verdict = judge_bool(answer, True)
    if verdict.status == "invalid":
        return verdict
    return Diagnosis("answered", f"True or False, as asked; {GRADED_LATER}")


def check(item: str, answer, P: AgentsParams) -> None:
    """The visible check of one item: prints ``[ok] A1 p_hat: on track`` or a hint."""
    report(EXERCISE, item, answer, P)


#: Every graded item of the notebook, in its order.
ITEMS = (
    Item("p_hat", "A1", ("p_hat",), "p_hat_value", "number"),
    Item("pass_k", "A2", ("pass_k",), "pass_k_value", "number"),
    Item("p_to_k", "A3", ("p_to_k",), "p_to_k_value", "number"),
    Item("never_solved", "B1", ("never",), "never_solved_value", "number"),
    Item("mixture_pass_k", "B2", ("pass_k_mix",), "mixture_pass_k_value", "number"),
    Item("p_plain", "C1", ("p_plain",), "p_plain_value", "number"),
    Item("a_start", "C2", ("a_start",), "a_start_value", "number"),
    Item("p_step", "C2", ("p_step",), "p_step_value", "number"),
    Item("aic_gap", "C3", ("aic_gap",), "aic_gap_value", "number"),
    Item("start_up_holds", "C4", ("start_up",), "start_up_holds_value", "bool", True),
    Item("checked_success", "D1", ("p_checked",), "checked_success_value", "number"),
)

#: The notebook as the teaching layer knows it (see :class:`decompkit.exercises.Exercise`).
EXERCISE = Exercise(
    name="agents",
    file="07-real-agents",
    Params=AgentsParams,
    draw=draw,
    key=key,
    judge=judge,
    degenerate=degenerate,
    items=ITEMS,
    form=form,
)
