"""The public torch-style API: ``mtc.cos(x)``, ``mtc.zeros(2, 3)``, ``mtc.tensor([...])``.

Mirrors the generated Python bindings (``torch/_C/_VariableFunctions``, ``python_arg_parser``).
Most functions are *generated from the op table*: for each op a real Python function with the
schema's signature (``self`` renamed ``input``, as torch does) that binds its arguments and calls
the dispatcher.  The few torch functions whose Python signature differs from their schema
(varargs sizes, overloads such as ``max(x)`` / ``max(x, dim)`` / ``max(x, y)``,
``requires_grad=`` on factories) are written by hand below, the factories in
``_tensor_factories.py``.

Tensor methods and operators are attached in ``_tensor_methods.py``.
"""

from __future__ import annotations

import builtins as _builtins
import collections

import numpy as np

from . import _dtype, _random
from ._dispatch import dispatch
from ._dtype import bool_ as bool  # noqa: A001 - mtc.bool, as torch.bool
from ._dtype import float32, float64, int64  # noqa: F401
from ._tensor import Tensor

# the op table must be declared before functions are generated from it
from .ops._ops import ops  # noqa: E402

builtins_bool = _builtins.bool

# ops that are not public functions in torch (internal, or reached via nn.functional)
_NOT_PUBLIC = {"slice", "slice_backward", "select_backward", "embedding_dense_backward",
               "cross_entropy_loss", "nll_loss", "mse_loss", "linear", "gelu", "_to_copy",
               "sum_to_size", "copy_", "detach", "contiguous", "t", "reshape", "view",
               "split", "expand", "max", "min", "sum", "mean", "amax", "amin", "var", "std",
               "full", "zeros", "ones", "empty", "randn", "rand", "arange", "argmax", "argmin",
               "all", "any", "zeros_like", "ones_like", "empty_like", "randn_like",
               "rand_like", "full_like", "squeeze", "where", "flatten", "unbind", "alias",
               "clamp", "var_mean", "repeat", "scatter_add_", "scatter", "linspace", "randint",
               "randperm", "l1_loss", "hardtanh", "hardswish", "hardsigmoid",
               "silu"}


def generate_function(op, name: str, first: str = "input"):
    """A Python function with ``op``'s schema signature that calls the dispatcher."""
    schema = op.schema
    fn = schema.python_function(name, "_dispatch(_op, ARGS)", {"self": first},
                                {"_dispatch": dispatch, "_op": op})
    fn.__doc__ = f"``{op.namespace}::{schema}`` (generated from the op table)"
    fn.__module__ = "minitorch_compile"
    fn._mtc_op = op
    return fn


def _generate_all(namespace: dict) -> None:
    for packet in ops.aten:
        if packet.name in _NOT_PUBLIC or packet.name.startswith("_"):
            continue
        if len(packet.overloads) == 1:
            op = next(iter(packet.overloads.values()))
            if op.schema.is_mutable:
                continue
            namespace[packet.name] = generate_function(op, packet.name)


_generate_all(globals())

# ---------------------------------------------------------------- factories
# written by hand in _tensor_factories.py; imported after the generated functions, which they
# replace, and re-exported (``mtc.zeros`` ...)
from ._tensor_factories import (  # noqa: E402, F401
    _opt_dtype,
    _sizes,
    arange,
    as_tensor,
    empty,
    empty_like,
    from_numpy,
    full,
    full_like,
    linspace,
    ones,
    ones_like,
    rand,
    rand_like,
    randint,
    randn,
    randn_like,
    randperm,
    scalar_tensor,
    tensor,
    zeros,
    zeros_like,
)

_aten = ops.aten

# ---------------------------------------------------------------- overloaded reductions

return_types = collections.namedtuple("return_types", [])  # namespace holder
max_result = collections.namedtuple("max", ["values", "indices"])
min_result = collections.namedtuple("min", ["values", "indices"])


def _reduce_or_pair(name, full_op, dim_op, pair_op, result_cls):
    def fn(input, dim=None, keepdim=False, *, other=None):  # noqa: A002
        if isinstance(dim, Tensor):
            return pair_op(input, dim)
        if other is not None:
            return pair_op(input, other)
        if dim is None:
            return full_op(input)
        return result_cls(*dim_op(input, dim, keepdim))
    fn.__name__ = name
    fn.__doc__ = (f"``{name}(input)``, ``{name}(input, dim, keepdim=False)`` -> (values, "
                  f"indices), or ``{name}(input, other)`` (elementwise)")
    return fn


max = _reduce_or_pair("max", _aten.max.default, _aten.max.dim, _aten.maximum,  # noqa: A001
                      max_result)
min = _reduce_or_pair("min", _aten.min.default, _aten.min.dim, _aten.minimum,  # noqa: A001
                      min_result)


def sum(input, dim=None, keepdim=False, *, dtype=None):  # noqa: A001,A002
    return _aten.sum(input, dim, keepdim, dtype=_opt_dtype(dtype))


def mean(input, dim=None, keepdim=False, *, dtype=None):  # noqa: A002
    return _aten.mean(input, dim, keepdim, dtype=_opt_dtype(dtype))


def amax(input, dim=(), keepdim=False):  # noqa: A002
    return _aten.amax(input, dim, keepdim)


def amin(input, dim=(), keepdim=False):  # noqa: A002
    return _aten.amin(input, dim, keepdim)


def argmax(input, dim=None, keepdim=False):  # noqa: A002
    return _aten.argmax(input, dim, keepdim)


def argmin(input, dim=None, keepdim=False):  # noqa: A002
    return _aten.argmin(input, dim, keepdim)


def all(input, dim=None, keepdim=False):  # noqa: A001,A002
    return _aten.all(input, dim, keepdim)


def any(input, dim=None, keepdim=False):  # noqa: A001,A002
    return _aten.any(input, dim, keepdim)


def _var_args(dim, unbiased, correction, keepdim):
    if isinstance(dim, (builtins_bool,)):  # var(x, True): the legacy ``unbiased`` form
        dim, unbiased = None, dim
    if unbiased is not None:
        if correction is not None:
            raise TypeError("var(): cannot pass both unbiased and correction")
        correction = 1 if unbiased else 0
    return dim, correction, keepdim


def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None):  # noqa: A002
    dim, correction, keepdim = _var_args(dim, unbiased, correction, keepdim)
    return _aten.var(input, dim, correction=correction, keepdim=keepdim)


def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):  # noqa: A002
    dim, correction, keepdim = _var_args(dim, unbiased, correction, keepdim)
    return _aten.var_mean(input, dim, correction=correction, keepdim=keepdim)


def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None):  # noqa: A002
    dim, correction, keepdim = _var_args(dim, unbiased, correction, keepdim)
    return _aten.std(input, dim, correction=correction, keepdim=keepdim)


def where(condition, input=None, other=None):  # noqa: A002
    if input is None and other is None:  # torch: nonzero(condition, as_tuple=True)
        from ._api_extra import nonzero

        return nonzero(condition, as_tuple=True)
    return _aten.where(condition, input, other)


def squeeze(input, dim=None):  # noqa: A002
    return _aten.squeeze(input, dim)


def flatten(input, start_dim=0, end_dim=-1):  # noqa: A002
    return _aten.flatten(input, start_dim, end_dim)


def reshape(input, shape):  # noqa: A002
    return _aten.reshape(input, _sizes((shape,)))


def unbind(input, dim=0):  # noqa: A002
    return _aten.unbind(input, dim)


def split(tensor, split_size_or_sections, dim=0):  # noqa: F811 - torch names it tensor
    return _aten.split(tensor, split_size_or_sections, dim)


def t(input):  # noqa: A002
    return _aten.t(input)


def cat(tensors, dim=0, *, out=None):
    if out is not None:
        raise NotImplementedError("cat(out=...) is not supported")
    return _aten.cat(list(tensors), dim)


concat = concatenate = cat


def stack(tensors, dim=0):
    return _aten.stack(list(tensors), dim)


def _clamp_bounds(name: str, min, max):  # noqa: A002
    """torch's argument parser choosing between ``clamp.Tensor`` and ``clamp(Scalar?, Scalar?)``.

    A Python number is not accepted where ``clamp.Tensor`` wants a tensor, so a number next to a
    tensor picks the Scalar overload; a 0-dim tensor that does not require grad is accepted as a
    Scalar there (and then promotes as a number: ``int_t.clamp(0.5, f64_0dim)`` is float32).
    Any other mix is the parser's ``TypeError``.
    """
    bounds = [min, max]
    numbers_ = [b for b in bounds if b is not None and not isinstance(b, Tensor)]
    if not numbers_ or len(numbers_) == 2 or (min is None or max is None):
        return min, max
    for i, b in enumerate(bounds):
        if isinstance(b, Tensor):
            if b.dim() != 0 or b.requires_grad:
                got = ", ".join(["Tensor"] + [type(v).__name__ if not isinstance(v, Tensor)
                                             else "Tensor" for v in bounds])
                raise TypeError(
                    f"{name}() received an invalid combination of arguments - got ({got}), but "
                    "expected one of:\n * (Tensor input, Tensor min = None, Tensor max = None)\n"
                    " * (Tensor input, Number min = None, Number max = None)")
            bounds[i] = b.item()
    return tuple(bounds)


def clamp(input, min=None, max=None):  # noqa: A001,A002
    min, max = _clamp_bounds("clamp", min, max)  # noqa: A001
    return _aten.clamp(input, min, max)  # ClampBackward0/1: autograd/node_names.py


clip = clamp


def scatter(input, dim, index, src=None, *, value=None):  # noqa: A002
    """torch's ``scatter.src`` and ``scatter.value`` (positional or ``value=``): a number
    fills a tensor of ``index``'s shape and ``input``'s dtype."""
    src = value if src is None else src
    if not isinstance(src, Tensor):
        from ._tensor_factories import full

        src = full(tuple(index.shape), src, dtype=input.dtype, device=input.device)
    return ops.aten.scatter(input, dim, index, src)


def broadcast_shapes(*shapes):
    """``torch.broadcast_shapes``: the shape all ``shapes`` broadcast to (an int is a 1-d
    shape), with torch's message naming the first argument that does not fit."""
    from ._size import Size

    shapes = [(s,) if isinstance(s, _builtins.int) else tuple(s) for s in shapes]
    out = [1] * _builtins.max((len(s) for s in shapes), default=0)
    for k, s in enumerate(shapes):
        for i in range(1, len(s) + 1):
            if s[-i] == 1 or s[-i] == out[-i]:
                continue
            if out[-i] != 1:
                raise RuntimeError(
                    f"Attempting to broadcast a dimension of length {s[-i]} at {-i}! "
                    f"Mismatching argument at index {k} had {s}; but expected shape should be "
                    f"broadcastable to {out}")
            out[-i] = s[-i]
    return Size(out)


def numel(input) -> int:  # noqa: A002
    return input.numel()


def is_tensor(obj) -> bool:
    return isinstance(obj, Tensor)


def is_floating_point(input) -> bool:  # noqa: A002
    return input.dtype.is_floating_point


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False) -> bool:  # noqa: A002
    a, b = input.detach(), other.detach() if isinstance(other, Tensor) else other
    b_data = b._data if isinstance(b, Tensor) else b
    return builtins_bool(np.allclose(a._data, b_data, rtol=rtol, atol=atol, equal_nan=equal_nan))


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):  # noqa: A002
    b = other._data if isinstance(other, Tensor) else other
    return Tensor._make(np.isclose(input.detach()._data, b, rtol=rtol, atol=atol,
                                   equal_nan=equal_nan))


def equal(input, other) -> bool:  # noqa: A002
    return tuple(input.shape) == tuple(other.shape) and builtins_bool(
        np.array_equal(input.detach()._data, other.detach()._data))


Generator = _random.Generator
default_generator = _random.default_generator
manual_seed = _random.manual_seed
seed = _random.seed
initial_seed = _random.initial_seed
get_rng_state = _random.get_rng_state
set_rng_state = _random.set_rng_state
get_default_dtype = _dtype.get_default_dtype
set_default_dtype = _dtype.set_default_dtype
promote_types = _dtype.promote_types
result_type = _dtype.result_type

# the breadth ops' hand-written functions (sort, prod, einsum, norm, ...): ``_api_more.py``
from ._api_extra import *  # noqa: E402, F401, F403
from ._api_more import *  # noqa: E402, F401, F403

arctan2 = atan2  # noqa: F405 - generated from the op table above; torch's alias
del linalg_vector_norm, linalg_cross  # noqa: F405, F821 - reached as mtc.norm, mtc.linalg.*

_HELPERS = {"generate_function", "dispatch", "as_device", "builtins_bool", "annotations",
            "return_types", "max_result", "min_result", "ops", "Tensor"}
__all__ = sorted(
    name for name, value in globals().items()
    if not name.startswith("_") and name not in _HELPERS
    and (callable(value) or isinstance(value, _dtype.dtype))
    and not isinstance(value, type(_builtins)))
