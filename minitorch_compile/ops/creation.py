"""Creation ops: full/zeros/ones/empty, arange, and the random ops randn/rand.

They have no tensor inputs, so the dispatcher picks the backend from the ``device`` argument.
Default dtypes follow torch: ``full(size, 2)`` is int64, ``full(size, 2.0)`` the default float
dtype, ``arange(5)`` int64, ``arange(0, 1, 0.1)`` float.
"""

from __future__ import annotations

import math

import numpy as np

from .. import _dtype, _random
from .table import COMPOSITE, CREATION, RANDOM, MetaError, TensorMeta, defop


def _size(size) -> tuple:
    size = (size,) if isinstance(size, int) else tuple(size)
    for s in size:
        if s < 0:
            raise MetaError(f"Trying to create tensor with negative dimension {s}: {list(size)}")
    return size


def _fill_dtype(value):
    value = getattr(value, "hint", value)  # a symbolic size (SymInt) is an int
    return _dtype.default_dtype_for_category(_dtype.scalar_category(value))


full = defop(
    "full(SymInt[] size, Scalar fill_value, *, ScalarType? dtype=None, Device? device=None) "
    "-> Tensor", CREATION,
    kernel=lambda size, fill_value, dtype=None, device=None: np.full(
        _size(size), fill_value, dtype=(dtype or _fill_dtype(fill_value)).np),
    meta=lambda size, fill_value, dtype=None, device=None: TensorMeta(
        _size(size), dtype or _fill_dtype(fill_value)),
    differentiable=False)


def _const(name, value, np_fn):
    return defop(
        f"{name}(SymInt[] size, *, ScalarType? dtype=None, Device? device=None) -> Tensor",
        CREATION,
        kernel=lambda size, dtype=None, device=None: np_fn(
            _size(size), dtype=(dtype or _dtype.get_default_dtype()).np),
        meta=lambda size, dtype=None, device=None: TensorMeta(
            _size(size), dtype or _dtype.get_default_dtype()),
        differentiable=False)


zeros = _const("zeros", 0, np.zeros)
ones = _const("ones", 1, np.ones)
empty = _const("empty", None, np.empty)


def _arange_meta(start, end, step=1, dtype=None, device=None):
    if step == 0:
        raise MetaError("step must be nonzero")
    if (end - start) * step < 0 and end != start:
        raise MetaError("upper bound and larger bound inconsistent with step sign")
    if all(isinstance(v, int) or hasattr(v, "hint") for v in (start, end, step)):
        # ceil((end - start) / step) in integers: exact, and symbolic sizes stay symbolic
        # (arange(x.shape[0]) has s0 elements); never negative after the check above
        n = end - start if step == 1 else -((start - end) // step)
    else:
        n = max(math.ceil((end - start) / step), 0)
    if dtype is None:  # a symbolic size (SymInt) is an int
        dtype = _dtype.result_type(*(getattr(v, "hint", v) for v in (start, end, step)))
        if dtype is _dtype.bool_:
            dtype = _dtype.int64
    return TensorMeta((n,), dtype)


def _arange_kernel(start, end, step=1, dtype=None, device=None):
    m = _arange_meta(start, end, step, dtype)
    return start + np.arange(m.shape[0], dtype=np.float64 if m.dtype.is_floating_point
                             else np.int64) * step


arange = defop(
    "arange(Scalar start, Scalar end, Scalar step=1, *, ScalarType? dtype=None, "
    "Device? device=None) -> Tensor", CREATION, kernel=_arange_kernel, meta=_arange_meta,
    differentiable=False)


def _random_op(name, sample):
    return defop(
        f"{name}(SymInt[] size, *, ScalarType? dtype=None, Device? device=None) -> Tensor",
        RANDOM,
        kernel=lambda size, dtype=None, device=None: sample(
            _random.generator(), _size(size), (dtype or _dtype.get_default_dtype()).np),
        meta=lambda size, dtype=None, device=None: _random_meta(name, size, dtype),
        differentiable=False)


def _random_meta(name, size, dtype):
    dtype = dtype or _dtype.get_default_dtype()
    if not dtype.is_floating_point:
        raise MetaError(f'"{name}" not implemented for \'{dtype.name.capitalize()}\'')
    return TensorMeta(_size(size), dtype)


def _normal(gen, size, npd):
    if npd == np.float16:
        return gen.standard_normal(size, dtype=np.float32).astype(np.float16)
    return gen.standard_normal(size, dtype=npd)


def _uniform(gen, size, npd):
    if npd == np.float16:
        return gen.random(size, dtype=np.float32).astype(np.float16)
    return gen.random(size, dtype=npd)


randn = _random_op("randn", _normal)
rand = _random_op("rand", _uniform)


def _like(name, make):
    def decomposition(self, dtype=None, device=None):
        return make(tuple(self.shape), dtype or self.dtype,
                    device if device is not None else self.device)
    return defop(f"{name}(Tensor self, *, ScalarType? dtype=None, Device? device=None) -> Tensor",
                 COMPOSITE, decomposition=decomposition)


zeros_like = _like("zeros_like", lambda s, d, dev: full(s, 0, dtype=d, device=dev))
ones_like = _like("ones_like", lambda s, d, dev: full(s, 1, dtype=d, device=dev))
empty_like = _like("empty_like", lambda s, d, dev: empty(s, dtype=d, device=dev))
randn_like = _like("randn_like", lambda s, d, dev: randn(s, dtype=d, device=dev))
rand_like = _like("rand_like", lambda s, d, dev: rand(s, dtype=d, device=dev))
full_like = defop(
    "full_like(Tensor self, Scalar fill_value, *, ScalarType? dtype=None, Device? device=None) "
    "-> Tensor", COMPOSITE,
    decomposition=lambda self, fill_value, dtype=None, device=None: full(
        tuple(self.shape), fill_value, dtype=dtype or self.dtype,
        device=device if device is not None else self.device))
