"""TeX typeset as MathML when a page is built, so the page needs no script to show maths.

The feedback pages forbid every script (their Content-Security-Policy), so MathJax cannot run
in them; Chromium, Firefox and Safari render MathML Core natively. ``latex2mathml`` (pure
Python) converts each formula; its output is kept only when it is well-formed XML made of
presentation MathML elements and attributes (:data:`ELEMENTS`, :data:`ATTRIBUTES`): no
``href``, ``class``, ``style`` or HTML inside (``latex2mathml`` copies ``\\text{...}`` and
``\\href`` through as they are). A formula that fails either way is shown as its TeX source,
in a code span.
"""

from __future__ import annotations

import functools
import html
import xml.etree.ElementTree as ET

__all__ = ["ATTRIBUTES", "ELEMENTS", "tex_to_mathml"]

#: Presentation MathML the pages may hold.
ELEMENTS = frozenset(
    "math mrow mi mn mo ms mtext mspace msub msup msubsup mfrac msqrt mroot mover munder "
    "munderover mtable mtr mtd mstyle mpadded mphantom menclose merror mmultiscripts "
    "mprescripts none semantics".split()
)
#: Their attributes: layout and typography only.
ATTRIBUTES = frozenset(
    "xmlns display mathvariant stretchy fence separator form lspace rspace minsize maxsize "
    "width height depth linethickness accent accentunder movablelimits largeop symmetric "
    "columnalign rowalign columnspacing rowspacing columnlines rowlines frame displaystyle "
    "scriptlevel notation align mathsize mathcolor mathbackground".split()
)
_MATHML = "{http://www.w3.org/1998/Math/MathML}"


def _allowed(markup: str) -> bool:
    if "<!" in markup or "<?" in markup:  # comments, CDATA, DOCTYPE, processing instructions
        return False
    try:
        root = ET.fromstring(markup)
    except ET.ParseError:
        return False
    for element in root.iter():
        if not element.tag.startswith(_MATHML) or element.tag[len(_MATHML) :] not in ELEMENTS:
            return False
        if any(name not in ATTRIBUTES for name in element.attrib):
            return False
        if any("javascript" in value.lower() for value in element.attrib.values()):
            return False
    return root.tag == f"{_MATHML}math"


@functools.lru_cache(maxsize=2048)
def tex_to_mathml(tex: str, display: bool = False) -> str:
    """``tex`` (without its ``$`` delimiters) as a ``<math>`` element, or as its source in a
    ``<code>`` element when it cannot be converted safely.

    Examples
    --------
    >>> print(tex_to_mathml("a < b").replace("><", ">\\n<"))
    <math xmlns="http://www.w3.org/1998/Math/MathML" display="inline">
    <mrow>
    <mi>a</mi>
    <mo>&#x0003C;</mo>
    <mi>b</mi>
    </mrow>
    </math>
    >>> tex_to_mathml(r"\\text{<img src=x onerror=alert(1)>}")
    '<code class="dk-tex">\\\\text{&lt;img src=x onerror=alert(1)&gt;}</code>'
    >>> tex_to_mathml(r"\\href{javascript:alert(1)}{x}")
    '<code class="dk-tex">\\\\href{javascript:alert(1)}{x}</code>'
    """
    from latex2mathml.converter import convert

    try:
        markup = convert(tex, display="block" if display else "inline")
    except Exception:  # noqa: BLE001 - latex2mathml raises many kinds on TeX it cannot read
        markup = ""
    if markup and _allowed(markup):
        return markup
    return f'<code class="dk-tex">{html.escape(tex, quote=False)}</code>'
