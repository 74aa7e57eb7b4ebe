"""Benchmark decompkit.harness.simulate against references measured in the same run.

Run from the repository root:

    PYTHONPATH=src python bench/bench_harness.py          # full run (about ten seconds)
    PYTHONPATH=src python bench/bench_harness.py --quick  # smoke run, a few seconds

Workload: 10,000 runs of the loop at n = 50, p = 0.95, q = 0.5, B = 100 (the chain gives
0.273). Compared, medians over interleaved repeats:

1. a textbook per-run Python loop (each run stepped round by round with ``random.random``,
   stopped as soon as it finishes or is corrupted), timed on fewer runs and scaled to 10,000;
2. ``markov.success_monte_carlo`` with 10,000 trials, the chain's own vectorised simulation
   (one uniform per live run and round, as here, but no outcome kinds and no switches).

Also printed: ``simulate`` with the clustered-errors switch and the object-level
``run_loop`` (per run, scaled), for scale. Target for ``simulate``: tens of milliseconds.
The textbook loop stops each run as soon as its fate is sealed: at q = 0.5 a run lasts 29
rounds on average (``markov.expected_rounds(50, 0.95, 0.5)``), most of them ending corrupted.
"""

from __future__ import annotations

import argparse
import random
import statistics
import timeit

import numpy as np

from decompkit import harness, markov

N, P, Q, BUDGET, RUNS = 50, 0.95, 0.5, 100, 10_000


def textbook_loop(n, p, q, budget, runs, seed):
    """One run at a time: each round, is the result right? If not, is it caught?"""
    rng = random.Random(seed)
    successes = 0
    for _ in range(runs):
        done = 0
        for _ in range(budget):
            if rng.random() < p:
                done += 1
                if done == n:
                    successes += 1
                    break
            elif rng.random() >= q:
                break  # missed: the state is corrupted, the run cannot succeed
    return successes / runs


def side_by_side(funcs, repeat):
    """Median seconds per call of each function, their calls interleaved."""
    times = {name: [] for name in funcs}
    for _ in range(repeat):
        for name, (func, number) in funcs.items():
            times[name].append(timeit.timeit(func, number=number) / number)
    return {name: statistics.median(t) for name, t in times.items()}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smoke run in a few seconds")
    args = parser.parse_args(argv)
    if args.quick:
        print("--quick: a smoke run; its timings are not the benchmark")
    repeat = 3 if args.quick else 15
    slow_runs = 200 if args.quick else 1000  # the per-run references are scaled to RUNS

    def simulate():
        return harness.simulate(N, P, Q, BUDGET, RUNS, seed=1).estimate

    def clustered():
        return harness.simulate(N, P, Q, BUDGET, RUNS, seed=1, correlated=True).estimate

    def chain_mc():
        return markov.success_monte_carlo(N, P, Q, BUDGET, trials=RUNS, seed=1).estimate

    def textbook():
        return textbook_loop(N, P, Q, BUDGET, slow_runs, seed=1)

    def objects():
        rng = np.random.default_rng(1)
        return sum(harness.run_loop(N, P, Q, BUDGET, seed=rng).success for _ in range(slow_runs))

    simulate()  # warm-up
    t = side_by_side(
        {
            "simulate": (simulate, 5),
            "clustered": (clustered, 3),
            "chain_mc": (chain_mc, 5),
            "textbook": (textbook, 1),
            "objects": (objects, 1),
        },
        repeat,
    )
    scale = RUNS / slow_runs
    textbook_10k, objects_10k = t["textbook"] * scale, t["objects"] * scale
    exact = markov.success_exact(N, P, Q, BUDGET)
    print(f"{RUNS:,} runs, n = {N}, p = {P}, q = {Q}, B = {BUDGET}; exact success {exact:.4f}")
    rows = [
        ("simulate", t["simulate"], f"estimate {simulate():.4f}  (target: tens of ms)"),
        ("simulate, clustered errors", t["clustered"], f"estimate {clustered():.4f}"),
        ("markov.success_monte_carlo", t["chain_mc"], f"estimate {chain_mc():.4f}"),
        ("textbook Python loop (scaled)", textbook_10k, f"({slow_runs:,} runs measured)"),
        ("run_loop, object level (scaled)", objects_10k, f"({slow_runs:,} runs measured)"),
    ]
    for name, seconds, note in rows:
        print(f"  {name:34s}{seconds * 1e3:10.2f} ms  {note}")
    print(f"  ratio textbook loop / simulate    {textbook_10k / t['simulate']:10.1f}x")
    print(f"  ratio simulate / success_monte_carlo {t['simulate'] / t['chain_mc']:7.2f}x")


if __name__ == "__main__":
    main()
