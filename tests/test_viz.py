"""Pictures: every node appears, kinds are styled apart, and no `dot` means DOT source."""

import shutil

import pytest

import minitorch_compile as mtc
from minitorch_compile.fx import make_fx


def _gm():
    def f(x, w):
        return (x @ w).relu().sum(-1).view(-1, 1).expand(3, 4)

    return make_fx(f, tracing_mode="fake")(mtc.randn(3, 5), mtc.randn(5, 4))


def test_picture_contains_every_node_and_edge():
    gm = _gm()
    pic = mtc.viz.draw(gm)
    for n in gm.graph.nodes:
        assert f"\t{n.name} [label=" in pic.source
        for u in n.users:
            assert f"{n.name} -> {u.name}" in pic.source
    assert "f32[3, 4]" in pic.source and "aten.mm.default" in pic.source


def test_node_kinds_are_visually_distinct():
    src = mtc.viz.draw(_gm()).source
    line = {ln.split()[0]: ln for ln in src.split("\n\t") if "[label=" in ln}
    assert "ellipse" in line["x_1"]  # placeholder
    assert "box3d" in line["mm"]  # matmul
    assert "invhouse" in line["sum_1"]  # reduction
    assert "dashed" in line["view"]  # view
    assert "doubleoctagon" in line["output"]


def test_accepts_a_graph_and_highlights():
    gm = _gm()
    pic = mtc.viz.draw(gm.graph, highlight={"relu": "red"})
    assert 'fillcolor=red' in pic.source


@pytest.mark.skipif(shutil.which("dot") is None, reason="graphviz `dot` not installed")
def test_renders_svg_with_dot():
    pic = mtc.viz.draw(_gm())
    assert pic.svg().lstrip().startswith("<?xml")
    assert "image/svg+xml" in pic._repr_mimebundle_()


def test_without_dot_degrades_to_source(monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")
    pic = mtc.viz.draw(_gm())
    bundle = pic._repr_mimebundle_()
    assert set(bundle) == {"text/plain"}
    assert bundle["text/plain"].startswith("(graphviz's `dot` program is not installed")
    assert "digraph" in bundle["text/plain"]
    assert pic.svg() is None
    assert not mtc.viz.dot_available()


def test_cache_picture_follows_the_jit_loop():
    from .dynamo_utils import function

    mtc.dynamo.reset()
    f = mtc.compile(function, backend="eager")
    for n in (10, 8):
        f({"x": mtc.randn(n), "y": mtc.randn(n)})
    src = mtc.viz.draw_cache_entries(function).source
    # newest first: call -> entry 1 -(fails)-> entry 0 -(fails)-> a recompile
    assert "call -> entry1" in src and "entry1 -> entry0 [label=fails]" in src
    assert "entry0 -> miss [label=fails]" in src and "entry1 -> run1 [label=passes]" in src
    assert "TENSOR_MATCH L['inputs']['x'] float32[s0]" in src and "SHAPE_ENV s0 >= 2" in src
    assert "TENSOR_MATCH L['inputs']['x'] float32[10]" in src
    assert "continues in __resume_at_" in src and "gt" in src


def test_cache_picture_of_an_eager_entry_says_why():
    def reads_grad_fn(x):
        return x.grad_fn

    mtc.compile(reads_grad_fn, backend="eager")(mtc.randn(2))
    src = mtc.viz.draw_cache_entries(reads_grad_fn).source
    assert "runs the original code eagerly" in src and "grad_fn" in src
