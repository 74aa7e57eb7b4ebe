"""kit.py: the environment it sets up (uv, else pip), what it records of it, the progress
it prints, and the JupyterLab it opens for students and for instructors.

The set-up tests run kit.py on a tiny stand-in project (``decompkit`` 0.0.0 with one
dependency and one [dev] dependency, built by an in-tree backend from local wheels), so
they install for real, offline, in seconds. The JupyterLab tests start the real thing.
"""

import importlib.util
import io
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
BASE_PYTHON = getattr(sys, "_base_executable", None) or sys.executable


def _load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


kit = _load(ROOT / "kit.py", "kit_under_test")


def _path_without_uv() -> str:
    return os.pathsep.join(
        folder
        for folder in os.environ.get("PATH", "").split(os.pathsep)
        if folder and not (Path(folder) / "uv").exists()
    )


def _local_uv() -> str | None:
    """A uv that runs here (on PATH, or the one kit.py fetched for this checkout)."""
    for candidate in (shutil.which("uv"), kit._bootstrapped_uv()):
        if candidate and kit._uv_version(candidate):
            return str(candidate)
    return None


# --- what to do: the stamp logic ---------------------------------------------------------

STAMP_LAB = {"pyproject": "h1", "python": "3.11.7", "extras": []}
STAMP_DEV = {"pyproject": "h1", "python": "3.11.7", "extras": ["dev"]}
DEV = frozenset({"dev"})
NONE = frozenset()


@pytest.mark.parametrize(
    ("stamp", "wanted", "pyproject", "python", "venv_ok", "pending", "expected"),
    [
        # a fresh clone: build .venv with what the command needs, nothing more
        (None, NONE, "h1", "3.11.7", False, None, ("create", NONE)),
        (None, DEV, "h1", "3.11.7", False, None, ("create", DEV)),
        # lab after lab, lab after test, test after test: nothing to install
        (STAMP_LAB, NONE, "h1", "3.11.7", True, None, ("ready", NONE)),
        (STAMP_DEV, NONE, "h1", "3.11.7", True, None, ("ready", DEV)),
        (STAMP_DEV, DEV, "h1", "3.11.7", True, None, ("ready", DEV)),
        # test after lab: only the dev extra
        (STAMP_LAB, DEV, "h1", "3.11.7", True, None, ("add", DEV)),
        # pyproject.toml changed: reinstall in place, keeping the test tools once installed
        (STAMP_DEV, NONE, "h2", "3.11.7", True, None, ("install", DEV)),
        (STAMP_LAB, NONE, "h2", "3.11.7", True, None, ("install", NONE)),
        # another Python: a new .venv, with the same extras
        (STAMP_DEV, NONE, "h1", "3.12.1", True, None, ("create", DEV)),
        (STAMP_LAB, NONE, "h1", "3.11.8", True, None, ("create", NONE)),
        # an environment this kit did not record (made by hand): install into it
        (None, NONE, "h1", "3.11.7", True, None, ("install", NONE)),
        # its Python is gone
        (STAMP_LAB, NONE, "h1", "3.11.7", False, None, ("create", NONE)),
        # an interrupted or failed installation: start again from scratch, all of it
        (STAMP_LAB, NONE, "h1", "3.11.7", True, {"extras": ["dev"]}, ("create", DEV)),
        (None, NONE, "h1", "3.11.7", True, {}, ("create", NONE)),
    ],
)
def test_plan(stamp, wanted, pyproject, python, venv_ok, pending, expected):
    got = kit.plan(
        stamp, wanted, pyproject=pyproject, python=python, venv_ok=venv_ok, pending=pending
    )
    assert got == expected


def test_a_stamp_this_kit_cannot_read_counts_as_none(tmp_path):
    stamp = tmp_path / "stamp"
    stamp.write_text("0123abcd (3, 11, 7)")  # the plain-text stamp of earlier kit versions
    assert kit.read_stamp(stamp) is None
    stamp.write_text(json.dumps({"pyproject": "h", "python": "3.11.7"}))
    assert kit.read_stamp(stamp) is None
    stamp.write_text(json.dumps({"pyproject": "h", "python": "3.11.7", "extras": ["dev"]}))
    assert kit.read_stamp(stamp)["extras"] == ["dev"]


# --- the extras split --------------------------------------------------------------------


def _name(requirement: str) -> str:
    return re.split(r"[\s<>=!~;\[]", requirement, maxsplit=1)[0].lower().replace("_", "-")


def _pyproject():
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


TEST_TOOLS = {"pytest", "hypothesis", "ruff", "playwright"}


def test_lab_needs_no_test_tools_and_test_gets_them():
    project = _pyproject()
    runtime = {_name(r) for r in project["dependencies"]}
    dev = {_name(r) for r in project["optional-dependencies"]["dev"]}
    assert TEST_TOOLS <= dev
    assert not runtime & TEST_TOOLS
    # what notebooks, the self-check and the grader import is not a test-only tool
    assert {"jupyterlab", "ipykernel", "nbgrader", "nbformat", "nbclient"} <= runtime
    assert kit.EXTRAS["test"] == {"dev"}
    assert all(not kit.EXTRAS.get(command) for command in kit.COMMANDS if command != "test")


def test_the_installed_kit_reports_the_dev_extra_of_pyproject():
    """What `test after lab` installs with pip: the [dev] list, read from the metadata."""
    if not kit.PYTHON.exists():
        pytest.skip("no .venv next to kit.py")
    names = {_name(r) for r in kit._extra_requirements({"dev"})}
    assert names == {_name(r) for r in _pyproject()["optional-dependencies"]["dev"]}


def test_environment_yml_installs_what_the_lab_needs():
    """Conda / Binder: the same runtime dependencies as pyproject.toml, the kit without extras."""
    text = (ROOT / "environment.yml").read_text()
    conda = {}
    pip = []
    section = None
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].rstrip()
        item = line.strip()
        if item == "- pip:":
            section = "pip"
        elif item.startswith("- ") and section == "pip" and raw.startswith(" " * 6):
            pip.append(item[2:].strip())
        elif item.startswith("- "):
            section = "conda"
            spec = item[2:].strip()
            conda[_name(spec)] = spec
    assert pip == ["-e ."], pip
    for requirement in _pyproject()["dependencies"]:
        name = _name(requirement)
        assert name in conda, f"{name} is missing from environment.yml"
        bound = re.search(r">=\s*([\w.]+)", requirement)
        assert bound and f">={bound[1]}" in conda[name], (requirement, conda[name])
    assert not set(conda) & TEST_TOOLS


# --- progress lines ----------------------------------------------------------------------

UV_LOG = """\
Using Python 3.11.7 environment at: .venv
Resolved 124 packages in 918ms
   Building decompkit @ file:///work/kit
Downloading numpy (16.1MiB)
Downloading jupyterlab (16.5MiB)
@pause
 Downloaded numpy
 Downloaded jupyterlab
      Built decompkit @ file:///work/kit
Prepared 124 packages in 2.34s
Installed 124 packages in 170ms
 + anyio==4.11.0
"""


def _script(log: str) -> list[str]:
    """A command that prints ``log``, pausing 0.4 s at each @pause line."""
    code = (
        "import sys, time\n"
        f"for line in {log!r}.splitlines():\n"
        "    if line == '@pause':\n"
        "        time.sleep(0.4)\n"
        "    else:\n"
        "        print(line, flush=True)\n"
    )
    return [sys.executable, "-c", code]


def _steps(text: str) -> list[str]:
    return [re.sub(r"\(\d+\.\d s\)$", "(t)", line) for line in text.splitlines()]


def _heartbeats(lines):
    return [line for line in lines if line.startswith("[kit] ... still ")]


def test_uv_output_becomes_one_line_per_step_with_a_heartbeat_in_a_log():
    out = io.StringIO()
    progress = kit.Progress(out, live=False, heartbeat=0.2)
    progress.start("resolving the dependencies")
    kit.run_step(_script(UV_LOG), progress, kit.UvOutput(), poll=0.05)
    progress.finish()
    lines = _steps(out.getvalue())
    assert [line for line in lines if line not in _heartbeats(lines)] == [
        "[kit] resolving the dependencies: 124 packages (t)",
        "[kit] downloading and unpacking: 124 packages (t)",
        "[kit] installing: 124 packages (t)",
    ]
    # the pause of 0.4 s comes while downloading: at least one line says it still works
    assert any(
        line.startswith("[kit] ... still downloading and unpacking (0 of 2 large files), ")
        or line.startswith("[kit] ... still downloading and unpacking (1 of 2 large files), ")
        for line in _heartbeats(lines)
    ), lines


def test_on_a_terminal_the_running_step_is_redrawn_then_completed_in_place():
    out = io.StringIO()
    progress = kit.Progress(out, live=True)
    progress.start("resolving the dependencies")
    kit.run_step(_script(UV_LOG), progress, kit.UvOutput(), poll=0.05)
    progress.finish()
    text = out.getvalue()
    assert "\r[kit] downloading and unpacking: 0 of 2 large files ... 0 s" in text
    shown = [line.rsplit("\r", 1)[-1].rstrip() for line in text.split("\n") if line]
    assert _steps("\n".join(shown)) == [
        "[kit] resolving the dependencies: 124 packages (t)",
        "[kit] downloading and unpacking: 124 packages (t)",
        "[kit] installing: 124 packages (t)",
    ]


PIP_LOG = """\
Obtaining file:///work/kit
  Installing build dependencies: started
  Installing build dependencies: finished with status 'done'
Collecting numpy>=1.24 (from decompkit==0.1.0)
  Downloading numpy-2.3.5-cp311-cp311-manylinux_2_27_x86_64.whl (16.9 MB)
Collecting jupyterlab>=4.0 (from decompkit==0.1.0)
Requirement already satisfied: packaging in ./.venv/lib/python3.11/site-packages
Building wheels for collected packages: decompkit
  Building editable for decompkit (pyproject.toml): started
  Building editable for decompkit (pyproject.toml): finished with status 'done'
Successfully built decompkit
Installing collected packages: numpy, jupyterlab, decompkit
@pause
  Attempting uninstall: numpy
Successfully installed decompkit-0.1.0 jupyterlab-4.6.0 numpy-2.3.5
"""


def test_pip_output_becomes_one_line_per_step():
    out = io.StringIO()
    progress = kit.Progress(out, live=False, heartbeat=0.2)
    progress.start("resolving and downloading")
    kit.run_step(_script(PIP_LOG), progress, kit.PipOutput(), poll=0.05)
    progress.finish()
    lines = _steps(out.getvalue())
    assert [line for line in lines if line not in _heartbeats(lines)] == [
        "[kit] resolving and downloading: 4 packages (t)",
        "[kit] building the kit's editable install (t)",
        "[kit] installing 3 packages: 3 installed (t)",
    ]
    assert any(line.startswith("[kit] ... still installing 3 packages, ") for line in lines)


def test_a_failing_step_says_why_in_one_line():
    progress = kit.Progress(io.StringIO(), live=False)
    progress.start("resolving the dependencies")
    command = _script("Resolved 1 package in 1ms\nerror: Failed to fetch: `https://x/y`\n@pause")
    command[-1] += "raise SystemExit(2)\n"
    with pytest.raises(kit.StepFailed) as failure:
        kit.run_step(command, progress, kit.UvOutput(), poll=0.05)
    assert failure.value.returncode == 2
    assert failure.value.reason() == "error: Failed to fetch: `https://x/y`"


# --- the set-up for real, on a stand-in project ------------------------------------------

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
dependencies = ["fakedep"]

[project.optional-dependencies]
dev = ["fakedev"]
"""


@pytest.fixture
def project(tmp_path):
    """A clone-like folder: kit.py, the stand-in pyproject.toml, and a folder of wheels."""
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
        PATH=_path_without_uv(),
        PIP_CONFIG_FILE=os.devnull,  # no machine-wide index or constraint
        PIP_NO_INDEX="1",
        PIP_FIND_LINKS=str(wheels),
        PIP_CACHE_DIR=str(tmp_path / "pip-cache"),
        UV_NO_INDEX="1",
        UV_FIND_LINKS=str(wheels),
        UV_CACHE_DIR=str(tmp_path / "uv-cache"),
        UV_NO_CONFIG="1",
    )
    env.pop("DECOMPKIT_UV", None)
    return root, env


def _set_up(root, env, *extras, **popen):
    """kit.py's set-up for ``extras``, run as kit.py runs it: by the base Python."""
    code = "import sys, kit; sys.exit(kit.set_up(frozenset(sys.argv[1:])))"
    command = [BASE_PYTHON, "-c", code, *extras]
    if popen:
        return subprocess.Popen(command, cwd=root, env=env, text=True, **popen)
    return subprocess.run(command, cwd=root, env=env, capture_output=True, text=True, timeout=300)


def _imports(root, module) -> bool:
    python = root / ".venv" / kit.BIN.name / kit.PYTHON.name
    return subprocess.run([python, "-c", f"import {module}"], capture_output=True).returncode == 0


def _stamp(root):
    return json.loads((root / ".venv" / ".decompkit-installed").read_text())


def test_without_uv_and_without_a_way_to_fetch_it_pip_sets_up_with_progress(project):
    root, env = project
    first = _set_up(root, env)
    assert first.returncode == 0, first.stdout + first.stderr
    out = first.stdout
    assert "[kit] first run: setting up .venv with what the lab needs" in out
    assert re.search(r"could not fetch uv \(.*uv.*\); installing with pip instead", out), out
    assert re.search(
        r"^\[kit\] creating the environment \.venv \(Python [\d.]+\) \(\d+\.\d s\)$", out, re.M
    ), out
    assert re.search(r"^\[kit\] resolving and downloading: 2 packages \(\d+\.\d s\)$", out, re.M)
    assert re.search(r"^\[kit\] installing 2 packages: 2 installed \(\d+\.\d s\)$", out, re.M)
    assert re.search(r"^\[kit\] \.venv is ready \(\d+\.\d s in all\)$", out, re.M)
    assert not (root / ".venv-tools" / "uv").exists()  # nothing half-made left behind
    assert _stamp(root)["extras"] == [] and _stamp(root)["installer"] == "pip"
    assert _imports(root, "fakedep") and not _imports(root, "fakedev")

    # test after lab: the [dev] extra only, in the same environment
    second = _set_up(root, env, "dev")
    assert second.returncode == 0, second.stdout + second.stderr
    assert "adding the [dev] extra (test tools) to .venv" in second.stdout
    assert "creating the environment" not in second.stdout
    assert re.search(r"^\[kit\] installing 1 package: 1 installed", second.stdout, re.M)
    assert _stamp(root)["extras"] == ["dev"] and _imports(root, "fakedev")

    # lab after test: nothing at all
    third = _set_up(root, env)
    assert third.returncode == 0 and third.stdout == "", third.stdout


def test_with_uv_the_same_set_up_and_a_changed_pyproject_reinstalls(project):
    uv = _local_uv()
    if uv is None:
        pytest.skip("no uv here (kit.py fetches one on its first run with network)")
    root, env = project
    env["DECOMPKIT_UV"] = uv
    first = _set_up(root, env)
    assert first.returncode == 0, first.stdout + first.stderr
    assert "fetching uv" not in first.stdout and "pip" not in first.stdout
    for step in (
        "creating the environment .venv",
        "resolving the dependencies: 2 packages",
        "installing: 2 packages",
    ):
        assert re.search(rf"^\[kit\] {re.escape(step)}.* \(\d+\.\d s\)$", first.stdout, re.M), (
            step,
            first.stdout,
        )
    assert _stamp(root)["installer"].startswith("uv ") and _imports(root, "fakedep")

    second = _set_up(root, env, "dev")
    assert "adding the [dev] extra" in second.stdout, second.stdout
    assert re.search(r"^\[kit\] installing: 1 package \(", second.stdout, re.M), second.stdout
    assert _stamp(root)["extras"] == ["dev"] and _imports(root, "fakedev")

    (root / "pyproject.toml").write_text(PYPROJECT + "# a change\n")
    third = _set_up(root, env)
    assert "pyproject.toml changed: updating .venv with the test tools" in third.stdout
    assert "creating the environment" not in third.stdout
    assert _stamp(root)["pyproject"] == kit._pyproject_digest(root)


def test_ctrl_c_during_the_install_leaves_a_state_the_next_run_repairs(project, tmp_path):
    root, env = project
    env["DECOMPKIT_UV"] = _local_uv() or "off"
    blocked = tmp_path / "building"
    process = _set_up(
        root,
        dict(env, FAKE_BACKEND_BLOCK=str(blocked)),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
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
    assert (root / ".venv" / ".decompkit-installing").exists()

    again = _set_up(root, env)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "the last set-up of .venv did not finish: building it again" in again.stdout
    assert "creating the environment .venv" in again.stdout
    assert not (root / ".venv" / ".decompkit-installing").exists()
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
                return base, token, out
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
        try:
            os.killpg(server.pid, signal.SIGTERM)  # the readiness watcher, if still there
        except ProcessLookupError:
            pass
        out.close()
        err.close()


def _notebook_mtimes():
    return {p: p.stat().st_mtime_ns for p in (ROOT / "notebooks").rglob("*.ipynb")}


def _kit_lines(out, wanted, timeout=10):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        out.seek(0)
        text = out.read()
        if wanted in text:
            return text
        time.sleep(0.1)
    return text


def test_student_lab_serves_notebooks_without_nbgrader_instructor_tools(lab_server):
    before = _notebook_mtimes()
    base, token, out = lab_server()
    _, listing = _get(f"{base}/api/contents", token)
    assert "decomp" in {item["name"] for item in json.loads(listing)["content"]}
    for path in ("formgrader", "formgrader/api/assignments", "formgraders", "assignments"):
        assert _status(f"{base}/{path}", token) == 404, path
    disabled = set(_page_config(base, token)["disabledExtensions"])
    assert set(kit.NBGRADER_LAB_PLUGINS) <= disabled
    text = _kit_lines(out, "JupyterLab answered after")
    assert re.search(r"^\[kit\] JupyterLab answered after \d+\.\d s", text, re.M), text
    assert "student view" in text
    assert _notebook_mtimes() == before, "opening the kit must not write any notebook"


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
    assert not disabled & (set(kit.NBGRADER_LAB_PLUGINS) - exchange_side)
    assert exchange_side <= disabled
    assert _notebook_mtimes() == before
    assert (tmp_path / "gradebook.db").exists()
    assert (ROOT / "gradebook.db").exists() == had_gradebook


def test_lab_configuration_keeps_the_users_jupyter_config_path(monkeypatch):
    monkeypatch.setenv("JUPYTER_CONFIG_PATH", "/somewhere/else")
    command, env = kit.lab_command(["--no-browser"], instructor=False)
    first, rest = env["JUPYTER_CONFIG_PATH"].split(os.pathsep)
    assert Path(first) == kit.ROLES / "student" and rest == "/somewhere/else"
    assert f"--ServerApp.root_dir={ROOT / 'notebooks'}" in command
    assert command[-1] == "--no-browser" and "PYTHONPATH" not in env
    assert ("--allow-root" in command) == (os.geteuid() == 0)


def test_the_server_keeps_its_bytecode_even_where_python_is_told_not_to(monkeypatch):
    """uv compiles nothing at install; with PYTHONDONTWRITEBYTECODE every start would
    compile the server from source again. The variable stays for its kernels."""
    monkeypatch.delenv("PYTHONDONTWRITEBYTECODE", raising=False)
    command, _ = kit.lab_command([], instructor=False)
    assert command[1:3] == ["-m", "jupyterlab"]
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    command, env = kit.lab_command([], instructor=False)
    assert command[1] == "-c" and "sys.dont_write_bytecode = False" in command[2]
    assert env["PYTHONDONTWRITEBYTECODE"] == "1"


@pytest.mark.parametrize(
    "env",
    [
        {},
        {"XDG_DATA_HOME": "/tmp/xdg-data"},
        {"JUPYTER_DATA_DIR": "/tmp/jdata"},
        {"JUPYTER_RUNTIME_DIR": "/tmp/jrun", "JUPYTER_DATA_DIR": "/tmp/jdata"},
    ],
)
def test_the_readiness_report_looks_where_jupyter_writes_its_server_file(monkeypatch, env):
    paths = pytest.importorskip("jupyter_core.paths")
    for name in (
        "JUPYTER_RUNTIME_DIR",
        "JUPYTER_DATA_DIR",
        "XDG_DATA_HOME",
        "JUPYTER_PLATFORM_DIRS",
    ):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert kit._runtime_dir(dict(os.environ)) == Path(paths.jupyter_runtime_dir())


# --- the set-up benchmark ----------------------------------------------------------------


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
    assert "JupyterLab until /api/status" in run.stdout
    assert re.search(r"servers stopped in \d+\.\d s and \d+\.\d s", run.stdout)


# --- the instructor's commands reach the course package -----------------------------------

COURSE_COMMANDS = ["release", "check", "collect", "grade", "key", "feedback", "export", "report"]


@pytest.mark.parametrize("command", COURSE_COMMANDS)
def test_instructor_commands_run_the_course_package(monkeypatch, command):
    ran = []
    monkeypatch.setattr(kit, "_run", lambda argv: ran.append(argv) or 0)
    assert kit.COMMANDS[command](["--help"]) == 0
    assert ran == [[str(kit.PYTHON), "-m", "decompkit.course", command, "--help"]]


@pytest.mark.parametrize("command", [*COURSE_COMMANDS, "integrity"])
def test_every_course_command_answers_help(command):
    result = subprocess.run(
        [sys.executable, "-m", "decompkit.course", command, "--help"],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert result.returncode == 0, result.stderr
    assert f"python -m decompkit.course {command}" in result.stdout


def test_an_unknown_course_command_lists_the_commands():
    result = subprocess.run(
        [sys.executable, "-m", "decompkit.course", "autograde"], capture_output=True, text=True
    )
    assert result.returncode == 2
    assert all(name in result.stderr for name in COURSE_COMMANDS)
