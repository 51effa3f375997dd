"""Creation ops: full/zeros/ones/empty, arange, linspace, and the random ops randn/rand,
randint and randperm.

They have no tensor inputs, so the dispatcher picks the backend from the ``device`` argument.
Default dtypes follow torch: ``full(size, 2)`` is int64, ``full(size, 2.0)`` the default float
dtype, ``arange(5)`` int64, ``arange(0, 1, 0.1)`` float.
"""

from __future__ import annotations

import math

import numpy as np

from .. import _dtype, _random
from .table import (
    COMPOSITE,
    CREATION,
    RANDOM,
    MetaError,
    TensorMeta,
    check_int_fits,
    defop,
)


def _size(size) -> tuple:
    size = (size,) if isinstance(size, int) else tuple(size)
    for s in size:
        if s < 0:
            raise MetaError(f"Trying to create tensor with negative dimension {s}: {list(size)}")
    return size


def _fill_dtype(value):
    value = getattr(value, "hint", value)  # a symbolic size (SymInt) is an int
    return _dtype.default_dtype_for_category(_dtype.scalar_category(value))


def _full_meta(size, fill_value, dtype=None, device=None):
    dtype = dtype or _fill_dtype(fill_value)
    check_int_fits(fill_value, dtype)
    return TensorMeta(_size(size), dtype)


full = defop(
    "full(SymInt[] size, Scalar fill_value, *, ScalarType? dtype=None, Device? device=None) "
    "-> Tensor", CREATION,
    kernel=lambda size, fill_value, dtype=None, device=None: np.full(
        _size(size), fill_value, dtype=(dtype or _fill_dtype(fill_value)).np),
    meta=_full_meta, differentiable=False)


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


def _linspace_meta(start, end, steps, dtype=None, device=None):
    if steps < 0:
        raise MetaError("number of steps must be non-negative")
    return TensorMeta((steps,), dtype or _dtype.get_default_dtype())


def _linspace_kernel(start, end, steps, dtype=None, device=None):
    """torch's formula: the first half counts up from ``start``, the second half down from
    ``end`` (so both ends are exact), in torch's arithmetic: float32/float64 in their own
    dtype with fused multiply-adds, as its vectorized kernel does (emulated in a wider type:
    the product of two float32s is exact in float64); half rounding after every operation;
    an integer dtype truncates ``start``/``end`` first and steps in double."""
    dt = dtype or _dtype.get_default_dtype()
    if steps == 1:
        return np.full(1, start, dtype=dt.np if dt.is_floating_point else np.float64)
    if not dt.is_floating_point:
        start, end = np.float64(int(start)), np.float64(int(end))
        step, i = (end - start) / (steps - 1), np.arange(steps, dtype=np.float64)
        return np.trunc(np.where(i < steps // 2, start + step * i,
                                 end - step * (steps - 1 - i)))
    if dt.np == np.float16:
        h = np.float16
        start, end = h(start), h(end)
        step = h(end - start) / h(steps - 1)
        i = np.arange(steps)
        up, down = i.astype(h), (steps - 1 - i).astype(h)
        return np.where(i < steps // 2, start + step * up, end - step * down)
    ctype = dt.np
    wide = np.dtype(np.longdouble) if ctype == np.float64 else np.dtype(np.float64)
    start, end = ctype.type(start), ctype.type(end)
    step = wide.type((end - start) / ctype.type(steps - 1))
    start, end, i = wide.type(start), wide.type(end), np.arange(steps, dtype=wide)
    values = np.where(i < steps // 2, start + step * i, end - step * (steps - 1 - i))
    return values.astype(ctype)


linspace = defop(
    "linspace(Scalar start, Scalar end, int steps, *, ScalarType? dtype=None, "
    "Device? device=None) -> Tensor", CREATION, kernel=_linspace_kernel, meta=_linspace_meta,
    differentiable=False)


def _random_op(name, sample):
    return defop(
        f"{name}(SymInt[] size, *, ScalarType? dtype=None, Device? device=None) -> Tensor",
        RANDOM,
        kernel=lambda size, dtype=None, device=None: sample(
            None, _size(size), (dtype or _dtype.get_default_dtype()).np),
        meta=lambda size, dtype=None, device=None: _random_meta(name, size, dtype),
        differentiable=False)


def _random_meta(name, size, dtype):
    dtype = dtype or _dtype.get_default_dtype()
    if not dtype.is_floating_point:
        raise MetaError(f'"{name}" not implemented for \'{dtype.name.capitalize()}\'')
    return TensorMeta(_size(size), dtype)


def _normal(gen, size, npd):
    return _random.normal(size, npd, gen=gen)


def _uniform(gen, size, npd):
    return _random.uniform(size, npd, gen=gen)


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


# ---------------------------------------------------------------- random integers


def _randint_meta(low, high, size, dtype=None, device=None):
    if low >= high:
        raise MetaError(f"random_ expects 'from' to be less than 'to', but got from={low} >= "
                        f"to={high}")
    dtype = dtype or _dtype.int64
    if dtype is _dtype.bool_ and (low < 0 or high > 2):
        raise MetaError("to - 1 is out of bounds for bool")
    if dtype is _dtype.uint8 and (low < 0 or high > 256):
        raise MetaError(f"{'from' if low < 0 else 'to - 1'} is out of bounds for unsigned char")
    return TensorMeta(_size(size), dtype)


randint = defop(
    "randint.low(SymInt low, SymInt high, SymInt[] size, *, ScalarType? dtype=None, "
    "Device? device=None) -> Tensor", RANDOM,
    kernel=lambda low, high, size, dtype=None, device=None: _random.random_from_to(
        _size(size), low, high),
    meta=_randint_meta, differentiable=False,
    notes="uniform integers in [low, high); randint(high, size) is the API's low=0 form")


def _randperm_meta(n, dtype=None, device=None):
    if n < 0:
        raise MetaError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    return TensorMeta((n,), dtype or _dtype.int64)


randperm = defop(
    "randperm(SymInt n, *, ScalarType? dtype=None, Device? device=None) -> Tensor", RANDOM,
    kernel=lambda n, dtype=None, device=None: _random.randperm(n),
    meta=_randperm_meta, differentiable=False)
