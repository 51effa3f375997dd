"""Where the root frame may break its graph, and what torch does when it cannot.

When an instruction of the frame being compiled raises ``Unsupported``, torch 2.13 takes one
of three courses (``InstructionTranslator.run`` asks ``BreakVerdicts._break_verdict``):

* **break** — the instruction is one the transformed code can run on its own (a call, a
  conditional jump, a store, an operator: ``_BREAKABLE``) and nothing live at that point needs
  rebuilding that cannot be: compile the graph so far, run the instruction in plain Python,
  continue in a resume function (``resume_execution.py``);
* **checkpoint** — nothing can resume *there* (another opcode, inside a ``try`` block or a user
  context manager's ``with`` block): compile up to the last instruction reached with an empty
  stack after two ops (torch's ``step_graph_break``) and run the rest of the frame eagerly, or
  the whole frame when there is no such checkpoint;
* **eager** — skip the frame: a break inside a loop (torch's ``has_backedge``), with a
  generator or an ``enumerate`` iterator live, under ``fullgraph=True``.

A break inside a 3.12+ inlined list or dict comprehension moves to the comprehension's start
(``comprehension_graph_break.py``); the comprehension then runs as one call, eagerly — also
inside a loop, where the resume function continues the loop (torch 2.13 does the same).

Mirrors ``InstructionTranslatorBase.step``/``step_graph_break`` and
``break_graph_if_unsupported`` in ``torch/_dynamo/symbolic_convert.py``.  ``BreakVerdicts`` is
a mixin of ``InstructionTranslator``.
"""

from __future__ import annotations

from dataclasses import dataclass

from bytecode import Label

from . import comprehension_graph_break as comprehension
from .bytecode_flow import _exception_edges
from .exc import ObservedException, SkipFrame, StepUnsupported, Unsupported
from .exception_handling import in_try
from .variables.ctx_manager import UserContextExitVariable
from .variables.lists import GeneratorVariable

# opcodes at which the root frame may break the graph: the instruction then runs in the
# transformed code, in plain Python, and a resume function continues after it
_BREAKABLE = {"CALL", "CALL_FUNCTION_EX", "POP_JUMP_FORWARD_IF_TRUE", "POP_JUMP_FORWARD_IF_FALSE",
              "POP_JUMP_BACKWARD_IF_TRUE", "POP_JUMP_BACKWARD_IF_FALSE", "POP_JUMP_IF_TRUE",
              "POP_JUMP_IF_FALSE", "JUMP_IF_TRUE_OR_POP", "JUMP_IF_FALSE_OR_POP",
              "STORE_ATTR", "STORE_GLOBAL", "STORE_SUBSCR", "FORMAT_VALUE", "BINARY_SUBSCR",
              "UNARY_NOT", "COMPARE_OP", "CONTAINS_OP", "BINARY_OP",
              # 3.12+ / 3.13 spellings of the same operations
              "CALL_KW", "BINARY_SLICE", "STORE_SLICE", "CONVERT_VALUE", "FORMAT_SIMPLE",
              "FORMAT_WITH_SPEC"}


@dataclass
class GraphBreak:
    """Where and why the root frame stopped tracing (``convert_frame`` finishes the job)."""

    index: int  # instruction index in this code object
    inst: object
    stack: list  # the symbolic stack *before* the instruction
    kw_names: tuple
    reason: Unsupported

    @property
    def at_checkpoint(self) -> bool:
        """The frame stops *before* ``inst`` and runs the rest of itself eagerly."""
        return isinstance(self.reason, StepUnsupported)


class BreakVerdicts:
    """The break decisions of ``InstructionTranslator`` (whose ``insts``, ``labels``,
    ``_loops``, ``symbolic_locals``, ``checkpoint`` and ``live_locals`` they read)."""

    def in_loop(self, index: int) -> bool:
        return any(start <= index <= end for start, end in self._loops)

    def has_backedge(self, index: int) -> bool:
        """torch's ``has_backedge``: reading on from the instruction after ``index``, is there
        a backward jump before a ``return``?  A break in a loop body that returns before the
        loop goes round (``if cond: return x``) is allowed — its resume functions continue the
        loop with the live iterator rebuilt — any other break inside a loop skips the frame."""
        for k in range(index + 1, len(self.insts)):
            ins = self.insts[k]
            if ins.name in ("RETURN_VALUE", "RETURN_CONST"):
                return False
            if isinstance(ins.arg, Label) and self.labels.get(ins.arg, k + 1) < index:
                return True
        return False

    def in_comprehension(self, index: int) -> bool:
        """Inside the loop of an inlined comprehension (3.12+: ``LOAD_FAST_AND_CLEAR`` saves
        its loop variable just before the loop starts)?"""
        return any(start <= index <= end and any(
            i.name == "LOAD_FAST_AND_CLEAR" for i in self.insts[max(0, start - 5):start])
            for start, end in self._loops)

    def _break_verdict(self, inst, index, stack, e: Unsupported) -> str:
        """torch's choice at an ``Unsupported``: ``"break"`` (compile the graph, run ``inst``,
        resume after it), ``"checkpoint"`` (nothing can resume here: compile up to the last
        checkpoint, run the rest eagerly — the frame runs eagerly if there is none) or
        ``"eager"`` (skip the frame).  Where only the place is to blame, ``e`` says so."""
        if isinstance(e, StepUnsupported):  # the second trace reached the checkpoint
            return "break"
        if not self.allow_breaks or isinstance(e, (ObservedException, SkipFrame)):
            return "eager"  # fullgraph, or torch skips the frame
        verdict, where = "checkpoint", None
        at_comprehension = isinstance(e, comprehension.ComprehensionBreak)
        if self.in_loop(index) and self.in_comprehension(index):
            start = comprehension.find(self.insts, self.labels, self._loops, index)
            comp = comprehension.analyze(self.insts, self.labels, start)
            if not isinstance(comp, str):
                return "comprehension"
            where = f"inside {comp}"  # (CPython 3.12+ runs it in the frame, PEP 709)
        elif inst.name not in _BREAKABLE and not at_comprehension:
            where = f"at {inst.name}"
        elif self.has_backedge(index) and not at_comprehension:
            verdict, where = "eager", "inside a loop"  # torch skips such a frame too
        elif any(isinstance(v, GeneratorVariable) for v in stack):
            verdict, where = "eager", "with a generator live on the stack"  # not rebuilt
        elif any(getattr(v, "made_by", None) == "enumerate" for v in
                 stack + [self.symbolic_locals[n] for n in self.live_locals(index)
                          if n in self.symbolic_locals]):  # torch cannot rebuild it
            verdict, where = "eager", "with an enumerate iterator live"
        elif in_try(self.insts, _exception_edges(self.code), index - at_comprehension):
            # the instruction would run outside its `try`: an `except` could not catch it
            where = "inside a `try` block"
        elif any(_method_of_new_object(v) for v in stack):  # torch: "Reconstruction failure"
            where = "with a method of an object made in the frame waiting on the stack"
        elif at_comprehension and len(comprehension.unbound_targets(self, e.comp)) > 1:
            where = "inside a comprehension assigning (`:=`) two locals not bound yet"
        elif any(isinstance(v, UserContextExitVariable) for v in stack):
            where = "inside a user context manager's `with` block"  # not left and re-entered
        else:  # grad-mode `with` blocks are entered again by the resume function (torch too)
            return "break"
        rest = "the frame runs eagerly" if verdict == "eager" or self.checkpoint is None else \
            "compiled up to the last checkpoint, the rest of the frame runs eagerly"
        e.reason += f" (a graph break {where} cannot be resumed from: {rest})"
        e.args = (e._message(),)
        return verdict


def _method_of_new_object(vt) -> bool:
    """``acc.add`` of an instance made while tracing, waiting for its arguments: torch 2.13
    cannot rebuild such a bound method, so it does not resume there (mtc could; it matches)."""
    import types

    from .variables.misc import GetAttrVariable
    from .variables.user_defined import NewObjectVariable

    obj = getattr(vt, "obj", None)
    if not isinstance(vt, GetAttrVariable) or not isinstance(obj, NewObjectVariable):
        return False
    return isinstance(getattr(type(obj.value), vt.name, None), types.FunctionType)
