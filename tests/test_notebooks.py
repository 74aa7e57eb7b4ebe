"""Every released notebook runs top to bottom in a fresh kernel."""

from pathlib import Path

import nbclient
import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
RELEASED = sorted((ROOT / "notebooks").rglob("*.ipynb"))
RELEASED = [p for p in RELEASED if ".ipynb_checkpoints" not in p.parts]


def test_there_are_notebooks_to_open():
    assert RELEASED, "notebooks/ holds no notebook"


@pytest.mark.parametrize("path", RELEASED, ids=lambda p: str(p.relative_to(ROOT)))
def test_released_notebook_runs(path):
    nb = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(
        nb, timeout=60, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}
    )
    client.execute()
    errors = [o for c in nb.cells for o in c.get("outputs", []) if o.output_type == "error"]
    assert not errors, errors
    images = [o for c in nb.cells for o in c.get("outputs", []) if "image/png" in o.get("data", {})]
    assert images, "no figure was rendered"
