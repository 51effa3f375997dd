"""Symbolic numbers of a Dynamo graph, run as 0-d tensors (what AOTAutograd's
``_local_scalar_dense`` handling achieves in ``torch/_functorch``).

A Dynamo graph may compute Python numbers whose values are only known at run time: a float
argument read from its 0-d float64 input (``item = l_lr_.item()``, a ``SymFloat``), or a
tensor's ``.item()`` under ``capture_scalar_outputs`` (``zuf0``, ``u0``), and arithmetic on
them (``mul = item * 2``).  ``make_fx`` would run such a graph once and bake those numbers in
as constants — wrong for every later call.  So before AOTAutograd traces it, the graph is run
by ``ScalarsAsTensors``, an ``Interpreter`` that keeps every symbolic number *as a 0-d tensor*:

====================================  ==================================================
Dynamo node                           run as
====================================  ==================================================
``item = t.item()``                   ``t.detach().to(float64)`` (``int64`` for an int)
``mul = item * 2`` (number arithmetic)  the same operator on 0-d tensors; ``/`` in float64
``cos = math.cos(mul)``               ``mul.to(float64).cos()``
``mul_1 = x * item`` (tensor op)      ``x * item.to(d)``, ``d`` = the dtype the op computes
                                      in with a Python number (``result_type(x, 1.0)``),
                                      so promotion is the number's, not a 0-d tensor's
``full = full((3,), item)``           ``item.to(dtype).expand(3).clone()``
``scalar_tensor(add, dtype=f64)``     ``add.to(float64)`` (a float output of Dynamo's graph)
graph output that is a number         the 0-d tensor, turned back into a number by
                                      ``item()`` after the compiled graph ran
====================================  ==================================================

Python floats are IEEE doubles, so float64 0-d arithmetic gives the same numbers.  Any other
use of a symbolic number raises ``AOTUnsupported`` (the graph then runs eagerly, correctly).
"""

from __future__ import annotations

import math
import operator

from .. import _dtype
from .._tensor import Tensor
from ..fx.interpreter import Interpreter

_NUMBER_OPS = {operator.add, operator.sub, operator.mul, operator.truediv, operator.floordiv,
               operator.mod, operator.pow, operator.neg, operator.pos, operator.abs,
               operator.lt, operator.le, operator.gt, operator.ge, operator.eq, operator.ne}
_MATH_METHODS = {getattr(math, n): n for n in ("cos", "sin", "tan", "acos", "asin", "atan",
                                               "cosh", "sinh", "tanh", "exp", "log", "log2",
                                               "log10", "sqrt")}
_TENSOR_VALUE_OPS = {"add", "sub", "mul", "truediv", "div", "floordiv", "mod", "pow", "rsub",
                     "lt", "le", "gt", "ge", "eq", "ne", "__add__", "__radd__", "__sub__",
                     "__rsub__", "__mul__", "__rmul__", "__truediv__", "__rtruediv__", "__pow__",
                     "__rpow__", "maximum", "minimum", "iadd", "isub", "imul", "itruediv"}


def _is_number_node(n) -> bool:
    return hasattr(n, "meta") and hasattr(n.meta.get("example_value"), "pytype")


def _pytype_dtype(pytype):
    return {float: _dtype.float64, int: _dtype.int64, bool: _dtype.bool_}[pytype]


def has_symbolic_numbers(gm) -> bool:
    graph = getattr(gm, "graph", None)  # (a plain function has no graph)
    return graph is not None and any(_is_number_node(n) for n in graph.nodes)


def number_outputs(gm) -> list[int]:
    """Positions of the graph outputs that are numbers (returned as 0-d tensors)."""
    out = gm.graph.output_node().args[0]
    return [i for i, a in enumerate(out) if _is_number_node(a)]


class ScalarsAsTensors(Interpreter):
    def __init__(self, gm):
        super().__init__(gm)

    def __call__(self, *args):
        return self.run(*args)

    def run_node(self, n):
        args, kwargs = self.fetch_args_kwargs_from_env(n)
        if _is_number_node(n):
            return self._number(n, args, kwargs)
        uses = [a for a in list(n.args) + list(n.kwargs.values()) if _is_number_node(a)]
        if not uses:
            return getattr(self, n.op)(n.target, args, kwargs)
        return self._tensor_op_with_numbers(n, args, kwargs)

    def _number(self, n, args, kwargs):
        from ..aot.aot_autograd import AOTUnsupported

        want = _pytype_dtype(n.meta["example_value"].pytype)
        if n.op == "call_method" and n.target == "item":
            return args[0].detach().to(want)  # a number carries no autograd history
        if n.op == "call_function" and n.target in _MATH_METHODS and not kwargs:
            return getattr(_as_tensor(args[0]).to(_dtype.float64), _MATH_METHODS[n.target])()
        if n.op == "call_function" and n.target in _NUMBER_OPS and not kwargs:
            if n.target is operator.truediv:  # int / int is a float in Python
                args = [a.to(_dtype.float64) if isinstance(a, Tensor) else float(a)
                        for a in args]
            value = n.target(*[_as_tensor(a) for a in args])
            return value.to(want)
        raise AOTUnsupported(f"a symbolic number computed by {n.format_node()}")

    def _tensor_op_with_numbers(self, n, args, kwargs):
        from ..aot.aot_autograd import AOTUnsupported

        name = n.target if isinstance(n.target, str) else getattr(n.target, "__name__", "")
        example = n.meta.get("example_value")
        if name == "full" and not isinstance(args[0], Tensor):
            size, value = args[0], args[1]
            dtype = kwargs.get("dtype") or example.dtype
            return value.to(dtype).expand(*size).clone()
        if name == "scalar_tensor":  # a number leaving the graph as a 0-d tensor (Dynamo's)
            return _as_tensor(args[0]).to(kwargs.get("dtype") or example.dtype).clone()
        if name not in _TENSOR_VALUE_OPS or kwargs or not isinstance(example, Tensor):
            raise AOTUnsupported(f"a symbolic number used by {n.format_node()}")
        operands = [_example(a) for a in n.args]
        compute = _dtype.result_type(*operands)  # as with a Python number
        args = [a.to(compute) if _is_number_node(node) else a
                for a, node in zip(args, n.args)]
        return getattr(self, n.op)(n.target, tuple(args), kwargs)


def _as_tensor(a):
    if isinstance(a, Tensor):
        return a
    from .. import tensor

    return tensor(a, dtype=_dtype.float64 if isinstance(a, float) else _dtype.int64)


def _example(a):
    """An operand for ``result_type``: the fake tensor, or a plain number of the node's kind."""
    if not hasattr(a, "meta"):
        return a
    ex = a.meta.get("example_value")
    if hasattr(ex, "pytype"):
        return {float: 1.0, int: 1, bool: True}[ex.pytype]
    return getattr(ex, "hint", ex)
