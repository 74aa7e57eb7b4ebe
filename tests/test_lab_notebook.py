"""The lab notebook runs top to bottom offline, in a fresh kernel, with every check on track."""

import os
from pathlib import Path

import nbclient
import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "solutions" / "lab" / "lab.ipynb"

# Run first, in the kernel only: any connection to a host other than this machine fails,
# so a cell that tried the network would show up as an error.
GUARD = """
import socket as _socket

_connect = _socket.socket.connect

def _local_only(sock, address):
    host = address[0] if isinstance(address, tuple) else address
    if sock.family != _socket.AF_UNIX and host not in ("127.0.0.1", "::1", "localhost"):
        raise OSError(f"network access attempted: {address!r}")
    return _connect(sock, address)

_socket.socket.connect = _local_only
_socket.create_connection = lambda *args, **kwargs: (_ for _ in ()).throw(
    OSError(f"network access attempted: {args!r}")
)
"""


@pytest.fixture(scope="module")
def executed():
    env = dict(os.environ)
    env.pop("DECOMPKIT_MODEL", None)  # the scripted models, whatever the shell says
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT / "src"), env.get("PYTHONPATH")]))
    nb = nbformat.read(NOTEBOOK, as_version=4)
    nb.cells.insert(0, nbformat.v4.new_code_cell(GUARD))
    client = nbclient.NotebookClient(
        nb,
        timeout=60,
        kernel_name="python3",
        resources={"metadata": {"path": str(NOTEBOOK.parent)}},
    )
    client.execute(env=env)
    return nb


def _outputs(nb, kind):
    return [o for c in nb.cells for o in c.get("outputs", []) if o.output_type == kind]


def test_no_cell_fails(executed):
    assert not _outputs(executed, "error"), _outputs(executed, "error")


def test_nothing_is_written_to_stderr(executed):
    stderr = [o.text for o in _outputs(executed, "stream") if o.name == "stderr"]
    assert not stderr, stderr


def test_every_check_is_on_track(executed):
    checks = [c for c in executed.cells if c.cell_type == "code" and "check(" in c.source]
    graded = [c for c in checks if c.metadata.get("nbgrader", {}).get("grade")]
    assert len(checks) == 5 and len(graded) == 3
    for cell in checks:
        text = "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream")
        assert "[ok]" in text, (cell.source, text)


def test_the_runs_are_the_scripted_ones(executed):
    text = "\n".join(
        o.get("text", "") or o.get("data", {}).get("text/plain", "")
        for c in executed.cells
        for o in c.get("outputs", [])
    )
    assert "scripted models, offline" in text
    assert "Supplier Q is cheapest at 3.95 EUR per unit (P 4.20, Q 3.95, R 4.10)." in text
    assert "the plan is not series-parallel" in text
    assert "('E11', 3)" in text  # the replanning cap


def test_the_figures_are_drawn(executed):
    images = [o for o in _outputs(executed, "display_data") if "image/png" in o.data]
    images += [o for o in _outputs(executed, "execute_result") if "image/png" in o.data]
    assert len(images) == 3
