"""Kernels for grading: a fresh IPython kernel per notebook, started fast, stopped for sure.

:class:`KernelFactory` starts each kernel as a fork of a warm process
(:mod:`decompkit.course.forkserver`, which has ipykernel and the notebooks' imports loaded),
so a kernel is ready in a fraction of the usual start-up; where ``os.fork`` is missing or the
warm process cannot start, it falls back to jupyter_client's ordinary launch. Either way each
kernel talks over local (``ipc``) sockets, runs in the folder and with the environment it is
given, writes nothing to the grader's terminal, and is a process of its own that
:meth:`Kernel.kill` ends with everything it started.
"""

from __future__ import annotations

import asyncio
import json
import os
import queue
import select
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from jupyter_client.asynchronous import AsyncKernelClient
from jupyter_client.connect import write_connection_file

__all__ = ["Kernel", "KernelFactory", "KernelStartError"]

READY_TIMEOUT = 60.0  # seconds a kernel may take to answer its first request
WARM_TIMEOUT = 180.0  # seconds the warm process may take to import the notebooks' modules


class KernelStartError(RuntimeError):
    """A kernel could not be started."""


class _Client(AsyncKernelClient):
    """A kernel client whose liveness is the kernel process's (not the heartbeat's)."""

    alive = None  # set per client: a callable returning whether the kernel process runs

    async def _async_is_alive(self) -> bool:
        return True if self.alive is None else bool(self.alive())

    is_alive = _async_is_alive


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a zombie (not reaped yet) is not alive
        with open(f"/proc/{pid}/stat", "rb") as handle:
            return handle.read().split(b") ", 1)[1][:1] != b"Z"
    except (OSError, IndexError):
        return True


class Kernel:
    """One running kernel: its client (``kc``) and what interrupts, checks and ends it."""

    def __init__(self, kc: _Client, *, pid: int | None = None, manager=None):
        self.kc, self.pid, self.manager = kc, pid, manager
        kc.alive = self.is_alive

    def is_alive(self) -> bool:
        if self.pid is not None:
            return _pid_alive(self.pid)
        return bool(self.manager is not None and self.manager.has_kernel)

    async def interrupt_kernel(self) -> None:
        """SIGINT to the kernel: IPython turns it into a KeyboardInterrupt in the cell."""
        if self.pid is not None:
            try:
                os.kill(self.pid, signal.SIGINT)
            except OSError:
                pass
        elif self.manager is not None:
            await self.manager.interrupt_kernel()

    async def kill(self) -> None:
        """End the kernel and every process it started in its session; close the client."""
        try:
            self.kc.stop_channels()
        except Exception:  # noqa: BLE001 - closing a client of a dead kernel may fail
            pass
        if self.pid is not None:
            for kill in (os.killpg, os.kill):
                try:
                    kill(self.pid, signal.SIGKILL)
                except OSError:
                    pass
        elif self.manager is not None:
            try:
                await self.manager.shutdown_kernel(now=True)
            except Exception:  # noqa: BLE001 - a kernel that is gone already
                pass


class KernelFactory:
    """Starts grading kernels for one grading process.

    Parameters
    ----------
    workdir : Path
        A private folder for the connection files and the warm process's log.
    env : dict
        The environment every kernel starts from (the caller adds the student's id).
    preload : list of str
        Import statements the warm process runs once (the notebooks' own imports).
    fork : bool
        Use the warm process; ``False`` starts every kernel the ordinary way.
    """

    def __init__(self, workdir: Path, env: dict, preload=(), *, fork: bool = True):
        self.workdir = Path(workdir)
        self.env = dict(env)
        self.preload = list(preload)
        self.fork = fork and hasattr(os, "fork") and sys.platform != "win32"
        self.server: subprocess.Popen | None = None
        self.warm_failures: list[str] = []
        self.count = 0

    # -- the warm process --

    def _start_server(self) -> None:
        folder = Path(tempfile.mkdtemp(prefix="warm-", dir=self.workdir))
        log = open(folder / "forkserver.log", "wb")  # noqa: SIM115 - kept open by the child
        env = dict(self.env)
        env.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")
        env.setdefault("MPLBACKEND", "module://matplotlib_inline.backend_inline")
        self.server = subprocess.Popen(
            [sys.executable, "-c", "from decompkit.course.forkserver import main; main()"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=log,
            cwd=folder,
            env=env,
            start_new_session=True,
        )
        log.close()
        self._send({"preload": self.preload})
        reply = self._receive(WARM_TIMEOUT)
        if not reply.get("ready"):
            raise KernelStartError("the warm kernel process did not start")
        self.warm_failures = reply.get("failed", [])

    def _send(self, message: dict) -> None:
        assert self.server is not None and self.server.stdin is not None
        self.server.stdin.write((json.dumps(message) + "\n").encode())
        self.server.stdin.flush()

    def _receive(self, timeout: float) -> dict:
        assert self.server is not None and self.server.stdout is not None
        ready, _, _ = select.select([self.server.stdout], [], [], timeout)
        line = self.server.stdout.readline() if ready else b""
        if not line:
            raise KernelStartError("the warm kernel process stopped answering")
        return json.loads(line)

    def _fork(self, connection_file: str, cwd: Path, env: dict) -> int:
        if self.server is None or self.server.poll() is not None:
            self._start_server()
        self._send({"connection_file": connection_file, "cwd": str(cwd), "env": env})
        return int(self._receive(30.0)["pid"])

    # -- kernels --

    async def start(self, cwd: Path, env_extra: dict) -> Kernel:
        """A ready kernel running in ``cwd`` with ``env_extra`` added to the environment."""
        self.count += 1
        sockets = Path(tempfile.mkdtemp(prefix="k", dir=self.workdir))
        env = {**self.env, **env_extra}
        connection_file, _ = write_connection_file(
            str(sockets / "kernel.json"), transport="ipc", ip=str(sockets / "s")
        )
        if self.fork:
            try:
                pid = self._fork(connection_file, cwd, env)
            except (KernelStartError, OSError, ValueError) as error:
                self.fork = False  # the warm process is broken: start kernels the usual way
                self.warm_failures.append(f"warm process: {error}")
                self.close()
            else:
                return await self._ready(Kernel(_client(connection_file), pid=pid))
        return await self._start_ordinary(connection_file, cwd, env)

    async def _start_ordinary(self, connection_file: str, cwd: Path, env: dict) -> Kernel:
        from jupyter_client.manager import AsyncKernelManager

        manager = AsyncKernelManager(kernel_name="python3", transport="ipc")
        manager.connection_file = connection_file
        manager.load_connection_file()
        await manager.start_kernel(
            env=env,
            cwd=str(cwd),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            extra_arguments=["--HistoryManager.hist_file=:memory:"],
        )
        return await self._ready(Kernel(_client(connection_file), manager=manager))

    @staticmethod
    async def _ready(kernel: Kernel) -> Kernel:
        """Wait until the kernel answers on its shell channel and its output channel is
        subscribed (a first message arrived there), so no output of the first cell is lost.

        jupyter_client's ``wait_for_ready`` does the same with a 0.2 s wait per try on the
        output channel, which a kernel that starts in 0.2 s often misses once.
        """
        kc = kernel.kc
        kc.start_channels(hb=False)
        end = time.monotonic() + READY_TIMEOUT
        while True:
            if time.monotonic() > end or not kernel.is_alive():
                await kernel.kill()
                raise KernelStartError("the kernel did not start")
            msg_id = kc.kernel_info()
            try:
                while True:
                    reply = await kc.get_shell_msg(timeout=1)
                    if reply["parent_header"].get("msg_id") == msg_id:
                        break
                await kc.get_iopub_msg(timeout=1)
            except (queue.Empty, asyncio.TimeoutError):
                continue
            kc._handle_kernel_info_reply(reply)
            return kernel

    def close(self) -> None:
        """Stop the warm process (it kills the kernels it forked that still run)."""
        server, self.server = self.server, None
        if server is None:
            return
        try:
            if server.stdin is not None:
                server.stdin.close()
            server.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            server.kill()
            server.wait()
        finally:
            if server.stdout is not None:
                server.stdout.close()


def _client(connection_file: str) -> _Client:
    client = _Client(connection_file=connection_file)
    client.load_connection_file()
    return client


def wait_gone(pid: int, seconds: float = 2.0) -> bool:
    """Wait until process ``pid`` has ended; whether it did within ``seconds``."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if not _pid_alive(pid):
            return True
        time.sleep(0.02)
    return not _pid_alive(pid)
