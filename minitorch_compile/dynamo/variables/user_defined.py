"""User-defined classes and their instances (``variables/user_defined.py``).

A class read from the frame is guarded by identity; calling it makes a namedtuple, one of the
collections ``_new_collection`` knows, or — for a *plain* class (``_plain_class``) — a
``NewObjectVariable`` whose ``__init__`` is inlined.  An object read from the frame is a
``UserDefinedObjectVariable``: its attribute reads are traced (properties inlined) and guarded,
its attribute writes and deletions are side effects replayed after the graph.  Arithmetic on
user objects runs their Python ``__add__``/``__radd__``/... inlined (``binary_dunder``).
"""

from __future__ import annotations

import abc
import collections
import enum
import inspect
import operator
import types

from ..exc import unimplemented
from ..source import AttrSource
from .base import VariableTracker
from .constant import ConstantVariable


class UserDefinedClassVariable(VariableTracker):
    def __init__(self, cls: type, source=None):
        super().__init__(source)
        self.cls = cls

    def python_type(self) -> type:
        return type

    def as_python_constant(self):
        return self.cls

    def var_getattr(self, tx, name):
        from .builder import VariableBuilder

        src = AttrSource(self.source, name) if self.source is not None else None
        if name == "__dict__":
            from .dicts import MappingProxyVariable

            return MappingProxyVariable.of_class(tx, self)
        if name == "fromkeys" and self.cls in (collections.OrderedDict, collections.defaultdict):
            from .dicts import DictFromKeysVariable

            return DictFromKeysVariable(self.cls)
        value = getattr(self.cls, name)
        if isinstance(value, (staticmethod, classmethod)):
            value = getattr(self.cls, name)
        return VariableBuilder(tx, src)(value)

    def has_unpack_var_sequence(self, tx) -> bool:
        return isinstance(self.cls, enum.EnumMeta)

    def unpack_var_sequence(self, tx) -> list:
        """``for c in Color``: the members, in definition order (the class is pinned by its
        ID_MATCH, and its members cannot change)."""
        if not isinstance(self.cls, enum.EnumMeta):
            return super().unpack_var_sequence(tx)
        from .constant import EnumVariable

        return [EnumVariable(m) for m in self.cls]

    def call_function(self, tx, args, kwargs):
        from ..._device import device

        cls = self.cls
        if cls is device and all(a.is_python_constant() for a in [*args, *kwargs.values()]):
            return ConstantVariable(device(*[a.as_python_constant() for a in args],
                                           **{k: v.as_python_constant()
                                              for k, v in kwargs.items()}))
        if issubclass(cls, tuple) and hasattr(cls, "_fields"):  # a namedtuple: Point(x, y)
            from .builder import VariableBuilder
            from .lists import NamedTupleVariable

            fields = cls._fields
            values = dict(zip(fields, args))
            if len(args) > len(fields) or set(kwargs) - set(fields) or set(kwargs) & set(values):
                unimplemented(f"TypeError: bad arguments to {cls.__qualname__}()")
            values.update(kwargs)
            for name, default in cls._field_defaults.items():
                values.setdefault(name, VariableBuilder(tx, None)(default))
            if len(values) != len(fields):
                unimplemented(f"TypeError: {cls.__qualname__}() is missing arguments")
            return NamedTupleVariable([values[f] for f in fields], cls)
        made = _new_collection(tx, cls, args, kwargs)
        if made is not None:
            return made
        if cls.__module__ in _STATELESS_MODULE_FILES:  # nn.Softmax(dim=-1)(x), as torch
            return _new_stateless_module(cls, args, kwargs)
        if _plain_class(cls):  # a new object: built empty, its __init__ inlined
            obj = NewObjectVariable(object.__new__(cls))
            init = cls.__init__
            if isinstance(init, types.FunctionType):
                from .functions import UserMethodVariable

                UserMethodVariable(init, obj).call_function(tx, list(args), dict(kwargs))
            elif args or kwargs:
                unimplemented(f"TypeError: {cls.__qualname__}() takes no arguments")
            return obj
        unimplemented(f"creating an instance of {cls.__qualname__} inside compiled code is "
                      "not supported")

    def __repr__(self) -> str:
        return f"UserDefinedClassVariable({self.cls.__qualname__})"


def _new_collection(tx, cls, args, kwargs):
    """``OrderedDict(...)``, ``defaultdict(factory, ...)``, ``deque(items)`` made while
    tracing: dict and list trackers that rebuild as their class."""
    import collections

    from .dicts import ConstDictVariable, DefaultDictVariable
    from .lists import DequeVariable

    if cls is collections.OrderedDict:
        from .builtin import BuiltinVariable

        d = BuiltinVariable(dict).call_function(tx, list(args), dict(kwargs))
        return ConstDictVariable(d.items, None, collections.OrderedDict)
    if cls is collections.defaultdict:
        from .builtin import BuiltinVariable

        factory = args[0] if args else ConstantVariable(None)
        d = BuiltinVariable(dict).call_function(tx, list(args[1:]), dict(kwargs))
        if factory.is_python_constant() and factory.as_python_constant() is None:
            return ConstDictVariable(d.items, None, collections.defaultdict)  # no factory
        return DefaultDictVariable(factory, d.items)
    if cls is collections.deque:
        kwargs = dict(kwargs)
        maxlen = kwargs.pop("maxlen", args[1] if len(args) > 1 else ConstantVariable(None))
        if kwargs or len(args) > 2 or not maxlen.is_python_constant():
            unimplemented("deque() with arguments other than (iterable, maxlen)")
        limit = maxlen.as_python_constant()
        if limit is not None and (type(limit) is not int or limit < 0):
            unimplemented("deque(maxlen=...) that is not a non-negative int (eager raises)")
        return DequeVariable(args[0].unpack_var_sequence(tx) if args else [], maxlen=limit)
    return None


# mtc's modules without parameters or buffers, made by the program inside compiled code
_STATELESS_MODULE_FILES = {"minitorch_compile.nn.modules.activation",
                           "minitorch_compile.nn.modules.flatten",
                           "minitorch_compile.nn.modules.dropout",
                           "minitorch_compile.nn.modules.loss"}  # nn.CrossEntropyLoss()(y, t)


def _new_stateless_module(cls, args, kwargs):
    """``nn.Softmax(dim=-1)`` called in the traced code: made now from constant arguments (its
    ``__init__`` only stores them) and inlined when called, as torch inlines it; it cannot
    leave the frame (a break or a return with it is unsupported)."""
    from .nn_module import NNModuleVariable

    if not all(a.is_python_constant() for a in [*args, *kwargs.values()]):
        unimplemented(f"{cls.__name__}(...) with arguments that are not constants")
    try:
        module = cls(*[a.as_python_constant() for a in args],
                     **{k: v.as_python_constant() for k, v in kwargs.items()})
    except Exception as e:  # the user's error: eager mode raises it
        unimplemented(f"{type(e).__name__} making {cls.__name__}: {e}")
    if any(v is not None for table in (module._parameters, module._buffers, module._modules)
           for v in table.values()):  # (a loss's `weight` buffer registered as None is fine)
        unimplemented(f"making {cls.__name__} (it has parameters) inside compiled code")

    class NewModuleVariable(NNModuleVariable):
        def reconstruct(self, codegen) -> None:
            unimplemented(f"a {cls.__name__} made inside compiled code cannot leave it")
    return NewModuleVariable(module)


def _plain_class(cls: type) -> bool:
    """A class whose instances can be made while tracing: created by ``object.__new__``,
    attributes set by plain ``object.__setattr__`` into a ``__dict__``, ``__init__`` in Python
    (or none) — e.g. a plain class or a (non-frozen) dataclass."""
    from ...nn import Module

    return type(cls) in (type, abc.ABCMeta) and cls.__new__ is object.__new__ and \
        cls.__setattr__ is object.__setattr__ and "__slots__" not in vars(cls) and \
        not issubclass(cls, (Module, BaseException)) and \
        not getattr(cls, "__abstractmethods__", None) and \
        (cls.__init__ is object.__init__ or isinstance(cls.__init__, types.FunctionType))


class UserDefinedObjectVariable(VariableTracker):
    """A plain Python object read from the frame: attribute reads are traced and guarded."""

    def __init__(self, value, source=None):
        super().__init__(source)
        self.value = value

    def python_type(self) -> type:
        return type(self.value)

    def store_attr(self, tx, name, value) -> None:
        """``obj.name = value``: recorded, replayed after the graph (plain ``__setattr__``
        and a plain instance attribute only — anything else may run user code)."""
        self._check_plain_attribute(name, "assigning", "__setattr__")
        tx.output.side_effects.store_attr(self, name, value)

    def _check_plain_attribute(self, name: str, doing: str, hook: str) -> None:
        cls = type(self.value)
        cls_attr = inspect.getattr_static(cls, name, None)
        if getattr(cls, hook) is not getattr(object, hook) or \
                not hasattr(self.value, "__dict__") or hasattr(cls_attr, "__set__") or \
                hasattr(cls_attr, "__delete__"):
            unimplemented(f"{doing} attribute {name!r} of a {cls.__name__} (custom {hook}, a "
                          "property or slots)")

    def delete_attr(self, tx, name) -> None:
        """``del obj.name`` of an instance attribute (checked as ``store_attr``)."""
        from ..side_effects import DELETED

        self._check_plain_attribute(name, "deleting", "__delattr__")
        written = tx.output.side_effects.load_attr(self, name)
        if written is DELETED or (written is None and name not in self.value.__dict__):
            unimplemented(f"AttributeError: deleting attribute {name!r} it does not have")
        if written is None and self.source is not None:  # a later call's object must have it
            tx.output.guards.add("HASATTR", AttrSource(self.source, name), value=True)
        tx.output.side_effects.delete_attr(self, name)

    def var_getattr(self, tx, name):
        from ..side_effects import DELETED
        from .builder import VariableBuilder
        from .functions import UserFunctionVariable, UserMethodVariable

        written = tx.output.side_effects.load_attr(self, name)
        if written is DELETED:  # (the class's attribute, or an AttributeError: eagerly)
            unimplemented(f"reading attribute {name!r} deleted earlier in the trace")
        if written is not None:  # assigned earlier in this trace
            return written
        src = AttrSource(self.source, name) if self.source is not None else None
        # the class attribute as stored (getattr would turn a staticmethod into a function)
        cls_attr = inspect.getattr_static(type(self.value), name, None)
        if isinstance(cls_attr, property):
            return UserFunctionVariable(cls_attr.fget).call_function(tx, [self], {})
        if name in getattr(self.value, "__dict__", {}):
            return VariableBuilder(tx, src)(self.value.__dict__[name])
        if isinstance(cls_attr, types.FunctionType):
            if src is not None:  # the class's method could be patched, or shadowed later
                tx.output.guards.add("ID_MATCH", AttrSource(src, "__func__"), value=cls_attr)
            return UserMethodVariable(cls_attr, self)
        if isinstance(cls_attr, staticmethod):
            return VariableBuilder(tx, src)(cls_attr.__func__)
        if isinstance(cls_attr, classmethod):
            return UserMethodVariable(cls_attr.__func__, UserDefinedClassVariable(
                type(self.value)))
        if isinstance(cls_attr, types.MemberDescriptorType) and \
                not isinstance(self, NewObjectVariable):  # a __slots__ entry: its value
            try:
                value = getattr(self.value, name)
            except AttributeError:
                unimplemented(f"unset slot {name!r} of a {type(self.value).__name__}")
            return VariableBuilder(tx, src)(value)
        if hasattr(cls_attr, "__get__") and not callable(cls_attr):  # any other descriptor:
            unimplemented(f"attribute {name!r} of {type(self.value).__name__} objects is a "
                          "descriptor (its __get__ is not traced)")  # (never the raw object)
        if cls_attr is not None and not callable(cls_attr):
            return VariableBuilder(tx, src)(cls_attr)
        if hasattr(self.value, name):
            unimplemented(f"attribute {name!r} of {type(self.value).__name__} objects "
                          "(C method or descriptor) is not supported")
        unimplemented(f"{type(self.value).__name__} object has no attribute {name!r}")

    def call_function(self, tx, args, kwargs):
        call = getattr(type(self.value), "__call__", None)
        if isinstance(call, types.FunctionType):
            from .functions import UserMethodVariable

            return UserMethodVariable(call, self).call_function(tx, args, kwargs)
        unimplemented(f"calling a {type(self.value).__name__} object is not supported")

    def __repr__(self) -> str:
        return f"UserDefinedObjectVariable({type(self.value).__name__})"


class NewObjectVariable(UserDefinedObjectVariable):
    """An instance of a plain user class created while tracing.  ``value`` is a real, empty
    instance (made by ``object.__new__``, no user code run) used only for its class; every
    attribute its ``__init__`` and the program set is a recorded store (``side_effects``).  If
    the object escapes the frame, the transformed code builds it with ``object.__new__(cls)``
    and replays those stores on it."""

    def reconstruct(self, codegen) -> None:
        cls = type(self.value)
        codegen.load_global_object("___object_new", object.__new__)
        codegen.load_global_object(f"___cls_{cls.__name__}_{id(cls)}", cls, push_null=False)
        codegen.call(1)

    def __repr__(self) -> str:
        return f"NewObjectVariable({type(self.value).__qualname__})"


# operator -> the stem of its methods: __add__, __radd__, __iadd__
_DUNDERS = {operator.add: "add", operator.sub: "sub", operator.mul: "mul",
            operator.truediv: "truediv", operator.floordiv: "floordiv", operator.mod: "mod",
            operator.pow: "pow", operator.matmul: "matmul", operator.and_: "and",
            operator.or_: "or", operator.xor: "xor", operator.lshift: "lshift",
            operator.rshift: "rshift"}


def binary_dunder(tx, fn, plain, a, b):
    """``a <op> b`` where an operand is a user object: CPython's order — ``a.__iop__`` (for
    ``a <op>= b``), ``a.__op__(b)``, then ``b.__rop__(a)``, each skipped when missing or when
    it returns ``NotImplemented`` — with each Python method inlined.  None when no operand is a
    user object.  (A right operand whose class subclasses the left's goes first in CPython:
    not modelled, so unsupported.)"""
    from .functions import UserMethodVariable

    user_a, user_b = (isinstance(v, UserDefinedObjectVariable) for v in (a, b))
    if not (user_a or user_b) or plain not in _DUNDERS:
        return None
    if user_a and user_b and type(b.value) is not type(a.value) and \
            issubclass(type(b.value), type(a.value)):
        unimplemented(f"{plain.__name__} of a {type(a.value).__name__} and an instance of its "
                      "subclass (the reflected method would go first)")
    op = _DUNDERS[plain]
    tries = ([(a, f"__i{op}__", b)] if fn is not plain else []) + \
        [(a, f"__{op}__", b), (b, f"__r{op}__", a)]
    for obj, name, other in tries:
        if not isinstance(obj, UserDefinedObjectVariable):
            continue
        method = inspect.getattr_static(type(obj.value), name, None)
        if method is None:
            continue
        if not isinstance(method, types.FunctionType):
            unimplemented(f"{type(obj.value).__name__}.{name} is not a Python function")
        out = UserMethodVariable(method, obj).call_function(tx, [other], {})
        if not (out.is_python_constant() and out.as_python_constant() is NotImplemented):
            return out
    unimplemented(f"TypeError: unsupported operand types for {plain.__name__}: "
                  f"{a.python_type().__name__} and {b.python_type().__name__}")
