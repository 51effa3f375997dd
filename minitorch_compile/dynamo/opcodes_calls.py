"""Opcode handlers that build containers and strings, and make calls (``opcodes.py``, part 2;
torch keeps them in ``torch/_dynamo/symbolic_convert.py``).

``BuildAndCallHandlers`` is a mixin of ``OpcodeHandlers`` (and so of the interpreter): the
``BUILD_*`` family, f-strings (3.11/3.12 ``FORMAT_VALUE``; 3.13 ``CONVERT_VALUE``,
``FORMAT_SIMPLE``, ``FORMAT_WITH_SPEC``), unpacking, and calls — ``CALL`` (with 3.11/3.12's
``KW_NAMES`` or 3.13's ``CALL_KW``), ``CALL_FUNCTION_EX``, ``MAKE_FUNCTION`` (3.13:
``SET_FUNCTION_ATTRIBUTE``) and returns.  Where the versions disagree — on which side of the
callable the NULL sits — the handlers ask ``bytecode_versions``.
"""

from __future__ import annotations

from . import bytecode_versions as versions
from .exc import unimplemented
from .variables.constant import ConstantVariable
from .variables.dicts import ConstDictVariable
from .variables.functions import NestedUserFunctionVariable
from .variables.lists import ListVariable, TupleVariable
from .variables.misc import ClosureCellVariable, NullVariable
from .variables.tensor import TensorVariable


class BuildAndCallHandlers:
    # ================================================================ building containers
    def BUILD_TUPLE(self, inst):
        self.push(TupleVariable(self.popn(inst.arg)))

    def BUILD_LIST(self, inst):
        self.push(ListVariable(self.popn(inst.arg)))

    def BUILD_SET(self, inst):
        from .variables.sets import SetVariable

        self.push(SetVariable.of(self, self.popn(inst.arg)))

    def SET_ADD(self, inst):  # a set comprehension
        value = self.pop()
        self.stack[-inst.arg].call_method(self, "add", [value], {})

    def SET_UPDATE(self, inst):  # {*a, *b}
        value = self.pop()
        self.stack[-inst.arg].call_method(self, "update", [value], {})

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

    def FORMAT_VALUE(self, inst):  # 3.11/3.12: conversion | has-spec flags
        flags = int(inst.arg)
        spec = self.pop().as_python_constant() if flags & 0x04 else ""
        v = self._constant_to_format(self.pop())
        self.push(ConstantVariable(format(_CONVERSIONS[flags & 0x03](v), spec)))

    def _constant_to_format(self, value):
        if isinstance(value, TensorVariable) or not value.is_python_constant():
            unimplemented(f"formatting {value} into a string needs its value")
        return value.as_python_constant()

    def CONVERT_VALUE(self, inst):  # 3.13: the !s / !r / !a of an f-string
        v = self._constant_to_format(self.pop())
        self.push(ConstantVariable(_CONVERSIONS[int(inst.arg)](v)))

    def FORMAT_SIMPLE(self, inst):  # 3.13: format(value, "")
        self.push(ConstantVariable(format(self._constant_to_format(self.pop()), "")))

    def FORMAT_WITH_SPEC(self, inst):  # 3.13: format(value, spec)
        spec = self.pop().as_python_constant()
        self.push(ConstantVariable(format(self._constant_to_format(self.pop()), spec)))

    def LIST_APPEND(self, inst):
        value = self.pop()
        self.stack[-inst.arg].call_method(self, "append", [value], {})

    def LIST_EXTEND(self, inst):
        value = self.pop()
        self.stack[-inst.arg].call_method(self, "extend", [value], {})

    def LIST_TO_TUPLE(self, inst):  # 3.11 (3.12+: CALL_INTRINSIC_1 INTRINSIC_LIST_TO_TUPLE)
        list_to_tuple(self)

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
        """``callable, self-or-NULL, args`` (3.13) or ``NULL-or-callable, callable-or-self,
        args`` (3.11/3.12): ``versions.split_callable`` reads the pair either way."""
        args = self.popn(inst.arg)
        second, first = self.pop(), self.pop()
        fn, self_vt = versions.split_callable(first, second,
                                              lambda v: isinstance(v, NullVariable))
        if self_vt is not None:
            args = [self_vt] + args
        kwargs = {}
        if self.kw_names:
            n = len(self.kw_names)
            kwargs = dict(zip(self.kw_names, args[-n:]))
            args = args[:-n]
            self.kw_names = ()
        self.push(self.call_function(fn, args, kwargs))

    def CALL_KW(self, inst):  # 3.13: the keyword names are a tuple on top of the arguments
        self.kw_names = tuple(self.pop().as_python_constant())
        self.CALL(inst)

    def CALL_FUNCTION_EX(self, inst):
        kwargs_vt = self.pop() if inst.arg & 1 else None
        args_vt = self.pop()
        second, first = self.pop(), self.pop()  # the callable and its NULL, in either order
        fn, _ = versions.split_callable(first, second, lambda v: isinstance(v, NullVariable))
        args = args_vt.unpack_var_sequence(self)
        kwargs = {}
        if kwargs_vt is not None:
            if not isinstance(kwargs_vt, ConstDictVariable):
                unimplemented("**kwargs that is not a dict")
            kwargs = dict(kwargs_vt.items)
        self.push(self.call_function(fn, args, kwargs))

    def MAKE_FUNCTION(self, inst):
        """3.11/3.12: the flags in the argument say which of closure, annotations, kwdefaults,
        defaults lie below the code object (popped in that order).  3.13: a bare function;
        each SET_FUNCTION_ATTRIBUTE adds one of them."""
        code = self.pop().as_python_constant()
        fn = NestedUserFunctionVariable(code, code.co_qualname, self.f_globals)
        if versions.this("MAKE_FUNCTION.flags"):
            for flag in (0x08, 0x04, 0x02, 0x01):
                if inst.arg & flag:
                    self._set_function_attribute(fn, flag, self.pop())
        self.push(fn)

    def SET_FUNCTION_ATTRIBUTE(self, inst):  # 3.13: [value, function] -> function
        fn, value = self.pop(), self.pop()
        self._set_function_attribute(fn, int(inst.arg), value)
        self.push(fn)

    def _set_function_attribute(self, fn, flag: int, value) -> None:
        if flag == 0x08:  # closure: a tuple of cells, in co_freevars order
            for name, cell_vt in zip(fn.code.co_freevars, value.items):
                if not isinstance(cell_vt, ClosureCellVariable):
                    unimplemented("closure entry that is not a cell")
                fn.closure[name] = cell_vt.cell
        elif flag == 0x02:
            fn.kwdefaults = value
        elif flag == 0x01:
            fn.defaults = value
        # 0x04: annotations, unused while tracing

    def RETURN_VALUE(self, inst):
        self.return_value = self.pop()
        self.returned = True

    def RETURN_CONST(self, inst):  # 3.12+: LOAD_CONST; RETURN_VALUE in one
        self.LOAD_CONST(inst)
        self.RETURN_VALUE(inst)


# f-string conversions (FORMAT_VALUE's low flag bits, CONVERT_VALUE's argument)
_CONVERSIONS = {0: lambda v: v, 1: str, 2: repr, 3: ascii}


def list_to_tuple(tx) -> None:
    tx.push(TupleVariable(tx.pop().unpack_var_sequence(tx)))
