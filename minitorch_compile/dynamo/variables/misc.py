"""Everything else the tracer meets: NULL, bound attributes not yet called, closure cells,
Python modules, ``super()`` and C functions (``variables/misc.py``).  User classes and objects
are in ``user_defined.py``, context managers in ``ctx_manager.py``.
"""

from __future__ import annotations

import types

from ..exc import unimplemented
from ..source import AttrSource
from .base import VariableTracker


class NullVariable(VariableTracker):
    """The NULL CPython 3.11 pushes below a callable (``PUSH_NULL``, ``LOAD_GLOBAL``)."""

    def reconstruct(self, codegen) -> None:
        from bytecode import Instr

        codegen.append(Instr("PUSH_NULL"))

    def __repr__(self) -> str:
        return "NULL"


class SavedCellVariable(VariableTracker):
    """What ``LOAD_FAST_AND_CLEAR`` of a cell variable saves (3.12+): the cell the name had
    before the comprehension — the STORE_FAST after the loop puts it back."""

    def __init__(self, name, cell, local, plain: bool):
        super().__init__()
        self.name, self.cell, self.local, self.plain = name, cell, local, plain

    def restore(self, tx) -> None:
        for table, value in ((tx.closure_cells, self.cell), (tx.symbolic_locals, self.local)):
            if value is None:
                table.pop(self.name, None)
            else:
                table[self.name] = value
        plain = tx.__dict__.setdefault("plain_slots", set())
        if self.plain:
            plain.add(self.name)
        else:
            plain.discard(self.name)

    def reconstruct(self, codegen) -> None:
        unimplemented("a saved comprehension cell cannot be rebuilt in bytecode")


class GetAttrVariable(VariableTracker):
    """``obj.name`` not yet called: calling it is ``obj.call_method(name, ...)``."""

    def __init__(self, obj, name: str):
        super().__init__()
        self.obj, self.name = obj, name

    def call_function(self, tx, args, kwargs):
        return self.obj.call_method(tx, self.name, list(args), kwargs)

    def reconstruct(self, codegen) -> None:
        codegen.reconstruct(self.obj)
        codegen.load_attr(self.name)

    def __repr__(self) -> str:
        return f"GetAttrVariable({self.obj!r}, {self.name!r})"


class ClosureCellVariable(VariableTracker):
    """What ``LOAD_CLOSURE name`` pushes: a reference to the frame's cell ``name``."""

    def __init__(self, cell):
        super().__init__()
        self.cell = cell


class PythonModuleVariable(VariableTracker):
    def __init__(self, module: types.ModuleType, source=None):
        super().__init__(source)
        self.module = module

    def python_type(self) -> type:
        return types.ModuleType

    def as_python_constant(self):
        return self.module

    def var_getattr(self, tx, name):
        from .builder import VariableBuilder

        if not hasattr(self.module, name):
            unimplemented(f"module {self.module.__name__} has no attribute {name!r}")
        src = AttrSource(self.source, name) if self.source is not None else None
        return VariableBuilder(tx, src)(getattr(self.module, name))

    def __repr__(self) -> str:
        return f"PythonModuleVariable({self.module.__name__})"


class SuperVariable(VariableTracker):
    """``super()`` / ``super(Cls, obj)``: attributes are looked up in ``type(obj).__mro__``
    after ``Cls``; methods found there are bound to ``obj`` and inlined."""

    def __init__(self, cls: type, obj):
        super().__init__()
        self.cls, self.obj = cls, obj

    def var_getattr(self, tx, name):
        from .builder import VariableBuilder
        from .functions import UserMethodVariable
        from .user_defined import UserDefinedClassVariable

        # super(Cls, a_class) — zero-argument super() in a classmethod: the class's own MRO,
        # functions found there unbound, classmethods bound to that class
        of_class = isinstance(self.obj, UserDefinedClassVariable)
        owner = self.obj.cls if of_class else self.obj.python_type()
        mro = owner.__mro__
        if self.cls not in mro:
            unimplemented(f"super({self.cls.__qualname__}, obj): obj is not an instance")
        for klass in mro[mro.index(self.cls) + 1:]:
            if name in vars(klass):
                attr = vars(klass)[name]
                break
        else:
            unimplemented(f"super() object has no attribute {name!r}")
        if isinstance(attr, types.FunctionType):
            return VariableBuilder(tx, None)(attr) if of_class else \
                UserMethodVariable(attr, self.obj)
        if isinstance(attr, staticmethod):
            return VariableBuilder(tx, None)(attr.__func__)
        if isinstance(attr, classmethod):
            return UserMethodVariable(attr.__func__, self.obj if of_class else
                                      UserDefinedClassVariable(owner))
        unimplemented(f"super().{name} is a {type(attr).__name__}, not a Python method")

    def __repr__(self) -> str:
        return f"SuperVariable({self.cls.__qualname__})"


class CFunctionVariable(VariableTracker):
    """A C function read from a module or global (``time.perf_counter``): loading it is fine,
    calling it cannot be traced — the graph breaks at the call and Python runs it."""

    def __init__(self, fn, source=None):
        super().__init__(source)
        self.fn = fn

    def python_type(self) -> type:
        return type(self.fn)

    def as_python_constant(self):
        return self.fn

    def call_function(self, tx, args, kwargs):
        unimplemented(f"calling the C function {getattr(self.fn, '__qualname__', self.fn)} "
                      "cannot be traced")

    def __repr__(self) -> str:
        return f"CFunctionVariable({getattr(self.fn, '__qualname__', self.fn)})"
