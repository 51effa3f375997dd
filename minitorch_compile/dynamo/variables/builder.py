"""``VariableBuilder``: turn a real value read from the frame into a tracker, with guards.

Mirrors ``torch/_dynamo/variables/builder.py``.  The type of the value picks the tracker, and
the tracker's assumptions become guards on the value's source:

================================  =======================  =================================
value                             tracker                  guard
================================  =======================  =================================
Tensor / Parameter                TensorVariable (input)   TENSOR_MATCH
int, float, bool, str, None, ...  ConstantVariable         CONSTANT_MATCH / EQUALS_MATCH
int / float that changed          SymNodeVariable (input)  TYPE_MATCH + shape-env guards
tuple / list / namedtuple         Tuple/ListVariable       TYPE_MATCH + LIST_LENGTH
dict                              ConstDictVariable        TYPE_MATCH + DICT_KEYS
set / frozenset of constants      SetVariable              TYPE_MATCH + SET_CONTENTS
nn.Module                         NNModuleVariable         TYPE_MATCH (+ what is read)
optim.Optimizer                   OptimizerVariable        TYPE_MATCH (+ grads, state keys)
Python function                   UserFunctionVariable     ID_MATCH (a nested one passed in:
                                                           ``__code__``, as torch's CLOSURE_MATCH)
``mtc.compile``d function         its ``.fn``, inlined     ID_MATCH (wrapper and ``.fn``)
mtc function / op / module        TorchVariable            ID_MATCH
numpy function / ufunc / type     NumpyVariable            ID_MATCH
ndarray / numpy scalar            NumpyNdarrayVariable     TYPE_MATCH + TENSOR_MATCH on
                                  (input)                  ``from_numpy(a)``
``Fn.apply`` (autograd Function)  TorchVariable            ID_MATCH on ``__func__``, ``__self__``
builtin / operator / math fn      BuiltinVariable          (name not shadowed in globals)
Python module                     PythonModuleVariable     ID_MATCH
class                             UserDefinedClass...      ID_MATCH
other objects                     UserDefinedObject...     TYPE_MATCH
================================  =======================  =================================

Values built from the same source twice give the same tracker (one graph input per source).
"""

from __future__ import annotations

import builtins
import enum
import functools
import math
import operator
import types

import numpy as np

from ..._tensor import Tensor
from ..exc import unimplemented
from ..guards import _is_literal
from ..source import (
    AttrSource,
    GetItemSource,
    GlobalSource,
    LocalSource,
    RebuiltIterator,
    RebuiltIteratorGetItemSource,
)
from .builtin import BuiltinVariable
from .constant import ConstantVariable, is_constant_value
from .dicts import ConstDictVariable
from .functions import UserFunctionVariable, UserMethodVariable
from .lists import ListVariable, NamedTupleVariable, RangeVariable, TupleVariable
from .misc import CFunctionVariable, PythonModuleVariable
from .nn_module import NNModuleVariable
from .numpy import NumpyVariable, is_numpy_object, wrap_numpy_input
from .torch import TorchVariable, is_mtc_object
from .user_defined import UserDefinedClassVariable, UserDefinedObjectVariable

_BUILTIN_IDS = {id(v) for v in vars(builtins).values() if callable(v)} | \
    {id(v) for v in vars(operator).values() if callable(v)} | \
    {id(v) for v in vars(math).values() if callable(v)}

from .iter import HANDLERS as _STDLIB  # noqa: E402

_STDLIB_IDS = {id(v) for v in _STDLIB}


class VariableBuilder:
    def __init__(self, tx, source, guard: bool = True):
        self.tx = tx
        self.source = source
        self.guard = guard

    def __call__(self, value):
        out = self.tx.output
        if self.source is not None:
            key = self.source.name()
            cached = out.source_cache.get(key)
            if cached is not None:
                return cached
            if _is_mutable(value):  # one tracker per object, so writes are seen everywhere
                seen = out.side_effects.lookup(value)
                if seen is not None and seen.source is not None:
                    self._guard("DUPLICATE_INPUT", value=seen.source)
                    out.source_cache[key] = seen
                    return seen
            vt = self._wrap(value)
            if _is_mutable(value):
                out.side_effects.track(value, vt)
            out.source_cache[key] = vt
            return vt
        return self._wrap(value)

    def _guard(self, kind, **extra) -> None:
        if self.source is not None and self.guard:
            self.tx.output.guards.add(kind, self.source, **extra)

    def _wrap(self, value):
        from ...nn import Module
        from ...optim import Optimizer
        from ..eval_frame import _JitFunction

        src = self.source
        if isinstance(value, _JitFunction):
            # a compiled function called from traced code is inlined like any other function;
            # the guard pins the wrapper the source holds (its .fn is guarded on its own)
            self._guard("ID_MATCH", value=value)
            return VariableBuilder(self.tx, AttrSource(src, "fn") if src is not None else None,
                                   self.guard)(value.fn)
        if isinstance(value, Tensor):
            if src is None:
                unimplemented("a tensor reached through a value without a source (e.g. a "
                              "default argument of a nested function) cannot be a graph input")
            return self.tx.output.add_graph_input(self.tx, src, value)
        if (isinstance(value, np.ndarray) or (isinstance(value, np.generic) and not
                                              is_constant_value(value))) and _trace_numpy():
            if src is None:  # an ndarray / numpy scalar: a graph input (variables/numpy.py)
                unimplemented("an ndarray without a source cannot be a graph input")
            return wrap_numpy_input(self.tx, src, value)
        # ints read from globals and closures stay specialized (torch: "integers from global
        # variables want to be specialized"), and so do ints read through a module (torch's
        # allow_unspec_int_on_nn_module=False); arguments become dynamic on a second value
        if type(value) is int and src is not None and self.guard and src.is_local() and \
                not _below_a_module(self.tx, src):
            dynamic = self.tx.output.dynamic_int(self.tx, src, value)
            if dynamic is not None:
                return dynamic
        if type(value) is float and src is not None and self.guard:
            dynamic = self.tx.output.dynamic_float(self.tx, src, value)
            if dynamic is not None:
                return dynamic
        if isinstance(value, enum.Enum):  # a member: its identity (torch's ID_MATCH)
            from .constant import EnumVariable

            self._guard("ID_MATCH", value=value)
            return EnumVariable(value, src)
        if isinstance(value, functools.partial) and type(value) is functools.partial:
            return self._partial(value)
        if is_constant_value(value):
            self._guard("CONSTANT_MATCH", value=value)
            return ConstantVariable(value, src)
        if isinstance(value, range):
            self._guard("CONSTANT_MATCH", value=value)
            return RangeVariable(value, src)
        if isinstance(value, tuple) and hasattr(value, "_fields"):
            self._guard("TYPE_MATCH", value=value)
            return NamedTupleVariable(self._items(value), type(value), src)
        if type(value) in (tuple, list):
            self._guard("TYPE_MATCH", value=value)
            self._guard("LIST_LENGTH", value=value)
            cls = TupleVariable if isinstance(value, tuple) else ListVariable
            return cls(self._items(value), src)
        if type(value) is RebuiltIterator:  # a live iterator a resume function was given
            from .lists import ListIteratorVariable

            rest = value.items[value.pos:]
            self._guard("TYPE_MATCH", value=value)
            self._guard("TUPLE_ITERATOR_LEN", value=rest)
            return ListIteratorVariable(
                [self._child(RebuiltIteratorGetItemSource(src, i) if src else None, v)
                 for i, v in enumerate(rest)])
        if type(value) in (set, frozenset) and all(
                is_constant_value(v) and _is_literal(v) for v in value):
            from .sets import SetVariable  # mutations of an input set are replayed

            self._guard("TYPE_MATCH", value=value)
            self._guard("SET_CONTENTS", value=value)
            return SetVariable(value, type(value) is frozenset, source=src)
        if type(value) is dict:
            if not all((is_constant_value(k) and _is_literal(k)) or _is_size_key(k)
                       for k in value):
                # sources name items by key (L['d']['x']): the key's repr must evaluate back
                unimplemented("dict with keys that are not literals (tensors, dtypes, ...)")
            self._guard("TYPE_MATCH", value=value)
            self._guard("DICT_KEYS", value=value)
            return ConstDictVariable({k: self._child(GetItemSource(src, k) if src else None, v)
                                      for k, v in value.items()}, src)
        if isinstance(value, Module):
            if src is not None:
                self.tx.output.nn_module_sources.add(src.name())
            # torch 2.13 inlines modules (``inline_inbuilt_nn_modules``): not their identity but
            # their type and everything the trace reads from them is guarded — parameters are
            # graph inputs, so another instance of the same class reuses the graph
            self._guard("TYPE_MATCH", value=value)
            return NNModuleVariable(value, src)
        if isinstance(value, Optimizer):
            from .optimizer import OptimizerVariable

            self._guard("TYPE_MATCH", value=value)
            return OptimizerVariable(value, src)
        if id(value) in _STDLIB_IDS:  # itertools.chain, functools.reduce, map, ... (iter.py)
            from .iter import StdlibVariable

            if isinstance(src, GlobalSource) and id(value) in _BUILTIN_IDS:
                self._guard("BUILTIN_NOT_SHADOWED", value=value)
            else:
                self._guard("ID_MATCH", value=value)
            return StdlibVariable(value, src)
        if id(value) in _BUILTIN_IDS and callable(value):
            if isinstance(src, GlobalSource):
                self._guard("BUILTIN_NOT_SHADOWED", value=value)
            return BuiltinVariable(value, src)
        if isinstance(value, types.MethodType) and is_mtc_object(value.__func__):
            # MyFunction.apply: a bound method is a new object on every access, so guard the
            # function and what it is bound to, not the method's identity
            self._child(AttrSource(src, "__self__") if src is not None else None, value.__self__)
            if src is not None and self.guard:
                self.tx.output.guards.add("ID_MATCH", AttrSource(src, "__func__"),
                                          value=value.__func__)
            return TorchVariable(value, src)
        if is_mtc_object(value):
            self._guard("ID_MATCH", value=value)
            return TorchVariable(value, src)
        if is_numpy_object(value):  # np.sin, np.mean, np.ones, np.float32: traced on arrays
            self._guard("ID_MATCH", value=value)  # by the table, never inlined
            return NumpyVariable(value, src)
        if isinstance(value, types.FunctionType):
            if isinstance(src, LocalSource) and "<locals>" in value.__qualname__ and self.guard:
                # torch's CLOSURE_MATCH: a nested function is made anew on every call of its
                # maker (and of the transformed code passing it to a resume function): guard
                # its code; its defaults and free variables are read through sources, guarded
                self.tx.output.guards.add("ID_MATCH", AttrSource(src, "__code__"),
                                          value=value.__code__)
            else:
                self._guard("ID_MATCH", value=value)
            return UserFunctionVariable(value, src)
        if isinstance(value, types.MethodType) and isinstance(value.__func__, types.FunctionType):
            self_src = AttrSource(src, "__self__") if src is not None else None
            obj = self._child(self_src, value.__self__)
            if src is not None and self.guard:  # which function is bound matters too
                self.tx.output.guards.add("ID_MATCH", AttrSource(src, "__func__"),
                                          value=value.__func__)
            return UserMethodVariable(value.__func__, obj)
        if isinstance(value, types.ModuleType):
            self._guard("ID_MATCH", value=value)
            return PythonModuleVariable(value, src)
        if isinstance(value, type):
            self._guard("ID_MATCH", value=value)
            return UserDefinedClassVariable(value, src)
        if isinstance(value, types.BuiltinMethodType) and type(value.__self__) in \
                (list, dict, set):  # `out.append` a resume function received on its stack:
            from .misc import GetAttrVariable  # the method of the (guarded) container

            obj = self._child(AttrSource(src, "__self__") if src is not None else None,
                              value.__self__)
            return GetAttrVariable(obj, value.__name__)
        if isinstance(value, (types.BuiltinFunctionType, types.BuiltinMethodType)):
            # loading it is fine; *calling* it is unsupported (and breaks the graph there)
            self._guard("ID_MATCH", value=value)
            return CFunctionVariable(value, src)
        self._guard("TYPE_MATCH", value=value)
        return UserDefinedObjectVariable(value, src)

    def _partial(self, value):
        """A ``functools.partial`` read from the frame: its function, arguments and keywords
        read through their sources (so guarded as any other value of theirs)."""
        from .iter import PartialVariable

        src = self.source
        self._guard("TYPE_MATCH", value=value)
        parts = [self._child(AttrSource(src, a) if src is not None else None, getattr(value, a))
                 for a in ("func", "args", "keywords")]
        fn, args, keywords = parts
        return PartialVariable(fn, args.unpack_var_sequence(self.tx), keywords.items,
                               source=src)

    def _child(self, source, value):
        return VariableBuilder(self.tx, source)(value)

    def _items(self, seq) -> list:
        src = self.source
        return [self._child(GetItemSource(src, i) if src is not None else None, v)
                for i, v in enumerate(seq)]


def _is_size_key(key) -> bool:
    """A ``Size`` key (``cache[x.shape]``): named in sources as the equal, equally hashed
    tuple ``L['d'][(2, 3)]``; DICT_KEYS compares the keys themselves."""
    from ..._size import Size

    return type(key) is Size and all(type(s) is int for s in key)


def _trace_numpy() -> bool:
    from .. import config

    return config.trace_numpy


def _below_a_module(tx, src) -> bool:
    """``src`` reads something through an ``nn.Module`` (``L['m'].k``, ``L['m'].cfg.sizes[0]``):
    torch's guard source ``*_unspecialized_nn_module``."""
    seen = tx.output.nn_module_sources
    while hasattr(src, "base"):
        src = src.base
        if src.name() in seen:
            return True
    return False


def _is_mutable(value) -> bool:
    """Objects whose mutation while tracing is a side effect to replay."""
    from ...nn import Module

    if type(value) in (list, dict, set) or isinstance(value, Module):
        return True
    return type(value).__module__ not in ("builtins",) and not isinstance(
        value, (Tensor, type, types.ModuleType, types.FunctionType, types.MethodType,
                types.BuiltinFunctionType)) and not is_constant_value(value) and \
        hasattr(value, "__dict__")


def wrap_constant_attr(vt, name):
    if name == "fromkeys" and vt.as_python_constant() is dict:  # dict.fromkeys(keys, v)
        from .dicts import DictFromKeysVariable

        return DictFromKeysVariable(dict)
    value = getattr(vt.as_python_constant(), name)
    if is_constant_value(value):
        return ConstantVariable(value)
    unimplemented(f"attribute {name!r} of {vt} is not a constant")
