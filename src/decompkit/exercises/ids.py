"""Student ids: one rule turns whatever an LMS, a folder or an instructor typed into the id.

Collection (``submitted/<id>/``), grading (the gradebook, the records, the id a kernel draws
its numbers for) and the answer key all pass every id through :func:`normalise_id`, so
``S2001``, ``s2001`` and `` s2001 `` are one student everywhere. The rule:

1. Unicode NFKC, surrounding white space removed, case folded (``S2001`` -> ``s2001``,
   ``ß`` -> ``ss``).
2. Accents dropped from letters that have a base letter (``Zoë Müller`` -> ``zoe muller``);
   letters without one stay as they are (``øyvind``, ``李雷``).
3. Every run of characters other than letters, digits, ``_``, ``.``, ``@`` and ``-``
   (spaces, slashes, commas, brackets, ...) becomes one ``-``; ``-``, ``_`` and ``.`` are
   trimmed from both ends (``Jane Doe`` -> ``jane-doe``, ``../x`` -> ``x``).
4. What is left must hold a letter or a digit and at most 64 characters.

A normalised id is a safe folder name (no separator, never ``.`` or ``..``, no leading dot)
and holds no white space, so every command accepts it. Only the standard library is used.

Where a session finds its id is named here too, for :mod:`~decompkit.exercises.params` (which
resolves it) and :mod:`~decompkit.exercises.page` (which says whose numbers are in use):
``GRADER_VARIABLE``, ``HUB_VARIABLE`` and ``LECTURE``, the id of the lecture's own numbers.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["IdError", "MAX_LENGTH", "normalise_id", "GRADER_VARIABLE", "HUB_VARIABLE", "LECTURE"]

MAX_LENGTH = 64
#: Environment variable the grader sets for the kernel that runs a submission.
GRADER_VARIABLE = "DECOMPKIT_STUDENT"
#: Environment variable JupyterHub sets in every user's server.
HUB_VARIABLE = "JUPYTERHUB_USER"
#: The id that asks for the lecture's own numbers even where an id is known.
LECTURE = "lecture"
_OTHER = re.compile(r"[^\w.@-]+")
_DASHES = re.compile(r"-{2,}")


class IdError(ValueError):
    """An id that :func:`normalise_id` cannot turn into a usable id."""


def normalise_id(raw) -> str:
    """The student id ``raw`` stands for, under the rule of this module.

    Parameters
    ----------
    raw : str
        An id as an LMS file name, a folder or an instructor gave it.

    Returns
    -------
    str
        The normalised id.

    Raises
    ------
    IdError
        If ``raw`` is not a string, holds no letter or digit, or is longer than 64
        characters once normalised.

    Examples
    --------
    >>> [normalise_id(s) for s in ["S2001", " s2001 ", "Jane Doe", "Zoë Müller", "jane_doe"]]
    ['s2001', 's2001', 'jane-doe', 'zoe-muller', 'jane_doe']
    >>> normalise_id("../../etc"), normalise_id("jane.doe@uni.example"), normalise_id("Øyvind")
    ('etc', 'jane.doe@uni.example', 'øyvind')
    >>> normalise_id(" -- ")
    Traceback (most recent call last):
    ...
    decompkit.exercises.ids.IdError: a student id needs a letter or a digit, got ' -- '
    """
    if not isinstance(raw, str):
        raise IdError(f"a student id must be a string, got {raw!r}")
    text = unicodedata.normalize("NFKC", raw).strip().casefold()
    text = "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))
    text = unicodedata.normalize("NFC", text)
    text = _DASHES.sub("-", _OTHER.sub("-", text)).strip("-_.")
    if not any(c.isalnum() for c in text):
        raise IdError(f"a student id needs a letter or a digit, got {raw!r}")
    if len(text) > MAX_LENGTH:
        raise IdError(f"a student id must have at most {MAX_LENGTH} characters, got {raw!r}")
    return text
