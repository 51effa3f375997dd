"""``_repr_html_`` of every compiler artifact: what a notebook shows when a cell evaluates one.

Each view must show the artifact's content (checked against the artifact itself) and escape
every user string."""

from html.parser import HTMLParser

import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitorch_compile as mtc
from minitorch_compile.dynamo import cache_entries


@pytest.fixture(autouse=True)
def _fresh():
    mtc.dynamo.reset()
    yield
    mtc.dynamo.reset()


class _Tags(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)


def tags(html: str) -> list[str]:
    p = _Tags()
    p.feed(html)
    return p.tags


def _hostile():
    """A function whose file name and code hold markup."""
    ns = {"mtc": mtc}
    src = "def f(x):\n    s = '<img src=x onerror=alert(1)>'\n    return x.cos() * 2\n"
    exec(compile(src, "<script>alert(1)</script>.py", "exec"), ns)
    return ns["f"]


def test_cache_entry_view_shows_guards_graph_and_both_bytecodes():
    f = mtc.compile(_hostile(), backend="eager")
    f(mtc.randn(3))
    entry, = cache_entries(f)
    h = entry._repr_html_()
    assert "script" not in tags(h) and "img" not in tags(h)
    assert "&lt;script&gt;alert(1)&lt;/script&gt;.py" in h
    for g in entry.guard.guard_set.guards:
        assert g.kind in h
    assert entry.compiled_fn_name in h and "original" in h and "transformed" in h
    assert "LOAD_GLOBAL" in h  # the transformed bytecode calls the compiled graph


def test_explain_view_counts_and_reasons(capsys):
    def g(x):
        y = x.sin()
        print("<b>io</b>")
        return y * 2
    out = mtc.dynamo.explain(g)(mtc.randn(3))
    h = out._repr_html_()
    assert f"<b>{out.graph_count}</b> graph(s)" in h
    assert f"<b>{out.graph_break_count}</b> break(s)" in h
    assert out.break_reasons[0].reason.split("(")[0].strip() in h
    assert "b" not in tags(h.replace("<b>", "<strong>"))  # our own bold only


def test_graph_partition_inductor_and_npu_views():
    def h(x):
        return (x.cos() * x.sin()).sum()
    import sys

    log = sys.modules["minitorch_compile.inductor.compile_fx"].compiled_graphs
    x = mtc.randn(8, requires_grad=True)
    before = len(log)
    mtc.compile(h)(x).backward()
    compiled = log[before:]
    assert compiled
    for c in compiled:
        v = c._repr_html_()
        for k in c.kernels:
            assert k["name"] in v
        assert "generated code" in v and "fusion decisions" in v
        gv = c.gm._repr_html_()
        assert "graph code" in gv
    with mtc.report.trace() as t:
        mtc.dynamo.reset()
        mtc.compile(h)(mtc.randn(8, requires_grad=True)).backward()
    part = next(e.payload["partition"] for e in t.of_kind("aot_joint")
                if e.payload["partition"] is not None)
    pv = part._repr_html_()
    assert f"{part.saved_bytes} bytes" in pv
    for n in part.saved_values:
        assert n.name in pv
    with mtc.npu.profile() as prof:
        (mtc.randn(16).to("npu") * 2).cos()
    nv = prof._repr_html_()
    assert len(prof.kernels) >= 2 and all(k.name in nv for k in prof.kernels)
    assert "<svg" in nv and nv.count("<rect") >= len(prof.kernels)


OUR_TAGS = {"div", "h4", "h5", "span", "p", "pre", "table", "tr", "td", "th", "code", "details",
            "summary", "b", "a", "style", "svg", "g", "title", "polygon", "path", "text",
            "ellipse", "polyline", "defs"}


@given(name=st.text(min_size=1, max_size=30), filename=st.text(min_size=1, max_size=40))
def test_any_file_or_function_name_stays_text(name, filename):
    """Whatever a program is called, its view has only our tags, and the name reads back."""
    mtc.dynamo.reset()
    ns = {"mtc": mtc}
    exec(compile("def f(x):\n    return x.cos()\n", filename.replace("\x00", ""), "exec"), ns)
    fn = ns["f"]
    fn.__code__ = fn.__code__.replace(co_name=name)
    g = mtc.compile(fn, backend="eager")
    g(mtc.randn(2))
    entry, = cache_entries(g)
    h = entry._repr_html_()
    assert set(tags(h)) <= OUR_TAGS
    from html import escape
    assert escape(name) in h
