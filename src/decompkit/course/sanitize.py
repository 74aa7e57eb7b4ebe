"""What a submission shows, made safe to show: no script from a student reaches a browser.

The grader stores every autograded notebook through :func:`sanitize_notebook` (the kit's
runner, and nbgrader's own ``autograde`` through ``plugins.Sanitize``); formgrader and the
feedback pages render what is stored. It keeps, by allow-list:

- markdown cells, ``text/markdown`` and ``text/html`` outputs and raw cells with their HTML,
  links and maths cleaned by :mod:`decompkit.course.markup` and
  :mod:`decompkit.course.safe_markdown` (prose, tables, code, maths with
  ``<`` and ``>``, images from data or attachments); a cell that lost anything says so;
- ``text/plain``, PNG and JPEG images (base64, checked), ``text/latex`` with its TeX cleaned,
  streams and error outputs (the kit's own verdicts among them): renderers escape them;
- an SVG as an ``<img>`` of it (a browser runs no script in an image), never inline;
- metadata a renderer reads, in the shape it expects: cell ids and tags as names, nbgrader's
  cell metadata with its types, image sizes as numbers, attachments as base64 images.

Everything else goes: ``application/javascript`` and every other script type (a note takes
its place), widget views and the widget state, Mermaid, any other MIME type, output metadata
such as ``isolated`` (an iframe) or ``filenames`` (an image URL), unknown cell types, keys and
metadata. Sanitising twice changes nothing more.
"""

from __future__ import annotations

import base64
import binascii
import math
import os
import re

from nbformat import from_dict
from nbformat.corpus.words import generate_corpus_id
from nbformat.v4 import new_output

from .engine.files import open_regular
from .markup import clean_html
from .safe_markdown import clean_markdown, clean_tex

__all__ = ["SCRIPT_NOTE", "safe_to_serve", "sanitize_notebook"]

#: What replaces a script output.
SCRIPT_NOTE = "[{mime} output removed by the grader: script from a submission does not run.]"
_HIDDEN_NOTE = "[{mime} output not shown in the graded copy.]"
_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
_NAME = re.compile(r"[\w.:+-]{1,64}")
_BASE64 = re.compile(r"[A-Za-z0-9+/\n\r]*={0,2}\n?")
_SCRIPT = re.compile(r"javascript|ecmascript|jscript|wasm|\+js\b|/js\b", re.I)
_IMAGES = ("image/png", "image/jpeg")
_KEYS = {
    "code": {"cell_type", "id", "metadata", "source", "outputs", "execution_count"},
    "markdown": {"cell_type", "id", "metadata", "source", "attachments"},
    "raw": {"cell_type", "id", "metadata", "source", "attachments"},
}
_NOTEBOOK_METADATA = ("kernelspec", "language_info")
_NBGRADER_FLAGS = ("grade", "solution", "locked", "task")


def _text(value) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(part, str) for part in value):
        return "".join(value)
    return ""


def _count(value) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _number(value) -> bool:
    return (
        isinstance(value, (int, float))
        and not isinstance(value, bool)
        and math.isfinite(value)
        and 0 <= value < 100_000
    )


def _base64(value) -> str | None:
    """``value`` when it is base64 text, else None."""
    text = _text(value)
    if not text or not _BASE64.fullmatch(text):
        return None
    try:
        base64.b64decode(text, validate=False)
    except (binascii.Error, ValueError):
        return None
    return text


# --- metadata --------------------------------------------------------------------------------


def _nbgrader(meta) -> dict | None:
    """nbgrader's cell metadata with the types its templates expect (formgrader writes
    ``grade_id`` into element ids and ``points`` into the page unescaped); None for a cell
    whose grade_id could not be nbgrader's (no grader wrote it, and nbgrader's feedback would
    look it up)."""
    if "grade_id" in meta and not (
        isinstance(meta["grade_id"], str) and _ID.fullmatch(meta["grade_id"])
    ):
        return None
    kept = {key: meta[key] for key in _NBGRADER_FLAGS if isinstance(meta.get(key), bool)}
    kept |= {key: meta[key] for key in ("grade_id",) if key in meta}
    kept |= {key: meta[key] for key in ("points", "score") if _number(meta.get(key))}
    if _count(meta.get("schema_version")) is not None:
        kept["schema_version"] = meta["schema_version"]
    if meta.get("cell_type") in ("code", "markdown"):
        kept["cell_type"] = meta["cell_type"]
    for key in ("checksum", "comment"):
        if isinstance(meta.get(key), str):
            kept[key] = meta[key]
    return kept


def _cell_metadata(meta, cell_type: str) -> dict:
    if not isinstance(meta, dict):
        return {}
    kept = {}
    if isinstance(meta.get("tags"), list):
        kept["tags"] = [t for t in meta["tags"] if isinstance(t, str) and _NAME.fullmatch(t)]
    if isinstance(meta.get("nbgrader"), dict) and (nbgrader := _nbgrader(meta["nbgrader"])):
        kept["nbgrader"] = nbgrader
    if isinstance(meta.get("jupyter"), dict):
        flags = {k: v for k, v in meta["jupyter"].items() if isinstance(v, bool)}
        kept["jupyter"] = {k: flags[k] for k in ("source_hidden", "outputs_hidden") if k in flags}
    for key in ("collapsed", "editable", "deletable", "scrolled"):
        if isinstance(meta.get(key), bool):
            kept[key] = meta[key]
    if cell_type == "raw":
        for key in ("raw_mimetype", "format"):
            if isinstance(meta.get(key), str) and _NAME.fullmatch(meta[key].replace("/", ".")):
                kept[key] = meta[key]
    return kept


def _notebook_metadata(meta) -> dict:
    """Kernel and language only: no widget state (nbconvert would load the widget manager
    and render it), no title or anything else a template could write out."""
    if not isinstance(meta, dict):
        return {}
    return {key: meta[key] for key in _NOTEBOOK_METADATA if isinstance(meta.get(key), dict)}


def _attachments(value) -> dict:
    """Attachments that are PNG or JPEG images under a plain name."""
    kept = {}
    for name, bundle in (value or {}).items() if isinstance(value, dict) else ():
        if not (isinstance(name, str) and _NAME.fullmatch(name) and isinstance(bundle, dict)):
            continue
        images = {mime: _base64(bundle.get(mime)) for mime in _IMAGES}
        images = {mime: data for mime, data in images.items() if data}
        if images:
            kept[name] = images
    return kept


def _output_metadata(meta, data: dict) -> dict:
    """Sizes of the images shown, as numbers: nbconvert writes ``width={{ width }}`` into the
    ``<img>`` tag unquoted, so ``"9 onload=..."`` would be an event handler."""
    kept = {}
    for mime in _IMAGES:
        given = meta.get(mime) if isinstance(meta, dict) else None
        if mime not in data or not isinstance(given, dict):
            continue
        sizes = {k: given[k] for k in ("width", "height") if _number(given.get(k))}
        if isinstance(given.get("unconfined"), bool):
            sizes["unconfined"] = given["unconfined"]
        if sizes:
            kept[mime] = sizes
    return kept


# --- outputs ---------------------------------------------------------------------------------


def _svg_image(svg: str) -> str:
    encoded = base64.b64encode(svg.encode("utf-8")).decode("ascii")
    return f'<img src="data:image/svg+xml;base64,{encoded}" alt="SVG figure">'


def _bundle(data) -> tuple[dict, list[str]]:
    """The MIME bundle's safe part and the notes for what was left out."""
    kept, notes, hidden = {}, [], []
    for mime, value in (data or {}).items() if isinstance(data, dict) else ():
        if mime == "text/plain":
            kept[mime] = _text(value)
        elif mime in _IMAGES:
            if (image := _base64(value)) is not None:
                kept[mime] = image
        elif mime == "text/html":
            kept[mime] = clean_html(_text(value))
        elif mime == "text/markdown":
            kept[mime] = clean_markdown(_text(value))
        elif mime == "text/latex":
            kept[mime] = clean_tex(_text(value))
        elif isinstance(mime, str) and _SCRIPT.search(mime):
            notes.append(SCRIPT_NOTE.format(mime=mime))
        elif mime != "image/svg+xml":
            hidden.append(str(mime))
    svg = _text((data or {}).get("image/svg+xml")) if isinstance(data, dict) else ""
    if svg and not {"text/html", *_IMAGES} & kept.keys():
        kept["text/html"] = _svg_image(svg)
    if notes and set(kept) <= {"text/plain"}:
        kept["text/plain"] = "\n".join(notes)
        notes = []
    if hidden and not kept:
        kept["text/plain"] = "\n".join(_HIDDEN_NOTE.format(mime=m) for m in hidden)
    return kept, notes


def _outputs(outputs) -> list:
    kept = []
    for output in outputs if isinstance(outputs, list) else ():
        kind = output.get("output_type") if isinstance(output, dict) else None
        if kind == "stream":
            name = output.get("name") if output.get("name") in ("stdout", "stderr") else "stdout"
            kept.append({"output_type": kind, "name": name, "text": _text(output.get("text"))})
        elif kind == "error":
            traceback = output.get("traceback")
            lines = traceback if isinstance(traceback, list) else []
            error = {"ename": str(output.get("ename", "")), "evalue": str(output.get("evalue", ""))}
            kept.append({"output_type": kind, **error, "traceback": [str(line) for line in lines]})
        elif kind in ("display_data", "execute_result"):
            data, notes = _bundle(output.get("data"))
            shown = {
                "output_type": kind,
                "data": data,
                "metadata": _output_metadata(output.get("metadata"), data),
            }
            if kind == "execute_result":
                shown["execution_count"] = _count(output.get("execution_count"))
            kept += [shown] if data else []
            kept += [new_output("display_data", data={"text/plain": note}) for note in notes]
    return kept


# --- cells -----------------------------------------------------------------------------------


def _cell(cell, seen: set) -> dict:
    kind = cell.get("cell_type") if isinstance(cell, dict) else None
    if kind not in _KEYS:
        kind = "markdown"
        cell = {"cell_type": kind, "source": "*[A cell the grader could not read was removed.]*"}
    clean = {"cell_type": kind, "metadata": _cell_metadata(cell.get("metadata"), kind)}
    if "id" in cell:
        given = cell["id"]
        valid = isinstance(given, str) and _ID.fullmatch(given) and given not in seen
        clean["id"] = given if valid else generate_corpus_id()
        seen.add(clean["id"])
    source = _text(cell.get("source"))
    if kind == "code":
        clean["source"] = source
        clean["execution_count"] = _count(cell.get("execution_count"))
        clean["outputs"] = _outputs(cell.get("outputs"))
    else:
        attachments = _attachments(cell.get("attachments"))
        if attachments:
            clean["attachments"] = attachments
        if kind == "markdown":
            clean["source"] = clean_markdown(source, attachments)
        else:  # a raw cell goes into an HTML page as it is (nbconvert's HTML templates)
            clean["source"] = clean_html(source)
    return {key: clean[key] for key in _KEYS[kind] if key in clean}


def sanitize_notebook(nb):
    """``nb`` with every markdown cell, rich output and the metadata renderers read made safe.

    Parameters
    ----------
    nb : nbformat.NotebookNode
        An executed notebook; modified in place.

    Returns
    -------
    nbformat.NotebookNode
        ``nb`` itself.

    Examples
    --------
    >>> from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output
    >>> cell = new_code_cell("display(x)")
    >>> cell.outputs = [new_output("display_data", data={
    ...     "application/javascript": "alert(1)", "text/plain": "<Javascript object>"})]
    >>> nb = new_notebook(cells=[new_markdown_cell("$a<b$ <img src=x onerror=alert(1)>"), cell])
    >>> nb = sanitize_notebook(nb)
    >>> print(nb.cells[0].source)
    > *The grader removed HTML, links or TeX from this cell that could run script.*
    <BLANKLINE>
    $a< b$ <img src="x">
    >>> print(nb.cells[1].outputs[0].data["text/plain"])
    [application/javascript output removed by the grader: script from a submission does not run.]
    """
    seen: set = set()
    cells = [_cell(cell, seen) for cell in nb.get("cells", [])]
    nb["cells"] = [from_dict(cell) for cell in cells]
    nb["metadata"] = from_dict(_notebook_metadata(nb.get("metadata")))
    return nb


#: The other files of a submission that may be stored beside its autograded notebook, where
#: formgrader serves them from the instructor's origin: data a browser shows as text, and
#: pictures that are what their name says. Anything else (a page, an SVG, a script, a file
#: of no known kind) could run there as the instructor, and is left out.
_TEXT = (".csv", ".tsv", ".txt", ".dat", ".json")
_PICTURES = {
    ".png": (b"\x89PNG\r\n\x1a\n",),
    ".jpg": (b"\xff\xd8\xff",),
    ".jpeg": (b"\xff\xd8\xff",),
    ".gif": (b"GIF87a", b"GIF89a"),
}


def safe_to_serve(path) -> bool:
    """Whether a submission's file may sit where formgrader serves it: a regular file (not a
    link) of text data, or a PNG, JPEG or GIF picture whose bytes say it is one.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "plot.png").write_bytes(b"<script>alert(1)</script>")
    >>> safe_to_serve(folder / "plot.png")
    False
    """
    suffix = os.path.splitext(str(path))[1].lower()
    if suffix not in _TEXT and suffix not in _PICTURES:
        return False
    try:
        data = open_regular(path)
    except OSError:
        return False
    if data is None:
        return False
    with data:
        return suffix in _TEXT or data.read(8).startswith(_PICTURES[suffix])
