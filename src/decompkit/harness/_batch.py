"""The vectorised engine of :func:`decompkit.harness.simulate` (the benchmark's fast path).

All live runs step together, one uniform per run and round; a run retires the round its
outcome is sealed, so the work is the rounds actually lived. One point is specialised (its
parameters stay scalars and no point index is kept), which is what the benchmark measures.
"""

from __future__ import annotations

import numpy as np

__all__ = ["simulate_flat"]


def simulate_flat(n, p, q, budget, tables, runs, rng):
    """Outcome counts per point for validated 1-d arrays (``tables`` None: independent)."""
    size = n.size
    successes = np.zeros(size, dtype=np.int64)
    corrupted = np.zeros(size, dtype=np.int64)
    out_of_budget = np.where(budget < n, runs, 0).astype(np.int64)
    live = np.flatnonzero(budget >= n)
    if live.size == 0:
        return successes, corrupted, out_of_budget
    single = live.size == 1
    if single:
        # One point: per-run parameters are scalars and no point index is needed.
        idx = int(live[0])
        point = None
        need, rounds, p_run, q_run = int(n[idx]), int(budget[idx]), p[idx], q[idx]
        size_live = runs
    else:
        point = np.repeat(live, runs)
        need, rounds, p_run, q_run = n[point], budget[point], p[point], q[point]
        size_live = point.size
    correlated = tables is not None
    if correlated:
        width = tables[0].shape[1]
        first, retry = tables[0].ravel(), tables[1].ravel()
        base = idx * width if single else point * width
        retrying = np.zeros(size_live, dtype=bool)
    done = np.zeros(size_live, dtype=np.int64)
    slack = int((budget - n)[live].min())  # no run is hopeless before round slack + 1
    t = 0
    while done.size:
        t += 1
        u = rng.random(done.size)
        if correlated:
            cell = base + done
            a = np.where(retrying, retry[cell], first[cell])
        else:
            a = p_run
        # q = 1 must never corrupt: a + (1 - a) may round to just below 1.
        keep = np.where(q_run == 1.0, 1.0, a + (1.0 - a) * q_run)
        advanced = u < a
        lost = u >= keep
        done += advanced
        finished = done == need
        alive = ~(lost | finished)
        hopeless = None
        if t > slack:
            hopeless = alive & (need - done > rounds - t)
            alive &= ~hopeless
        if single:
            successes[idx] += np.count_nonzero(finished)
            corrupted[idx] += np.count_nonzero(lost)
            if hopeless is not None:
                out_of_budget[idx] += np.count_nonzero(hopeless)
        else:
            successes += np.bincount(point[finished], minlength=size)
            corrupted += np.bincount(point[lost], minlength=size)
            if hopeless is not None:
                out_of_budget += np.bincount(point[hopeless], minlength=size)
        if correlated:
            retrying = ~advanced  # a caught error: the next round retries this subtask
        if alive.all():
            continue
        done = done[alive]
        if correlated:
            retrying = retrying[alive]
            if not single:
                base = base[alive]
        if not single:
            point, need, rounds = point[alive], need[alive], rounds[alive]
            p_run, q_run = p_run[alive], q_run[alive]
    return successes, corrupted, out_of_budget
