"""Whose file it is: the student and the notebook a path inside an LMS download names.

The owner of a file is named at the top level of the download, where the LMS writes it: a
Moodle folder or file (``Jane Doe_12345_assignsubmission_file_``), a Canvas file
(``doejane_12345_67890_...``), a plain file ``<id>_<notebook>.ipynb`` or a plain folder
``<id>/``. Everything below the top level is the student's own (Moodle lets a student make
folders), so a name further in never moves a file to another student: when it names one
(a Moodle or Canvas name, or an ``<id>_`` before the notebook's name in a plain folder) that
differs from the owner, the file is a *claim* and is filed under nobody.

Two wrappers an instructor's own zip adds are looked through: one folder around the whole
download (a zip of a folder), and a folder around nbgrader's layout
``<folder>/<id>/<assignment>/<notebook>`` when that folder holds no notebook of its own.
"""

from __future__ import annotations

import re

from ..exercises.ids import IdError, normalise_id

__all__ = ["lms_name", "match_notebook", "parse_name", "parts_of", "read_paths"]

_MOODLE = re.compile(r"^(?P<person>[^/]+?)_(?P<lms>\d+)_assignsubmission_[a-z]+_(?P<file>.*)$")
_CANVAS = re.compile(
    r"^(?P<person>[^_/]+?)_(?P<late>LATE_)?(?P<lms>\d+)_(?P<sub>\d+)_(?P<file>.+)$"
)
_DUPLICATE = re.compile(r"^(?P<base>.*?)\s*\((?P<n>\d+)\)$")
_RESUBMIT = re.compile(r"^(?P<base>.*?)-(?P<n>\d+)$")


def _key(text: str) -> str:
    return re.sub(r"[\s_-]+", "-", text.strip().casefold())


def _stem(file: str) -> str:
    return file[: -len(".ipynb")] if file.lower().endswith(".ipynb") else file


def parts_of(path: str) -> list[str]:
    """The names of a path inside a download (``/`` or ``\\`` between them)."""
    return [p for p in re.split(r"[\\/]+", path) if p]


def match_notebook(name: str, notebooks) -> tuple[str | None, int]:
    """The notebook a file name (without ``.ipynb``) stands for, and its resubmission rank.

    Examples
    --------
    >>> nbs = ["01-chain-reliability", "lab-2"]
    >>> match_notebook("01-chain-reliability (1)", nbs)
    ('01-chain-reliability', 1)
    >>> match_notebook("01_Chain_Reliability-2", nbs)
    ('01-chain-reliability', 2)
    >>> match_notebook("lab-2", nbs), match_notebook("chain", nbs)
    (('lab-2', 0), (None, 0))
    """
    known = {_key(n): n for n in notebooks}
    text, rank = name, 0
    for _ in range(4):
        if _key(text) in known:
            return known[_key(text)], rank
        found = _DUPLICATE.match(text) or _RESUBMIT.match(text)
        if not found:
            break
        text, rank = found.group("base"), rank + int(found.group("n"))
    return None, 0


def lms_name(name: str) -> dict | None:
    """The format, person, LMS id, lateness and rest of a Moodle or Canvas name, else None.

    Examples
    --------
    >>> lms_name("Jane Doe_123_assignsubmission_file_")["person"]
    'Jane Doe'
    >>> found = lms_name("doejane_LATE_12345_67890_lab.ipynb")
    >>> found["format"], found["lms_id"], found["late"], found["rest"]
    ('Canvas', '12345', True, 'lab.ipynb')
    >>> lms_name("s2003_01-chain-reliability.ipynb") is None
    True
    """
    found = _CANVAS.match(name)  # first: the file name Canvas keeps may look like Moodle's
    fmt = "Canvas"
    if not found:
        found, fmt = _MOODLE.match(name), "Moodle"
    if not found:
        return None
    return {
        "format": fmt,
        "person": found.group("person"),
        "lms_id": found.group("lms"),
        "late": fmt == "Canvas" and bool(found.group("late")),
        "rest": found.group("file"),
    }


def _id(person: str) -> str:
    try:
        return normalise_id(person)
    except IdError:
        return person.strip().casefold()


def _claim(owner: dict, names) -> str:
    """The first of ``names`` (below the owner's) that is another student's LMS name, or ""."""
    for name in names:
        other = lms_name(name)
        if other is None:
            continue
        numbers = {owner["lms_id"], other["lms_id"]} - {""}
        if _id(other["person"]) != _id(owner["person"]) or len(numbers) > 1:
            return name
    return ""


def _split(stem: str, notebook: str) -> tuple[str, str]:
    """``stem`` cut where ``notebook`` begins in it (compared as :func:`_key` does)."""
    for start in range(len(stem)):
        if _key(stem[start:]).startswith(_key(notebook)):
            return stem[:start], stem[start:]
    return "", stem


def _plain(stem: str, notebooks) -> tuple[str, str | None, int]:
    """``(text before the notebook's name, notebook, rank)`` of a plain file name."""
    for notebook in sorted(notebooks, key=len, reverse=True):
        if _key(notebook) in _key(stem):
            head, tail = _split(stem, notebook)
            matched, rank = match_notebook(tail, notebooks)
            if matched is not None:
                return head.rstrip(" _-"), matched, rank
    return "", None, 0


def parse_name(path: str, notebooks, assignment: str = "") -> dict:
    """Read the owner, LMS id, lateness, notebook and any claim off a path inside a download.

    ``claim`` is the name below the owner's that names another student (see the module's
    docstring); a file with a claim belongs to nobody.

    Examples
    --------
    >>> nbs = ["01-chain-reliability"]
    >>> p = parse_name("doejane_LATE_12345_67890_01-chain-reliability-1.ipynb", nbs)
    >>> p["format"], p["person"], p["lms_id"], p["late"], p["notebook"], p["rank"]
    ('Canvas', 'doejane', '12345', True, '01-chain-reliability', 1)
    >>> p = parse_name("Jane Doe_123_assignsubmission_file_/01-chain-reliability.ipynb", nbs)
    >>> p["format"], p["person"], p["lms_id"], p["notebook"], p["claim"]
    ('Moodle', 'Jane Doe', '123', '01-chain-reliability', '')
    >>> p = parse_name("carol/carol_01-chain-reliability (2).ipynb", nbs)
    >>> p["format"], p["person"], p["notebook"], p["rank"]
    ('plain', 'carol', '01-chain-reliability', 2)
    >>> parse_name("mallory/victim_01-chain-reliability.ipynb", nbs)["claim"]
    'victim_01-chain-reliability.ipynb'
    >>> parse_name("A_1_assignsubmission_file_/B_2_assignsubmission_file_/x.ipynb", nbs)["claim"]
    'B_2_assignsubmission_file_'
    """
    parts = parts_of(path)
    if len(parts) > 2 and assignment and parts[-2] == assignment:
        parts = [*parts[:-2], parts[-1]]  # <id>/<assignment>/<notebook>: nbgrader's own layout
    found = dict(format="", person="", lms_id="", late=False, notebook=None, rank=0, claim="")
    if not parts:
        return found
    top, inner = parts[0], parts[1:]
    owner = lms_name(top)
    if owner is not None:  # the LMS's name of the student's folder or file
        rest = owner.pop("rest")
        notebook, rank = match_notebook(_stem(inner[-1] if inner else rest), notebooks)
        claim = _claim(owner, [rest, *inner] if rest else inner)
        return {**found, **owner, "notebook": notebook, "rank": rank, "claim": claim}
    if not inner:  # <id>_<notebook>.ipynb
        head, notebook, rank = _plain(_stem(top), notebooks)
        return {
            **found,
            "format": "plain" if head else "",
            "person": head,
            "notebook": notebook,
            "rank": rank,
        }
    owner = {"format": "plain", "person": top, "lms_id": "", "late": False}
    named = lms_name(inner[-1])
    if named is not None:  # <id>/<a Canvas or Moodle name>
        notebook, rank = match_notebook(_stem(named["rest"]), notebooks)
        claim = _claim(owner, inner)
    else:  # <id>/[<folder>/]<notebook>.ipynb or <id>/<id>_<notebook>.ipynb
        head, notebook, rank = _plain(_stem(inner[-1]), notebooks)
        claim = _claim(owner, inner[:-1])
        if not claim and head and _id(head) != _id(top):
            claim = inner[-1]
    return {**found, **owner, "notebook": notebook, "rank": rank, "claim": claim}


def read_paths(paths, notebooks, assignment: str = "") -> list[str]:
    """The notebooks' ``paths`` of one download as :func:`parse_name` reads them: the wrappers
    of the module's docstring dropped.

    Examples
    --------
    >>> nbs = ["01-chain-reliability"]
    >>> read_paths(["all/s1/01-chain-reliability.ipynb", "all/s2_01-chain-reliability.ipynb"],
    ...            nbs)
    ['s1/01-chain-reliability.ipynb', 's2_01-chain-reliability.ipynb']
    >>> read_paths(["s1/01-chain-reliability.ipynb"], nbs)  # s1 is the student, not a wrapper
    ['s1/01-chain-reliability.ipynb']
    >>> read_paths(["x/s7/a/01-chain-reliability.ipynb", "s8_01-chain-reliability.ipynb"],
    ...            nbs, "a")
    ['s7/a/01-chain-reliability.ipynb', 's8_01-chain-reliability.ipynb']
    """
    split = [parts_of(p) for p in paths]
    tops = {p[0] for p in split if p}
    if len(tops) == 1 and all(len(p) > 1 for p in split) and lms_name(next(iter(tops))) is None:
        inside = [parse_name("/".join(p[1:]), notebooks, assignment) for p in split]
        if not any(found["notebook"] and not found["person"] for found in inside):
            split = [p[1:] for p in split]  # one folder around the whole download
    own = {p[0] for p in split if len(p) == 2 or (len(p) == 3 and p[1] == assignment)}
    return ["/".join(p[1:] if _wraps(p, own, assignment) else p) for p in split]


def _wraps(parts: list[str], own: set, assignment: str) -> bool:
    """Whether ``parts[0]`` is a folder around ``<id>/<assignment>/<notebook>``."""
    return (
        len(parts) == 4
        and bool(assignment)
        and parts[2] == assignment
        and parts[0] not in own
        and lms_name(parts[0]) is None
    )
