"""Render a ``Trace`` as one self-contained HTML page (tlparse's ``index.html``, in one file).

Sections, in the order a compile happens (each a ``<section id=…>``; the browser test checks
every id in ``SECTIONS`` is there):

    summary        what ran, how many frames, graphs, breaks, recompiles, kernels
    frames         every compiled frame in order: guards (grouped, coloured), graph (SVG),
                   break with reason and the user's source line, resume functions with their
                   original and transformed bytecode side by side and the decompiled source
    recompiles     which guard of which entry failed, and its message
    dynamic        dynamic-shape decisions: the symbols and SHAPE_ENV guards of each frame
    aot            the joint graph and its partition, with the bytes saved for the backward
    inductor       each compiled graph's kernels, fusion decisions and generated code
    npu            npu kernels with their timeline (``mtc.npu.profile`` records); each graph
                   compiled for the npu (``npu_compiled_graph``): tiling, kernels, timeline, code
    times          compile time per stage

Every user string is escaped by ``viz.html`` — nothing a program names can become markup.
"""

from __future__ import annotations

import datetime
import re

from ..viz import html as H
from ..viz.html import esc

_SYMBOLIC = re.compile(r"\[[^\]]*\bs\d+")  # a size that is a symbol: float32[s0, 4]

SECTIONS = ["summary", "frames", "recompiles", "dynamic", "aot", "inductor", "npu", "times"]
TITLES = {"summary": "Summary", "frames": "Frames", "recompiles": "Recompiles",
          "dynamic": "Dynamic shapes", "aot": "AOT Autograd", "inductor": "Inductor kernels",
          "npu": "NPU kernels and timeline", "times": "Compile times"}


def _frames(t) -> list:
    return [e.payload["entry"] for e in t.of_kind("dynamo_frame")]


def _section_summary(t) -> str:
    frames = _frames(t)
    rows = [["compiled frames (cache entries)", len(frames)],
            ["graphs", sum(1 for f in frames if f.graph_module is not None)],
            ["graph breaks", sum(1 for f in frames if f.graph_break is not None)],
            ["frames run eagerly", sum(1 for f in frames if f.is_eager)],
            ["recompiles", len(t.of_kind("recompile"))],
            ["AOT joint graphs", sum(1 for e in t.of_kind("aot_joint")
                                     if e.payload["joint"] is not None)],
            ["Inductor graphs", len(t.of_kind("inductor_graph"))],
            ["Inductor kernels", sum(len(e.payload["compiled"].kernels)
                                     for e in t.of_kind("inductor_graph"))],
            ["npu kernels run", len(t.npu_kernels)],
            ["wall time of the traced block", f"{t.wall_s:.3f} s"]]
    return H.table(["what", "count"], rows)


def _section_frames(t) -> str:
    frames = _frames(t)
    if not frames:
        return "<p>No frame was compiled.</p>"
    per_code: dict = {}
    out = []
    anchors: dict = {}  # a resume function's name -> its first frame in the page
    for n, entry in enumerate(frames):
        anchors.setdefault(entry.original_code.co_name, f"frame-{n}")
    for n, entry in enumerate(frames):
        idx = per_code.setdefault(id(entry.original_code), [])
        idx.append(entry)
        failed = H.failed_guards_of(idx)  # failures recorded so far for this code
        out.append(f'<h3 id="frame-{n}">#{n} · {esc(entry.original_code.co_name)}</h3>')
        out.append(H.cache_entry_html(entry, failed.get(len(idx) - 1), len(idx) - 1,
                                       anchors))
    return "".join(out)


def _section_recompiles(t) -> str:
    rows = []
    for n, e in enumerate(t.of_kind("recompile"), 1):
        code = e.payload["code"]
        for idx, gi, msg in e.payload["failures"]:
            rows.append([f"#{n}", code.co_name, f"{code.co_filename}:{code.co_firstlineno}",
                         f"entry {idx}", msg])
    if not rows:
        return "<p>No recompiles: every call after the first hit a cache entry.</p>"
    return ("<p>A call recompiles when every cache entry of its code rejects it: one row per "
            "entry, with the first guard that failed.</p>"
            + H.table(["recompile", "function", "where", "entry", "failed guard"], rows))


def _section_dynamic(t) -> str:
    rows = []
    for entry in _frames(t):
        for g in entry.guard.guard_set.guards:
            if g.kind == "SHAPE_ENV":
                rows.append([entry.original_code.co_name, g.value_repr or g.code])
            elif g.kind == "TENSOR_MATCH" and _SYMBOLIC.search(g.value_repr or ""):
                rows.append([entry.original_code.co_name, f"{g.source_name} {g.value_repr}"])
    if not rows:
        return ("<p>Every shape was static (no symbols were introduced; a second call with "
                "other sizes would mark them dynamic).</p>")
    return H.table(["frame", "decision (symbolic sizes and shape-env guards)"], rows)


def _section_aot(t) -> str:
    out = []
    for i, e in enumerate(t.of_kind("aot_joint")):
        p = e.payload
        if p["partition"] is None:
            out.append(f"<h3>graph {i}: inference (no gradient needed)</h3>"
                       + H.details("forward graph", H.graph_html(p["fw_graph"], "forward")))
            continue
        out.append(f"<h3>graph {i}: joint graph and partition</h3>")
        out.append(H.details("joint graph code", H.pre(p["joint"].code)))
        out.append(H.partition_html(p["partition"]))
    return "".join(out) or "<p>No AOT graph (the backend did not use AOTAutograd).</p>"


def _section_inductor(t) -> str:
    out = []
    for i, e in enumerate(t.of_kind("inductor_graph")):
        c = e.payload["compiled"]
        out.append(f"<h3>compiled graph {i}: {len(c.kernels)} kernel(s)</h3>")
        out.append(H.compiled_graph_html(c))
    return "".join(out) or "<p>No graph went through Inductor.</p>"


def npu_compiled_section(t) -> str:
    """Graphs compiled for the npu, as the npu code generator reports them at their first run
    (``inductor/npu_runtime.report_first_run``): ``trace_event("npu_compiled_graph", name=…,
    source=…, plans=[NPUKernelPlan…], kernels=[KernelRecord…])`` — each kernel's tiling, then
    the kernels of that run with their timeline, then the generated code."""
    out = []
    for e in t.of_kind("npu_compiled_graph"):
        p = e.payload
        out.append(f"<h3>compiled for the npu: {esc(p.get('name', 'graph'))}</h3>")
        plans = list(p.get("plans", ()))
        if plans:
            out.append(H.table(
                ["kernel", "AI cores", "rows per core", "rows per tile", "tiles per core",
                 "UB bytes", "min GM bytes", "UB buffers (count x bytes)"],
                [[k.name, k.block_dim, k.rows_per_core, k.rows_per_tile, k.tiles_per_core,
                  k.ub_bytes, k.min_gm_bytes,
                  ", ".join(f"{b}={c}x{n}" for b, c, n in k.buffers)] for k in plans]))
        out.append(H.npu_profile_html(list(p.get("kernels", ()))))
        if p.get("source"):
            out.append(H.details("generated npu code", H.pre(p["source"])))
    return "".join(out)


def _section_npu(t) -> str:
    records = t.npu_kernels
    compiled = npu_compiled_section(t)
    if not records and not compiled:
        return "<p>No kernel ran on the npu (move tensors with <code>.to('npu')</code>).</p>"
    return (f"<p>{len(records)} kernel launch(es) on the npu, in order, each bar split into "
            "its stages (from <code>mtc.npu.profile</code>).</p>"
            + H.npu_profile_html(records) + compiled)


def _section_times(t) -> str:
    rows = [["dynamo", e.payload["entry"].original_code.co_name,
             f"{e.payload['time_s'] * 1000:.1f}"] for e in t.of_kind("dynamo_frame")]
    rows += [["inductor", ", ".join(k["name"] for k in e.payload["compiled"].kernels) or "-",
              f"{e.payload['time_s'] * 1000:.1f}"] for e in t.of_kind("inductor_graph")]
    if not rows:
        return "<p>Nothing was compiled.</p>"
    return ("<p>A Dynamo frame's time is its own: tracing, guards, transformed code (its backend "
            "is called then, but AOTAutograd traces and Inductor compiles on the graph's first "
            "call, listed separately).</p>" + H.table(["stage", "what", "ms"], rows))


_RENDER = {"summary": _section_summary, "frames": _section_frames,
           "recompiles": _section_recompiles, "dynamic": _section_dynamic, "aot": _section_aot,
           "inductor": _section_inductor, "npu": _section_npu, "times": _section_times}


def render(t) -> str:
    nav = "".join(f'<a href="#{s}">{esc(TITLES[s])}</a>' for s in SECTIONS)
    body = []
    for s in SECTIONS:
        try:
            inner = _RENDER[s](t)
        except Exception as e:  # noqa: BLE001 - one broken section must not lose the page
            inner = f'<p class="fail">could not render this section: {esc(type(e).__name__)}: ' \
                    f"{esc(e)}</p>"
        body.append(f'<section id="{s}"><h2>{esc(TITLES[s])}</h2>{inner}</section>')
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{esc(t.title)}</title><style>{H.PAGE_CSS}{H.CSS}</style></head><body>"
            f"<h1>{esc(t.title)}</h1><p class=\"sub\">minitorch_compile · {when} · "
            f"{len(t.events)} trace events</p><nav>{nav}</nav>{''.join(body)}</body></html>\n")
