"""Tensor factories: ``zeros``, ``ones``, ``full``, ``randn``, ``arange``, the ``*_like``
functions, and ``tensor``/``as_tensor``/``from_numpy`` from Python data (ATen's
``TensorFactories.cpp`` and ``torch/csrc/utils/tensor_new.cpp``).

Their Python signatures differ from their schemas (varargs sizes — ``zeros(2, 3)`` and
``zeros((2, 3))`` — ``requires_grad=``, optional ``dtype``/``device`` strings), so they are
written by hand and call the op table's ops; ``_api.py`` re-exports them as ``mtc.zeros`` ....
``tensor`` copies its data, ``from_numpy`` shares it; a dtype not given is inferred as torch
does: any float gives the default float dtype, else int64, else bool.
"""

from __future__ import annotations

import builtins as _builtins
import numbers

import numpy as np

from . import _dtype
from ._device import as_device
from ._tensor import Tensor
from .ops._ops import ops

# ---------------------------------------------------------------- size helpers


def _sizes(size) -> tuple:
    """``zeros(2, 3)``, ``zeros((2, 3))``, ``zeros([2, 3])`` and ``zeros(x.size())`` agree."""
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = size[0]
    out = []
    for s in size:
        if isinstance(s, Tensor):
            s = int(s)
        if hasattr(s, "hint") and hasattr(s, "expr"):  # a symbolic size (dynamic shapes)
            out.append(s)
            continue
        if not isinstance(s, numbers.Integral):
            raise TypeError(f"size must be a sequence of ints, but got an element of type "
                            f"{type(s).__name__}")
        out.append(int(s))
    return tuple(out)


def _finish(t: Tensor, requires_grad: bool) -> Tensor:
    if requires_grad:
        if not t.dtype.is_floating_point:  # the factory's wording (requires_grad_'s differs)
            raise RuntimeError("Only Tensors of floating point and complex dtype can require "
                               "gradients")
        t.requires_grad_(True)
    return t


_aten = ops.aten

# ---------------------------------------------------------------- factories


def zeros(*size, dtype=None, device=None, requires_grad=False):
    return _finish(_aten.zeros(_sizes(size), dtype=_opt_dtype(dtype), device=_opt_dev(device)),
                   requires_grad)


def ones(*size, dtype=None, device=None, requires_grad=False):
    return _finish(_aten.ones(_sizes(size), dtype=_opt_dtype(dtype), device=_opt_dev(device)),
                   requires_grad)


def empty(*size, dtype=None, device=None, requires_grad=False):
    return _finish(_aten.empty(_sizes(size), dtype=_opt_dtype(dtype), device=_opt_dev(device)),
                   requires_grad)


def full(size, fill_value, *, dtype=None, device=None, requires_grad=False):
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    return _finish(_aten.full(_sizes((size,)), fill_value, dtype=_opt_dtype(dtype),
                              device=_opt_dev(device)), requires_grad)


def randn(*size, dtype=None, device=None, requires_grad=False, generator=None):
    return _finish(_aten.randn(_sizes(size), dtype=_opt_dtype(dtype), device=_opt_dev(device)),
                   requires_grad)


def rand(*size, dtype=None, device=None, requires_grad=False, generator=None):
    return _finish(_aten.rand(_sizes(size), dtype=_opt_dtype(dtype), device=_opt_dev(device)),
                   requires_grad)


def randint(low, high=None, size=None, *, dtype=None, device=None, requires_grad=False,
            generator=None):
    """``randint(high, size)`` or ``randint(low, high, size)``: uniform integers in [low, high)."""
    if size is None:
        low, high, size = 0, low, high
    if size is None:
        raise TypeError("randint() missing required argument 'size'")
    return _finish(_aten.randint.low(low, high, _sizes((size,)), dtype=_opt_dtype(dtype),
                                     device=_opt_dev(device)), requires_grad)


def randperm(n, *, dtype=None, device=None, requires_grad=False, generator=None):
    return _finish(_aten.randperm(n, dtype=_opt_dtype(dtype), device=_opt_dev(device)),
                   requires_grad)


def linspace(start, end, steps, *, dtype=None, device=None, requires_grad=False):
    start, end = (x.item() if isinstance(x, Tensor) else x for x in (start, end))
    return _finish(_aten.linspace(start, end, steps, dtype=_opt_dtype(dtype),
                                  device=_opt_dev(device)), requires_grad)


def arange(start, end=None, step=1, *, dtype=None, device=None, requires_grad=False):
    if end is None:
        start, end = 0, start
    start, end, step = (x.item() if isinstance(x, Tensor) else x for x in (start, end, step))
    return _finish(_aten.arange(start, end, step, dtype=_opt_dtype(dtype),
                                device=_opt_dev(device)), requires_grad)


def _like(op):
    def fn(input, *, dtype=None, device=None, requires_grad=False, memory_format=None):  # noqa: A002
        return _finish(op(input, dtype=_opt_dtype(dtype), device=_opt_dev(device)),
                       requires_grad)
    fn.__name__ = op.name
    return fn


zeros_like = _like(_aten.zeros_like)
ones_like = _like(_aten.ones_like)
empty_like = _like(_aten.empty_like)
randn_like = _like(_aten.randn_like)
rand_like = _like(_aten.rand_like)


def full_like(input, fill_value, *, dtype=None, device=None, requires_grad=False):  # noqa: A002
    return _finish(_aten.full_like(input, fill_value, dtype=_opt_dtype(dtype),
                                   device=_opt_dev(device)), requires_grad)


def _opt_dtype(d):
    return None if d is None else _dtype.to_dtype(d)


def _opt_dev(d):
    return None if d is None else as_device(d)


def _infer_dtype(data) -> _dtype.dtype:
    """Python data -> dtype: any float makes it the default float, else int64, else bool."""
    cat = -1
    stack = [data]
    while stack:
        x = stack.pop()
        if isinstance(x, (list, tuple)):
            stack.extend(x)
        elif isinstance(x, Tensor):
            return x.dtype
        elif isinstance(x, np.ndarray):
            return _dtype.from_numpy_dtype(x.dtype)
        elif isinstance(x, (np.generic,)):
            return _dtype.from_numpy_dtype(x.dtype)
        else:
            cat = _builtins.max(cat, _dtype.scalar_category(x))
    return _dtype.default_dtype_for_category(_dtype.FLOATING if cat < 0 else cat)


def _to_nested(x):
    if isinstance(x, Tensor):
        return x.detach()._data
    if isinstance(x, (list, tuple)):
        return [_to_nested(v) for v in x]
    return x


def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """A new tensor *copying* ``data`` (nested lists, numbers, numpy arrays, tensors)."""
    dt = _opt_dtype(dtype) or _infer_dtype(data)
    arr = np.array(_to_nested(data), dtype=dt.np, copy=True)
    return _finish(Tensor._make(arr, as_device(device)), requires_grad)


def as_tensor(data, dtype=None, device=None):
    if isinstance(data, Tensor):
        return data.to(dtype=dtype, device=device) if dtype or device else data
    if isinstance(data, np.ndarray) and dtype is None:
        return from_numpy(data) if device is None else from_numpy(data).to(device)
    return tensor(data, dtype=dtype, device=device)


def from_numpy(ndarray: np.ndarray) -> Tensor:
    """Share memory with ``ndarray`` (writes are visible both ways)."""
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    _dtype.from_numpy_dtype(ndarray.dtype)
    return Tensor._make(ndarray)


def scalar_tensor(s, *, dtype=None, device=None, requires_grad=False):
    return tensor(s, dtype=dtype or _dtype.get_default_dtype(), device=device,
                  requires_grad=requires_grad)
