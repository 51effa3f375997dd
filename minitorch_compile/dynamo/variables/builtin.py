"""Python builtins, ``operator`` and ``math`` functions (``variables/builtin.py``).

Three outcomes for ``builtin(*args)``:

1. all arguments are constants and the builtin is pure → *fold* it now (``len``, ``range``,
   ``min``, ``2 * 3``, ``math.sqrt(2)``);
2. a tensor is involved and the builtin is an operator → a ``call_function`` node on
   ``operator.*`` (``x * 2`` becomes ``mul = l_x_ * 2``);
3. containers and iterators are handled structurally (``len(list)``, ``zip``, ``enumerate``,
   ``isinstance``, ``sum`` over tensors ...); the builtins that consume an iterable live in
   ``builtin_iterables.py`` (``IterableBuiltinsMixin``).

Anything else — ``print``, ``open``, ``id``, conversions of tensors to Python numbers — is
``Unsupported`` with the reason.
"""

from __future__ import annotations

import builtins
import math
import operator

from ..exc import unimplemented
from ..symbolic_scalars import MATH_FNS, is_sym_scalar
from .base import VariableTracker
from .builtin_iterables import IterableBuiltinsMixin
from .constant import ConstantVariable, is_constant_value
from .dicts import ConstDictVariable, MappingProxyVariable
from .lists import (
    BaseListVariable,
    ListVariable,
    RangeVariable,
    SizeVariable,
    SliceVariable,
    TupleVariable,
)
from .numpy import NumpyNdarrayVariable, numpy_builtin
from .sets import INPLACE_METHODS, SetVariable
from .tensor import SymNodeVariable, TensorVariable, same_tensor_after_inplace

BINARY_OPS = {operator.add, operator.sub, operator.mul, operator.truediv, operator.floordiv,
              operator.mod, operator.pow, operator.matmul, operator.and_, operator.or_,
              operator.xor, operator.lshift, operator.rshift, operator.lt, operator.le,
              operator.gt, operator.ge, operator.eq, operator.ne, operator.iadd, operator.isub,
              operator.imul, operator.itruediv, operator.ifloordiv, operator.imod, operator.ipow,
              operator.imatmul, operator.iand, operator.ior, operator.ixor}
UNARY_OPS = {operator.neg, operator.pos, operator.invert, operator.abs}
_COMPARISONS = {operator.lt, operator.le, operator.gt, operator.ge, operator.eq, operator.ne}
_INPLACE_TO_PLAIN = {operator.iadd: operator.add, operator.isub: operator.sub,
                     operator.imul: operator.mul, operator.itruediv: operator.truediv,
                     operator.ifloordiv: operator.floordiv, operator.imod: operator.mod,
                     operator.ipow: operator.pow, operator.imatmul: operator.matmul,
                     operator.iand: operator.and_, operator.ior: operator.or_,
                     operator.ixor: operator.xor}
_PURE_BUILTINS = {abs, all, any, bool, chr, divmod, float, format, frozenset, hash, int, len,
                  max, min, ord, pow, repr, round, sorted, str, sum, tuple, list, isinstance,
                  issubclass, callable, hasattr, reversed, range, slice}
MATH_FUNCTIONS = {v for v in vars(math).values() if callable(v)}  # all pure
_PURE_BUILTINS |= MATH_FUNCTIONS
_UNSUPPORTED = {print: "print() writes output (I/O)", open: "open() does I/O",
                id: "id() of a traced value", input: "input() does I/O",
                exec: "exec()", eval: "eval()",
                delattr: "delattr() (a side effect)", globals: "globals()", locals: "locals()",
                vars: "vars()"}


def _is_tensor(v) -> bool:
    return isinstance(v, TensorVariable)


class BuiltinVariable(IterableBuiltinsMixin, VariableTracker):
    def __init__(self, fn, source=None):
        super().__init__(source)
        self.fn = fn

    def as_python_constant(self):
        return self.fn

    def python_type(self) -> type:
        return type(self.fn)

    def __repr__(self) -> str:
        return f"BuiltinVariable({getattr(self.fn, '__name__', self.fn)})"

    # ------------------------------------------------------------------ dispatch
    def call_function(self, tx, args, kwargs):
        fn = self.fn
        if fn in _UNSUPPORTED:
            unimplemented(f"{_UNSUPPORTED[fn]} cannot be captured into a graph")
        if getattr(fn, "__name__", "") in INPLACE_METHODS and len(args) == 2 and \
                isinstance(args[0], SetVariable) and not args[0].frozen:
            return args[0].inplace(tx, fn.__name__, args[1])  # s |= t mutates s
        if any(isinstance(a, NumpyNdarrayVariable) for a in (*args, *kwargs.values())):
            out = numpy_builtin(tx, fn, args, kwargs)  # numpy's operators (variables/numpy.py)
            if out is not None:
                return out
        handler = getattr(self, f"_call_{getattr(fn, '__name__', '')}", None)
        if handler is not None:
            result = handler(tx, *args, **kwargs)
            if result is not None:
                return result
        if any(isinstance(a, SymNodeVariable) for a in args) and not kwargs and (
                fn in BINARY_OPS or fn in UNARY_OPS):
            return self._symbolic(tx, fn, args)
        if fn in MATH_FNS and len(args) == 1 and isinstance(args[0], SymNodeVariable):
            return tx.output.call(tx, "call_function", fn, list(args), {})  # math.cos(zf0)
        if fn in BINARY_OPS and len(args) == 2 and not kwargs:
            return self._binary(tx, fn, *args)
        if fn in UNARY_OPS and len(args) == 1 and any(map(_is_tensor, args)):
            return tx.output.call(tx, "call_function", fn, list(args), {})
        if fn in _PURE_BUILTINS or fn in BINARY_OPS or fn in UNARY_OPS or fn in (
                operator.not_, operator.truth, operator.getitem, operator.contains,
                operator.is_, operator.is_not, operator.index):
            return self._fold(args, kwargs)
        unimplemented(f"builtin {getattr(fn, '__name__', fn)}() is not supported")

    def _symbolic(self, tx, fn, args):
        """Arithmetic on symbolic sizes makes graph nodes; comparisons decide (and guard)."""
        if fn in _COMPARISONS and any(_is_tensor(a) for a in args):  # x > n: a graph op
            return tx.output.call(tx, "call_function", fn, list(args), {})
        if fn in _COMPARISONS:
            values = [a.sym if isinstance(a, SymNodeVariable) else a.as_python_constant()
                      for a in args]
            if any(is_sym_scalar(v) and not v.is_backed for v in values) and \
                    not any(_is_tensor(a) for a in args):  # unbacked: traced, not decided
                return tx.output.call(tx, "call_function", fn, list(args), {})
            return ConstantVariable(fn(*values))
        if any(_is_tensor(a) for a in args):
            return tx.output.call(tx, "call_function", fn, list(args), {})
        return tx.output.call(tx, "call_function", _INPLACE_TO_PLAIN.get(fn, fn), list(args), {})

    def _fold(self, args, kwargs):
        try:
            cargs = [a.as_python_constant() for a in args]
            ckw = {k: v.as_python_constant() for k, v in kwargs.items()}
        except NotImplementedError:
            unimplemented(f"{getattr(self.fn, '__name__', self.fn)}() with non-constant "
                          f"arguments {args}")
        try:
            value = self.fn(*cargs, **ckw)
        except Exception as e:  # the user's code raises here: let eager mode raise it
            unimplemented(f"{type(e).__name__} raised by {self.fn.__name__}() inside traced "
                          f"code: {e}")
        return _wrap_const(value)

    def _binary(self, tx, fn, a, b):
        from .user_defined import binary_dunder

        plain = _INPLACE_TO_PLAIN.get(fn, fn)
        out = binary_dunder(tx, fn, plain, a, b)  # a user object's __add__/__radd__/...
        if out is not None:
            return out
        if _is_tensor(a) or _is_tensor(b):
            if isinstance(a, (BaseListVariable, ConstDictVariable)) or isinstance(
                    b, (BaseListVariable, ConstDictVariable)):
                if not (a.is_python_constant() or _is_tensor(a)) or not (
                        b.is_python_constant() or _is_tensor(b)):
                    unimplemented(f"{fn.__name__} between a tensor and a container")
            out = tx.output.call(tx, "call_function", fn, [a, b], {})
            if fn in _INPLACE_TO_PLAIN and isinstance(a, TensorVariable):
                return same_tensor_after_inplace(a, out)
            return out
        if isinstance(a, BaseListVariable) and plain in (operator.add, operator.mul):
            if plain is operator.add and isinstance(b, BaseListVariable):
                if fn is operator.iadd and isinstance(a, ListVariable):
                    a.call_method(tx, "extend", [b], {})
                    return a
                cls = SizeVariable if isinstance(a, SizeVariable) else type(a)
                if cls not in (ListVariable, TupleVariable, SizeVariable):
                    cls = TupleVariable if isinstance(a.as_python_constant(), tuple) \
                        else ListVariable
                return cls(a.items + b.items)
            if plain is operator.mul and b.is_python_constant():
                return type(a)(a.items * b.as_python_constant()) if type(a) in (
                    ListVariable, TupleVariable) else TupleVariable(a.items *
                                                                    b.as_python_constant())
        if plain in (operator.eq, operator.ne) and _guard_module_identity(tx, a, b):
            same = a.as_python_constant() is b.as_python_constant()  # Module.__eq__: identity
            return ConstantVariable(same if plain is operator.eq else not same)
        if plain in (operator.eq, operator.ne) and not (a.is_python_constant() and
                                                        b.is_python_constant()):
            same = _same_object(a, b)
            if same is None and _default_eq(a) and _default_eq(b):
                same = _object_identity(tx, a, b)  # object.__eq__ is identity
            if same is not None:
                return ConstantVariable(same if plain is operator.eq else not same)
        return BuiltinVariable(plain)._fold([a, b], {})

    # ------------------------------------------------------------------ specific builtins
    def _call_str(self, tx, obj=None, *rest):
        text = getattr(obj, "constant_str", None)  # str(e) of an exception raised in the trace
        return text() if text is not None and not rest else None

    def _call_len(self, tx, obj):
        if _is_tensor(obj):
            if obj.example_value.ndim == 0:
                unimplemented("len() of a 0-d tensor")
            return obj.size_item(tx, 0)
        return obj.call_method(tx, "__len__", [], {})

    def _call_isinstance(self, tx, obj, cls):
        classes = cls.as_python_constant()
        return ConstantVariable(issubclass(obj.python_type(), classes))

    def _call_issubclass(self, tx, a, b):
        return None  # fold

    def _call_range(self, tx, *args):
        return RangeVariable(range(*[a.as_python_constant() for a in args]))

    def _call_slice(self, tx, *args):
        parts = list(args) + [ConstantVariable(None)] * (3 - len(args))
        if len(args) == 1:
            parts = [ConstantVariable(None), args[0], ConstantVariable(None)]
        return SliceVariable(*parts)

    def _call_abs(self, tx, x):
        if _is_tensor(x):
            return tx.output.call(tx, "call_function", builtins.abs, [x], {})
        return None

    def _data_dependent(self, name, x):
        if _is_tensor(x):
            unimplemented(f"data-dependent operation: {name}() of a tensor needs its value")
        return None

    def _call_int(self, tx, x=None, *rest):
        return self._data_dependent("int", x)

    def _call_float(self, tx, x=None):
        return self._data_dependent("float", x)

    def _call_bool(self, tx, x=None):
        if x is not None and not _is_tensor(x):
            return ConstantVariable(x.bool_value(tx))
        return self._data_dependent("bool", x)

    def _call_getattr(self, tx, obj, name, *default):
        name = name.as_python_constant()
        if default and not _has_attr(tx, obj, name):
            return default[0]
        return obj.var_getattr(tx, name)

    def _call_setattr(self, tx, obj, name, value):
        """``setattr(obj, "name", v)``: the same side effect as ``obj.name = v``."""
        store = getattr(obj, "store_attr", None)
        if store is None:
            unimplemented(f"setattr() on {obj}")
        store(tx, name.as_python_constant(), value)
        return ConstantVariable(None)

    def _call_hasattr(self, tx, obj, name):
        return ConstantVariable(_has_attr(tx, obj, name.as_python_constant()))

    def _call_type(self, tx, obj):
        from .user_defined import UserDefinedClassVariable

        cls = UserDefinedClassVariable(obj.python_type())
        cls.instance_source = obj.source  # type(a).__dict__ is read through type(L['a'])
        return cls

    def _call_super(self, tx, *args):
        from .misc import SuperVariable

        if len(args) == 2:  # super(Cls, obj)
            return SuperVariable(args[0].as_python_constant(), args[1])
        if args:
            unimplemented("super() with one argument")
        cls_vt, obj = tx.zero_arg_super()
        return SuperVariable(cls_vt.as_python_constant(), obj)

    def _call_callable(self, tx, obj):
        from .functions import BaseUserFunctionVariable

        if isinstance(obj, BaseUserFunctionVariable):
            return ConstantVariable(True)
        return None

    def _call_getitem(self, tx, obj, index):
        if _is_tensor(obj):
            return obj.call_method(tx, "__getitem__", [index], {})
        if hasattr(obj, "getitem"):
            return obj.getitem(tx, index)
        return obj.call_method(tx, "__getitem__", [index], {})

    def _call_contains(self, tx, container, item):
        if isinstance(container, (BaseListVariable, ConstDictVariable, MappingProxyVariable)):
            return container.call_method(tx, "__contains__", [item], {})
        return None

    def _call_is_(self, tx, a, b):
        _guard_module_identity(tx, a, b)
        same = _same_object(a, b)
        if same is None:
            same = _object_identity(tx, a, b)
        return ConstantVariable(same) if same is not None else _unknown_identity(a, b)

    def _call_is_not(self, tx, a, b):
        _guard_module_identity(tx, a, b)
        same = _same_object(a, b)
        if same is None:
            same = _object_identity(tx, a, b)
        return ConstantVariable(not same) if same is not None else _unknown_identity(a, b)

    def _call_not_(self, tx, a):
        return ConstantVariable(not a.bool_value(tx))

    def _call_truth(self, tx, a):
        return ConstantVariable(a.bool_value(tx))



def _has_attr(tx, obj, name: str) -> bool:
    """``hasattr(obj, name)``, decided now; for an object read from the frame, the answer is
    guarded (``HASATTR``), because attributes can be added to or deleted from it later."""
    from ..side_effects import DELETED
    from .misc import PythonModuleVariable
    from .nn_module import NNModuleVariable
    from .user_defined import UserDefinedClassVariable, UserDefinedObjectVariable

    if _is_tensor(obj):
        return hasattr(obj.class_type, name)  # the class is pinned by TENSOR_MATCH
    written = tx.output.side_effects.load_attr(obj, name) if isinstance(
        obj, (UserDefinedObjectVariable, NNModuleVariable)) else None
    if written is DELETED:  # deleted earlier in this trace: the class's attribute, if any
        return hasattr(obj.python_type(), name)  # (the class is pinned by its guards)
    if written is not None:
        return True  # assigned earlier in this trace
    if isinstance(obj, (UserDefinedObjectVariable, NNModuleVariable, PythonModuleVariable,
                        UserDefinedClassVariable)):
        present = hasattr(obj.as_python_constant() if not isinstance(
            obj, UserDefinedObjectVariable) else obj.value, name)
        if obj.source is not None:
            from ..source import AttrSource

            tx.output.guards.add("HASATTR", AttrSource(obj.source, name), value=present)
        return present
    if obj.is_python_constant():
        return hasattr(obj.as_python_constant(), name)
    unimplemented(f"hasattr() on {obj}")


def _unknown_identity(a, b):
    """Two containers read from the frame may be one object (``f(xs, xs)``), and folding
    ``is`` on rebuilt copies would say no: not decidable at compile time."""
    containers = (BaseListVariable, ConstDictVariable)
    if isinstance(a, containers) and isinstance(b, containers):
        unimplemented(f"`is` between two containers ({a}, {b}) depends on their identity")
    return None  # fold it


def _guard_module_identity(tx, a, b) -> bool:
    """Two modules compared by identity (``self.a is self.b``, ``m == other``): modules are
    guarded by type only (torch 2.13 inlines them: another instance of the same class reuses
    the graph), so an answer that depends on *which* objects they are guards both with
    ``ID_MATCH``.  True when both are modules."""
    from .nn_module import NNModuleVariable

    if not (isinstance(a, NNModuleVariable) and isinstance(b, NNModuleVariable)):
        return False
    for v in (a, b):
        if v.source is not None:
            tx.output.guards.add("ID_MATCH", v.source, value=v.module)
    return True


def _same_object(a, b):
    """``a is b`` when it is knowable at compile time, else None."""
    if a is b:
        return True
    if a.is_python_constant() and b.is_python_constant() and not isinstance(
            a, (BaseListVariable, ConstDictVariable)):
        return a.as_python_constant() is b.as_python_constant()
    if isinstance(a, TensorVariable) and isinstance(b, TensorVariable):
        return a.proxy is b.proxy
    if _is_tensor(a) or _is_tensor(b):
        other = b if _is_tensor(a) else a
        if other.is_python_constant() or not _is_tensor(other):
            return False
    return None


def _object_identity(tx, a, b):
    """``a is b`` for instances of user classes (torch's ``UserDefinedObjectVariable``): an
    object made while tracing is no other object, and an existing object is no constant; two
    objects read from the frame (a default and a global sentinel, say) are compared by
    identity, both guarded by ``ID_MATCH`` so the answer holds on every run.  None: unknown."""
    from .user_defined import NewObjectVariable, UserDefinedObjectVariable

    def constant(v):
        return isinstance(v, ConstantVariable) and is_constant_value(v.value)

    containers = (BaseListVariable, ConstDictVariable)
    if (isinstance(a, containers) and constant(b)) or (isinstance(b, containers) and
                                                      constant(a)):
        return False  # `xs is None`: a list or dict is no constant
    objs = [v for v in (a, b) if isinstance(v, UserDefinedObjectVariable)]
    if not objs:
        return None
    other = b if objs[0] is a else a
    if any(isinstance(v, NewObjectVariable) for v in objs):
        return False if constant(other) or isinstance(other, UserDefinedObjectVariable) \
            else None
    if len(objs) == 1:
        return False if constant(other) else None
    for v in objs:  # (an object without a source was fixed when it was read: no guard)
        if v.source is not None:
            tx.output.guards.add("ID_MATCH", v.source, value=v.value)
    return a.value is b.value


def _default_eq(v) -> bool:
    """``==`` on ``v`` is ``object.__eq__`` (identity): a constant or a plain user object."""
    from .user_defined import UserDefinedObjectVariable

    if v.is_python_constant():
        return is_constant_value(v.as_python_constant())
    cls = type(v.value) if isinstance(v, UserDefinedObjectVariable) else None
    return cls is not None and cls.__eq__ is object.__eq__ and cls.__ne__ is object.__ne__


def _wrap_const(value):
    if is_constant_value(value):
        return ConstantVariable(value)
    if isinstance(value, (set, frozenset)):
        from .sets import SetVariable

        return SetVariable(value, isinstance(value, frozenset))
    if isinstance(value, range):
        return RangeVariable(value)
    if isinstance(value, (tuple, list)) and all(is_constant_value(v) for v in value):
        cls = TupleVariable if isinstance(value, tuple) else ListVariable
        return cls([ConstantVariable(v) for v in value])
    unimplemented(f"folding produced an unsupported {type(value).__name__}")
