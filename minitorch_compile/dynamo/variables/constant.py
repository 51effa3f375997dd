"""Constants: numbers, strings, None, bools, dtypes, devices, slices, Ellipsis, enum members.

A ``ConstantVariable`` is a value fully known while tracing.  Operations on constants are
*folded*: ``2 * 3`` becomes ``6`` in the tracer and no graph node is made.  Constants read from
the frame's inputs are guarded (``EQUALS_MATCH``), so a different value recompiles.
"""

from __future__ import annotations

from ... import _dtype
from ..._device import device
from ..exc import unimplemented
from .base import VariableTracker

CONSTANT_TYPES = (int, float, bool, str, bytes, type(None), complex, type(Ellipsis),
                  _dtype.dtype, device, type(NotImplemented))


def is_constant_value(v) -> bool:
    if isinstance(v, CONSTANT_TYPES):
        return True
    if isinstance(v, slice):
        return all(is_constant_value(x) for x in (v.start, v.stop, v.step))
    return False


class ConstantVariable(VariableTracker):
    def __init__(self, value, source=None):
        super().__init__(source)
        self.value = value

    def as_python_constant(self):
        return self.value

    def python_type(self) -> type:
        return type(self.value)

    def call_method(self, tx, name, args, kwargs):
        if name == "join" and isinstance(self.value, str) and len(args) == 1 and not kwargs \
                and not args[0].is_python_constant() and args[0].has_unpack_var_sequence(tx):
            from .lists import TupleVariable  # "_".join(genexpr): consumes it all, as join

            args = [TupleVariable(args[0].unpack_var_sequence(tx))]
        consts = [a.as_python_constant() for a in args if a.is_python_constant()]
        if len(consts) == len(args) and all(v.is_python_constant() for v in kwargs.values()):
            method = getattr(self.value, name, None)
            if method is None:
                unimplemented(f"{type(self.value).__name__} has no method {name!r}")
            kw = {k: v.as_python_constant() for k, v in kwargs.items()}
            result = method(*consts, **kw)
            if isinstance(result, (list, tuple, set, frozenset, range)) and \
                    type(result) in (list, tuple, set, frozenset, range):
                from .builtin import _wrap_const  # "a.b".split("."): a list tracker

                return _wrap_const(result)
            return ConstantVariable(result)
        unimplemented(f"method {name} of constant {self.value!r} with non-constant arguments")

    def var_getattr(self, tx, name):
        if not hasattr(self.value, name):  # the user's error: eager mode raises it
            unimplemented(f"AttributeError: {type(self.value).__name__} object has no attribute "
                          f"{name!r}")
        attr = getattr(self.value, name)
        if callable(attr) and not isinstance(attr, type) and not is_constant_value(attr):
            from .misc import GetAttrVariable  # a method: calling it folds (call_method)

            return GetAttrVariable(self, name)
        return ConstantVariable(attr)

    def has_unpack_var_sequence(self, tx) -> bool:
        return isinstance(self.value, (str, bytes))

    def unpack_var_sequence(self, tx) -> list:
        if isinstance(self.value, (str, bytes)):  # `for ch in "abc"`, enumerate("ab")
            return [ConstantVariable(c) for c in self.value]
        return super().unpack_var_sequence(tx)

    def reconstruct(self, codegen) -> None:
        codegen.load_const(self.value)

    def __repr__(self) -> str:
        return f"ConstantVariable({self.value!r})"


class EnumVariable(ConstantVariable):
    """An ``enum`` member (torch's ``EnumVariable``): a constant guarded by identity; its
    ``.value``/``.name`` and comparisons fold.  It is rebuilt by reference, never by repr."""

    def reconstruct(self, codegen) -> None:
        if self.source is not None:
            self.source.reconstruct(codegen)
            return
        cls = type(self.value)
        codegen.load_global_object(f"___enum_{cls.__name__}_{self.value.name}_{id(self.value)}",
                                   self.value, push_null=False)
