"""The symbolic bytecode interpreter (``torch/_dynamo/symbolic_convert.py``).

``InstructionTranslator`` executes a function's CPython bytecode (3.11 to 3.13) *symbolically*:
its stack and locals hold ``VariableTracker``s instead of values. Each opcode has one handler
method, named after it and found with ``getattr`` (byterun's habit); an opcode without a
handler is ``Unsupported``, by name. The handlers live in ``opcodes.py``, grouped by family;
this file holds the interpreter loop, the frame being compiled (and its graph breaks: where
one may resume is ``break_verdict.py``) and the inlined callees.

Python-level work (arithmetic on constants, building lists, unrolling ``for`` loops, inlining
calls) happens *in the tracer*; tensor work becomes nodes in the shared ``OutputGraph``.  A
call to a user function starts an ``InliningInstructionTranslator`` on the callee's bytecode,
sharing the graph — so one frame yields one graph however deep the Python call tree is.
Calling a generator function (a generator expression, too) makes an
``InliningGeneratorInstructionTranslator`` that runs *lazily*: each ``next`` from its consumer
resumes the generator's bytecode until its next ``YIELD_VALUE``, as CPython would.

Instructions are read with the ``bytecode`` library (decoded, with the reachability and
liveness facts the graph breaks need, in ``bytecode_flow.py``); what differs between CPython
versions is in one table, ``bytecode_versions``, which the opcode handlers (``opcodes.py``)
consult.
"""

from __future__ import annotations

import linecache
import os
import types

from . import bytecode_versions as versions
from . import comprehension_graph_break as comprehension
from .break_verdict import BreakVerdicts, GraphBreak
from .bytecode_flow import _exception_edges, _instructions, _reachable, _reachable_reads
from .exc import (
    ObservedException,
    RestartAnalysis,
    SkipFrame,
    StepUnsupported,
    Unsupported,
    unimplemented,
)
from .exception_handling import ExceptionOpcodes, call_exception_class, in_try
from .opcodes import OpcodeHandlers
from .source import FreeVarSource, GetItemSource, GlobalSource, LocalSource
from .trace_rules import is_force_skipped
from .variables.builder import VariableBuilder
from .variables.constant import ConstantVariable
from .variables.functions import value_cell
from .variables.lists import (
    GeneratorVariable,
)
from .variables.misc import NullVariable

MAX_INSTRUCTIONS = 200_000
MAX_INLINE_DEPTH = 32
CO_GENERATOR = 0x20
_COROUTINE_FLAGS = 0x80 | 0x100 | 0x200  # coroutine, iterable coroutine, async generator


class InstructionTranslatorBase(ExceptionOpcodes, OpcodeHandlers):
    def __init__(self, code, f_globals, symbolic_locals, output, closure_cells, depth=0):
        self.code = code
        self.f_globals = f_globals
        self.symbolic_locals: dict = symbolic_locals
        self.output = output
        self.closure_cells: dict = closure_cells
        self.depth = depth
        self.insts, self.labels = _instructions(code)
        self.stack: list = []
        self.ip = 0
        self.kw_names: tuple = ()
        self.current_instr = None
        self.returned = False
        self.return_value = None
        self.paused = False  # a generator stopped at YIELD_VALUE

    # ---------------------------------------------------------------- the loop
    def run(self):
        while not self.returned and not self.paused:
            inst = self.next_instruction()
            try:
                self.step(inst)
            except Unsupported as e:
                e.add_location(self.current_user_line(), inst)
                raise
        return self.return_value

    def next_instruction(self):
        """Advance to the next instruction (counted against ``MAX_INSTRUCTIONS``)."""
        if self.ip >= len(self.insts):
            unimplemented("fell off the end of the bytecode")
        inst = self.insts[self.ip]
        self.ip += 1
        self.current_instr = inst
        self.output.instruction_count += 1
        if self.output.instruction_count > MAX_INSTRUCTIONS:
            unimplemented(f"more than {MAX_INSTRUCTIONS} instructions traced (an unbounded "
                          "loop?)")
        return inst

    def step(self, inst) -> None:
        """Run ``inst`` through its opcode handler (``opcodes.py``)."""
        handler = getattr(self, inst.name, None)
        if handler is None:
            unimplemented(f"opcode {inst.name} is not supported")
        try:
            handler(inst)
        except ObservedException as e:  # the user's code raised: unwind to its handler
            if not self.handle_observed(e):
                raise

    def current_user_line(self) -> str:
        inst = self.current_instr
        lineno = getattr(inst, "lineno", None) or self.code.co_firstlineno
        text = linecache.getline(self.code.co_filename, lineno).strip()
        return f'File "{self.code.co_filename}", line {lineno}, in {self.code.co_name}\n' \
               f"    {text}"

    def push(self, vt) -> None:
        self.stack.append(vt)

    def pop(self):
        return self.stack.pop()

    def popn(self, n: int) -> list:
        if n == 0:
            return []
        items = self.stack[-n:]
        del self.stack[-n:]
        return items

    def jump(self, inst) -> None:
        self.ip = self.labels[inst.arg]

    # ---------------------------------------------------------------- helpers
    def global_source(self, name: str):
        if self.f_globals is self.output.f_globals:
            return GlobalSource(name)
        return GetItemSource(GlobalSource(self.output.globals_dict_name(self.f_globals)), name)

    def load_global_value(self, name: str):
        written = self.output.side_effects.load_global(self.global_source(name))
        if written is not None:  # assigned earlier in this trace (replayed after the graph)
            if name not in self.f_globals:  # a global this frame creates: torch skips it
                raise SkipFrame(f"reads the global {name!r} it creates (not in the frame's "
                                "globals when tracing began): the frame runs eagerly, as torch "
                                "skips it")
            return written
        if name in self.f_globals:
            return VariableBuilder(self, self.global_source(name))(self.f_globals[name])
        import builtins

        builtins_dict = self.f_globals.get("__builtins__", builtins)
        if isinstance(builtins_dict, types.ModuleType):
            builtins_dict = builtins_dict.__dict__
        if name in builtins_dict:
            return VariableBuilder(self, self.global_source(name))(builtins_dict[name])
        unimplemented(f"NameError: name {name!r} is not defined")

    def call_function(self, fn, args, kwargs):
        if isinstance(fn, NullVariable):
            unimplemented("calling NULL")
        exc = call_exception_class(fn, list(args), dict(kwargs))
        if exc is not None:  # ValueError("bad"): an exception to raise (or not), traced
            return exc
        return fn.call_function(self, list(args), dict(kwargs))

    def inline_user_function_return(self, fn_vt, args, kwargs):
        code = fn_vt.get_code()
        if code.co_flags & _COROUTINE_FLAGS:
            unimplemented(f"coroutine or async generator function {code.co_name}")
        if self.depth >= MAX_INLINE_DEPTH:
            unimplemented("inlining recursion too deep")
        if is_force_skipped(code):  # trace_rules: run at a break, its callees still compiled
            name = getattr(getattr(fn_vt, "fn", None), "__qualname__", code.co_name)
            e = Unsupported(f"Attempted to call function marked as skipped: {name} (file is "
                            f"force-skipped: {os.path.basename(code.co_filename)})")
            e.inlined = True
            raise e
        bound = fn_vt.bind(self, args, kwargs)
        cls = InliningGeneratorInstructionTranslator if code.co_flags & CO_GENERATOR else \
            InliningInstructionTranslator
        child = cls(code, fn_vt.get_globals(), bound, self.output, fn_vt.closure_cells(self),
                    self.depth + 1)
        if code.co_flags & CO_GENERATOR:
            return GeneratorVariable(child)  # nothing runs until the first next()
        try:
            return child.run()
        except Unsupported as e:
            e.inlined = True  # the caller breaks *at the call* (after a restart)
            raise



class InstructionTranslator(BreakVerdicts, InstructionTranslatorBase):
    """The frame being compiled: its locals are the call's arguments, read lazily.

    Only this translator breaks graphs.  When an instruction raises ``Unsupported`` it asks
    ``_break_verdict`` what torch would do: break there (restore the stack it had before the
    instruction and stop with a ``GraphBreak``), fall back to the *last checkpoint* (torch's
    ``step_graph_break``: the latest instruction reached with an empty stack once the graph held
    two ops; a second trace stops there and the rest of the frame runs eagerly), or run the
    whole frame eagerly (a break inside a loop, ``fullgraph=True``).  A break inside a 3.12+
    inlined comprehension moves to the comprehension's start (``comprehension_graph_break``).
    A break raised from an inlined call restarts the analysis (``RestartAnalysis``): the second
    trace breaks at the call itself, so nothing the callee did is half-applied.
    """

    def __init__(self, code, f_locals: dict, f_globals: dict, closure: dict, output,
                 allow_breaks: bool = True, break_at: dict | None = None):
        super().__init__(code, f_globals, {}, output, {})
        self.f_locals = f_locals
        self.frame_closure = closure  # free var name -> cell contents
        self.allow_breaks = allow_breaks
        self.break_at = break_at or {}  # instruction index -> Unsupported (after a restart)
        self.graph_break: GraphBreak | None = None
        self.checkpoint: int | None = None  # the last empty-stack instruction after an op
        # loops: backward jumps on the normal path (3.12+ `with` handlers, reached only through
        # the exception table, jump back to the code after the block: not a loop)
        normal = _reachable(self.insts, self.labels, 0)
        self._loops = [(self.labels[i.arg], k) for k, i in enumerate(self.insts)
                       if "BACKWARD" in i.name and i.arg in self.labels and k in normal]

    def run(self):
        while not self.returned:
            index = self.ip
            if not self.stack and self.allow_breaks and self.output.count_calls() > 1 and \
                    not in_try(self.insts, _exception_edges(self.code), index):
                self.checkpoint = index  # torch's speculate(): an empty stack, 2+ ops done
            inst = self.next_instruction()
            stack, kw_names = list(self.stack), self.kw_names
            try:
                if index in self.break_at:
                    raise self.break_at[index]
                self.step(inst)
            except Unsupported as e:
                e.add_location(self.current_user_line(), inst)
                verdict = self._break_verdict(inst, index, stack, e)
                if verdict == "comprehension":  # break at its start (torch 2.13, 3.12+)
                    start = comprehension.find(self.insts, self.labels, self._loops, index)
                    comp = comprehension.analyze(self.insts, self.labels, start)
                    raise RestartAnalysis(start, comprehension.ComprehensionBreak(e, comp)) \
                        from None
                if verdict == "checkpoint" and self.checkpoint is not None:
                    raise RestartAnalysis(self.checkpoint, StepUnsupported(e)) from None
                if verdict != "break":
                    raise
                if getattr(e, "inlined", False) and index not in self.break_at:
                    raise RestartAnalysis(index, e) from None
                self.stack, self.kw_names = stack, kw_names
                self.graph_break = GraphBreak(index, inst, stack, kw_names, e)
                return None
        return self.return_value

    def live_locals(self, target: int | None = None) -> list[str]:
        """Names the continuation at instruction ``target`` needs: bound locals the code from
        there may read (a conservative liveness: any read reachable from ``target``), in
        ``co_varnames`` order.  Arguments never read so far are passed through untouched."""
        names = list(self.code.co_varnames) + [c for c in self.code.co_cellvars
                                               if c not in self.code.co_varnames]
        bound = [n for n in names if not n.startswith("___stack") and (
            n in self.symbolic_locals or n in self.f_locals)]
        if target is None:
            return bound
        read = _reachable_reads(self.insts, self.labels, target, _exception_edges(self.code))
        return [n for n in bound if n in read]

    def is_bound_argument(self, name: str) -> bool:
        return name in self.f_locals

    def materialize_local(self, name: str) -> None:
        # arguments become trackers (and guards) only when the code first reads them
        if name in self.f_locals:
            self.symbolic_locals[name] = VariableBuilder(self, LocalSource(name))(
                self.f_locals[name])
            return
        super().materialize_local(name)

    def _frame_cell(self, name: str) -> None:
        """The tracker of the frame's free variable ``name`` — the one of its cell, shared with
        a called function closing over the same cell (``value_cell``)."""
        if name in self.frame_closure and name not in self.closure_cells:
            self.closure_cells[name] = value_cell(
                self, self.__dict__.get("frame_cells", {}).get(name), name, FreeVarSource(name),
                self.frame_closure[name])

    def deref(self, name: str):
        self._frame_cell(name)
        return super().deref(name)

    def STORE_DEREF(self, inst):  # a free variable of the frame: a nonlocal side effect
        self._frame_cell(inst.arg.name)
        super().STORE_DEREF(inst)

    def push_closure_cell(self, name: str) -> None:
        self._frame_cell(name)
        if name not in self.closure_cells and name not in self.symbolic_locals and \
                self.is_bound_argument(name):  # a cell not assigned yet is fine to close over
            self.materialize_local(name)  # (3.11's walrus in a comprehension, a late def)
        super().push_closure_cell(name)


class InliningInstructionTranslator(InstructionTranslatorBase):
    """A callee being inlined into the caller's graph."""


class InliningGeneratorInstructionTranslator(InliningInstructionTranslator):
    """A generator being inlined: ``next_item`` runs it up to its next ``yield``."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.yielded = None

    def next_item(self):
        """The next yielded tracker, or ``None`` once the generator has returned."""
        if self.returned:
            return None
        self.paused = False
        self.run()
        item, self.yielded = self.yielded, None
        return None if self.returned else item

    def RETURN_GENERATOR(self, inst):
        self.push(ConstantVariable(None))  # what the first resume sees (popped at once)

    def YIELD_VALUE(self, inst):
        self.yielded = self.pop()
        self.push(ConstantVariable(None))  # the value `send` would pass back in
        self.paused = True

    # `yield from d`: GET_YIELD_FROM_ITER; LOAD_CONST None; SEND end; YIELD_VALUE; RESUME;
    # JUMP_BACKWARD_NO_INTERRUPT SEND; end: (3.12+ END_SEND)
    def GET_YIELD_FROM_ITER(self, inst):
        if not isinstance(self.stack[-1], GeneratorVariable):  # a generator is its own iter
            self.GET_ITER(inst)

    def SEND(self, inst):
        sent = self.pop()
        if not (isinstance(sent, ConstantVariable) and sent.value is None):
            unimplemented("send() of a value into a delegated generator")
        receiver = self.stack[-1]
        item = receiver.next_variable(self)
        if item is not None:
            self.push(item)  # YIELD_VALUE hands it on
            return
        ret = getattr(getattr(receiver, "gen_tx", None), "return_value", None)
        if not versions.this("SEND.keeps_receiver"):
            self.pop()
        self.push(ret if ret is not None else ConstantVariable(None))
        self.jump(inst)

    def END_SEND(self, inst):
        value = self.pop()
        self.pop()  # the exhausted delegate
        self.push(value)


