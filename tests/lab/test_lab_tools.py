"""Simulated tools (decompkit.lab.tools): the fixed web, latencies, failures on demand."""

import asyncio
import math
import time

import pytest

from decompkit.lab.tools import (
    LATENCY_MS,
    PAGES,
    TOOLS,
    Toolbox,
    ToolError,
    check_output,
    page,
)

ZERO = {"search": 0, "fetch_page": 0, "compare": 0}


def call(box, step, tool, args):
    return asyncio.run(box.call(step, tool, args))


def test_tables_cover_every_tool():
    assert set(LATENCY_MS) == set(TOOLS)
    assert LATENCY_MS == {"search": 40, "fetch_page": 60, "compare": 20}


@pytest.mark.parametrize(
    ("query", "url"),
    [
        ("supplier P quote 500 units", "https://p.example/quote"),
        ("Supplier Q QUOTE", "https://q.example/quote"),
        ("supplier q quote, archived copy", "https://archive.example/q-quote"),
        ("delivery time of: Supplier Q quotes 3.95 EUR", "https://q.example/delivery"),
        ("weather tomorrow", "no result"),
    ],
)
def test_search(query, url):
    assert call(Toolbox(ZERO), "s", "search", {"query": query}) == url


def test_fetch_and_compare():
    box = Toolbox(ZERO)
    assert call(box, "f", "fetch_page", {"url": "https://r.example/quote"}) == page("R")
    with pytest.raises(ToolError, match="404: no page at 'https://x.example'"):
        call(box, "g", "fetch_page", {"url": "https://x.example"})
    pages = [page("P"), PAGES["https://archive.example/q-quote"], page("R")]
    assert call(box, "c", "compare", {"pages": pages}) == (
        "Supplier Q is cheapest at 3.95 EUR per unit (P 4.20, Q 3.95, R 4.10)."
    )
    assert call(box, "d", "compare", {"pages": [page("P")]}) == "no quotes to compare"


def test_hard_failures():
    box = Toolbox(ZERO)
    with pytest.raises(ToolError, match="unknown tool 'fetch_pages'"):
        call(box, "a", "fetch_pages", {"url": "x"})
    with pytest.raises(ToolError, match=r"search needs the argument 'query', got \['q'\]"):
        call(box, "b", "search", {"q": "x"})


def test_failure_script_per_step_and_attempt():
    box = Toolbox(ZERO, failures={"E2": ["junk", "error"], "E3": ["error"]})
    url = {"url": "https://q.example/quote"}
    assert call(box, "E2", "fetch_page", url).startswith("503 ")
    with pytest.raises(ToolError, match="lost its connection"):
        call(box, "E2", "fetch_page", url)
    assert call(box, "E2", "fetch_page", url) == page("Q")  # the script is spent
    assert call(box, "E1", "fetch_page", url) == page("Q")  # other steps are untouched
    with pytest.raises(ToolError):
        call(box, "E3", "search", {"query": "supplier Q"})
    assert [(c.step, c.attempt, c.outcome) for c in box.calls] == [
        ("E2", 1, "junk"),
        ("E2", 2, "error"),
        ("E2", 3, "pass"),
        ("E1", 1, "pass"),
        ("E3", 1, "error"),
    ]


def test_a_call_takes_at_least_its_latency():
    box = Toolbox({"search": 30, "fetch_page": 0, "compare": 0})
    start = time.perf_counter()
    call(box, "s", "search", {"query": "supplier P"})
    assert time.perf_counter() - start >= 0.029  # asyncio.sleep never wakes early


@pytest.mark.parametrize(
    ("tool", "output", "verdict"),
    [
        ("search", "https://q.example/quote", None),
        ("search", "no result", "no address in the search result: 'no result'"),
        ("fetch_page", page("Q"), None),
        ("fetch_page", "404 not found", "the page is an error page (404), not content"),
        ("compare", "Supplier Q is cheapest at 3.95 EUR", None),
        ("compare", "no quotes to compare", "the comparison names no supplier"),
    ],
)
def test_check_output(tool, output, verdict):
    got = check_output(tool, output)
    assert got is None if verdict is None else got.startswith(verdict)


def test_page():
    assert page("p") == PAGES["https://p.example/quote"]
    with pytest.raises(ValueError, match="supplier must be one of 'P', 'Q', 'R', got 'Z'"):
        page("Z")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"latency": [40]}, r"latency must be a mapping \{tool: ms\}, got \[40\]"),
        (
            {"latency": {"search": 1, "fetch_page": 1}},
            "latency has no entry for the tool 'compare'",
        ),
        ({"latency": {**ZERO, "search": -1}}, "latency of 'search' must be >= 0, got -1"),
        ({"latency": {**ZERO, "search": math.nan}}, "latency of 'search' must be a finite number"),
        ({"latency": {**ZERO, "search": True}}, "latency of 'search' must be a finite number"),
        ({"failures": ["E1"]}, r"failures must be a mapping \{step: \[kinds\]\}"),
        ({"failures": {"E1": "junk"}}, "failures of 'E1' must be a list of kinds, got 'junk'"),
        ({"failures": {"E1": ["boom"]}}, "failure kind of 'E1' must be one of .*, got 'boom'"),
    ],
)
def test_toolbox_rejects_bad_settings(kwargs, message):
    with pytest.raises(ValueError, match=message):
        Toolbox(**kwargs)


def test_repr_shows_the_settings():
    assert "failures={'E1': ['junk']}" in repr(Toolbox(failures={"E1": ["junk"]}))
