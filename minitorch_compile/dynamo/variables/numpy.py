"""numpy inside compiled code: ndarrays traced as tensors (torch's ``config.trace_numpy``).

Mirrors ``torch/_dynamo/variables/tensor.py`` (``NumpyNdarrayVariable``), ``misc.py``
(``NumpyVariable``) and ``utils.py`` (``numpy_to_tensor_wrapper``, ``to_numpy_helper``).
torch runs numpy calls on tensors through ``torch._numpy`` (numpy's semantics written in torch
ops); here every traced numpy call becomes the *mtc op of the table below* on the tensor
behind the array, and numpy's own rules decide what that op must produce:

1. ``t.numpy()`` is a ``view_as`` node (as in torch's graphs) whose tracker is a
   ``NumpyNdarrayVariable``: a tensor in the graph that Python code sees as an ndarray.
2. A numpy function, method, operator or attribute on it looks up its row in the table of
   ``numpy_table.py``.  Not there: a graph break naming the call.
3. **numpy decides the result.**  The call is first run by numpy itself on a zero-cost dummy
   of each array (``np.broadcast_to`` of one zero: same dtype and shape, no memory), so its
   dtype, shape and whether it is a numpy *scalar* (``a.sum()`` is an ``np.float32``, not a
   0-d array) are numpy's.  The mtc op's fake result must agree.  If only the dtype differs
   (``np.sin`` of an int32 array is float64, ``a / 2`` of ints too, ``np.mean`` of ints), the
   arrays are cast to numpy's result dtype first (``.to(float64)``): the computation then
   runs in the dtype numpy computes in.  Still different: a graph break — never a value of
   another dtype.
4. Back to tensors: ``mtc.from_numpy(a)`` / ``mtc.as_tensor(a)`` is an ``as_tensor`` node.
   An array that leaves the graph (returned, live at a break) is turned into a real ndarray by
   the transformed code (``___to_numpy``: ``t.numpy()``, and ``[()]`` for numpy scalars).
5. An ndarray (or numpy scalar) read from the frame — a resume function's live ``a`` — is a
   graph input through ``NumpyTensorSource`` (the graph gets ``from_numpy(a)``, guarded by
   TENSOR_MATCH on it, as torch's ``NumpyTensorSource``).

Invariants: arrays share memory with their tensors, so every *write* (``a += 1``, ``a[0] = 1``,
``out=``, ``a.fill(0)``) is a graph break; mixing an ndarray with a Tensor in one numpy call
(whose eager meaning depends on ``__array__``) is a break; values computed are numpy's.
"""

from __future__ import annotations

import operator

import numpy as np

from ..exc import unimplemented
from ..symbolic_shapes import hint_int
from .base import VariableTracker
from .constant import ConstantVariable
from .numpy_table import (
    ARG_MAPPERS,
    INPLACE_OPERATORS,
    INT_RIGHT_OPERAND,
    OPERATORS,
    NumpyOp,
    mtc_dtype,
    numpy_table,
)
from .tensor import TensorVariable


# ---------------------------------------------------------------- tracing one numpy call
def trace_numpy_op(tx, op: NumpyOp, args: list, kwargs: dict):
    """``op`` on trackers ``args`` (numpy's order): the graph node(s) and their tracker."""
    margs, mkwargs = ARG_MAPPERS[op.args](tx, args, kwargs)
    expected = _numpy_result(op, args, kwargs)
    result_dtype = mtc_dtype(expected.dtype)
    if op.target in INT_RIGHT_OPERAND and expected.dtype.kind in "iub":
        right = args[1] if len(args) == 2 else None
        if right is None or not right.is_python_constant() or \
                not INT_RIGHT_OPERAND[op.target](right.as_python_constant()):
            unimplemented(f"integer {_name(op)} by an array or a zero / negative constant: "
                          "numpy's result depends on the values (0 for x // 0, mtc raises)")
    got = _fake_result(tx, op, margs, mkwargs, None)
    cast = None
    if (got is None or got.dtype != result_dtype) and op.cast:
        cast = result_dtype  # compute in the dtype numpy computes in
        got = _fake_result(tx, op, margs, mkwargs, cast)
    if got is None or got.dtype != result_dtype or not _same_shape(got.shape, expected.shape):
        seen = "raised" if got is None else f"gives {got.dtype.name}{list(got.shape)}"
        unimplemented(f"numpy's {_name(op)} gives {expected.dtype}{list(expected.shape)}; "
                      f"mtc's {_name(op, True)} {seen}: not traced")
    if cast is not None:
        margs = _map_arrays(margs, lambda a: _cast(tx, a, cast))
    out = tx.output.call(tx, op.kind, op.target, _map_arrays(margs, _plain_tensor), mkwargs)
    scalar = type(expected) if isinstance(expected, np.generic) else None
    return NumpyNdarrayVariable(out.proxy, out.example_value, scalar_type=scalar)


def _numpy_result(op: NumpyOp, args: list, kwargs: dict):
    """numpy's own answer on dummies of the arrays: its dtype, shape, scalar-ness."""
    try:
        pargs = [_probe_value(a) for a in args]
        pkwargs = {k: _probe_value(v) for k, v in kwargs.items()}
    except NotImplementedError:
        unimplemented(f"numpy's {_name(op)} with arguments that are not arrays or constants")
    try:
        with np.errstate(all="ignore"):
            expected = op.numpy(*pargs, **pkwargs)
    except Exception as e:  # eager mode raises it: run the call there
        unimplemented(f"numpy's {_name(op)} raises {type(e).__name__}: {e}")
    if not isinstance(expected, (np.ndarray, np.generic)):
        unimplemented(f"numpy's {_name(op)} returns a {type(expected).__name__}")
    return expected


def _probe_value(vt):
    from .lists import BaseListVariable

    if isinstance(vt, NumpyNdarrayVariable):
        zero = np.zeros((), vt.example_value.dtype.np)
        if vt.scalar_type is not None:
            return vt.scalar_type(zero)
        # numpy's rules at no memory cost; a dynamic size probes with its hint (no guard)
        return np.broadcast_to(zero, tuple(hint_int(s) for s in vt.example_value.shape))
    if isinstance(vt, TensorVariable):
        unimplemented("a numpy call mixing an ndarray with a Tensor (its eager meaning goes "
                      "through Tensor.__array__)")
    if isinstance(vt, BaseListVariable):
        return vt.python_type()(_probe_value(i) for i in vt.items)
    return vt.as_python_constant()


def _same_shape(got, expected) -> bool:
    """The mtc op's shape is numpy's: equal static sizes; a symbolic size (a dynamic
    dimension) is compared by its hint only, which asks no question of it (no guard)."""
    return len(got) == len(expected) and all(hint_int(g) == e for g, e in zip(got, expected))


def _fake_result(tx, op, margs, mkwargs, cast):
    """The mtc op's fake result (None if it raises), with the arrays cast to ``cast``."""
    out = tx.output
    try:
        with out.fake_mode:
            ex_args = [_example(out, a, cast) for a in margs]
            ex_kwargs = {k: out.example_of(v) for k, v in mkwargs.items()}
            got = out._fake_run(op.kind, op.target, ex_args, ex_kwargs)
    except Exception:
        return None
    return got if hasattr(got, "dtype") and hasattr(got, "shape") else None  # a tensor


def _example(out, vt, cast):
    from .lists import BaseListVariable

    if isinstance(vt, NumpyNdarrayVariable):
        ex = vt.example_value
        return ex.to(cast) if cast is not None and ex.dtype != cast else ex
    if isinstance(vt, BaseListVariable):
        return vt.python_type()(_example(out, i, cast) for i in vt.items)
    return out.example_of(vt)


def _map_arrays(args: list, fn) -> list:
    """``args`` with ``fn`` applied to every ndarray tracker (also inside lists)."""
    from .lists import BaseListVariable

    def one(vt):
        if isinstance(vt, NumpyNdarrayVariable):
            return fn(vt)
        if isinstance(vt, BaseListVariable) and type(vt).__name__ in ("ListVariable",
                                                                       "TupleVariable"):
            return type(vt)([one(i) for i in vt.items])
        return vt
    return [one(a) for a in args]


def _plain_tensor(vt) -> TensorVariable:
    """The tensor behind an array, as graph ops take it."""
    return TensorVariable(vt.proxy, vt.example_value)


def _cast(tx, vt, dtype):
    """``vt`` in ``dtype``: one ``to`` node per array and dtype (reused by later calls)."""
    if vt.example_value.dtype == dtype:
        return vt
    if dtype not in vt.casts:
        out = tx.output.call(tx, "call_method", "to",
                             [_plain_tensor(vt), ConstantVariable(dtype)], {})
        vt.casts[dtype] = NumpyNdarrayVariable(out.proxy, out.example_value,
                                               scalar_type=vt.scalar_type)
    return vt.casts[dtype]


def _name(op: NumpyOp, mtc: bool = False) -> str:
    fn = op.target if mtc else op.numpy
    return repr(fn) if isinstance(fn, str) else getattr(fn, "__name__", repr(fn))


# ---------------------------------------------------------------- the trackers
_CONST_ATTRS = {"ndim": lambda ex: ex.ndim, "size": lambda ex: ex.numel(),
                "dtype": lambda ex: np.dtype(ex.dtype.np),
                "itemsize": lambda ex: ex.dtype.itemsize,
                "nbytes": lambda ex: ex.numel() * ex.dtype.itemsize}


class NumpyNdarrayVariable(TensorVariable):
    """An ndarray (or numpy scalar, ``scalar_type``) that is a tensor in the graph."""

    def __init__(self, proxy, example_value, source=None, scalar_type=None):
        super().__init__(proxy, example_value, source, class_type=np.ndarray)
        self.scalar_type = scalar_type  # np.float32, ...: numpy returns a scalar here
        self.casts: dict = {}  # dtype -> this array cast to it (numpy's computation dtype)

    def python_type(self) -> type:
        return self.scalar_type or np.ndarray

    def bool_value(self, tx) -> bool:
        unimplemented("data-dependent branching: the truth value of an ndarray is only known "
                      "at run time")

    def var_getattr(self, tx, name):
        from .lists import TupleVariable
        from .misc import GetAttrVariable

        ex = self.example_value
        if name == "shape":
            return TupleVariable([self.size_item(tx, d) for d in range(ex.ndim)])
        if name in _CONST_ATTRS and all(type(s) is int for s in ex.shape):
            return ConstantVariable(_CONST_ATTRS[name](ex))
        if name == "T":
            return trace_numpy_op(tx, numpy_table("methods")["T"], [self], {})
        if name in numpy_table("methods"):
            return GetAttrVariable(self, name)
        unimplemented(f"ndarray.{name} is not traced (not in the numpy table of "
                      "variables/numpy.py)")

    def store_attr(self, tx, name, value) -> None:
        unimplemented(f"assigning ndarray.{name}: a write to memory shared with a tensor")

    def call_method(self, tx, name, args, kwargs):
        methods = numpy_table("methods")
        if name == "__len__" and not args and self.example_value.ndim:
            return self.size_item(tx, 0)
        if name in methods:
            if name == "__getitem__" and any(_has_array(a) for a in args):
                unimplemented("indexing an ndarray with an array (data-dependent shape)")
            return trace_numpy_op(tx, methods[name], [self, *args], kwargs)
        if name == "__setitem__":
            unimplemented("ndarray.__setitem__: a write to memory shared with a tensor")
        unimplemented(f"ndarray.{name}() is not traced (not in the numpy table of "
                      "variables/numpy.py)")

    def has_unpack_var_sequence(self, tx) -> bool:
        return False

    def reconstruct(self, codegen) -> None:
        """An array leaving the graph is made a real one (torch's ``to_numpy_helper``)."""
        from ..codegen import GRAPH_OUT

        idx = codegen.graph_output_index.get(id(self.proxy))
        if idx is None and self.source is not None:
            self.source.reconstruct(codegen)  # an input array, unchanged: itself
            return
        if idx is None:
            unimplemented("an ndarray with neither a graph output nor a source")
        if self.scalar_type is not None:
            codegen.load_global_object("___to_numpy_scalar", to_numpy_scalar)
        else:
            codegen.load_global_object("___to_numpy", to_numpy)
        codegen.load_local(GRAPH_OUT)
        codegen.load_const(idx)
        codegen.binary_subscr()
        codegen.call(1)

    def __repr__(self) -> str:
        return f"NumpyNdarrayVariable({self.proxy.name})"


def to_numpy(t):
    """A tensor out of the graph as the ndarray the user's code holds (sharing memory)."""
    return t.detach().numpy()


def to_numpy_scalar(t):
    """... and as a numpy scalar where numpy returns one (``a.sum()``: ``np.float32``)."""
    return t.detach().numpy()[()]


def ndarray_as_tensor(value):
    """An ndarray (or numpy scalar) of the frame as the tensor its graph input is."""
    from ... import from_numpy

    return from_numpy(np.asarray(value))


class NumpyVariable(VariableTracker):
    """A numpy function, ufunc or type (``np.sin``, ``np.mean``, ``np.float32``)."""

    def __init__(self, value, source=None):
        super().__init__(source)
        self.value = value

    def python_type(self) -> type:
        return type(self.value)

    def as_python_constant(self):
        return self.value

    def call_function(self, tx, args, kwargs):
        from .. import config

        fn, table = self.value, numpy_table("functions")
        name = getattr(fn, "__name__", repr(fn))
        if not config.trace_numpy:
            unimplemented(f"np.{name}: numpy calls are not traced (config.trace_numpy is off)")
        if any(_has_array(a) for a in [*args, *kwargs.values()]):
            if fn in table:
                return trace_numpy_op(tx, table[fn], list(args), kwargs)
            unimplemented(f"np.{name} is not traced (not in the numpy table of "
                          "variables/numpy.py)")
        pure = fn in table or (isinstance(fn, type) and issubclass(fn, np.generic))
        if pure and all(a.is_python_constant() for a in [*args, *kwargs.values()]):
            value = fn(*[a.as_python_constant() for a in args],
                       **{k: v.as_python_constant() for k, v in kwargs.items()})
            if isinstance(value, (np.generic, int, float, bool)):  # np.float32(2): folded
                return ConstantVariable(value)
        unimplemented(f"np.{name}(...) without an ndarray argument is not traced")

    def __repr__(self) -> str:
        return f"NumpyVariable({getattr(self.value, '__name__', self.value)})"


def _has_array(vt) -> bool:
    from .lists import BaseListVariable

    if isinstance(vt, TensorVariable):
        return True
    if isinstance(vt, BaseListVariable):
        return any(_has_array(i) for i in vt.items)
    return False


def has_ndarray(vt) -> bool:
    """An ndarray tracker in ``vt`` (a tracker, nested lists)?"""
    from .lists import BaseListVariable

    if isinstance(vt, BaseListVariable):
        return any(has_ndarray(i) for i in vt.items)
    return isinstance(vt, NumpyNdarrayVariable)


def is_numpy_object(value) -> bool:
    """numpy's functions, ufuncs and scalar types (read from the ``np`` module)."""
    module = getattr(value, "__module__", None) or ""
    return callable(value) and module.split(".")[0] == "numpy"


# ---------------------------------------------------------------- where ndarrays are made
def tensor_to_numpy(tx, tensor, args, kwargs):
    """``t.numpy()``: a ``view_as`` node seen as an ndarray (torch's ``method_numpy``)."""
    from .. import config

    ex = tensor.example_value
    if not config.trace_numpy:
        unimplemented("data-dependent operation: Tensor.numpy() (config.trace_numpy is off)")
    if args or kwargs:
        unimplemented("Tensor.numpy() with arguments (force=) is not traced")
    if ex.requires_grad:
        unimplemented("Tensor.numpy() of a tensor that requires grad (eager mode raises)")
    if ex.device.type != "cpu":
        unimplemented(f"Tensor.numpy() of a tensor on {ex.device} (eager mode raises)")
    out = tx.output.call(tx, "call_method", "view_as", [tensor, tensor], {})
    return NumpyNdarrayVariable(out.proxy, out.example_value)


def wrap_numpy_input(tx, source, value):
    """An ndarray / numpy scalar read from the frame: a graph input ``from_numpy(a)``."""
    from ..source import NumpyTensorSource

    try:
        tensor = ndarray_as_tensor(value)
    except TypeError as e:
        unimplemented(f"an ndarray input of dtype {value.dtype}: {e}")
    tx.output.guards.add("TYPE_MATCH", source, value=value)
    vt = tx.output.add_graph_input(tx, NumpyTensorSource(source), tensor)
    scalar = type(value) if isinstance(value, np.generic) else None
    return NumpyNdarrayVariable(vt.proxy, vt.example_value, source, scalar)


def from_numpy_call(tx, fn, args, kwargs):
    """``mtc.from_numpy(a)`` / ``mtc.as_tensor(a)`` of a traced array: an ``as_tensor`` node
    giving the tensor (torch's ``handle_from_numpy``); other mtc calls on arrays break."""
    import minitorch_compile as mtc

    if fn in (mtc.from_numpy, mtc.as_tensor) and len(args) == 1 and not kwargs and \
            isinstance(args[0], NumpyNdarrayVariable) and args[0].scalar_type is None:
        return tx.output.call(tx, "call_function", mtc.as_tensor, [_plain_tensor(args[0])], {})
    unimplemented(f"mtc.{getattr(fn, '__name__', fn)} of an ndarray is not traced")


def numpy_builtin(tx, fn, args, kwargs):
    """A Python builtin / operator with an ndarray argument (None: the usual handling)."""
    if fn in INPLACE_OPERATORS:
        unimplemented(f"{fn.__name__} on an ndarray: a write to memory shared with a tensor")
    if fn is abs:  # the builtin is the operator
        fn = operator.abs
    if fn in OPERATORS and not kwargs:
        return trace_numpy_op(tx, OPERATORS[fn], list(args), {})
    if fn is operator.getitem and isinstance(args[0], NumpyNdarrayVariable):
        return args[0].call_method(tx, "__getitem__", list(args[1:]), kwargs)
    if fn in (len, isinstance, type, operator.is_, operator.is_not):
        return None
    unimplemented(f"{getattr(fn, '__name__', fn)}() of an ndarray needs its values (not "
                  "traced)")
