"""The walls themselves: built as root and the way an ordinary user builds them, refused
in one line where they cannot be built, bounds that are checked where they are given."""

from __future__ import annotations

import asyncio
import json
import os
import shutil

import pytest

from decompkit.course.engine import sandbox
from decompkit.course.engine.environment import python_folders, walled_environment
from decompkit.course.engine.kernels import KernelFactory
from decompkit.course.engine.sandbox import Bounds, Walls
from decompkit.course.grade import grade_class
from decompkit.course.grade import main as grade_main
from decompkit.course.settings import GradingError

from .submissions import ROOT

WHY = sandbox.available()
needs_walls = pytest.mark.skipif(WHY is not None, reason=f"no walls here: {WHY}")


def ask_walled(probe: str, folder, files=None, *, user_namespace=None, walls=None) -> dict:
    """What ``probe`` (code that prints one line of JSON) prints in a walled kernel."""

    async def ask():
        env = walled_environment(dict(os.environ))
        factory = KernelFactory(
            folder,
            env,
            ["import json"],
            walls=walls or Walls(python_folders(), Bounds()),
            user_namespace=user_namespace,
        )
        kernel = await factory.start({}, files or {})
        try:
            msg_id = kernel.kc.execute(probe)
            while True:
                msg = await kernel.kc.get_iopub_msg(timeout=30)
                if msg["parent_header"].get("msg_id") == msg_id and msg["msg_type"] == "stream":
                    return json.loads(msg["content"]["text"])
        finally:
            await kernel.kill()
            factory.close()

    return asyncio.run(ask())


@needs_walls
@pytest.mark.parametrize("user_namespace", [False, True], ids=["as-root", "user-namespace"])
def test_a_kernel_inside_walls_sees_only_itself(tmp_path, user_namespace):
    if not user_namespace and os.geteuid() != 0:
        pytest.skip("building walls without a user namespace needs root")
    probe = (
        "import json, os\n"
        "print(json.dumps({'pids': sorted(int(p) for p in os.listdir('/proc') if p.isdigit()),\n"
        "    'uid': os.getuid(), 'home': os.getcwd(), 'files': sorted(os.listdir('.')),\n"
        f"    'sees_run_folder': os.path.exists({str(tmp_path)!r}), 'caps': [l for l in\n"
        "    open('/proc/self/status') if l.startswith(('CapEff', 'CapBnd', 'NoNewPrivs'))],\n"
        "    'sealed': sealed()}))\n"
    )
    probe = (
        "import errno, os\n"
        "def sealed():\n"  # a link in a socket's place would lead the grader anywhere
        "    try:\n"
        "        os.rename('/run/kernel/k-1', '/run/kernel/moved')\n"
        "    except OSError as error:\n"
        "        return errno.errorcode[error.errno]\n"
        "    return 'renamed'\n"
    ) + probe
    (tmp_path / "data.csv").write_text("a,b\n")
    (tmp_path / "link.csv").symlink_to("/etc/hostname")

    files = {"data.csv": tmp_path / "data.csv", "link.csv": tmp_path / "link.csv"}
    seen = ask_walled(probe, tmp_path, files, user_namespace=user_namespace)
    assert seen["pids"] == [1, 2]
    assert seen["uid"] != 0 and seen["home"] == sandbox.HOME
    assert "data.csv" in seen["files"] and "link.csv" not in seen["files"]
    assert not seen["sees_run_folder"]
    caps = "".join(seen["caps"])
    assert "CapEff:\t0000000000000000" in caps and "CapBnd:\t0000000000000000" in caps
    assert "NoNewPrivs:\t1" in caps
    assert seen["sealed"] == "EROFS"


def test_grading_refuses_in_one_line_where_walls_cannot_be_built(tmp_path, monkeypatch, capsys):
    root = tmp_path / "course"
    (root / "solutions").mkdir(parents=True)
    shutil.copy2(ROOT / "nbgrader_config.py", root)
    shutil.copytree(ROOT / "solutions" / "decomp", root / "solutions" / "decomp")
    (root / "submitted" / "s1" / "decomp").mkdir(parents=True)
    shutil.copy2(
        ROOT / "notebooks" / "decomp" / "01-chain-reliability.ipynb",
        root / "submitted" / "s1" / "decomp",
    )
    reason = "unshare (user namespace): Operation not permitted"
    monkeypatch.setattr("decompkit.course.engine.environment.available", lambda *a, **k: reason)
    with pytest.raises(
        GradingError, match=r"cannot build walls .*Operation not permitted.*--no-sandbox"
    ):
        grade_class(root, "decomp")
    assert grade_main(["decomp", "--root", str(root), "--workers", "1"]) == 2
    err = capsys.readouterr().err
    assert (
        err.count("\n") == 1
        and err.startswith("error: cannot build walls")
        and "--no-sandbox" in err
    )
    assert not (root / "records" / "decomp").exists()  # nothing graded, nothing written

    run = grade_class(root, "decomp", sandbox=False, timeout=10)
    assert run.walls is None
    record = json.loads((root / "records" / "decomp" / "s1.json").read_text())
    assert record["sandbox"] is None  # the record says it was graded without walls


@pytest.mark.parametrize("name", ["memory", "processes", "scratch", "open_files"])
@pytest.mark.parametrize("value", [0, -1, 1.5, True, "2"])
def test_bounds_name_the_bad_value(name, value):
    with pytest.raises(ValueError, match=rf"{name} must be a whole number >= 1, got {value!r}"):
        Bounds(**{name: value})


def test_a_bad_bound_in_the_configuration_is_one_line(tmp_path):
    from decompkit.course.settings import settings

    text = (ROOT / "nbgrader_config.py").read_text()
    (tmp_path / "nbgrader_config.py").write_text(
        text + "\nc.GradingLimits.kernel_scratch_mb = -5\n"
    )
    with pytest.raises(GradingError, match=r"kernel_scratch_mb .* must be a number >= 1, got -5"):
        settings(tmp_path)


@needs_walls
def test_a_kernel_that_cannot_enter_its_walls_is_not_started_without_them(tmp_path):
    from decompkit.course.engine.kernels import KernelStartError

    (tmp_path / "big.bin").write_bytes(bytes(1 << 20))  # more than its scratch space holds
    walls = Walls(python_folders(), Bounds(scratch=4096))

    async def start():
        factory = KernelFactory(tmp_path, walled_environment(dict(os.environ)), [], walls=walls)
        try:
            with pytest.raises(KernelStartError, match="could not start: .*No space left"):
                await factory.start({}, {"big.bin": tmp_path / "big.bin"})
        finally:
            factory.close()

    asyncio.run(start())


@needs_walls
def test_a_hostile_kernel_cannot_see_the_course_the_kit_s_source_or_other_kernels(tmp_path):
    """What a kernel sees of the machine, asked from inside one."""
    probe = (
        "import os, socket, json\n"
        "seen = {{'solutions': os.path.exists({!r}), 'readme': os.path.exists({!r}),\n"
        "        'checkout': os.path.exists({!r}), 'processes': sorted(\n"
        "            int(p) for p in os.listdir('/proc') if p.isdigit())}}\n"
        "try:\n"
        "    socket.create_connection(('127.0.0.1', 22), timeout=1); seen['network'] = True\n"
        "except OSError:\n"
        "    seen['network'] = False\n"
        "try:\n"
        "    open('/usr/lib/x', 'w'); seen['writes_system'] = True\n"
        "except OSError:\n"
        "    seen['writes_system'] = False\n"
        "seen['uid'] = os.getuid()\n"
        "print(json.dumps(seen))\n"
    ).format(str(ROOT / "solutions"), str(ROOT / "README.md"), str(ROOT / "src"))

    seen = ask_walled(probe, tmp_path)
    assert seen == {
        "solutions": False,
        "readme": False,
        "checkout": False,
        "processes": [1, 2],
        "network": False,
        "writes_system": False,
        "uid": seen["uid"],
    }
    assert seen["uid"] != 0


@needs_walls
def test_a_read_only_folder_under_tmp_is_seen_over_the_kernels_own_tmp(tmp_path):
    # A clone under /tmp has its environment there, and every run's copy of the kit is there.
    shared = tmp_path / "kit"
    shared.mkdir()
    (shared / "module.py").write_text("x = 1\n")
    probe = (
        "import json, os\n"
        f"print(json.dumps({{'seen': os.path.exists({str(shared / 'module.py')!r}),\n"
        "    'tmp_writable': os.access('/tmp', os.W_OK)}))\n"
    )
    walls = Walls((*python_folders(), str(shared)), Bounds())
    assert str(tmp_path).startswith("/tmp/")
    assert ask_walled(probe, tmp_path, walls=walls) == {"seen": True, "tmp_writable": True}
