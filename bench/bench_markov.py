"""Benchmark decompkit.markov against textbook references measured in the same run.

Run from the repository root:

    PYTHONPATH=src python bench/bench_markov.py          # full run (about half a minute)
    PYTHONPATH=src python bench/bench_markov.py --quick  # smoke run, a few seconds

Three comparisons, medians over ``timeit.repeat`` (compared runs interleaved):

1. ``success_exact`` vs ``success_matrix_power`` on the lecture's reference figure
   (n = 5, 10, ..., 200 for q in {0, 0.5, 0.9, 1}, B = 2n, plus a 21-point q sweep at n = 50);
   target >= 100x, results equal to 1e-12.
2. One slider update of the q/n explorer (success against n = 5..1000 for 4 q values, a
   101-point q sweep at n = 1000, the grounded-survival curves); target < 5 ms.
3. ``success_monte_carlo`` (one uniform per live run and round, finished runs retired) vs the
   plain simulation below (two uniforms per round, every run stepped every round) at n = 50,
   20,000 runs; target >= 3x with the same distribution.

The matrix method spends its time in BLAS; on a shared machine its threads fight other work,
so prefix ``OPENBLAS_NUM_THREADS=1`` for a steadier ratio (it is then the smaller one).
"""

from __future__ import annotations

import argparse
import statistics
import time
import timeit

import numpy as np

from decompkit import markov

P = 0.95
QS = np.array([0.0, 0.5, 0.9, 1.0])


def plain_monte_carlo(n, p, q, budget, trials, seed):
    """Textbook simulation: two uniforms per round (advance? caught?), all runs every round."""
    rng = np.random.default_rng(seed)
    done = np.zeros(trials, dtype=np.int64)
    grounded = np.ones(trials, dtype=bool)
    for _ in range(budget):
        correct = rng.random(trials) < p
        caught = rng.random(trials) < q
        active = grounded & (done < n)
        done += active & correct
        grounded &= ~(active & ~correct & ~caught)
    return np.count_nonzero(grounded & (done >= n)) / trials


def median_seconds(func, number, repeat):
    """Median time of one call over ``repeat`` runs of ``number`` calls."""
    return statistics.median(timeit.repeat(func, number=number, repeat=repeat)) / number


def side_by_side(fast, reference, number, repeat, reference_number=None):
    """Median times of one call of each, their runs interleaved so load hits both alike."""
    reference_number = number if reference_number is None else reference_number
    t_fast, t_reference = [], []
    for _ in range(repeat):
        t_fast += timeit.repeat(fast, number=number, repeat=1)
        t_reference += timeit.repeat(reference, number=reference_number, repeat=1)
    return (
        statistics.median(t_fast) / number,
        statistics.median(t_reference) / reference_number,
    )


def bench_reference_figure(quick):
    ns = np.arange(5, 105 if quick else 205, 5)  # the smoke run stops at n = 100
    sweep = np.linspace(0.0, 1.0, 21)

    def exact():
        return (
            markov.success_exact(ns[None, :], P, QS[:, None], 2 * ns),
            markov.success_exact(50, P, sweep, 100),
        )

    def matrix():
        return (
            markov.success_matrix_power(ns[None, :], P, QS[:, None], 2 * ns),
            markov.success_matrix_power(50, P, sweep, 100),
        )

    reference = matrix()
    # The matrix method is slow: a few runs of one call are enough for its median.
    t_exact, t_matrix = side_by_side(exact, matrix, 20, 1 if quick else 7, reference_number=1)
    diff = max(np.abs(a - b).max() for a, b in zip(exact(), reference, strict=True))
    print(f"1. reference figure: {4 * ns.size} points of success vs n (n <= {ns[-1]}),")
    print("   plus a 21-point q sweep at n = 50")
    print(f"   success_matrix_power  {t_matrix * 1e3:9.2f} ms")
    print(f"   success_exact         {t_exact * 1e3:9.3f} ms")
    print(f"   ratio                 {t_matrix / t_exact:9.0f}x   (target >= 100x)")
    print(f"   max |difference|      {diff:9.1e}   (target <= 1e-12)")


def bench_slider_update(repeat, n_max):
    ns = np.arange(5, n_max + 5, 5)
    sweep = np.linspace(0.0, 1.0, 101)
    t = np.arange(2 * n_max + 1)

    def update():
        return (
            markov.success_exact(ns[None, :], P, QS[:, None], 2 * ns),
            markov.success_exact(n_max, P, sweep, 2 * n_max),
            markov.grounded_survival(t[None, :], P, QS[:, None]),
        )

    t_update = median_seconds(update, number=10, repeat=repeat)
    # CPU time of this process: what the update costs when other work shares the cores.
    cpu = statistics.median(
        timeit.repeat(update, number=10, repeat=repeat, timer=time.process_time)
    )
    print(f"2. slider update at n <= {n_max}: {4 * ns.size} points vs n, 101-point q sweep,")
    print(f"   {4 * t.size} survival values")
    print(f"   compute per update    {t_update * 1e3:9.3f} ms  (target < 5 ms)")
    print(f"   CPU time per update   {cpu / 10 * 1e3:9.3f} ms")


def bench_monte_carlo(repeat, trials):
    n, budget = 50, 100
    for q in (0.5, 0.9):

        def fast(q=q):
            return markov.success_monte_carlo(n, P, q, budget, trials=trials, seed=1).estimate

        def plain(q=q):
            return plain_monte_carlo(n, P, q, budget, trials, seed=1)

        t_fast, t_plain = side_by_side(fast, plain, number=3, repeat=repeat)
        exact = markov.success_exact(n, P, q, budget)
        print(f"3. Monte Carlo, n = {n}, B = {budget}, p = {P}, q = {q}, {trials:,} runs")
        print(f"   plain (2 uniforms, all runs)   {t_plain * 1e3:8.2f} ms  estimate {plain():.4f}")
        print(f"   success_monte_carlo            {t_fast * 1e3:8.2f} ms  estimate {fast():.4f}")
        print(f"   ratio                          {t_plain / t_fast:8.1f}x   (target >= 3x)")
        print(f"   exact                                      value    {exact:.4f}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smoke run in a few seconds")
    args = parser.parse_args(argv)
    repeat = 2 if args.quick else 15
    if args.quick:
        print("--quick: a smoke run on small workloads; its timings are not the benchmark")
    bench_reference_figure(args.quick)
    bench_slider_update(repeat, n_max=1000)
    bench_monte_carlo(repeat, trials=2_000 if args.quick else 20_000)


if __name__ == "__main__":
    main()
