"""The numpy table: which numpy function, ndarray method and operator is traced as which mtc op.

Part of ``variables/numpy.py`` (torch's ``torch/_numpy`` — numpy's API written over tensors —
read as a table).  Each row is a ``NumpyOp``: numpy's own callable (run on dummies to learn
numpy's result dtype, shape and scalar-ness), the graph node's kind and target, how numpy's
arguments become the op's, and whether the op may compute in numpy's result dtype.  A call not
found here is a graph break naming it.  Adding a row is the whole work of tracing one more
numpy call (the differential tests in ``tests/test_dynamo_numpy.py`` then cover it).
"""

from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..exc import unimplemented
from .constant import ConstantVariable

# ---------------------------------------------------------------- the table
# numpy's arguments are passed on to the mtc op unchanged ("same"), or mapped:
#   "reduction"  (a, axis=None, keepdims=False)  -> op(a, dim=axis, keepdim=keepdims)
#   "reshape"    (a, *shape) / (a, shape)        -> a.reshape(shape)
#   "transpose"  (a, *axes) / (a, axes)          -> a.permute(axes or reversed dims)
#   "astype"     (a, dtype)                      -> a.to(mtc dtype)
#   "sequence"   ([a, b, ...], axis=0)           -> op([a, b, ...], dim=axis)


@dataclass(frozen=True)
class NumpyOp:
    numpy: Callable     # what eager mode calls: run on dummies to learn numpy's result
    kind: str           # "call_function" / "call_method" node of the graph
    target: object      # the mtc op (a function, or a Tensor method's name)
    args: str = "same"  # how numpy's arguments become the op's (see above)
    cast: bool = True   # compute in numpy's result dtype when mtc's would differ


def _function(fn, target, kind="call_function", args="same", cast=True) -> NumpyOp:
    return NumpyOp(fn, kind, target, args, cast)


def _mtc(name: str):
    import minitorch_compile as mtc

    return getattr(mtc, name)


_UNARY_UFUNCS = {np.sin: "sin", np.cos: "cos", np.exp: "exp", np.log: "log",
                 np.sqrt: "sqrt", np.tanh: "tanh", np.abs: "abs", np.absolute: "abs",
                 np.negative: "neg", np.sign: "sign", np.square: "square",
                 np.floor: "floor", np.ceil: "ceil", np.trunc: "trunc", np.rint: "round"}
_BINARY_UFUNCS = {np.add: operator.add, np.subtract: operator.sub,
                  np.multiply: operator.mul, np.divide: operator.truediv,
                  np.true_divide: operator.truediv, np.floor_divide: operator.floordiv,
                  np.power: operator.pow, np.matmul: operator.matmul,
                  np.greater: operator.gt, np.less: operator.lt, np.equal: operator.eq,
                  np.not_equal: operator.ne, np.greater_equal: operator.ge,
                  np.less_equal: operator.le}
_REDUCTIONS = {np.sum: "sum", np.mean: "mean", np.max: "amax", np.amax: "amax",
               np.min: "amin", np.amin: "amin", np.prod: "prod"}
_COMPARISONS = {operator.gt, operator.lt, operator.eq, operator.ne, operator.ge, operator.le}


def _functions() -> dict:
    """numpy function -> NumpyOp (``np.sin(a)``, ``np.mean(a, axis=0)``, ``np.where(...)``)."""
    table = {f: _function(f, name, "call_method") for f, name in _UNARY_UFUNCS.items()}
    table.update({f: _function(f, op, cast=op not in _COMPARISONS)
                  for f, op in _BINARY_UFUNCS.items()})
    table.update({f: _function(f, name, "call_method", "reduction")
                  for f, name in _REDUCTIONS.items()})
    table.update({
        np.maximum: _function(np.maximum, _mtc("maximum")),
        np.minimum: _function(np.minimum, _mtc("minimum")),
        np.where: _function(np.where, _mtc("where")),
        np.reshape: _function(np.reshape, "reshape", "call_method", "reshape"),
        np.transpose: _function(np.transpose, "permute", "call_method", "transpose"),
        np.concatenate: _function(np.concatenate, _mtc("cat"), args="sequence"),
        np.stack: _function(np.stack, _mtc("stack"), args="sequence"),
    })
    return table


def _methods() -> dict:
    """ndarray method -> NumpyOp (``a.sum(axis=1)``, ``a.astype(np.float64)``, ``a.T``)."""
    table = {name: NumpyOp(getattr(np.ndarray, name), "call_method", target, "reduction")
             for name, target in (("sum", "sum"), ("mean", "mean"), ("max", "amax"),
                                  ("min", "amin"), ("prod", "prod"))}
    table.update({
        "reshape": NumpyOp(np.ndarray.reshape, "call_method", "reshape", "reshape"),
        "transpose": NumpyOp(np.ndarray.transpose, "call_method", "permute", "transpose"),
        "T": NumpyOp(np.transpose, "call_method", "permute", "transpose"),
        "astype": NumpyOp(np.ndarray.astype, "call_method", "to", "astype", cast=False),
        "copy": NumpyOp(np.ndarray.copy, "call_method", "clone"),
        "flatten": NumpyOp(np.ndarray.flatten, "call_method", "flatten"),
        "__getitem__": NumpyOp(operator.getitem, "call_function", operator.getitem,
                               cast=False),
    })
    return table


# Python operators on arrays: the operator itself is both numpy's call and the graph's op
OPERATORS = {op: NumpyOp(op, "call_function", op, cast=op not in _COMPARISONS)
             for op in (operator.add, operator.sub, operator.mul, operator.truediv,
                        operator.floordiv, operator.pow, operator.matmul, operator.mod,
                        operator.neg, operator.pos, operator.abs, *_COMPARISONS)}
# integer results where numpy and mtc part on the *values*: numpy gives 0 for x // 0 and x % 0
# (with a warning) where mtc raises ZeroDivisionError as torch does, and an integer array to a
# negative power is numpy's error.  Traced only when the right operand is a constant passing:
INT_RIGHT_OPERAND = {operator.floordiv: lambda v: v != 0, operator.mod: lambda v: v != 0,
                     operator.pow: lambda v: v >= 0}
INPLACE_OPERATORS = {operator.iadd, operator.isub, operator.imul, operator.itruediv,
                     operator.ifloordiv, operator.ipow, operator.imatmul, operator.imod,
                     operator.iand, operator.ior, operator.ixor, operator.setitem}

_TABLES: dict = {}


def numpy_table(which: str) -> dict:
    if not _TABLES:
        _TABLES.update(functions=_functions(), methods=_methods())
    return _TABLES[which]


def mtc_dtype(np_dtype):
    from ... import _dtype

    try:
        return _dtype.from_numpy_dtype(np_dtype)
    except TypeError:
        unimplemented(f"numpy dtype {np_dtype} has no mtc dtype")


# ---------------------------------------------------------------- numpy's arguments -> mtc's
def _same(tx, args, kwargs):
    if kwargs:  # out=, where=, dtype=, casting=: not traced
        unimplemented(f"numpy keyword arguments {sorted(kwargs)} are not traced")
    return list(args), {}


def _reduction(tx, args, kwargs):
    names = ("axis", "dtype", "out", "keepdims")
    given = dict(zip(names, args[1:]), **kwargs)
    if len(args) > 1 + len(names) or set(given) - {"axis", "keepdims"}:
        unimplemented(f"a numpy reduction with {sorted(set(given) - {'axis', 'keepdims'})}")
    mkwargs = {}
    axis = given.get("axis", ConstantVariable(None))
    if not (axis.is_python_constant() and axis.as_python_constant() is None):
        mkwargs["dim"] = axis
    keep = given.get("keepdims", ConstantVariable(False))
    if not keep.is_python_constant():
        unimplemented("keepdims that is not a constant")
    if keep.as_python_constant():
        mkwargs["keepdim"] = ConstantVariable(True)
    return [args[0]], mkwargs


def _reshape(tx, args, kwargs):
    if kwargs:  # order=, copy=
        unimplemented(f"reshape with {sorted(kwargs)}")
    return list(args), {}


def _transpose(tx, args, kwargs):
    from .lists import TupleVariable

    axes = list(args[1:]) or ([kwargs.pop("axes")] if "axes" in kwargs else [])
    if kwargs:
        unimplemented(f"transpose with {sorted(kwargs)}")
    if not axes or (len(axes) == 1 and axes[0].is_python_constant() and
                    axes[0].as_python_constant() is None):
        ndim = args[0].example_value.ndim
        axes = [TupleVariable([ConstantVariable(d) for d in reversed(range(ndim))])]
    return [args[0], *axes], {}


def _astype(tx, args, kwargs):
    if kwargs or len(args) != 2 or not args[1].is_python_constant():
        unimplemented("astype with more than a constant dtype")
    try:
        npd = np.dtype(args[1].as_python_constant())
    except TypeError:
        unimplemented(f"astype({args[1]}): not a numpy dtype")
    return [args[0], ConstantVariable(mtc_dtype(npd))], {}


def _sequence(tx, args, kwargs):
    given = dict(zip(("arrays", "axis"), args), **kwargs)
    axis = given.pop("axis", ConstantVariable(0))
    if set(given) != {"arrays"} or not axis.is_python_constant() or \
            axis.as_python_constant() is None:
        unimplemented("concatenate/stack with more than arrays and a constant axis")
    return [given["arrays"]], {"dim": axis}


ARG_MAPPERS = {"same": _same, "reduction": _reduction, "reshape": _reshape,
                "transpose": _transpose, "astype": _astype, "sequence": _sequence}
