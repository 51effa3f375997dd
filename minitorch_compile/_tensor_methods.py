"""Tensor methods and operators (``torch/csrc/autograd/python_variable_methods.cpp``).

Methods whose signature is the schema's (``x.cos()``, ``x.add(y, alpha=2)``, ``x.add_(y)``) are
generated from the op table; torch's varargs and overloads (``x.view(2, 3)``,
``x.max(dim)``, ``x.to(...)``) and the Python operators are written here.  ``x += y`` is an
in-place ``add_``, as in torch.
"""

from __future__ import annotations

from . import _api as F
from . import _dtype
from ._device import as_device
from ._tensor import Tensor
from .ops._ops import ops

_aten = ops.aten

# schema-shaped methods, generated
_GENERATED_METHODS = """
neg abs sign exp log sin cos tanh sigmoid relu sqrt rsqrt reciprocal erf clone
add sub mul div pow maximum minimum eq ne lt le gt ge logical_not logical_and logical_or
transpose unsqueeze select mm bmm matmul softmax log_softmax detach
chunk unbind log2 log1p expm1 isnan isinf isfinite signbit remainder fmod
bitwise_and bitwise_or bitwise_xor bitwise_not clamp_min clamp_max
logsumexp addmm index_select gather scatter_add narrow
square sgn
""".split()
_INPLACE = "neg_ abs_ sign_ exp_ log_ sin_ cos_ tanh_ sigmoid_ relu_ sqrt_ rsqrt_ reciprocal_ " \
           "erf_ add_ sub_ mul_ div_ pow_ gelu_ copy_ log2_ log1p_ expm1_ remainder_ fmod_ " \
           "bitwise_and_ bitwise_or_ bitwise_xor_ bitwise_not_".split()


def _install_generated():
    for name in _GENERATED_METHODS + _INPLACE:
        packet = getattr(_aten, name)
        (op,) = packet.overloads.values()
        setattr(Tensor, name, F.generate_function(op, name, first="self"))


_install_generated()


def _method(fn):
    setattr(Tensor, fn.__name__, fn)
    return fn


@_method
def clamp(self, min=None, max=None):  # noqa: A002
    return F.clamp(self, min, max)


Tensor.clip = clamp


@_method
def scatter(self, dim, index, src=None, *, value=None):
    return F.scatter(self, dim, index, src, value=value)


@_method
def clamp_(self, min=None, max=None):  # noqa: A002
    return _aten.clamp_(self, *F._clamp_bounds("clamp_", min, max))


# ---------------------------------------------------------------- shapes (varargs forms)


@_method
def view(self, *shape):
    if len(shape) == 1 and isinstance(shape[0], _dtype.dtype):
        raise NotImplementedError("view(dtype) is not supported")
    return _aten.view(self, F._sizes(shape))


@_method
def reshape(self, *shape):
    return _aten.reshape(self, F._sizes(shape))


@_method
def expand(self, *sizes):
    return _aten.expand(self, F._sizes(sizes))


@_method
def permute(self, *dims):
    return _aten.permute(self, F._sizes(dims))


@_method
def flatten(self, start_dim=0, end_dim=-1):
    return _aten.flatten(self, start_dim, end_dim)


@_method
def squeeze(self, dim=None):
    return _aten.squeeze(self, dim)


@_method
def t(self):
    return _aten.t(self)


@_method
def contiguous(self, memory_format=None):
    return _aten.contiguous(self)


@_method
def split(self, split_size, dim=0):
    return _aten.split(self, split_size, dim)


@_method
def flip(self, *dims):
    return _aten.flip(self, F._sizes(dims))


@_method
def repeat(self, *sizes):
    return _aten.repeat(self, F._sizes(sizes))


@_method
def sum_to_size(self, *size):
    return _aten.sum_to_size(self, F._sizes(size))


@_method
def view_as(self, other):
    return self.view(other.shape)


@_method
def reshape_as(self, other):
    return self.reshape(other.shape)


@_method
def expand_as(self, other):
    return self.expand(other.shape)


# ---------------------------------------------------------------- reductions


@_method
def sum(self, dim=None, keepdim=False, *, dtype=None):  # noqa: A001
    return F.sum(self, dim, keepdim, dtype=dtype)


@_method
def mean(self, dim=None, keepdim=False, *, dtype=None):
    return F.mean(self, dim, keepdim, dtype=dtype)


@_method
def amax(self, dim=(), keepdim=False):
    return _aten.amax(self, dim, keepdim)


@_method
def amin(self, dim=(), keepdim=False):
    return _aten.amin(self, dim, keepdim)


@_method
def max(self, dim=None, keepdim=False):  # noqa: A001
    return F.max(self, dim, keepdim)


@_method
def min(self, dim=None, keepdim=False):  # noqa: A001
    return F.min(self, dim, keepdim)


@_method
def argmax(self, dim=None, keepdim=False):
    return _aten.argmax(self, dim, keepdim)


@_method
def argmin(self, dim=None, keepdim=False):
    return _aten.argmin(self, dim, keepdim)


@_method
def all(self, dim=None, keepdim=False):  # noqa: A001
    return _aten.all(self, dim, keepdim)


@_method
def any(self, dim=None, keepdim=False):  # noqa: A001
    return _aten.any(self, dim, keepdim)


@_method
def var(self, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return F.var(self, dim, unbiased, keepdim, correction=correction)


@_method
def var_mean(self, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return F.var_mean(self, dim, unbiased, keepdim, correction=correction)


@_method
def std(self, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return F.std(self, dim, unbiased, keepdim, correction=correction)


# ---------------------------------------------------------------- misc pointwise


@_method
def where(self, condition, other):
    return _aten.where(condition, self, other)


@_method
def masked_fill(self, mask, value):
    return _aten.where(mask, value, self)


@_method
def square(self):
    return _aten.mul(self, self)


@_method
def fill_(self, value):
    if isinstance(value, Tensor):
        return _aten.copy_(self, value)
    return _aten.copy_(self, F.full((), value, dtype=self.dtype, device=self.device))


@_method
def zero_(self):
    return self.fill_(0)


# ---------------------------------------------------------------- conversion


def _parse_to(args, kwargs):
    dtype, device = kwargs.pop("dtype", None), kwargs.pop("device", None)
    for a in args:
        if isinstance(a, Tensor):
            dtype, device = a.dtype, a.device
        elif isinstance(a, _dtype.dtype) or a in (float, int, bool):
            dtype = _dtype.to_dtype(a)
        elif a is not None:
            device = as_device(a)
    kwargs.pop("copy", None)
    kwargs.pop("non_blocking", None)
    if kwargs:
        raise TypeError(f"to() got unexpected keyword arguments {sorted(kwargs)}")
    return dtype, device


@_method
def to(self, *args, **kwargs):
    """``to(dtype)``, ``to(device)``, ``to(other)``; returns ``self`` when nothing changes."""
    copy = kwargs.get("copy", False)
    dtype, device = _parse_to(args, dict(kwargs))
    same_dtype = dtype is None or dtype is self.dtype
    same_device = device is None or device == self.device
    if same_dtype and same_device and not copy:
        return self
    return _aten._to_copy(self, dtype=dtype, device=device)


def _cast(name, dt):
    def fn(self):
        return self.to(dt)
    fn.__name__ = name
    setattr(Tensor, name, fn)


for _n, _d in (("float", _dtype.float32), ("double", _dtype.float64), ("half", _dtype.float16),
               ("long", _dtype.int64), ("int", _dtype.int32), ("bool", _dtype.bool_),
               ("byte", _dtype.uint8), ("char", _dtype.int8), ("short", _dtype.int16)):
    _cast(_n, _d)


@_method
def type_as(self, other):
    return self.to(other.dtype)


@_method
def cpu(self):
    return self.to("cpu")


@_method
def npu(self, device=None):
    return self.to("npu" if device is None else f"npu:{device}")


def _new(name, factory):
    def fn(self, *size, dtype=None, device=None, requires_grad=False):
        return factory(F._sizes(size), dtype=dtype or self.dtype, device=device or self.device,
                       requires_grad=requires_grad)
    fn.__name__ = name
    setattr(Tensor, name, fn)


_new("new_zeros", F.zeros)
_new("new_ones", F.ones)
_new("new_empty", F.empty)


@_method
def new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False):
    return F.full(size, fill_value, dtype=dtype or self.dtype, device=device or self.device,
                  requires_grad=requires_grad)


@_method
def new_tensor(self, data, *, dtype=None, device=None, requires_grad=False):
    return F.tensor(data, dtype=dtype or self.dtype, device=device or self.device,
                    requires_grad=requires_grad)


# ``__getitem__`` / ``__setitem__`` (basic and advanced indexing): ``_tensor_indexing.py``.


# ---------------------------------------------------------------- operators


def _binary(name, op, reflected=False):
    if reflected:
        def fn(self, other):
            return op(other, self)
    else:
        def fn(self, other):
            return op(self, other)
    fn.__name__ = name
    setattr(Tensor, name, fn)


_binary("__add__", F.add)
_binary("__radd__", F.add)
_binary("__sub__", F.sub)
_binary("__rsub__", F.rsub)
_binary("__mul__", F.mul)
_binary("__rmul__", F.mul)
_binary("__truediv__", F.div)
_binary("__pow__", F.pow)
_binary("__rpow__", F.pow, reflected=True)
_binary("__matmul__", F.matmul)
_binary("__rmatmul__", F.matmul, reflected=True)
_binary("__eq__", F.eq)
_binary("__ne__", F.ne)
_binary("__lt__", F.lt)
_binary("__le__", F.le)
_binary("__gt__", F.gt)
_binary("__ge__", F.ge)
_binary("__and__", F.bitwise_and)  # torch: & | ^ are bitwise (logical on bool tensors)
_binary("__rand__", F.bitwise_and)
_binary("__or__", F.bitwise_or)
_binary("__ror__", F.bitwise_or)
_binary("__xor__", F.bitwise_xor)
_binary("__rxor__", F.bitwise_xor)
_binary("__iand__", Tensor.bitwise_and_)
_binary("__ior__", Tensor.bitwise_or_)
_binary("__ixor__", Tensor.bitwise_xor_)
_binary("__mod__", F.remainder)
_binary("__rmod__", F.remainder, reflected=True)
_binary("__imod__", Tensor.remainder_)
_binary("__iadd__", Tensor.add_)
_binary("__isub__", Tensor.sub_)
_binary("__imul__", Tensor.mul_)
_binary("__itruediv__", Tensor.div_)

Tensor.__neg__ = F.neg
Tensor.__abs__ = F.abs
Tensor.__pos__ = lambda self: self
Tensor.__hash__ = object.__hash__


@_method
def __rtruediv__(self, other):
    return _aten.mul(_aten.reciprocal(self), other)  # torch's __rdiv__


@_method
def __floordiv__(self, other):
    return _aten.div(self, other, rounding_mode="floor")


@_method
def __rfloordiv__(self, other):
    return _aten.div(other, self, rounding_mode="floor")


@_method
def __invert__(self):
    if self.dtype.is_floating_point:
        raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type "
                        "tensors")
    return _aten.bitwise_not(self)


@_method
def __rsub__(self, other):
    return _aten.rsub(self, other)
