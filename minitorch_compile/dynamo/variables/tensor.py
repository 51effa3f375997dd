"""Tensors in the tracer: a graph node plus a fake example value (``variables/tensor.py``).

A ``TensorVariable`` stands for a tensor the graph computes (or takes as input).  It carries

* ``proxy`` — the fx node producing it;
* ``example_value`` — a ``FakeTensor`` with its shape, dtype, device and strides, computed by
  running the same op on fake inputs.  Metadata questions (``x.shape``, ``x.dtype``,
  ``x.dim()``) are answered from it at compile time and become constants; questions about
  *values* (``x.item()``, ``if x.sum() > 0:``) cannot be, and are reported as unsupported.

Every other method call becomes a ``call_method`` node (``l_x_.cos()``), Python operators
become ``call_function`` nodes on ``operator.*`` (``mul = l_x_ * 2``), as in torch's graphs.
"""

from __future__ import annotations

import operator

from ..._size import Size
from ..._tensor import Tensor
from ..exc import unimplemented
from ..symbolic_scalars import GuardOnDataDependentSymNode, is_sym_scalar
from ..symbolic_shapes import is_symbolic
from .base import VariableTracker
from .constant import ConstantVariable, is_constant_value
from .lists import ListVariable, NamedTupleVariable, SizeVariable, TupleVariable

# metadata attributes answered at compile time (TENSOR_MATCH guards pin all of them, but for
# the is_leaf of an input)
_CONST_ATTRS = {"dtype", "device", "ndim", "requires_grad", "is_leaf", "is_cuda", "is_npu",
                "is_cpu", "is_meta", "layout"}
_CONST_METHODS = {"size", "dim", "ndimension", "numel", "nelement", "stride", "is_contiguous",
                  "is_floating_point", "is_complex", "element_size", "__len__"}
_DATA_DEPENDENT = {"item", "tolist", "__bool__", "__int__", "__float__", "__index__",
                   "data_ptr", "__array__"}
_AUTOGRAD_STATE = {"backward", "register_hook", "retain_grad", "grad", "grad_fn", "_version",
                   "_base", "data", "requires_grad_"}


class TensorVariable(VariableTracker):
    def __init__(self, proxy, example_value, source=None, class_type=Tensor):
        super().__init__(source)
        self.proxy = proxy
        self.example_value = example_value
        self.class_type = class_type

    def python_type(self) -> type:
        return self.class_type

    def bool_value(self, tx) -> bool:
        unimplemented("data-dependent branching: the truth value of a tensor (`if tensor:`) is "
                      "only known at run time")

    def size_item(self, tx, dim: int):
        """``x.size(dim)``: a constant, or — for a dynamic dimension — its symbol, a graph
        input (``bound_symbols.py``)."""
        s = self.example_value.shape[dim]
        if is_symbolic(s):
            return tx.output.sym_size(tx, self, dim)
        return ConstantVariable(s)

    def shape_variable(self, tx):
        return SizeVariable([self.size_item(tx, d) for d in range(self.example_value.ndim)])

    def var_getattr(self, tx, name):
        ex = self.example_value
        if name == "shape":
            return self.shape_variable(tx)
        if name == "__class__":  # pinned by TENSOR_MATCH
            from .user_defined import UserDefinedClassVariable

            return UserDefinedClassVariable(self.class_type)
        if name == "is_leaf" and self.proxy.op == "placeholder":
            # a fake input is always a leaf, and TENSOR_MATCH does not pin leaf-ness
            unimplemented("Tensor.is_leaf of a graph input is not known at compile time")
        if name in _CONST_ATTRS:
            return ConstantVariable(getattr(ex, name))
        if name in ("T", "mT"):
            return tx.output.call(tx, "call_function", getattr,
                                  [self, ConstantVariable(name)], {})
        if name == "grad" and self.source is not None:  # an input's grad (an optimizer step)
            from .optimizer import read_grad

            return read_grad(tx, self)
        if name in _AUTOGRAD_STATE or name in _DATA_DEPENDENT:
            unimplemented(f"Tensor.{name} reads autograd state or data (not capturable)")
        if callable(getattr(Tensor, name, None)):
            from .misc import GetAttrVariable

            return GetAttrVariable(self, name)
        unimplemented(f"Tensor attribute {name!r} is not supported")

    def store_attr(self, tx, name, value) -> None:
        if name != "grad":
            unimplemented(f"assigning Tensor.{name} inside compiled code")
        from .optimizer import store_grad

        store_grad(tx, self, value)

    def call_method(self, tx, name, args, kwargs):
        ex = self.example_value
        if name in _CONST_METHODS:
            consts = [a.as_python_constant() for a in args]
            if name == "size" and not kwargs:
                if not consts:
                    return self.shape_variable(tx)
                return self.size_item(tx, consts[0] % max(ex.ndim, 1))
            if name == "stride" and any(map(is_symbolic, ex.shape)):
                for s in ex.shape:  # the fake's strides are those of the hints: specialise
                    if is_symbolic(s):  # every symbolic size (guarded == hint) to use them
                        int(s)
            value = getattr(ex, name)(*consts, **{k: v.as_python_constant()
                                                  for k, v in kwargs.items()})
            if is_symbolic(value):  # numel() of a dynamic tensor
                return tx.output.call(tx, "call_method", name, [self] + list(args), kwargs)
            if isinstance(value, tuple) and any(map(is_symbolic, value)):
                unimplemented(f"Tensor.{name}() of a dynamic-shape tensor")
            if isinstance(value, Size):
                return SizeVariable([ConstantVariable(s) for s in value])
            if isinstance(value, tuple):
                return TupleVariable([ConstantVariable(s) for s in value])
            return ConstantVariable(value)
        if name == "numpy":  # an ndarray backed by the tensor (variables/numpy.py)
            from .numpy import tensor_to_numpy

            return tensor_to_numpy(tx, self, args, kwargs)
        if name == "item" and not args and not kwargs:
            captured = capture_item(tx, self)
            if captured is not None:
                return captured
        if name in _DATA_DEPENDENT:
            unimplemented(f"data-dependent operation: Tensor.{name}() needs the tensor's values, "
                          "which are only known at run time")
        if name in _AUTOGRAD_STATE:
            unimplemented(f"Tensor.{name}() inside a compiled region is not supported")
        if name == "__getitem__":
            return tx.output.call(tx, "call_function", operator.getitem, [self] + args, kwargs)
        if name == "__setitem__":
            return tx.output.call(tx, "call_function", operator.setitem, [self] + args, kwargs)
        out = tx.output.call(tx, "call_method", name, [self] + list(args), kwargs)
        if name.endswith("_") and not name.endswith("__"):
            return same_tensor_after_inplace(self, out)
        return out

    def has_unpack_var_sequence(self, tx) -> bool:
        return self.example_value.ndim > 0

    def unpack_var_sequence(self, tx) -> list:
        n = self.example_value.shape[0] if self.example_value.ndim else 0
        return [tx.output.call(tx, "call_function", operator.getitem,
                               [self, ConstantVariable(i)], {}) for i in range(n)]

    def reconstruct(self, codegen) -> None:
        codegen.reconstruct_tensor(self)

    def __repr__(self) -> str:
        return f"TensorVariable({self.proxy.name})"


class SymNodeVariable(VariableTracker):
    """A symbolic number: a graph node computing it at run time, and its ``SymInt`` (a size,
    ``x.shape[0]``) or ``SymScalar`` (a float argument, an ``.item()``; see
    ``symbolic_scalars.py``) — expression and hint — for the tracer.

    Arithmetic on it makes more nodes (``mul = size * 2``); a *decision* on it — a comparison,
    ``if n:``, using it as a plain int (``range(n)``) — is answered by the hint and guarded.
    An unbacked symbol (no hint) cannot be decided: that is a graph break.
    """

    def __init__(self, proxy, sym):
        super().__init__()
        self.proxy = proxy
        self.sym = sym

    def python_type(self) -> type:
        return getattr(self.sym, "pytype", int)

    def is_python_constant(self) -> bool:
        return False  # asking must not specialise

    def as_python_constant(self):
        with _data_dependent_is_a_break("its value"):  # specialise: guarded equal to the hint
            return self.python_type()(self.sym)

    def bool_value(self, tx) -> bool:
        with _data_dependent_is_a_break("branching on it"):
            return bool(self.sym)

    def reconstruct(self, codegen) -> None:
        codegen.reconstruct_tensor(self)  # a graph output, like a tensor

    def __repr__(self) -> str:
        return f"SymNodeVariable({self.sym})"


class _data_dependent_is_a_break:
    """A decision on an unbacked symbol becomes a graph break (torch's GuardOnDataDependent)."""

    def __init__(self, what: str):
        self.what = what

    def __enter__(self):
        return self

    def __exit__(self, typ, exc, tb):
        if typ is GuardOnDataDependentSymNode:
            unimplemented(f"data-dependent guard: {self.what} needs a value only known at run "
                          f"time ({exc})")
        return False


def capture_item(tx, tensor: TensorVariable):
    """``t.item()`` with ``capture_scalar_outputs`` on: an ``item`` node whose value is a new
    unbacked symbol (``zuf0`` of a float tensor, ``u0`` of an int one); None when off."""
    from .. import config

    ex = tensor.example_value
    if not config.capture_scalar_outputs or ex.numel() != 1:
        return None
    if ex.dtype.is_floating_point:
        pytype = float
    elif ex.dtype.name.startswith(("int", "uint")):
        pytype = int
    else:  # bool, complex: not captured here
        return None
    sym = tx.output.scalar_env.create_unbacked(pytype)
    node = tx.output.graph.call_method("item", (tensor.proxy,))
    node.meta["example_value"] = sym
    node.meta["stack_trace"] = tx.current_user_line()
    return SymNodeVariable(node, sym)


def same_tensor_after_inplace(vt, out):
    """``p -= lr * g`` / ``p.add_(g)``: the result *is* ``p`` (same object, same source), as in
    Python — so ``p.grad`` or a store after it still reaches the input.  Later graph ops read
    the input's node, which the in-place node has updated by then (functionalization makes
    that explicit for AOT)."""
    if isinstance(out, TensorVariable) and isinstance(vt, TensorVariable):
        a, b = vt.example_value, out.example_value
        if a.shape == b.shape and a.dtype == b.dtype and a.requires_grad == b.requires_grad:
            return vt
    return out


def wrap_fx_proxy(tx, node, example) -> VariableTracker:
    """Wrap a node's example value as a tracker (tuples of tensors get ``getitem`` nodes)."""
    from ...nn import Parameter

    if isinstance(example, Tensor):
        cls = Parameter if isinstance(example, Parameter) else Tensor
        return TensorVariable(node, example, class_type=cls)
    if is_symbolic(example) or is_sym_scalar(example):
        return SymNodeVariable(node, example)
    if isinstance(example, (tuple, list)):
        items = []
        for i, e in enumerate(example):
            if isinstance(e, Tensor):
                item = tx.output.graph.call_function(operator.getitem, (node, i))
                item.meta["example_value"] = e
                items.append(TensorVariable(item, e))
            elif is_constant_value(e):
                items.append(ConstantVariable(e))
            else:
                unimplemented(f"op returned a {type(e).__name__} inside a sequence")
        if isinstance(example, tuple) and hasattr(example, "_fields"):
            return NamedTupleVariable(items, type(example))
        if isinstance(example, Size):
            return SizeVariable(items)
        return TupleVariable(items) if isinstance(example, tuple) else ListVariable(items)
    if is_constant_value(example):
        return ConstantVariable(example)
    unimplemented(f"op returned an unsupported value of type {type(example).__name__}")
