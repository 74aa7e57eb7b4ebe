"""CSV cells a spreadsheet shows as text: the one guard against CSV (formula) injection.

A spreadsheet runs a cell that begins with ``=``, ``+``, ``-`` or ``@`` (or their full-width
forms, which some locales accept), or with a tab or a line break, as a formula; a student id,
a name from an LMS or a line of a student's code may begin so. Every CSV the kit writes
(``exports/``, the class report's CSV files, ``integrity.csv``) passes its cells through
:func:`cell`, which puts a single quote in front of such a text; :func:`uncell` takes it off
again where the kit reads its own file back. Numbers stay numbers. Standard library only.
"""

from __future__ import annotations

import re

__all__ = ["FORMULA_STARTS", "cell", "uncell"]

#: First characters (after any leading white space) that make a cell a formula.
FORMULA_STARTS = "=+-@\uff1d\uff0b\uff0d\uff20"
_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")


def cell(value):
    """``value`` as a CSV cell that no spreadsheet runs as a formula.

    Parameters
    ----------
    value : object
        A cell as :mod:`csv` writers take it.

    Returns
    -------
    object
        ``value`` itself, unless it is a text that begins (after white space) with one of
        :data:`FORMULA_STARTS`, or with a tab, a line break or a single quote: then the text
        with a single quote in front.

    Notes
    -----
    Anything but a ``str`` (a score the kit computed, None) is returned as it is, and so is a
    text that is a plain decimal number (``"-1"``, ``"0.5"``, ``"2.5e-3"``): a spreadsheet
    reads it as that number, which is what the kit wrote. A text that begins with a single
    quote gets one more, so that :func:`uncell` always undoes :func:`cell` (the map is
    one-to-one).

    Examples
    --------
    >>> [cell(v) for v in ["=1+2", "@sum(1)", " -x", "\\tx", "'a", "s2003", "-1", -1.5, None]]
    ["'=1+2", "'@sum(1)", "' -x", "'\\tx", "''a", 's2003', '-1', -1.5, None]
    >>> uncell(cell("=1+2")), uncell(cell("'a")), uncell(cell("-1"))
    ('=1+2', "'a", '-1')
    """
    if not isinstance(value, str) or _NUMBER.fullmatch(value):
        return value
    first = value.lstrip()[:1]
    if value[:1] in ("\t", "\r", "\n", "'") or (first and first in FORMULA_STARTS):
        return "'" + value
    return value


def uncell(value):
    """What :func:`cell` was given, from the cell it wrote (as a CSV reader returns it).

    Anything but a ``str`` (a missing cell: None) is returned as it is.
    """
    return value[1:] if isinstance(value, str) and value.startswith("'") else value
