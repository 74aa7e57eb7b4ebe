r"""Simulated tools: a small fixed web, latencies in milliseconds, failures on demand.

A call of tool :math:`t` waits its latency :math:`\ell_t` and answers from fixed data, so a
step of :math:`k` attempts holds its worker for :math:`k\,\ell_t`. A failure script makes
attempt :math:`j` of a named step fail hard (no output) or return junk that the step's check
rejects; every other call answers correctly. The step's check (:func:`check_output`) and the
argument check of every runner (:func:`require_toolbox`) are public for the lab's modules; the
package lifts ``__all__``.
"""

from __future__ import annotations

import asyncio
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass

__all__ = [
    "TOOLS",
    "LATENCY_MS",
    "PAGES",
    "FAILURE_KINDS",
    "ToolError",
    "Call",
    "Toolbox",
    "page",
]

#: The tools the executor offers, with the one-line description a planner reads.
TOOLS = {
    "search": "search(query) -> the address of the best matching page",
    "fetch_page": "fetch_page(url) -> the text of the page",
    "compare": "compare(pages) -> which supplier quotes least, from a list of quote pages",
}

#: Latency of one call of each tool, in milliseconds: small, so a lab run takes a fraction of
#: a second, and unequal, so the critical path and the serial sum differ.
LATENCY_MS = {"search": 40, "fetch_page": 60, "compare": 20}

#: The fixed web the tools read: address -> page text.
PAGES = {
    "https://p.example/quote": "Supplier P quotes 4.20 EUR per unit for 500 units.",
    "https://q.example/quote": "Supplier Q quotes 3.95 EUR per unit for 500 units.",
    "https://r.example/quote": "Supplier R quotes 4.10 EUR per unit for 500 units.",
    "https://archive.example/q-quote": (
        "Archived copy: Supplier Q quotes 3.95 EUR per unit for 500 units."
    ),
    "https://q.example/delivery": "Supplier Q delivers 500 units in 12 days.",
}

# Search: the first entry whose words all occur in the query (case ignored) wins.
_INDEX = (
    (("supplier q", "archived"), "https://archive.example/q-quote"),
    (("supplier q", "deliver"), "https://q.example/delivery"),
    (("supplier p",), "https://p.example/quote"),
    (("supplier q",), "https://q.example/quote"),
    (("supplier r",), "https://r.example/quote"),
)

#: What a scripted attempt can do: answer correctly, return junk the check rejects, or fail
#: hard with no output at all.
FAILURE_KINDS = ("pass", "junk", "error")

# Junk a tool returns on a "junk" attempt: output that exists but fails the check.
_JUNK = {
    "search": "no result",
    "fetch_page": "503 Service Unavailable: the shop is under maintenance.",
    "compare": "no quotes to compare",
}
_QUOTE = re.compile(r"Supplier (\w+) quotes (\d+(?:\.\d+)?) EUR")
_ARGUMENT = {"search": "query", "fetch_page": "url", "compare": "pages"}


class ToolError(RuntimeError):
    """A hard failure: the tool returned no output at all."""


@dataclass(frozen=True)
class Call:
    """One call of a tool, as the toolbox saw it.

    Attributes
    ----------
    step : str
        The plan step that made the call.
    tool : str
    args : dict
        The arguments after placeholder substitution.
    attempt : int
        1 for the step's first call, 2 for its retry, ...
    outcome : str
        One of :data:`FAILURE_KINDS`.
    """

    step: str
    tool: str
    args: dict
    attempt: int
    outcome: str


def page(supplier: str) -> str:
    """The quote page of ``supplier`` (``"P"``, ``"Q"`` or ``"R"``).

    Examples
    --------
    >>> page("Q")
    'Supplier Q quotes 3.95 EUR per unit for 500 units.'
    """
    url = f"https://{str(supplier).lower()}.example/quote"
    if url not in PAGES:
        raise ValueError(f"supplier must be one of 'P', 'Q', 'R', got {supplier!r}")
    return PAGES[url]


def _search(query: str) -> str:
    text = query.lower()
    for words, url in _INDEX:
        if all(w in text for w in words):
            return url
    return "no result"


def _fetch(url: str) -> str:
    if url not in PAGES:
        raise ToolError(f"404: no page at {url!r}")
    return PAGES[url]


def _compare(pages) -> str:
    if isinstance(pages, str):
        pages = [pages]
    quotes = {}
    for text in pages:
        for name, price in _QUOTE.findall(str(text)):
            quotes.setdefault(name, float(price))
    if len(quotes) < 2:
        return "no quotes to compare"
    best = min(quotes, key=quotes.get)
    listed = ", ".join(f"{name} {price:.2f}" for name, price in sorted(quotes.items()))
    return f"Supplier {best} is cheapest at {quotes[best]:.2f} EUR per unit ({listed})."


_RUN = {"search": _search, "fetch_page": _fetch, "compare": _compare}


def check_output(tool: str, output: str) -> str | None:
    """The check of a tool's artifact: ``None`` if accepted, else the verdict.

    A program checks formal properties only: an address that looks like one, a page that
    is not an error page, a comparison that names a supplier.

    Examples
    --------
    >>> check_output("search", "https://q.example/quote") is None
    True
    >>> check_output("fetch_page", "503 Service Unavailable: the shop is under maintenance.")
    'the page is an error page (503), not content'
    """
    if tool == "search" and not output.startswith("https://"):
        return f"no address in the search result: {output!r}"
    if tool == "fetch_page":
        status = re.match(r"([45]\d\d)\b", output)
        if status:
            return f"the page is an error page ({status.group(1)}), not content"
    if tool == "compare" and "cheapest" not in output:
        return f"the comparison names no supplier: {output!r}"
    return None


def require_toolbox(toolbox):
    """``toolbox`` itself if it is a :class:`Toolbox`; a ValueError naming its type otherwise."""
    if not isinstance(toolbox, Toolbox):
        raise ValueError(f"toolbox must be a Toolbox, got {type(toolbox).__name__}")
    return toolbox


class Toolbox:
    """The simulated tools, with their latencies and a script of failures.

    Parameters
    ----------
    latency : Mapping, optional
        ``{tool: milliseconds}`` for every tool of :data:`TOOLS` (default
        :data:`LATENCY_MS`); finite numbers >= 0.
    failures : Mapping, optional
        ``{step id: [kind, kind, ...]}``: the kinds (see :data:`FAILURE_KINDS`) of that
        step's first attempts, in order; later attempts pass.

    Attributes
    ----------
    calls : list of Call
        Every call so far, in the order they began.

    Raises
    ------
    ValueError
        If a latency is missing, negative or not finite, or a failure kind is unknown.

    Examples
    --------
    >>> import asyncio
    >>> box = Toolbox({"search": 0, "fetch_page": 0, "compare": 0}, failures={"E2": ["junk"]})
    >>> asyncio.run(box.call("E1", "search", {"query": "supplier Q quote"}))
    'https://q.example/quote'
    >>> asyncio.run(box.call("E2", "fetch_page", {"url": "https://q.example/quote"}))
    '503 Service Unavailable: the shop is under maintenance.'
    >>> asyncio.run(box.call("E2", "fetch_page", {"url": "https://q.example/quote"}))
    'Supplier Q quotes 3.95 EUR per unit for 500 units.'
    >>> [(c.step, c.attempt, c.outcome) for c in box.calls]
    [('E1', 1, 'pass'), ('E2', 1, 'junk'), ('E2', 2, 'pass')]
    """

    def __init__(self, latency=None, *, failures=None):
        latency = LATENCY_MS if latency is None else latency
        if not isinstance(latency, Mapping):
            raise ValueError(f"latency must be a mapping {{tool: ms}}, got {latency!r}")
        self.latency = {}
        for tool in TOOLS:
            if tool not in latency:
                raise ValueError(f"latency has no entry for the tool {tool!r}")
            ms = latency[tool]
            if isinstance(ms, bool) or not isinstance(ms, (int, float)) or not math.isfinite(ms):
                raise ValueError(f"latency of {tool!r} must be a finite number, got {ms!r}")
            if ms < 0:
                raise ValueError(f"latency of {tool!r} must be >= 0, got {ms!r}")
            self.latency[tool] = ms
        failures = {} if failures is None else failures
        if not isinstance(failures, Mapping):
            raise ValueError(f"failures must be a mapping {{step: [kinds]}}, got {failures!r}")
        self.failures = {}
        for sid, kinds in failures.items():
            if isinstance(kinds, str):
                raise ValueError(f"failures of {sid!r} must be a list of kinds, got {kinds!r}")
            kinds = list(kinds)
            for kind in kinds:
                if kind not in FAILURE_KINDS:
                    raise ValueError(
                        f"failure kind of {sid!r} must be one of {FAILURE_KINDS}, got {kind!r}"
                    )
            self.failures[sid] = kinds
        self.calls: list[Call] = []
        self._attempts: dict = {}

    def __repr__(self):
        return f"Toolbox(latency={self.latency!r}, failures={self.failures!r})"

    async def call(self, step: str, tool: str, args) -> str:
        """Call ``tool`` for ``step`` with substituted ``args``; wait its latency, answer.

        Raises
        ------
        ToolError
            On a scripted ``"error"`` attempt, an unknown tool, a missing argument, or an
            address with no page.
        """
        attempt = self._attempts[step] = self._attempts.get(step, 0) + 1
        script = self.failures.get(step, [])
        outcome = script[attempt - 1] if attempt <= len(script) else "pass"
        self.calls.append(Call(step, tool, dict(args), attempt, outcome))
        await asyncio.sleep(self.latency.get(tool, 0) / 1000)
        if tool not in _RUN:
            raise ToolError(f"unknown tool {tool!r}")
        if outcome == "error":
            raise ToolError(f"{tool} lost its connection (no output)")
        if outcome == "junk":
            return _JUNK[tool]
        name = _ARGUMENT[tool]
        if name not in args:
            raise ToolError(f"{tool} needs the argument {name!r}, got {sorted(args)}")
        return _RUN[tool](args[name])
