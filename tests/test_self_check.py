"""Students' self-check: `kit.py check` (whose numbers, one line per check, exit status) and
nbgrader's own validate."""

import subprocess
import sys
from pathlib import Path

import nbformat

from decompkit.course.selfcheck import self_check
from decompkit.exercises.params import params

ROOT = Path(__file__).resolve().parents[1]
CHAIN = ROOT / "notebooks" / "decomp" / "01-chain-reliability.ipynb"
SOLVED = ROOT / "solutions" / "decomp" / "01-chain-reliability.ipynb"


def _answered(tmp_path, student=None, **replaced) -> Path:
    """The released chain notebook with every answer from the solution, some replaced
    (``grade_id="source"``), and ``STUDENT_ID`` set to ``student``."""
    released = nbformat.read(CHAIN, as_version=4)
    solved = {
        c.metadata["nbgrader"]["grade_id"]: c.source
        for c in nbformat.read(SOLVED, as_version=4).cells
        if c.metadata.get("nbgrader", {}).get("solution")
    }
    for cell in released.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id in solved:
            cell.source = replaced.get(grade_id, solved[grade_id])
        if "student-id" in cell.metadata.get("tags", []):
            cell.source = f"STUDENT_ID = {student!r}"
    path = tmp_path / CHAIN.name
    nbformat.write(released, path)
    return path


def _check(path):
    # No JupyterHub login or grader id leaks in from the machine running the tests.
    env = {
        k: v
        for k, v in __import__("os").environ.items()
        if not k.startswith(("JUPYTERHUB", "DECOMPKIT"))
    }
    return subprocess.run(
        [sys.executable, "-m", "decompkit.course", "check", str(path)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
    )


def test_check_names_the_mistake_and_the_rounding_and_warns_of_the_lecture_numbers(tmp_path):
    P = params("chain")
    p_prime = P.p + (1 - P.p) * P.d * P.p
    two_digits = float(f"{p_prime:.2g}")
    assert abs(two_digits - p_prime) > 1e-3 * p_prime  # really rounded too far
    wrong = _check(
        _answered(
            tmp_path,
            chain_success_answer="p_chain = P.p * P.n",
            p_prime_answer=f"p_prime = {two_digits}",
        )
    )
    assert wrong.returncode == 1, wrong.stdout + wrong.stderr
    lines = wrong.stdout.splitlines()
    assert lines[1].startswith("  LECTURE NUMBERS: no student id is set")
    assert "grading uses the numbers of your own id" in lines[1]
    assert lines[2].startswith("  [FAIL] A1 p_chain: you multiplied p by n")
    assert lines[2].endswith("(chain_success_value)")
    assert (
        lines[5]
        == "  [FAIL] B1 p_prime: close: keep at least 4 significant digits  (p_prime_value)"
    )
    others = lines[3:5] + lines[6:-1]
    assert len(others) == 12, lines
    form_only = [line for line in others if line.startswith("  [ ?  ] ")]
    assert [line.split(":")[0] for line in form_only] == [
        "  [ ?  ] B6 other_helps",
        "  [ ?  ] D1 kinds",
        "  [ ?  ] D2 reads",
    ], lines
    assert all("right or wrong shows after hand-in" in line for line in form_only)
    assert all(line.startswith("  [ok  ] ") for line in others if line not in form_only)
    assert "Traceback" not in wrong.stdout and "decompkit" not in "".join(lines[2:])
    assert lines[-1] == "some checks are not on track yet"


def test_check_of_an_untouched_notebook_without_an_id_names_the_lecture_numbers():
    fresh = _check(CHAIN)
    assert fresh.returncode == 1
    lines = fresh.stdout.splitlines()
    assert lines[1].startswith("  LECTURE NUMBERS: no student id is set")
    todo = [line for line in lines if line.startswith("  [todo] ")]
    assert len(todo) == 14 and all("not answered yet" in line for line in todo)


def test_check_with_a_typed_id_says_whose_numbers_and_passes_the_right_answers(tmp_path):
    report = self_check(_answered(tmp_path, student="s0007"))
    assert (report.student, report.source) == ("s0007", "typed")
    assert report.on_track, report.verdicts
    assert report.verdicts["p_prime_value"] == ("ok", "B1 p_prime: on track")


def test_in_strict_mode_the_failed_cell_holds_one_line_and_no_traceback(tmp_path):
    """What nbgrader stores and shows for a failed check: an error whose traceback is the
    check's line alone, and later cells still run."""
    import nbclient

    path = _answered(tmp_path, student="s0007", p_prime_answer="p_prime = P.p + (1 - P.p) * P.d")
    nb = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(nb, timeout=60, kernel_name="python3", allow_errors=True)
    client.execute(env={**__import__("os").environ, "DECOMPKIT_STRICT": "1"})
    cell = next(
        c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "p_prime_value"
    )
    (error,) = [o for o in cell.outputs if o.output_type == "error"]
    assert error.ename == "CheckFailed"
    assert error.traceback == [
        "[x] B1 p_prime: you treated the retry as always right; it is an attempt like the "
        "first and succeeds only with the step's own rate  [numbers of s0007]"
    ]
    last = next(c for c in reversed(nb.cells) if c.metadata.get("nbgrader", {}).get("grade"))
    assert any("[?] D2 reads" in o.get("text", "") for o in last.outputs)  # form only


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
