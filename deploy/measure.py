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

    sudo python3 deploy/measure.py --exchange 60

measures the ngshare exchange service instead (deploy/ngshare_service.py): starts ngshare
and a hub that registers it, enrols that many students (hub users with tokens, no
servers), releases the six notebooks of notebooks/decomp/, and times the class fetching
them all at once, submitting all at once (each the six notebooks), and the instructor
collecting every submission one by one as ngshare-exchange does, then prints the
service's resident memory and what it stored on disk.

Figures are for sizing (docs/deploy.md); they vary with the machine and the libraries.
"""

from __future__ import annotations

import argparse
import base64
import concurrent.futures
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
import urllib.error
import urllib.parse
import urllib.request
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


def _call(url: str, token: str, method: str = "GET", data: dict | None = None) -> dict:
    """One ngshare request; returns its JSON answer (raises on an HTTP error or a failure)."""
    body = urllib.parse.urlencode(data).encode() if data is not None else None
    request = urllib.request.Request(
        url, data=body, method=method, headers={"Authorization": f"token {token}"}
    )
    with urllib.request.urlopen(request, timeout=300) as answer:
        reply = json.loads(answer.read())
    if not reply.get("success"):
        raise RuntimeError(f"{method} {url}: {reply}")
    return reply


def _timed_all(jobs, workers: int) -> tuple[float, list[float]]:
    """Run every job (a callable) on ``workers`` threads; wall time and each job's time."""

    def timed(job):
        began = time.monotonic()
        job()
        return time.monotonic() - began

    began = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(workers) as pool:
        each = list(pool.map(timed, jobs))
    return time.monotonic() - began, each


def _spread(each: list[float]) -> str:
    ordered = sorted(each)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return f"median {statistics.median(ordered):.2f} s, 95th percentile {p95:.2f} s"


def measure_exchange(students: int) -> int:
    """Time the ngshare service under a class fetching, submitting and being collected."""
    hub_module, ngshare = _load("hub"), _load("ngshare_service")
    bindir = hub_module.ensure_environment()
    service_python = ngshare.ensure_service_environment(
        hub_module.PREFIX, hub_module._base_python()
    )
    suffix = secrets.token_hex(3)
    instructor = f"dkmi{suffix}"
    names = [f"dkms{suffix}{i:03d}" for i in range(students)]
    temp = Path(tempfile.mkdtemp(prefix="decompkit-measure-"))
    os.chmod(temp, 0o755)
    hub = service = None
    try:
        layout = hub_module.HubLayout(
            temp / "hub", exchange=None, instructor=instructor, students=names
        )
        port = hub_module.free_port()
        token = secrets.token_hex(32)
        with open(temp / "ngshare.log", "w") as service_log, open(temp / "hub.log", "w") as log:
            service = ngshare.start_service(
                service_python,
                state=temp / "ngshare",
                port=port,
                hub_api_url=f"http://127.0.0.1:{layout.hub_port}/hub/api",
                token=token,
                admins=[instructor],
                log=service_log,
            )
            (temp / "pods" / "disks").mkdir(parents=True)
            hub = hub_module.start_hub(
                layout,
                course=temp / "course",
                log=log,
                config=DEPLOY / "jupyterhub_pods_config.py",
                extra_env={
                    "DECOMPKIT_HUB_PODS": str(temp / "pods"),
                    "DECOMPKIT_HUB_POD_UID": "65534",
                    "DECOMPKIT_HUB_POD_GID": "65534",
                    "DECOMPKIT_HUB_POD_USER": "nobody",
                    "DECOMPKIT_HUB_NGSHARE_URL": f"http://127.0.0.1:{port}",
                    "DECOMPKIT_HUB_NGSHARE_TOKEN": token,
                    "DECOMPKIT_HUB_EXCHANGE_CLIENT": str(temp),
                },
                exchange_lines="\n",
            )
            client = _load("hub_client").HubClient(hub_module, layout, temp / "course", bindir)
            tokens = {user: client.log_in(user) for user in [instructor, *names]}
            api = f"http://127.0.0.1:{port}/services/ngshare"
            course = f"{hub_module.COURSE_ID}/{hub_module.COURSE_ID}"
            _call(
                f"{api}/course/{hub_module.COURSE_ID}",
                tokens[instructor],
                "POST",
                {"instructors": json.dumps([instructor])},
            )
            roster = [
                {"username": n, "first_name": "S", "last_name": n, "email": f"{n}@example.edu"}
                for n in names
            ]
            _call(
                f"{api}/students/{hub_module.COURSE_ID}",
                tokens[instructor],
                "POST",
                {"students": json.dumps(roster)},
            )
            released = sorted((DEPLOY.parent / "notebooks" / "decomp").glob("*.ipynb"))
            files = json.dumps(
                [
                    {"path": p.name, "content": base64.b64encode(p.read_bytes()).decode()}
                    for p in released
                ]
            )
            size = sum(p.stat().st_size for p in released) / 1024
            _call(f"{api}/assignment/{course}", tokens[instructor], "POST", {"files": files})
            print(f"released {len(released)} notebooks, {size:.0f} KiB, to {students} students")
            workers = min(students, 32)
            wall, each = _timed_all(
                [lambda n=n: _call(f"{api}/assignment/{course}", tokens[n]) for n in names],
                workers,
            )
            print(
                f"fetch, all at once ({workers} at a time): {wall:.1f} s for the class; "
                f"per student {_spread(each)}"
            )
            wall, each = _timed_all(
                [
                    lambda n=n: _call(
                        f"{api}/submission/{course}", tokens[n], "POST", {"files": files}
                    )
                    for n in names
                ],
                workers,
            )
            print(
                f"submit, all at once ({workers} at a time): {wall:.1f} s for the class; "
                f"per student {_spread(each)}"
            )
            began = time.monotonic()
            listed = _call(f"{api}/submissions/{course}", tokens[instructor])["submissions"]
            for entry in listed:
                _call(f"{api}/submission/{course}/{entry['student_id']}", tokens[instructor])
            wall = time.monotonic() - began
            print(
                f"collect {len(listed)} submissions one by one: {wall:.1f} s "
                f"({wall / len(listed):.2f} s each)"
            )
            rss = subprocess.run(
                ["ps", "-o", "rss=", "-p", str(service.pid)], capture_output=True, text=True
            ).stdout.strip()
            stored = subprocess.run(
                ["du", "-sk", str(temp / "ngshare")], capture_output=True, text=True
            ).stdout.split()[0]
            print(
                f"ngshare RSS after all this: {int(rss) / 1024:.0f} MiB; "
                f"stored: {int(stored) / 1024:.1f} MiB"
            )
    finally:
        for process in (hub, service):
            if process is not None:
                hub_module.stop_hub(process)
        shutil.rmtree(temp, ignore_errors=True)
    return 0


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--starts", type=int, default=3, help="server starts to time")
    parser.add_argument(
        "--exchange", type=int, metavar="STUDENTS", help="measure the ngshare service instead"
    )
    args = parser.parse_args(argv)
    if args.exchange is not None:
        if os.geteuid() != 0:
            print(
                "measure.py --exchange needs root: it runs ngshare as another uid", file=sys.stderr
            )
            return 1
        if not 1 <= args.exchange <= 1000:
            print(f"--exchange must be in [1, 1000], got {args.exchange}", file=sys.stderr)
            return 2
        return measure_exchange(args.exchange)
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
