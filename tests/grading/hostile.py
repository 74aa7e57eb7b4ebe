"""A submission that tries to run script where its work is read, and a probe that tells whether
any of it ran.

Every payload marks its success where a test can see it: it sets ``document.title`` (to a text
starting with ``PWNED``) or ``window.name``, or asks the Jupyter server for ``/api/contents`` or
a new kernel (``POST /api/kernels``), which is code running as the instructor. The submission
answers the chain notebook with the instructor's solutions, so its page also shows answers,
scores and the lecture's maths.
"""

from __future__ import annotations

import base64
import os
import re
import struct
import zlib
from contextlib import contextmanager
from pathlib import Path

import nbformat
import pytest

from .submissions import ROOT, insert_after, submission

CHAIN = "01-chain-reliability"
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                 "--disable-background-networking"]  # fmt: skip
#: Screenshots of the last run (git-ignored).
ARTIFACTS = ROOT / "tests" / "browser" / "artifacts"
MARK = "PWNED"
#: B1 answered as if a retry were always right.
WRONG_B1 = "p_prime = P.p + (1 - P.p) * P.d"
_RUN = f"document.title='{MARK}';window.name='{MARK}';fetch('/api/contents')"


def _png(width: int = 2, height: int = 2, rgb: bytes = b"\x00\x80\x80") -> str:
    """A small one-colour PNG, base64-encoded: an image output that must stay."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    rows = b"".join(b"\x00" + rgb * width for _ in range(height))
    png = b"\x89PNG\r\n\x1a\n" + chunk(
        b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    )
    png += chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")
    return base64.b64encode(png).decode()


PNG = _png()

#: Markdown a student may write into any cell that is not a locked one, one attack a line.
HOSTILE_MARKDOWN = f"""\
### My notes

The maths still reads: $a < b$ and $p' = p + (1-p)\\,d\\,p$, in code `x<y>` too.

| item | my answer |
|------|-----------|
| B1   | $p + (1-p) d p$ |

<img src=x onerror="{_RUN}">
<svg onload="{_RUN}"></svg><svg><script>{_RUN}</script></svg>
<script>{_RUN}</script>
<iframe srcdoc="<script>parent.{_RUN}</script>"></iframe>
<object data="data:text/html,<script>parent.{_RUN}</script>"></object>
<embed src="javascript:{_RUN}">
<details open ontoggle="{_RUN}"><summary>open me</summary>hidden</details>
<math><mtext><table><mglyph><style><img src=x onerror="{_RUN}">
<form><button formaction="javascript:{_RUN}">send</button></form>
<meta http-equiv="refresh" content="0;url=javascript:{_RUN}"><base href="javascript:/">
<p style="position:fixed;top:0;left:0;width:100%;height:100%;background:red">covers the page</p>
[a link](javascript:{_RUN}) and [another](java&#115;cript:{_RUN}) and <javascript:{_RUN}>

Maths that hides a tag: $x <img src=x onerror="{_RUN}"> y$ and $$\\href{{javascript:{_RUN}}}{{x}}$$
"""

#: Mermaid and an HTML block around a fence: the renderer and a rewrite could disagree here.
HOSTILE_FENCES = f"""\
```mermaid
graph TD; A["<img src=x onerror={_RUN}>"]
```

<div>
```
</div>
<img src=x onerror="{_RUN}">
```
"""

_HTML = f'<img src=x onerror="{_RUN}"><b>bold HTML output</b>'
_JS = _RUN + ";fetch('/api/kernels', {method: 'POST'})"
_MARKDOWN = f'<img src=x onerror="{_RUN}"> **a markdown output**'
_SVG = (
    f'<svg xmlns="http://www.w3.org/2000/svg" width="60" height="20" onload="{_RUN}">'
    f'<rect width="60" height="20" fill="teal"/><script>{_RUN}</script></svg>'
)
_ISOLATED = {"text/html": f"<p>isolated</p><script>{_RUN}</script>"}
_WIDTH = {"image/png": {"width": "40 onload=" + _RUN}}  # nbconvert writes width=... unquoted
_MERMAID = {"text/vnd.mermaid": f'graph TD; A["<img src=x onerror={_RUN}>"]'}
_EVIL = {"application/vnd.evil+javascript": _RUN, "text/plain": "evil"}
#: A cell the grader runs: each display is an output the autograded notebook stores.
HOSTILE_OUTPUTS = "\n".join(
    [
        "from IPython.display import HTML, SVG, Javascript, Markdown, display",
        f"display(HTML({_HTML!r}))",
        f"display(Javascript({_JS!r}))",
        f"display(Markdown({_MARKDOWN!r}))",
        f"display(SVG({_SVG!r}))",
        f"display({_ISOLATED!r}, raw=True, metadata={{'text/html': {{'isolated': True}}}})",
        f"display({{'image/png': {PNG!r}, 'text/plain': 'a tiny image'}}, raw=True,"
        f" metadata={_WIDTH!r})",
        f"display({_MERMAID!r}, raw=True)",
        f"display({_EVIL!r}, raw=True)",
        "print('printed <b>text</b> stays text')",
    ]
)


def hostile_chain() -> nbformat.NotebookNode:
    """The chain notebook answered right but for B1 (so its page shows a hint), with hostile
    markdown, fences, outputs and a raw cell."""
    nb = submission(CHAIN, {"p_prime_answer": WRONG_B1})
    insert_after(nb, "chain_success_value", HOSTILE_OUTPUTS)
    first = next(i for i, c in enumerate(nb.cells) if c.cell_type == "markdown")
    nb.cells.insert(first + 1, nbformat.v4.new_markdown_cell(HOSTILE_MARKDOWN))
    nb.cells.insert(first + 2, nbformat.v4.new_markdown_cell(HOSTILE_FENCES))
    raw = nbformat.v4.new_raw_cell(f"<script>{_RUN}</script><b>a raw cell</b>")
    nb.cells.insert(first + 3, raw)
    return nb


#: Collects, on a Playwright page, what would show that script ran: requests to the Jupyter
#: API, CSP violations, and (read after load) the title and window.name.
PROBE = """
window.__violations = [];
document.addEventListener('securitypolicyviolation',
    e => window.__violations.push(e.violatedDirective + ' ' + e.blockedURI));
"""


class Watch:
    """What a page did: every request it made and every console message."""

    def __init__(self, page):
        self.requests: list[tuple[str, str]] = []
        self.console: list[str] = []
        page.on("request", lambda r: self.requests.append((r.method, r.url)))
        page.on("console", lambda m: self.console.append(f"{m.type}: {m.text}"))
        page.add_init_script(PROBE)
        self.page = page

    def api_calls(self) -> list[tuple[str, str]]:
        """Requests to the Jupyter server's contents or kernels API."""
        return [(m, u) for m, u in self.requests if "/api/contents" in u or "/api/kernels" in u]

    def state(self, root: str = "body") -> dict:
        """The title, window.name and CSP violations of the page; the script-capable links and
        the event handlers inside ``root`` (a CSS selector)."""
        return self.page.evaluate(
            """root => ({
                title: document.title,
                name: window.name,
                violations: window.__violations || [],
                scriptable: [...document.querySelector(root)
                    .querySelectorAll('[href],[src],[action],[formaction]')]
                    .flatMap(e => ['href', 'src', 'action', 'formaction']
                        .map(a => e.getAttribute(a) || ''))
                    .filter(u => /^\\s*(javascript|vbscript|data:text\\/html)/i.test(u)),
                handlers: [...document.querySelector(root).querySelectorAll('*')].flatMap(e =>
                    [...e.attributes].filter(a => a.name.startsWith('on'))
                        .map(a => e.tagName + ' ' + a.name)),
            })""",
            root,
        )


def grade_hostile(root: Path, student: str) -> None:
    """Hand the hostile chain notebook in as ``student`` and grade it with the kit."""
    from decompkit.course.grade import autograde

    folder = root / "submitted" / student / "decomp"
    folder.mkdir(parents=True)
    nbformat.write(hostile_chain(), folder / f"{CHAIN}.ipynb")
    results = autograde(root, "decomp", students=[student], workers=1, timeout=30)
    chain = [r for r in results if r.notebook == CHAIN]
    assert [r.status for r in chain] == ["graded"], [r.message for r in results]


@contextmanager
def chromium_browser():
    """Debian's Chromium under Playwright; skip (or fail, with DECOMPKIT_REQUIRE_BROWSER=1)
    when either is missing."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        sync_playwright = None
    if sync_playwright is None or not CHROMIUM.exists():
        if os.environ.get("DECOMPKIT_REQUIRE_BROWSER") == "1":
            pytest.fail("Chromium or Playwright missing (run .ci/install-browser)")
        pytest.skip("Chromium or Playwright missing")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


URL_ATTRIBUTES = {"href", "src", "action", "formaction", "data", "background", "poster"}
DANGEROUS = {"script", "iframe", "frame", "frameset", "object", "embed", "applet", "base",
             "meta", "form", "link", "style", "template", "noscript", "svg", "math"}  # fmt: skip
_SAFE_URL = re.compile(r"\s*(https?:|mailto:|#|data:image/(png|jpeg|gif|webp|svg\+xml)[;,]|$)")
_RELATIVE = re.compile(r"\s*(?![a-z][a-z0-9+.-]*:|/|\\)", re.I)


def surface(fragment: str, allow: frozenset = frozenset()) -> list[str]:
    """What a browser could run or load in an HTML fragment, parsed as a browser parses it
    (html5lib follows the WHATWG algorithm): dangerous elements (but those in ``allow``),
    event handlers, styles that load or place, script-capable URLs."""
    import html5lib

    found = []
    for element in html5lib.parseFragment(fragment, namespaceHTMLElements=False).iter():
        if not isinstance(element.tag, str):
            continue  # a comment
        tag = element.tag.rsplit("}", 1)[-1]
        if tag in DANGEROUS - allow:
            found.append(f"<{tag}>")
        for key, value in element.attrib.items():
            name = key.rsplit("}", 1)[-1].lower()
            if name.startswith("on") or name in ("srcdoc", "formaction"):
                found.append(f"<{tag} {name}={value!r}>")
            elif name == "style" and re.search(r"url|expression|position", value, re.I):
                found.append(f"<{tag} style={value!r}>")
            elif name in URL_ATTRIBUTES and not _SAFE_URL.match(value):
                if not (name == "src" and _RELATIVE.match(value)):
                    found.append(f"<{tag} {name}={value!r}>")
    return found
