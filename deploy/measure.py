#!/usr/bin/env python3
"""Measure what one student costs the hub: server start-up time and memory in use.

    sudo python3 deploy/measure.py [--starts 3]

Starts the course's hub (deploy/hub.py) on a free localhost port with one throwaway student
(a Unix user with a random name, removed at the end), then:

1. starts and stops the student's server ``--starts`` times through the hub's REST API and
   prints each start-up time (request to "ready") and their median;
2. with the server up, runs every code cell of the solutions of notebooks 01 and 02 in one
   kernel of that server (as the student, so with the student's numbers), and prints the
   resident memory (RSS) of the server alone, of the kernel, and of all the student's
   processes together, read from /proc.

Figures are for sizing (docs/deploy.md); they vary with the machine and the libraries.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import secrets
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DEPLOY = Path(__file__).resolve().parent
NOTEBOOKS = ["01-chain-reliability", "02-long-horizons"]


def _load(name: str):
    spec = importlib.util.spec_from_file_location(f"decompkit_deploy_{name}", DEPLOY / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _rss_mib(user: str) -> dict[str, float]:
    """Resident memory of ``user``'s processes in MiB, by command kind and in total."""
    found = {"server": 0.0, "kernel": 0.0, "total": 0.0}
    listing = subprocess.run(
        ["ps", "-u", user, "-o", "rss=,args="], capture_output=True, text=True
    ).stdout
    for line in listing.splitlines():
        rss, _, args = line.strip().partition(" ")
        mib = int(rss) / 1024
        found["total"] += mib
        if "ipykernel" in args:
            found["kernel"] += mib
        elif "jupyterhub-singleuser" in args:
            found["server"] += mib
    return found


def _solution_code(notebook: str) -> str:
    cells = json.loads((DEPLOY.parent / "solutions" / "decomp" / f"{notebook}.ipynb").read_text())
    return "\n\n".join(
        "".join(cell["source"]) for cell in cells["cells"] if cell["cell_type"] == "code"
    )


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--starts", type=int, default=3, help="server starts to time")
    args = parser.parse_args(argv)
    if os.geteuid() != 0 or not shutil.which("useradd"):
        print("measure.py needs root and useradd: it creates a Unix user", file=sys.stderr)
        return 1
    hub_module, client_module = _load("hub"), _load("hub_client")
    bindir = hub_module.ensure_environment()
    if importlib.util.find_spec("tornado") is None:  # the kernel websocket needs tornado
        os.execv(bindir / "python", [str(bindir / "python"), __file__, *argv])
    student = f"dkms{secrets.token_hex(3)}"
    temp = Path(tempfile.mkdtemp(prefix="decompkit-measure-"))
    os.chmod(temp, 0o755)
    process = None
    try:
        hub_module.ensure_user(student)
        exchange = hub_module.make_exchange(temp / "exchange")
        layout = hub_module.HubLayout(
            temp / "hub", exchange=exchange, instructor=f"{student}i", students=[student]
        )
        with open(temp / "hub.log", "w") as log:
            process = hub_module.start_hub(layout, course=temp / "course", log=log)
            hub = client_module.HubClient(hub_module, layout, temp / "course", bindir)
            hub.log_in(student)
            starts = []
            for attempt in range(args.starts):
                began = time.monotonic()
                hub.start_servers([student])
                starts.append(time.monotonic() - began)
                if attempt < args.starts - 1:
                    hub.request("DELETE", f"/hub/api/users/{student}/server", hub.tokens[student])
                    while hub.admin("GET", f"/users/{student}").get("servers"):
                        time.sleep(0.2)
            print(f"server start-up, s: {', '.join(f'{s:.1f}' for s in starts)}")
            print(f"server start-up median, s: {statistics.median(starts):.1f}")
            idle = _rss_mib(student)
            print(f"RSS idle server, MiB: {idle['server']:.0f}")
            kernel = hub.server(student, "POST", "/api/kernels", {"name": "python3"})
            for notebook in NOTEBOOKS:
                began = time.monotonic()
                hub.run_in_kernel(student, kernel["id"], _solution_code(notebook), timeout=300)
                print(f"ran {notebook} in the student's kernel: {time.monotonic() - began:.1f} s")
            used = _rss_mib(student)
            print(
                f"RSS after {' + '.join(NOTEBOOKS)}, MiB: server {used['server']:.0f}, "
                f"kernel {used['kernel']:.0f}, all the student's processes {used['total']:.0f}"
            )
            hub.server(student, "DELETE", f"/api/kernels/{kernel['id']}")
    finally:
        if process is not None:
            hub_module.stop_hub(process)
        hub_module.remove_user(student)
        shutil.rmtree(temp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
