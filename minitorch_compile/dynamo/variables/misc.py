"""Everything else the tracer meets: bound attributes, NULL, grad-mode contexts, Python modules,
``super()``, plain user objects and classes (``variables/misc.py``, ``user_defined.py``,
``ctx_manager.py``).
"""

from __future__ import annotations

import inspect
import types

from ..exc import unimplemented
from ..source import AttrSource
from .base import VariableTracker
from .constant import ConstantVariable


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


class GradModeVariable(VariableTracker):
    """``with mtc.no_grad():`` / ``enable_grad()`` / ``set_grad_enabled(b)``.

    Entering switches grad mode for the ops traced inside *and* records a
    ``_set_grad_enabled`` node, so the graph itself switches at run time, as in torch.
    """

    def __init__(self, target_mode: bool, initially_set: bool = False):
        super().__init__()
        self.target_mode = target_mode
        self.prev = None

    def enter(self, tx):
        self.prev = tx.output.grad_enabled
        tx.output.set_grad_mode(tx, self.target_mode)
        return ConstantVariable(None)

    def exit(self, tx):
        tx.output.set_grad_mode(tx, self.prev)
        return ConstantVariable(None)

    def call_method(self, tx, name, args, kwargs):
        if name == "__enter__":
            return self.enter(tx)
        if name == "__exit__":
            return self.exit(tx)
        unimplemented(f"grad-mode context method {name}")

    def call_function(self, tx, args, kwargs):
        # used as a decorator: @mtc.no_grad() def f(...)
        unimplemented("grad-mode objects used as decorators inside compiled code")


class WithExitFunctionVariable(VariableTracker):
    """The bound ``__exit__`` that BEFORE_WITH leaves on the stack."""

    def __init__(self, ctx):
        super().__init__()
        self.ctx = ctx

    def call_function(self, tx, args, kwargs):
        return self.ctx.call_method(tx, "__exit__", args, kwargs)


class UserContextExitVariable(VariableTracker):
    """The bound ``__exit__`` of a user object used in ``with`` (torch's
    ``GenericContextWrappingVariable``): ``__enter__`` was inlined at BEFORE_WITH, calling this
    inlines ``__exit__``.  A graph break inside the block cannot leave and re-enter it: not
    rebuilt (the frame runs eagerly)."""

    def __init__(self, ctx):
        super().__init__()
        self.ctx = ctx

    def call_function(self, tx, args, kwargs):
        from .functions import UserMethodVariable

        return UserMethodVariable(type(self.ctx.value).__exit__, self.ctx).call_function(
            tx, args, kwargs)

    def reconstruct(self, codegen) -> None:
        unimplemented(f"a graph break inside `with` on a {type(self.ctx.value).__name__} (a "
                      "user context manager cannot be left and entered again)")


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
        value = getattr(self.cls, name)
        if isinstance(value, (staticmethod, classmethod)):
            value = getattr(self.cls, name)
        return VariableBuilder(tx, src)(value)

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


def _plain_class(cls: type) -> bool:
    """A class whose instances can be made while tracing: created by ``object.__new__``,
    attributes set by plain ``object.__setattr__`` into a ``__dict__``, ``__init__`` in Python
    (or none) — e.g. a plain class or a (non-frozen) dataclass."""
    from ...nn import Module

    return type(cls) is type and cls.__new__ is object.__new__ and \
        cls.__setattr__ is object.__setattr__ and "__slots__" not in vars(cls) and \
        not issubclass(cls, (Module, BaseException)) and \
        (cls.__init__ is object.__init__ or isinstance(cls.__init__, types.FunctionType))


class SuperVariable(VariableTracker):
    """``super()`` / ``super(Cls, obj)``: attributes are looked up in ``type(obj).__mro__``
    after ``Cls``; methods found there are bound to ``obj`` and inlined."""

    def __init__(self, cls: type, obj):
        super().__init__()
        self.cls, self.obj = cls, obj

    def var_getattr(self, tx, name):
        from .builder import VariableBuilder
        from .functions import UserMethodVariable

        mro = self.obj.python_type().__mro__
        if self.cls not in mro:
            unimplemented(f"super({self.cls.__qualname__}, obj): obj is not an instance")
        for klass in mro[mro.index(self.cls) + 1:]:
            if name in vars(klass):
                attr = vars(klass)[name]
                break
        else:
            unimplemented(f"super() object has no attribute {name!r}")
        if isinstance(attr, types.FunctionType):
            return UserMethodVariable(attr, self.obj)
        if isinstance(attr, staticmethod):
            return VariableBuilder(tx, None)(attr.__func__)
        if isinstance(attr, classmethod):
            return UserMethodVariable(attr.__func__,
                                      UserDefinedClassVariable(self.obj.python_type()))
        unimplemented(f"super().{name} is a {type(attr).__name__}, not a Python method")

    def __repr__(self) -> str:
        return f"SuperVariable({self.cls.__qualname__})"


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
        cls = type(self.value)
        cls_attr = inspect.getattr_static(cls, name, None)
        if cls.__setattr__ is not object.__setattr__ or not hasattr(self.value, "__dict__") \
                or hasattr(cls_attr, "__set__") or hasattr(cls_attr, "__delete__"):
            unimplemented(f"assigning attribute {name!r} of a {cls.__name__} (custom "
                          "__setattr__, a property or slots)")
        tx.output.side_effects.store_attr(self, name, value)

    def var_getattr(self, tx, name):
        from .builder import VariableBuilder
        from .functions import UserFunctionVariable, UserMethodVariable

        written = tx.output.side_effects.load_attr(self, name)
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
