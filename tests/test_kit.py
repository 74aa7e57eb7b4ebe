"""kit.py: what it decides to install, the commands it builds, the lock and the files exported
from it, a real set-up on a stand-in project, and the JupyterLab it opens.

The decisions and command lines are tested in-process. The set-up tests run kit.py on a tiny
stand-in project (``decompkit`` 0.0.0 needing ``fakedep``, and ``fakedev`` for [dev], built by
an in-tree backend from local wheels), so they install for real, offline, in seconds with uv.
Tests marked ``slow`` (the pip route, JupyterLab, the set-up benchmark) start processes that
take several seconds each; ``kit.py test --fast`` leaves them out.
"""

import ast
import importlib.util
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
import tomllib
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]
BASE_PYTHON = getattr(sys, "_base_executable", None) or sys.executable


def _load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


kit = _load(ROOT / "kit.py", "kit_under_test")
run = _load(ROOT / "tests" / "run.py", "run_under_test")


def _local_uv() -> str | None:
    """A uv that runs here, as new as kit.py asks (on PATH, or the one kit.py fetched)."""
    needed = tuple(int(part) for part in kit.UV_VERSION.split("."))
    for candidate in (os.environ.get("DECOMPKIT_UV"), shutil.which("uv"), kit._fetched_uv()):
        version = candidate and kit.uv_version(candidate)
        if version and version >= needed:
            return str(candidate)
    return None


# --- what to install: the stamp and the plan -----------------------------------------------

STATE = {"lock": "L1", "pyproject": "P1", "python": "3.11.7"}
LAB = dict(STATE, extras=[])
DEV = dict(STATE, extras=["dev"])


@pytest.mark.parametrize(
    ("stamp", "wanted", "fresh", "extras", "why"),
    [
        # a fresh clone: what the command needs, nothing more
        (None, LAB, True, [], r"^setting up \.venv from uv\.lock \(first run\)$"),
        (None, DEV, True, ["dev"], r"^setting up \.venv from uv\.lock \(first run\)$"),
        # a .venv with no record this kit can read: an old kit's, a hand-made or unfinished one
        (None, LAB, False, [], r"^setting up \.venv from uv\.lock \(it has no record of a "),
        # test after lab: the test tools are added
        (LAB, DEV, False, ["dev"], r"^adding the test tools \(the \[dev\] extra\) to \.venv$"),
        # the lock, the project file or the Python changed: the extras installed before stay
        (DEV, dict(LAB, lock="L2"), False, ["dev"], r"^uv\.lock changed: bringing \.venv up "),
        (LAB, dict(LAB, python="3.12.1"), False, [], r"^the Python changed: "),
        (DEV, dict(LAB, python="3.12.1", lock="L2"), False, ["dev"], r"^the Python and uv\.lock "),
        (LAB, dict(LAB, pyproject="P2"), False, [], r"`python3 kit\.py lock` first updates"),
    ],
)
def test_plan_installs_what_is_missing_and_keeps_what_was_there(stamp, wanted, fresh, extras, why):
    got_extras, got_why = kit.plan(stamp, wanted, fresh=fresh)
    assert got_extras == extras
    assert re.search(why, got_why), got_why


@pytest.mark.parametrize(
    ("stamp", "wanted"),
    [(LAB, LAB), (DEV, DEV), (DEV, LAB)],  # lab after lab, test after test, lab after test
)
def test_plan_does_nothing_when_the_environment_matches(stamp, wanted):
    assert kit.plan(stamp, wanted, fresh=False) is None


def test_the_wanted_state_follows_the_lock_the_project_file_and_the_python(tmp_path):
    (tmp_path / "uv.lock").write_text("lock 1")
    (tmp_path / "pyproject.toml").write_text("project 1")
    first = kit.wanted_state(["dev"], root=tmp_path)
    assert first["extras"] == ["dev"]
    assert first["python"] == ".".join(map(str, sys.version_info[:3]))
    (tmp_path / "uv.lock").write_text("lock 2")
    second = kit.wanted_state(["dev"], root=tmp_path)
    assert second["lock"] != first["lock"] and second["pyproject"] == first["pyproject"]


def test_a_stamp_this_kit_cannot_read_counts_as_none(tmp_path):
    stamp = tmp_path / "stamp"
    assert kit.read_stamp(stamp) is None  # absent
    stamp.write_text("0123abcd (3, 11, 7)")  # the plain-text stamp of early kit versions
    assert kit.read_stamp(stamp) is None
    old = {"pyproject": "h", "python": "3.11.7", "extras": ["dev"], "installer": "uv 0.13.9"}
    stamp.write_text(json.dumps(old))  # the stamp of the kit before the lock: no "lock"
    assert kit.read_stamp(stamp) is None
    stamp.write_text(json.dumps(dict(old, lock="L")))
    assert kit.read_stamp(stamp)["extras"] == ["dev"]


# --- the commands kit.py builds and runs ---------------------------------------------------


def test_uv_syncs_the_lock_frozen_into_this_python_with_the_extras():
    command = kit.uv_sync_command("uv", ["dev"])
    assert command[:3] == ["uv", "sync", "--frozen"]
    assert "--inexact" in command and "--extra=dev" in command
    assert command[command.index("--python") + 1] == sys.executable
    assert "--compile-bytecode" in command  # for the tests' many processes
    lab = kit.uv_sync_command("uv", [])
    assert not any(arg.startswith("--extra") for arg in lab)
    assert "--compile-bytecode" not in lab  # a student's first start stays short


@pytest.mark.parametrize(("extras", "file"), [([], "lab.txt"), (["dev"], "dev.txt")])
def test_pip_installs_the_exported_pins_then_the_kit_without_dependencies(extras, file):
    requirements, project = kit.pip_commands(extras)
    assert requirements == [str(kit.PYTHON), "-m", "pip", "install", "-r", f"requirements/{file}"]
    assert project == [str(kit.PYTHON), "-m", "pip", "install", "--no-deps", "-e", "."]
    assert (ROOT / requirements[-1]).is_file()


@pytest.fixture
def ran(monkeypatch):
    """What kit.py would run instead of itself (``_replace_process``) or in a child
    (``run_command``)."""
    calls = []
    monkeypatch.setattr(kit, "_replace_process", lambda command, env=None: calls.append(command))
    monkeypatch.setattr(kit, "run_command", lambda command: calls.append(command) or 0)
    return calls


@pytest.fixture
def suite_ran(monkeypatch):
    """The pytest runs tests/run.py would make, each answering the next status given."""
    calls, statuses = [], []
    answer = lambda command: calls.append(command) or (statuses or [0]).pop(0)  # noqa: E731
    monkeypatch.setattr(run.kit, "run_command", answer)
    return calls, statuses


def test_kit_test_becomes_the_suites_runner_with_its_arguments(ran):
    kit.test(["-k", "markov", "-x"])
    assert ran == [[str(kit.PYTHON), str(ROOT / "tests" / "run.py"), "-k", "markov", "-x"]]


def test_the_suite_keeps_its_bytecode_even_where_python_is_told_not_to(monkeypatch):
    """Each test worker, kernel and grader of a run would otherwise compile the kit again."""
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    given = []
    monkeypatch.setattr(kit, "_replace_process", lambda command, env=None: given.append(env))
    kit.test([])
    assert "PYTHONDONTWRITEBYTECODE" not in given[0] and given[0]["VIRTUAL_ENV"] == str(kit.VENV)


def test_test_runs_pytest_with_the_arguments_given_and_shows_the_command(suite_ran, capsys):
    assert run.main(["-k", "markov", "-x"]) == 0
    assert suite_ran[0] == [[str(kit.PYTHON), "-m", "pytest", "-k", "markov", "-x"]]
    assert capsys.readouterr().out == "[kit] running .venv/bin/python -m pytest -k markov -x\n"


def test_test_runs_the_suite_on_workers_then_the_tests_that_need_the_machine_alone(
    suite_ran, capsys
):
    run.main([])
    pytest_ = [str(kit.PYTHON), "-m", "pytest"]
    workers = str(min(4, os.cpu_count() + 1))
    first = [*pytest_, "-n", workers, "-m", "not alone", "--durations=25"]
    assert suite_ran[0] == [first, [*pytest_, "tests/browser", "-m", "alone"]]
    assert capsys.readouterr().out == (
        f"[kit] running .venv/bin/python -m pytest -n {workers} -m 'not alone' --durations=25\n"
        "[kit] running .venv/bin/python -m pytest tests/browser -m alone\n"
    )


def test_every_test_marked_alone_is_where_the_runner_looks_for_them():
    """The runner collects only tests/browser for its second part: a test marked alone
    elsewhere would never run."""
    marked = [
        str(path.relative_to(ROOT))
        for path in (ROOT / "tests").rglob("test_*.py")
        if "mark.alone" in path.read_text(encoding="utf-8") and path.name != "test_kit.py"
    ]
    assert marked, "no test is marked alone: kit.py test's second part would run nothing"
    assert all(path.startswith(run.ALONE_TESTS + "/") for path in marked), marked


def test_every_long_share_the_workers_take_first_is_a_share_of_the_suite():
    """conftest.LONG_SHARES names shares of the suite: a renamed or moved file would drop out
    of the order silently and end the run late again."""
    conftest = _load(ROOT / "conftest.py", "root_conftest")
    shares = {
        conftest._group(str(path.relative_to(ROOT))) for path in (ROOT / "tests").rglob("test_*.py")
    }
    missing = [share for share in conftest.LONG_SHARES if share not in shares]
    assert not missing, missing
    assert len(set(conftest.LONG_SHARES)) == len(conftest.LONG_SHARES)


@pytest.mark.parametrize(("first", "second", "status"), [(1, 0, 1), (0, 1, 1), (2, 0, 2)])
def test_test_fails_when_either_part_fails_and_stops_after_a_ctrl_c(
    suite_ran, first, second, status
):
    calls, statuses = suite_ran
    statuses += [first, second]
    assert run.main([]) == status
    assert len(calls) == (1 if first == run.PYTEST_INTERRUPTED else 2)


def test_ctrl_c_reaches_the_child_and_kit_waits_for_it_to_stop(tmp_path):
    """A course command (the grader finishing the student it holds) or pytest (stopping its
    servers) needs its own stop after Ctrl-C; kit.py must not kill it a moment later."""
    done = tmp_path / "stopped-in-its-own-way"
    child = (
        "import signal, sys, time, pathlib\n"
        "def stop(*_):\n"
        "    time.sleep(1.5)\n"
        f"    pathlib.Path({str(done)!r}).write_text('x')\n"
        "    sys.exit(3)\n"
        "signal.signal(signal.SIGINT, stop)\n"
        "print('ready', flush=True)\n"
        "time.sleep(60)\n"
    )
    runner = (
        "import signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler)\n"
        f"sys.path.insert(0, {str(ROOT)!r}); import kit\n"
        f"sys.exit(kit.run_command([sys.executable, '-c', {child!r}]))\n"
    )
    process = subprocess.Popen(
        [sys.executable, "-c", runner],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        assert process.stdout.readline() == "ready\n"
        os.killpg(process.pid, signal.SIGINT)  # what Ctrl-C in a terminal does
        out, _ = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    assert done.exists(), out
    assert process.returncode == 3, out
    assert "Traceback" not in out


@pytest.mark.skipif(os.name != "posix", reason="sends itself SIGINT")
def test_ctrl_c_never_raises_inside_the_wait_for_the_child(monkeypatch):
    """Popen.wait holds a lock while it asks for the child's status; a KeyboardInterrupt
    raised just inside it left the lock held, and kit.py's next wait hung for good (seen
    once in CI). Here a wait that a raised interrupt breaks the same way."""

    class Child:
        def __init__(self, *args, **kwargs):
            self.lock = threading.Lock()

        def wait(self):
            if not self.lock.acquire(timeout=2):
                raise AssertionError("an interrupted wait left the child's lock held")
            os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C, just as the lock is taken
            time.sleep(0.05)  # Python runs the SIGINT handler here
            self.lock.release()
            return 7

    monkeypatch.setattr(kit.subprocess, "Popen", Child)
    before = signal.getsignal(signal.SIGINT)
    monkeypatch.setattr(kit.signal, "signal", _keep_sigterm(signal.signal))
    assert kit.run_command(["child"]) == 7
    assert signal.getsignal(signal.SIGINT) is before


def test_a_background_job_that_ignores_ctrl_c_runs_its_command_so_too():
    """A script's background job has SIGINT ignored, so that Ctrl-C for the foreground
    leaves it alone: the course command kit.py starts for it must ignore it too."""
    child = "import signal; print(signal.getsignal(signal.SIGINT) is signal.SIG_IGN)"
    runner = (
        "import signal, sys; signal.signal(signal.SIGINT, signal.SIG_IGN)\n"
        f"sys.path.insert(0, {str(ROOT)!r}); import kit\n"
        f"sys.exit(kit.run_command([sys.executable, '-c', {child!r}]))\n"
    )
    done = subprocess.run([sys.executable, "-c", runner], capture_output=True, text=True)
    assert (done.returncode, done.stdout) == (0, "True\n"), done.stderr


def test_a_sigint_handler_python_cannot_set_back_is_left_alone(monkeypatch):
    """``signal.getsignal`` gives None for a handler set outside Python (an embedding
    program's): kit.py neither replaces it nor fails to put it back after the command."""
    set_handlers = []
    monkeypatch.setattr(kit.signal, "getsignal", lambda number: None)
    monkeypatch.setattr(kit.signal, "signal", lambda *args: set_handlers.append(args))
    monkeypatch.setattr(
        kit.subprocess, "Popen", lambda *a, **k: type("C", (), {"wait": lambda _: 5})()
    )
    assert kit.run_command(["child"]) == 5
    assert [number for number, _ in set_handlers] == (
        [signal.SIGTERM] if os.name == "posix" else []
    )


def _keep_sigterm(set_handler):
    """signal.signal that leaves the test process's own SIGTERM handler alone."""

    def set_unless_sigterm(number, handler):
        return None if number == signal.SIGTERM else set_handler(number, handler)

    return set_unless_sigterm


def test_test_fast_leaves_out_the_end_to_end_tiers_and_passes_the_rest_on(suite_ran, capsys):
    run.main(["-x", "--fast", "tests/test_dag.py"])
    command = suite_ran[0][0]
    assert command[:3] == [str(kit.PYTHON), "-m", "pytest"]
    assert command[-2:] == ["-x", "tests/test_dag.py"] and "--fast" not in command
    assert {f"--ignore={path}" for path in run.FAST_TIER_SKIPS} <= set(command)
    assert command[command.index("-m", 3) + 1] == "not slow"
    assert command[command.index("-n") + 1] == str(min(4, os.cpu_count()))  # xdist workers
    assert command[command.index("--dist") + 1] == "worksteal"  # no file holds up a worker
    shown = capsys.readouterr().out
    assert shown.startswith("[kit] running .venv/bin/python -m pytest --ignore=")
    assert " -m 'not slow' -n " in shown and shown.endswith(" -x tests/test_dag.py\n"), shown


def test_the_fast_tier_names_folders_and_files_that_exist():
    """A renamed folder would otherwise slip into the fast tier unnoticed."""
    for path in run.FAST_TIER_SKIPS:
        assert (ROOT / path).exists(), path
    markers = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]
    assert any(line.startswith("slow:") for line in markers["ini_options"]["markers"])


@pytest.mark.parametrize(
    ("command", "extras"),
    [("lab", ()), ("test", ("dev",)), ("bench", ("dev",)), ("grade", ()), ("nbgrader", ())],
)
def test_each_command_sets_up_what_it_needs_then_runs(monkeypatch, command, extras):
    events = []
    monkeypatch.setattr(kit, "set_up", lambda wanted=(): events.append(("set_up", wanted)) or 0)
    monkeypatch.setitem(kit.COMMANDS, command, lambda args: events.append((command, args)) or 0)
    assert kit.main([command, "--some", "arg"]) == 0
    assert events == [("set_up", extras), (command, ["--some", "arg"])]


def test_a_failed_set_up_runs_nothing_and_lock_needs_no_set_up(monkeypatch):
    events = []
    monkeypatch.setattr(kit, "set_up", lambda wanted=(): events.append("set_up") or 1)
    monkeypatch.setitem(kit.COMMANDS, "lab", lambda args: events.append("lab") or 0)
    monkeypatch.setitem(kit.COMMANDS, "lock", lambda args: events.append("lock") or 0)
    assert kit.main(["lab"]) == 1 and events == ["set_up"]
    assert kit.main(["lock"]) == 0 and events == ["set_up", "lock"]


def test_an_unknown_command_prints_the_usage(capsys):
    assert kit.main(["serve"]) == 2
    usage = capsys.readouterr().err
    assert all(f"python3 kit.py {name}" in usage for name in kit.COMMANDS)


def test_a_python_too_old_is_told_in_one_line(monkeypatch, capsys):
    monkeypatch.setattr(kit, "NEEDED_PYTHON", (99, 0))
    assert kit.main(["lab"]) == 1
    out = capsys.readouterr().out
    this = ".".join(map(str, sys.version_info[:3]))
    assert out == f"[kit] decompkit needs Python 3.11 or newer, this is {this}: " + (
        "install a newer Python and run the same command with it\n"
    )


def _fake_uv(tmp_path, version: str, sync_status: int = 0) -> str:
    """A script that answers ``--version`` like uv and fails anything else with an error."""
    script = tmp_path / f"uv-{version}"
    script.write_text(
        "#!/bin/sh\n"
        f'if [ "$1" = --version ]; then echo "uv {version} (fake)"; exit 0; fi\n'
        'echo "error: Failed to fetch: https://files.pythonhosted.org/x" >&2\n'
        f"exit {sync_status}\n"
    )
    script.chmod(0o755)
    return str(script)


def test_find_uv_takes_a_recent_uv_and_passes_over_an_old_one(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PATH", str(tmp_path))  # no uv on PATH
    monkeypatch.setattr(kit, "UV_HOME", tmp_path / "none")
    monkeypatch.setattr(kit, "fetch_uv", lambda: "fetched")
    monkeypatch.setenv("DECOMPKIT_UV", _fake_uv(tmp_path, kit.UV_VERSION))
    assert kit.find_uv() == os.environ["DECOMPKIT_UV"]
    monkeypatch.setenv("DECOMPKIT_UV", _fake_uv(tmp_path, "0.1.0"))
    assert kit.find_uv() == "fetched"
    assert f"is older than uv {kit.UV_VERSION}" in capsys.readouterr().out
    monkeypatch.setenv("DECOMPKIT_UV", "off")
    assert kit.find_uv() is None
    assert capsys.readouterr().out == "[kit] DECOMPKIT_UV says not to use uv: installing with pip\n"


@pytest.mark.slow
def test_without_pypi_fetching_uv_fails_in_one_line_and_leaves_nothing(
    tmp_path, monkeypatch, capsys
):
    monkeypatch.setenv("PIP_NO_INDEX", "1")  # what PyPI out of reach looks like to pip
    monkeypatch.setenv("PIP_FIND_LINKS", str(tmp_path))
    monkeypatch.setattr(kit, "ROOT", tmp_path)
    assert kit.fetch_uv(home=tmp_path / ".venv-tools" / "uv") is None
    lines = capsys.readouterr().out.splitlines()
    assert lines[-1] == (
        "[kit] could not fetch uv (PyPI out of reach?); "
        "installing with pip instead, which is slower"
    )
    assert list((tmp_path / ".venv-tools").iterdir()) == []


# --- the lock and what is exported from it ---------------------------------------------------


def _pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def _lock() -> dict:
    return tomllib.loads((ROOT / "uv.lock").read_text())


def _lock_packages() -> dict[str, list[dict]]:
    packages: dict[str, list[dict]] = {}
    for package in _lock()["package"]:
        packages.setdefault(package["name"], []).append(package)
    return packages


def _specs(requirements, extra=None) -> set[tuple[str, str, str]]:
    out = set()
    for line in requirements:
        requirement = Requirement(line)
        marker = f"extra == '{extra}'" if extra else ""
        out.add((canonicalize_name(requirement.name), str(requirement.specifier), marker))
    return out


def test_the_lock_was_made_from_pyproject_toml():
    """Every dependency and bound of pyproject.toml is the one uv.lock was resolved for."""
    project = _pyproject()["project"]
    kit_entry = _lock_packages()[project["name"]][0]
    locked = {
        (canonicalize_name(entry["name"]), entry.get("specifier", ""), entry.get("marker", ""))
        for entry in kit_entry["metadata"]["requires-dist"]
    }
    wanted = _specs(project["dependencies"])
    for extra, requirements in project["optional-dependencies"].items():
        wanted |= _specs(requirements, extra)
    assert locked == wanted, "pyproject.toml's dependencies changed: run `python3 kit.py lock`"
    assert _lock()["requires-python"] == project["requires-python"]


def _pins(path: Path) -> dict[str, set[str]]:
    """``{name: {version, ...}}`` of a requirements file uv exported (one pin a line)."""
    pins: dict[str, set[str]] = {}
    for line in path.read_text().splitlines():
        if line and not line.startswith((" ", "#")):
            requirement = Requirement(line)
            (version,) = [spec.version for spec in requirement.specifier if spec.operator == "=="]
            pins.setdefault(canonicalize_name(requirement.name), set()).add(version)
    return pins


def _needed(packages, name: str, extras=()) -> set[str]:
    """The names of ``name``'s dependencies, with ``extras``, all the way down (the lock's
    graph; markers ignored: the exports cover every platform)."""
    seen, todo = set(), [(name, tuple(extras))]
    while todo:
        current, wanted = todo.pop()
        for package in packages[current]:
            entries = list(package.get("dependencies", []))
            for extra in wanted:
                entries += package.get("optional-dependencies", {}).get(extra, [])
            for entry in entries:
                key = (entry["name"], tuple(entry.get("extra", ())))
                if key not in seen:
                    seen.add(key)
                    todo.append(key)
    return {dependency for dependency, _ in seen}


@pytest.mark.parametrize(("extras", "file"), [((), "lab.txt"), (("dev",), "dev.txt")])
def test_the_exported_requirements_pin_what_the_lock_pins(extras, file):
    """pip's route installs the versions uv's does: the files cannot drift from uv.lock."""
    packages = _lock_packages()
    pins = _pins(ROOT / "requirements" / file)
    assert set(pins) == _needed(packages, "decompkit", extras) - {"decompkit"}
    for name, versions in pins.items():
        assert versions == {p["version"] for p in packages[name]}, name


def test_the_lab_requirements_hold_no_test_tool():
    lab = _pins(ROOT / "requirements" / "lab.txt")
    assert not {"pytest", "hypothesis", "ruff", "playwright", "networkx"} & set(lab)


@pytest.mark.parametrize(("extras", "file"), list(kit.REQUIREMENTS.items()))
def test_the_exported_requirements_are_what_uv_exports_now(tmp_path, extras, file):
    uv = _local_uv()
    if uv is None:
        pytest.skip("no uv here (kit.py fetches one on its first run with network)")
    command = [part for part in kit.export_command(uv, extras, file) if part not in {"-o", file}]
    out = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=True).stdout
    committed = (ROOT / file).read_text().splitlines(keepends=True)
    exported = out.splitlines(keepends=True)
    # the two header lines name the command, with or without "-o FILE"
    assert committed[2:] == exported[2:], f"{file} is stale: run `python3 kit.py lock`"


def test_environment_yml_installs_the_pinned_lab_requirements():
    """Conda / Binder: a Python the lock allows, pip, then requirements/lab.txt and the kit."""
    conda, pip, section = [], [], None
    for raw in (ROOT / "environment.yml").read_text().splitlines():
        item = raw.split("#", 1)[0].rstrip()
        if item and not item.startswith(" "):
            section = item.rstrip(":")  # a top-level key: name, channels, dependencies
        elif item.strip() == "- pip:":
            section = "pip"
        elif item.strip().startswith("- ") and section in {"dependencies", "pip"}:
            (conda if section == "dependencies" else pip).append(item.strip()[2:].strip())
    assert pip == ["-r requirements/lab.txt", "-e ."], pip
    assert "pip" in conda and len(conda) == 2, conda
    (python,) = [spec for spec in conda if spec.startswith("python=")]
    major, minor = map(int, python.split("=")[1].split(".")[:2])
    assert (major, minor) >= kit.NEEDED_PYTHON
    assert _lock()["requires-python"] == ">={}.{}".format(*kit.NEEDED_PYTHON)


def test_lab_needs_no_test_tools_and_networkx_is_one_of_them():
    project = _pyproject()["project"]
    runtime = {canonicalize_name(Requirement(r).name) for r in project["dependencies"]}
    dev = {canonicalize_name(Requirement(r).name) for r in project["optional-dependencies"]["dev"]}
    assert {"pytest", "hypothesis", "ruff", "playwright", "networkx"} <= dev
    assert not runtime & dev
    # what notebooks, the self-check and the grader import is not a test-only tool
    assert {"jupyterlab", "ipykernel", "nbgrader", "nbformat", "nbclient"} <= runtime
    imports = set()
    for path in (ROOT / "src").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                imports |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                imports.add(node.module.split(".")[0])
    assert "networkx" not in imports, "the kit imports networkx: it belongs in dependencies"


# --- the set-up for real, on a stand-in project ----------------------------------------------

BACKEND = '''\
"""A PEP 517 / 660 build backend just big enough for kit.py's tests (offline, no setuptools).

It builds ``decompkit`` 0.0.0, which needs ``fakedep`` and, for [dev], ``fakedev``. With
FAKE_BACKEND_BLOCK set it writes that file and waits to be interrupted.
"""
import base64, hashlib, os, time, zipfile
from pathlib import Path


def write_wheel(directory, name, version, files, requires=(), extras=()):
    """A wheel of ``files`` ({path: text}) with the given Requires-Dist lines."""
    info = f"{name}-{version}.dist-info"
    meta = [f"Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}"]
    meta += [f"Provides-Extra: {extra}" for extra in extras]
    meta += [f"Requires-Dist: {requirement}" for requirement in requires]
    files = dict(files)
    files[f"{info}/METADATA"] = "\\n".join(meta) + "\\n"
    tags = ["Wheel-Version: 1.0", "Generator: fake", "Root-Is-Purelib: true", "Tag: py3-none-any"]
    files[f"{info}/WHEEL"] = "\\n".join(tags) + "\\n"
    record = []
    for path, text in files.items():
        data = text.encode()
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{path},sha256={digest},{len(data)}")
    record.append(f"{info}/RECORD,,")
    files[f"{info}/RECORD"] = "\\n".join(record) + "\\n"
    wheel = f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(Path(directory) / wheel, "w") as archive:
        for path, text in files.items():
            archive.writestr(path, text)
    return wheel


def _build(directory):
    block = os.environ.get("FAKE_BACKEND_BLOCK")
    if block:
        Path(block).write_text("building")
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            time.sleep(0.05)
        raise SystemExit("FAKE_BACKEND_BLOCK: nobody interrupted the build")
    source = Path(__file__).resolve().parent / "src"
    return write_wheel(directory, "decompkit", "0.0.0", {"decompkit.pth": f"{source}\\n"},
                       requires=["fakedep", 'fakedev; extra == "dev"'], extras=["dev"])


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    return _build(wheel_directory)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    return _build(wheel_directory)
'''

PYPROJECT = """\
[build-system]
requires = []
build-backend = "fakebackend"
backend-path = ["."]

[project]
name = "decompkit"
version = "0.0.0"
requires-python = ">=3.11"
dependencies = ["fakedep"]

[project.optional-dependencies]
dev = ["fakedev"]
"""


@pytest.fixture
def project(tmp_path):
    """A clone-like folder (kit.py, the stand-in pyproject.toml, a uv.lock, requirements/)
    and the environment to run it in: offline, with a folder of wheels as the index."""
    root = tmp_path / "clone"
    (root / "src" / "decompkit").mkdir(parents=True)
    (root / "src" / "decompkit" / "__init__.py").write_text("")
    shutil.copy2(ROOT / "kit.py", root / "kit.py")
    (root / "pyproject.toml").write_text(PYPROJECT)
    (root / "fakebackend.py").write_text(BACKEND)
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    backend = _load(root / "fakebackend.py", "fakebackend_for_wheels")
    for name in ("fakedep", "fakedev"):
        backend.write_wheel(wheels, name, "1.0", {f"{name}.py": "VALUE = 1\n"})
    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "VIRTUAL_ENV"}}
    env.update(
        PATH=os.pathsep.join(
            p for p in env["PATH"].split(os.pathsep) if not Path(p, "uv").exists()
        ),
        PIP_CONFIG_FILE=os.devnull,  # no machine-wide index or constraint
        PIP_NO_INDEX="1",
        PIP_FIND_LINKS=str(wheels),
        PIP_CACHE_DIR=str(tmp_path / "pip-cache"),
        UV_NO_INDEX="1",
        UV_FIND_LINKS=str(wheels),
        UV_CACHE_DIR=str(tmp_path / "uv-cache"),  # the user's cache is never written
        UV_NO_CONFIG="1",
    )
    env.pop("DECOMPKIT_UV", None)
    # the lock and the exports as a developer would make them, when there is a uv
    uv = _local_uv()
    if uv:
        lock = _kit(root, dict(env, DECOMPKIT_UV=uv), "lock")
        assert lock.returncode == 0, lock.stdout + lock.stderr
    else:
        (root / "uv.lock").write_text("# no uv here: only pip's route is tested\n")
        (root / "requirements").mkdir()
        (root / "requirements" / "lab.txt").write_text("fakedep==1.0\n")
        (root / "requirements" / "dev.txt").write_text("fakedep==1.0\nfakedev==1.0\n")
    return root, env


def _kit(root, env, *argv, **popen):
    """kit.py as a student runs it (the base Python); ``set-up EXTRA...`` only sets up."""
    if argv[:1] == ("set-up",):
        code = "import sys, kit; sys.exit(kit.set_up(tuple(sys.argv[1:])))"
        command = [BASE_PYTHON, "-c", code, *argv[1:]]
    else:
        command = [BASE_PYTHON, "kit.py", *argv]
    if popen:
        return subprocess.Popen(command, cwd=root, env=env, text=True, **popen)
    return subprocess.run(command, cwd=root, env=env, capture_output=True, text=True, timeout=300)


def _imports(root, module) -> bool:
    python = root / ".venv" / kit.BIN.name / kit.PYTHON.name
    return subprocess.run([python, "-c", f"import {module}"], capture_output=True).returncode == 0


def _stamp(root):
    return json.loads((root / ".venv" / ".decompkit-installed").read_text())


@pytest.fixture
def uv():
    found = _local_uv()
    if found is None:
        pytest.skip("no uv here (kit.py fetches one on its first run with network)")
    return found


def test_lock_writes_the_lock_and_the_pinned_requirements(project, uv):
    root, _ = project
    assert 'name = "fakedep"' in (root / "uv.lock").read_text()
    assert _pins(root / "requirements" / "lab.txt") == {"fakedep": {"1.0"}}
    assert _pins(root / "requirements" / "dev.txt") == {"fakedep": {"1.0"}, "fakedev": {"1.0"}}


def test_uv_sets_up_from_the_lock_adds_the_test_tools_and_follows_a_new_lock(project, uv):
    root, env = project
    env["DECOMPKIT_UV"] = uv
    first = _kit(root, env, "set-up")
    assert first.returncode == 0, first.stdout + first.stderr
    assert first.stdout.splitlines()[0] == "[kit] setting up .venv from uv.lock (first run)"
    assert f"[kit] running uv sync --frozen --inexact --python {BASE_PYTHON}" in first.stdout
    assert re.search(r"^Installed 2 packages in ", first.stderr, re.M), first.stderr  # uv's own
    assert re.search(r"^ \+ fakedep==1\.0$", first.stderr, re.M)  # the versions installed
    done = r"^\[kit\] \.venv holds the versions in uv\.lock \(\d+\.\d s in all\)$"
    assert re.search(done, first.stdout, re.M), first.stdout
    assert _stamp(root)["installer"] == "uv " + ".".join(map(str, kit.uv_version(uv)))
    assert _imports(root, "fakedep") and not _imports(root, "fakedev")

    second = _kit(root, env, "set-up", "dev")  # test after lab: the [dev] extra too
    assert "[kit] adding the test tools (the [dev] extra) to .venv" in second.stdout
    assert "--extra=dev" in second.stdout and _imports(root, "fakedev")

    third = _kit(root, env, "set-up")  # lab after test: nothing at all
    assert third.returncode == 0 and third.stdout == third.stderr == "", third

    (root / "uv.lock").write_text((root / "uv.lock").read_text() + "\n")  # a new lock
    fourth = _kit(root, env, "set-up")
    assert "[kit] uv.lock changed: bringing .venv up to date" in fourth.stdout
    assert "--extra=dev" in fourth.stdout  # the test tools stay up to date too
    assert _stamp(root)["extras"] == ["dev"]


@pytest.mark.slow
def test_when_uv_fails_pip_installs_the_same_pins_and_says_why(project, tmp_path):
    """The fallback for real: a uv that cannot download (as without network), then pip."""
    root, env = project
    env["DECOMPKIT_UV"] = _fake_uv(tmp_path, kit.UV_VERSION, sync_status=2)
    first = _kit(root, env, "set-up")
    assert first.returncode == 0, first.stdout + first.stderr
    assert "error: Failed to fetch" in first.stderr  # uv's own error, then one line of kit's
    assert (
        "[kit] uv could not install (see above): trying pip with the same pinned versions"
    ) in first.stdout
    assert "[kit] running pip install -r requirements/lab.txt" in first.stdout
    assert "[kit] running pip install --no-deps -e ." in first.stdout
    assert _stamp(root)["installer"] == "pip" and _imports(root, "fakedep")
    assert not _imports(root, "fakedev")

    env["DECOMPKIT_UV"] = "off"  # test after lab with pip alone: dev.txt into the same .venv
    second = _kit(root, env, "set-up", "dev")
    assert second.returncode == 0, second.stdout + second.stderr
    assert "[kit] running pip install -r requirements/dev.txt" in second.stdout
    assert _imports(root, "fakedev") and _stamp(root)["extras"] == ["dev"]


@pytest.mark.slow
def test_when_nothing_can_install_the_error_is_one_line(project, tmp_path):
    root, env = project
    env["DECOMPKIT_UV"] = "off"
    (root / "requirements" / "lab.txt").write_text("fakedep==9.9\n")  # not to be had
    failed = _kit(root, env, "set-up")
    assert failed.returncode == 1
    assert failed.stdout.splitlines()[-1] == (
        "[kit] pip could not install the packages either (see above): "
        "check that PyPI can be reached, then run the same command again"
    )
    assert "Traceback" not in failed.stdout + failed.stderr
    assert not (root / ".venv" / ".decompkit-installed").exists()


def test_ctrl_c_during_the_set_up_leaves_a_state_the_next_run_repairs(project, uv, tmp_path):
    root, env = project
    env["DECOMPKIT_UV"] = uv
    blocked = tmp_path / "building"
    process = _kit(
        root,
        dict(env, FAKE_BACKEND_BLOCK=str(blocked)),
        "set-up",
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        # as in a terminal, even when these tests run in a background job (SIGINT ignored)
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        deadline = time.monotonic() + 120
        while not blocked.exists() and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert blocked.exists(), "the build never started"
        os.killpg(process.pid, signal.SIGINT)  # what Ctrl-C in a terminal does
        out, _ = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    assert process.returncode == 130, out
    assert "[kit] interrupted: .venv is incomplete; the next run sets it up again" in out
    assert "Traceback" not in out
    assert not (root / ".venv" / ".decompkit-installed").exists()

    again = _kit(root, env, "set-up")
    assert again.returncode == 0, again.stdout + again.stderr
    assert "[kit] setting up .venv from uv.lock (it has no record of a " in again.stdout
    assert _stamp(root)["extras"] == [] and _imports(root, "fakedep")


# --- JupyterLab for students and instructors ---------------------------------------------


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url, token):
    request = urllib.request.Request(url, headers={"Authorization": f"token {token}"})
    with urllib.request.urlopen(request, timeout=60) as response:  # a loaded CI machine
        return response.status, response.read().decode()


def _status(url, token):
    try:
        return _get(url, token)[0]
    except urllib.error.HTTPError as error:
        return error.code


def _page_config(base, token):
    _, page = _get(f"{base}/lab?token={token}", token)
    data = re.search(
        r'<script id="jupyter-config-data" type="application/json">(.*?)</script>', page, re.S
    )
    return json.loads(data[1])


@pytest.fixture
def lab_server(tmp_path):
    """Start `python3 kit.py lab ...` (as a student or with --instructor) and stop it after.

    Jupyter's user folders are scratch folders; so is the gradebook the formgrader opens.
    """
    started = []
    (tmp_path / "config").mkdir()
    gradebook = f"sqlite:///{tmp_path / 'gradebook.db'}"
    (tmp_path / "config" / "nbgrader_config.py").write_text(
        f"c = get_config()  # noqa: F821\nc.CourseDirectory.db_url = {gradebook!r}\n"
    )

    def start(*extra):
        port, token = _free_port(), secrets.token_hex(16)
        env = dict(
            os.environ,
            JUPYTER_RUNTIME_DIR=str(tmp_path / "runtime"),
            JUPYTER_CONFIG_DIR=str(tmp_path / "config"),
        )
        command = [
            sys.executable,
            str(ROOT / "kit.py"),
            "lab",
            *extra,
            "--no-browser",
            "--ip=127.0.0.1",
            f"--port={port}",
            "--ServerApp.port_retries=0",
            f"--IdentityProvider.token={token}",
        ]
        out = (tmp_path / f"kit-{len(started)}.out").open("w+")
        # The server's log goes to a file: a pipe nobody reads fills up and blocks the server.
        err = (tmp_path / f"kit-{len(started)}.err").open("w+")
        server = subprocess.Popen(
            command, env=env, stdout=out, stderr=err, text=True, start_new_session=True
        )
        started.append((server, out, err))
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and server.poll() is None:
            try:
                _get(f"{base}/api/status", token)
                out.seek(0)
                return base, token, out.read()
            except (urllib.error.URLError, ConnectionError):
                time.sleep(0.1)
        os.killpg(server.pid, signal.SIGKILL)
        server.wait(timeout=30)
        err.seek(0)
        raise AssertionError(f"JupyterLab did not answer:\n{err.read()[-3000:]}")

    yield start
    for server, out, err in started:
        if server.poll() is None:
            server.terminate()
            server.communicate(timeout=30)
        out.close()
        err.close()


def _notebook_mtimes():
    return {p: p.stat().st_mtime_ns for p in (ROOT / "notebooks").rglob("*.ipynb")}


@pytest.mark.slow
def test_student_lab_serves_notebooks_without_nbgrader_instructor_tools(lab_server):
    before = _notebook_mtimes()
    base, token, out = lab_server()
    _, listing = _get(f"{base}/api/contents", token)
    assert "decomp" in {item["name"] for item in json.loads(listing)["content"]}
    for path in ("formgrader", "formgrader/api/assignments", "formgraders", "assignments"):
        assert _status(f"{base}/{path}", token) == 404, path
    disabled = set(_page_config(base, token)["disabledExtensions"])
    assert _nbgrader_shipped()[1] <= disabled
    assert "[kit] starting JupyterLab (student view;" in out
    assert _notebook_mtimes() == before, "opening the kit must not write any notebook"


@pytest.mark.slow
def test_instructor_lab_has_the_formgrader_on_the_course_root(lab_server, tmp_path):
    before = _notebook_mtimes()
    had_gradebook = (ROOT / "gradebook.db").exists()
    base, token, _ = lab_server("--instructor")
    _, listing = _get(f"{base}/api/contents", token)
    assert {"solutions", "notebooks"} <= {item["name"] for item in json.loads(listing)["content"]}
    _, assignments = _get(f"{base}/formgrader/api/assignments", token)
    assert "decomp" in {a["name"] for a in json.loads(assignments)}
    disabled = set(_page_config(base, token)["disabledExtensions"])
    # the instructor's tools are on; the exchange's student side is off (a local course has
    # no exchange to list assignments or courses from)
    exchange_side = {"@jupyter/nbgrader:assignment-list", "@jupyter/nbgrader:course-list"}
    assert not disabled & (_nbgrader_shipped()[1] - exchange_side)
    assert exchange_side <= disabled
    assert _notebook_mtimes() == before
    assert (tmp_path / "gradebook.db").exists()
    assert (ROOT / "gradebook.db").exists() == had_gradebook


def test_lab_configuration_keeps_the_users_jupyter_config_path(monkeypatch):
    monkeypatch.setenv("JUPYTER_CONFIG_PATH", "/somewhere/else")
    command, env = kit.lab_command(["--no-browser"], instructor=False)
    first, rest = env["JUPYTER_CONFIG_PATH"].split(os.pathsep)
    assert Path(first) == kit.CONFIG["student"] and rest == "/somewhere/else"
    assert f"--ServerApp.root_dir={ROOT / 'notebooks'}" in command
    assert command[-1] == "--no-browser" and "PYTHONPATH" not in env
    assert ("--allow-root" in command) == (os.geteuid() == 0)


def _nbgrader_shipped():
    """nbgrader's server extensions (as its installed configuration turns them on) and lab
    plugins (as its lab extension's code declares them)."""
    import nbgrader

    config = Path(sys.prefix, "etc", "jupyter", "jupyter_server_config.d", "nbgrader.json")
    extensions = set(json.loads(config.read_text())["ServerApp"]["jpserver_extensions"])
    code = Path(nbgrader.__file__).parent / "labextension" / "static"
    text = "".join(path.read_text(errors="replace") for path in code.glob("*.js"))
    return extensions, set(re.findall(r'"(@jupyter/nbgrader:[a-z-]+)"', text))


def test_the_students_view_turns_off_every_piece_of_nbgrader_that_is_installed():
    """An nbgrader that adds a piece fails here rather than showing it to students."""
    extensions, plugins = _nbgrader_shipped()
    assert len(extensions) >= 4 and len(plugins) >= 6
    folder = kit.CONFIG["student"]
    server = json.loads((folder / "jupyter_server_config.json").read_text())
    page = json.loads((folder / "labconfig" / "page_config.json").read_text())
    assert server["ServerApp"]["jpserver_extensions"] == dict.fromkeys(extensions, False)
    assert page["disabledExtensions"] == dict.fromkeys(plugins, True)


def test_the_lab_keeps_its_bytecode_even_where_python_is_told_not_to(monkeypatch):
    """With PYTHONDONTWRITEBYTECODE (many container images) the server and its kernels
    would compile their imports from source at every start; .venv is the kit's own."""
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    command, env = kit.lab_command([], instructor=False)
    assert command[1:3] == ["-m", "jupyterlab"] and "PYTHONDONTWRITEBYTECODE" not in env


def test_lab_says_which_view_it_starts(ran, monkeypatch, capsys, tmp_path):
    monkeypatch.setattr(kit, "ROOT", tmp_path)  # the instructor's exchange/ goes here
    kit.lab(["--instructor", "--no-browser"])
    assert "[kit] starting JupyterLab (instructor view:" in capsys.readouterr().out
    assert "--instructor" not in ran[0] and ran[0][-1] == "--no-browser"
    assert f"--ServerApp.root_dir={tmp_path}" in ran[0]


# --- the set-up benchmark ----------------------------------------------------------------


@pytest.mark.slow
def test_bench_setup_quick_times_a_fresh_clone_and_stops_its_servers():
    """bench/bench_setup.py --quick: the local uv and its cache, offline (no network)."""
    if _local_uv() is None:
        pytest.skip("no uv here: the quick bench installs offline from uv's cache")
    if subprocess.run(["git", "-C", str(ROOT), "rev-parse"], capture_output=True).returncode:
        pytest.skip("not a git checkout: the bench clones it")
    env = {k: v for k, v in os.environ.items() if k != "DECOMPKIT_UV"}
    env["DECOMPKIT_UV"] = _local_uv()
    run = subprocess.run(
        [BASE_PYTHON, str(ROOT / "bench" / "bench_setup.py"), "--quick"],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    first = re.search(r"^  first start +(\d+\.\d) s", run.stdout, re.M)
    second = re.search(r"^  second start +(\d+\.\d) s", run.stdout, re.M)
    assert first and second, run.stdout
    assert re.search(r"^ +\d+\.\d s  uv: Installed \d+ packages$", run.stdout, re.M), run.stdout
    assert re.search(r"^ +\d+\.\d s  \.venv holds the versions in uv\.lock$", run.stdout, re.M)
    assert "JupyterLab until /api/status" in run.stdout
    assert re.search(r"servers stopped in \d+\.\d s and \d+\.\d s", run.stdout)


# --- the instructor's commands reach the course package -----------------------------------

COURSE_COMMANDS = ["release", "check", "collect", "grade", "key", "feedback", "export", "report"]


def test_the_course_commands_are_all_there():
    assert set(kit.COURSE_COMMANDS) == set(COURSE_COMMANDS)


@pytest.mark.parametrize("command", COURSE_COMMANDS)
def test_instructor_commands_run_the_course_package(ran, command):
    assert kit.COMMANDS[command](["--help"]) == 0
    assert ran == [[str(kit.PYTHON), "-m", "decompkit.course", command, "--help"]]


def test_nbgrader_and_bench_run_in_the_environment(ran, monkeypatch, tmp_path):
    assert kit.COMMANDS["nbgrader"](["db", "student", "list"]) == 0
    assert ran[-1] == [str(kit.PYTHON), "-m", "nbgrader", "db", "student", "list"]
    (tmp_path / "bench").mkdir()
    for name in ("bench_b.py", "bench_a.py", "helper.py"):
        (tmp_path / "bench" / name).write_text("")
    monkeypatch.setattr(kit, "ROOT", tmp_path)
    assert kit.bench(["--quick"]) == 0
    assert [command[1:] for command in ran[1:]] == [
        [str(tmp_path / "bench" / "bench_a.py"), "--quick"],
        [str(tmp_path / "bench" / "bench_b.py"), "--quick"],
    ]


@pytest.mark.parametrize("command", [*COURSE_COMMANDS, "integrity"])
def test_every_course_command_answers_help(command, capsys):
    """In-process (importing nbgrader once); the module's own entry point is tested below."""
    from decompkit.course.__main__ import COMMANDS, main

    assert set(kit.COURSE_COMMANDS) <= set(COMMANDS)
    with pytest.raises(SystemExit) as done:
        main([command, "--help"])
    assert done.value.code == 0
    assert f"python -m decompkit.course {command}" in capsys.readouterr().out


@pytest.mark.slow
def test_an_unknown_course_command_lists_the_commands():
    result = subprocess.run(
        [sys.executable, "-m", "decompkit.course", "autograde"], capture_output=True, text=True
    )
    assert result.returncode == 2
    assert all(name in result.stderr for name in COURSE_COMMANDS)
