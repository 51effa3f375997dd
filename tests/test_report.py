"""The compile report: trace events from every stage → one self-contained HTML page.

Differential where it can be: each section is checked against the objects the stages made
(cache entries, partitions, compiled graphs, npu records), not against hard-coded text."""

import os
import re
import subprocess
import sys
import textwrap
from html import escape
from html.parser import HTMLParser

import pytest

import minitorch_compile as mtc
from minitorch_compile.dynamo import cache_entries
from minitorch_compile.report.html import SECTIONS, TITLES

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(autouse=True)
def _fresh():
    mtc.dynamo.reset()
    yield
    mtc.dynamo.reset()


class _Page(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags, self.ids, self.urls = [], [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        for k, v in attrs:
            if k == "id":
                self.ids.append(v)
            if k in ("src", "href") or (k == "style" and "url(" in (v or "")):
                self.urls.append(v)


def parse(html: str) -> _Page:
    p = _Page()
    p.feed(html)
    return p


def _step(x, y):
    a = (x.cos() * y).sum()
    print("break")
    return a * 2


def _traced_program(capsys=None):
    f = mtc.compile(_step)
    with mtc.report.trace() as t:
        x = mtc.randn(4, requires_grad=True)
        f(x, mtc.randn(4)).backward()
        f(mtc.randn(6, requires_grad=True), mtc.randn(6))  # recompile: sizes changed
        (mtc.randn(8).to("npu") * 3).cos()
    return f, t


def test_only_the_traced_block_is_recorded(capsys):
    assert not mtc.report.tracing()
    mtc.report.trace_event("dynamo_frame", entry=None)  # no active trace: nothing happens
    f = mtc.compile(_step, backend="eager")
    f(mtc.randn(3), mtc.randn(3))  # compiled before the trace: not in it
    with mtc.report.trace() as t:
        assert mtc.report.tracing()
        f(mtc.randn(3), mtc.randn(3))  # a cache hit: nothing compiles
        assert t.events == []
        f(mtc.randn(5), mtc.randn(5))  # recompile
    f(mtc.randn(7), mtc.randn(7))  # after the block: not in it
    assert not mtc.report.tracing()
    kinds = [e.kind for e in t.events]
    # f recompiles; its resume function gets a 0-d tensor of the same shape: a cache hit
    assert kinds == ["dynamo_frame", "recompile"]


def test_every_section_is_there_and_matches_the_stages(capsys):
    f, t = _traced_program()
    html = t.html()
    page = parse(html)
    for s in SECTIONS:
        assert s in page.ids and TITLES[s] in html
    # self-contained: no script, no external asset, nothing fetched
    assert "script" not in page.tags and "link" not in page.tags and "img" not in page.tags
    assert all(u.startswith("#") for u in page.urls), page.urls
    frames = [e.payload["entry"] for e in t.of_kind("dynamo_frame")]
    assert frames and set(map(id, frames)) >= set(map(id, cache_entries(f)))
    for entry in frames:  # every frame in order, with its guards
        assert entry.original_code.co_name in html
        for g in entry.guard.guard_set.guards:
            assert g.kind in html
    brk = cache_entries(f)[0].graph_break
    assert escape(brk.reason) in html and escape(brk.user_line) in html  # the user's line
    assert escape('print("break")') in html
    resume = sorted(cache_entries(f)[0].resume_functions)[0]
    assert re.search(rf'<a href="#frame-\d+">{resume}</a>', html)  # linked to its frame
    fails = cache_entries(f)[1].recompile_failures
    assert fails and escape(fails[0][2]) in html
    parts = [e.payload["partition"] for e in t.of_kind("aot_joint") if e.payload["partition"]]
    assert parts and all(f"{p.saved_bytes} bytes" in html for p in parts)
    kernels = [k["name"] for e in t.of_kind("inductor_graph")
               for k in e.payload["compiled"].kernels]
    assert kernels and all(k in html for k in kernels)
    assert t.npu_kernels and all(k.name in html for k in t.npu_kernels)
    assert "<svg" in html  # the npu timeline is drawn inline, dot or not


def test_hostile_file_and_function_names_inject_no_markup(tmp_path, capsys):
    src = textwrap.dedent('''
        import minitorch_compile as mtc
        def f(x):
            s = "<script>alert('code')</script>"
            y = x.cos()
            print(s)
            return y + 1
        f.__code__ = f.__code__.replace(co_name="<script>alert('name')</script>",
                                        co_qualname="<img src=x onerror=alert(1)>")
        mtc.compile(f)(mtc.randn(3))
    ''')
    script = tmp_path / "<script>alert('file')<script>.py"
    script.write_text(src)
    out = tmp_path / "r.html"
    r = subprocess.run([sys.executable, "-m", "minitorch_compile", "report", str(script),
                        "-o", str(out)], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert r.returncode == 0, r.stderr
    assert f"compile report: {out}" in r.stdout
    html = out.read_text()
    page = parse(html)
    assert "script" not in page.tags and "img" not in page.tags
    assert "&lt;script&gt;alert(&#x27;name&#x27;)&lt;/script&gt;" in html
    assert "&lt;script&gt;alert(&#x27;file&#x27;)&lt;script&gt;.py" in html
    assert "onerror=alert" not in html.replace("&lt;img src=x onerror=alert(1)&gt;", "")


def test_cli_writes_the_report_even_when_the_script_fails(tmp_path):
    script = tmp_path / "boom.py"
    script.write_text("import minitorch_compile as mtc\n"
                      "mtc.compile(lambda x: x * 2)(mtc.randn(2))\n"
                      "raise RuntimeError('after compiling')\n")
    out = tmp_path / "boom.html"
    r = subprocess.run([sys.executable, "-m", "minitorch_compile", "report", str(script),
                        "-o", str(out)], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert r.returncode == 1 and "after compiling" in r.stderr
    assert "&lt;lambda&gt;" in out.read_text()


def test_mtc_trace_dir_writes_report_and_event_log(tmp_path):
    import json

    script = tmp_path / "prog.py"
    script.write_text("import minitorch_compile as mtc\n"
                      "def g(x):\n    return x.sin() + 1\n"
                      "mtc.compile(g)(mtc.randn(2))\nmtc.compile(g)(mtc.randn(5))\n")
    env = dict(os.environ, MTC_TRACE_DIR=str(tmp_path / "trace"))
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                       cwd=ROOT, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    events = [json.loads(line) for line in (tmp_path / "trace" / "events.jsonl").open()]
    kinds = [e["kind"] for e in events]
    assert kinds.count("dynamo_frame") == 2 and "recompile" in kinds and "inductor_graph" in kinds
    times = [e["time_s"] for e in events]
    assert times == sorted(times)
    html = (tmp_path / "trace" / "report.html").read_text()
    assert all(f'id="{s}"' in html for s in SECTIONS)


def test_dynamic_section_lists_only_symbolic_decisions(capsys):
    f = mtc.compile(_step, backend="eager")
    with mtc.report.trace() as t:
        f(mtc.randn(4), mtc.randn(4))
        f(mtc.randn(6), mtc.randn(6))  # recompile to [s0]
    from minitorch_compile.report.html import _section_dynamic

    html = _section_dynamic(t)
    assert "float32[s0]" in html and "s0 &gt;= 2" in html
    assert "float32[4]" not in html  # the static first entry made no decision


def test_npu_compiled_graph_hook_renders_its_kernels_and_code():
    """The hook the npu code generator (issue 11) reports through; fed here with real records."""
    with mtc.npu.profile() as prof:
        (mtc.randn(32).to("npu") + 1).exp()
    with mtc.report.trace() as t:
        mtc.report.trace_event("npu_compiled_graph", name="fused <npu> graph",
                               kernels=prof.kernels, source="def kernel(): pass  # <b>")
    html = t.html()
    npu = html.split('<section id="npu">')[1].split("</section>")[0]
    assert "compiled for the npu: fused &lt;npu&gt; graph" in npu
    assert all(k.name in npu for k in prof.kernels)
    assert "# &lt;b&gt;" in npu and npu.count("<rect") >= len(prof.kernels)


def test_a_graph_compiled_for_the_npu_reports_its_plans_kernels_and_code():
    """Compiling for the npu feeds the npu section: at the first run under the trace, the
    generated source, each fused kernel's tiling and the records of that run."""
    f = mtc.compile(lambda x: mtc.softmax(x * 2, -1).cos())
    x = mtc.randn(64, 128).to("npu")
    with mtc.report.trace() as t:
        f(x)
        f(x)  # reported once
    (event,) = t.of_kind("npu_compiled_graph")
    plans, kernels = event.payload["plans"], event.payload["kernels"]
    assert plans and [p.name for p in plans] == [k.name for k in kernels
                                                 if k.kind == "inductor"]
    for p, k in zip(plans, [k for k in kernels if k.kind == "inductor"]):
        assert p.block_dim == k.block_dim and p.ub_bytes <= mtc.npu.get_spec().ub_bytes
        assert p.min_gm_bytes == k.min_gm_bytes and k.peak_ub_bytes <= p.ub_bytes
        assert p.rows_per_tile * p.tiles_per_core >= p.rows_per_core
    assert all(f"def {p.name}(" in event.payload["source"] for p in plans)
    npu = t.html().split('<section id="npu">')[1].split("</section>")[0]
    assert "compiled for the npu" in npu and "rows per tile" in npu
    assert all(escape(p.name) in npu for p in plans) and "<rect" in npu
    assert escape(f"def {plans[0].name}(") in npu  # the generated code, escaped
