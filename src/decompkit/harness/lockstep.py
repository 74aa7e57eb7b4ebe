"""The lockstep engine of :func:`decompkit.harness.simulate` (the benchmark's fast path).

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
    successes = np.where(n == 0, runs, 0).astype(np.int64)  # done before the first round
    corrupted = np.zeros(size, dtype=np.int64)
    out_of_budget = np.where(budget < n, runs, 0).astype(np.int64)
    playing = (n > 0) & (budget >= n)
    if tables is None:
        # p = 0 never advances: each of the budget - n + 1 rounds before the run is hopeless
        # corrupts it with 1 - q, so it survives them all with q^(budget - n + 1).
        for i in np.flatnonzero(playing & (p == 0.0)):
            intact = np.power(q[i], budget[i] - n[i] + 1.0)
            corrupted[i] = np.count_nonzero(rng.random(runs) >= intact)
            out_of_budget[i] = runs - corrupted[i]
        live = np.flatnonzero(playing & (p > 0.0))
    else:
        live = np.flatnonzero(playing)
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
        subtasks = np.arange(width) < n[:, None]
        may_stick = bool(((tables[0] == 0.0) | (tables[1] == 0.0))[subtasks].any())
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
            if may_stick:
                stuck = _settle_stuck(
                    alive, done, retrying, base, first, retry, t, need, rounds, q_run, rng
                )
                if stuck is not None:
                    settled, lost_later = stuck
                    if single:
                        corrupted[idx] += np.count_nonzero(lost_later)
                        out_of_budget[idx] += np.count_nonzero(settled & ~lost_later)
                    else:
                        corrupted += np.bincount(point[lost_later], minlength=size)
                        out_of_budget += np.bincount(point[settled & ~lost_later], minlength=size)
                    alive &= ~settled
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


def _settle_stuck(alive, done, retrying, base, first, retry, t, need, rounds, q, rng):
    """Settle at once the live runs whose next attempts all have rate 0.

    Such a run never advances again: each round until it is hopeless corrupts it with
    ``1 - q``, so one uniform decides corrupted (``u >= q**m`` for the ``m`` rounds left)
    against out of budget. Returns ``(settled, corrupted)`` masks, or None if no run is stuck.
    """
    cell = base + np.minimum(done, need - 1)  # finished runs point past their table row
    rate = np.where(retrying, retry[cell], first[cell])
    settled = alive & (rate == 0.0)
    if not settled.any():
        return None
    m = rounds - t - (need - done) + 1  # rounds still to be played before it is hopeless
    intact = np.power(q, m)  # an array: m is one number per run
    lost = np.zeros_like(settled)
    lost[settled] = rng.random(np.count_nonzero(settled)) >= intact[settled]
    return settled, lost
