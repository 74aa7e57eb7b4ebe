"""A warm process that forks one fresh IPython kernel per notebook to be graded.

Starting an IPython kernel costs half a second or more before a cell runs (Python, IPython,
ipykernel and its debugger), and each grading kernel then imports NumPy and decompkit again.
This process pays that once: it imports ipykernel and runs the import statements of the
assignment's notebooks, then waits for requests on its standard input (one JSON object per
line: the connection file, the working folder and the environment of a kernel) and answers
each with the pid of a forked child on its standard output. The child is a new session
(``os.setsid``), gets the environment and the folder it was asked for, fresh random seeds,
no terminal, and becomes an ordinary ipykernel (``IPKernelApp``) on that connection file.
Each child is a separate process: what a notebook does to its modules, its namespace or its
interpreter ends with it, and the warm parent stays as it was.

The process ends when its standard input closes, killing every child it forked that still
runs (and their process groups); the kernel sends SIGKILL to it when its parent ends, and to
each child when this process ends (``PR_SET_PDEATHSIG``), so a grader killed outright leaves
none of them. It reaps each child as it ends, so the kernels' CPU time
counts in its own, and in the grader's once the grader has waited for it. Run it only through
:mod:`decompkit.course.engine.kernels`; it uses the standard library and ipykernel.
"""

from __future__ import annotations

import json
import os
import random
import select
import signal
import sys

from .sandbox import SOCKETS, Bounds, Walls, die_with_parent, enter

__all__ = ["main"]

KERNEL_ARGUMENTS = ["--HistoryManager.hist_file=:memory:", "--IPKernelApp.log_level=CRITICAL"]

# Modules every kernel loads while it starts (its debugger and the shell's helpers): imported
# here once instead of in every kernel.
_KERNEL_MODULES = (
    "from ipykernel.kernelapp import IPKernelApp",
    "import ipykernel.ipkernel, ipykernel.zmqshell, ipykernel.debugger, ipykernel.comm",
    "import IPython.core.interactiveshell, IPython.core.completer, IPython.core.oinspect",
    "import IPython.core.debugger, IPython.core.completerlib, IPython.extensions.storemagic",
    "import sqlite3, pdb, tornado.platform.asyncio",
)


def _warm(statements) -> list[str]:
    """Run import statements once (a failure is reported, never fatal)."""
    failed = []
    namespace: dict = {"__name__": "__decompkit_forkserver__"}
    for statement in [*_KERNEL_MODULES, *statements]:
        try:
            exec(compile(statement, "<preload>", "exec"), namespace)
        except BaseException as error:  # noqa: BLE001 - an import of the notebooks may fail
            failed.append(f"{statement.strip()[:80]}: {type(error).__name__}")
    return failed


def _reply(message: dict) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def _close_descriptors(keep: int) -> None:
    """Standard streams on /dev/null; every other descriptor of the warm process closed but
    ``keep`` (its pipes to the grader must not reach a kernel)."""
    null = os.open(os.devnull, os.O_RDWR)
    for descriptor in (0, 1, 2):
        os.dup2(null, descriptor)
    for descriptor in os.listdir("/proc/self/fd") if os.path.isdir("/proc/self/fd") else ():
        if int(descriptor) > 2 and int(descriptor) != keep:
            try:
                os.close(int(descriptor))
            except OSError:
                pass  # the listing's own descriptor, closed already


def _child(request: dict, report_to: int, parent: int) -> None:
    """Become the kernel described by ``request`` (never returns); the pid to signal, or why
    the kernel could not start, is written to ``report_to``. It is killed when ``parent``
    (this warm process) ends."""
    try:
        die_with_parent(parent)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.setsid()
        _close_descriptors(report_to)

        def report(found) -> None:
            os.write(report_to, (f"{found}\n").encode())

        walls = request.get("walls")
        if walls:
            bounds = Bounds(**walls["bounds"])
            enter(
                Walls(tuple(walls["read_only"]), bounds),
                request["root"],
                request["files"],
                request["connection"].encode(),
                request["uid"],
                report,
                user_namespace=walls.get("user_namespace"),
            )
            connection_file = f"{SOCKETS}/kernel.json"
        else:
            os.chdir(request["cwd"])
            report(os.getpid())
            connection_file = request["connection_file"]
        os.close(report_to)
        os.environ.clear()
        os.environ.update(request["env"])
        os.environ["JPY_PARENT_PID"] = str(os.getppid())
        random.seed()
        numpy = sys.modules.get("numpy")
        if numpy is not None:
            numpy.random.seed()
        from ipykernel.kernelapp import IPKernelApp

        IPKernelApp.launch_instance(argv=["-f", connection_file, *KERNEL_ARGUMENTS])
    finally:
        os._exit(0)


def _reap(*_) -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _start(request: dict) -> dict:
    """Fork the kernel of ``request``; its pid as the grader signals it, or the error."""
    reader, writer = os.pipe()
    parent = os.getpid()
    pid = os.fork()
    if pid == 0:
        os.close(reader)
        _child(request, writer, parent)
    os.close(writer)
    said = b""
    try:
        while not said.endswith(b"\n") and select.select([reader], [], [], 30.0)[0]:
            chunk = os.read(reader, 1000)
            if not chunk:
                break
            said += chunk
    finally:
        os.close(reader)
    text = said.decode(errors="replace").strip()
    if text.isdigit():
        return {"pid": int(text), "child": pid}
    return {"error": text or "the kernel process ended before it started", "child": pid}


def main() -> None:
    """Serve kernels until standard input closes (see the module docstring)."""
    die_with_parent(os.getppid())  # also when the grader is killed outright
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGCHLD, _reap)
    first = json.loads(sys.stdin.readline() or "{}")
    failed = _warm(first.get("preload", []))
    _reply({"ready": True, "pid": os.getpid(), "failed": failed})
    children = []
    try:
        for line in sys.stdin:
            reply = _start(json.loads(line))
            children.append(reply.pop("child"))
            _reply(reply)
    finally:
        for pid in children:
            try:
                os.killpg(pid, signal.SIGKILL)
            except OSError:
                pass
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        _reap()


if __name__ == "__main__":
    main()
