"""Immutable sequences: tuples, ``Size``, namedtuples, ranges and slices
(``torch/_dynamo/variables/lists.py``: ``TupleVariable``, ``SizeVariable``,
``NamedTupleVariable``, ``RangeVariable``, ``SliceVariable``).

A tuple is a ``BaseListVariable`` that cannot be mutated: no side effects to record, so it only
adds how it is rebuilt after the graph — a ``Size`` as ``Size((...))``, a namedtuple by calling
its class, a range or a slice as a constant.  The mutable sequences (lists, deques) and the
iterators are in ``lists.py``.
"""

from __future__ import annotations

from ..._size import Size
from ..exc import unimplemented
from .base import VariableTracker
from .constant import ConstantVariable
from .lists import BaseListVariable


class TupleVariable(BaseListVariable):
    python_cls = tuple


class SizeVariable(TupleVariable):
    """``x.shape``: a tuple of ints that stays a ``Size`` under slicing and ``+``."""

    python_cls = Size

    def reconstruct(self, codegen) -> None:
        codegen.load_global_object("___Size", Size)
        for item in self.items:
            codegen.reconstruct(item)
        codegen.build(tuple, len(self.items))
        codegen.call(1)


class NamedTupleVariable(TupleVariable):
    """A namedtuple (``values, indices = x.max(dim)``): items plus field names."""

    def __init__(self, items, tuple_cls, source=None):
        super().__init__(items, source)
        self.tuple_cls = tuple_cls

    def python_type(self) -> type:
        return self.tuple_cls

    def new_like(self, items):
        return TupleVariable(items)

    def as_python_constant(self):
        return self.tuple_cls(*[v.as_python_constant() for v in self.items])

    def var_getattr(self, tx, name):
        fields = self.tuple_cls._fields
        if name in fields:
            return self.items[fields.index(name)]
        if name == "_fields":
            return TupleVariable([ConstantVariable(f) for f in fields])
        unimplemented(f"{self.tuple_cls.__name__} has no field {name!r}")

    def call_method(self, tx, name, args, kwargs):
        fields = self.tuple_cls._fields
        if name == "_replace" and not args and set(kwargs) <= set(fields):
            return NamedTupleVariable([kwargs.get(f, v) for f, v in zip(fields, self.items)],
                                      self.tuple_cls)
        if name == "_asdict" and not args and not kwargs:
            from .dicts import ConstDictVariable

            return ConstDictVariable(dict(zip(fields, self.items)))
        return super().call_method(tx, name, args, kwargs)

    def reconstruct(self, codegen) -> None:
        codegen.load_global_object(f"___{self.tuple_cls.__name__}", self.tuple_cls)
        for item in self.items:
            codegen.reconstruct(item)
        codegen.call(len(self.items))


class RangeVariable(BaseListVariable):
    python_cls = range

    def __init__(self, r: range, source=None):
        super().__init__([ConstantVariable(i) for i in r], source)
        self.range = r

    def as_python_constant(self):
        return self.range

    def getitem(self, tx, index_vt):
        index = index_vt.as_python_constant()
        if isinstance(index, slice):
            return RangeVariable(self.range[index])
        return ConstantVariable(self.range[index])

    def reconstruct(self, codegen) -> None:
        codegen.load_const(self.range)


class SliceVariable(VariableTracker):
    def __init__(self, start, stop, step):
        super().__init__()
        self.parts = (start, stop, step)

    def as_python_constant(self):
        return slice(*(p.as_python_constant() for p in self.parts))

    def python_type(self) -> type:
        return slice

    def reconstruct(self, codegen) -> None:
        codegen.load_const(self.as_python_constant())
