"""The grader's hardening cases on plain nbgrader 0.9.6 and in the kit, side by side.

Run from the repository root, with the environment that has nbgrader:

    python bench/bench_hardening.py

The same hostile submissions of the test bank (tests/grading/bank.py) are graded twice, in
two scratch courses: by ``nbgrader autograde`` as it ships (its default preprocessors, every
student in one run in the course folder) and by the kit (``decompkit.course.grade``, inside
walls). For each case it prints what each did, and exits 1 when the kit lets one through, or
when plain nbgrader no longer shows the defect (the comparison would then show nothing and
the case needs a new attack). tests/grading/test_hardening.py checks the kit's half on every
test run; this script is the evidence for why each defence exists.
"""

from __future__ import annotations

import importlib
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

CHAIN, HORIZON = "01-chain-reliability", "02-long-horizons"
PLAIN_CONFIG = """c = get_config()
c.CourseDirectory.course_id = "decomp"
c.CourseDirectory.source_directory = "solutions"
c.CourseDirectory.release_directory = "notebooks"
c.Execute.timeout = 5
"""
ATTACKS = [
    "patched_modules",
    "input_transformer",
    "kernel_death",
    "invalid_json",
    "output_flood",
    "library_warned",
]


def _course(root: Path, config: str | None, students) -> Path:
    conftest = importlib.import_module("grading.conftest")
    root.mkdir(parents=True)
    if config is None:
        shutil.copy2(ROOT / "nbgrader_config.py", root / "nbgrader_config.py")
    else:
        (root / "nbgrader_config.py").write_text(config)
    shutil.copytree(ROOT / "solutions" / "decomp", root / "solutions" / "decomp")
    conftest.write_submissions(root, students)
    return root


def _plain(root: Path) -> None:
    bindir = str(Path(sys.executable).parent)
    env = {"PATH": f"{bindir}:/usr/bin:/bin", "HOME": str(root)}
    for command in ("generate_assignment", "autograde"):
        subprocess.run(
            [sys.executable, "-m", "nbgrader", command, "decomp", "--force"],
            cwd=root,
            env=env,
            capture_output=True,
            text=True,
        )


def _plain_score(root: Path, student: str, notebook: str) -> float:
    from nbgrader.api import Gradebook, MissingEntry

    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        try:
            return gb.find_submission_notebook(notebook, "decomp", student).score
        except MissingEntry:
            return 0.0


def main() -> int:
    from decompkit.course.grade import autograde

    points = importlib.import_module("grading.submissions").points
    full, horizon = sum(points(CHAIN).values()), sum(points(HORIZON).values())
    with tempfile.TemporaryDirectory(prefix="decompkit-bench-hardening-") as scratch:
        plain = _course(Path(scratch) / "plain", PLAIN_CONFIG, ATTACKS)
        start = time.perf_counter()
        _plain(plain)
        plain_seconds = time.perf_counter() - start
        # Alone in a course of its own: on plain nbgrader it overwrites the others' gradebook.
        outside = _course(Path(scratch) / "outside", PLAIN_CONFIG, ["writes_outside"])
        _plain(outside)
        kit_root = _course(Path(scratch) / "kit", None, [*ATTACKS, "writes_outside"])
        start = time.perf_counter()
        kit = {(r.student, r.notebook): r for r in autograde(kit_root, "decomp", timeout=5)}
        kit_seconds = time.perf_counter() - start
        stored = plain / "autograded" / "output_flood" / "decomp" / f"{CHAIN}.ipynb"
        kept = kit_root / "autograded" / "output_flood" / "decomp" / f"{CHAIN}.ipynb"
        cases = [
            (
                "1. a cell patches what the tests trust: 2 wrong answers",
                _plain_score(plain, "patched_modules", CHAIN) == full,
                kit[("patched_modules", CHAIN)].score == full - 2,
            ),
            (
                "2. an input transformer silences the tests: 2 wrong answers",
                _plain_score(plain, "input_transformer", CHAIN) == full,
                kit[("input_transformer", CHAIN)].score == full - 2,
            ),
            (
                "3. a cell overwrites the course's files through ../",
                (outside / "gradebook.db").read_bytes()[:15] != b"SQLite format 3",
                (kit_root / "gradebook.db").read_bytes()[:15] == b"SQLite format 3",
            ),
            (
                "4a. a kernel death costs the student's other notebooks",
                _plain_score(plain, "kernel_death", HORIZON) == 0.0,
                kit[("kernel_death", HORIZON)].score == horizon,
            ),
            (
                "4b. a notebook that is not JSON costs the other notebooks",
                _plain_score(plain, "invalid_json", HORIZON) == 0.0,
                kit[("invalid_json", HORIZON)].score == horizon,
            ),
            (
                "5. 50 MB printed by one cell is stored",
                stored.is_file() and stored.stat().st_size > 40_000_000,
                kept.stat().st_size < 1_000_000,
            ),
            (
                "6. a warning on stderr costs a correct answer",
                _plain_score(plain, "library_warned", CHAIN) == full - 1,
                kit[("library_warned", CHAIN)].score == full,
            ),
        ]
    print(f"{'case':<62} {'plain nbgrader':>15} {'the kit':>10}")
    failed = False
    for name, defect_shown, defended in cases:
        print(
            f"{name:<62} {'defect' if defect_shown else 'NO DEFECT':>15} "
            f"{'defended' if defended else 'OPEN':>10}"
        )
        failed |= not (defect_shown and defended)
    print(
        f"\nplain nbgrader {plain_seconds:.1f} s, the kit {kit_seconds:.1f} s "
        f"({len(ATTACKS)} students, whole assignment each; the kit with one more)"
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
