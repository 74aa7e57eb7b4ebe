"""The autograded notebook holds no script: hostile markdown, outputs and metadata go through
``sanitize_notebook``, then the notebook is rendered the two ways it is read (nbconvert's lab
template, as feedback starts from; nbgrader's formgrade template, the instructor's manual
grading page) and the cells' HTML is searched for anything a browser would run. What students
legitimately write stays: maths with ``<``, code spans, tables, images, the kit's own errors."""

from __future__ import annotations

import copy
import html
import re

import nbformat
import pytest
from nbconvert import HTMLExporter
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output, new_raw_cell
from traitlets.config import Config

from decompkit.course.sanitize import sanitize_notebook

from .hostile import HOSTILE_FENCES, HOSTILE_MARKDOWN, PNG, surface
from .submissions import RELEASED, ROOT

_RUN = "document.title='PWNED'//"

#: Markdown that runs script in nbconvert's rendering as it stands, one attack a cell.
MARKDOWN_ATTACKS = [
    line for line in HOSTILE_MARKDOWN.splitlines() if "PWNED" in line and "Maths" not in line
] + [
    HOSTILE_FENCES,
    f'<a href="  jav&#x0A;ascript:{_RUN}">tab in the scheme</a>',
    f"[ref]: javascript:{_RUN}\n\n[a reference link][ref]",
    f"![an image](javascript:{_RUN})",
    f'<img src="data:text/html,<script>{_RUN}</script>">',
    f'<a href="data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==">{_RUN}</a>',
    f'<svg><a xlink:href="javascript:{_RUN}"><text y="20">svg link</text></a></svg>',
    f'<math><maction actiontype="statusline" xlink:href="javascript:{_RUN}">m</maction></math>',
    f"<noscript><p title=\"</noscript><img src=x onerror='{_RUN}'>\"></noscript>",
    f'<p style="background:url(javascript:{_RUN}); width: expression({_RUN})">css</p>',
    f'`code` <img src=x onerror="{_RUN}" title="`x`">',
]
#: Markdown nbconvert already shows as text, kept as a guard: the rewrite must not open it up
#: (maths and fence info strings are escaped by the renderer, an escaped "<" is text, a CDATA
#: section is a comment to a browser, a tag cut by a blank line is closed by the next "<p>").
MARKDOWN_GUARDS = [
    f'<div title="a\n\nb">c" onmouseover="{_RUN}',
    f"<div\n\n onmouseover={_RUN}>x",
    f'Maths that hides a tag: $x <img src=x onerror="{_RUN}"> y$',
    f'$$<img src=x onerror="{_RUN}">$$ \\\\(<img src=x onerror="{_RUN}">\\\\)',
    f'\\<img src=x onerror="{_RUN}">',
    f'```python"><img src=x onerror="{_RUN}">\ncode\n```',
    f'<![CDATA[ <img src=x onerror="{_RUN}"> ]]>',
]


def lab_cells(nb) -> str:
    """The cells as nbconvert's lab template writes them (what feedback starts from)."""
    page, _ = HTMLExporter(template_name="lab").from_notebook_node(nb)
    return page.split("<main>", 1)[1].split("</main>", 1)[0]


def formgrade_cells(nb) -> str:
    """The cells as formgrader's manual-grading page shows them."""
    from nbgrader.server_extensions.formgrader import handlers

    config = Config()
    config.HTMLExporter.template_name = "formgrade"
    config.HTMLExporter.extra_template_basedirs = [handlers.template_path]
    resources = {"assignment_id": "decomp", "notebook_id": "n", "submission_id": "x",
                 "index": 0, "total": 1, "base_url": "", "student": "s", "last_name": "",
                 "first_name": "", "notebook_path": "n.ipynb"}  # fmt: skip
    page, _ = HTMLExporter(config=config).from_notebook_node(nb, resources=resources)
    return page.split('id="notebook-container">', 1)[1].rsplit('<div class="help">', 1)[0]


def _rendered(nb) -> dict[str, str]:
    return {"lab": lab_cells(nb), "formgrade": formgrade_cells(nb)}


def _one(cell) -> nbformat.NotebookNode:
    nb = new_notebook(cells=[cell])
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    return nb


# --- markdown --------------------------------------------------------------------------------


@pytest.mark.parametrize("source", MARKDOWN_ATTACKS + MARKDOWN_GUARDS, ids=lambda s: s[:40])
def test_hostile_markdown_runs_nowhere(source):
    nb = sanitize_notebook(_one(new_markdown_cell(source)))
    for where, cells in _rendered(nb).items():
        assert surface(cells) == [], (where, nb.cells[0].source)


def test_what_a_student_writes_still_renders():
    source = (
        "## Answer\n\nSince $d > \\varphi$ and $a < b$, **yes**: `x<y>` holds; <sub>2</sub>.\n\n"
        "| n | $p^n$ |\n|---|---|\n| 5 | 0.77 |\n\n```python\nif a<b:\n    pass\n```\n\n"
        '<img src="data:image/png;base64,' + PNG + '" width="40"> [lecture](https://example.org)'
    )
    nb = sanitize_notebook(_one(new_markdown_cell(source)))
    assert nb.cells[0].source == source
    cells = lab_cells(nb)
    assert "$d &gt; \\varphi$" in cells and "$a &lt; b$" in cells
    assert "<code>x&lt;y&gt;</code>" in cells and "<sub>2</sub>" in cells and "<table>" in cells
    assert f'src="data:image/png;base64,{PNG}"' in cells and 'width="40"' in cells
    assert '<a href="https://example.org">lecture</a>' in cells


def test_a_cell_that_lost_html_says_so():
    nb = sanitize_notebook(_one(new_markdown_cell(f'Hello <img src=x onerror="{_RUN}">')))
    assert nb.cells[0].source.startswith("> *The grader removed HTML")
    assert "Hello" in nb.cells[0].source


@pytest.mark.parametrize("notebook", sorted(RELEASED.glob("*.ipynb")), ids=lambda p: p.stem)
def test_the_released_notebooks_pass_unchanged(notebook):
    nb = nbformat.read(notebook, as_version=4)
    before = [c.source for c in nb.cells]
    assert [c.source for c in sanitize_notebook(nb).cells] == before


def test_attachments_keep_images_only():
    cell = new_markdown_cell("![fig](attachment:fig.png) ![x](attachment:x.html)")
    cell.attachments = {
        "fig.png": {"image/png": PNG},
        "x.html": {'text/html"><script>': "PHNjcmlwdD4="},
        'y"><script>.png': {"image/png": "not base64 <script>"},
    }
    nb = sanitize_notebook(_one(cell))
    assert nb.cells[0].attachments == {"fig.png": {"image/png": PNG}}
    cells = lab_cells(nb)
    assert f'src="data:image/png;base64,{PNG}"' in cells and surface(cells) == []


def test_a_raw_cell_shows_no_script():
    nb = sanitize_notebook(_one(new_raw_cell(f"<script>{_RUN}</script><b>raw</b>")))
    assert "<script" not in nb.cells[0].source and "<b>raw</b>" in nb.cells[0].source


# --- outputs ---------------------------------------------------------------------------------


def _display(data, metadata=None, kind="display_data"):
    cell = new_code_cell("display(x)", execution_count=1)
    extra = {"execution_count": 1} if kind == "execute_result" else {}
    cell.outputs = [new_output(kind, data=data, metadata=metadata or {}, **extra)]
    return _one(cell)


#: Outputs that run script in nbconvert's rendering as it stands ("svg" and "latex" are guards:
#: nbconvert shows an SVG as an image and escapes TeX, the sanitiser must keep it so).
HOSTILE_OUTPUTS = {
    "html": ({"text/html": f'<img src=x onerror="{_RUN}"><b>kept</b>'}, {}),
    "markdown": ({"text/markdown": f'<img src=x onerror="{_RUN}"> **kept**'}, {}),
    "isolated": ({"text/html": f"<script>{_RUN}</script>"}, {"text/html": {"isolated": True}}),
    "width": ({"image/png": PNG}, {"image/png": {"width": f"9 onload={_RUN}", "height": 9}}),
    "filenames": ({"image/png": PNG}, {"filenames": {"image/png": "javascript:alert(1)"}}),
    "mermaid": ({"text/vnd.mermaid": f'graph TD; A["<img src=x onerror={_RUN}>"]'}, {}),
    "widget": ({"application/vnd.jupyter.widget-view+json": {"model_id": "m"}}, {}),
    "svg": ({"image/svg+xml": f'<svg xmlns="http://www.w3.org/2000/svg" onload="{_RUN}"/>'}, {}),
    "latex": ({"text/latex": f'$x <img src=x onerror="{_RUN}">$'}, {}),
}


@pytest.mark.parametrize("name", HOSTILE_OUTPUTS)
def test_hostile_outputs_run_nowhere(name):
    data, metadata = HOSTILE_OUTPUTS[name]
    nb = sanitize_notebook(_display(data, metadata))
    for where, cells in _rendered(nb).items():
        assert surface(cells) == [], (where, nb.cells[0].outputs)
    assert nb.cells[0].outputs, "an output is shown or replaced by a note, never lost silently"


@pytest.mark.parametrize(
    "mime", ["application/javascript", "text/javascript", "application/vnd.evil+javascript"]
)
def test_a_script_output_is_replaced_by_a_note(mime):
    nb = sanitize_notebook(_display({mime: _RUN, "text/plain": "<Javascript object>"}))
    (output,) = nb.cells[0].outputs
    assert set(output.data) == {"text/plain"}
    assert "script" in output.data["text/plain"] and mime in output.data["text/plain"]
    for cells in _rendered(nb).values():
        assert "<script" not in cells and _RUN not in html.unescape(cells)


def test_the_width_of_an_image_is_a_number():
    nb = sanitize_notebook(_display({"image/png": PNG}, {"image/png": {"width": "9 onload=x"}}))
    assert nb.cells[0].outputs[0].metadata == {}
    nb = sanitize_notebook(_display({"image/png": PNG}, {"image/png": {"width": 640}}))
    assert nb.cells[0].outputs[0].metadata == {"image/png": {"width": 640}}


def test_svg_is_shown_as_an_image_never_inline():
    svg = f'<svg xmlns="http://www.w3.org/2000/svg" onload="{_RUN}"><rect width="9"/></svg>'
    nb = sanitize_notebook(_display({"image/svg+xml": svg}))
    data = nb.cells[0].outputs[0].data
    assert "image/svg+xml" not in data
    assert re.fullmatch(r'<img src="data:image/svg\+xml;base64,[A-Za-z0-9+/=]+" alt="[^"]*">',
                        data["text/html"])  # fmt: skip


def test_plain_text_images_and_the_kits_errors_stay():
    cell = new_code_cell("x", execution_count=3)
    cell.outputs = [
        new_output("stream", name="stdout", text="<b>printed</b>\n"),
        new_output(
            "execute_result", data={"text/plain": "0.5", "image/png": PNG}, execution_count=3
        ),  # fmt: skip
        new_output(
            "error",
            ename="CheckFailed",
            evalue="B1: p' is wrong",
            traceback=["\x1b[31mCheckFailed\x1b[0m: B1"],
        ),  # fmt: skip
    ]
    nb = _one(cell)
    before = copy.deepcopy(nb.cells[0].outputs)
    assert sanitize_notebook(nb).cells[0].outputs == before


# --- metadata --------------------------------------------------------------------------------


def test_metadata_renderers_read_is_plain():
    cell = new_code_cell("x")
    cell.metadata = {
        "tags": ["explore", f'x" onmouseover="{_RUN}'],
        "nbgrader": {"grade": True, "grade_id": f'"><img src=x onerror="{_RUN}">', "points": 1},
        "jupyter": {"source_hidden": False},
        "evil": {"html": "<script>"},
    }
    nb = _one(cell)
    nb.cells[0].id = '"><script>'
    nb.metadata["widgets"] = {"application/vnd.jupyter.widget-state+json": {"state": {}}}
    nb = sanitize_notebook(nb)
    meta = nb.cells[0].metadata
    assert meta["tags"] == ["explore"] and "evil" not in meta
    assert "nbgrader" not in meta  # no grader wrote that grade_id
    assert re.fullmatch(r"[A-Za-z0-9_-]+", nb.cells[0].id)
    assert "widgets" not in nb.metadata
    for cells in _rendered(nb).values():
        assert surface(cells) == []


def test_sanitising_twice_changes_nothing_more():
    nb = _one(new_markdown_cell(HOSTILE_MARKDOWN))
    nb.cells.append(_display(*HOSTILE_OUTPUTS["html"]).cells[0])
    once = sanitize_notebook(nb)
    twice = sanitize_notebook(copy.deepcopy(once))
    assert twice == once


def test_nbgrader_autograde_stores_the_notebook_sanitised():
    """Plain ``nbgrader autograde`` under the course's configuration sanitises last."""
    from traitlets.config import PyFileConfigLoader
    from traitlets.utils.importstring import import_item

    config = PyFileConfigLoader("nbgrader_config.py", path=str(ROOT)).load_config()
    steps = config.Autograde.autograde_preprocessors
    assert steps[-1] == "decompkit.course.plugins.Sanitize"
    step = import_item(steps[-1])(config=config)
    nb, _ = step.preprocess(_one(new_markdown_cell(HOSTILE_MARKDOWN)), {})
    assert surface(formgrade_cells(nb)) == []
