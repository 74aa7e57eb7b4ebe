"""HTML, markdown and TeX from a submission, rewritten so that no browser runs script from them.

A submission's markdown and rich outputs are rendered by programs the kit does not control:
nbconvert (formgrader's manual-grading page, in the instructor's Jupyter origin; the feedback
pages) and JupyterLab. Each function here returns text that any of them shows without running
anything a student wrote:

- :func:`clean_html` passes HTML through nh3 (Ammonia's allow-list): the elements of prose,
  headings, lists, tables, code and images, a few attributes (``title``, ``alt``, sizes,
  ``align``, a few ``style`` properties such as ``color`` and ``text-align``), links only to
  ``http``, ``https``, ``mailto`` or a ``#fragment``, images only from ``data:image/...``, an
  attachment or a path beside the notebook. Scripts, styles, frames, forms, ``svg`` and ``math``
  go with their content; every ``on*`` handler, ``srcdoc``, ``formaction``, ``class`` and
  ``id`` goes. A link to a relative path goes too: formgrader serves the files of a
  submission from the instructor's origin.
- :func:`clean_markdown` keeps markdown as markdown. Fenced code, code spans and autolinks are
  set aside as they are; maths is set aside after :func:`clean_tex`; every ``<`` of the rest
  that opens no complete tag is written ``&lt;``, the rest is cleaned as HTML, and a link
  destination with another scheme is replaced by ``#``. The result is then rendered by
  nbconvert's own markdown renderer and checked tag by tag (:func:`html_problems`): a cell that
  does not pass is shown as its text in a code block. A cell that lost anything starts with a
  note that says so.
- :func:`clean_tex` (maths, ``text/latex``) keeps ``<`` and ``>`` as TeX needs them, with a
  space after a ``<`` that could open a tag (TeX ignores it; no HTML parser sees a tag), and
  turns the macros that make links, classes, styles or load extensions (``\\href``,
  ``\\class``, ``\\style``, ``\\require``, ...) into plain text.

Why check the rendering: markdown parsers disagree at the edges (an HTML block ends at a blank
line, a fence inside an HTML block is text, ``mermaid`` fences go out unescaped), so a rewrite
of the source alone could be read differently by the renderer. The check reads nbconvert's
output the way a browser's tokenizer does: every ``<`` must open an allowed tag in canonical
form (double-quoted attributes), every URL must pass the same policy. JupyterLab sanitises
markdown cells itself.
"""

from __future__ import annotations

import functools
import html
import re

import nh3

__all__ = [
    "NOTE_FALLBACK",
    "NOTE_REMOVED",
    "TAGS",
    "clean_html",
    "clean_markdown",
    "clean_tex",
    "html_problems",
    "render_markdown",
    "safe_href",
    "safe_src",
]

#: Elements kept in HTML and in the HTML inside markdown.
TAGS = frozenset(
    "a abbr b blockquote br caption center cite code col colgroup dd del details div dl dt em "
    "figcaption figure font h1 h2 h3 h4 h5 h6 hr i img ins kbd li mark ol p pre q s samp small "
    "span strike strong sub summary sup table tbody td tfoot th thead tr tt u ul var wbr".split()
)
#: Attributes kept, per element (``"*"``: on every element).
ATTRIBUTES = {
    "*": {"title", "align"},
    "a": {"href"},
    "img": {"src", "alt", "width", "height"},
    "ol": {"start", "type"},
    "font": {"color"},
    "table": {"border"},
    "col": {"span"},
    "colgroup": {"span"},
    **{tag: {"style"} for tag in ("div", "span", "p", "tr")},
    **{tag: {"style", "colspan", "rowspan"} for tag in ("td", "th")},
}
#: CSS properties kept in a ``style`` attribute: colour and alignment, nothing that places,
#: sizes or loads (no ``position``, no ``url()``), so no output can cover the page around it.
STYLE_PROPERTIES = frozenset(
    "color background-color text-align vertical-align font-weight font-style "
    "text-decoration".split()
)
#: Removed together with everything inside them.
_DROPPED = {"script", "style", "template", "iframe", "frame", "frameset", "object", "embed",
            "applet", "noscript", "noembed", "noframes", "svg", "math", "title"}  # fmt: skip
LINK_SCHEMES = frozenset({"http", "https", "mailto"})
_IMAGE_DATA = re.compile(r"data:image/(png|jpeg|gif|webp|svg\+xml)[;,]", re.I)
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*):")
_DIGITS = re.compile(r"\d{1,4}")
_SIZE = re.compile(r"\d{1,4}(\.\d{1,3})?(px|%)?")
_STYLE_VALUE = re.compile(r"[#\w\s.,%()+-]*")
_ALIGN = {"left", "right", "center", "justify", "top", "middle", "bottom"}

NOTE_REMOVED = "> *The grader removed HTML, links or TeX from this cell that could run script.*"
NOTE_FALLBACK = "> *The grader could not show this cell safely as formatted: here is its text.*"
_NOTE_HTML = "<p><em>The grader removed HTML from this output that could run script.</em></p>"


# --- URLs -----------------------------------------------------------------------------------


def _url(value: str) -> tuple[str, str | None]:
    """``value`` as a browser reads it (no tab or newline anywhere, no control character or space
    at either end) and its scheme in lower case (None for a relative URL)."""
    url = re.sub(r"[\t\n\r]", "", value).strip("".join(map(chr, range(33))))
    scheme = _SCHEME.match(url)
    return url, scheme.group(1).lower() if scheme else None


def safe_href(value: str) -> bool:
    """Whether a link to ``value`` may stay: ``http``, ``https``, ``mailto`` or a fragment.

    Examples
    --------
    >>> [safe_href(u) for u in ("https://example.org", "#top", "mailto:a@b.c", "notes.html")]
    [True, True, True, False]
    >>> [safe_href(u) for u in ("javascript:alert(1)", " JaVa\\tScRiPt:x", "data:text/html,x")]
    [False, False, False]
    """
    url, scheme = _url(value)
    return url == "" or url.startswith("#") or scheme in LINK_SCHEMES


def safe_src(value: str, attachments=None) -> bool:
    """Whether an image from ``value`` may stay: ``data:image/...``, a path beside the notebook
    or, when ``attachments`` is given, one of its names as ``attachment:<name>``.

    Examples
    --------
    >>> [safe_src(u) for u in ("data:image/png;base64,iVBO", "fig/a.png", "attachment:a.png")]
    [True, True, False]
    >>> safe_src("attachment:a.png", {"a.png": {}})
    True
    >>> [safe_src(u) for u in ("//evil.org/x.png", "/files/x.png", "data:text/html,x")]
    [False, False, False]
    >>> safe_src("https://example.org/x.png")  # the page loads nothing from elsewhere
    False
    """
    url, scheme = _url(value)
    if scheme == "data":
        return _IMAGE_DATA.match(url) is not None
    if scheme == "attachment":
        return attachments is not None and url[len("attachment:") :] in attachments
    return scheme is None and not url.startswith(("/", "\\"))


def _style(value: str) -> str | None:
    kept = []
    for declaration in value.split(";"):
        name, _, setting = declaration.partition(":")
        name, setting = name.strip().lower(), setting.strip()
        if (
            name in STYLE_PROPERTIES
            and _STYLE_VALUE.fullmatch(setting)
            and not re.search(r"url|expression|image|element", setting, re.I)
        ):
            kept.append(f"{name}: {setting}")
    return "; ".join(kept) or None


def _attribute(tag: str, name: str, value: str, decode: bool, attachments=None) -> str | None:
    """The value nh3 should keep for ``name`` on ``tag``, or None to drop the attribute."""
    if _MASKS.search(value.replace(_AMP, "")):
        return None  # a literal of the markdown would land in an attribute
    if decode:  # markdown: the ``&`` were masked before nh3 parsed the text
        value = html.unescape(value.replace(_AMP, "&"))
    value = re.sub(r"[\r\n]+", " ", value)  # a blank line would end an HTML block in markdown
    if name == "href":
        return value if safe_href(value) else None
    if name == "src":
        return value if safe_src(value, attachments) else None
    if name == "style":
        return _style(value)
    if name in ("width", "height"):
        return value if _SIZE.fullmatch(value.strip()) else None
    if name in ("colspan", "rowspan", "start", "span", "border"):
        return value if _DIGITS.fullmatch(value.strip()) else None
    if name == "type":
        return value if value in ("1", "a", "A", "i", "I") else None
    if name == "align":
        return value if value.lower() in _ALIGN else None
    return value


# --- HTML -----------------------------------------------------------------------------------


@functools.lru_cache(maxsize=4)
def _cleaner(decode: bool, attachments: tuple | None) -> nh3.Cleaner:
    names = None if attachments is None else set(attachments)
    return nh3.Cleaner(
        tags=set(TAGS),
        clean_content_tags=_DROPPED,
        attributes={tag: set(names_) for tag, names_ in ATTRIBUTES.items()},
        attribute_filter=lambda t, n, v: _attribute(t, n, v, decode, names),
        url_schemes=set(LINK_SCHEMES) | {"data", "attachment"},
        strip_comments=True,
    )


def _shape(text: str) -> list[tuple[str, tuple[str, ...]]]:
    """The tags of serialised HTML with their attribute names, in order."""
    return [
        (m.group(1) + m.group(2), tuple(a.group(1) for a in _TAG_ATTRIBUTE.finditer(m.group(3))))
        for m in _TAG.finditer(text)
    ]


def _removed(fragment: str, cleaned: str) -> bool:
    """Whether cleaning took an element or an attribute from ``fragment``: the same fragment
    with everything it holds allowed has the same tags and attribute names iff not."""
    if "<" not in fragment:
        return False
    lowered = fragment.lower()
    everything = nh3.clean(
        fragment,
        tags=set(re.findall(r"<([a-z][a-z0-9-]*)", lowered)) | TAGS,
        clean_content_tags=set(),
        generic_attribute_prefixes={""},
        url_schemes=set(re.findall(r"([a-z][a-z0-9+.-]*):", lowered)),
        strip_comments=True,
    )
    return _shape(everything) != _shape(cleaned)


def clean_html(fragment: str) -> str:
    """``fragment`` with only allowed elements, attributes and URLs; a note ends it when
    anything was removed.

    Examples
    --------
    >>> clean_html('<b>bold</b> <a href="https://example.org">link</a>')
    '<b>bold</b> <a href="https://example.org" rel="noopener noreferrer">link</a>'
    >>> print(clean_html('<img src=x onerror="alert(1)"><script>alert(2)</script>ok'))
    <img src="x">ok<p><em>The grader removed HTML from this output that could run script.</em></p>
    >>> clean_html('<table border="1"><tr style="text-align: right;"><td>1</td></tr></table>')
    '<table border="1"><tbody><tr style="text-align: right"><td>1</td></tr></tbody></table>'
    """
    cleaner = _cleaner(False, None)
    cleaned = cleaner.clean(fragment)
    if html_problems(cleaned):  # not expected from nh3's serialiser: then show it as text
        return f"<pre>{html.escape(fragment)}</pre>{_NOTE_HTML}"
    removed = _removed(fragment, cleaned)
    return cleaned + _NOTE_HTML if removed else cleaned


# --- TeX ------------------------------------------------------------------------------------

_TAG_START = re.compile(r"<(?=[A-Za-z/!?])")
_TEX_ACTIVE = re.compile(
    r"\\(href|url|class|cssId|style|require|data|html|unicode|bbox|mmlToken|toggle|mathtip"
    r"|texttip|action|fragment)(?![A-Za-z])"
)


def clean_tex(tex: str) -> str:
    """``tex`` with a space after every ``<`` that could open an HTML tag, and the macros that
    make links, classes, styles or load code shown as their name.

    Examples
    --------
    >>> clean_tex(r"$a<b$ and $x <y> z$, $p > q$")
    '$a< b$ and $x < y> z$, $p > q$'
    >>> clean_tex(r"\\href{javascript:alert(1)}{x} + \\class{a}{y}")
    '\\\\mathrm{href}{javascript:alert(1)}{x} + \\\\mathrm{class}{a}{y}'
    """
    return _TAG_START.sub("< ", _TEX_ACTIVE.sub(lambda m: rf"\mathrm{{{m.group(1)}}}", tex))


# --- markdown -------------------------------------------------------------------------------

# Masks for what nh3 must not touch: "&" (nh3 would decode entities, so `&#36;` became a maths
# delimiter), a "<" that no parser reads as markup (nh3 would write it "&lt;"), and each
# literal part of the markdown, as a numbered placeholder.
_AMP, _OPEN, _CLOSE, _LESS = "\ue000", "\ue001", "\ue002", "\ue003"
_MASKS = re.compile("[\ue000-\ue003]")
_PLACEHOLDER = re.compile("\ue001(\\d+)\ue002")
_LT = _AMP + "lt;"

_SPECIAL = re.compile(r"[\\$`<&\n]")
_FENCE = re.compile(r"[ \t]*(`{3,}|~{3,})([^\n]*)")
_WS = r"[ \t\n\r\f]"
_ATTRIBUTE = (
    rf"{_WS}+[A-Za-z_:][A-Za-z0-9_.:-]*"
    rf"(?:{_WS}*={_WS}*(?:[^\"'=<>`\x00-\x20]+|'[^']*'|\"[^\"]*\"))?"
)
# CommonMark's raw HTML: open tag, closing tag, comment, processing instruction, declaration,
# CDATA. Only these reach nh3 as markup; any other "<" is text.
_RAW_HTML = re.compile(
    rf"<[A-Za-z][A-Za-z0-9-]*(?:{_ATTRIBUTE})*{_WS}*/?>|</[A-Za-z][A-Za-z0-9-]*{_WS}*>"
    r"|<!-->|<!--->|<!--.*?-->|<\?.*?\?>|<![A-Za-z][^>]*>|<!\[CDATA\[.*?\]\]>",
    re.S,
)
_AUTOLINK = re.compile(r"<([A-Za-z][A-Za-z0-9+.-]{1,31}):[^\s<>]*>")
_EMAIL = re.compile(
    r"<[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
    r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*>"
)
# nbconvert's own maths delimiters (nbconvert.filters.markdown_mistune.MathInlineParser).
_MATH = [
    re.compile(r"(?<!\\)\$\$.*?(?<!\\)\$\$", re.S),
    re.compile(r"(?<!\\)\\\\\[.*?(?<!\\)\\\\\]", re.S),
    re.compile(r"(?<![$\\])\$(?:(?!\n[ \t]*\n).)+?(?<![$\\])\$", re.S),
    re.compile(r"(?<!\\)\\\\\((?:(?!\n[ \t]*\n).)*?(?<!\\)\\\\\)", re.S),
    re.compile(r"\\begin\{([a-z]*\*?)\}.*?\\end\{\1\}", re.S),
]
_BLANK_LINE = re.compile(r"\n[ \t]*\n")
_BACKTICKS = re.compile("`+")
_PUNCTUATION = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")


def _less(source: str, at: int) -> str:
    """The mask for the ``<`` at ``at``, which opens no complete tag: ``&lt;`` when a letter,
    ``/``, ``!`` or ``?`` follows (a parser could read it as markup), else itself."""
    return _LT if _TAG_START.match(source, at) else _LESS


def _fence(source: str, start: int, found: re.Match) -> tuple[str, int]:
    """The fenced code block opened at ``start`` (its info string reduced to a language name;
    a ``mermaid`` block's text cleaned like TeX: nbconvert writes it out unescaped) and where
    it ends."""
    mark, info = found.group(1), found.group(2).strip()
    closing = re.compile(rf"^[ \t]*{re.escape(mark[0])}{{{len(mark)},}}[ \t]*$", re.M)
    body_start = found.end()
    end = closing.search(source, body_start)
    stop = end.end() if end else len(source)
    language = re.sub(r"[^\w+#.-]", "", info.split(None, 1)[0]) if info else ""
    body = source[body_start:stop]
    if language.startswith("mermaid"):
        body = _TAG_START.sub("< ", body)
    indent = found.group(0)[: found.start(1) - found.start()]
    return f"{indent}{mark}{language}{body}", stop


def _backtick_span(source: str, start: int) -> tuple[str, int] | None:
    run = len(_BACKTICKS.match(source, start).group(0))
    closing = re.compile(rf"(?<!`)`{{{run}}}(?!`)")
    blank = _BLANK_LINE.search(source, start)
    end = closing.search(source, start + run, blank.start() if blank else len(source))
    return (source[start : end.end()], end.end()) if end else None


def _protect(source: str) -> tuple[str, list[str], bool]:
    """``source`` with its literal parts (fenced code, code spans, maths, autolinks) replaced by
    placeholders, every ``&`` masked and every ``<`` that opens no tag written ``&lt;``; the
    literals; whether a link or a macro was neutralised."""
    out, literals, changed = [], [], False
    i, n = 0, len(source)

    def keep(text: str) -> None:
        out.append(f"{_OPEN}{len(literals)}{_CLOSE}")
        literals.append(text)

    while i < n:
        if (i == 0 or source[i - 1] == "\n") and (found := _FENCE.match(source, i)):
            if found.group(1)[0] == "~" or "`" not in found.group(2):
                text, i = _fence(source, i, found)
                keep(text)
                continue
        special = _SPECIAL.search(source, i)
        if special is None:
            out.append(source[i:])
            break
        if special.start() > i:
            out.append(source[i : special.start()])
            i = special.start()
            continue
        char = source[i]
        math = (
            next((m for p in _MATH if (m := p.match(source, i))), None) if char in "\\$" else None
        )
        if math is not None:
            tex = clean_tex(math.group(0))
            changed |= _TEX_ACTIVE.search(math.group(0)) is not None
            keep(tex)
            i = math.end()
        elif char == "\\" and i + 1 < n and source[i + 1] in _PUNCTUATION:
            escaped = {"<": _less(source, i + 1), "&": _AMP}.get(source[i + 1], source[i + 1])
            out.append(escaped if escaped == _LT else "\\" + escaped)
            i += 2
        elif char == "`" and (span := _backtick_span(source, i)) is not None:
            keep(span[0])
            i = span[1]
        elif char == "`":
            run = _BACKTICKS.match(source, i).group(0)
            out.append(run)
            i += len(run)
        elif char == "<" and (link := _AUTOLINK.match(source, i) or _EMAIL.match(source, i)):
            if link.re is _EMAIL or link.group(1).lower() in LINK_SCHEMES:
                keep(link.group(0))
            else:
                out.append(_LT)
                changed = True
                link = None
            i = link.end() if link else i + 1
        elif char == "<" and (tag := _RAW_HTML.match(source, i)):
            out.append(tag.group(0).replace("&", _AMP))
            i = tag.end()
        else:
            out.append({"<": _less(source, i), "&": _AMP}.get(char, char))
            i += 1
    return "".join(out), literals, changed


_LINK = re.compile(r"(\]\([ \t]*\n?[ \t]*)(<[^<>\n]*>|[^\s()]*(?:\([^\s()]*\)[^\s()]*)*)")
_DEFINITION = re.compile(
    r"^([ \t]{0,3}\[(?:[^\]\\\n]|\\.)+\]:[ \t]*\n?[ \t]*)(<[^<>\n]*>|\S+)", re.M
)


def _destination(text: str, literals: list[str]) -> str:
    """A link destination as the renderer reads it: literals back, escapes and entities
    decoded, angle brackets off."""
    text = _PLACEHOLDER.sub(lambda m: literals[int(m.group(1))], text).replace(_AMP, "&")
    if text.startswith("<") and text.endswith(">"):
        text = text[1:-1]
    return html.unescape(re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", text))


def _is_image(text: str, bracket: int) -> bool:
    """Whether the ``]`` at ``bracket`` closes ``![...``."""
    depth = 0
    for j in range(bracket, -1, -1):
        if text[j] == "]" and (j == 0 or text[j - 1] != "\\"):
            depth += 1
        elif text[j] == "[" and (j == 0 or text[j - 1] != "\\"):
            depth -= 1
            if depth == 0:
                return j > 0 and text[j - 1] == "!"
    return False


def _safe_links(text: str, literals: list[str], attachments) -> tuple[str, bool]:
    """``text`` with every link or image destination that fails the URL policy replaced."""
    changed = False

    def inline(m: re.Match) -> str:
        nonlocal changed
        url = _destination(m.group(2), literals)
        image = _is_image(text, m.start())
        if safe_src(url, attachments) if image else safe_href(url):
            return m.group(0)
        changed = True
        return m.group(1) + ("" if image else "#")

    def definition(m: re.Match) -> str:
        nonlocal changed
        url = _destination(m.group(2), literals)
        if safe_href(url) or safe_src(url, attachments):
            return m.group(0)
        changed = True
        return m.group(1) + "#"

    text = _LINK.sub(inline, text)
    return _DEFINITION.sub(definition, text), changed


def render_markdown(source: str, attachments=None) -> str:
    """``source`` rendered by nbconvert's markdown renderer, as formgrader and feedback do."""
    from nbconvert.filters.markdown_mistune import IPythonRenderer, MarkdownWithMath

    renderer = IPythonRenderer(escape=False, attachments=dict(attachments or {}))
    return MarkdownWithMath(renderer=renderer).render(source)


def _passes(source: str, attachments) -> bool:
    try:
        return not html_problems(render_markdown(source, attachments))
    except Exception:  # noqa: BLE001 - a cell nbconvert cannot render fails the check
        return False


def _as_text(source: str) -> str:
    """``source`` as a code block: nbconvert escapes it, no fence inside can close it."""
    longest = max((len(m) for m in re.findall(r"~+", source)), default=0)
    fence = "~" * max(3, longest + 1)
    return f"{NOTE_FALLBACK}\n\n{fence}text\n{source}\n{fence}\n"


@functools.lru_cache(maxsize=4096)
def _clean_markdown(source: str, attachments: tuple) -> str:
    source = _MASKS.sub("\ufffd", source)
    names = {name for name, _ in attachments}
    protected, literals, changed = _protect(source)
    protected, relinked = _safe_links(protected, literals, names)
    cleaner = _cleaner(True, tuple(sorted(names)))
    cleaned = cleaner.clean(protected)
    removed = changed or relinked or _removed(protected, cleaned)
    cleaned = cleaned.replace("&gt;", ">").replace(_AMP, "&").replace(_LESS, "<")
    result = _PLACEHOLDER.sub(lambda m: literals[int(m.group(1))], cleaned)
    if removed:
        result = f"{NOTE_REMOVED}\n\n{result}"
    attached = {name: dict(bundle) for name, bundle in attachments}
    if _passes(result, attached):
        return result
    fallback = _as_text(_TAG_START.sub("< ", source))
    return fallback if _passes(fallback, attached) else NOTE_FALLBACK


def clean_markdown(source: str, attachments=None) -> str:
    """``source`` with its HTML, links and maths made safe, still as markdown.

    Parameters
    ----------
    source : str
        A markdown cell's source or a ``text/markdown`` output.
    attachments : dict, optional
        The cell's attachments (already sanitised): ``attachment:<name>`` images may use them.

    Returns
    -------
    str
        The markdown. When anything was removed it starts with :data:`NOTE_REMOVED`; when its
        rendering still held anything not allowed, it is the source as a code block after
        :data:`NOTE_FALLBACK`.

    Examples
    --------
    >>> clean_markdown("**Answer:** $a < b$, `x<y>` and <sub>2</sub>")
    '**Answer:** $a < b$, `x<y>` and <sub>2</sub>'
    >>> print(clean_markdown("Hi <img src=x onerror=alert(1)> [me](javascript:alert(2))"))
    > *The grader removed HTML, links or TeX from this cell that could run script.*
    <BLANKLINE>
    Hi <img src="x"> [me](#)
    """
    frozen = tuple(
        (name, tuple(sorted(bundle.items())))
        for name, bundle in sorted((attachments or {}).items())
    )
    return _clean_markdown(source, frozen)


# --- the check ------------------------------------------------------------------------------

_TAG = re.compile(
    rf"<(/?)([A-Za-z][A-Za-z0-9]*)((?:{_WS}+[A-Za-z_:][-A-Za-z0-9_:.]*(?:{_WS}*={_WS}*\"[^\"]*\")?)*)"
    rf"{_WS}*/?>"
)
_TAG_ATTRIBUTE = re.compile(rf"{_WS}+([A-Za-z_:][-A-Za-z0-9_:.]*)(?:{_WS}*={_WS}*\"([^\"]*)\")?")
#: What nbconvert's renderer adds to the allowed HTML: language and highlighting classes,
#: heading ids and their anchor links, task-list check boxes, table alignment.
_RENDERED = {
    "*": {"class"},
    "a": {"rel"},
    "input": {"type", "checked", "disabled"},
    **{f"h{level}": {"id"} for level in range(1, 7)},
}


def html_problems(text: str) -> list[str]:
    """What in ``text`` (HTML) a browser would read as anything but allowed markup.

    Every ``<`` that a browser's tokenizer would read as the start of markup (a letter, ``/``,
    ``!`` or ``?`` follows it) must open an allowed element in canonical form (attributes
    double-quoted), with allowed attributes only and URLs that pass :func:`safe_href` /
    :func:`safe_src`.

    Examples
    --------
    >>> html_problems('<p>a &lt; b <a href="#x" class="anchor-link">x</a></p>')
    []
    >>> html_problems("<p>x <img src=x onerror=alert(1)></p>")
    ["'<' that opens no allowed tag: '<img src=x onerror=alert(1)></p>'"]
    >>> html_problems('<a href="java&#115;cript:alert(1)">x</a><iframe></iframe>')
    ["URL 'javascript:alert(1)' in <a href>", 'element <iframe>']
    """
    problems, position = [], text.find("<")
    while position != -1:
        if not re.match(r"<[A-Za-z/!?]", text[position : position + 2]):  # text to a browser
            position = text.find("<", position + 1)
            continue
        tag = _TAG.match(text, position)
        if tag is None:
            problems.append(f"'<' that opens no allowed tag: {text[position : position + 40]!r}")
            position = text.find("<", position + 1)
            continue
        name = tag.group(2).lower()
        closing = bool(tag.group(1))
        if (
            not closing
            and name not in TAGS
            and not (name == "input" and 'type="checkbox"' in tag.group(3))
        ):
            problems.append(f"element <{name}>")
        allowed = ATTRIBUTES["*"] | ATTRIBUTES.get(name, set())
        allowed = allowed | _RENDERED["*"] | _RENDERED.get(name, set())
        for attribute in _TAG_ATTRIBUTE.finditer("" if closing else tag.group(3)):
            key, value = attribute.group(1).lower(), html.unescape(attribute.group(2) or "")
            if key not in allowed:
                problems.append(f"attribute {key}= on <{name}>")
            elif key == "href" and not safe_href(value) or key == "src" and not safe_src(value):
                problems.append(f"URL {value!r} in <{name} {key}>")
            elif key == "style" and _style(value) is None and value.strip():
                problems.append(f"style {value!r} on <{name}>")
        position = text.find("<", tag.end())
    return problems
