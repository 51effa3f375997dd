"""Dinic's max-flow against the definition of a minimum cut: enumerate every S side.

A cut is a set S of vertices holding the source and not the sink; its value is the total
capacity of the edges leaving S.  On graphs small enough to try every S, the smallest such
value must equal Dinic's maximum flow, and the S side Dinic reports must achieve it.
"""

import itertools
import math

from hypothesis import given
from hypothesis import strategies as st

from minitorch_compile.aot import MaxFlow, min_cut

INNER = ["a", "b", "c", "d", "e"]
VERTICES = ["s", "t"] + INNER


def cut_value(edges, side_s) -> float:
    return sum(c for u, v, c in edges if u in side_s and v not in side_s)


def brute_force_min_cut(edges) -> float:
    best = math.inf
    for k in range(len(INNER) + 1):
        for chosen in itertools.combinations(INNER, k):
            best = min(best, cut_value(edges, {"s", *chosen}))
    return best


capacities = st.one_of(st.integers(0, 9).map(float), st.just(math.inf))
edge_lists = st.lists(st.tuples(st.sampled_from(VERTICES), st.sampled_from(VERTICES), capacities),
                      max_size=18)


@given(edge_lists)
def test_dinic_equals_brute_force_min_cut(edges):
    value, side_s, side_t = min_cut(edges, "s", "t")
    assert value == brute_force_min_cut(edges)
    assert "s" in side_s and not side_s & side_t
    if value < math.inf:  # the reported S side is a minimum cut, not just any cut
        assert "t" in side_t and cut_value(edges, side_s) == value
    else:  # no cut: the source reaches the sink through infinite edges
        assert "t" in side_s


@given(st.lists(st.tuples(st.sampled_from(VERTICES), st.sampled_from(VERTICES),
                          st.integers(1, 9).map(float)), max_size=18))
def test_finite_capacities_always_give_a_finite_cut(edges):
    value, side_s, _ = min_cut(edges, "s", "t")
    assert value < math.inf and value == brute_force_min_cut(edges)


def test_textbook_network():
    # CLRS figure 26.1: maximum flow 23
    edges = [("s", "v1", 16), ("s", "v2", 13), ("v1", "v3", 12), ("v2", "v1", 4),
             ("v2", "v4", 14), ("v3", "v2", 9), ("v3", "t", 20), ("v4", "v3", 7),
             ("v4", "t", 4)]
    value, side_s, _ = min_cut(edges, "s", "t")
    assert value == 23
    assert side_s == {"s", "v1", "v2", "v4"}


def test_infinite_path_means_no_finite_cut():
    value, side_s, _ = min_cut([("s", "a", math.inf), ("a", "t", math.inf), ("s", "t", 1)],
                               "s", "t")
    assert value == math.inf and side_s == {"s", "a", "t"}


def test_infinite_edges_force_the_cut_onto_finite_ones():
    # the partitioner's shape: n_in -> n_out finite, data edges infinite
    edges = [("s", "x_in", math.inf), ("x_in", "x_out", 4), ("x_out", "y_in", math.inf),
             ("y_in", "y_out", 8), ("y_out", "t", math.inf), ("x_out", "t", math.inf)]
    value, side_s, _ = min_cut(edges, "s", "t")
    assert value == 4 and side_s == {"s", "x_in"}


def test_disconnected_sink_and_parallel_edges():
    assert min_cut([("s", "a", 3)], "s", "t")[0] == 0
    g = MaxFlow()
    for c in (1, 2, 3):
        g.add_edge("s", "t", c)
    assert g.max_flow("s", "t") == 6


def test_long_chain_is_fast():
    # a 20,000-vertex chain: one phase of BFS and one augmenting path
    edges = [(i, i + 1, 5.0 if i == 7_000 else 10.0) for i in range(20_000)]
    value, side_s, _ = min_cut(edges, 0, 20_000)
    assert value == 5.0 and len(side_s) == 7_001
