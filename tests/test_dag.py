"""Tests for decompkit.dag: known answers, error cases, and differential checks against networkx."""

from __future__ import annotations

import math
import os
import pathlib
import subprocess
import sys
from collections import deque

import networkx as nx
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from decompkit import dag
from decompkit.dag import (
    CycleError,
    all_topological_orders,
    ancestors,
    count_topological_orders,
    critical_path,
    descendants,
    generations,
    is_topological_order,
    list_schedule,
    order_violations,
    predecessors_map,
    ready_set,
    successors_map,
    topological_order,
)

# --------------------------------------------------------------------------------------------
# Helpers that check behaviour independently of the module under test
# --------------------------------------------------------------------------------------------


def edges_of(graph):
    """Distinct edges (u, v) of a {node: predecessors} mapping."""
    return {(u, v) for v, preds in graph.items() for u in preds}


def nodes_of(graph):
    return set(graph) | {u for preds in graph.values() for u in preds}


def to_nx(graph):
    g = nx.DiGraph()
    g.add_nodes_from(nodes_of(graph))
    g.add_edges_from(edges_of(graph))
    return g


def assert_valid_order(graph, order):
    """Independent of dag.order_violations: every node once, every edge forward."""
    order = list(order)
    assert len(order) == len(nodes_of(graph))
    pos = {node: i for i, node in enumerate(order)}
    assert set(pos) == nodes_of(graph)
    for u, v in edges_of(graph):
        assert pos[u] < pos[v], (u, v)


def assert_real_cycle(graph, cycle):
    """``cycle`` closes on itself, has no repeated inner node and follows real edges."""
    assert len(cycle) >= 2
    assert cycle[0] == cycle[-1]
    assert len(set(cycle[:-1])) == len(cycle) - 1
    edges = edges_of(graph)
    for u, v in zip(cycle, cycle[1:], strict=False):
        assert (u, v) in edges, (u, v)


def same_cycle(found, expected):
    """Compare cycles up to rotation (both given with the first node repeated at the end)."""
    a, b = found[:-1], expected[:-1]
    if len(a) != len(b):
        return False
    return any(a[i:] + a[:i] == b for i in range(len(a)))


# --------------------------------------------------------------------------------------------
# Strategies
# --------------------------------------------------------------------------------------------


@st.composite
def dags(draw, max_nodes=12, labels="int"):
    """A random DAG as {node: [preds]}; some predecessor-only nodes are left out as keys."""
    n = draw(st.integers(0, max_nodes))
    pairs = [(i, j) for i in range(n) for j in range(i + 1, n)]
    chosen = draw(st.lists(st.sampled_from(pairs), unique=True)) if pairs else []
    perm = draw(st.permutations(range(n)))
    if labels == "object":
        names = [object() for _ in range(n)]
    elif labels == "str":
        names = [f"t{k}" for k in range(n)]
    else:
        names = list(range(n))
    names = [names[p] for p in perm]  # insertion order is not the topological order
    preds = {k: [] for k in range(n)}
    for i, j in chosen:
        preds[j].append(i)
    key_order = draw(st.permutations(range(n)))
    drop = draw(st.sets(st.sampled_from(range(n)))) if n else set()
    graph = {}
    for k in key_order:
        if preds[k] or k not in drop:  # a source may appear only as a predecessor
            graph[names[k]] = [names[i] for i in preds[k]]
    return graph


@st.composite
def digraphs(draw, max_nodes=8):
    """A random directed graph without self-loops, cycles allowed."""
    n = draw(st.integers(2, max_nodes))
    pairs = [(i, j) for i in range(n) for j in range(n) if i != j]
    chosen = draw(st.lists(st.sampled_from(pairs), unique=True, max_size=3 * n))
    graph = {k: [] for k in range(n)}
    for i, j in chosen:
        graph[j].append(i)
    return graph


# --------------------------------------------------------------------------------------------
# Boundary validation
# --------------------------------------------------------------------------------------------

ALL_GRAPH_FUNCTIONS = [
    topological_order,
    generations,
    ready_set,
    successors_map,
    predecessors_map,
    lambda g, **kw: descendants(g, [], **kw),
    lambda g, **kw: ancestors(g, [], **kw),
]


@pytest.mark.parametrize("func", ALL_GRAPH_FUNCTIONS)
@pytest.mark.parametrize(
    ("graph", "match"),
    [
        ([("a", "b")], r"graph must be a mapping"),
        ({"a": "bc"}, r"predecessors of node 'a' .* not the str 'bc'"),
        ({"a": b"bc"}, r"predecessors of node 'a' .* not the str b'bc'"),
        ({"a": 3}, r"predecessors of node 'a' must be an iterable of nodes, got 3"),
        ({"a": None}, r"predecessors of node 'a' must be an iterable of nodes, got None"),
        ({"a": [["b"]]}, r"predecessor \['b'\] of node 'a' is not hashable"),
    ],
)
def test_malformed_graph_raises(func, graph, match):
    with pytest.raises(ValueError, match=match):
        func(graph)


@pytest.mark.parametrize("func", ALL_GRAPH_FUNCTIONS)
def test_self_loop_is_a_cycle_naming_the_node(func):
    with pytest.raises(CycleError, match=r"'b' -> 'b' \(node 'b' lists itself") as info:
        func({"a": [], "b": ["a", "b"]})
    assert info.value.cycle == ["b", "b"]
    assert isinstance(info.value, ValueError)


@pytest.mark.parametrize("func", ALL_GRAPH_FUNCTIONS)
def test_strict_rejects_predecessor_that_is_not_a_key(func):
    graph = {"a": [], "b": ["a", "x"]}
    with pytest.raises(ValueError, match=r"predecessor 'x' of node 'b' is not a key"):
        func(graph, strict=True)
    func(graph)  # accepted when not strict


def test_predecessor_only_nodes_are_nodes():
    graph = {"c": ["b"], "b": ["a"]}
    assert topological_order(graph) == ["a", "b", "c"]
    assert predecessors_map(graph) == {"c": ["b"], "b": ["a"], "a": []}
    assert successors_map(graph) == {"c": [], "b": ["c"], "a": ["b"]}


def test_duplicate_predecessors_count_once():
    graph = {"b": ["a", "a"], "c": ("b", "a", "b")}
    assert topological_order(graph) == ["a", "b", "c"]
    assert predecessors_map(graph) == {"b": ["a"], "c": ["b", "a"], "a": []}
    assert successors_map(graph)["a"] == ["b", "c"]


def test_any_iterable_of_predecessors():
    graph = {"c": iter(["b"]), "b": {"a"}, "a": range(0)}
    assert topological_order(graph) == ["a", "b", "c"]


#: The forms a predecessor list may take; the last two can be read only once.
PREDECESSOR_FORMS = {
    "list": list,
    "tuple": tuple,
    "iterator": iter,
    "generator": lambda preds: (u for u in preds),
}


def reshaped(graph, forms):
    """``graph`` with each predecessor list handed over in the form ``forms[k]``."""
    return {v: PREDECESSOR_FORMS[f](ps) for (v, ps), f in zip(graph.items(), forms, strict=True)}


def forms_for(graph):
    return st.lists(
        st.sampled_from(sorted(PREDECESSOR_FORMS)), min_size=len(graph), max_size=len(graph)
    )


def test_a_cycle_given_as_iterators_is_a_cycle_error():
    # The fast path cannot take iterators; the cycle must not be lost by reading them twice.
    for func in (topological_order, generations, count_topological_orders):
        with pytest.raises(CycleError, match=r"'a' -> 'b' -> 'a'"):
            func({"a": iter(["b"]), "b": iter(["a"])})
    with pytest.raises(CycleError, match=r"'a' -> 'b' -> 'a'"):
        critical_path({"a": iter(["b"]), "b": (x for x in ["a"])}, {"a": 1, "b": 1})


@given(dags(), st.data())
def test_one_shot_predecessor_iterables_give_the_answers_of_lists(graph, data):
    forms = data.draw(forms_for(graph))
    for func in (topological_order, generations, predecessors_map, successors_map):
        assert func(reshaped(graph, forms)) == func(graph)
    durations = {v: data.draw(st.integers(0, 9)) for v in nodes_of(graph)}
    assert critical_path(reshaped(graph, forms), durations) == critical_path(graph, durations)
    ours = list_schedule(reshaped(graph, forms), durations, 2)
    assert ours == list_schedule(graph, durations, 2)


@given(digraphs(), st.data())
def test_cycles_in_one_shot_predecessor_iterables_are_named(graph, data):
    forms = data.draw(forms_for(graph))
    if nx.is_directed_acyclic_graph(to_nx(graph)):
        assert topological_order(reshaped(graph, forms)) == topological_order(graph)
        return
    for func in (topological_order, generations):
        with pytest.raises(CycleError, match=r"graph has a cycle") as info:
            func(reshaped(graph, forms))
        assert_real_cycle(graph, info.value.cycle)


UNHASHABLE = st.one_of(
    st.lists(st.integers(0, 3), max_size=2),
    st.sets(st.integers(0, 3), max_size=2),
    st.dictionaries(st.integers(0, 3), st.integers(0, 3), max_size=1),
)


@given(dags(max_nodes=6), UNHASHABLE, st.data())
def test_an_unhashable_node_is_named_never_a_bare_type_error(graph, bad, data):
    nodes = list(graph) or ["only"]
    graph = {**graph, nodes[0]: [*graph.get(nodes[0], []), bad]}
    for func in ALL_GRAPH_FUNCTIONS:
        with pytest.raises(ValueError, match=r"predecessor .* of node .* is not hashable"):
            func(graph)
    clean = {v: [u for u in ps if u is not bad] for v, ps in graph.items()}
    for func in (descendants, ancestors):
        with pytest.raises(ValueError, match=r"unknown node .* in nodes"):
            func(clean, [bad])
    with pytest.raises(ValueError, match=r"unknown node .* in done"):
        ready_set(clean, done=[bad])


# --------------------------------------------------------------------------------------------
# Topological order and cycles
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("graph", [{}, {"only": []}, {"b": ["a"]}, {"a": [], "b": [], "c": []}])
def test_small_graphs(graph):
    order = topological_order(graph)
    assert_valid_order(graph, order)


def test_empty_and_single_node():
    assert topological_order({}) == []
    assert generations({}) == []
    assert ready_set({}) == []
    assert topological_order({"x": ()}) == ["x"]
    assert generations({"x": ()}) == [["x"]]


def test_ties_by_first_appearance_never_by_comparison():
    # Unorderable nodes: any comparison would raise TypeError.
    a, b, c, d = object(), object(), object(), object()
    graph = {d: [b, a], c: [a], b: [], a: []}
    assert topological_order(graph) == [b, a, d, c]
    assert generations(graph) == [[b, a], [d, c]]
    mixed = {1: [], "x": [], (2,): [1], None: ["x"]}
    assert topological_order(mixed) == [1, "x", (2,), None]


def _textbook_kahn(graph):
    """Kahn as done by hand: FIFO queue, sources and successors in first-appearance order."""
    preds = predecessors_map(graph)
    first = {v: i for i, v in enumerate(preds)}
    succ = {v: [] for v in preds}
    for v, ps in preds.items():
        for u in ps:
            succ[u].append(v)
    indegree = {v: len(ps) for v, ps in preds.items()}
    queue = deque(v for v in preds if not indegree[v])
    order = []
    while queue:
        u = queue.popleft()
        order.append(u)
        for v in sorted(succ[u], key=first.__getitem__):
            indegree[v] -= 1
            if not indegree[v]:
                queue.append(v)
    return order


@given(dags())
def test_order_is_the_hand_run_fifo_kahn(graph):
    assert topological_order(graph) == _textbook_kahn(graph)


@pytest.mark.parametrize(
    ("nodes", "edges", "seed"), [(3000, 30000, 1), (400, 40000, 2), (5000, 6000, 3)]
)
def test_wide_layers_follow_the_hand_run_fifo_kahn(nodes, edges, seed):
    # Layers with many edges take the vectorised path; it must give the same order.
    rng = np.random.default_rng(seed)
    rank = rng.permutation(nodes)
    u, v = rng.integers(0, nodes, size=(2, edges))
    keep = rank[u] < rank[v]
    graph = {f"t{i}": [] for i in rng.permutation(nodes)}
    for a, b in zip(u[keep].tolist(), v[keep].tolist(), strict=True):
        graph[f"t{b}"].append(f"t{a}")
    assert topological_order(graph) == _textbook_kahn(graph)


def test_order_of_the_coding_example():
    graph = {
        "read_spec": [],
        "fetch_data": ["read_spec"],
        "write_tests": ["read_spec"],
        "write_code": ["fetch_data"],
        "run_tests": ["write_code", "write_tests"],
        "report": ["run_tests"],
    }
    expected = ["read_spec", "fetch_data", "write_tests", "write_code", "run_tests", "report"]
    assert topological_order(graph) == expected
    # The order within a predecessor list does not matter.
    graph["run_tests"] = ["write_tests", "write_code"]
    assert topological_order(graph) == expected


def test_cycle_error_names_a_real_cycle():
    graph = {"a": ["c"], "b": ["a"], "c": ["b"], "d": ["a"]}
    with pytest.raises(CycleError, match=r"graph has a cycle: 'a' -> 'b' -> 'c' -> 'a'") as info:
        topological_order(graph)
    assert same_cycle(info.value.cycle, ["b", "c", "a", "b"])
    assert_real_cycle(graph, info.value.cycle)


def test_cycle_reached_only_through_acyclic_part():
    # The walk starts at a node downstream of the cycle; the cycle must still be exact.
    graph = {"z": ["y"], "y": ["x"], "x": ["w"], "w": ["x", "s"], "s": []}
    with pytest.raises(CycleError, match=r"cycle") as info:
        generations(graph)
    assert same_cycle(info.value.cycle, ["x", "w", "x"])


def test_cycle_error_is_a_value_error_and_pickles():
    import pickle

    with pytest.raises(ValueError, match=r"graph has a cycle: 1 -> 2 -> 1") as info:
        topological_order({1: [2], 2: [1]})
    copy = pickle.loads(pickle.dumps(info.value))
    assert isinstance(copy, CycleError)
    assert copy.cycle == [1, 2, 1] and str(copy) == str(info.value)


@given(dags())
def test_order_matches_networkx_on_random_dags(graph):
    order = topological_order(graph)
    assert_valid_order(graph, order)  # independent check
    assert is_topological_order(graph, order)  # the module's own checker agrees
    assert is_topological_order(graph, list(nx.topological_sort(to_nx(graph))))
    assert nx.is_directed_acyclic_graph(to_nx(graph))


@given(dags(labels="object"))
def test_unorderable_nodes(graph):
    assert_valid_order(graph, topological_order(graph))
    assert is_topological_order(graph, topological_order(graph))
    layers = generations(graph)
    assert_valid_order(graph, [node for layer in layers for node in layer])


@given(digraphs())
def test_cycle_detection_agrees_with_networkx(graph):
    acyclic = nx.is_directed_acyclic_graph(to_nx(graph))
    if acyclic:
        assert_valid_order(graph, topological_order(graph))
    else:
        with pytest.raises(CycleError, match=r"graph has a cycle") as info:
            topological_order(graph)
        assert_real_cycle(graph, info.value.cycle)
        with pytest.raises(CycleError, match=r"graph has a cycle") as info:
            generations(graph)
        assert_real_cycle(graph, info.value.cycle)


@given(dags())
def test_generations_match_networkx(graph):
    ours = generations(graph)
    theirs = list(nx.topological_generations(to_nx(graph)))
    assert [set(layer) for layer in ours] == [set(layer) for layer in theirs]


def test_deep_chain_has_no_recursion_limit():
    n = 50_000
    graph = {k: [k - 1] for k in range(1, n)}
    assert topological_order(graph) == list(range(n))
    graph[0] = [n - 1]
    with pytest.raises(CycleError, match=r"graph has a cycle") as info:
        topological_order(graph)
    assert len(info.value.cycle) == n + 1
    assert descendants(graph, [0]) == set(range(n))


# --------------------------------------------------------------------------------------------
# Ready set, descendants, ancestors, successor map
# --------------------------------------------------------------------------------------------

DIAMOND = {"e": [], "b": ["a"], "c": ["a"], "d": ["b", "c"]}  # first appearance: e b c d a


@pytest.mark.parametrize(
    ("done", "running", "blocked", "expected"),
    [
        ((), (), (), ["e", "a"]),
        (["a"], (), (), ["e", "b", "c"]),
        (["a", "e"], ["b"], (), ["c"]),
        (["a", "b"], (), ["c", "d"], ["e"]),
        (["a", "b", "c"], (), (), ["e", "d"]),
        (["a", "b", "c", "d", "e"], (), (), []),
        ({"a", "b", "c"}, ("d",), iter(["e"]), []),
    ],
)
def test_ready_set(done, running, blocked, expected):
    assert ready_set(DIAMOND, done, running, blocked) == expected


@pytest.mark.parametrize("argument", ["done", "running", "blocked"])
def test_ready_set_rejects_unknown_nodes_and_str(argument):
    with pytest.raises(ValueError, match=rf"unknown node 'x' in {argument}"):
        ready_set(DIAMOND, **{argument: ["x"]})
    with pytest.raises(ValueError, match=rf"{argument} must be an iterable of nodes, not the str"):
        ready_set(DIAMOND, **{argument: "a"})
    with pytest.raises(ValueError, match=rf"{argument} must be an iterable of nodes, got 5"):
        ready_set(DIAMOND, **{argument: 5})
    with pytest.raises(ValueError, match=rf"unknown node \[1\] in {argument}"):
        ready_set(DIAMOND, **{argument: [[1]]})


def test_ready_set_on_a_cycle_leaves_cycle_nodes_waiting():
    assert ready_set({"a": ["b"], "b": ["a"], "c": []}) == ["c"]


@given(dags(), st.data())
def test_ready_set_is_kahns_frontier(graph, data):
    order = topological_order(graph)
    k = data.draw(st.integers(0, len(order)))
    done = order[:k]
    ready = ready_set(graph, done=done)
    preds = predecessors_map(graph)
    expected = [v for v in preds if v not in done and all(u in done for u in preds[v])]
    assert ready == expected
    if k < len(order):
        assert order[k] in ready  # the next node of any topological order is ready


def test_descendants_are_strict():
    graph = {"b": ["a"], "c": ["b"], "d": ["a"], "e": []}
    assert descendants(graph, ["a"]) == {"b", "c", "d"}
    assert descendants(graph, ["b"]) == {"c"}
    assert descendants(graph, ["c", "e"]) == set()
    assert descendants(graph, []) == set()
    assert descendants(graph, ["a", "b"]) == {"b", "c", "d"}  # b is reachable from a
    assert ancestors(graph, ["c"]) == {"a", "b"}
    assert ancestors(graph, ["c", "b"]) == {"a", "b"}


@pytest.mark.parametrize("func", [descendants, ancestors])
def test_cone_arguments_are_checked(func):
    with pytest.raises(ValueError, match=r"unknown node 'zz' in nodes"):
        func(DIAMOND, ["a", "zz"])
    with pytest.raises(ValueError, match=r"nodes must be an iterable of nodes, not the str 'a'"):
        func(DIAMOND, "a")


@given(dags(), st.data())
def test_cones_match_networkx(graph, data):
    g = to_nx(graph)
    nodes = list(g)
    chosen = data.draw(st.lists(st.sampled_from(nodes), max_size=3)) if nodes else []
    expected_down = set().union(*(nx.descendants(g, v) for v in chosen))
    expected_up = set().union(*(nx.ancestors(g, v) for v in chosen))
    assert descendants(graph, chosen) == expected_down
    assert ancestors(graph, chosen) == expected_up


@given(dags())
def test_successors_map_matches_networkx(graph):
    g = to_nx(graph)
    succ = successors_map(graph)
    assert set(succ) == set(g)
    for node, out in succ.items():
        assert len(out) == len(set(out))
        assert set(out) == set(g.successors(node))


def test_successors_in_first_appearance_order():
    graph = {"z": ["a"], "y": ["a"], "x": ["a"]}
    assert successors_map(graph)["a"] == ["z", "y", "x"]


def test_all_is_complete():
    for name in dag.__all__:
        assert hasattr(dag, name), name


# --------------------------------------------------------------------------------------------
# Checking orders
# --------------------------------------------------------------------------------------------

CHAIN = {"b": ["a"], "c": ["b"]}


def test_valid_order_in_any_iterable_form():
    for order in (["a", "b", "c"], ("a", "b", "c"), iter(["a", "b", "c"]), "abc"):
        report = order_violations(CHAIN, order)
        assert not report
        assert report.ok
        assert str(report) == "valid topological order"
    assert is_topological_order(CHAIN, (x for x in "abc"))


def test_order_violations_reports_every_problem():
    report = order_violations(CHAIN, ["c", "b", "b", "x", ["unhashable"]])
    assert report
    assert not report.ok
    assert report.edges == (("b", "c"),)
    assert report.missing == ("a",)
    assert report.unknown == ("x", ["unhashable"])
    assert report.duplicated == ("b",)
    text = str(report)
    for fragment in (
        "1 task(s) listed before a task they wait for",
        "'c' waits for 'b'",
        "missing node(s): 'a'",
    ):
        assert fragment in text
    assert "unknown node(s): 'x', ['unhashable']" in text
    assert "duplicated node(s): 'b'" in text


def test_order_violations_long_report_is_truncated():
    graph = {k: [k - 1] for k in range(1, 30)}
    report = order_violations(graph, list(range(29, -1, -1)))
    assert len(report.edges) == 29
    assert "... and 19 more" in str(report)
    report = order_violations(graph, [])
    assert "(30 in all)" in str(report)


def test_order_violations_on_a_cycle_always_finds_a_backward_edge():
    cyclic = {"a": ["b"], "b": ["a"]}
    assert order_violations(cyclic, ["a", "b"]).edges == (("b", "a"),)
    assert order_violations(cyclic, ["b", "a"]).edges == (("a", "b"),)


def test_order_violations_errors():
    with pytest.raises(ValueError, match=r"order must be an iterable of nodes, got 42"):
        order_violations(CHAIN, 42)
    with pytest.raises(ValueError, match=r"order must be an iterable of nodes, got None"):
        is_topological_order(CHAIN, None)
    with pytest.raises(CycleError, match=r"'a' -> 'a'"):
        is_topological_order({"a": ["a"]}, ["a"])


@given(dags(max_nodes=7), st.data())
def test_checker_agrees_with_independent_check(graph, data):
    nodes = list(nodes_of(graph))
    order = data.draw(st.permutations(nodes)) if nodes else []
    pos = {v: i for i, v in enumerate(order)}
    independent = all(pos[u] < pos[v] for u, v in edges_of(graph))
    assert is_topological_order(graph, order) == independent
    assert set(order_violations(graph, order).edges) == {
        (u, v) for u, v in edges_of(graph) if pos[u] > pos[v]
    }


# --------------------------------------------------------------------------------------------
# Enumerating and counting orders
# --------------------------------------------------------------------------------------------


@given(dags(max_nodes=6))
def test_all_orders_match_networkx(graph):
    ours = list(all_topological_orders(graph))
    theirs = list(nx.all_topological_sorts(to_nx(graph)))
    assert len(ours) == len(theirs) == count_topological_orders(graph)
    assert {tuple(o) for o in ours} == {tuple(o) for o in theirs}
    for order in ours:
        assert is_topological_order(graph, order)
        assert_valid_order(graph, order)


@given(dags(max_nodes=6, labels="object"))
def test_count_matches_networkx_on_unorderable_nodes(graph):
    assert count_topological_orders(graph) == len(list(nx.all_topological_sorts(to_nx(graph))))


def test_all_orders_are_lexicographic_by_first_appearance():
    a, b, c = object(), object(), object()
    orders = list(all_topological_orders({a: [], b: [], c: []}))
    rank = {a: 0, b: 1, c: 2}
    keys = [[rank[x] for x in o] for o in orders]
    assert keys == sorted(keys) and len(keys) == 6


@pytest.mark.parametrize(("limit", "expected"), [(0, 0), (1, 1), (2, 2), (7, 6), (None, 6)])
def test_all_orders_limit(limit, expected):
    assert len(list(all_topological_orders({"x": [], "y": [], "z": []}, limit=limit))) == expected


@pytest.mark.parametrize("limit", [-1, 1.5, "3", True, [2]])
def test_all_orders_bad_limit(limit):
    with pytest.raises(ValueError, match=r"limit must be"):
        all_topological_orders({"a": []}, limit=limit)


def test_empty_graph_has_one_order():
    assert list(all_topological_orders({})) == [[]]
    assert count_topological_orders({}) == 1
    assert list(all_topological_orders({"a": []})) == [["a"]]


def test_enumeration_and_count_reject_cycles_at_the_call():
    cyclic = {"a": ["b"], "b": ["a"], "c": []}
    with pytest.raises(CycleError, match=r"'a' -> 'b' -> 'a'"):
        all_topological_orders(cyclic)  # no next(): the error comes before iteration
    with pytest.raises(CycleError, match=r"graph has a cycle"):
        count_topological_orders(cyclic)


def test_count_splits_independent_components():
    # 30 independent nodes: far beyond the subset DP, but components multiply out.
    assert count_topological_orders({k: [] for k in range(30)}) == math.factorial(30)
    two_chains = {"b": ["a"], "c": ["b"], "y": ["x"], "z": ["y"]}
    assert count_topological_orders(two_chains) == math.comb(6, 3)
    star = {k: ["root"] for k in range(19)}  # 20 connected nodes: within the limit
    assert count_topological_orders(star) == math.factorial(19)


def test_count_refuses_a_large_component():
    big = {k: ["root"] for k in range(dag.MAX_COUNT_COMPONENT)}  # one node too many
    with pytest.raises(ValueError, match=r"refuses a connected component of 21 nodes \(at most 20"):
        count_topological_orders(big)


# --------------------------------------------------------------------------------------------
# Critical path
# --------------------------------------------------------------------------------------------


@st.composite
def weighted_dags(draw, max_nodes=10, labels="int"):
    graph = draw(dags(max_nodes=max_nodes, labels=labels))
    durations = {v: draw(st.integers(0, 9)) for v in nodes_of(graph)}
    return graph, durations


def longest_path_nx(graph, durations):
    """Longest node-weighted path by networkx, via a node-split graph (v_in -> v_out = d_v)."""
    h = nx.DiGraph()
    for v in nodes_of(graph):
        h.add_edge(("in", v), ("out", v), weight=durations[v])
    for u, v in edges_of(graph):
        h.add_edge(("out", u), ("in", v), weight=0)
    return nx.dag_longest_path_length(h, weight="weight") if len(h) else 0


@given(weighted_dags())
def test_critical_path_matches_networkx(case):
    graph, durations = case
    cp = critical_path(graph, durations)
    assert cp.makespan == longest_path_nx(graph, durations)
    assert cp.serial_time == sum(durations.values())


@given(weighted_dags(labels="object"))
def test_critical_path_definitions_hold(case):
    graph, durations = case
    cp = critical_path(graph, durations)
    preds = predecessors_map(graph)
    succ = successors_map(graph)
    for v in preds:
        assert cp.earliest_start[v] == max((cp.earliest_finish[u] for u in preds[v]), default=0)
        assert cp.earliest_finish[v] == cp.earliest_start[v] + durations[v]
        assert cp.latest_finish[v] == min(
            (cp.latest_start[w] for w in succ[v]), default=cp.makespan
        )
        assert cp.latest_start[v] == cp.latest_finish[v] - durations[v]
        assert cp.slack[v] == cp.latest_start[v] - cp.earliest_start[v] >= 0
    # The path is a real source-to-sink path, of the makespan's length, without slack.
    path = cp.path
    if preds:
        assert not preds[path[0]] and not succ[path[-1]]
        assert all((u, v) in edges_of(graph) for u, v in zip(path, path[1:], strict=False))
        assert sum(durations[v] for v in path) == cp.makespan
        assert all(cp.slack[v] == 0 for v in path)
    else:
        assert path == [] and cp.makespan == 0


def test_critical_path_ties_by_first_appearance():
    graph = {"top": ["s"], "bottom": ["s"], "t": ["top", "bottom"]}
    durations = {"s": 1, "top": 2, "bottom": 2, "t": 1}
    assert critical_path(graph, durations).path == ["s", "top", "t"]
    swapped = {"bottom": ["s"], "top": ["s"], "t": ["top", "bottom"]}
    assert critical_path(swapped, durations).path == ["s", "bottom", "t"]


def test_critical_path_prefers_ending_at_a_sink():
    # 'a' and the zero-length milestone 'done' finish together; the path runs to the sink.
    cp = critical_path({"done": ["a"], "b": []}, {"a": 3, "done": 0, "b": 1})
    assert cp.path == ["a", "done"]


def test_critical_path_small_cases():
    empty = critical_path({}, {})
    assert (empty.makespan, empty.path, empty.serial_time, empty.slack) == (0, [], 0, {})
    one = critical_path({"x": []}, {"x": 2.5})
    assert (one.makespan, one.path, one.slack) == (2.5, ["x"], {"x": 0.0})
    assert isinstance(one.makespan, float)
    ints = critical_path({"b": ["a"]}, {"a": 1, "b": 2})
    assert all(type(x) is int for x in ints.earliest_start.values())
    mixed = critical_path({"b": ["a"]}, {"a": 1, "b": 0.5})
    assert all(type(x) is float for x in mixed.latest_finish.values())
    disconnected = critical_path({"a": [], "b": [], "c": ["b"]}, {"a": 5, "b": 1, "c": 1})
    assert disconnected.path == ["a"] and disconnected.slack == {"a": 0, "b": 3, "c": 3}


def test_critical_path_accepts_numpy_numbers():
    cp = critical_path({"b": ["a"]}, {"a": np.int64(2), "b": np.float32(1.5)})
    assert cp.makespan == 3.5 and type(cp.makespan) is float


@pytest.mark.parametrize(
    ("durations", "match"),
    [
        ({"a": 1}, r"durations has no entry for node 'b'"),
        ({"a": 1, "b": 2, "zz": 3}, r"durations names node 'zz', which is not in the graph"),
        ({"a": -1, "b": 2}, r"duration of node 'a' must be a finite number >= 0, got -1"),
        ({"a": 1, "b": -0.5}, r"duration of node 'b' must be a finite number >= 0, got -0.5"),
        (
            {"a": float("nan"), "b": 1},
            r"duration of node 'a' must be a finite number >= 0, got nan",
        ),
        (
            {"a": float("inf"), "b": 1},
            r"duration of node 'a' must be a finite number >= 0, got inf",
        ),
        ({"a": "3", "b": 1}, r"duration of node 'a' must be a finite number >= 0, got '3'"),
        ({"a": None, "b": 1}, r"duration of node 'a' must be a finite number >= 0, got None"),
        ({"a": True, "b": 1}, r"duration of node 'a' must be a finite number >= 0, got True"),
        ([("a", 1), ("b", 1)], r"durations must be a mapping \{node: duration\}"),
    ],
)
@pytest.mark.parametrize("func", [critical_path, lambda g, d: list_schedule(g, d, 2)])
def test_duration_errors(func, durations, match):
    with pytest.raises(ValueError, match=match):
        func({"b": ["a"]}, durations)


@pytest.mark.parametrize(
    "func",
    [
        critical_path,
        lambda g, d: list_schedule(g, d, 2),
        lambda g, d: list_schedule(g, d, 2, priority="input"),
        lambda g, d: list_schedule(g, d, 2, priority=lambda v: 1),
    ],
)
def test_scheduling_rejects_cycles(func):
    graph = {"a": ["c"], "b": ["a"], "c": ["b"]}
    with pytest.raises(CycleError, match=r"'a' -> 'b' -> 'c' -> 'a'") as info:
        func(graph, {"a": 1, "b": 1, "c": 1})
    assert_real_cycle(graph, info.value.cycle)


# --------------------------------------------------------------------------------------------
# List scheduling
# --------------------------------------------------------------------------------------------


def running_at(schedule, t):
    return [v for v in schedule.start if schedule.start[v] <= t < schedule.finish[v]]


def assert_feasible_and_greedy(graph, durations, schedule, resources=None):
    """Dependencies, one task per worker at a time, locks, and no avoidable idling."""
    preds = predecessors_map(graph)
    keys = {v: set(resources.get(v, ())) if resources else set() for v in preds}
    m = schedule.workers
    for v in preds:
        assert schedule.finish[v] == schedule.start[v] + durations[v]
        assert 0 <= schedule.worker[v] < m
        ready = max((schedule.finish[u] for u in preds[v]), default=0)
        assert schedule.start[v] >= ready
        # Idle check: between becoming ready and starting, every worker was busy or a
        # lock v needs was held. Occupancy only changes at start and finish times.
        events = {ready} | {
            t
            for t in [*schedule.start.values(), *schedule.finish.values()]
            if ready <= t < schedule.start[v]
        }
        for t in events:
            if t >= schedule.start[v]:
                continue
            busy = running_at(schedule, t)
            assert len(busy) == m or any(keys[u] & keys[v] for u in busy), (v, t)
    for u in preds:
        for v in preds:
            if u == v or not (durations[u] and durations[v]):
                continue
            overlap = (
                schedule.start[u] < schedule.finish[v] and schedule.start[v] < schedule.finish[u]
            )
            if overlap:
                assert schedule.worker[u] != schedule.worker[v]
                assert not (keys[u] & keys[v])
    assert schedule.makespan == max(schedule.finish.values(), default=0)


@given(weighted_dags(), st.integers(1, 4), st.sampled_from(["critical", "input"]))
def test_graham_bound_on_random_dags(case, m, priority):
    graph, durations = case
    schedule = list_schedule(graph, durations, m, priority=priority)
    assert_feasible_and_greedy(graph, durations, schedule)
    cp = critical_path(graph, durations)
    work = cp.serial_time
    assert schedule.work == work
    lower = max(cp.makespan, work / m)
    # Graham (1969): any greedy list schedule, integers so no tolerance is needed.
    assert schedule.makespan * m <= work + (m - 1) * cp.makespan
    assert schedule.makespan <= (2 - 1 / m) * lower + 1e-9
    assert schedule.makespan >= lower - 1e-9


@given(weighted_dags(max_nodes=8), st.integers(1, 3), st.data())
def test_resources_are_exclusive_and_schedule_stays_greedy(case, m, data):
    graph, durations = case
    nodes = list(nodes_of(graph))
    resources = {
        v: data.draw(st.lists(st.sampled_from(["db", "tenant", "gpu"]), max_size=2)) for v in nodes
    }
    schedule = list_schedule(graph, durations, m, resources=resources)
    assert_feasible_and_greedy(graph, durations, schedule, resources)


@given(weighted_dags())
def test_one_worker_is_serial_and_many_reach_the_critical_path(case):
    graph, durations = case
    cp = critical_path(graph, durations)
    n = max(1, len(nodes_of(graph)))
    assert list_schedule(graph, durations, 1).makespan == cp.serial_time
    assert list_schedule(graph, durations, n).makespan == cp.makespan


@pytest.mark.parametrize(
    ("priority", "expected"),
    [
        ("critical", ["b", "c", "a"]),  # longest first
        ("input", ["a", "b", "c"]),
        (lambda v: {"a": 1, "b": 0, "c": 2}[v], ["c", "a", "b"]),  # higher first
        (lambda v: 0, ["a", "b", "c"]),  # ties by first appearance
    ],
)
def test_priority_rules(priority, expected):
    graph = {"a": [], "b": [], "c": []}
    durations = {"a": 1, "b": 3, "c": 2}
    schedule = list_schedule(graph, durations, 1, priority=priority)
    assert sorted(graph, key=schedule.start.__getitem__) == expected


def test_critical_priority_beats_input_order_on_a_classic_case():
    # One long chain and short independent tasks listed first: input order starts the
    # short tasks first and finishes the chain late; critical priority starts the chain.
    graph = {"s1": [], "s2": [], "c1": [], "c2": ["c1"], "c3": ["c2"]}
    durations = {"s1": 2, "s2": 2, "c1": 2, "c2": 2, "c3": 2}
    assert list_schedule(graph, durations, 2, priority="critical").makespan == 6
    assert list_schedule(graph, durations, 2, priority="input").makespan == 8


def test_zero_duration_tasks_and_unorderable_nodes():
    a, b, c = object(), object(), object()
    schedule = list_schedule({b: [a], c: [b]}, {a: 0, b: 2, c: 0}, 1)
    assert (schedule.start[b], schedule.finish[c], schedule.makespan) == (0, 2, 2)
    empty = list_schedule({}, {}, 3)
    assert (empty.makespan, empty.start, empty.work) == (0, {}, 0)


def test_resource_conflict_lets_another_ready_task_through():
    graph = {"p": [], "q": [], "r": []}
    durations = {"p": 4, "q": 4, "r": 1}
    schedule = list_schedule(
        graph, durations, 2, priority="input", resources={"p": ["x"], "q": ["x"]}
    )
    assert schedule.start == {"p": 0, "q": 4, "r": 0}
    assert schedule.makespan == 8


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"workers": 0}, r"workers must be an integer >= 1, got 0"),
        ({"workers": 1.5}, r"workers must be an integer >= 1, got 1.5"),
        ({"workers": "2"}, r"workers must be an integer >= 1, got '2'"),
        ({"workers": [2]}, r"workers must be an integer >= 1, got \[2\]"),
        ({"workers": True}, r"workers must be a number, got True"),
        ({"priority": "fastest"}, r"priority must be 'critical', 'input' or a callable, got 'f"),
        ({"priority": lambda v: "high"}, r"priority\('b'\) must return a number, got 'high'"),
        ({"priority": lambda v: float("nan")}, r"priority\('b'\) must return a number, got nan"),
        ({"resources": ["a"]}, r"resources must be a mapping \{node: iterable of keys\}"),
        ({"resources": {"zz": ["x"]}}, r"resources names node 'zz', which is not in the graph"),
        ({"resources": {"a": "lock"}}, r"resources of node 'a' must be .* not the str 'lock'"),
        ({"resources": {"a": 3}}, r"resources of node 'a' must be an iterable of hashable keys"),
        ({"resources": {"a": [["x"]]}}, r"resources of node 'a' must be an iterable of hashable"),
    ],
)
def test_list_schedule_errors(kwargs, match):
    args = {"graph": {"b": ["a"]}, "durations": {"a": 1, "b": 1}, "workers": 2, **kwargs}
    with pytest.raises(ValueError, match=match):
        list_schedule(**args)


def test_the_widest_layer_is_not_enough_workers_for_the_critical_path():
    # The counterexample to "as many workers as the widest layer": layers of two nodes, but
    # b, c and x are pairwise independent, so two workers leave one of them waiting.
    graph = {"b": ["a"], "c": ["a"], "a": [], "x": []}
    durations = {"a": 1, "b": 1, "c": 1, "x": 2}
    assert max(map(len, generations(graph))) == 2
    assert critical_path(graph, durations).makespan == 2
    assert list_schedule(graph, durations, 2).makespan == 3
    assert list_schedule(graph, durations, 3).makespan == 2  # the largest antichain: 3


@given(weighted_dags(max_nodes=8))
def test_as_many_workers_as_the_largest_antichain_reach_the_critical_path(case):
    graph, durations = case
    width = max((len(a) for a in nx.antichains(to_nx(graph))), default=1)
    schedule = list_schedule(graph, durations, max(width, 1))
    cp = critical_path(graph, durations)
    assert schedule.makespan == cp.makespan
    assert schedule.start == cp.earliest_start  # no ready task ever waits


@given(weighted_dags(max_nodes=8), st.integers(0, 2**63 - 1), st.booleans())
def test_workers_beyond_the_node_count_schedule_as_one_per_node(case, extra, as_float):
    graph, durations = case
    n = max(len(nodes_of(graph)), 1)
    many = min(n + extra, 2**63 - 1)
    if as_float:
        many = float(min(many, 2**53))  # an integral float stays exact below 2**53
    schedule = list_schedule(graph, durations, many)
    one_each = list_schedule(graph, durations, n)
    assert (schedule.start, schedule.worker, schedule.makespan) == (
        one_each.start,
        one_each.worker,
        one_each.makespan,
    )
    assert schedule.workers == int(many)


def test_a_huge_worker_count_costs_no_memory():
    schedule = list_schedule({"a": []}, {"a": 1}, 10**12)
    assert (schedule.worker, schedule.makespan, schedule.workers) == ({"a": 0}, 1, 10**12)


@given(st.integers(2**63, 2**200) | st.floats(2**63, 1e300))
def test_worker_counts_beyond_int64_are_refused_naming_the_value(workers):
    # Counts go through the shared check of decompkit.validate, which must not let a float
    # of 2**63 or more wrap around when it becomes an int64.
    with pytest.raises(ValueError, match=r"workers") as info:
        list_schedule({"a": []}, {"a": 1}, workers)
    # Long values are shown abbreviated (reprlib), so look for their leading digits.
    assert repr(workers)[:25] in str(info.value)


def test_overflowing_float_durations_are_refused():
    for durations in ({"a": 1e308, "b": 1e308}, {"a": 1.7e308, "b": 0.5e308}):
        for func in (critical_path, lambda g, d: list_schedule(g, d, 2)):
            with pytest.raises(ValueError, match=r"durations add up to more than the largest"):
                func({"a": [], "b": ["a"]}, durations)
    # Independent nodes too: the serial time (and every slack against it) would be infinite.
    with pytest.raises(ValueError, match=r"durations add up to more than the largest float"):
        critical_path({"a": [], "b": []}, {"a": 1e308, "b": 1e308})
    with pytest.raises(ValueError, match=r"duration of node 'a' is too large to mix with float"):
        critical_path({"a": [], "b": []}, {"a": 10**400, "b": 0.5})
    cp = critical_path({"b": ["a"]}, {"a": 10**400, "b": 1})  # ints stay exact at any size
    assert cp.makespan == 10**400 + 1


@given(weighted_dags(max_nodes=6), st.data())
def test_float_durations_never_give_an_infinite_time(case, data):
    graph, _ = case
    big = st.floats(0, sys.float_info.max) | st.sampled_from([sys.float_info.max, 1e308])
    durations = {v: data.draw(big) for v in nodes_of(graph)}
    try:
        cp = critical_path(graph, durations)
        schedule = list_schedule(graph, durations, 2)
    except ValueError as error:
        assert "durations add up to more than the largest float" in str(error)
        return
    times = [cp.makespan, cp.serial_time, schedule.makespan, schedule.work]
    for mapping in (cp.earliest_start, cp.latest_finish, cp.slack, schedule.finish):
        times += mapping.values()
    assert all(map(math.isfinite, times))


def test_public_names_are_reexported_from_their_modules():
    from decompkit.dag import counting, cpm, list_scheduling, orders

    assert dag.critical_path is cpm.critical_path and dag.CriticalPath is cpm.CriticalPath
    assert dag.list_schedule is list_scheduling.list_schedule
    assert dag.Schedule is list_scheduling.Schedule
    assert dag.count_topological_orders is counting.count_topological_orders
    assert dag.topological_order is orders.topological_order
    assert dag.CycleError.__module__ == "decompkit.dag"  # as tracebacks and pickles name it
    with pytest.raises(AttributeError, match=r"has no attribute 'nope'"):
        dag.nope  # noqa: B018
    with pytest.raises(ImportError):
        import decompkit.schedule_list  # noqa: F401  (merged into decompkit.dag)


# --------------------------------------------------------------------------------------------
# Large graphs: the vectorised passes agree with the plain ones
# --------------------------------------------------------------------------------------------


def wide_dag(seed, layers=5, width=100, fan_in=60):
    """A shallow, wide random DAG (24,000 edges in 5 layers): the vectorised regime."""
    rng = np.random.default_rng(seed)
    names = [f"n{k}" for k in rng.permutation(layers * width)]
    graph = {}
    for layer in range(layers):
        for k in range(width):
            node = names[layer * width + k]
            if layer == 0:
                graph[node] = []
            else:
                earlier = rng.choice(layer * width, size=fan_in, replace=False)
                graph[node] = [names[j] for j in earlier]
    keys = list(graph)
    order = rng.permutation(len(keys))
    return {keys[i]: graph[keys[i]] for i in order}


@pytest.mark.parametrize("kind", ["int", "float"])
def test_vectorised_passes_match_the_plain_ones(kind, monkeypatch):
    from decompkit.dag import cpm

    graph = wide_dag(seed=1 if kind == "int" else 2)
    rng = np.random.default_rng(3)
    values = rng.integers(0, 50, size=len(graph)) if kind == "int" else rng.random(len(graph))
    durations = dict(zip(graph, values.tolist(), strict=True))
    n_edges, n_layers = len(edges_of(graph)), len(generations(graph))
    assert n_edges >= cpm._EDGES_PER_LAYER * max(n_layers, 8)  # vectorised regime
    fast = critical_path(graph, durations)
    fast_schedule = list_schedule(graph, durations, 7)
    monkeypatch.setattr(cpm, "_EDGES_PER_LAYER", 10**12)  # force the plain passes
    plain = critical_path(graph, durations)
    assert fast == plain  # every field, exactly (same operations in the same order)
    assert fast_schedule == list_schedule(graph, durations, 7)
    assert fast.makespan == longest_path_nx(graph, durations)
    assert all(type(x) is type(values.tolist()[0]) for x in fast.slack.values())


def test_huge_integer_durations_stay_exact():
    graph = wide_dag(seed=4)
    durations = dict.fromkeys(graph, 2**61 + 1)  # sums beyond int64: the plain passes run
    cp = critical_path(graph, durations)
    assert cp.makespan == 5 * (2**61 + 1)
    assert cp.serial_time == 500 * (2**61 + 1)


def test_benchmark_script_quick_mode_runs():
    root = pathlib.Path(__file__).resolve().parents[1]
    script = root / "bench" / "bench_dag.py"
    env = {**os.environ, "PYTHONPATH": str(root / "src")}
    out = subprocess.run(
        [sys.executable, str(script), "--quick"],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=True,
    ).stdout
    assert "10000" in out and "ratio" in out
