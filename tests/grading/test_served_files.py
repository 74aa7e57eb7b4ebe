"""What formgrader would serve of a submission: only files no browser runs.

A student's other files (data, pictures) are copied next to the autograded notebook, and
formgrader serves that folder from the instructor's Jupyter origin: an HTML or SVG file handed
in, or a page named like a picture, would run there as the instructor.
"""

from __future__ import annotations

import shutil

import nbformat

from decompkit.course.grade import autograde
from decompkit.course.sanitize import safe_to_serve

from .submissions import ROOT, submission

PNG = b"\x89PNG\r\n\x1a\n" + bytes(24)


def test_only_data_and_real_pictures_reach_the_folder_formgrader_serves(tmp_path):
    root = tmp_path / "course"
    (root / "solutions").mkdir(parents=True)
    shutil.copy2(ROOT / "nbgrader_config.py", root)
    shutil.copytree(ROOT / "solutions" / "decomp", root / "solutions" / "decomp")
    folder = root / "submitted" / "s1" / "decomp"
    folder.mkdir(parents=True)
    nbformat.write(submission("01-chain-reliability"), folder / "01-chain-reliability.ipynb")
    files = {
        "evil.html": b"<script>document.title='pwned'</script>",
        "evil.svg": b"<svg xmlns='http://www.w3.org/2000/svg' onload='alert(1)'/>",
        "page.png": b"<html><script>alert(1)</script></html>",  # a page named like a picture
        "notes.xhtml": b"<html xmlns='http://www.w3.org/1999/xhtml'><script/></html>",
        "plot.png": PNG,
        "data.csv": b"a,b\n1,2\n",
    }
    for name, data in files.items():
        (folder / name).write_bytes(data)
    (folder / "solutions.json").symlink_to(
        ROOT / "solutions" / "decomp" / "01-chain-reliability.ipynb"
    )

    autograde(root, "decomp", workers=1, timeout=10)
    served = root / "autograded" / "s1" / "decomp"
    assert sorted(p.name for p in served.iterdir()) == [
        "01-chain-reliability.ipynb",
        "data.csv",
        "plot.png",
    ]


def test_safe_to_serve_names_the_kinds_it_lets_through(tmp_path):
    cases = {
        "a.png": PNG,
        "b.jpg": b"\xff\xd8\xff\xe0" + bytes(8),
        "c.txt": b"hello",
        "d.png": b"GIF89a",
        "e.htm": b"hi",
        "f": b"x",
        "g.js": b"1",
        "h.csv": b"1,2",
    }
    found = {}
    for name, data in cases.items():
        (tmp_path / name).write_bytes(data)
        found[name] = safe_to_serve(tmp_path / name)
    assert found == {
        "a.png": True,
        "b.jpg": True,
        "c.txt": True,
        "d.png": False,
        "e.htm": False,
        "f": False,
        "g.js": False,
        "h.csv": True,
    }
