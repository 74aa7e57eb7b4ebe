"""The answer read-out: what a grading kernel evaluates, and what the grader rebuilds from it."""

from __future__ import annotations

import json
import subprocess
import sys
from fractions import Fraction

import numpy as np
from nbformat.v4 import new_code_cell, new_notebook

from decompkit.course.engine.clean_check import export_expressions
from decompkit.course.engine.codec import Unreadable, decode

ANSWER = "x = y = z = None\n### BEGIN SOLUTION\nx = 1\ny = 2\nz = 3\n### END SOLUTION"
# What the student's cells left in the kernel: every kind of value the codec knows, and one
# it does not.
KERNEL = (
    "import numpy as np\n"
    "from fractions import Fraction\n"
    "x = {'a': (1, 2.5), 'b': np.arange(3, dtype=np.int16), 'c': {Fraction(1, 3), 2**70}}\n"
    "y = [np.float32(0.5), None, 'text', True]\n"
    "z = object()\n"
)


def _source():
    cell = new_code_cell(ANSWER)
    cell.metadata["nbgrader"] = {"solution": True, "grade": False, "grade_id": "xyz_answer"}
    return new_notebook(cells=[cell])


def _evaluate_in_a_fresh_interpreter(expressions: dict[str, str]) -> tuple[dict, list]:
    """Run the kernel's cells, then evaluate each expression as ``user_expressions`` would."""
    probe = (
        f"{KERNEL}"
        "import json, sys\n"
        f"found = {{name: eval(text) for name, text in {expressions!r}.items()}}\n"
        "heavy = sorted(m for m in ('nbformat', 'nbgrader', 'nbclient') if m in sys.modules)\n"
        "print(json.dumps([found, heavy]))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout
    found, heavy = json.loads(out)
    return found, heavy


def test_the_kernel_reads_answers_out_with_the_codec_alone():
    expressions = export_expressions(_source())
    assert sorted(expressions) == ["x", "y", "z"]
    found, heavy = _evaluate_in_a_fresh_interpreter(expressions)
    assert heavy == [], f"the read-out loaded {heavy} into the kernel"

    x, y, z = (decode(found[name]) for name in "xyz")
    assert x.keys() == {"a", "b", "c"}
    assert x["a"] == (1, 2.5) and type(x["a"]) is tuple
    assert x["b"].dtype == np.int16 and x["b"].tolist() == [0, 1, 2]
    assert x["c"] == {Fraction(1, 3), 2**70}
    assert y == [np.float32(0.5), None, "text", True] and type(y[0]) is np.float32
    assert isinstance(z, Unreadable) and "object" in z.why


def test_malformed_read_outs_are_unreadable_never_an_error():
    for text in ["", "[1, 2", '{"__int__": "12", "extra": 1}', '{"__nope__": 1}', "[1.5]"]:
        assert isinstance(decode(text), Unreadable), text
