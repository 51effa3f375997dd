"""HTML views of every compiler artifact: what a notebook shows when it evaluates one, and the
pieces the compile report (``mtc.report``) is built from.

Every function returns an HTML fragment.  **Every user string passes through ``esc``** (file
names, function names, reprs, code, reasons): a hostile name shows as text, never as markup.
Pictures are inline SVG made by graphviz's ``dot`` where it exists, and the DOT source (escaped,
in a ``<pre>``) where it does not — no network, no external assets, no JavaScript.
"""

from __future__ import annotations

import dis
import html
import io
import re

#: guard kind -> background colour (the guard explorer and the report share it)
GUARD_COLORS = {
    "TENSOR_MATCH": "#c8e6c9", "SHAPE_ENV": "#b3e5fc", "ID_MATCH": "#fff9c4",
    "TYPE_MATCH": "#ffe0b2", "CONSTANT_MATCH": "#e1bee7", "NN_MODULE": "#d7ccc8",
    "GRAD_MODE": "#f0f4c3", "DEFAULT_DTYPE": "#f0f4c3", "NO_TENSOR_ALIASING": "#cfd8dc",
    "DUPLICATE_INPUT": "#cfd8dc", "DICT_KEYS": "#f8bbd0", "DICT_LENGTH": "#f8bbd0",
    "LIST_LENGTH": "#f8bbd0", "HASATTR": "#dcedc8", "BUILTIN_NOT_SHADOWED": "#eeeeee",
}
FAILED = "#ef5350"


def esc(s) -> str:
    return html.escape(str(s), quote=True)


def pre(text: str, cls: str = "code") -> str:
    return f'<pre class="{cls}">{esc(text)}</pre>'


def details(summary: str, body: str, open_: bool = False) -> str:
    """A collapsible block; ``summary`` is escaped, ``body`` is HTML already."""
    return f"<details{' open' if open_ else ''}><summary>{esc(summary)}</summary>{body}</details>"


def table(header: list[str], rows: list[list], cls: str = "t") -> str:
    """Cells are escaped unless wrapped in ``Raw``."""
    def cell(c):
        return c.html if isinstance(c, Raw) else esc(c)
    head = "".join(f"<th>{esc(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{cell(c)}</td>" for c in r) + "</tr>" for r in rows)
    return f'<table class="{cls}"><tr>{head}</tr>{body}</table>'


class Raw:
    """An already-safe HTML cell for ``table``."""

    def __init__(self, html_: str):
        self.html = html_


_STRIP = re.compile(r"<\?xml.*?\?>|<!DOCTYPE.*?>|<!--.*?-->", re.S)


def picture_html(pic) -> str:
    """Inline SVG of a ``viz.Picture`` (comments and prologue removed), or its escaped DOT."""
    svg = pic.svg()
    if svg is None:
        return ('<p class="hint">graphviz\'s <code>dot</code> is not installed: the DOT '
                'source</p>' + pre(pic.source, "dot"))
    return f'<div class="svg">{_STRIP.sub("", svg)}</div>'


def disassembly(code) -> str:
    out = io.StringIO()
    dis.dis(code, file=out)
    return out.getvalue()


def side_by_side(left_title: str, left: str, right_title: str, right: str) -> str:
    return (f'<div class="sbs"><div><h5>{esc(left_title)}</h5>{pre(left)}</div>'
            f'<div><h5>{esc(right_title)}</h5>{pre(right)}</div></div>')


# ---- guards ---------------------------------------------------------------------------------

def guard_group(g) -> str:
    """The source a guard is about: ``L['x']``, ``L['mod']``, ``globals``, ``shape env``,
    ``global state`` — what the explorer groups by."""
    if g.kind == "SHAPE_ENV":
        return "shape env"
    name = g.source_name or ""
    if not name:
        return "global state"
    if name.startswith("G["):
        return "globals"
    end = name.find("]")
    return name[:end + 1] if end > 0 else name


def guard_text(g) -> str:
    if g.kind in ("SHAPE_ENV", "TENSOR_MATCH") and g.value_repr:
        return f"{g.source_name} {g.value_repr}".strip()
    return g.code


def guards_html(entry, failed: dict | None = None) -> str:
    """The guards of a cache entry grouped by source, coloured by kind; ``failed`` maps a
    guard index to the message of a recompile it caused (highlighted)."""
    failed = failed or {}
    groups: dict[str, list] = {}
    for i, g in enumerate(entry.guard.guard_set.guards):
        groups.setdefault(guard_group(g), []).append((i, g))
    rows = []
    for source, gs in groups.items():
        rows.append(f'<tr class="grp"><td colspan="2">{esc(source)}</td></tr>')
        for i, g in gs:
            color = FAILED if i in failed else GUARD_COLORS.get(g.kind, "#ffffff")
            msg = f'<div class="fail">failed: {esc(failed[i])}</div>' if i in failed else ""
            rows.append(f'<tr><td class="kind" style="background:{color}">{esc(g.kind)}</td>'
                        f'<td><code>{esc(guard_text(g))}</code>{msg}</td></tr>')
    if not rows:
        rows.append('<tr><td colspan="2">(no guards: always valid)</td></tr>')
    return f'<table class="guards">{"".join(rows)}</table>'


def failed_guards_of(entries: list) -> dict:
    """``{entry index: {guard index: message}}`` from the recompiles recorded on later
    entries (``eval_frame`` stores them as ``recompile_failures``)."""
    out: dict = {}
    for e in entries:
        for idx, gi, msg in getattr(e, "recompile_failures", ()):
            if idx is not None and gi is not None:
                out.setdefault(idx, {}).setdefault(gi, msg)
    return out


# ---- artifacts ------------------------------------------------------------------------------

def graph_html(gm, title: str = "graph") -> str:
    from .graph_drawer import draw

    return (picture_html(draw(gm, name=title))
            + details("graph code", pre(gm.code)))


def cache_entry_html(entry, failed: dict | None = None, index: int | None = None,
                     anchors: dict | None = None) -> str:
    """A cache entry: its guards, its graph, and the transformed code next to the original.
    ``anchors`` maps a resume function's name to the page anchor of its frame (the report)."""
    anchors = anchors or {}
    code = entry.original_code
    head = f"entry {index}: " if index is not None else ""
    status = ("runs the original code eagerly: " + (entry.reason or "")) if entry.is_eager \
        else f"runs {entry.compiled_fn_name or 'no graph'}"
    parts = [f'<div class="entry"><h4>{esc(head + code.co_name)} '
             f'<span class="where">{esc(code.co_filename)}:{code.co_firstlineno}</span></h4>',
             f"<p>{esc(status)} · compiled in {entry.compile_time_s * 1000:.1f} ms</p>"]
    for idx, gi, msg in getattr(entry, "recompile_failures", ()):
        parts.append(f'<p class="fail">recompiled because entry {esc(idx)} failed: '
                     f"{esc(msg)}</p>")
    parts.append(guards_html(entry, failed))
    if entry.graph_break is not None:
        b = entry.graph_break
        parts.append(f'<p class="brk">graph break: {esc(b.reason)}</p>')
        if getattr(b, "user_line", None):
            parts.append(pre(b.user_line, "user"))
        names = ", ".join(f'<a href="#{esc(anchors[n])}">{esc(n)}</a>' if n in anchors
                          else esc(n) for n in sorted(entry.resume_functions))
        parts.append(f"<p>continues in {names}</p>")
    if entry.graph_module is not None:
        parts.append(details(f"graph {entry.compiled_fn_name}",
                             graph_html(entry.graph_module, entry.compiled_fn_name or "graph"),
                             open_=True))
    if entry.code is not None:
        parts.append(details("bytecode: original | transformed", side_by_side(
            "original", disassembly(code), "transformed", disassembly(entry.code))))
        parts.append(details("transformed code, decompiled (depyf)", pre(entry.decompiled())))
    parts.append(details("guard function", pre(entry.guard.src)))
    parts.append("</div>")
    return "".join(parts)


def explain_html(out) -> str:
    rows = [[f"Break {i}", r.reason, r.user_stack or ""]
            for i, r in enumerate(out.break_reasons, 1)]
    ops = "".join(f"<li>graph {i}: {esc(', '.join(o))}</li>"
                  for i, o in enumerate(out.ops_per_graph, 1))
    return (f'<div class="explain"><p><b>{out.graph_count}</b> graph(s), '
            f"<b>{out.graph_break_count}</b> break(s), <b>{out.op_count}</b> op(s)</p>"
            + (table(["", "reason", "where"], rows) if rows else "<p>no graph breaks</p>")
            + f"<ul>{ops}</ul>"
            + details(f"{len(out.out_guards)} guards",
                      table(["kind", "source", "code"],
                            [[g.kind, g.source_name, g.code] for g in out.out_guards]))
            + "</div>")


def partition_html(p) -> str:
    from ..aot.partitioners import size_of
    from .partition_drawer import draw_partition

    rows = [[n.name, "saved", size_of(n)] for n in p.saved_values]
    rows += [[n.name, "recomputed in the backward", ""] for n in p.recomputed]
    return (f'<div class="partition"><p>{esc(p.method)}: {len(p.saved_values)} saved value(s), '
            f"<b>{p.saved_bytes} bytes</b> saved for the backward</p>"
            + table(["value", "role", "bytes"], rows)
            + picture_html(draw_partition(p))
            + details("forward graph", pre(p.fw_module.code))
            + details("backward graph", pre(p.bw_module.code)) + "</div>")


def compiled_graph_html(c) -> str:
    """An Inductor ``CompiledFxGraph``: kernels, fusion decisions, IR and generated code."""
    from .kernel_drawer import draw_kernels

    krows = [[k["name"], ", ".join(k["nodes"]), k["num_bytes"], k["numel"]] for k in c.kernels]
    drows = [[d.node1, d.node2, "fused" if d.fused else "not fused", d.category, d.detail]
             for d in c.decisions]
    return ('<div class="inductor">'
            + table(["kernel", "fused nodes", "bytes", "numel"], krows)
            + (picture_html(draw_kernels(c)) if c.gm is not None else "")
            + details(f"{len(c.decisions)} fusion decisions",
                      table(["node 1", "node 2", "decision", "category", "detail"], drows),
                      open_=True)
            + details("loop IR before fusion", pre(c.ir_pre_fusion))
            + details("after fusion", pre(c.ir_post_fusion))
            + details("generated code (output_code)", pre(c.source)) + "</div>")


def npu_timeline_svg(records: list, width: int = 900) -> str:
    """Kernels one after another on a time axis (µs), each bar split into its stages' shares
    (MTE2 in, vector, cube, MTE3 out) — drawn by hand, so it needs no ``dot``."""
    if not records:
        return "<p>no npu kernels ran</p>"
    stages = [("mte2_cycles", "#90caf9", "MTE2"), ("vector_cycles", "#a5d6a7", "vector"),
              ("cube_cycles", "#ffcc80", "cube"), ("mte3_cycles", "#ce93d8", "MTE3")]
    total = sum(r.time_us for r in records) or 1.0
    row_h, label_w = 18, 180
    scale = (width - label_w - 80) / total  # room for the last bar's time label
    parts, t = [], 0.0
    for i, r in enumerate(records):
        y = 20 + i * row_h
        parts.append(f'<text x="2" y="{y + 12}" font-size="11">{esc(r.name[:28])}</text>')
        x, w = label_w + t * scale, max(r.time_us * scale, 1.0)
        cyc = sum(getattr(r, s) for s, _, _ in stages) or 1.0
        for s, color, _ in stages:
            sw = w * getattr(r, s) / cyc
            if sw > 0:
                parts.append(f'<rect x="{x:.1f}" y="{y}" width="{sw:.1f}" height="{row_h - 4}" '
                             f'fill="{color}"><title>{esc(r.name)} {s}</title></rect>')
                x += sw
        parts.append(f'<text x="{label_w + (t + r.time_us) * scale + 3:.1f}" y="{y + 12}" '
                     f'font-size="10">{r.time_us:.2f} µs</text>')
        t += r.time_us
    legend = "".join(f'<rect x="{label_w + k * 90}" y="2" width="10" height="10" fill="{c}"/>'
                     f'<text x="{label_w + k * 90 + 14}" y="11" font-size="10">{n}</text>'
                     for k, (_, c, n) in enumerate(stages))
    h = 30 + len(records) * row_h
    return (f'<svg class="timeline" xmlns="http://www.w3.org/2000/svg" width="{width}" '
            f'height="{h}">{legend}{"".join(parts)}</svg>')


def npu_profile_html(records: list) -> str:
    rows = [[r.name, r.kind, r.gm_read_bytes, r.gm_write_bytes, f"{r.time_us:.3f}", r.bound]
            for r in records]
    return ('<div class="npu">'
            + table(["kernel", "kind", "GM read B", "GM write B", "time µs", "bound"], rows)
            + npu_timeline_svg(records) + "</div>")


PAGE_CSS = """
body{font-family:Helvetica,Arial,sans-serif;margin:0 2em 3em 2em;color:#212121;max-width:1300px}
h1{margin-bottom:0} .sub{color:#616161;margin-top:.2em}
nav{position:sticky;top:0;background:#fafafa;border-bottom:1px solid #ddd;padding:.4em 0}
nav a{margin-right:1em;color:#1565c0;text-decoration:none;font-size:14px}
section{border-top:3px solid #90a4ae;margin-top:1.5em}
"""

CSS = """
.mtc table,table{border-collapse:collapse;margin:.4em 0;font-size:13px}
td,th{border:1px solid #ddd;padding:2px 6px;text-align:left;vertical-align:top}
th{background:#eceff1} tr.grp td{background:#f5f5f5;font-weight:bold}
td.kind{font-family:monospace;font-size:11px} .fail{color:#b71c1c;font-weight:bold}
.brk{color:#e65100;font-weight:bold} .where{color:#757575;font-weight:normal;font-size:12px}
pre{background:#f7f7f7;border:1px solid #e0e0e0;padding:6px;overflow:auto;font-size:12px;
max-height:420px} pre.user{background:#fff3e0}
.sbs{display:flex;gap:1em} .sbs>div{flex:1;min-width:0}
.entry{border:1px solid #cfd8dc;border-radius:6px;padding:.3em .8em;margin:.6em 0}
.svg svg{max-width:100%;height:auto} summary{cursor:pointer;color:#37474f;margin:.3em 0}
.hint{color:#757575;font-style:italic}
"""


def wrap(fragment: str) -> str:
    """A fragment with the stylesheet, for a notebook's ``_repr_html_``."""
    return f"<div class=\"mtc\"><style>{CSS}</style>{fragment}</div>"
