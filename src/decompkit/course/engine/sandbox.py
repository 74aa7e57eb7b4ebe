"""Walls around one grading kernel, built from Linux namespaces after the warm fork.

A kernel forked from the warm process (:mod:`decompkit.course.engine.forkserver`) calls
:func:`enter` before any student code runs. The forked child unshares new mount, PID,
network, IPC, UTS and cgroup namespaces (and a user namespace when the grader is not root),
builds a root file system of its own and forks twice::

    warm process -> waiter (outside the walls) -> init (pid 1 inside) -> kernel (pid 2)

Inside, the kernel sees read-only binds of the system (``/usr``, the Python installation, the
kit's copy), a ``/proc`` that lists only its own processes, no network but an unconfigured
loopback, and one writable tmpfs of ``Bounds.scratch`` bytes holding its home and working
folder, ``/tmp``, ``/dev/shm`` and its connection sockets (``/run/kernel``). It runs as an
unprivileged user with no capabilities and ``no_new_privs``, bounded in address space,
processes and open files. No other kernel, no connection file, no grader process, no course
folder (gradebook, solutions, other students) and no writable kit is reachable from there.
Killing the init (:meth:`decompkit.course.engine.kernels.Kernel.kill`) ends every process in
the namespace, however it was started (``setsid``, double forks): the grader does this, and
waits until they are gone, before the next notebook runs. Once the kernel has bound its
sockets the init makes their folder read-only, so no link can stand in for a socket when the
grader connects from outside.

Why these system calls rather than bubblewrap: ``bwrap`` runs a new program inside its walls,
and a new program pays a kernel's whole start-up again (about 1.5 s of imports here), which
the warm process exists to avoid. The calls are bubblewrap's own (``unshare``, bind mounts
made read-only, ``pivot_root``, dropping capabilities), made in the forked child, for about
10 ms a kernel. Linux only; :func:`available` says why walls cannot be built elsewhere.
"""

from __future__ import annotations

import ctypes
import os
import platform
import resource
import select
import signal
import sys
import time
from dataclasses import dataclass

from .files import open_regular

__all__ = [
    "Bounds",
    "Walls",
    "WallError",
    "available",
    "die_with_parent",
    "enter",
    "pressure",
    "HOME",
    "SOCKETS",
]

HOME = "/home/student"  # the kernel's home and working folder, inside the walls
SOCKETS = "/run/kernel"  # its connection file and sockets
KERNEL_PID = 2  # the kernel's pid inside its namespace (the init is 1)
SOCKET_FILES = 6  # the connection file and a kernel's five sockets

_CLONE_NEWNS, _CLONE_NEWCGROUP, _CLONE_NEWUTS = 0x00020000, 0x02000000, 0x04000000
_CLONE_NEWIPC, _CLONE_NEWUSER, _CLONE_NEWPID = 0x08000000, 0x10000000, 0x20000000
_CLONE_NEWNET = 0x40000000
_MS_RDONLY, _MS_NOSUID, _MS_NODEV, _MS_NOEXEC = 1, 2, 4, 8
_MS_REMOUNT, _MS_BIND, _MS_REC, _MS_PRIVATE = 32, 4096, 16384, 1 << 18
_MS_NOATIME, _MS_NODIRATIME, _MS_RELATIME = 1024, 2048, 1 << 21
_ST_RELATIME = 4096
_MNT_DETACH = 2
_PR_SET_PDEATHSIG, _PR_CAPBSET_DROP, _PR_SET_NO_NEW_PRIVS = 1, 24, 38
_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL = 47, 4
_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41, "arm64": 41}  # syscall numbers
_CAPSET = {"x86_64": 126, "aarch64": 91, "arm64": 91}
# What of /etc a Python process needs: the dynamic linker's cache and the time zone.
_ETC = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "localtime")
_DEVICES = ("null", "zero", "full", "random", "urandom")


class WallError(OSError):
    """The walls could not be built (the message says which step failed and why)."""


@dataclass(frozen=True)
class Bounds:
    """What one kernel may use: bytes of address space per process, processes and threads
    together, bytes of files it writes, open files per process."""

    memory: int = 2 * 2**30
    processes: int = 64
    scratch: int = 256 * 2**20
    open_files: int = 256

    def __post_init__(self):
        for name in ("memory", "processes", "scratch", "open_files"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a whole number >= 1, got {value!r}")


@dataclass(frozen=True)
class Walls:
    """The walls of a kernel: folders it sees read-only (at the same path) and its bounds."""

    read_only: tuple = ()
    bounds: Bounds = Bounds()


_libc = ctypes.CDLL(None, use_errno=True)


def _check(result: int, what: str) -> None:
    if result != 0:
        number = ctypes.get_errno()
        raise WallError(number, f"{what}: {os.strerror(number)}")


def _bytes(text):
    return None if text is None else os.fsencode(text)


def _mount(source, target, fstype=None, flags=0, data=None) -> None:
    result = _libc.mount(
        _bytes(source), _bytes(target), _bytes(fstype), ctypes.c_ulong(flags), _bytes(data)
    )
    _check(result, f"mount {source or fstype or ''} on {target}")


def _prctl(option: int, value: int = 0) -> int:
    return _libc.prctl(option, ctypes.c_ulong(value), 0, 0, 0)


def die_with_parent(parent: int, number: int = signal.SIGKILL) -> None:
    """Have the kernel send this process ``number`` when its parent ``parent`` ends (a
    crash or a kill of the grader included); end now if ``parent`` is gone already.

    Linux only (``PR_SET_PDEATHSIG``); elsewhere nothing is done. Call it in the child right
    after the fork, from a parent that forked it in the thread that lives as long as it.
    """
    if sys.platform != "linux":
        return
    _prctl(_PR_SET_PDEATHSIG, number)
    if os.getppid() != parent:  # the parent ended before the signal was asked for
        os._exit(1)


def _syscall(table: dict, *args) -> int:
    number = table.get(platform.machine())
    if number is None:
        raise WallError(f"no walls on {platform.machine()} (only x86_64 and aarch64)")
    return _libc.syscall(number, *args)


# --- building the root -----------------------------------------------------------------------


def _mounts_under(target: str) -> list[str]:
    """Mount points at or below ``target`` in this mount namespace (from mountinfo)."""
    found = []
    with open("/proc/self/mountinfo", encoding="utf-8", errors="surrogateescape") as info:
        for line in info:
            point = line.split()[4]
            for code in ("\\040", "\\011", "\\012", "\\134"):
                point = point.replace(code, chr(int(code[1:], 8)))
            if point == target or point.startswith(target.rstrip("/") + "/"):
                found.append(point)
    return found


def _read_only(host: str, target: str) -> None:
    """Bind ``host`` at ``target`` (with what is mounted below it), every mount read-only."""
    if os.path.isdir(host):
        os.makedirs(target, exist_ok=True)
    else:
        os.makedirs(os.path.dirname(target), exist_ok=True)
        open(target, "a").close()  # noqa: SIM115 - an empty file to mount on
    _mount(host, target, None, _MS_BIND | _MS_REC)
    for point in _mounts_under(target):
        # A remount may add restrictions, never drop those the mount had (they are locked
        # in a user namespace): keep nosuid, nodev, noexec and the access-time flags.
        had = os.statvfs(point).f_flag
        keep = had & (_MS_NOSUID | _MS_NODEV | _MS_NOEXEC | _MS_NOATIME | _MS_NODIRATIME)
        keep |= _MS_RELATIME if had & _ST_RELATIME else 0
        flags = _MS_BIND | _MS_REMOUNT | _MS_RDONLY | _MS_NOSUID | _MS_NODEV | keep
        _mount(None, point, None, flags)


def _folders(walls: Walls) -> list[str]:
    """The host paths to bind read-only: the system's, then the walls' own, none twice."""
    wanted = ["/usr", "/etc/alternatives"]
    for name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        if os.path.isdir(f"/{name}") and not os.path.islink(f"/{name}"):
            wanted.append(f"/{name}")
    wanted += [f"/etc/{name}" for name in _ETC]
    wanted += [os.path.realpath(path) for path in walls.read_only]
    chosen: list[str] = []
    for path in sorted(set(wanted), key=lambda p: (p.count("/"), p)):
        if os.path.lexists(path) and not any(path.startswith(p + "/") for p in chosen):
            chosen.append(path)
    return chosen


def _copy_in(host: str, target: str, uid: int, gid: int) -> None:
    """Copy a regular file (never a link: the name comes from a submission) into the walls."""
    source = open_regular(host)
    if source is None:
        return  # a link, or no regular file: left out
    with source:
        out = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
        try:
            while chunk := source.read(1 << 20):
                os.write(out, chunk)
            os.fchown(out, uid, gid)
        finally:
            os.close(out)


def _build(walls: Walls, root: str, files: dict, connection: bytes, uid: int, gid: int) -> None:
    """Mount the kernel's root file system at ``root`` (in this new mount namespace)."""
    _mount(None, "/", None, _MS_REC | _MS_PRIVATE)
    _mount("tmpfs", root, "tmpfs", _MS_NOSUID | _MS_NODEV, "size=1m,mode=0755")
    for name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        if os.path.islink(f"/{name}"):
            os.symlink(os.readlink(f"/{name}"), f"{root}/{name}")
    home = root + HOME
    os.makedirs(home)
    _mount(
        "tmpfs",
        home,
        "tmpfs",
        _MS_NOSUID | _MS_NODEV,
        f"size={walls.bounds.scratch},mode=0700,uid={uid},gid={gid}",
    )
    for inside, inner in ((SOCKETS, ".kernel"), ("/tmp", ".tmp"), ("/dev/shm", ".shm")):
        os.mkdir(f"{home}/{inner}", 0o700)
        os.chown(f"{home}/{inner}", uid, gid)
        os.makedirs(root + inside, exist_ok=True)
        _mount(f"{home}/{inner}", root + inside, None, _MS_BIND)
    # After the writable folders: a read-only folder under /tmp (a checkout, the kit's copy)
    # is mounted over the kernel's own /tmp, not hidden under it.
    for path in _folders(walls):
        _read_only(path, root + path)
    os.makedirs(f"{root}/etc", exist_ok=True)
    for device in _DEVICES:
        open(f"{root}/dev/{device}", "a").close()  # noqa: SIM115 - a file to mount on
        _mount(f"/dev/{device}", f"{root}/dev/{device}", None, _MS_BIND)
    for name, target in (
        ("fd", "/proc/self/fd"),
        ("stdin", "/proc/self/fd/0"),
        ("stdout", "/proc/self/fd/1"),
        ("stderr", "/proc/self/fd/2"),
    ):
        os.symlink(target, f"{root}/dev/{name}")
    os.makedirs(f"{root}/proc")
    for name, text in (
        ("passwd", f"student:x:{uid}:{gid}:student:{HOME}:/bin/sh\n"),
        ("group", f"student:x:{gid}:\n"),
        ("hostname", "grading\n"),
    ):
        with open(f"{root}/etc/{name}", "w", encoding="utf-8") as out:
            out.write(text)
    for name, host in files.items():
        _copy_in(host, f"{home}/{name}", uid, gid)
    path = f"{home}/.kernel/kernel.json"
    with open(path, "wb") as out:
        out.write(connection)
    os.chown(path, uid, gid)


def _drop_bounding_set() -> None:
    """Empty the bounding and ambient sets, so no capability can be gained again (needs
    CAP_SETPCAP, so before the change of user)."""
    _prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL)
    for cap in range(64):
        if _prctl(_PR_CAPBSET_DROP, cap) != 0:
            if ctypes.get_errno() == 22:  # EINVAL: past the last capability this kernel knows
                return
            _check(-1, f"drop capability {cap}")


def _drop_capabilities() -> None:
    """No capability left in any set of this process."""
    header = (ctypes.c_uint32 * 2)(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3, this thread
    data = (ctypes.c_uint32 * 6)()
    _check(_syscall(_CAPSET, header, data), "capset")


def _limit(bounds: Bounds) -> None:

    for name, value in (
        ("RLIMIT_AS", bounds.memory),
        ("RLIMIT_NPROC", bounds.processes),
        ("RLIMIT_NOFILE", bounds.open_files),
        ("RLIMIT_CORE", 0),
        ("RLIMIT_FSIZE", bounds.scratch),
    ):
        resource.setrlimit(getattr(resource, name), (value, value))


# --- the three processes ---------------------------------------------------------------------


def _init(kernel: int) -> None:
    """Pid 1 inside: pass interrupts on to the kernel, reap orphans, end with the kernel."""

    def forward(number, _frame):
        try:
            os.kill(kernel, number)
        except OSError:
            pass  # the kernel has just ended: the wait below sees it

    for number in (signal.SIGINT, signal.SIGTERM, signal.SIGQUIT):
        signal.signal(number, forward)
    while True:
        try:
            pid, status = os.wait()
        except ChildProcessError:
            os._exit(0)
        if pid == kernel:
            os._exit(os.waitstatus_to_exitcode(status) & 0xFF)


def enter(
    walls: Walls,
    root: str,
    files: dict,
    connection: bytes,
    uid: int,
    report,
    *,
    user_namespace: bool | None = None,
) -> None:
    """Put this (freshly forked) process's kernel behind walls; see the module docstring.

    Parameters
    ----------
    walls : Walls
    root : str
        An empty host folder to build the kernel's root on (invisible to other processes).
    files : dict
        ``{name: host path}`` of regular files to copy into the kernel's working folder.
    connection : bytes
        The kernel's connection file, with its sockets under :data:`SOCKETS`.
    uid : int
        The user the kernel runs as when the grader is root (one per grading process, so
        the process bound of one kernel never counts another's); ignored otherwise.
    report : callable
        Called once in the waiter with the init's pid as the grader sees it (the pid to
        signal, and whose ``/proc/<pid>/root`` reaches the sockets), or with a
        :class:`WallError` when the walls could not be built.
    user_namespace : bool, optional
        Build the walls in a user namespace of their own (the way an ordinary user can);
        default: only when not root. Root without one runs the kernel as ``uid``.

    Returns only in the kernel process (pid 2 inside); the waiter and the init end with the
    kernel.
    """
    privileged = os.geteuid() == 0 if user_namespace is None else not user_namespace
    if privileged and (isinstance(uid, bool) or not isinstance(uid, int) or uid < 1):
        raise ValueError(f"uid must be a user id > 0, got {uid!r}")
    try:
        flags = _CLONE_NEWNS | _CLONE_NEWPID | _CLONE_NEWNET | _CLONE_NEWIPC | _CLONE_NEWUTS
        flags |= _CLONE_NEWCGROUP
        if privileged:
            _check(_libc.unshare(flags), "unshare")
            inner = uid
        else:
            outer_uid, outer_gid = os.geteuid(), os.getegid()
            _check(_libc.unshare(flags | _CLONE_NEWUSER), "unshare (user namespace)")
            inner = 1000
            for name, text in (
                ("setgroups", "deny"),
                ("uid_map", f"{inner} {outer_uid} 1"),
                ("gid_map", f"{inner} {outer_gid} 1"),
            ):
                with open(f"/proc/self/{name}", "w") as out:
                    out.write(text)
        _build(walls, root, files, connection, inner, inner)
        alive, waiting = os.pipe()  # the init's way to know the waiter still runs
        init = os.fork()
    except (OSError, ValueError) as error:
        report(error if isinstance(error, WallError) else WallError(str(error)))
        os._exit(1)
    if init:  # the waiter: stays outside, ends when the init ends
        os.close(alive)
        report(init)
        _, status = os.waitpid(init, 0)
        os._exit(os.waitstatus_to_exitcode(status) & 0xFF)
    try:
        os.close(waiting)
        _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
        if select.select([alive], [], [], 0)[0]:  # end of file: the waiter is gone already
            os._exit(1)
        os.close(alive)
        _mount("proc", f"{root}/proc", "proc", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC)
        _mount(None, root, None, _MS_REMOUNT | _MS_RDONLY | _MS_NOSUID | _MS_NODEV)
        os.chdir(root)
        _check(_syscall(_PIVOT_ROOT, b".", b"."), "pivot_root")
        _check(_libc.umount2(b".", _MNT_DETACH), "detach the old root")
        os.chdir("/")
        kernel = os.fork()
        if kernel:
            _seal_sockets(kernel)
        _drop_privileges(privileged, inner)
    except BaseException:  # noqa: BLE001 - the waiter reports the init's end as a dead kernel
        os._exit(1)
    if kernel:
        _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)  # a change of user id cleared it
        _init(kernel)
    _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != 1:
        os._exit(1)
    _limit(walls.bounds)
    os.chdir(HOME)


def _drop_privileges(privileged: bool, inner: int) -> None:
    """Become ``inner`` with no capability, none to regain, and ``no_new_privs``."""
    _drop_bounding_set()
    if privileged:
        os.setgroups([])
        os.setresgid(inner, inner, inner)
        os.setresuid(inner, inner, inner)
    _drop_capabilities()
    _check(_prctl(_PR_SET_NO_NEW_PRIVS, 1), "no_new_privs")


def _seal_sockets(kernel: int, seconds: float = 60.0) -> None:
    """In the init: once the kernel has bound its sockets, make their folder read-only, so
    that no code of the kernel can put a link in a socket's place for the grader to follow
    (the grader reaches the sockets from outside, where a link would point anywhere)."""
    end = time.monotonic() + seconds
    while len(os.listdir(SOCKETS)) < SOCKET_FILES and time.monotonic() < end:
        ended, status = os.waitpid(kernel, os.WNOHANG)
        if ended:  # the kernel ended before it listened: so does its namespace
            os._exit(os.waitstatus_to_exitcode(status) & 0xFF)
        time.sleep(0.002)
    flags = _MS_BIND | _MS_REMOUNT | _MS_RDONLY | _MS_NOSUID | _MS_NODEV | _MS_NOEXEC
    _mount(None, SOCKETS, None, flags)


def _megabytes(count: int) -> str:
    return f"{count / 2**20:g} MB"


def pressure(pid: int, bounds: Bounds) -> list[str]:
    """Which bounds the walled kernel whose init is ``pid`` is at now, said in words: its
    scratch space full, as many processes and threads as it may have, an address space at
    its bound. Read from the grader's side through ``/proc/<pid>/root``."""
    inside = f"/proc/{pid}/root"
    found = []
    try:
        space = os.statvfs(inside + HOME)
        if space.f_bavail * space.f_frsize < max(2**20, bounds.scratch // 100):
            found.append(f"its files filled the {_megabytes(bounds.scratch)} of scratch space")
        tasks = 0
        for entry in os.listdir(inside + "/proc"):
            if entry.isdigit():
                try:
                    tasks += len(os.listdir(f"{inside}/proc/{entry}/task"))
                except OSError:
                    pass  # ended meanwhile
        if tasks >= bounds.processes - 1:
            found.append(f"it ran {tasks} processes and threads, its bound is {bounds.processes}")
        with open(f"{inside}/proc/{KERNEL_PID}/status", encoding="utf-8") as status:
            peak = next(
                (int(line.split()[1]) * 1024 for line in status if line.startswith("VmPeak:")), 0
            )
        if peak >= 0.95 * bounds.memory:
            found.append(f"its memory reached the {_megabytes(bounds.memory)} bound")
    except OSError:
        pass  # the kernel has ended: nothing more to read
    return found


def available(walls: Walls | None = None, *, user_namespace: bool | None = None) -> str | None:
    """Why walls cannot be built here, or None when they can (a trial without a kernel);
    ``user_namespace`` as for :func:`enter`."""
    if not sys.platform.startswith("linux") or platform.machine() not in _PIVOT_ROOT:
        return (
            f"walls need Linux on x86_64 or aarch64; this is {sys.platform} on {platform.machine()}"
        )
    import tempfile

    with tempfile.TemporaryDirectory(prefix="decompkit-walls-") as folder:
        reader, writer = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(reader)
            try:
                enter(
                    walls or Walls(),
                    folder,
                    {},
                    b"{}",
                    65534,
                    lambda found: os.write(writer, str(found).encode()[:400]),
                    user_namespace=user_namespace,
                )
                inside = os.getuid() != 0 and not os.path.exists(folder)
                os._exit(0 if inside and os.listdir(SOCKETS) == ["kernel.json"] else 3)
            except BaseException:  # noqa: BLE001 - any failure means no walls
                os._exit(2)
        os.close(writer)
        said = os.read(reader, 500).decode(errors="replace")
        os.close(reader)
        _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    if not said.isdigit():
        return said or f"the trial kernel ended with {code} before its walls were built"
    return None if code == 0 else f"a trial kernel did not find itself inside its walls ({code})"
