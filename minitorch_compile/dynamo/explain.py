"""``mtc.dynamo.explain(fn)(*args)``: what the compiler did, in one report (``torch/_dynamo``).

Runs ``fn`` once under ``mtc.compile`` with a backend that records each graph, and collects
graph counts, break reasons (with the user's source line), the ops in each graph and the
guards.  Printing it looks like torch's ``ExplainOutput``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from . import convert_frame
from .eval_frame import _CACHE, _FRAME_STATE, _unwrap, code_of, compile


@dataclass
class BreakReason:
    reason: str
    user_stack: str | None = None

    def __str__(self) -> str:
        return f"{self.reason}\n  {self.user_stack}" if self.user_stack else self.reason


@dataclass
class ExplainOutput:
    graphs: list = field(default_factory=list)
    graph_count: int = 0
    graph_break_count: int = 0
    break_reasons: list = field(default_factory=list)
    op_count: int = 0
    ops_per_graph: list = field(default_factory=list)
    out_guards: list = field(default_factory=list)
    compile_times: str = ""
    side_effects: list = field(default_factory=list)  # replayed after the graphs

    def __str__(self) -> str:
        lines = [f"Graph Count: {self.graph_count}",
                 f"Graph Break Count: {self.graph_break_count}",
                 f"Op Count: {self.op_count}", "Break Reasons:"]
        for i, r in enumerate(self.break_reasons, 1):
            lines.append(f"  Break Reason {i}:")
            lines.append(f"    Reason: {r.reason}")
            if r.user_stack:
                lines.extend("    " + ln for ln in r.user_stack.splitlines())
        lines.append("Ops per Graph:")
        for i, ops in enumerate(self.ops_per_graph, 1):
            lines.append(f"  Ops {i}:")
            lines.extend(f"    {op}" for op in ops)
        if self.side_effects:
            lines.append("Side Effects (replayed after the graph):")
            lines.extend(f"  {s}" for s in self.side_effects)
        lines.append("Out Guards:")
        for i, g in enumerate(self.out_guards, 1):
            lines.append(f"  Guard {i}:")
            lines.append(f"    Name: {g.source_name!r}")
            lines.append(f"    Guard Type: {g.kind}")
            lines.append(f"    Code: {g.code}")
        if self.compile_times:
            lines.append(f"Compile Times: {self.compile_times}")
        return "\n".join(lines)


def _op_name(node) -> str:
    from ..fx.graph import target_repr

    if node.op == "call_method":
        return f"Tensor.{node.target}"
    return target_repr(node.target)


def explain(fn, *extra_args, **extra_kwargs):
    """``explain(fn)(*args, **kwargs)`` -> ``ExplainOutput``."""

    def inner(*args, **kwargs):
        graphs, entries = [], []

        def backend(gm, example_inputs):
            graphs.append(gm)
            return gm.forward

        def listen(entry):
            entries.append(entry)

        code = code_of(fn)
        saved = _CACHE.pop(code, None)
        # what automatic dynamic remembers of earlier compiles (of the frame and of its resume
        # functions) is put aside, as torch's explain starts from reset(): the counts are a
        # first compile's
        saved_state = list(_FRAME_STATE.items())
        _FRAME_STATE.clear()
        target = getattr(fn, "_orig_mod", fn)  # a compiled module: explain the module
        convert_frame.compile_listeners.append(listen)
        try:
            compile(_unwrap(target), backend=backend)(*args, **kwargs)
        finally:
            convert_frame.compile_listeners.remove(listen)
            _CACHE.pop(code, None)
            if saved is not None:
                _CACHE[code] = saved
            _FRAME_STATE.clear()
            for key, state in saved_state:
                _FRAME_STATE[key] = state
        out = ExplainOutput(graphs=graphs, graph_count=len(graphs))
        for e in entries:
            # the graph broke; a resume function continued.  As torch's, a reason is recorded
            # with the graph that reached the backend: a break before any op adds none
            if e.graph_break is not None and e.graph_module is not None:
                out.break_reasons.append(BreakReason(e.graph_break.reason,
                                                     e.graph_break.user_line))
            # a frame that runs eagerly as a whole (torch: a skipped frame) is no graph break
            out.out_guards.extend(e.guard.guard_set.guards)
            out.side_effects.extend(e.side_effects)
        # torch 2.13 counts the cuts between graphs (-1 when nothing compiled), while
        # ``break_reasons`` lists every frame's break, a break inside an inlined call in both
        out.graph_break_count = len(graphs) - 1
        for gm in graphs:
            ops = [_op_name(n) for n in gm.graph.nodes
                   if n.op in ("call_function", "call_method", "call_module")]
            out.ops_per_graph.append(ops)
            out.op_count += len(ops)
        out.compile_times = ", ".join(f"{e.original_code.co_name}: {e.compile_time_s:.4f}s"
                                      for e in entries)
        return out

    if extra_args or extra_kwargs:
        return inner(*extra_args, **extra_kwargs)
    return inner
