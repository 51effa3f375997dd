"""Compile one frame into a cache entry (``torch/_dynamo/convert_frame.py``).

``convert_frame`` is called on a cache miss with the function and its bound arguments:

1. run an ``InstructionTranslator`` over the function's bytecode — it builds the graph, the
   guards and the tracker of the return value;
2. finish the graph and hand it to the backend (``OutputGraph.compile_subgraph``);
3. generate the **transformed code**: a new code object with the original signature that
   calls ``__compiled_fn_N`` on the graph inputs, replays a grad-mode switch the frame left
   behind (``mtc.set_grad_enabled(False)`` outside a ``with``) and rebuilds the return value;
4. generate the **guard function** from the guards.

If tracing hits something unsupported, the entry says "run the original code" instead — under
the guards collected up to that point, which are exactly the facts the failed trace depended
on, so the same inputs never retry the trace.  ``fullgraph=True`` raises instead.  An internal
error in the compiler does the same, with a warning: a compiler bug must never change what the
program computes.
"""

from __future__ import annotations

import contextvars
import dis
import io
import time
import types
from dataclasses import dataclass, field

from bytecode import Bytecode, CellVar, Instr, Label

from ..autograd.grad_mode import _set_grad_enabled
from ..fx import GraphModule
from . import config
from ._logging import get_logger, warn_user
from .codegen import PyCodegen, assemble
from .eager_frame import calls_through_jit
from .exc import (
    CompilerFallbackWarning,
    InternalTorchDynamoError,
    RestartAnalysis,
    SkipFrame,
    TensorifyScalarRestartAnalysis,
    Unsupported,
)
from .graph_break_codegen import emit_graph_break, shared_cells
from .guards import GuardFunction, GuardSet
from .output_graph import OutputGraph
from .symbolic_convert import InstructionTranslator
from .variables.lists import TupleVariable

# True while a frame compiled with ``fullgraph=True`` is being converted: a backend reads it to
# raise (``BackendCompilerFailed``) where it would otherwise fall back to eager
compiling_fullgraph: contextvars.ContextVar = contextvars.ContextVar("compiling_fullgraph",
                                                                      default=False)

_CO_KEEP = 0x01 | 0x02 | 0x04 | 0x08 | 0x10  # OPTIMIZED, NEWLOCALS, VARARGS, VARKEYWORDS, NESTED

# hooks for explain(): called with each finished entry
compile_listeners: list = []


@dataclass
class CacheEntry:
    """One compiled version of a code object, valid while ``guard(L)`` holds."""

    guard: GuardFunction
    original_code: types.CodeType
    code: types.CodeType | None  # transformed code; None means "run the original"
    graph_module: GraphModule | None = None
    compiled_fn_name: str | None = None
    backend: object = None
    reason: str | None = None  # why this entry runs eagerly
    user_line: str | None = None
    compile_time_s: float = 0.0
    fullgraph: bool = False
    functions: dict = field(default_factory=dict)  # id(original fn) -> transformed function
    graph_break: object = None  # the Unsupported that ended this frame's graph, if any
    side_effects: list = field(default_factory=list)  # what the transformed code replays
    # a skipped frame's original code with its callees routed through the JIT (eager_frame)
    eager_code: types.CodeType | None = None

    @property
    def is_eager(self) -> bool:
        return self.code is None

    @property
    def guard_source(self) -> str:
        return self.guard.src

    @property
    def graph_code(self) -> str | None:
        return self.graph_module.code if self.graph_module is not None else None

    @property
    def resume_functions(self) -> dict[str, types.CodeType]:
        """The resume functions this entry's transformed code continues in after its graph break
        (``{name: code}``, one per jump target); each is compiled by the JIT as a frame of its
        own: ``cache_entries(code)``, and ``decompile(code)`` shows it as Python."""
        from .resume_execution import RESUME_INFO

        if self.code is None or self.graph_break is None:
            return {}
        # a global, or (in a closure, bound to its cells) a local of the same name
        names = set(self.code.co_names) | set(self.code.co_varnames)
        return {c.co_name: c for c in RESUME_INFO if c.co_name in names}

    def dis(self) -> str:
        out = io.StringIO()
        dis.dis(self.code if self.code is not None else self.original_code, file=out)
        return out.getvalue()

    def decompiled(self) -> str:
        """The transformed code as Python source, via depyf."""
        return decompile(self.code if self.code is not None else self.original_code)

    def function_for(self, fn):
        """The transformed code bound to ``fn``'s globals, defaults and closure."""
        f = self.functions.get(id(fn))
        if f is None or f[0] is not fn:
            new = types.FunctionType(self.code or self.eager_code, fn.__globals__, fn.__name__,
                                     fn.__defaults__, fn.__closure__)
            new.__kwdefaults__ = fn.__kwdefaults__
            self.functions[id(fn)] = (fn, new)
            return new
        new = f[1]
        if new.__defaults__ is not fn.__defaults__:  # reassigned since: follow the original
            new.__defaults__ = fn.__defaults__
        if new.__kwdefaults__ is not fn.__kwdefaults__:
            new.__kwdefaults__ = fn.__kwdefaults__
        return new


def decompile(code) -> str:
    """depyf's decompiler, imported without letting it import torch (it tries to)."""
    import sys

    if "depyf" not in sys.modules:
        blocked = "torch" not in sys.modules
        if blocked:
            sys.modules["torch"] = None  # makes depyf's optional `import torch` fail cleanly
        try:
            import depyf  # noqa: F401
        finally:
            if blocked:
                del sys.modules["torch"]
    import depyf

    from ._depyf_compat import patch

    patch(depyf)  # depyf 0.20 predates CPython 3.13's opcodes
    try:
        return depyf.decompile(code)
    except Exception as e:  # the decompiler is a viewer; never let it break compilation
        return f"# depyf could not decompile this code: {type(e).__name__}: {e}"


def transformed_code(code: types.CodeType, output: OutputGraph, return_vt, tx=None,
                     backend=None) -> types.CodeType:
    """Bytecode: call the compiled graph on its inputs, rebuild the return value, return —
    or, after a graph break, rebuild the stack, run the breaking instruction and continue in a
    resume function (``graph_break_codegen.emit_graph_break``)."""
    cg = PyCodegen(output=output)
    cg.shared_cells = shared_cells(tx) if tx is not None else ()
    if output.compiled_fn_name is not None:
        cg.graph_output_index = {id(v.proxy): i for i, v in enumerate(output.output_vts)}
        cg.call_compiled_graph(output.compiled_fn_name, output.input_sources)
    if output.final_grad_enabled != output.initial_grad_enabled:  # a global side effect
        cg.load_global_object("___set_grad_enabled", _set_grad_enabled)
        cg.load_const(output.final_grad_enabled)
        cg.call(1)
        cg.append(Instr("POP_TOP"))
    output.side_effects.codegen(cg, [return_vt])  # list/dict/attribute/global writes
    if tx is not None and tx.graph_break is not None:
        emit_graph_break(cg, tx, tx.graph_break, backend)
    else:
        cg.reconstruct(return_vt)
        cg.append(Instr("RETURN_VALUE"))
    prefix = [Instr("MAKE_CELL", CellVar(c)) for c in cg.shared_cells]
    if code.co_freevars:
        prefix.append(Instr("COPY_FREE_VARS", len(code.co_freevars)))
    prefix.append(Instr("RESUME", 0))
    for ins in prefix + cg.instructions:
        if isinstance(ins, Instr):
            ins.lineno = code.co_firstlineno
    bc = Bytecode(prefix + cg.instructions)
    n_args = code.co_argcount + code.co_kwonlyargcount + bool(code.co_flags & 0x04) + \
        bool(code.co_flags & 0x08)
    bc.argcount = code.co_argcount
    bc.posonlyargcount = code.co_posonlyargcount
    bc.kwonlyargcount = code.co_kwonlyargcount
    bc.argnames = list(code.co_varnames[:n_args])
    bc.name = code.co_name
    bc.qualname = code.co_qualname
    bc.filename = code.co_filename
    bc.first_lineno = code.co_firstlineno
    bc.freevars = list(code.co_freevars)
    bc.cellvars = list(cg.shared_cells)
    bc.flags = code.co_flags & _CO_KEEP
    return assemble(bc)  # checked before it can run (bytecode_analysis)


MAX_RESTARTS = 8


def convert_frame(fn, f_locals: dict, closure: dict, backend, fullgraph: bool,
                  dynamic=None, frame_state: dict | None = None) -> CacheEntry:
    code = fn.__code__
    start = time.perf_counter()
    break_at: dict = {}
    entry: CacheEntry
    frame_state = {} if frame_state is None else frame_state
    specialized: set = set()  # floats kept constant (TensorifyScalarRestartAnalysis)
    for _ in range(MAX_RESTARTS):
        output = OutputGraph(fn.__globals__, code)
        output.dynamic, output.frame_state = dynamic, frame_state
        output.specialized_floats = specialized
        tx = InstructionTranslator(code, f_locals, fn.__globals__, closure, output,
                                   allow_breaks=not fullgraph, break_at=break_at)
        tx.frame_cells = dict(zip(code.co_freevars, fn.__closure__ or ()))
        try:
            entry = _convert(fn, tx, output, backend, fullgraph)
            break
        except RestartAnalysis as restart:  # a break inside an inlined call: break at the call
            break_at[restart.ip] = restart.cause
        except TensorifyScalarRestartAnalysis as restart:  # floats only returned: constants
            specialized |= restart.sources
        except Unsupported as e:
            if fullgraph:
                user_error = getattr(e, "user_error", None)
                if user_error is not None:  # bad input: the same error eager mode raises
                    raise user_error from None
                raise
            get_logger("graph_breaks").info("running %s eagerly: %s", code.co_name, e)
            guard = GuardSet().build(fn.__globals__) if isinstance(e, SkipFrame) else \
                _eager_guard(output, fn)  # a skipped frame: eagerly for any input
            entry = CacheEntry(guard, code, None, backend=backend,
                               reason=e.reason, user_line=e.user_line,
                               eager_code=calls_through_jit(code, backend))
            break
        except Exception as e:
            if fullgraph or not config.suppress_errors:
                raise InternalTorchDynamoError(
                    f"internal error while compiling {code.co_name}: {type(e).__name__}: {e}"
                ) from e
            warn_user(f"mtc.compile: internal compiler error while compiling {code.co_name} "
                      f"({type(e).__name__}: {e}); running it eagerly", CompilerFallbackWarning)
            entry = CacheEntry(_eager_guard(output, fn), code, None, backend=backend,
                               reason=f"internal error: {type(e).__name__}: {e}")
            break
    else:
        entry = CacheEntry(_eager_guard(output, fn), code, None, backend=backend,
                           reason="too many restarts of the analysis")
    output.record_frame_state()  # what automatic dynamic compares the next compile against
    entry.compile_time_s = time.perf_counter() - start
    for listener in compile_listeners:
        listener(entry)
    return entry


def _convert(fn, tx, output, backend, fullgraph) -> CacheEntry:
    code = fn.__code__
    token = compiling_fullgraph.set(fullgraph)
    try:
        return_vt = tx.run()
        brk = tx.graph_break
        if brk is not None:
            # the graph's outputs: every tensor the stack and the live locals hold
            live = [tx.symbolic_locals[n] for n in tx.live_locals() if n in tx.symbolic_locals
                    and n in _live_anywhere(tx, brk)]
            return_vt = TupleVariable(list(brk.stack) + live + _closure_values(brk.stack + live))
            get_logger("graph_breaks").info("Graph break in %s: %s\n  %s", code.co_name,
                                            brk.reason.reason, brk.reason.user_line)
        output.compile_subgraph(tx, return_vt, backend)
        new_code = transformed_code(code, output, return_vt, tx, backend)
    finally:
        compiling_fullgraph.reset(token)
        output.restore_global_state()
    _add_shape_guards(output)
    distinct = output.side_effects.sources_to_keep_distinct()
    if not output.side_effects.is_empty() and len(distinct) > 1:  # a write through one must
        output.guards.add("NO_ALIASING", None, value=distinct)  # not be missed by the other
    guard = output.guards.build(fn.__globals__)
    output.install_globals()
    entry = CacheEntry(guard, code, new_code, output.gm, output.compiled_fn_name, backend,
                       fullgraph=fullgraph,
                       graph_break=tx.graph_break.reason if tx.graph_break else None,
                       side_effects=output.side_effects.describe())
    _log_entry(entry)
    return entry


def _closure_values(vts: list) -> list:
    """The free-variable values of the nested functions among ``vts``: the transformed code
    makes each function again from them (``NestedUserFunctionVariable.reconstruct``), so the
    tensors among them are graph outputs even where the frame itself reads them no more."""
    from .variables.functions import FrameCell, NestedUserFunctionVariable

    return [cell.get() for vt in vts if isinstance(vt, NestedUserFunctionVariable)
            for cell in vt.closure.values() if isinstance(cell, FrameCell) and (
                cell.name in cell.tx.symbolic_locals or cell.tx.is_bound_argument(cell.name))]
    # (a cell not assigned yet — 3.11's `:=` target in a comprehension — has no value)


def _live_anywhere(tx, brk) -> set:
    """Locals some continuation of the break reads (the graph need not output the rest)."""
    if brk.at_checkpoint:  # the rest of the frame runs from the checkpoint itself
        return set(tx.live_locals(brk.index))
    targets = [brk.index + 1]
    if isinstance(brk.inst.arg, Label):  # a jump: its target continues too (other args may
        targets.append(tx.labels[brk.inst.arg])  # not even be hashable, e.g. bytecode's UNSET)
    return {n for t in targets for n in tx.live_locals(t)}


def _add_shape_guards(output: OutputGraph) -> None:
    env = output.shape_env
    if env.symbols or env.guards:
        output.guards.add("SHAPE_ENV", None, value=env)
    if output.scalar_env.float_sources or output.scalar_env.guards:
        output.guards.add("SYMBOLIC_SCALARS", None, value=(output.scalar_env, env))


def _eager_guard(output: OutputGraph, fn) -> GuardFunction:
    """The guard of an entry that runs the original code: the facts the failed trace used, or
    — if those cannot even be turned into a guard — none (running eagerly is always right)."""
    try:
        _add_shape_guards(output)
        return output.guards.build(fn.__globals__)
    except Exception:
        return GuardSet().build(fn.__globals__)


def _log_entry(entry: CacheEntry) -> None:
    name = entry.original_code.co_name
    if entry.graph_module is not None:
        get_logger("graph_code").info("TRACED GRAPH of %s\n%s", name,
                                      entry.graph_module.print_readable(print_output=False))
    get_logger("guards").info("GUARDS of %s\n%s", name, entry.guard.src)
    bc = get_logger("bytecode")
    if bc.isEnabledFor(20):
        bc.info("MODIFIED BYTECODE of %s\n%s", name, entry.dis())
