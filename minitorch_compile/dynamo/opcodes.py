"""What each CPython opcode does to the symbolic state (``symbolic_convert.py``'s handlers).

``OpcodeHandlers`` is a mixin of ``InstructionTranslatorBase``: one method per opcode, named
after it (``LOAD_FAST``, ``BINARY_OP``, ``CALL`` ...) and found with ``getattr`` by the
interpreter loop, grouped by family below.  Each reads and writes the symbolic stack and locals
(``self.push``/``self.pop``/``self.symbolic_locals``), asks trackers to do the work
(``call_function``, ``var_getattr``, ...) and raises ``Unsupported`` — by name — for what it
cannot model.  Opcodes that only exist in some CPython versions are aliases or extra methods
here, so the rest of the tracer does not care which version it runs on; where an opcode's
*meaning* differs between 3.11, 3.12 and 3.13 (the NULL's place in a call, what ``END_FOR``
pops, LOAD_ATTR's method bit …) the handler asks ``bytecode_versions`` — the one table of
version differences — so it reads the same on every version.
"""

from __future__ import annotations

import operator

import bytecode

from . import bytecode_versions as versions
from .exc import unimplemented
from .opcodes_calls import BuildAndCallHandlers, list_to_tuple
from .opcodes_control_flow import ControlFlowHandlers
from .variables.builder import VariableBuilder
from .variables.builtin import BuiltinVariable
from .variables.constant import ConstantVariable
from .variables.dicts import ConstDictVariable
from .variables.functions import FrameCell, LocalCell
from .variables.lists import (
    SliceVariable,
    TupleVariable,
)
from .variables.misc import (
    ClosureCellVariable,
    GetAttrVariable,
    NullVariable,
    PythonModuleVariable,
    SavedCellVariable,
)
from .variables.tensor import TensorVariable

BINARY_OPS = {
    "ADD": operator.add, "SUBTRACT": operator.sub, "MULTIPLY": operator.mul,
    "TRUE_DIVIDE": operator.truediv, "FLOOR_DIVIDE": operator.floordiv,
    "REMAINDER": operator.mod, "POWER": operator.pow, "MATRIX_MULTIPLY": operator.matmul,
    "AND": operator.and_, "OR": operator.or_, "XOR": operator.xor, "LSHIFT": operator.lshift,
    "RSHIFT": operator.rshift, "INPLACE_ADD": operator.iadd, "INPLACE_SUBTRACT": operator.isub,
    "INPLACE_MULTIPLY": operator.imul, "INPLACE_TRUE_DIVIDE": operator.itruediv,
    "INPLACE_FLOOR_DIVIDE": operator.ifloordiv, "INPLACE_REMAINDER": operator.imod,
    "INPLACE_POWER": operator.ipow, "INPLACE_MATRIX_MULTIPLY": operator.imatmul,
    "INPLACE_AND": operator.iand, "INPLACE_OR": operator.ior, "INPLACE_XOR": operator.ixor,
    "INPLACE_LSHIFT": operator.ilshift, "INPLACE_RSHIFT": operator.irshift,
}
COMPARE_OPS = {"LT": operator.lt, "LE": operator.le, "EQ": operator.eq, "NE": operator.ne,
               "GT": operator.gt, "GE": operator.ge}


class OpcodeHandlers(ControlFlowHandlers, BuildAndCallHandlers):
    """The opcode handlers; ``InstructionTranslatorBase`` supplies the state they act on.
    Building containers, strings and calls are in ``opcodes_calls.py``; jumps, loops and
    ``with`` blocks in ``opcodes_control_flow.py``."""

    # ================================================================ stack and locals
    def NOP(self, inst):
        pass

    CACHE = COPY_FREE_VARS = PRECALL = NOP

    def RESUME(self, inst):
        self.resumed = True  # past the prologue

    def MAKE_CELL(self, inst):
        """The prologue's cells are implicit: a frame's cell variable lives in its symbolic
        locals, nested functions read it through a ``FrameCell``.  After the prologue (3.12+,
        an inlined comprehension whose loop variable a lambda captures) it makes a *fresh*
        cell, as CPython does: the lambdas of that comprehension share it."""
        if getattr(self, "resumed", False):
            self.closure_cells[inst.arg.name] = LocalCell(inst.arg.name)
            self.__dict__.get("plain_slots", set()).discard(inst.arg.name)

    def POP_TOP(self, inst):
        self.pop()

    def COPY(self, inst):
        self.push(self.stack[-inst.arg])

    def SWAP(self, inst):
        i = inst.arg
        self.stack[-1], self.stack[-i] = self.stack[-i], self.stack[-1]

    def PUSH_NULL(self, inst):
        self.push(NullVariable())

    def LOAD_CONST(self, inst):
        self.push(_constant(inst.arg))

    def LOAD_FAST(self, inst):
        self._load_fast(inst.arg)

    LOAD_FAST_CHECK = LOAD_FAST  # 3.12+: the checked form (we always check)

    def _holds_cell(self, name: str) -> bool:
        """Does the fast-locals slot ``name`` hold a cell right now?  A cell variable's slot
        does, except while a 3.12+ inlined comprehension reuses it for a plain loop variable
        (between its LOAD_FAST_AND_CLEAR and the STORE_FAST that restores it)."""
        return (name in self.code.co_cellvars or name in self.code.co_freevars) and \
            name not in self.__dict__.get("plain_slots", ())

    def _load_fast(self, name) -> None:
        name = getattr(name, "name", name)  # the bytecode library's CellVar/FreeVar, or a name
        if self._holds_cell(name):
            # 3.13 builds closures with LOAD_FAST of the cell (LOAD_CLOSURE is a pseudo-op)
            self.push_closure_cell(name)
            return
        if name not in self.symbolic_locals:
            self.materialize_local(name)
        self.push(self.symbolic_locals[name])

    def LOAD_FAST_AND_CLEAR(self, inst):
        """3.12+, around an inlined comprehension: save the loop variable's value (a NULL if it
        was unbound) and unbind it; a STORE_FAST after the loop puts it back."""
        name = getattr(inst.arg, "name", inst.arg)
        if name in self.code.co_cellvars:  # a cell variable's slot: save it, reuse it plainly
            plain = self.__dict__.setdefault("plain_slots", set())
            self.push(SavedCellVariable(name, self.closure_cells.pop(name, None),
                                        self.symbolic_locals.pop(name, None), name in plain))
            plain.add(name)
            return
        if name not in self.symbolic_locals and self.is_bound_argument(name):
            self.materialize_local(name)
        saved = self.symbolic_locals.pop(name, None)
        self.push(NullVariable() if saved is None else saved)

    def is_bound_argument(self, name: str) -> bool:
        return False  # the root frame's arguments are read lazily (symbolic_convert)

    def LOAD_FAST_LOAD_FAST(self, inst):  # 3.13: two LOAD_FASTs in one
        first, second = inst.arg
        self._load_fast(first)
        self._load_fast(second)

    def materialize_local(self, name: str) -> None:
        unimplemented(f"UnboundLocalError: local variable {name!r} referenced before assignment")

    def STORE_FAST(self, inst):
        self._store_fast(inst.arg, self.pop())

    def _store_fast(self, name, value) -> None:
        name = getattr(name, "name", name)
        if isinstance(value, SavedCellVariable):  # after a comprehension: the old cell back
            value.restore(self)
        elif isinstance(value, NullVariable):  # restoring an unbound comprehension variable
            self.symbolic_locals.pop(name, None)
        else:
            self.symbolic_locals[name] = value

    def STORE_FAST_STORE_FAST(self, inst):  # 3.13: STORE_FAST a; STORE_FAST b
        first, second = inst.arg
        self._store_fast(first, self.pop())
        self._store_fast(second, self.pop())

    def STORE_FAST_LOAD_FAST(self, inst):  # 3.13: STORE_FAST a; LOAD_FAST b
        store, load = inst.arg
        self._store_fast(store, self.pop())
        self._load_fast(load)

    def DELETE_FAST(self, inst):
        self.symbolic_locals.pop(inst.arg, None)

    def LOAD_GLOBAL(self, inst):
        push_null, name = inst.arg if isinstance(inst.arg, tuple) else (False, inst.arg)
        value = self.load_global_value(name)
        for vt in versions.callable_and_null(value, NullVariable()) if push_null else [value]:
            self.push(vt)

    def STORE_GLOBAL(self, inst):  # a side effect, replayed after the graph
        value = self.pop()
        self.output.side_effects.store_global(self.global_source(inst.arg), inst.arg, value)

    def _cell(self, name: str):
        if name in self.closure_cells:
            return self.closure_cells[name]
        return FrameCell(self, name)

    def deref(self, name: str):
        """The tracker in the cell ``name`` (a free variable, or a local other code captures)."""
        if name in self.closure_cells:
            return self.closure_cells[name].get()
        if name not in self.symbolic_locals:
            self.materialize_local(name)
        return self.symbolic_locals[name]

    def LOAD_DEREF(self, inst):
        self.push(self.deref(inst.arg.name))

    def zero_arg_super(self):
        """What ``super()`` with no arguments finds: the ``__class__`` cell of the method being
        run and its first argument, as CPython does."""
        code = self.code
        if "__class__" not in code.co_freevars or not code.co_argcount:
            unimplemented("super() without arguments outside a method")
        first = code.co_varnames[0]
        obj = self.deref(first) if first in code.co_cellvars else self.symbolic_locals.get(first)
        if obj is None:
            self.materialize_local(first)
            obj = self.symbolic_locals[first]
        return self.deref("__class__"), obj

    def STORE_DEREF(self, inst):
        name = inst.arg.name
        value = self.pop()
        if name in self.closure_cells:
            self.closure_cells[name].set(value)
        else:
            self.symbolic_locals[name] = value

    def LOAD_CLOSURE(self, inst):
        self.push_closure_cell(inst.arg.name)

    def push_closure_cell(self, name: str) -> None:
        self.push(ClosureCellVariable(self._cell(name)))

    # ================================================================ attributes
    def LOAD_ATTR(self, inst):
        is_method, name = versions.attr_arg(inst.arg)  # 3.12+: LOAD_ATTR is LOAD_METHOD too
        self._load_attr(self.pop(), name, is_method)

    def LOAD_METHOD(self, inst):  # 3.11
        self._load_attr(self.pop(), inst.arg, True)

    def _load_attr(self, obj, name: str, is_method: bool) -> None:
        """A plain attribute, or a method ready to be called: the bound method (our tracker of
        CPython's ``method, self`` pair) with a NULL beside it, where this version puts it."""
        if not is_method:
            self.push(obj.var_getattr(self, name))
            return
        if isinstance(obj, (PythonModuleVariable,)) or type(obj).__name__ == "TorchVariable":
            bound = obj.var_getattr(self, name)
        else:
            bound = GetAttrVariable(obj, name)
        for vt in versions.callable_and_null(bound, NullVariable()):
            self.push(vt)

    def LOAD_SUPER_ATTR(self, inst):
        """3.12+: ``super().name`` in one instruction, over ``super, __class__, self``."""
        is_method, _two_args, name = versions.super_attr_arg(inst.arg)
        obj, cls, global_super = self.pop(), self.pop(), self.pop()
        sup = global_super.call_function(self, [cls, obj], {})
        self._load_attr(sup, name, is_method)

    def LOAD_FROM_DICT_OR_DEREF(self, inst):
        """3.12+, class bodies: the name from the mapping on the stack, else the cell."""
        mapping = self.pop()
        name = inst.arg.name
        if isinstance(mapping, ConstDictVariable) and name in mapping.items:
            self.push(mapping.items[name])
        else:
            self.push(self.deref(name))

    def STORE_ATTR(self, inst):  # ``obj.name = value``: a side effect, replayed after the graph
        obj, value = self.pop(), self.pop()
        store = getattr(obj, "store_attr", None)
        if store is None:
            unimplemented(f"assigning attribute {inst.arg!r} of {obj} is not supported")
        store(self, inst.arg, value)

    def DELETE_ATTR(self, inst):  # ``del obj.name``: a side effect, replayed after the graph
        obj = self.pop()
        delete = getattr(obj, "delete_attr", None)
        if delete is None:
            unimplemented(f"deleting attribute {inst.arg!r} of {obj} is not supported")
        delete(self, inst.arg)

    def DELETE_SUBSCR(self, inst):
        key, obj = self.pop(), self.pop()
        if isinstance(obj, TensorVariable):
            unimplemented("del on a tensor item")
        obj.call_method(self, "__delitem__", [key], {})

    # ================================================================ subscripts and slices
    def BINARY_SUBSCR(self, inst):
        index = self.pop()
        obj = self.pop()
        self.push(BuiltinVariable(operator.getitem).call_function(self, [obj, index], {}))

    def STORE_SUBSCR(self, inst):
        key, obj, value = self.pop(), self.pop(), self.pop()
        if isinstance(obj, TensorVariable):
            obj.call_method(self, "__setitem__", [key, value], {})
        else:
            obj.call_method(self, "__setitem__", [key, value], {})

    def BINARY_SLICE(self, inst):  # 3.12+: container[start:end] without BUILD_SLICE
        end, start, obj = self.pop(), self.pop(), self.pop()
        index = SliceVariable(start, end, ConstantVariable(None))
        self.push(BuiltinVariable(operator.getitem).call_function(self, [obj, index], {}))

    def STORE_SLICE(self, inst):  # 3.12+: container[start:end] = value
        end, start, obj, value = self.pop(), self.pop(), self.pop(), self.pop()
        obj.call_method(self, "__setitem__", [SliceVariable(start, end, ConstantVariable(None)),
                                              value], {})

    def BUILD_SLICE(self, inst):
        parts = self.popn(inst.arg)
        if len(parts) == 2:
            parts.append(ConstantVariable(None))
        self.push(SliceVariable(*parts))

    # ================================================================ operators
    def BINARY_OP(self, inst):
        b, a = self.pop(), self.pop()
        fn = BINARY_OPS[bytecode.BinaryOp(int(inst.arg)).name]
        self.push(BuiltinVariable(fn).call_function(self, [a, b], {}))

    def COMPARE_OP(self, inst):
        b, a = self.pop(), self.pop()
        # 3.13's cast bit (COMPARE_OP before a jump) is left to the jump: it asks bool_value
        fn = COMPARE_OPS[bytecode.Compare(int(inst.arg) & 0xF).name]
        self.push(BuiltinVariable(fn).call_function(self, [a, b], {}))

    def IS_OP(self, inst):
        b, a = self.pop(), self.pop()
        fn = operator.is_not if inst.arg else operator.is_
        self.push(BuiltinVariable(fn).call_function(self, [a, b], {}))

    def CONTAINS_OP(self, inst):
        container, item = self.pop(), self.pop()
        result = BuiltinVariable(operator.contains).call_function(self, [container, item], {})
        if inst.arg:
            result = ConstantVariable(not result.as_python_constant())
        self.push(result)

    def _unary(self, fn):
        self.push(BuiltinVariable(fn).call_function(self, [self.pop()], {}))

    def UNARY_NEGATIVE(self, inst):
        self._unary(operator.neg)

    def UNARY_POSITIVE(self, inst):
        self._unary(operator.pos)

    def UNARY_INVERT(self, inst):
        self._unary(operator.invert)

    def UNARY_NOT(self, inst):
        self.push(ConstantVariable(not self.pop().bool_value(self)))

    def TO_BOOL(self, inst):
        """3.13: only ever in front of a conditional jump or UNARY_NOT, which ask the tracker
        for its truth themselves: the value stays as it is (a graph break at that jump emits
        TO_BOOL again, see ``resume_execution``)."""

    def CALL_INTRINSIC_1(self, inst):
        """3.12+: a unary helper named by the argument (``INTRINSIC_LIST_TO_TUPLE`` …)."""
        kind = bytecode.Intrinsic1Op(int(inst.arg)).name
        handler = _INTRINSIC_1.get(kind)
        if handler is None:
            unimplemented(f"CALL_INTRINSIC_1 {kind} is not supported")
        handler(self)

    def CALL_INTRINSIC_2(self, inst):
        kind = bytecode.Intrinsic2Op(int(inst.arg)).name
        unimplemented(f"CALL_INTRINSIC_2 {kind} is not supported")

    # ================================================================ imports
    def IMPORT_NAME(self, inst):
        fromlist, level = self.pop().as_python_constant(), self.pop().as_python_constant()
        module = __import__(inst.arg, self.f_globals, None, fromlist, level)
        self.push(VariableBuilder(self, None)(module))

    def IMPORT_FROM(self, inst):
        module = self.stack[-1]
        self.push(module.var_getattr(self, inst.arg))

    # ================================================================ unsupported, by name
    # (RAISE_VARARGS and the handler opcodes: exception_handling.ExceptionOpcodes)
    def LOAD_ASSERTION_ERROR(self, inst):
        unimplemented("a failing assert inside traced code")


# CALL_INTRINSIC_1's helpers the tracer models (3.12+); the rest are unsupported by name
_INTRINSIC_1 = {
    "INTRINSIC_LIST_TO_TUPLE": list_to_tuple,  # 3.11's LIST_TO_TUPLE: f(*[a, *b])
    "INTRINSIC_UNARY_POSITIVE": lambda tx: tx._unary(operator.pos),  # 3.11's UNARY_POSITIVE
}


def _constant(value):
    """A constant's tracker: a tuple (one the compiler folded, ``((1, 2), (1, 3))``) is a
    ``TupleVariable`` all the way down, so it unpacks, iterates and compares like one built."""
    if isinstance(value, tuple):
        return TupleVariable([_constant(v) for v in value])
    return ConstantVariable(value)
