"""The static lecture page's builder: the folder it writes, its size, its data and its modules.

The page itself runs in tests/browser/test_lecture_page.py; here the folder is checked without a
browser: every file it names is there and nothing outside it is fetched, the whole fits the size
budget, the data are valid JSON whose backgrounds match their stated sizes, and a student's id
gives that student's start values.
"""

from __future__ import annotations

import json
import re
import shutil
import struct

import pytest

from decompkit.exercises.params import params
from decompkit.page import BUDGET_BYTES, build_page, trace_run
from decompkit.page.__main__ import main
from decompkit.page.build import MODULES

STUDENT = "s1234"


def page_data(index):
    text = index.read_text(encoding="utf-8")
    found = re.search(r'<script type="application/json" id="page-data">(.*?)</script>', text, re.S)
    assert found, "index.html holds no page data"
    return json.loads(found.group(1))


def page_files(index):
    """The files of ``index``'s folder, and those its page names (index.html and backgrounds)."""
    folder = index.parent
    files = {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}
    named = {
        ratio["background"]
        for spec in page_data(index)["explorers"]
        for layout in spec["layouts"]
        for ratio in layout["ratios"].values()
    }
    return files, {"index.html"} | named


def png_size(path):
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n", f"{path.name} is not a PNG"
    return list(struct.unpack(">II", head[16:24]))


@pytest.fixture(scope="module")
def lecture(lecture_page_index):
    return lecture_page_index


@pytest.fixture(scope="module")
def student(lecture, tmp_path_factory):
    """A student's page built over a copy of the lecture page (a rebuild), beside a file of
    the instructor's and a stale background of an older build."""
    folder = tmp_path_factory.mktemp("page") / "student"
    shutil.copytree(lecture.parent, folder)
    (folder / "assets" / "notes.txt").write_text("mine")
    (folder / "assets" / "reliability-999@1x.png").write_bytes(b"old")
    return build_page(folder, student=STUDENT)


def test_the_folder_holds_index_and_its_backgrounds(lecture):
    files, named = page_files(lecture)
    assert files == named  # nothing missing, nothing left over


def test_the_page_fits_its_size_budget(lecture):
    size = sum(p.stat().st_size for p in lecture.parent.rglob("*") if p.is_file())
    assert size < BUDGET_BYTES, f"the page takes {size} bytes, over {BUDGET_BYTES}"


def test_nothing_is_fetched_from_outside_the_folder(lecture):
    for path in lecture.parent.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            assert b"http://" not in data and b"https://" not in data, path.name
    text = lecture.read_text(encoding="utf-8")
    # Every address the page loads is a file of its own folder (or a blob: made in the page).
    for address in re.findall(r'(?:src|href)="([^"#]+)"', text):
        assert not re.match(r"[a-z]+:|//|/", address), address


def test_the_modules_travel_inside_the_page(lecture):
    text = lecture.read_text(encoding="utf-8")
    names = re.findall(r'<script type="text/x-module" data-name="([^"]+)">', text)
    assert names == list(MODULES)  # each after the modules it imports
    for name, path in MODULES.items():
        assert path.read_text(encoding="utf-8") in text, f"{name} is not inlined whole"
    assert "export function paint(" in MODULES["explorer.js"].read_text(encoding="utf-8")


def test_the_data_match_the_backgrounds(lecture):
    data = page_data(lecture)
    assert data["whose"] == "the lecture's numbers"
    names = [spec["name"] for spec in data["explorers"]]
    assert names == ["reliability", "horizon", "dag", "trace"]
    for spec in data["explorers"]:
        names = {c["name"] for c in spec["controls"]}
        if spec["name"] == "dag":  # its own controls: example, options, durations
            assert names == {"workers"} and not spec["columns"]
        else:
            assert names == {n for column in spec["columns"] for n in column}
        for layout in spec["layouts"]:
            assert set(layout["ratios"]) == {"1", "2"}
            for ratio, baked in layout["ratios"].items():
                width, height = png_size(lecture.parent / baked["background"])
                assert [width, height] == baked["size"]
                assert abs(width - int(ratio) * layout["css"][0]) <= 1
                assert abs(height - int(ratio) * layout["css"][1]) <= 1
                if "scenes" in baked:  # a stepper: every step's scene, recorded
                    _check_steps(spec, baked, spec["sprites"][ratio], layout.get("panel"))
                    continue
                if "structures" in baked:  # the DAG explorer: pieces to assemble
                    _check_dag_pieces(spec, baked, spec["sprites"][ratio], layout.get("panel"))
                    continue
                for box in (ax["box"] for ax in baked["axes"].values()):
                    assert 0 <= box[0] < box[2] <= width and 0 <= box[1] < box[3] <= height
                assert all(baked["templates"].values()), "a moving artist without a look"


def _check_steps(spec, baked, sprites, panel=None):
    (slider,) = spec["controls"]
    steps = slider["max"] - slider["min"] + 1
    assert len(baked["scenes"]) == len(spec["steps"]) == steps > 1
    used = {i for scene in baked["scenes"] for i in scene}
    assert used == set(range(len(baked["items"])))  # each item stored once, and used
    names = {item["id"] for item in baked["items"] if "id" in item}
    assert names <= set(sprites)
    different = len({json.dumps(s) for s in baked["scenes"]})
    if panel == "gantt":  # the Gantt chart alone: only the line at the event's time moves
        run = trace_run(params("trace", "lecture"))
        assert not names and different == len({0, *(event.time for event in run.events)})
    else:
        assert names and different > steps // 2  # the boxes' texts change with the steps


def _sprite_ids(value):
    """Every bitmap id an item (or a piece: [id, dx, dy, advance]) of ``value`` names."""
    if isinstance(value, dict):
        own = {value[k] for k in ("id", "hatch") if isinstance(value.get(k), str)}
        return own.union(*(_sprite_ids(v) for v in value.values()))
    if isinstance(value, list):
        if len(value) == 4 and isinstance(value[0], str) and isinstance(value[3], float):
            return {value[0]}
        return set().union(*(_sprite_ids(v) for v in value))
    return set()


def _check_dag_pieces(spec, baked, sprites, panel=None):
    """The pieces of the panels a layout shows: both, or the ``panel`` alone."""
    named = _sprite_ids(baked)
    assert named and named <= set(sprites)  # every bitmap a piece names travels with the page
    assert (baked["gantt"] is None) == (panel == "plan")
    assert (baked["structures"] == {}) == (panel == "gantt")
    for key, example in spec["examples"].items():
        for structure, graph in example["graphs"].items() if panel != "gantt" else ():
            pieces = baked["structures"][f"{key} {structure}"]
            assert set(pieces["boxes"]) == {node for node, _ in graph}
            edges = {(u, v) for v, preds in graph for u in preds}
            assert {(a["u"], a["v"]) for a in pieces["arrows"]} == edges
        if panel == "plan":
            continue
        # the time axis reaches past the longest plan: every task at its longest, one worker
        longest = example["high"] * len(example["durations"]) + example["coordination"]
        assert max(map(int, baked["gantt"]["xticks"])) >= 1.1 * longest
        names = {str(n) for pair in example["labels"].items() for n in pair}
        assert names <= set(baked["gantt"]["labels"])
    if panel != "plan":
        assert set(baked["gantt"]["y"]) == {str(w) for w in range(1, 7)}


def test_the_lecture_numbers_start_the_explorers(lecture):
    chain, horizon = params("chain", "lecture"), params("horizon", "lecture")
    start = {
        s["name"]: {c["name"]: c["value"] for c in s["controls"]}
        for s in page_data(lecture)["explorers"]
    }
    assert start["reliability"] == {
        "p": chain.p,
        "n": chain.n,
        "d": chain.d,
        "phi": chain.phi,
        "kappa": chain.k,
    }
    assert start["horizon"] == {
        "p": horizon.p,
        "q": horizon.q,
        "n": horizon.n,
        "budget_factor": horizon.budget_factor,
    }
    _check_dag_start(page_data(lecture), params("dag", "lecture"))


def _check_dag_start(data, numbers):
    (spec,) = [s for s in data["explorers"] if s["name"] == "dag"]
    assert spec["controls"][0]["value"] == numbers.workers
    for key in ("A", "B"):
        example = getattr(numbers, key)
        start = {c["name"]: c["value"] for c in spec["durations"][key]}
        assert start == {f"duration-{key}-{n}": d for n, d in example.durations.items()}
        assert spec["examples"][key]["coordination"] == example.coordination


def test_a_student_id_gives_that_students_numbers(student):
    data = page_data(student)
    assert data["whose"] == f"the numbers of student {STUDENT}"
    chain = params("chain", STUDENT)
    assert chain != params("chain", "lecture")  # else the test could not fail
    start = {c["name"]: c["value"] for c in data["explorers"][0]["controls"]}
    assert (start["p"], start["n"], start["d"], start["phi"]) == (
        chain.p,
        chain.n,
        chain.d,
        chain.phi,
    )
    dag = params("dag", STUDENT)
    assert dag.B.durations != params("dag", "lecture").B.durations
    _check_dag_start(data, dag)
    assert STUDENT in student.read_text(encoding="utf-8")


def test_a_folder_of_something_else_is_refused_and_left_as_it_was(tmp_path, capsys):
    course = tmp_path / "course"
    (course / "assets").mkdir(parents=True)
    (course / "index.html").write_text("my own page")
    (course / "assets" / "logo-1@1x.png").write_bytes(b"mine")
    before = {p: p.read_bytes() for p in course.rglob("*") if p.is_file()}
    with pytest.raises(
        ValueError, match=r"folder must be new, empty or a lecture page.*index\.html"
    ):
        build_page(course)
    assert main(["--out", str(course)]) == 1
    assert "nothing was written" in capsys.readouterr().err
    assert {p: p.read_bytes() for p in course.rglob("*") if p.is_file()} == before
    with pytest.raises(ValueError, match="folder must be a folder, got the file"):
        build_page(course / "index.html")


def test_a_rebuild_replaces_the_page_and_keeps_other_files(student):
    assert (student.parent / "assets" / "notes.txt").read_text() == "mine"
    files, named = page_files(student)
    # of the older build only what the new page names is left (the stale background is
    # gone); the instructor's own file stays
    assert files == named | {"assets/notes.txt"}


def test_a_malformed_id_is_refused(tmp_path, capsys):
    with pytest.raises(ValueError, match="student"):
        build_page(tmp_path / "bad", student="!!")
    assert not (tmp_path / "bad").exists()  # refused before anything is written
    assert main(["--out", str(tmp_path / "bad"), "--student", "!!"]) == 1
    assert "student" in capsys.readouterr().err
