"""What each CPython 3.11 opcode does to the symbolic state (``symbolic_convert.py``'s handlers).

``OpcodeHandlers`` is a mixin of ``InstructionTranslatorBase``: one method per opcode, named
after it (``LOAD_FAST``, ``BINARY_OP``, ``CALL`` ...) and found with ``getattr`` by the
interpreter loop, grouped by family below.  Each reads and writes the symbolic stack and locals
(``self.push``/``self.pop``/``self.symbolic_locals``), asks trackers to do the work
(``call_function``, ``var_getattr``, ...) and raises ``Unsupported`` — by name — for what it
cannot model.  Opcodes that only exist in some CPython versions are aliases or extra methods
here, so the rest of the tracer does not care which version it runs on.
"""

from __future__ import annotations

import operator

import bytecode

from .exc import unimplemented
from .variables.builder import VariableBuilder
from .variables.builtin import BuiltinVariable
from .variables.constant import ConstantVariable
from .variables.dicts import ConstDictVariable
from .variables.functions import FrameCell, NestedUserFunctionVariable
from .variables.lists import (
    BaseListVariable,
    ListIteratorVariable,
    ListVariable,
    SliceVariable,
    TupleVariable,
)
from .variables.misc import (
    ClosureCellVariable,
    GetAttrVariable,
    GradModeVariable,
    NullVariable,
    PythonModuleVariable,
    WithExitFunctionVariable,
)
from .variables.nn_module import NNModuleVariable
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


class OpcodeHandlers:
    """The opcode handlers; ``InstructionTranslatorBase`` supplies the state they act on."""

    # ================================================================ stack and locals
    def NOP(self, inst):
        pass

    RESUME = CACHE = MAKE_CELL = COPY_FREE_VARS = PRECALL = NOP

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
        value = inst.arg
        if isinstance(value, tuple):
            self.push(TupleVariable([ConstantVariable(v) for v in value]))
        else:
            self.push(ConstantVariable(value))

    def LOAD_FAST(self, inst):
        name = inst.arg
        if name not in self.symbolic_locals:
            self.materialize_local(name)
        self.push(self.symbolic_locals[name])

    def materialize_local(self, name: str) -> None:
        unimplemented(f"UnboundLocalError: local variable {name!r} referenced before assignment")

    def STORE_FAST(self, inst):
        self.symbolic_locals[inst.arg] = self.pop()

    def DELETE_FAST(self, inst):
        self.symbolic_locals.pop(inst.arg, None)

    def LOAD_GLOBAL(self, inst):
        push_null, name = inst.arg if isinstance(inst.arg, tuple) else (False, inst.arg)
        if push_null:
            self.push(NullVariable())
        self.push(self.load_global_value(name))

    def STORE_GLOBAL(self, inst):
        unimplemented(f"assigning the global {inst.arg!r} (a side effect) is not supported")

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
        self.push(ClosureCellVariable(self._cell(inst.arg.name)))

    # ================================================================ attributes
    def LOAD_ATTR(self, inst):
        obj = self.pop()
        self.push(obj.var_getattr(self, inst.arg))

    def LOAD_METHOD(self, inst):
        obj = self.pop()
        self.push(NullVariable())
        if isinstance(obj, (PythonModuleVariable,)) or type(obj).__name__ == "TorchVariable":
            self.push(obj.var_getattr(self, inst.arg))
        else:
            self.push(GetAttrVariable(obj, inst.arg))

    def STORE_ATTR(self, inst):
        obj = self.pop()
        unimplemented(f"assigning attribute {inst.arg!r} of {obj} (a side effect) is not "
                      "supported")

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
        fn = COMPARE_OPS[bytecode.Compare(int(inst.arg)).name]
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

    # ================================================================ building containers
    def BUILD_TUPLE(self, inst):
        self.push(TupleVariable(self.popn(inst.arg)))

    def BUILD_LIST(self, inst):
        self.push(ListVariable(self.popn(inst.arg)))

    def BUILD_MAP(self, inst):
        items = self.popn(2 * inst.arg)
        self.push(ConstDictVariable({items[i].as_python_constant(): items[i + 1]
                                     for i in range(0, len(items), 2)}))

    def BUILD_CONST_KEY_MAP(self, inst):
        keys = self.pop().as_python_constant()
        values = self.popn(inst.arg)
        self.push(ConstDictVariable(dict(zip(keys, values))))

    def BUILD_STRING(self, inst):
        parts = self.popn(inst.arg)
        self.push(ConstantVariable("".join(p.as_python_constant() for p in parts)))

    def FORMAT_VALUE(self, inst):
        flags = inst.arg
        spec = self.pop().as_python_constant() if flags & 0x04 else ""
        value = self.pop()
        if isinstance(value, TensorVariable) or not value.is_python_constant():
            unimplemented(f"formatting {value} into a string needs its value")
        v = value.as_python_constant()
        conv = flags & 0x03
        v = {0: v, 1: str(v), 2: repr(v), 3: ascii(v)}[conv]
        self.push(ConstantVariable(format(v, spec)))

    def LIST_APPEND(self, inst):
        value = self.pop()
        self.stack[-inst.arg].call_method(self, "append", [value], {})

    def LIST_EXTEND(self, inst):
        value = self.pop()
        self.stack[-inst.arg].call_method(self, "extend", [value], {})

    def LIST_TO_TUPLE(self, inst):
        self.push(TupleVariable(self.pop().unpack_var_sequence(self)))

    def MAP_ADD(self, inst):
        value, key = self.pop(), self.pop()
        self.stack[-inst.arg].call_method(self, "__setitem__", [key, value], {})

    def DICT_UPDATE(self, inst):
        other = self.pop()
        self.stack[-inst.arg].call_method(self, "update", [other], {})

    DICT_MERGE = DICT_UPDATE

    def UNPACK_SEQUENCE(self, inst):
        seq = self.pop()
        items = seq.unpack_var_sequence(self)
        if len(items) != inst.arg:
            unimplemented(f"ValueError: cannot unpack {len(items)} values into {inst.arg}")
        for item in reversed(items):
            self.push(item)

    def UNPACK_EX(self, inst):
        before, after = inst.arg & 0xFF, inst.arg >> 8
        items = self.pop().unpack_var_sequence(self)
        if len(items) < before + after:
            unimplemented("ValueError: not enough values to unpack")
        middle = ListVariable(items[before:len(items) - after])
        for item in reversed(items[:before] + [middle] + items[len(items) - after:]):
            self.push(item)

    # ================================================================ calls
    def KW_NAMES(self, inst):
        self.kw_names = inst.arg if isinstance(inst.arg, tuple) else \
            self.code.co_consts[inst.arg]

    def CALL(self, inst):
        args = self.popn(inst.arg)
        second, first = self.pop(), self.pop()
        if isinstance(first, NullVariable):
            fn = second
        else:
            fn, args = first, [second] + args
        kwargs = {}
        if self.kw_names:
            n = len(self.kw_names)
            kwargs = dict(zip(self.kw_names, args[-n:]))
            args = args[:-n]
            self.kw_names = ()
        self.push(self.call_function(fn, args, kwargs))

    def CALL_FUNCTION_EX(self, inst):
        kwargs_vt = self.pop() if inst.arg & 1 else None
        args_vt = self.pop()
        fn = self.pop()
        if self.stack and isinstance(self.stack[-1], NullVariable):
            self.pop()
        args = args_vt.unpack_var_sequence(self)
        kwargs = {}
        if kwargs_vt is not None:
            if not isinstance(kwargs_vt, ConstDictVariable):
                unimplemented("**kwargs that is not a dict")
            kwargs = dict(kwargs_vt.items)
        self.push(self.call_function(fn, args, kwargs))

    def MAKE_FUNCTION(self, inst):
        flags = inst.arg
        code = self.pop().as_python_constant()
        closure = self.pop() if flags & 0x08 else None
        if flags & 0x04:
            self.pop()  # annotations
        kwdefaults = self.pop() if flags & 0x02 else None
        defaults = self.pop() if flags & 0x01 else None
        cells = {}
        if closure is not None:
            for name, cell_vt in zip(code.co_freevars, closure.items):
                if not isinstance(cell_vt, ClosureCellVariable):
                    unimplemented("closure entry that is not a cell")
                cells[name] = cell_vt.cell
        self.push(NestedUserFunctionVariable(code, code.co_qualname, self.f_globals, defaults,
                                             kwdefaults, cells))

    def RETURN_VALUE(self, inst):
        self.return_value = self.pop()
        self.returned = True

    # ================================================================ jumps
    def JUMP_FORWARD(self, inst):
        self.jump(inst)

    JUMP_BACKWARD = JUMP_BACKWARD_NO_INTERRUPT = JUMP_ABSOLUTE = JUMP_FORWARD

    def _jump_if(self, inst, truth: bool):
        value = self.pop()
        if value.bool_value(self) is truth:
            self.jump(inst)

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
            self.pop()
            self.jump(inst)
        else:
            self.push(item)

    # ================================================================ with blocks
    def BEFORE_WITH(self, inst):
        ctx = self.pop()
        if not isinstance(ctx, GradModeVariable):
            unimplemented(f"`with` on {ctx} (only grad-mode context managers are supported)")
        self.push(WithExitFunctionVariable(ctx))
        self.push(ctx.call_method(self, "__enter__", [], {}))

    # ================================================================ imports
    def IMPORT_NAME(self, inst):
        fromlist, level = self.pop().as_python_constant(), self.pop().as_python_constant()
        module = __import__(inst.arg, self.f_globals, None, fromlist, level)
        self.push(VariableBuilder(self, None)(module))

    def IMPORT_FROM(self, inst):
        module = self.stack[-1]
        self.push(module.var_getattr(self, inst.arg))

    # ================================================================ unsupported, by name
    def RAISE_VARARGS(self, inst):
        unimplemented("raise statement inside traced code")

    def LOAD_ASSERTION_ERROR(self, inst):
        unimplemented("a failing assert inside traced code")
