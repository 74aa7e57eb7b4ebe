"""Kernels for grading: a fresh IPython kernel per notebook, started fast, stopped for sure.

:class:`KernelFactory` starts each kernel as a fork of a warm process
(:mod:`decompkit.course.engine.forkserver`, which has ipykernel and the notebooks' imports loaded),
so a kernel is ready in a fraction of the usual start-up. With :class:`~.sandbox.Walls` every
kernel runs inside walls of its own (:mod:`decompkit.course.engine.sandbox`): the grader reaches its
sockets through ``/proc/<pid>/root``, and a kernel that cannot be walled is not started. Without
walls (``--no-sandbox``), where ``os.fork`` is missing or the warm process cannot start, it
falls back to jupyter_client's ordinary launch. Either way each kernel talks over local
(``ipc``) sockets, writes nothing to the grader's terminal, and is a process of its own that
:meth:`Kernel.kill` ends with everything it started. The grader's sockets refuse any message
over :data:`MAX_MESSAGE` bytes before it is read into memory.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import queue
import secrets
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import zmq
import zmq.asyncio
from jupyter_client.asynchronous import AsyncKernelClient

from .files import open_regular
from .sandbox import HOME, SOCKETS, Walls

__all__ = ["Kernel", "KernelFactory", "KernelStartError", "MAX_MESSAGE"]

READY_TIMEOUT = 60.0  # seconds a kernel may take to answer its first request
WARM_TIMEOUT = 180.0  # seconds the warm process may take to import the notebooks' modules
MAX_MESSAGE = 16 * 2**20  # bytes: a larger message from a kernel is dropped unread
SEND_TIMEOUT_MS = 5000


class KernelStartError(RuntimeError):
    """A kernel could not be started."""


class _Client(AsyncKernelClient):
    """A kernel client whose liveness is the kernel process's (not the heartbeat's)."""

    alive = None  # set per client: a callable returning whether the kernel process runs

    def _context_default(self) -> zmq.asyncio.Context:
        self._created_context = True
        context = zmq.asyncio.Context()
        context.setsockopt(zmq.MAXMSGSIZE, MAX_MESSAGE)
        # A socket whose peer sent too much is cut off for good (zmq does not reconnect after
        # a protocol error), and a send on it would wait for ever: let it fail instead.
        context.setsockopt(zmq.SNDTIMEO, SEND_TIMEOUT_MS)
        return context

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
    """One running kernel: its client (``kc``) and what interrupts, checks and ends it.

    ``pid`` is the process to signal (with walls, the init of the kernel's namespace, which
    passes interrupts on); ``folder`` is the host folder the kernel was given, removed when
    it is killed; ``walls`` the walls it runs in, if any.
    """

    def __init__(self, kc: _Client, *, pid=None, manager=None, folder=None, walls=None):
        self.kc, self.pid, self.manager = kc, pid, manager
        self.folder, self.walls = folder, walls
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

    def reconnect(self) -> None:
        """Talk to the kernel over new sockets (after a message over :data:`MAX_MESSAGE`
        ended the old ones' connection)."""
        info = self.kc.get_connection_info()
        try:
            self.kc.stop_channels()
        except Exception:  # noqa: BLE001 - closing a client of a dead kernel may fail
            pass
        self.kc = _client(info)
        self.kc.alive = self.is_alive
        self.kc.start_channels(hb=False)

    async def reconnect_output(self) -> None:
        """Read the kernel's output over a new socket (after a message over
        :data:`MAX_MESSAGE` ended the old one's connection)."""
        channel, self.kc._iopub_channel = self.kc._iopub_channel, None
        if channel is not None:
            channel.close()
        self.kc.iopub_channel.start()
        await asyncio.sleep(0.05)  # the new subscription reaches the kernel

    def bounds_reached(self) -> list[str]:
        """Which of its walls' bounds the kernel is at now (its scratch space full, as many
        processes as it may have); empty without walls or once it has ended."""
        if self.walls is None or self.pid is None:
            return []
        from .sandbox import pressure

        return pressure(self.pid, self.walls.bounds)

    async def kill(self) -> None:
        """End the kernel and every process it started; close the client; wait until they
        are gone (with walls: every process of its namespace), then remove its folder."""
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
            end = time.monotonic() + 10
            while _pid_alive(self.pid) and time.monotonic() < end:
                await asyncio.sleep(0.005)
        elif self.manager is not None:
            try:
                await self.manager.shutdown_kernel(now=True)
            except Exception:  # noqa: BLE001 - a kernel that is gone already
                pass
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)


class KernelFactory:
    """Starts grading kernels for one grading process.

    Parameters
    ----------
    workdir : Path
        A private folder for the kernels' folders and the warm process's log.
    env : dict
        The environment every kernel starts from (the caller adds the student's id).
    preload : list of str
        Import statements the warm process runs once (the notebooks' own imports).
    fork : bool
        Use the warm process; ``False`` starts every kernel the ordinary way.
    walls : Walls, optional
        Start every kernel inside these walls (needs the warm process); a kernel that cannot
        be walled raises :class:`KernelStartError` rather than starting without them.
    user_namespace : bool, optional
        Build the walls in a user namespace (see :func:`decompkit.course.engine.sandbox.enter`).
    """

    def __init__(
        self,
        workdir: Path,
        env: dict,
        preload=(),
        *,
        fork: bool = True,
        walls: Walls | None = None,
        user_namespace: bool | None = None,
    ):
        self.workdir = Path(workdir)
        self.env = dict(env)
        self.preload = list(preload)
        self.fork = fork and hasattr(os, "fork") and sys.platform != "win32"
        self.walls, self.user_namespace = walls, user_namespace
        if walls is not None and not self.fork:
            raise ValueError("kernels start inside walls only as forks of the warm process")
        self.server: subprocess.Popen | None = None
        self.warm_failures: list[str] = []
        self.count = 0
        # Root grades as one user per grading process: its kernels' process bound counts only
        # its own kernels (an ordinary user's kernels have a user namespace each instead).
        self.uid = 1_000_000 + os.getpid()

    # -- the warm process --

    def _start_server(self) -> None:
        folder = Path(tempfile.mkdtemp(prefix="warm-", dir=self.workdir))
        log = open(folder / "forkserver.log", "wb")  # noqa: SIM115 - kept open by the child
        env = dict(self.env)
        env.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")
        env.setdefault("MPLBACKEND", "module://matplotlib_inline.backend_inline")
        self.server = subprocess.Popen(
            [sys.executable, "-c", "from decompkit.course.engine.forkserver import main; main()"],
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

    def _fork(self, request: dict) -> int:
        if self.server is None or self.server.poll() is not None:
            self._start_server()
        self._send(request)
        reply = self._receive(30.0)
        if "error" in reply:
            raise KernelStartError(f"the kernel could not start: {reply['error']}")
        return int(reply["pid"])

    # -- kernels --

    async def start(self, env_extra: dict, files: dict | None = None) -> Kernel:
        """A ready kernel with ``env_extra`` added to the environment and ``files``
        (``{name: host path}``, regular files only) copied into its working folder."""
        self.count += 1
        folder = Path(tempfile.mkdtemp(prefix="k", dir=self.workdir))
        env = {**self.env, **env_extra}
        files = {str(name): str(path) for name, path in (files or {}).items()}
        try:
            if self.walls is not None:
                return await self._start_walled(folder, env, files)
            cwd = folder / "work"
            cwd.mkdir()
            for name, path in files.items():
                copy_regular_file(Path(path), cwd / name)
            connection = _connection(str(folder / "s"))
            connection_file = folder / "kernel.json"
            connection_file.write_text(json.dumps(connection), encoding="utf-8")
            if self.fork:
                try:
                    pid = self._fork(
                        {"connection_file": str(connection_file), "cwd": str(cwd), "env": env}
                    )
                except (KernelStartError, OSError, ValueError) as error:
                    self.fork = False  # the warm process is broken: start kernels the usual way
                    self.warm_failures.append(f"warm process: {error}")
                    self.close()
                else:
                    kernel = Kernel(_client(connection), pid=pid, folder=folder)
                    return await self._ready(kernel)
            return await self._start_ordinary(connection, connection_file, cwd, env, folder)
        except BaseException:
            shutil.rmtree(folder, ignore_errors=True)
            raise

    async def _start_walled(self, folder: Path, env: dict, files: dict) -> Kernel:
        walls = self.walls
        assert walls is not None
        connection = _connection(f"{SOCKETS}/k")
        request = {
            "connection": json.dumps(connection),
            "env": {**env, "HOME": HOME},
            "files": files,
            "root": str(folder),
            "walls": {
                "read_only": list(walls.read_only),
                "bounds": dataclasses.asdict(walls.bounds),
                "user_namespace": self.user_namespace,
            },
            "uid": self.uid,
        }
        try:
            pid = self._fork(request)
        except (OSError, ValueError) as error:
            raise KernelStartError(f"the warm kernel process failed ({error})") from None
        connection["ip"] = f"/proc/{pid}/root{SOCKETS}/k"
        kernel = Kernel(_client(connection), pid=pid, folder=folder, walls=walls)
        await self._ready(kernel)
        await _sealed(kernel, f"/proc/{pid}/root{SOCKETS}")
        return kernel

    async def _start_ordinary(self, connection, connection_file, cwd, env, folder) -> Kernel:
        from jupyter_client.manager import AsyncKernelManager

        manager = AsyncKernelManager(kernel_name="python3", transport="ipc")
        manager.connection_file = str(connection_file)
        manager.load_connection_file()
        await manager.start_kernel(
            env=env,
            cwd=str(cwd),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            extra_arguments=["--HistoryManager.hist_file=:memory:"],
        )
        kernel = Kernel(_client(connection), manager=manager, folder=folder)
        return await self._ready(kernel)

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


async def _sealed(kernel: Kernel, folder: str) -> None:
    """Wait until the walled kernel's socket folder is read-only (its init seals it once the
    sockets are bound); no cell is sent before, so no link can stand in for a socket."""
    end = time.monotonic() + READY_TIMEOUT
    while True:
        try:
            if os.statvfs(folder).f_flag & os.ST_RDONLY:
                return
        except OSError:
            pass  # the kernel has ended: said below
        if time.monotonic() > end or not kernel.is_alive():
            await kernel.kill()
            raise KernelStartError("the kernel did not start (its sockets were not sealed)")
        await asyncio.sleep(0.002)


def _connection(ip: str) -> dict:
    """Connection information of a kernel on local sockets ``<ip>-<n>``, with a new key."""
    ports = ("shell_port", "iopub_port", "stdin_port", "control_port", "hb_port")
    return {
        **{name: number for number, name in enumerate(ports, start=1)},
        "ip": ip,
        "key": secrets.token_hex(32),
        "transport": "ipc",
        "signature_scheme": "hmac-sha256",
        "kernel_name": "",
    }


def _client(connection: dict) -> _Client:
    client = _Client()
    client.load_connection_info(connection)
    return client


def copy_regular_file(source: Path, target: Path) -> bool:
    """Copy ``source`` to ``target`` if it is a regular file and not a link (a name that
    came with a submission may point anywhere); whether it was copied."""
    try:
        data = open_regular(source)
    except OSError:
        return False
    if data is None:
        return False
    with data, open(target, "xb") as out:
        shutil.copyfileobj(data, out)
    return True
