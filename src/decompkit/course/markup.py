"""HTML from a submission, cut down to an allow-list that no browser runs script from.

A submission's markdown and rich outputs are rendered by programs the kit does not control:
nbconvert (formgrader's manual-grading page, in the instructor's Jupyter origin; the feedback
pages) and JupyterLab. This module holds the policy for the HTML in them, in three parts:

- the allow-list: the elements of prose, headings, lists, tables, code and images
  (:data:`TAGS`); a few attributes (``title``, ``alt``, sizes, ``align``, a few ``style``
  properties such as ``color`` and ``text-align``); links only to ``http``, ``https``,
  ``mailto`` or a ``#fragment`` (:func:`safe_href`; a relative link goes too, formgrader
  serves a submission's files from the instructor's origin); images only from
  ``data:image/...``, an attachment or a path beside the notebook (:func:`safe_src`).
  Scripts, styles, frames, forms, ``svg`` and ``math`` go with their content; every ``on*``
  handler, ``srcdoc``, ``formaction``, ``class`` and ``id`` goes;
- :func:`clean_html`, nh3 (Ammonia) with that allow-list, and a note when it removed anything
  beyond looks (a class, a style sheet);
- :func:`html_problems`, the check: HTML read as a browser's tokenizer reads it, where every
  ``<`` that starts markup must open an allowed element in canonical form (attributes
  double-quoted) and every URL must pass the policy. Markdown, whose rendering nh3 does not
  see, is checked with it (:mod:`decompkit.course.safe_markdown`).
"""

from __future__ import annotations

import functools
import html
import re

import nh3

__all__ = [
    "ATTRIBUTES",
    "LINK_SCHEMES",
    "TAGS",
    "clean_html",
    "html_cleaner",
    "html_problems",
    "lost_markup",
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
_DROPPED = {
    "script",
    "style",
    "template",
    "iframe",
    "frame",
    "frameset",
    "object",
    "embed",
    "applet",
    "noscript",
    "noembed",
    "noframes",
    "svg",
    "math",
    "title",
}
LINK_SCHEMES = frozenset({"http", "https", "mailto"})
_IMAGE_DATA = re.compile(r"data:image/(png|jpeg|gif|webp|svg\+xml)[;,]", re.I)
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*):")
_STYLE_VALUE = re.compile(r"[#\w\s.,%()+-]*")
_DIGITS, _SIZE = re.compile(r"\d{1,4}"), re.compile(r"\d{1,4}(\.\d{1,3})?(px|%)?")
#: The values an attribute may take, where not any text.
_VALUES = {
    **dict.fromkeys(("width", "height"), _SIZE),
    **dict.fromkeys(("colspan", "rowspan", "start", "span", "border"), _DIGITS),
    "type": re.compile("[1aAiI]"),
    "align": re.compile("left|right|center|justify|top|middle|bottom", re.I),
}

# A <div>: nbconvert passes a raw cell through bleach, which shows a <p> as text.
_NOTE_HTML = "<div><em>The grader removed HTML from this output that could run script.</em></div>"


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


def _attribute(name: str, value: str | None, attachments=None) -> str | None:
    """The value nh3 should keep for the attribute ``name``, or None to drop it."""
    if value is None:
        return None
    value = re.sub(r"[\r\n]+", " ", value)  # a blank line would end an HTML block in markdown
    if name == "href":
        return value if safe_href(value) else None
    if name == "src":
        return value if safe_src(value, attachments) else None
    if name == "style":
        return _style(value)
    if name in _VALUES:
        return value if _VALUES[name].fullmatch(value.strip()) else None
    return value


# --- HTML -----------------------------------------------------------------------------------


@functools.lru_cache(maxsize=8)
def html_cleaner(unmask=None, attachments: tuple | None = None) -> nh3.Cleaner:
    """An nh3 cleaner of the allow-list. ``unmask(value)`` turns an attribute value as nh3
    read it into the value a browser will read (or None to drop it): markdown masks ``&``
    before nh3 sees it; ``attachments`` names what ``attachment:<name>`` images may use."""
    names = None if attachments is None else set(attachments)
    return nh3.Cleaner(
        tags=set(TAGS),
        clean_content_tags=_DROPPED,
        attributes={tag: set(kept) for tag, kept in ATTRIBUTES.items()},
        attribute_filter=lambda _, n, v: _attribute(n, unmask(v) if unmask else v, names),
        url_schemes=set(LINK_SCHEMES) | {"data", "attachment"},
        strip_comments=True,
    )


#: What goes without a note: it changes looks, never what runs (a class, a style sheet).
_COSMETIC = re.compile(r"class|id|style|lang|dir|role|tabindex|aria-.*|data-.*")


def _kept_names(attributes: str) -> tuple[str, ...]:
    found = (a.group(1) for a in _TAG_ATTRIBUTE.finditer(attributes))
    return tuple(name for name in found if not _COSMETIC.fullmatch(name))


def _shape(text: str) -> list[tuple[str, tuple[str, ...]]]:
    """The tags of serialised HTML with their attribute names, in order, less what is only
    cosmetic."""
    tags = (m for m in _TAG.finditer(text) if m.group(2).lower() != "style")
    return [(m.group(1) + m.group(2), _kept_names(m.group(3))) for m in tags]


def lost_markup(fragment: str, cleaned: str) -> bool:
    """Whether cleaning took an element or a non-cosmetic attribute from ``fragment``: the
    same fragment with everything it holds allowed has the same tags and attribute names iff
    not."""
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
    >>> print(clean_html('<img src=x onerror="alert(1)"><script>alert(2)</script>ok')[:60])
    <img src="x">ok<div><em>The grader removed HTML from this ou
    >>> clean_html('<table border="1"><tr style="text-align: right;"><td>1</td></tr></table>')
    '<table border="1"><tbody><tr style="text-align: right"><td>1</td></tr></tbody></table>'
    """
    cleaned = html_cleaner().clean(fragment)
    if html_problems(cleaned):  # not expected from nh3's serialiser: then show it as text
        return f"<pre>{html.escape(fragment)}</pre>{_NOTE_HTML}"
    return cleaned + _NOTE_HTML if lost_markup(fragment, cleaned) else cleaned


# --- the check ------------------------------------------------------------------------------

_WS = r"[ \t\n\r\f]"
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
