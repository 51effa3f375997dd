"""Dicts with constant keys (``variables/dicts.py: ConstDictVariable``).

Keys are Python constants known at compile time (the ``DICT_KEYS`` guard pins them for input
dicts); values are trackers.  Like lists, a dict built while tracing may be mutated freely;
mutating an input dict is a side effect, replayed after the graph (``side_effects.py``).
"""

from __future__ import annotations

from ..exc import unimplemented
from .base import VariableTracker
from .constant import ConstantVariable
from .lists import ListVariable, TupleVariable


class ConstDictVariable(VariableTracker):
    def __init__(self, items: dict, source=None):
        super().__init__(source)
        self.items = dict(items)  # python key -> tracker
        self.mutated = False

    def python_type(self) -> type:
        return dict

    def as_python_constant(self):
        return {k: v.as_python_constant() for k, v in self.items.items()}

    def bool_value(self, tx) -> bool:
        return bool(self.items)

    def has_unpack_var_sequence(self, tx) -> bool:
        return True

    def unpack_var_sequence(self, tx) -> list:
        return [ConstantVariable(k) for k in self.items]

    def _mutate(self, tx) -> None:
        self.mutated = True
        tx.output.side_effects.mutation(self, "dict")

    def getitem(self, tx, key_vt):
        key = key_vt.as_python_constant()
        if key not in self.items:
            unimplemented(f"KeyError: {key!r} raised inside traced code")
        return self.items[key]

    def call_method(self, tx, name, args, kwargs):
        if name == "__getitem__":
            return self.getitem(tx, args[0])
        if name == "__len__":
            return ConstantVariable(len(self.items))
        if name == "__contains__":
            return ConstantVariable(args[0].as_python_constant() in self.items)
        if name == "get":
            key = args[0].as_python_constant()
            default = args[1] if len(args) > 1 else ConstantVariable(None)
            return self.items.get(key, default)
        if name == "keys":
            return DictViewVariable([ConstantVariable(k) for k in self.items])
        if name == "values":
            return DictViewVariable(list(self.items.values()))
        if name == "items":
            return DictViewVariable([TupleVariable([ConstantVariable(k), v])
                                     for k, v in self.items.items()])
        if name == "__setitem__":
            self._mutate(tx)
            self.items[args[0].as_python_constant()] = args[1]
            return ConstantVariable(None)
        if name == "update":
            self._mutate(tx)
            other = args[0] if args else None
            if isinstance(other, ConstDictVariable):
                self.items.update(other.items)
            elif other is not None:  # pairs
                for pair in other.unpack_var_sequence(tx):
                    k, v = pair.unpack_var_sequence(tx)
                    self.items[k.as_python_constant()] = v
            for k, v in kwargs.items():
                self.items[k] = v
            return ConstantVariable(None)
        if name == "pop":
            self._mutate(tx)
            key = args[0].as_python_constant()
            if key in self.items:
                return self.items.pop(key)
            if len(args) > 1:
                return args[1]
            unimplemented(f"KeyError: {key!r} raised inside traced code")
        if name == "setdefault":
            key = args[0].as_python_constant()
            if key not in self.items:
                self._mutate(tx)
                self.items[key] = args[1] if len(args) > 1 else ConstantVariable(None)
            return self.items[key]
        if name == "__delitem__":
            key = args[0].as_python_constant()
            if key not in self.items:
                unimplemented(f"KeyError: {key!r} raised inside traced code")
            self._mutate(tx)
            del self.items[key]
            return ConstantVariable(None)
        if name == "clear":
            self._mutate(tx)
            self.items.clear()
            return ConstantVariable(None)
        if name == "popitem":
            if not self.items:
                unimplemented("KeyError: popitem(): dictionary is empty, inside traced code")
            self._mutate(tx)
            k, v = self.items.popitem()
            return TupleVariable([ConstantVariable(k), v])
        if name == "copy":
            return ConstDictVariable(dict(self.items))
        unimplemented(f"dict.{name} is not supported")

    def reconstruct(self, codegen) -> None:
        if self.source is not None:  # mutations are replayed (side_effects.py)
            self.source.reconstruct(codegen)
            return
        for k, v in self.items.items():
            codegen.load_const(k)
            codegen.reconstruct(v)
        codegen.build(dict, len(self.items))

    def __repr__(self) -> str:
        return f"ConstDictVariable({list(self.items)})"


class DictViewVariable(ListVariable):
    """``d.keys()`` / ``d.values()`` / ``d.items()``: iterable, not mutable."""

    def call_method(self, tx, name, args, kwargs):
        if name in ("append", "extend", "insert", "pop", "__setitem__", "reverse", "clear",
                    "remove", "sort", "__delitem__"):
            unimplemented(f"dict views have no method {name}")
        return super().call_method(tx, name, args, kwargs)
