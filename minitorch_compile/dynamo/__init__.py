"""``mtc.dynamo``: capture Python functions into graphs by symbolic bytecode execution.

Mirrors ``torch/_dynamo``.  Read in this order:

* ``eval_frame``       — ``mtc.compile``: the per-code-object cache and guard checks per call;
* ``convert_frame``    — on a miss: trace, compile, generate guards and transformed bytecode;
* ``symbolic_convert`` — the bytecode interpreter: its loop, the frame (and where its graph
  breaks), inlined callees; ``opcodes`` (+ ``opcodes_calls``, ``opcodes_control_flow``) — one
  handler method per opcode; ``bytecode_flow`` — decoded instructions, reachability, liveness;
* ``bytecode_versions`` — the one table of what differs between CPython 3.11, 3.12 and 3.13;
* ``resume_execution`` — resume functions and the code that runs at a graph break;
  ``comprehension_graph_break`` — a break inside a 3.12+ inlined comprehension;
* ``symbolic_shapes`` — ``SymInt`` and the ``ShapeEnv`` (dynamic shapes);
* ``variables/``       — one tracker class per kind of Python value;
* ``trace_rules``      — library code that is skipped (the LR schedulers) or compiled as a
  frame of its own (an optimizer's step); ``decorators`` — ``graph_break()``;
* ``source``, ``guards`` — where values come from, and what must stay true about them;
* ``output_graph``, ``codegen`` — the graph being built, and the bytecode that calls it;
  ``pgo`` — automatic dynamic: which inputs become symbols, from what earlier compiles saw;
  ``bytecode_analysis`` — the check every generated code object passes before it may run;
* ``explain``, ``backends/``, ``_logging``.
"""

from . import config, exc
from ._logging import set_logs
from .backends.registry import list_backends, lookup_backend, register_backend
from .convert_frame import CacheEntry
from .decorators import graph_break
from .eval_frame import (
    RECOMPILE_LIMIT,
    cache_entries,
    compile,
    disable_compilation,
    mark_dynamic,
    maybe_mark_dynamic,
    reset,
)
from .explain import ExplainOutput, explain

__all__ = ["config", "compile", "reset", "explain", "ExplainOutput", "cache_entries", "CacheEntry",
           "register_backend", "lookup_backend", "list_backends", "set_logs", "exc",
           "RECOMPILE_LIMIT", "disable_compilation", "mark_dynamic", "maybe_mark_dynamic",
           "graph_break"]
