"""Students' self-check: `kit.py check` (exit status) and nbgrader's own validate."""

import subprocess
import sys
from pathlib import Path

import nbformat

from decompkit.course.selfcheck import self_check

ROOT = Path(__file__).resolve().parents[1]
CHAIN = ROOT / "notebooks" / "decomp" / "01-chain-reliability.ipynb"
SOLVED = ROOT / "solutions" / "decomp" / "01-chain-reliability.ipynb"


def _answered(tmp_path, p_chain: str) -> Path:
    """The released chain notebook with every answer from the solution, p_chain replaced."""
    released = nbformat.read(CHAIN, as_version=4)
    solved = {
        c.metadata["nbgrader"]["grade_id"]: c.source
        for c in nbformat.read(SOLVED, as_version=4).cells
        if c.metadata.get("nbgrader", {}).get("solution")
    }
    for cell in released.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id in solved:
            cell.source = solved[grade_id]
        if grade_id == "chain_success_answer":
            cell.source = f"p_chain = {p_chain}"
    path = tmp_path / CHAIN.name
    nbformat.write(released, path)
    return path


def _check(path):
    return subprocess.run(
        [sys.executable, "-m", "decompkit.course", "check", str(path)],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )


def test_check_exits_zero_only_when_everything_is_on_track(tmp_path):
    good = _check(_answered(tmp_path, "P.p**P.n"))
    assert good.returncode == 0, good.stdout
    assert "all checks on track" in good.stdout

    wrong = _check(_answered(tmp_path, "P.p * P.n"))
    assert wrong.returncode == 1
    assert "[FAIL] chain_success_value" in wrong.stdout
    assert "multiplied p by n" in wrong.stdout  # the hint names the mistake


def test_check_lists_unanswered_items_of_a_fresh_notebook():
    verdicts = self_check(CHAIN)
    assert verdicts and {state for state, _ in verdicts.values()} == {"unanswered"}


def test_nbgrader_validate_runs_on_every_released_notebook(tmp_path):
    released = sorted((ROOT / "notebooks" / "decomp").glob("*.ipynb"))
    bindir = str(Path(sys.executable).parent)
    result = subprocess.run(
        [sys.executable, "-m", "nbgrader", "validate", *map(str, released)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={"PATH": f"{bindir}:/usr/bin:/bin", "HOME": str(tmp_path)},
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.count("Success!") == len(released), result.stdout[-2000:]
