"""The grading bank: submissions with the score each must receive.

Each case maps a notebook to a builder of its submission and to what must be lost:
``set()`` full marks; a set of grade_ids that must score 0 while every other item keeps its
points; ``ALL`` nothing earned; ``FAILED`` the notebook cannot be graded (and earns nothing).
``status`` names the grader's status of a notebook where it is not ``"graded"`` (a notebook
that timed out is graded but flagged ``"timeout"``).
Correct-but-different answers measure the grader's false-positive rate (phi); common wrong
answers its detection rate (d); hostile submissions its robustness.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass, field
from fractions import Fraction

import nbformat

from decompkit.exercises import harness as loop
from decompkit.exercises.params import EXERCISES, params
from decompkit.grading import close

from .inprocess import load, run
from .submissions import (
    NOTEBOOKS,
    RELEASED,
    answer_key,
    insert_after,
    remove_cell,
    replace_source,
    submission,
)

ALL = "all"
FAILED = "failed"
CHAIN, HORIZON = "01-chain-reliability", "02-long-horizons"
PLANS, DAG, TRACE = "03-plans-as-objects", "04-plan-dag", "05-scheduler-trace"
LOOP = "06-plan-artefact-and-loop"
AGENTS = "07-real-agents"


@dataclass
class Case:
    student: str
    kind: str  # "reference", "different", "wrong" or "hostile"
    notebooks: dict = field(default_factory=dict)  # notebook -> callable returning nb or bytes
    lose: dict = field(default_factory=dict)  # notebook -> set of grade_ids, ALL or FAILED
    status: dict = field(default_factory=dict)  # notebook -> status other than "graded"


def _own(item: str, notebook: str = "dag", student: str = "different_types"):
    """The answer ``item`` for ``student``'s own numbers, as that student would type it in."""
    return EXERCISES[notebook].key(params(notebook, student))[item]


#: A cell that makes every comparison a hidden test might use say "equal", and the answer key
#: the hidden tests ask give the (wrong) answers of the patched submissions.
PATCH_MODULES = (
    "import builtins, numpy, numpy.testing, decompkit.grading, decompkit.exercises.checks\n"
    "from decompkit.exercises import chain as _chain\n"
    "always = lambda *args, **kwargs: True\n"
    "decompkit.grading.close = decompkit.grading.same_bool = always\n"
    "decompkit.grading.same_choices = decompkit.grading.same_set = always\n"
    "decompkit.exercises.expected = lambda *args, **kwargs: 0.5\n"
    "numpy.isclose = numpy.allclose = always\n"
    "numpy.testing.assert_allclose = lambda *args, **kwargs: None\n"
    "_chain.check = decompkit.exercises.checks.check_number = always"
)

#: A cell that installs an input transformer: every later cell holding a test becomes `pass`.
SILENCE_TESTS = (
    "def _silence(lines):\n"
    "    return ['pass\\n'] if any('HIDDEN TESTS' in line or 'check(' in line for line in lines)"
    " else lines\n"
    "get_ipython().input_transformers_post.append(_silence)"
)


def _number(value) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _typed_for(classmate: str, nb: str = "01-chain-reliability"):
    """The notebook with every numeric answer typed in as computed for ``classmate``'s id."""
    _, bound = run(load(nb), classmate)
    typed = {
        grade_id: "\n".join(f"{k} = {float(v)!r}" for k, v in names.items())
        for grade_id, names in bound.items()
        if names
        and all(isinstance(v, numbers.Real) and not isinstance(v, bool) for v in names.values())
    }
    return lambda: submission(nb, typed)


def _differing(student: str, classmate: str, notebook: str = "chain") -> set:
    """Graded cells whose numeric answer differs between two students' numbers."""
    exercise = EXERCISES[notebook]
    mine = exercise.key(params(notebook, student))
    theirs = exercise.key(params(notebook, classmate))
    return {
        cell
        for cell, item in exercise.grade_cells.items()
        if isinstance(mine[item], float)
        and not close(theirs[item], mine[item])  # as the hidden test compares
    }


def _with_id_cell(nb, student: str):
    cell = next(c for c in nb.cells if "student-id" in c.metadata.get("tags", []))
    cell.source = f"STUDENT_ID = {student!r}"
    return nb


def _solved(nb):
    return lambda: submission(nb)


def _with(nb, **answers):
    """Replace answer cells; an answer given as a callable is written when the bank is built."""
    return lambda: submission(nb, {k: v() if callable(v) else v for k, v in answers.items()})


def _then(nb, **appended):
    """Each given answer cell keeps the solution's code and appends a line that overwrites the
    answer: a wrong value stays in its own item while the helpers later cells use remain."""
    return lambda: submission(nb, {k: answer_key(nb)[k] + v for k, v in appended.items()})


LOOP_OWN = "different_loop"


def _fraction(item: str, between: str = " / ", student: str = LOOP_OWN) -> str:
    """A share of steps of notebook 6 as ``numerator / denominator`` for ``student``."""
    share = Fraction(_own(item, "harness", student)).limit_denominator(100)
    return f"{share.numerator}{between}{share.denominator}"


def _loop_wrong(student: str = "wrong_loop") -> dict:
    """Wrong answers about ``student``'s own plan artefact (notebook 6)."""
    P = params("harness", student)
    plan, key = loop.frontier_plan(P), EXERCISES["harness"].key(P)
    waiting = next(
        s.id
        for s in plan.steps
        if s.state == "pending" and any(plan.step(d).state != "done" for d in s.depends_on)
    )
    illegal = next(m for m, verdict in key["moves"].items() if verdict == "illegal")
    # an addition is always among the accepted proposals (the draw is redrawn otherwise)
    added = next(label for label, _, kind in P.artefact.proposals if kind == "add")
    return {"waiting": waiting, "illegal": illegal, "added": added}


_LOOP_WRONG = _loop_wrong()


CASES = [
    Case(
        "solved",
        "reference",
        {nb: _solved(nb) for nb in NOTEBOOKS},
        {nb: set() for nb in NOTEBOOKS},
    ),
    Case(
        "untouched",
        "reference",
        {
            nb: (lambda nb=nb: nbformat.read(RELEASED / f"{nb}.ipynb", as_version=4))
            for nb in NOTEBOOKS
        },
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
                        "effective_rate_answer": (
                            "p_eff = np.float32(P.task_success) ** np.float32(1 / P.n)"
                        ),
                        "half_life_answer": (
                            "import math\nn_half = math.log(0.5) / math.log(P.p_half)"
                        ),
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
                collapse_answer=(
                    "n_collapse = np.int64(markov.collapse_horizon(P.p, P.q, P.budget_factor))"
                ),
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
    Case(
        "different_types",
        "different",
        {
            PLANS: _with(
                PLANS,
                # The student's own versions, typed with other keys, case, spaces and hyphens.
                placement_plan_and_execute_answer=lambda: (
                    "plan_and_execute = {\n"
                    + "".join(
                        f"    {dim.replace('_', ' ').title()!r}: {choice.upper()!r},\n"
                        for dim, choice in _own("placement_plan_and_execute", "plans").items()
                    )
                    + "}"
                ),
                placement_rewoo_answer=lambda: (
                    "rewoo = dict("
                    + ", ".join(
                        f"{dim}={choice.replace(' ', '-').title() + ' '!r}"
                        for dim, choice in _own("placement_rewoo", "plans").items()
                    )
                    + ")"
                ),
                placement_adapt_answer=lambda: (
                    "adapt = dict(zip(architectures.DIMENSIONS, (\n"
                    + "".join(
                        f"    {choice.replace(' ', '_')!r},\n"
                        for choice in _own("placement_adapt", "plans").values()
                    )
                    + ")))"
                ),
                plan_problem_kinds_answer=(
                    "try:\n"
                    "    validate_plan(plan_a, P.tools, max_steps=P.max_steps)\n"
                    "except PlanError as error:\n"
                    "    kinds_a = error.kinds()"
                ),
                plan_cycle_steps_answer=(
                    "try:\n"
                    "    validate_plan(plan_b, P.tools, max_steps=P.max_steps)\n"
                    "except PlanError as error:\n"
                    "    cycle_b = next(p.steps for p in error.problems if p.kind == 'cycle')"
                ),
                rewoo_edges_answer="rewoo_edges = placeholder_edges(plan_c)",
                reads_unlisted_answer=(
                    "reads_unlisted = [list(p.steps) for p in edge_contradictions(plan_d)\n"
                    "                  if p.kind == 'placeholder_without_dependency']"
                ),
                listed_unread_answer=lambda: (
                    f"listed_unread = {sorted(map(list, _own('listed_unread', 'plans')))}"
                ),
                # Another repair: a suffix on a repeated id, depends_on in reverse order.
                repaired_plan_answer=(
                    "import difflib\n"
                    "fixed_plan = copy.deepcopy(plan_a)\n"
                    "ids = []\n"
                    "for step in fixed_plan['steps']:\n"
                    "    if step['id'] in ids:\n"
                    "        step['id'] += '_renamed'\n"
                    "    ids.append(step['id'])\n"
                    "    step['tool'] = difflib.get_close_matches(step['tool'], P.tools, 1, 0)[0]\n"
                    "    del step['depends_on']\n"
                    "cited = placeholder_edges(fixed_plan)\n"
                    "for step in fixed_plan['steps']:\n"
                    "    step['depends_on'] = sorted(cited[step['id']], reverse=True)"
                ),
            ),
            DAG: _with(
                DAG,
                # A valid order (the last of all orders, not always the key's), as a tuple.
                topological_order_answer=(
                    "order_a = tuple(list(dag.all_topological_orders(A.graph))[-1])"
                ),
                ready_set_answer="ready_now = list(dag.ready_set(A.graph, P.done, P.running))",
                count_orders_a_answer=(
                    "import numpy as np\n"
                    "n_orders_a = np.int64(dag.count_topological_orders(A.graph))"
                ),
                count_orders_b_answer="n_orders_b = float(dag.count_topological_orders(B.graph))",
                makespan_a_answer=(
                    "makespan_a = np.float64(dag.critical_path(A.graph, A.durations).makespan)"
                ),
                critical_path_a_answer=(
                    "path_a = tuple(dag.critical_path(A.graph, A.durations).path)"
                ),
                slack_answer=(
                    "slack_a = np.int64(\n"
                    "    dag.critical_path(A.graph, A.durations).slack[P.slack_node]\n"
                    ")"
                ),
                critical_path_b_answer=(
                    "path_b = np.array(dag.critical_path(B.graph, B.durations).path)"
                ),
                spurious_slack_answer=lambda: (
                    f"slack_spurious = {float(_own('slack_spurious')):.1f}"
                ),
                spurious_makespan_answer=lambda: (
                    f"makespan_spurious = np.int32({_own('makespan_spurious')})"
                ),
                coordinated_wall_answer=(
                    "wall_coordinated = float(\n"
                    "    dag.list_schedule(coordinated, coordinated_durations, P.workers)\n"
                    "    .makespan\n"
                    ")"
                ),
                speedup_answer=lambda: (
                    f"speedup_b = np.float64({_own('speedup_b') * _own('wall_coordinated')})"
                    " / np.float64(wall_coordinated)"
                ),
                locked_answer=lambda: f"locked = np.float32({_own('locked')})",
                locked_coordinated_answer=lambda: (
                    f"locked_coordinated = {float(_own('locked_coordinated'))}"
                ),
            ),
            TRACE: _with(
                TRACE,
                blocked_late_answer=(
                    "from decompkit import dag\n"
                    "blocked_late = dag.descendants(A.graph, [P.failing])"
                ),
                blocked_early_answer=(
                    "early = scheduler.schedule(A.graph, A.durations, workers=P.workers,\n"
                    "                           step=trace.failing_step(P.failing_early))\n"
                    "blocked_early = sorted(early.blocked)"
                ),
                cancelled_stop_answer=(
                    "cancelled_stop = tuple(e.node for e in early.events.of_kind('cancel'))"
                ),
                done_drain_answer=(
                    "drained = scheduler.schedule(A.graph, A.durations, workers=P.workers,\n"
                    "    onfail='drain', step=trace.failing_step(P.failing_early))\n"
                    "done_drain = list(drained.done)"
                ),
                end_drain_answer="import numpy as np\nend_drain = np.float64(drained.makespan)",
                unrolled_nodes_answer=(
                    "first = scheduler.schedule(A.graph, A.durations, workers=P.workers,\n"
                    "                           step=trace.failing_step(P.failing))\n"
                    "repair = scheduler.unroll_failed_check(\n"
                    "    A.graph, first.out, P.failing, P.faulty, P.kappa_plan,\n"
                    "    durations=A.durations\n"
                    ")\n"
                    "new_nodes = [node for node in repair.graph if node not in A.graph]"
                ),
                repointed_edges_answer="report_preds = repair.graph[P.reader]",
                repaired_inputs_answer=(
                    "repaired_preds = list(repair.graph[repair.copies[P.faulty]])"
                ),
                repaired_makespan_answer=(
                    "end_repaired = float(scheduler.run_with_repair(\n"
                    "    A.graph, A.durations, workers=P.workers,\n"
                    "    step=trace.failing_step(P.failing),\n"
                    "    faulty={P.failing: P.faulty}, kappa_plan=P.kappa_plan).makespan)"
                ),
                unrolled_nodes_other_answer=(
                    "other = scheduler.unroll_failed_check(\n"
                    "    A.graph, first.out, P.failing, P.faulty_other, P.kappa_plan,\n"
                    "    durations=A.durations)\n"
                    "new_nodes_other = tuple(other.copies.values())"
                ),
                repairs_made_answer=(
                    "try:\n"
                    "    limited = scheduler.run_with_repair(\n"
                    "        A.graph, A.durations, workers=P.workers,\n"
                    "        step=trace.failing_step(P.failing, runs=P.red_runs),\n"
                    "        faulty={P.failing: P.faulty}, kappa_plan=P.kappa_plan)\n"
                    "except scheduler.RepairLimitError as error:\n"
                    "    limited = error.result\n"
                    "repairs_made = np.int64(len(limited.repairs))"
                ),
                gives_up_answer="end_gives_up = float(limited.makespan)",
            ),
        },
        {PLANS: set(), DAG: set(), TRACE: set()},
    ),
    # Every number below is typed in by hand for the lecture's own numbers: the id "lecture"
    # (decompkit.exercises.params.LECTURE) grades this folder against them.
    Case(
        "lecture",
        "different",
        {
            # A helper cell of the student's own; the placements are typed, the repaired plan
            # is written out as a new dict (depends_on in another order).
            PLANS: lambda: insert_after(
                submission(
                    PLANS,
                    {
                        "placement_rewoo_answer": (
                            "rewoo = placed('DAG', 'before execution', 'list order',\n"
                            "               'planner names the tool', 'none', 'none')"
                        ),
                        "placement_llmcompiler_answer": (
                            "llmcompiler = placed('dag', 'Streamed', 'parallel  ready  set',\n"
                            "                     'Planner Names The Tool', 'none', 'on-demand')"
                        ),
                        "placement_adaplanner_answer": (
                            "adaplanner = placed('code', 'before execution', 'code order',\n"
                            "                    'planner names the tool',\n"
                            "                    'deterministic assertion',\n"
                            "                    'Rewrite on a failed assertion')"
                        ),
                        "plan_problem_kinds_answer": (
                            "kinds_a = ('unknown_dependency', 'cycle', 'unknown_tool')"
                        ),
                        "plan_cycle_steps_answer": "cycle_b = ['s6', 's5', 's4', 's3']",
                        "rewoo_edges_answer": (
                            "rewoo_edges = {'E5': ['E1', 'E2', 'E4'], 'E4': {'E3'},\n"
                            "               'E3': ('E2', 'E1'), 'E2': set(), 'E1': ()}"
                        ),
                        "reads_unlisted_answer": "reads_unlisted = [('t6', 't3'), ('t5', 't4')]",
                        "listed_unread_answer": "listed_unread = (['t3', 't2'],)",
                        "repaired_plan_answer": (
                            "def step(sid, tool, args, *after):\n"
                            "    return {'depends_on': list(after), 'args': args, 'tool': tool,"
                            " 'id': sid}\n\n"
                            "fixed_plan = {'goal': plan_a['goal'], 'steps': [\n"
                            "    step('s1', 'search', {'query': 'GPU X price shop A'}),\n"
                            "    step('s2', 'fetch_page', {'url': '$1'}, 's1'),\n"
                            "    step('s3', 'summarise', {'text': '$2'}, 's2'),\n"
                            "    step('s4', 'compare', {'a': '$3', 'b': '$5'}, 's5', 's3'),\n"
                            "    step('s5', 'search', {'query': 'GPU X price shop B'}),\n"
                            "    step('s6', 'write_answer', {'draft': '$4'}, 's4'),\n"
                            "]}"
                        ),
                    },
                ),
                "placement_plan_and_execute_answer",
                "def placed(*choices, provenance='generated by the model'):\n"
                "    return dict(zip(architectures.DIMENSIONS, (*choices, provenance)))",
            ),
            DAG: lambda: insert_after(
                submission(
                    DAG,
                    {
                        "topological_order_answer": (
                            "order_a = ['read_spec', 'fetch_data', 'write_tests', 'write_code',"
                            " 'run_tests', 'report']"
                        ),
                        "ready_set_answer": "ready_now = ('write_code',)",
                        "count_orders_a_answer": "n_orders_a = 3",
                        "count_orders_b_answer": "n_orders_b = 3 * 3 * 2 * 1",
                        "makespan_a_answer": "makespan_a = 10.0",
                        "critical_path_a_answer": (
                            "path_a = ['read_spec', 'fetch_data', 'write_code', 'run_tests',"
                            " 'report']"
                        ),
                        "slack_answer": "slack_a = 6 - 1",
                        "critical_path_b_answer": "path_b = ['F', 'S', 'E', 'A', 'Y', 'V']",
                        "spurious_slack_answer": (
                            "slack_spurious = my_slack(A.with_edge(*A.spurious_edge), A.durations,"
                            " P.slack_node)"
                        ),
                        "spurious_makespan_answer": "makespan_spurious = 10",
                        "coordinated_wall_answer": "wall_coordinated = 22",
                        "speedup_answer": "speedup_b = 1.364",  # 30 / 22 to 4 digits
                        "locked_answer": "locked = 29",
                        "locked_coordinated_answer": "locked_coordinated = 33",
                    },
                ),
                "slack_answer",
                "def my_slack(graph, durations, node):\n"
                "    cp = dag.critical_path(graph, durations)\n"
                "    return cp.latest_start[node] - cp.earliest_start[node]",
            ),
            TRACE: lambda: insert_after(
                submission(
                    TRACE,
                    {
                        "blocked_late_answer": "blocked_late = {'report'}",
                        "blocked_early_answer": "blocked_early = cone(A.graph, P.failing_early)",
                        "cancelled_stop_answer": "cancelled_stop = ('fetch_data',)",
                        "done_drain_answer": (
                            "done_drain = ['read_spec', 'fetch_data', 'write_code']"
                        ),
                        "end_drain_answer": "end_drain = 8.0",
                        "unrolled_nodes_answer": 'new_nodes = ["write_code\'", "run_tests\'"]',
                        "repointed_edges_answer": 'report_preds = {"run_tests\'"}',
                        "repaired_inputs_answer": "repaired_preds = ['fetch_data']",
                        "repaired_makespan_answer": "end_repaired = 15.0",
                        "unrolled_nodes_other_answer": (
                            'new_nodes_other = {"fetch_data\'", "write_code\'", "run_tests\'"}'
                        ),
                        "repairs_made_answer": "repairs_made = 2.0",
                        "gives_up_answer": "end_gives_up = 19",
                    },
                ),
                "blocked_late_answer",
                "def cone(graph, node):\n"
                "    found, todo = set(), [node]\n"
                "    while todo:\n"
                "        here = todo.pop()\n"
                "        for task, before in graph.items():\n"
                "            if here in before and task not in found:\n"
                "                found.add(task)\n"
                "                todo.append(task)\n"
                "    return found",
            ),
        },
        {PLANS: set(), DAG: set(), TRACE: set()},
    ),
    Case(
        "library_warned",
        "different",
        # A correct answer whose conversion writes a warning to stderr while the hidden test
        # runs, as a library's DeprecationWarning would: it must not cost the point.
        {
            CHAIN: _with(
                CHAIN,
                chain_success_answer=(
                    "import sys\n"
                    "class Noisy(float):\n"
                    "    def __float__(self):\n"
                    "        print('UserWarning: a library warned', file=sys.stderr)\n"
                    "        return float.__float__(self)\n\n"
                    "p_chain = Noisy(P.p**P.n)"
                ),
            )
        },
        {CHAIN: set()},
    ),
    Case(
        "explore_stalls",
        "different",
        # Exploration cells are skipped when grading: one that would never return (a widget
        # waiting for a front end, say) must neither stall the batch nor cost a point.
        {CHAIN: lambda: _stall_explore_cells(submission(CHAIN))},
        {CHAIN: set()},
    ),
    Case(
        "different_loop",
        "different",
        {
            LOOP: _then(
                LOOP,
                # the student's own plan, typed in as a list and as fractions
                ready_now_answer=f"ready_now = {sorted(_own('ready_now', 'harness', LOOP_OWN))!r}",
                moves_answer="moves = {k: v.upper() for k, v in moves.items()}",
                progress_original_answer=f"progress_original = {_fraction('progress_original')}",
                progress_current_answer=(
                    "from fractions import Fraction\n"
                    f"progress_current = Fraction({_fraction('progress_current', ', ')})"
                ),
                refused_answer="refused = sorted(refused)",
                success_answer=(
                    "success = np.linalg.matrix_power(\n"
                    "    markov.transition_matrix(P.n, P.p, P.q), P.budget\n"
                    ")[0, P.n]"
                ),
                corrupted_answer="corrupted = float(np.float32(corrupted))",
                clustered_answer="clustered = ' Lower '",
                appended_cost_answer=(
                    "appended_cost = float(harness.appended_context_cost(P.T, P.a, P.L0))"
                ),
                cost_ratio_answer=(
                    "cost_ratio = np.float64(appended_cost) / P.T / P.L_star / P.L_star"
                ),
            )
        },
        {LOOP: set()},
    ),
    Case(
        "typed_classmate_id",
        "different",
        # The marked id cell names a classmate; the folder's id still decides the numbers, and
        # answers written as formulas of P are right for them.
        {CHAIN: lambda: _with_id_cell(submission(CHAIN), "solved")},
        {CHAIN: set()},
    ),
    # --- common wrong answers: each must lose exactly its own item (d = 1) -------------------
    Case(
        "copied_numbers",
        "wrong",
        # Every number typed in as worked out for a classmate's id earns nothing.
        {CHAIN: _typed_for("solved")},
        {CHAIN: _differing("copied_numbers", "solved")},
    ),
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
                check_helps_answer="other_helps = P.phi_other > P.d_other",
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
                success_no_audit_answer=(
                    "success_no_audit = markov.success_exact(P.n, P.p, P.q, P.budget)"
                ),
                grounded_answer="grounded = 1 - (1 - P.p) * (1 - P.q) * P.t",
                grounded_half_life_answer="grounded_half = np.log(2) / ((1 - P.p) * (1 - P.q))",
                min_budget_factor_answer="gamma_min = P.p",
                collapse_answer=(
                    "n_collapse = markov.collapse_horizon(P.p, P.q, P.budget_factor) - 5"
                ),
            )
        },
        {HORIZON: ALL},
    ),
    # Notebooks 3-5: each wrong line is appended to the solution's code (see _then), so the
    # helpers that later cells read stay defined and each mistake costs only its own item.
    Case(
        "wrong_planning",
        "wrong",
        {
            PLANS: _then(
                PLANS,
                # The published architecture placed, not the student's own version of it.
                placement_plan_and_execute_answer=(
                    "plan_and_execute = architectures.placement('Plan-and-Execute')"
                ),
                placement_llmcompiler_answer="llmcompiler = architectures.placement('LLMCompiler')",
                placement_adaplanner_answer=(
                    "adaplanner['step_verification'] = next(\n"
                    "    c for c in architectures.CHOICES['step_verification']\n"
                    "    if c != adaplanner['step_verification']\n"
                    ")"
                ),
                plan_problem_kinds_answer="kinds_a = set(sorted(kinds_a)[1:])",  # one kind missed
                # The answer step given every step it reads, directly or not.
                rewoo_edges_answer="rewoo_edges[list(rewoo_edges)[-1]] = list(rewoo_edges)[:-1]",
                # Valid, but the answer step no longer lists the comparison its draft cites.
                repaired_plan_answer="fixed_plan['steps'][-1]['depends_on'] = []",
            ),
            DAG: _then(
                DAG,
                topological_order_answer="order_a = order_a[::-1]",
                ready_set_answer="ready_now = set(P.running) | ready_now",
                count_orders_a_answer="import math\nn_orders_a = math.factorial(len(A.graph))",
                makespan_a_answer=(
                    "makespan_a = len(dag.critical_path(A.graph, A.durations).path)"
                ),
                slack_answer=(
                    "slack_a = cp.latest_start[P.slack_node] - cp.earliest_finish[P.slack_node]"
                ),
                speedup_answer=(
                    "speedup_b = wall_coordinated / dag.critical_path(B.graph, B.durations)"
                    ".serial_time"
                ),
                locked_answer=(
                    "locked = dag.list_schedule(B.graph, B.durations, P.workers).makespan"
                ),
            ),
            TRACE: _then(
                TRACE,
                blocked_late_answer="blocked_late = blocked_late | {P.failing}",
                cancelled_stop_answer="cancelled_stop = set()",
                end_drain_answer="end_drain = early.makespan",
                unrolled_nodes_answer='new_nodes = new_nodes | {P.reader + "\'"}',
                repaired_inputs_answer="repaired_preds = repaired_preds | {P.failing}",
                repairs_made_answer="repairs_made = len(limited.repairs) + 1",
            ),
        },
        {
            PLANS: {
                "placement_plan_and_execute_value",
                "placement_llmcompiler_value",
                "placement_adaplanner_value",
                "plan_problem_kinds_value",
                "rewoo_edges_value",
                "repaired_plan_value",
            },
            DAG: {
                "topological_order_value",
                "ready_set_value",
                "count_orders_a_value",
                "makespan_a_value",
                "slack_value",
                "speedup_value",
                "locked_value",
            },
            TRACE: {
                "blocked_late_value",
                "cancelled_stop_value",
                "end_drain_value",
                "unrolled_nodes_value",
                "repaired_inputs_value",
                "repairs_made_value",
            },
        },
    ),
    Case(
        "wrong_loop",
        "wrong",
        {
            LOOP: _then(
                LOOP,
                # a step that waits for an undone one; an illegal move called legal; an accepted
                # addition called refused (all of the student's own plan)
                ready_now_answer=f"ready_now = set(ready_now) | {{{_LOOP_WRONG['waiting']!r}}}",
                moves_answer=f"moves[{_LOOP_WRONG['illegal']!r}] = 'legal'",
                progress_current_answer="progress_current = revised.progress().original_fraction",
                refused_answer=f"refused = refused | {{{_LOOP_WRONG['added']!r}}}",
                corrupted_answer="corrupted = 1 - success",
                q_effective_answer="q_effective = P.q * P.persuasion",
                success_trace_reader_answer="success_trace_reader = P.p**P.n",
                clustered_answer="clustered = 'unchanged'",
                appended_cost_answer=(
                    "appended_cost = sum((P.L0 + P.a * t) ** 2 for t in range(1, P.T + 1))"
                ),
                # Upside down; and recomputed, so the wrong sum above does not spill into C2.
                cost_ratio_answer=(
                    "cost_ratio = P.T * P.L_star**2 / harness.appended_context_cost(P.T, P.a, P.L0)"
                ),
            )
        },
        {
            LOOP: {
                "ready_now_value",
                "moves_value",
                "progress_current_value",
                "refused_value",
                "corrupted_value",
                "q_effective_value",
                "success_trace_reader_value",
                "clustered_value",
                "appended_cost_value",
                "cost_ratio_value",
            }
        },
    ),
    Case(
        "wrong_planning_2",
        "wrong",
        {
            PLANS: _then(
                PLANS,
                placement_rewoo_answer=(
                    "rewoo['execution_order'] = ('list order' if rewoo['execution_order']\n"
                    "    == 'parallel ready set' else 'parallel ready set')"
                ),
                placement_adapt_answer="adapt['step_verification'] = 'none'",
                # A step that waits on the cycle counted as on it.
                plan_cycle_steps_answer=(
                    "cycle_b = cycle_b | {s['id'] for s in plan_b['steps']"
                    " if set(s['depends_on']) & cycle_b}"
                ),
                reads_unlisted_answer="reads_unlisted = {(b, a) for a, b in reads_unlisted}",
                listed_unread_answer=(  # the other kind of disagreement
                    "listed_unread = {p.steps for p in edge_contradictions(plan_d)\n"
                    "                 if p.kind == 'placeholder_without_dependency'}"
                ),
            ),
            DAG: _then(
                DAG,
                count_orders_b_answer="import math\nn_orders_b = math.factorial(len(B.fan_out))",
                critical_path_a_answer="path_a = path_a[::-1]",
                critical_path_b_answer="path_b = path_b[1:]",
                spurious_slack_answer=(
                    "slack_spurious = dag.critical_path(A.graph, A.durations).slack[P.slack_node]"
                ),
                spurious_makespan_answer="makespan_spurious = sum(A.durations.values())",
                coordinated_wall_answer=(
                    "wall_coordinated = dag.list_schedule(B.graph, B.durations, P.workers).makespan"
                ),
                # Recomputed, so that the wrong wall time above does not spill into D2.
                speedup_answer=(
                    "speedup_b = cp_b.serial_time / dag.list_schedule(\n"
                    "    coordinated, coordinated_durations, P.workers\n"
                    ").makespan"
                ),
                locked_coordinated_answer=(
                    "locked_coordinated = dag.list_schedule(\n"
                    "    coordinated, coordinated_durations, P.workers\n"
                    ").makespan"
                ),
            ),
            TRACE: _then(
                TRACE,
                blocked_early_answer="blocked_early = blocked_early | {P.failing_early}",
                done_drain_answer="done_drain = done_drain | {P.failing_early}",
                repointed_edges_answer="report_preds = {P.failing}",
                repaired_makespan_answer=(
                    "end_repaired = scheduler.schedule(A.graph, A.durations,"
                    " workers=P.workers).makespan"
                ),
                unrolled_nodes_other_answer=(
                    'new_nodes_other = new_nodes_other - {P.failing + "\'"}'
                ),
                gives_up_answer="end_gives_up = first.makespan",
            ),
        },
        {
            PLANS: {
                "placement_rewoo_value",
                "placement_adapt_value",
                "plan_cycle_steps_value",
                "reads_unlisted_value",
                "listed_unread_value",
            },
            DAG: {
                "count_orders_b_value",
                "critical_path_a_value",
                "critical_path_b_value",
                "spurious_slack_value",
                "spurious_makespan_value",
                "coordinated_wall_value",
                "locked_coordinated_value",
            },
            TRACE: {
                "blocked_early_value",
                "done_drain_value",
                "repointed_edges_value",
                "repaired_makespan_value",
                "unrolled_nodes_other_value",
                "gives_up_value",
            },
        },
    ),
    # --- hostile and broken submissions ----------------------------------------------------
    Case(
        "infinite_loop",
        "hostile",
        {CHAIN: _with(CHAIN, effective_rate_answer="while True:\n    pass")},
        {CHAIN: {"effective_rate_value"}},
        {CHAIN: "timeout"},
    ),
    Case(
        "kernel_death",
        "hostile",
        {
            CHAIN: _with(CHAIN, effective_rate_answer="import os\nos._exit(1)"),
            HORIZON: _solved(HORIZON),
        },
        {CHAIN: FAILED, HORIZON: set()},
        {CHAIN: "kernel_died"},
    ),
    Case(
        "system_exit",
        "hostile",
        {
            CHAIN: _with(
                CHAIN,
                half_life_answer="n_half = np.log(2) / -np.log(P.p_half)\nraise SystemExit(3)",
            )
        },
        {CHAIN: set()},
    ),
    Case(
        "output_flood",
        "hostile",
        {
            CHAIN: _with(
                CHAIN,
                half_life_answer=(
                    "n_half = np.log(2) / -np.log(P.p_half)\nprint('x' * 50_000_000)"
                ),
            )
        },
        {CHAIN: set()},
    ),
    Case(
        "deleted_test",
        "hostile",
        {
            CHAIN: lambda: remove_cell(
                submission(CHAIN, {"chain_success_answer": "p_chain = 0.5"}), "chain_success_value"
            )
        },
        {CHAIN: {"chain_success_value"}},
    ),
    Case(
        "edited_test",
        "hostile",
        {
            CHAIN: lambda: replace_source(
                submission(CHAIN, {"chain_success_answer": "p_chain = 0.5"}),
                "chain_success_value",
                "pass",
            )
        },
        {CHAIN: {"chain_success_value"}},
    ),
    Case(
        "rebinding",
        "hostile",
        {
            CHAIN: lambda: insert_after(
                submission(
                    CHAIN,
                    {"chain_success_answer": "p_chain = 0.5", "p_prime_answer": "p_prime = 0.5"},
                ),
                "chain_success_answer",
                "close = same_bool = same_choices = lambda *args, **kwargs: True\n"
                "close_ = expected_ = lambda *args, **kwargs: True\n"
                "params = lambda name: None\n"
                "rel_ = P_ = None\n"
                "AssertionError = type('Quiet', (Exception,), {})\n"
                "float = lambda value: 0.0",
            )
        },
        {CHAIN: {"chain_success_value", "p_prime_value"}},
    ),
    # Case 1 of the hardening: patch the modules the hidden tests import. In the kernel every
    # test then passes; the clean check judges the answers where no patch ran.
    Case(
        "patched_modules",
        "hostile",
        {
            CHAIN: lambda: insert_after(
                submission(
                    CHAIN,
                    {"chain_success_answer": "p_chain = 0.5", "p_prime_answer": "p_prime = 0.5"},
                ),
                "chain_success_answer",
                PATCH_MODULES,
            )
        },
        {CHAIN: {"chain_success_value", "p_prime_value"}},
    ),
    # Case 2: an input transformer turns every later test cell into `pass` in the kernel.
    Case(
        "input_transformer",
        "hostile",
        {
            CHAIN: lambda: insert_after(
                submission(
                    CHAIN,
                    {"chain_success_answer": "p_chain = 0.5", "p_prime_answer": "p_prime = 0.5"},
                ),
                "chain_success_answer",
                SILENCE_TESTS,
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
                    "            if (base / name).exists():\n"
                    "                (base / name).write_text('overwritten by a submission')\n"
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
        {CHAIN: "unreadable"},
    ),
]


def _agents_copied_cells(student: str = "copied_agents", classmate: str = "solved") -> set:
    """Cells of notebook 7 that :func:`_typed_for` types in for ``classmate`` (those binding
    numbers only) and whose answer differs from ``student``'s, the count of never-solved
    tasks included (a whole number, typed in too)."""
    _, bound = run(load(AGENTS), classmate)
    typed = {
        cell for cell, names in bound.items() if names and all(_number(v) for v in names.values())
    }
    differing = _differing(student, classmate, "agents")
    mine = EXERCISES["agents"].key(params("agents", student))
    theirs = EXERCISES["agents"].key(params("agents", classmate))
    if mine["never_solved"] != theirs["never_solved"]:
        differing.add("never_solved_value")
    return {cell for cell in differing if cell.replace("_value", "_answer") in typed}


CASES += [
    Case(
        "different_agents",
        "different",
        {
            AGENTS: _with(
                AGENTS,
                # counts instead of means, the formula by hand, NumPy scalars and a Fraction
                p_hat_answer="p_hat = int(tasks.successes.sum()) / int(tasks.trials.sum())",
                pass_k_answer=(
                    "import math\n"
                    "pass_k = sum(math.comb(int(c), P.k) / math.comb(4, P.k)"
                    " for c in tasks.successes) / len(tasks)"
                ),
                p_to_k_answer="from fractions import Fraction\np_to_k = Fraction(p_hat) ** P.k",
                never_solved_answer="never = np.int64(np.sum(~outcomes.any(axis=1)))",
                start_up_holds_answer="start_up = np.bool_(aic_gap > 2)",
                checked_success_answer=(
                    "total = 0.0\n"
                    "for steps in n:\n"
                    "    total += a_start * (p_step * (1 + (1 - p_step) * P.d)) ** steps\n"
                    "p_checked = total / len(n)"
                ),
            )
        },
        {AGENTS: set()},
    ),
    Case(
        "wrong_agents",
        "wrong",
        {
            AGENTS: _then(
                AGENTS,
                # one shared rate for pass^k; the tasks always solved counted as never solved;
                # the effective rate of a task of mean length; a retry that is always right
                pass_k_answer="pass_k = p_hat**P.k",
                never_solved_answer="never = int((tasks.successes == tasks.trials).sum())",
                p_plain_answer="p_plain = (wins.sum() / trials.sum()) ** (1 / n.mean())",
                checked_success_answer=(
                    "p_checked = np.mean(a_start * (p_step + (1 - p_step) * P.d) ** n)"
                ),
            )
        },
        {
            AGENTS: {
                "pass_k_value",
                "never_solved_value",
                "p_plain_value",
                "checked_success_value",
            }
        },
    ),
    Case(
        "copied_agents",
        "wrong",
        # Every number typed in as worked out for a classmate's sample earns nothing.
        {AGENTS: _typed_for("solved", AGENTS)},
        {AGENTS: _agents_copied_cells()},
    ),
]


def _scramble_counts(nb):
    """Execution counts as if the cells had been run bottom-up (they are re-run top-down)."""
    code = [c for c in nb.cells if c.cell_type == "code"]
    for count, cell in enumerate(reversed(code), start=1):
        cell.execution_count = count
    return nb


def _stall_explore_cells(nb):
    """Every cell tagged ``explore`` replaced by one that sleeps for an hour."""
    for cell in nb.cells:
        if "explore" in cell.metadata.get("tags", []):
            cell.source = "import time\n\ntime.sleep(3600)"
    return nb
