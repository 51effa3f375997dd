"""Sets made while tracing (``torch/_dynamo/variables/sets.py``).

A ``SetVariable`` holds Python constants (the only hashable values the tracer knows exactly);
``{1, 2}``, ``set(xs)``, ``s.add(3)``, ``a | b``, ``x in s`` and iterating all happen in the
tracer.  A frozenset is the same tracker, refusing mutation.  Sets read from the frame's inputs
are not traced as sets (they stay plain objects).
"""

from __future__ import annotations

from ..exc import unimplemented
from .base import VariableTracker
from .constant import ConstantVariable

_MUTATORS = {"add", "discard", "remove", "update", "clear", "pop", "difference_update",
             "intersection_update", "symmetric_difference_update"}


# in-place operators: ``s |= t`` is ``s.update(t)`` on the same object
INPLACE_METHODS = {"ior": "update", "iand": "intersection_update", "isub": "difference_update",
                   "ixor": "symmetric_difference_update"}


class SetVariable(VariableTracker):
    def __init__(self, values, frozen: bool = False, source=None):
        super().__init__(source)
        self.frozen = frozen
        try:
            self.values = set(values)
        except TypeError:
            unimplemented("a set of unhashable values")

    @classmethod
    def of(cls, tx, items, frozen: bool = False) -> SetVariable:
        if not all(i.is_python_constant() for i in items):
            unimplemented("a set of values not known at compile time (tensors?)")
        return cls([i.as_python_constant() for i in items], frozen)

    def python_type(self) -> type:
        return frozenset if self.frozen else set

    def as_python_constant(self):
        return frozenset(self.values) if self.frozen else set(self.values)

    def has_unpack_var_sequence(self, tx) -> bool:
        return True

    def unpack_var_sequence(self, tx) -> list:
        return [ConstantVariable(v) for v in self.values]

    def bool_value(self, tx) -> bool:
        return bool(self.values)

    def call_method(self, tx, name, args, kwargs):
        if name in _MUTATORS and self.frozen:
            unimplemented(f"frozenset has no method {name}")
        consts = []
        for a in args:
            if isinstance(a, VariableTracker) and a.has_unpack_var_sequence(tx) and \
                    not a.is_python_constant():
                consts.append(SetVariable.of(tx, a.unpack_var_sequence(tx)).values)
            else:
                consts.append(a.as_python_constant())
        if name == "__contains__":
            return ConstantVariable(consts[0] in self.values)
        if name == "__len__":
            return ConstantVariable(len(self.values))
        method = getattr(self.values, name, None)
        if method is None or name.startswith("__") and name not in (
                "__or__", "__and__", "__sub__", "__xor__", "__eq__", "__ne__", "__le__",
                "__lt__", "__ge__", "__gt__"):
            unimplemented(f"set.{name} is not supported")
        before = set(self.values)
        try:
            result = method(*consts)
        except KeyError as e:
            unimplemented(f"KeyError: {e} raised inside traced code")
        if name in _MUTATORS and self.values != before:
            tx.output.side_effects.mutation(self, "set")  # (a no-op for a set made here)
        if isinstance(result, (set, frozenset)):
            return SetVariable(result, self.frozen)
        return ConstantVariable(result)

    def inplace(self, tx, op_name: str, other) -> SetVariable:
        """``s |= other`` (and ``&=``, ``-=``, ``^=``): mutate this set, as Python does."""
        self.call_method(tx, INPLACE_METHODS[op_name], [other], {})
        return self

    def reconstruct(self, codegen) -> None:
        if self.source is not None:  # the caller's object (identity matters)
            self.source.reconstruct(codegen)
            return
        self.build_new(codegen)

    def build_new(self, codegen) -> None:
        """Build a new set (frozenset) with this tracker's items."""
        if self.frozen:
            codegen.load_const(frozenset(self.values))
            return
        from bytecode import Instr

        for v in self.values:
            codegen.load_const(v)
        codegen.append(Instr("BUILD_SET", len(self.values)))

    def __repr__(self) -> str:
        return f"SetVariable({self.values!r})"
