"""Draw a compiled function's cache: the JIT loop as a picture (torch has no such view; depyf's
``prepare_debug`` dumps the same pieces as files).

The picture reads as the loop ``eval_frame`` runs on every call::

    call ──▶ entry N (newest) ──guard fails──▶ entry N-1 ──▶ … ──▶ entry 0 ──▶ compile a new entry
                 │ guard passes                    │
                 ▼                                 ▼
             __compiled_fn_k (its ops)         runs the original code eagerly (and why)

Each entry box lists its guards (kind and source, one per line, as the guard function's
comments do); a graph box lists the ops of the entry's graph.  An entry whose frame broke its
graph says where it continues (its resume functions, which have caches of their own).
"""

from __future__ import annotations

from .graph_drawer import Picture

_ENTRY = dict(shape="box", style="filled,rounded", fillcolor="#fff9c4")
_EAGER = dict(shape="box", style="filled,rounded", fillcolor="#ffcdd2")
_GRAPH = dict(shape="box3d", style="filled", fillcolor="#c8e6c9")
_CALL = dict(shape="ellipse", style="filled", fillcolor="#bbdefb")
_MISS = dict(shape="octagon", style="filled", fillcolor="#e0e0e0")


def _left(lines: list[str]) -> str:
    """A left-aligned multi-line graphviz label."""
    return "".join(line.replace("\\", "\\\\") + "\\l" for line in lines)


def _guard_line(g) -> str:
    """``TENSOR_MATCH L['x'] float32[s0]``, ``SHAPE_ENV s0 >= 2``, ``ID_MATCH G['mtc']``."""
    if g.kind == "SHAPE_ENV":
        return f"SHAPE_ENV {g.value_repr}"
    if g.kind == "TENSOR_MATCH":
        return f"TENSOR_MATCH {g.source_name} {g.value_repr.split(' ')[0]}"
    return f"{g.kind} {g.source_name}".rstrip()


def _ops(gm) -> list[str]:
    out = []
    for n in gm.graph.nodes:
        if n.op == "call_function":
            out.append(getattr(n.target, "__name__", str(n.target)))
        elif n.op in ("call_method", "call_module"):
            out.append(f".{n.target}()")
    return out


def draw_cache_entries(fn, *, max_guards: int = 12) -> Picture:
    """A picture of ``mtc.dynamo.cache_entries(fn)``, in the order a call checks them."""
    from ..dynamo import cache_entries
    from ..dynamo.eval_frame import code_of

    code = code_of(fn)
    entries = cache_entries(fn)
    pic = Picture(name=f"cache of {code.co_name}",
                  graph_attr=dict(rankdir="LR", fontname="Helvetica"),
                  node_attr=dict(fontname="Helvetica", fontsize="10"),
                  edge_attr=dict(fontname="Helvetica", fontsize="9"))
    pic.node("call", f"call {code.co_name}(...)", **_CALL)
    previous, label = "call", "check newest first"
    for i in reversed(range(len(entries))):
        entry = entries[i]
        guards = [_guard_line(g) for g in entry.guard.guard_set.guards]
        if len(guards) > max_guards:
            guards = guards[:max_guards] + [f"... {len(guards) - max_guards} more"]
        title = f"entry {i}: guard(L)"
        pic.node(f"entry{i}", _left([title, ""] + guards),
                 **(_EAGER if entry.is_eager else _ENTRY))
        pic.edge(previous, f"entry{i}", label=label)
        result = f"run{i}"
        if entry.is_eager:
            pic.node(result, _left(["runs the original code eagerly:", entry.reason or ""]),
                     **_EAGER)
        else:
            lines = [entry.compiled_fn_name or "no graph"]
            if entry.graph_module is not None:
                lines += [f"  {op}" for op in _ops(entry.graph_module)]
            if entry.graph_break is not None:
                lines += ["then breaks: " + entry.graph_break.reason.split(":")[0].strip(),
                          "continues in " + ", ".join(sorted(entry.resume_functions))]
            pic.node(result, _left(lines), **_GRAPH)
        pic.edge(f"entry{i}", result, label="passes")
        previous, label = f"entry{i}", "fails"
    pic.node("miss", "compile a new entry\n(recompile)", **_MISS)
    pic.edge(previous, "miss", label=label if entries else "no entries")
    return pic
