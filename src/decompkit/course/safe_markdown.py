"""Markdown and TeX from a submission, rewritten so that they keep their syntax and no browser
runs script from them.

:func:`clean_markdown` keeps markdown as markdown. Fenced code, code spans and autolinks are
set aside as they are; maths is set aside after :func:`clean_tex`; every ``<`` of the rest that
opens no complete tag is written ``&lt;`` (``&`` is masked, so nh3 decodes no entity), the rest
is cleaned as HTML with :mod:`decompkit.course.markup`'s allow-list, and a link or image
destination that fails its URL policy is replaced (``#``, or nothing for an image). The result
is rendered by nbconvert's own markdown renderer and checked tag by tag
(:func:`decompkit.course.markup.html_problems`): a cell that does not pass is shown as its text
in a code block. A cell that lost anything starts with a note that says so.

:func:`clean_tex` (maths, ``text/latex``) keeps ``<`` and ``>`` as TeX needs them, with a space
after a ``<`` that could open a tag (TeX ignores it; no HTML parser sees a tag), and turns the
macros that make links, classes, styles or load extensions (``\\href``, ``\\class``,
``\\style``, ``\\require``, ...) into plain text.

Why check the rendering: markdown parsers disagree at the edges (an HTML block ends at a blank
line, a fence inside an HTML block is text, ``mermaid`` fences go out unescaped), so a rewrite of
the source alone could be read differently by the renderer. JupyterLab sanitises markdown cells
itself; formgrader and the feedback pages render with nbconvert, which the check runs.
"""

from __future__ import annotations

import functools
import html
import re

from .markup import LINK_SCHEMES, html_cleaner, html_problems, lost_markup, safe_href, safe_src

__all__ = ["NOTE_FALLBACK", "NOTE_REMOVED", "clean_markdown", "clean_tex", "render_markdown"]

NOTE_REMOVED = "> *The grader removed HTML, links or TeX from this cell that could run script.*"
NOTE_FALLBACK = "> *The grader could not show this cell safely as formatted: here is its text.*"


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


def _unmask(value: str) -> str | None:
    """An attribute value nh3 read from masked markdown, as a browser will read it; None when
    a literal of the markdown would land in it."""
    if _MASKS.search(value.replace(_AMP, "")):
        return None
    return html.unescape(value.replace(_AMP, "&"))


_SPECIAL = re.compile(r"[\\$`<&\n]")
_FENCE = re.compile(r"[ \t]*(`{3,}|~{3,})([^\n]*)")
_WS = r"[ \t\n\r\f]"  # what separates the parts of a tag
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
    cleaner = html_cleaner(_unmask, tuple(sorted(names)))
    cleaned = cleaner.clean(protected)
    removed = changed or relinked or lost_markup(protected, cleaned)
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
