"""The guard explorer: ``mtc.viz.draw_guards(fn)`` — a picture of a function's cache with every
guard visible (torch prints guards as text: ``TORCH_LOGS=guards``; tlparse lists them).

Layout, one cluster per code object (the function, then each resume function it continues in)::

    ┌ frame f (file.py:12) ───────────────────────────────┐
    │ entry 0                      entry 1                 │
    │  L['x']                       L['x']                 │
    │   TENSOR_MATCH float32[4]  ◀─ FAILED: size mismatch  │   recompile edge: entry 1 was
    │  global state                 shape env              │   compiled because entry 0's
    │   GRAD_MODE …                  SHAPE_ENV s0 >= 2     │   highlighted guard failed
    └─────────────────────────────────────────────────────┘
              │ continues in (graph break)
    ┌ frame __resume_at_20_1 ─┐
    │ entry 0 …               │
    └─────────────────────────┘

Guards are grouped by the source they inspect (``guard_group``: a local, globals, the shape
env, global state) and coloured by kind (``viz.html.GUARD_COLORS``, one table for the explorer
and the report).  The failed guard of each recompile is red with its failure message — recorded
by ``eval_frame`` when it recompiled (``entry.recompile_failures``).
"""

from __future__ import annotations

import html

from .graph_drawer import Picture
from .html import FAILED, GUARD_COLORS, failed_guards_of, guard_group, guard_text


def _e(s, limit: int = 70) -> str:
    s = str(s)
    if len(s) > limit:
        s = s[:limit - 1] + "…"
    return html.escape(s, quote=True)


def _entry_label(i: int, entry, failed: dict) -> str:
    """A graphviz HTML-like label: a table with one row per guard, grouped by source."""
    title = f"entry {i}: " + ("eager: " + (entry.reason or "") if entry.is_eager
                              else (entry.compiled_fn_name or "no graph"))
    rows = [f'<TR><TD COLSPAN="2" BGCOLOR="#eceff1"><B>{_e(title)}</B></TD></TR>']
    groups: dict = {}
    for gi, g in enumerate(entry.guard.guard_set.guards):
        groups.setdefault(guard_group(g), []).append((gi, g))
    for source, gs in groups.items():
        rows.append(f'<TR><TD COLSPAN="2" ALIGN="LEFT"><I>{_e(source)}</I></TD></TR>')
        for gi, g in gs:
            color = FAILED if gi in failed else GUARD_COLORS.get(g.kind, "#ffffff")
            rows.append(f'<TR><TD BGCOLOR="{color}" ALIGN="LEFT">{_e(g.kind)}</TD>'
                        f'<TD ALIGN="LEFT">{_e(guard_text(g))}</TD></TR>')
            if gi in failed:
                rows.append(f'<TR><TD COLSPAN="2" BGCOLOR="#ffcdd2" ALIGN="LEFT">'
                            f'<FONT COLOR="#b71c1c">FAILED: {_e(failed[gi], 90)}</FONT>'
                            f"</TD></TR>")
    if entry.graph_break is not None:
        rows.append(f'<TR><TD COLSPAN="2" BGCOLOR="#ffe0b2" ALIGN="LEFT">graph break: '
                    f"{_e(entry.graph_break.reason)}</TD></TR>")
    return ('<<TABLE BORDER="0" CELLBORDER="1" CELLSPACING="0" CELLPADDING="3">'
            + "".join(rows) + "</TABLE>>")


def draw_guards(fn) -> Picture:
    """A picture of ``fn``'s cache entries and their guards, and of its resume functions'."""
    from ..dynamo import cache_entries
    from ..dynamo.eval_frame import code_of

    pic = Picture(name="guards", graph_attr=dict(rankdir="TB", fontname="Helvetica",
                                                 compound="true"),
                  node_attr=dict(fontname="Helvetica", fontsize="10", shape="plaintext"),
                  edge_attr=dict(fontname="Helvetica", fontsize="9"))
    todo, seen, k = [code_of(fn)], set(), 0
    first_node: dict = {}
    links = []
    while todo:
        code = todo.pop(0)
        if id(code) in seen:
            continue
        seen.add(id(code))
        entries = cache_entries(code)
        failed = failed_guards_of(entries)
        cluster = f"cluster_{k}"
        k += 1
        with pic.subgraph(name=cluster) as sub:
            sub.attr(label=f"frame {code.co_name} ({code.co_filename}:{code.co_firstlineno})",
                     style="rounded", color="#78909c")
            if not entries:
                sub.node(f"{cluster}_none", "(no cache entries yet)", shape="box")
                first_node[id(code)] = f"{cluster}_none"
            for i, e in enumerate(entries):
                node = f"{cluster}_e{i}"
                first_node.setdefault(id(code), node)
                sub.node(node, _entry_label(i, e, failed.get(i, {})))
                for idx, gi, msg in getattr(e, "recompile_failures", ()):
                    if idx is not None:
                        links.append((f"{cluster}_e{idx}", node,
                                      dict(label="recompile", color=FAILED, style="dashed")))
                for name, rcode in sorted(e.resume_functions.items()):
                    todo.append(rcode)
                    links.append((node, rcode, dict(label=f"continues in {name}",
                                                    color="#e65100")))
    for src, dst, attrs in links:
        if not isinstance(dst, str):
            dst = first_node.get(id(dst))
            if dst is None:
                continue
        pic.edge(src, dst, **attrs)
    return pic
