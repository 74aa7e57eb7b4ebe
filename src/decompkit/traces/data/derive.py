"""Derive ``tau_bench.csv`` from tau-bench's recorded runs (run by hand, never at run time).

Usage, from the repository's root, with a clone (or bare mirror) of
https://github.com/sierra-research/tau-bench::

    python src/decompkit/traces/data/derive.py --git-dir /path/to/tau-bench/.git

It reads every ``historical_trajectories/<model>-<domain>.json`` present at the clone's HEAD
(a file stored as a Git LFS pointer or absent from a partial mirror is skipped and named) and
writes one row per task and trial: the file, the model, the domain, the task id, the trial,
the number of ground-truth actions of the task, the agent's tool calls in that trial and the
reward (1.0 success, 0.0 failure). The README beside the data names the commit used.
"""

from __future__ import annotations

import argparse
import csv
import json
import subprocess
from pathlib import Path

HERE = Path(__file__).resolve().parent
FOLDER = "historical_trajectories"
COLUMNS = (
    "source",
    "model",
    "domain",
    "task_id",
    "trial",
    "n_actions",
    "n_tool_calls",
    "reward",
)


def _git(git_dir: str, *args: str) -> str:
    return subprocess.run(
        ["git", f"--git-dir={git_dir}", *args], check=True, capture_output=True, text=True
    ).stdout


def rows_of(name: str, records: list) -> list[dict]:
    """One row per recorded run of the file ``name`` (``gpt-4o-airline.json``)."""
    model, domain = name.removesuffix(".json").rsplit("-", 1)
    rows = []
    for record in records:
        task = record["info"]["task"]
        calls = sum(
            len(m.get("tool_calls") or []) for m in record["traj"] if m.get("role") == "assistant"
        )
        reward = float(record["reward"])
        if reward not in (0.0, 1.0):
            raise ValueError(f"reward must be 0 or 1, got {reward!r} in {name}")
        rows.append(
            {
                "source": f"{FOLDER}/{name}",
                "model": model,
                "domain": domain,
                "task_id": int(record["task_id"]),
                "trial": int(record["trial"]),
                "n_actions": len(task["actions"]),
                "n_tool_calls": calls,
                "reward": int(reward),
            }
        )
    return sorted(rows, key=lambda r: (r["source"], r["task_id"], r["trial"]))


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--git-dir", required=True, help="tau-bench's git directory")
    parser.add_argument("--out", default=str(HERE / "tau_bench.csv"))
    args = parser.parse_args(argv)
    commit = _git(args.git_dir, "rev-parse", "HEAD").strip()
    names = _git(args.git_dir, "ls-tree", "--name-only", f"HEAD:{FOLDER}").split()
    rows = []
    for name in sorted(n for n in names if n.endswith(".json")):
        try:
            text = _git(args.git_dir, "show", f"HEAD:{FOLDER}/{name}")
            records = json.loads(text)
        except (subprocess.CalledProcessError, json.JSONDecodeError):
            print(f"skipped {name}: not readable at {commit} (absent or an LFS pointer)")
            continue
        rows.extend(rows_of(name, records))
        print(f"read {name}: {len(records)} runs")
    with open(args.out, "w", newline="", encoding="utf-8") as out:
        writer = csv.DictWriter(out, fieldnames=COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    print(f"wrote {len(rows)} rows to {args.out} from commit {commit}")


if __name__ == "__main__":
    main()
