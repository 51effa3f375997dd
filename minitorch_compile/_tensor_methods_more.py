"""Tensor methods of the breadth ops (``x.cumsum(0)``, ``x.masked_fill_(m, 0)``, ``x.sort()``),
kept apart from ``_tensor_methods.py`` so each file stays one a reader can hold.

As there: methods whose signature is the schema's are generated from the op table; those with
torch's overloads, varargs or named-tuple results call the functions of ``_api_more.py``.  The
in-place view ops ``unsqueeze_``/``squeeze_``/``transpose_``/``t_`` are not here: they change a
tensor's shape in place, which the view machinery does not model.
"""

from __future__ import annotations

from . import _api as F
from . import _api_more as M
from . import _dtype
from ._tensor import Tensor
from .ops._ops import ops

_aten = ops.aten

_GENERATED_METHODS = """
atan2 hypot logaddexp logit lerp addcmul addcdiv masked_fill cumsum cumprod
tril triu diag roll movedim expand_as unflatten outer baddbmm
index_add index_copy index_fill scatter_reduce multinomial erfinv lgamma digamma bincount
floor ceil trunc frac asin acos atan sinh cosh tan asinh acosh atanh log10 exp2 erfc sinc
deg2rad rad2deg
""".split()
_INPLACE = """
atan2_ hypot_ logit_ lerp_ addcmul_ addcdiv_ masked_fill_ cumsum_ cumprod_ tril_ triu_
index_add_ index_copy_ index_fill_ scatter_reduce_ scatter_add_ erfinv_ lgamma_ digamma_
floor_ ceil_ trunc_ frac_ asin_ acos_ atan_ sinh_ cosh_ tan_ asinh_ acosh_ atanh_ log10_
exp2_ erfc_ sinc_ deg2rad_ rad2deg_
""".split()


def _install_generated():
    for name in _GENERATED_METHODS + _INPLACE:
        (op,) = getattr(_aten, name).overloads.values()
        setattr(Tensor, name, F.generate_function(op, name, first="self"))


_install_generated()


def _method(fn):
    setattr(Tensor, fn.__name__, fn)
    return fn


Tensor.arctan2 = Tensor.atan2
for _name in ("negative", "positive", "absolute", "multiply", "divide", "true_divide",
              "subtract", "greater", "less", "clip", "floor_divide", "swapaxes", "swapdims",
              "ravel", "fliplr", "flipud", "dot", "mv", "inner", "ger", "logical_xor", "fmax",
              "fmin", "nan_to_num", "nansum", "nanmean"):
    setattr(Tensor, _name, getattr(M, _name))


@_method
def broadcast_to(self, size):
    return M.broadcast_to(self, size)


Tensor.fix = Tensor.trunc
Tensor.fix_ = Tensor.trunc_


@_method
def round(self, *, decimals=0):  # noqa: A001 - torch's name
    return M.round(self, decimals=decimals)


@_method
def round_(self, *, decimals=0):
    if decimals == 0:
        return _aten.round_(self)
    return _aten.round_.decimals(self, decimals=decimals)

Tensor.arctan2_ = Tensor.atan2_
Tensor.moveaxis = Tensor.movedim
Tensor.swapaxes = Tensor.swapdims = Tensor.transpose  # torch's aliases
Tensor.sort = M.sort
Tensor.argsort = M.argsort
Tensor.topk = M.topk
Tensor.kthvalue = M.kthvalue
Tensor.median = M.median
Tensor.prod = M.prod
Tensor.aminmax = M.aminmax
Tensor.norm = M.norm
Tensor.cross = M.cross
Tensor.count_nonzero = M.count_nonzero
Tensor.unique = M.unique
Tensor.take_along_dim = M.take_along_dim
Tensor.bernoulli = M.bernoulli
Tensor.repeat_interleave = M.repeat_interleave
Tensor.polygamma = lambda self, n: F.polygamma(n, self)


_TENSOR_TYPES = {f"torch.{name}Tensor": d for d, name in
                 ((d, _dtype.scalar_type_name(d)) for d in _dtype.ALL_DTYPES)}


def _type(self, dtype=None, non_blocking=False, **kwargs):
    """``x.type()``: torch's legacy type name (``'torch.FloatTensor'``, on a device
    ``'torch.npu.FloatTensor'``) — torch's spelling, since programs compare it with strings;
    ``x.type(dtype)`` / ``x.type('torch.LongTensor')``: ``x.to(dtype)`` (``x`` itself when it
    already has that dtype)."""
    if dtype is None:
        device = "" if self.device.type == "cpu" else f"{self.device.type}."
        return f"torch.{device}{_dtype.scalar_type_name(self.dtype)}Tensor"
    if isinstance(dtype, str):
        name = dtype.replace(".cuda.", ".").replace(".npu.", ".")
        if name not in _TENSOR_TYPES:
            raise ValueError(f"invalid type: '{dtype}'")
        dtype = _TENSOR_TYPES[name]
    return self.to(dtype)


Tensor.type = _type  # not `def type`: that would hide the builtin in this module


@_method
def tile(self, *dims):
    return M.tile(self, dims[0] if len(dims) == 1 and not isinstance(dims[0], int) else dims)


@_method
def scatter_(self, dim, index, src=None, *, value=None, reduce=None):
    """torch's ``scatter_.src``/``scatter_.value``; ``reduce="add"``/``"multiply"`` is the
    deprecated spelling of ``scatter_reduce_`` with ``sum``/``prod``."""
    src = value if src is None else src
    if not isinstance(src, Tensor):
        src = F.full(tuple(index.shape), src, dtype=self.dtype, device=self.device)
    if reduce is not None:
        modes = {"add": "sum", "multiply": "prod"}
        if reduce not in modes:
            raise RuntimeError(f"reduce argument must be either add or multiply. Got {reduce}")
        return _aten.scatter_reduce_(self, dim, index, src, modes[reduce])
    return _aten.scatter_(self, dim, index, src)


# ---------------------------------------------------------------- in-place sampling
# (torch's ``bernoulli_``/``normal_``/``uniform_``: a fresh sample copied in, so autograd and
# the version counter see one ``copy_``, and a leaf that requires grad refuses it as torch does)


@_method
def bernoulli_(self, p=0.5, *, generator=None):
    if isinstance(p, Tensor):
        sample = _aten.bernoulli.default(p.expand(tuple(self.shape)).to(self.dtype),
                                         generator=generator)
    else:
        sample = _aten.bernoulli.p(self, float(p), generator=generator)
    return self.copy_(sample)


@_method
def normal_(self, mean=0.0, std=1.0, *, generator=None):
    return self.copy_(_aten.normal_functional(self, float(mean), float(std),
                                              generator=generator))


@_method
def uniform_(self, from_=0.0, to=1.0, *, generator=None):
    return self.copy_(_aten.uniform(self, float(from_), float(to), generator=generator))


# ---------------------------------------------------------------- in-place view ops
# ``x.unsqueeze_(0)``: ``x`` itself takes the shape and strides of the view ``x.unsqueeze(0)``
# (same storage).  Only where that cannot go wrong: not while tracing (a graph records ops on
# values, and this changes a value's shape in place — Dynamo breaks the graph there), not on a
# tensor in autograd's history (torch rebases its history; that is not modelled here), not on
# a view (its view chain would no longer replay).  Each refusal says so.


def _inplace_view(name, view):
    def method(self, *args, **kwargs):
        from ._dispatch import state
        from .fx.fake_tensor import FakeTensor

        if state.modes or isinstance(self, FakeTensor):
            raise NotImplementedError(f"{name}: in-place view ops are not traced (this one "
                                      "changes a tensor's shape in place)")
        if self.requires_grad:
            if self.is_leaf:
                raise RuntimeError("a leaf Variable that requires grad is being used in an "
                                   "in-place operation.")
            raise NotImplementedError(f"{name} of a tensor that requires grad is not supported")
        if self._base is not None:
            raise NotImplementedError(f"{name} of a view is not supported")
        out = view(self, *args, **kwargs)  # the out-of-place view: torch's checks and errors
        self._data = out._data
        self._bump_version()
        return self
    method.__name__ = name
    return method


def _t_checked(self):
    if self.ndim > 2:
        raise RuntimeError(f"t_() expects a tensor with <= 2 dimensions, but self is "
                           f"{self.ndim}D")
    return self.t()


Tensor.unsqueeze_ = _inplace_view("unsqueeze_", Tensor.unsqueeze)
Tensor.squeeze_ = _inplace_view("squeeze_", Tensor.squeeze)
Tensor.transpose_ = _inplace_view("transpose_", Tensor.transpose)
Tensor.t_ = _inplace_view("t_", _t_checked)


# torch's Python-level compositions (``_api_extra.py``)
from . import _api_extra as X  # noqa: E402


def _nonzero(self, *, as_tuple=False):
    return X.nonzero(self, as_tuple=as_tuple)


Tensor.nonzero = _nonzero
Tensor.argwhere = X.argwhere
Tensor.masked_scatter = X.masked_scatter
Tensor.tensor_split = X.tensor_split


def _masked_scatter_(self, mask, source):
    return self.copy_(X.masked_scatter(self, mask, source))


Tensor.masked_scatter_ = _masked_scatter_


for _name in ("dot", "trace", "hsplit", "vsplit", "copysign", "isin"):
    setattr(Tensor, _name, getattr(X, _name))


def _clamp_min_(self, min):  # noqa: A002
    return self.clamp_(min=min)


def _clamp_max_(self, max):  # noqa: A002
    return self.clamp_(max=max)


Tensor.clamp_min_, Tensor.clamp_max_ = _clamp_min_, _clamp_max_
Tensor.floor_divide_ = lambda self, other: self.copy_(X.floor_divide(self, other))
Tensor.__lshift__ = Tensor.bitwise_left_shift = X.bitwise_left_shift
Tensor.__rshift__ = Tensor.bitwise_right_shift = X.bitwise_right_shift
Tensor.__ilshift__ = lambda self, other: self.copy_(X.bitwise_left_shift(self, other))
Tensor.__irshift__ = lambda self, other: self.copy_(X.bitwise_right_shift(self, other))
