"""``VariableTracker``: what the tracer knows about one Python value (``variables/base.py``).

The symbolic interpreter never holds real values on its stack — it holds trackers.  Each kind
of Python value has its own tracker class (constants, tensors, lists, functions, modules, ...)
that implements the operations the bytecode can apply to it:

* ``call_function(tx, args, kwargs)``, ``call_method(tx, name, args, kwargs)``,
  ``var_getattr(tx, name)``, ``unpack_var_sequence(tx)`` — each returns new trackers, adding
  graph nodes when tensors are involved;
* ``as_python_constant()`` — the value, when it is fully known at compile time;
* ``reconstruct(codegen)`` — emit bytecode that rebuilds the value in the transformed code.

A tracker may carry a ``source`` (``source.py``): where the value was read from.  Trackers
without a source were created during tracing.  Anything a tracker cannot do raises
``Unsupported`` with a reason — never a guess.
"""

from __future__ import annotations

from ..exc import NotConstant, unimplemented


class VariableTracker:
    def __init__(self, source=None):
        self.source = source

    # ------------------------------------------------------------------ facts
    def python_type(self) -> type:
        try:
            return type(self.as_python_constant())
        except NotImplementedError:
            unimplemented(f"{type(self).__name__} has no known Python type")

    def as_python_constant(self):
        raise NotConstant(f"{self} is not a Python constant")

    def is_python_constant(self) -> bool:
        try:
            self.as_python_constant()
            return True
        except NotImplementedError:
            return False

    def bool_value(self, tx) -> bool:
        """The truth value, for ``if``/``and``/``not`` on this value."""
        try:
            return bool(self.as_python_constant())
        except NotImplementedError:
            unimplemented(f"truth value of {self} is not known at compile time")

    # ------------------------------------------------------------------ operations
    def call_function(self, tx, args: list, kwargs: dict) -> VariableTracker:
        unimplemented(f"calling {self} is not supported")

    def call_method(self, tx, name: str, args: list, kwargs: dict) -> VariableTracker:
        if name == "__len__" and self.has_unpack_var_sequence(tx):
            from .constant import ConstantVariable

            return ConstantVariable(len(self.unpack_var_sequence(tx)))
        return self.var_getattr(tx, name).call_function(tx, args, kwargs)

    def var_getattr(self, tx, name: str) -> VariableTracker:
        if self.is_python_constant():
            from .builder import wrap_constant_attr

            return wrap_constant_attr(self, name)
        unimplemented(f"attribute {name!r} of {self} is not supported")

    def has_unpack_var_sequence(self, tx) -> bool:
        return False

    def unpack_var_sequence(self, tx) -> list:
        unimplemented(f"cannot iterate over {self}")

    def reconstruct(self, codegen) -> None:
        if self.source is not None:
            self.source.reconstruct(codegen)
            return
        if self.is_python_constant():  # a module, function or class made while tracing
            import types

            value = self.as_python_constant()
            if isinstance(value, (types.ModuleType, types.FunctionType, type,
                                  types.BuiltinFunctionType)):
                name = f"___obj_{getattr(value, '__name__', 'value')}_{id(value)}"
                codegen.load_global_object(name, value, push_null=False)
                return
        unimplemented(f"cannot rebuild {self} in the transformed code (it has no source)")

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"
