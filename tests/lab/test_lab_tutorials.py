"""The three tutorials (decompkit.lab.tutorials): typed output, fork and join, stepping."""

import asyncio

import pytest
from hypothesis import given
from hypothesis import strategies as st

from decompkit.lab.schema import Quote
from decompkit.lab.tools import page
from decompkit.lab.tutorials import (
    CANDIDATES,
    TestsFailed,
    coding_graph,
    extract_quote,
    fork_join_graph,
    overlap_ms,
    run_fork_join,
    schema_errors,
    source,
    step_through,
)


def extract(**kwargs):
    return asyncio.run(extract_quote(page("Q"), **kwargs))


# --- 1. a typed output -------------------------------------------------------------------------


def test_clean_answer_crosses_at_once():
    run = extract()
    assert run.quote == Quote(supplier="Q", price_eur=3.95, units=500)
    assert (run.attempts, run.rejections) == (1, ())


def test_malformed_answer_is_rejected_then_fixed_with_the_verdict():
    run = extract(script="malformed_once")
    assert run.quote == Quote(supplier="Q", price_eur=3.95, units=500)
    assert run.attempts == 2
    assert len(run.rejections) == 1
    assert "price_eur" in run.rejections[0] and "'3.95 EUR'" in run.rejections[0]


@pytest.mark.parametrize("retries", [0, 1, 2])
def test_a_model_that_keeps_failing_never_crosses(retries):
    run = extract(script="malformed", retries=retries)
    assert run.quote is None
    assert run.attempts == retries + 1
    assert len(run.rejections) == retries + 1  # the last verdict is kept too


def test_a_semantic_fault_passes_the_schema():
    run = extract(script="wrong")
    assert run.quote.price_eur == pytest.approx(39.5, abs=1e-9)
    assert run.rejections == ()


@given(
    supplier=st.text(),
    price=st.floats(min_value=1e-6, max_value=1e9),
    units=st.integers(min_value=1, max_value=10**9),
)
def test_schema_never_flags_a_well_formed_quote(supplier, price, units):
    # phi = 0: a correct answer always fits a correct schema.
    assert schema_errors({"supplier": supplier, "price_eur": price, "units": units}) == []


def test_candidates():
    rejected = {label for label, data in CANDIDATES.items() if schema_errors(data)}
    assert rejected == {"b", "d", "e"}
    assert schema_errors(CANDIDATES["e"]) == [
        "supplier: Field required (got {'price_eur': 3.95, 'units': 500})"
    ]


# --- 2. a fork and a join ----------------------------------------------------------------------


def test_fork_join_graph_has_a_fork_and_a_join():
    text = fork_join_graph().render()
    assert "<<fork>>" in text and "<<join>>" in text
    assert "fetch_p --> reduce_list_append" in text and "fetch_q --> reduce_list_append" in text


def test_the_two_branches_overlap():
    run = asyncio.run(run_fork_join())
    assert run.output == "Supplier Q is cheapest at 3.95 EUR per unit (P 4.20, Q 3.95)."
    # Each fetch sleeps 60 ms. Run one after the other, the second would start only after
    # the first ended (no overlap at all); forked, each starts before the other ends. That
    # is the claim, with no wall-clock bound a loaded machine could miss.
    assert run.spans["fetch_q"][0] < run.spans["fetch_p"][1]
    assert run.spans["fetch_p"][0] < run.spans["fetch_q"][1]
    assert overlap_ms(run.spans) > 0
    assert run.spans["compare"][0] >= max(run.spans["fetch_p"][1], run.spans["fetch_q"][1])


def test_overlap_ms():
    assert overlap_ms({"fetch_p": (0, 60), "fetch_q": (10, 65)}) == 50
    assert overlap_ms({"x": (0, 10), "y": (20, 30)}, "x", "y") == 0
    with pytest.raises(ValueError, match=r"spans must hold 'fetch_p' and 'fetch_q', got \['x'\]"):
        overlap_ms({"x": (0, 1)})


# --- 3. stepping through, repair by a new task -------------------------------------------------


def test_step_through_repairs_with_a_new_task():
    trace = asyncio.run(step_through())
    assert [(e.kind, e.node) for e in trace] == [
        ("dispatch", "write_code"),
        ("dispatch", "run_tests"),
        ("fail", "run_tests"),
        ("unroll", "write_code'"),
        ("dispatch", "run_tests'"),
        ("dispatch", "report"),
        ("finish", "report"),
    ]
    unroll = trace.of_kind("unroll")[0]
    # Rebuilt input: the original prompt plus the failure report.
    assert unroll.detail.startswith("do write_code' with fetch_data; failure report: run_tests:")
    assert trace[-2].detail == "do report with run_tests'"  # re-pointed
    assert [e.round for e in trace] == [0, 0, 0, 1, 1, 1, 1]
    times = [e.time for e in trace]
    assert times == sorted(times)


def test_step_through_gives_up_at_the_cap():
    with pytest.raises(TestsFailed, match="test_empty_input fails"):
        asyncio.run(step_through(kappa_plan=0))
    with pytest.raises(ValueError, match="kappa_plan must be an integer >= 0, got -1"):
        asyncio.run(step_through(kappa_plan=-1))


def test_coding_graph_is_a_chain():
    text = coding_graph().render()
    assert "write_code --> run_tests" in text and "run_tests --> report" in text


def test_source_prints(capsys):
    source(overlap_ms)
    assert capsys.readouterr().out.startswith("def overlap_ms(")


def test_wrong_input_types():
    with pytest.raises(ValueError, match="page must be the page text \\(a str\\), got int"):
        asyncio.run(extract_quote(3))
    with pytest.raises(ValueError, match="toolbox must be a Toolbox, got str"):
        asyncio.run(run_fork_join("box"))
