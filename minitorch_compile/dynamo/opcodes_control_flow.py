"""Opcode handlers for control flow: jumps, ``for`` loops and ``with`` blocks (``opcodes.py``,
part 3; torch keeps them in ``torch/_dynamo/symbolic_convert.py`` — ``generic_jump``,
``FOR_ITER``, ``SETUP_WITH`` — with context managers in ``torch/_dynamo/variables/ctx_manager.py``).

``ControlFlowHandlers`` is a mixin of ``OpcodeHandlers`` (and so of the interpreter).  The
tracer follows exactly one path through the bytecode, so every control decision is made *now*:

- a conditional jump asks the condition's tracker for ``bool_value()`` — known for constants,
  *unknown* for a tensor (the data-dependent ``if``: ``Unsupported``, so a graph break), except
  ``assert tensor_cond, "msg"``, which becomes an ``_assert_async`` node checked at run time;
- ``GET_ITER``/``FOR_ITER`` unroll a loop: the iterator is a ``ListIteratorVariable`` of the
  items known at compile time, and ``FOR_ITER`` takes the exit jump when it is exhausted (what
  the stack holds then differs by version: ``bytecode_versions``' ``END_FOR.pops``);
- ``BEFORE_WITH`` supports grad-mode context managers and user classes whose ``__enter__`` and
  ``__exit__`` are Python functions (both inlined).
"""

from __future__ import annotations

import types

from . import bytecode_versions as versions
from .exc import unimplemented
from .variables.constant import ConstantVariable
from .variables.ctx_manager import (
    GradModeVariable,
    UserContextExitVariable,
    WithExitFunctionVariable,
)
from .variables.dicts import ConstDictVariable
from .variables.functions import UserMethodVariable
from .variables.lists import BaseListVariable, ListIteratorVariable
from .variables.nn_module import NNModuleVariable
from .variables.tensor import TensorVariable
from .variables.user_defined import UserDefinedObjectVariable


class ControlFlowHandlers:
    # ================================================================ jumps
    def JUMP_FORWARD(self, inst):
        self.jump(inst)

    JUMP_BACKWARD = JUMP_BACKWARD_NO_INTERRUPT = JUMP_ABSOLUTE = JUMP_FORWARD

    def _jump_if(self, inst, truth: bool):
        value = self.pop()
        if truth and isinstance(value, TensorVariable) and self._traced_assert(value):
            self.jump(inst)  # `assert tensor_cond`: checked at run time by the graph
            return
        if value.bool_value(self) is truth:
            self.jump(inst)

    def _traced_assert(self, value) -> bool:
        """``assert cond, "msg"`` on a one-element tensor (torch traces it so): the jump is
        followed by ``LOAD_ASSERTION_ERROR [LOAD_CONST msg, CALL 0] RAISE_VARARGS 1``.  Add an
        ``_assert_async(cond, msg)`` node, which raises ``AssertionError(msg)`` when the graph
        runs, and go on as if the assertion held.  A message that is not a constant string, or
        a condition of several elements (eager raises "ambiguous"), is left to the break."""
        from ..ops.nn_ops import _assert_async

        names = [i.name for i in self.insts[self.ip:self.ip + 5]]
        if not names or names[0] != "LOAD_ASSERTION_ERROR":
            return False
        msg, rest = "", names[1:]
        if rest and rest[0] == "LOAD_CONST":
            msg, rest = self.insts[self.ip + 1].arg, [n for n in rest[1:] if n != "PRECALL"]
            if not isinstance(msg, str) or rest[:1] != ["CALL"]:
                return False
            rest = rest[1:]
        if rest[:1] != ["RAISE_VARARGS"]:
            return False
        try:
            if int(value.example_value.numel()) != 1:
                return False
        except TypeError:  # a symbolic element count
            return False
        self.output.call(self, "call_function", _assert_async, [value, ConstantVariable(msg)],
                         {})
        return True

    def POP_JUMP_FORWARD_IF_TRUE(self, inst):
        self._jump_if(inst, True)

    def POP_JUMP_FORWARD_IF_FALSE(self, inst):
        self._jump_if(inst, False)

    POP_JUMP_BACKWARD_IF_TRUE = POP_JUMP_IF_TRUE = POP_JUMP_FORWARD_IF_TRUE
    POP_JUMP_BACKWARD_IF_FALSE = POP_JUMP_IF_FALSE = POP_JUMP_FORWARD_IF_FALSE

    def _is_none(self, value) -> bool:
        if isinstance(value, ConstantVariable):
            return value.value is None
        return False

    def POP_JUMP_FORWARD_IF_NONE(self, inst):
        if self._is_none(self.pop()):
            self.jump(inst)

    def POP_JUMP_FORWARD_IF_NOT_NONE(self, inst):
        if not self._is_none(self.pop()):
            self.jump(inst)

    POP_JUMP_BACKWARD_IF_NONE = POP_JUMP_IF_NONE = POP_JUMP_FORWARD_IF_NONE
    POP_JUMP_BACKWARD_IF_NOT_NONE = POP_JUMP_IF_NOT_NONE = POP_JUMP_FORWARD_IF_NOT_NONE

    def JUMP_IF_FALSE_OR_POP(self, inst):
        if not self.stack[-1].bool_value(self):
            self.jump(inst)
        else:
            self.pop()

    def JUMP_IF_TRUE_OR_POP(self, inst):
        if self.stack[-1].bool_value(self):
            self.jump(inst)
        else:
            self.pop()

    # ================================================================ iteration
    def GET_ITER(self, inst):
        obj = self.pop()
        if isinstance(obj, ListIteratorVariable):
            self.push(obj)
            return
        if isinstance(obj, (BaseListVariable, ConstDictVariable, TensorVariable,
                            NNModuleVariable)) or obj.has_unpack_var_sequence(self):
            self.push(ListIteratorVariable(obj.unpack_var_sequence(self)))
            return
        unimplemented(f"iterating over {obj}")

    def FOR_ITER(self, inst):
        it = self.stack[-1]
        item = it.next_variable(self)
        if item is None:
            if versions.this("END_FOR.pops") is None:
                self.pop()  # 3.11: the iterator goes, the jump lands after the loop
            else:  # 3.12+: the jump lands on END_FOR, which pops what CPython's FOR_ITER does
                self.push(ConstantVariable(None))
            self.jump(inst)
        else:
            self.push(item)

    def END_FOR(self, inst):
        self.popn(versions.this("END_FOR.pops"))

    # ================================================================ with blocks
    def BEFORE_WITH(self, inst):
        ctx = self.pop()
        if isinstance(ctx, UserDefinedObjectVariable) and ctx.source is not None:
            # torch 2.13 enters only context managers made while tracing: one made outside
            # the compiled region (a global, an argument) is unsupported, and nothing can
            # resume at BEFORE_WITH (the last checkpoint, or the frame runs eagerly)
            unimplemented(f"`with` on {type(ctx.value).__name__}, a context manager created "
                          "outside the compiled region (torch: \"Unsupported context manager\")")
        if isinstance(ctx, UserDefinedObjectVariable) and all(
                isinstance(getattr(type(ctx.value), m, None), types.FunctionType)
                for m in ("__enter__", "__exit__")):  # a user class: both methods inlined
            self.push(UserContextExitVariable(ctx))
            self.push(UserMethodVariable(type(ctx.value).__enter__, ctx).call_function(
                self, [], {}))
            return
        if not isinstance(ctx, GradModeVariable):
            unimplemented(f"`with` on {ctx} (only grad-mode and user-class context managers "
                          "are supported)")
        self.push(WithExitFunctionVariable(ctx))
        self.push(ctx.call_method(self, "__enter__", [], {}))
