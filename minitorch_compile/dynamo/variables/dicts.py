"""Dicts with constant keys (``variables/dicts.py: ConstDictVariable``).

Keys are Python constants known at compile time (the ``DICT_KEYS`` guard pins them for input
dicts); values are trackers.  Like lists, a dict built while tracing may be mutated freely;
mutating an input dict is a side effect, replayed after the graph (``side_effects.py``).
"""

from __future__ import annotations

import types

from ..exc import raise_observed, unimplemented
from .base import VariableTracker
from .constant import ConstantVariable
from .lists import ListVariable, TupleVariable


class ConstDictVariable(VariableTracker):
    def __init__(self, items: dict, source=None, dict_cls: type = dict):
        super().__init__(source)
        self.items = dict(items)  # python key -> tracker
        self.mutated = False
        self.dict_cls = dict_cls  # dict, or collections.OrderedDict made while tracing

    def python_type(self) -> type:
        return self.dict_cls

    def as_python_constant(self):
        return {k: v.as_python_constant() for k, v in self.items.items()}

    def bool_value(self, tx) -> bool:
        return bool(self.items)

    def has_unpack_var_sequence(self, tx) -> bool:
        return True

    def unpack_var_sequence(self, tx) -> list:
        return [ConstantVariable(k) for k in self.items]

    default_factory = None

    def _mutate(self, tx) -> None:
        self.mutated = True
        tx.output.side_effects.mutation(self, "dict")

    def getitem(self, tx, key_vt):
        key = key_vt.as_python_constant()
        if key not in self.items and self.default_factory is not None:  # defaultdict
            self._mutate(tx)
            self.items[key] = self.default_factory.call_function(tx, [], {})
        if key not in self.items:
            raise_observed(KeyError, [key_vt])  # catchable by an `except` in traced code
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
        if name in ("keys", "values", "items"):
            return DictViewVariable(self, name)
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
            raise_observed(KeyError, [args[0]])
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
        if name == "move_to_end" and self.dict_cls is not dict:
            key = args[0].as_python_constant()
            last = kwargs.get("last", args[1] if len(args) > 1 else ConstantVariable(True))
            value = self.items.pop(key)
            self._mutate(tx)
            self.items = {key: value, **self.items} if not last.as_python_constant() else \
                {**self.items, key: value}
            return ConstantVariable(None)
        if name == "copy":
            return type(self)(dict(self.items), None, self.dict_cls) if self.default_factory \
                is None else DefaultDictVariable(self.default_factory, dict(self.items))
        unimplemented(f"dict.{name} is not supported")

    def reconstruct(self, codegen) -> None:
        if self.source is not None:  # mutations are replayed (side_effects.py)
            self.source.reconstruct(codegen)
            return
        if self.dict_cls is not dict:  # OrderedDict({...}) / defaultdict(factory, {...})
            codegen.load_global_object(f"___{self.dict_cls.__name__}", self.dict_cls)
            if self.default_factory is not None:
                codegen.reconstruct(self.default_factory)
        for k, v in self.items.items():
            codegen.load_const(k)
            codegen.reconstruct(v)
        codegen.build(dict, len(self.items))
        if self.dict_cls is not dict:
            codegen.call(1 + (self.default_factory is not None))

    def __repr__(self) -> str:
        return f"ConstDictVariable({list(self.items)})"


class DefaultDictVariable(ConstDictVariable):
    """``collections.defaultdict(factory)`` made while tracing: a missing key calls the
    factory (inlined) and stores its result, as ``__missing__`` does."""

    def __init__(self, factory, items: dict, source=None):
        import collections

        super().__init__(items, source, collections.defaultdict)
        self.default_factory = factory

    def var_getattr(self, tx, name):
        if name == "default_factory":
            return self.default_factory
        return super().var_getattr(tx, name)


class DictViewVariable(ListVariable):
    """``d.keys()`` / ``d.values()`` / ``d.items()`` (torch's ``DictKeysVariable`` /
    ``DictValuesVariable``): a *live* view — its items are read from the dict tracker each time,
    so a key stored after ``keys = d.keys()`` is in ``keys``, as in Python.  Iterable, not
    mutable; compared as Python compares views (keys and items as sets)."""

    def __init__(self, dict_vt: ConstDictVariable, kind: str):
        self.dict_vt, self.kind = dict_vt, kind
        super().__init__([])

    @property
    def items(self) -> list:
        d = self.dict_vt.items
        if self.kind == "keys":
            return [ConstantVariable(k) for k in d]
        if self.kind == "values":
            return list(d.values())
        return [TupleVariable([ConstantVariable(k), v]) for k, v in d.items()]

    @items.setter
    def items(self, value) -> None:  # the view has no items of its own
        pass

    def python_type(self) -> type:
        return type(getattr({}, self.kind)())

    def as_python_constant(self):
        if self.kind == "keys":  # the values may be tensors: only the keys are needed
            return dict.fromkeys(self.dict_vt.items).keys()
        return getattr(self.dict_vt.as_python_constant(), self.kind)()

    def reconstruct(self, codegen) -> None:  # d.keys() on the rebuilt dict
        def load():
            codegen.reconstruct(self.dict_vt)
            codegen.load_attr(self.kind)

        codegen.load_callable(load)
        codegen.call(0)

    def call_method(self, tx, name, args, kwargs):
        if name in ("append", "extend", "insert", "pop", "__setitem__", "reverse", "clear",
                    "remove", "sort", "__delitem__", "copy", "index", "count"):
            unimplemented(f"dict views have no method {name}")
        if name == "__contains__" and self.kind == "keys":
            return self.dict_vt.call_method(tx, name, args, kwargs)
        return super().call_method(tx, name, args, kwargs)


class DictFromKeysVariable(VariableTracker):
    """``dict.fromkeys(keys, value=None)`` (and ``OrderedDict``'s, ``defaultdict``'s — the
    latter with no factory): a new dict of constant keys, every one holding the same value."""

    def __init__(self, cls: type):
        super().__init__()
        self.cls = cls

    def call_function(self, tx, args, kwargs):
        import collections

        if not args or len(args) > 2 or set(kwargs) - {"value"}:
            unimplemented(f"TypeError: bad arguments to {self.cls.__name__}.fromkeys()")
        value = args[1] if len(args) == 2 else kwargs.get("value", ConstantVariable(None))
        keys = [k.as_python_constant() for k in args[0].unpack_var_sequence(tx)]
        items = dict.fromkeys(keys, value)
        if self.cls is collections.defaultdict:
            return DefaultDictVariable(ConstantVariable(None), items)
        return ConstDictVariable(items, dict_cls=self.cls)


class MappingProxyVariable(VariableTracker):
    """``Cls.__dict__``, a read-only ``mappingproxy`` (torch's ``MappingProxyVariable``): its
    keys are guarded (DICT_KEYS on ``type(L['a']).__dict__``), so ``"x" in type(a).__dict__``
    and ``len`` are constants; an item is read through its own source."""

    def __init__(self, mapping, source):
        super().__init__(source)
        self.mapping = mapping

    @classmethod
    def of_class(cls, tx, class_vt):
        from ..source import AttrSource, TypeSource

        base = class_vt.source
        if base is None and getattr(class_vt, "instance_source", None) is not None:
            base = TypeSource(class_vt.instance_source)
        if base is None:
            unimplemented("Cls.__dict__ of a class reached without a source (not guardable)")
        src = AttrSource(base, "__dict__")
        tx.output.guards.add("DICT_KEYS", src, value=class_vt.cls.__dict__)
        return cls(class_vt.cls.__dict__, src)

    def python_type(self) -> type:
        return types.MappingProxyType

    def call_method(self, tx, name, args, kwargs):
        from ..source import GetItemSource
        from .builder import VariableBuilder

        keys = [a.as_python_constant() for a in args if a.is_python_constant()]
        if kwargs or len(keys) != len(args):
            unimplemented(f"mappingproxy.{name} with arguments that are not constants")
        if name == "__contains__" and len(keys) == 1:
            return ConstantVariable(keys[0] in self.mapping)
        if name == "__len__" and not keys:
            return ConstantVariable(len(self.mapping))
        if name in ("__getitem__", "get") and keys and keys[0] in self.mapping:
            return VariableBuilder(tx, GetItemSource(self.source, keys[0]))(
                self.mapping[keys[0]])
        unimplemented(f"mappingproxy.{name}() is not traced")

