"""Tensor indexing: ``x[index]`` and ``x[index] = v``
(``torch/csrc/autograd/python_variable_indexing.cpp``, ``aten/src/ATen/TensorIndexing.h``).

``x[index]`` as torch's ``applySlicing`` + ``index`` do it:
  1. ints, slices, None and ... become views, left to right (``select`` removes a dim,
     ``slice`` keeps it, ``None`` inserts one); 0-dim integer tensors count as ints;
  2. tensor indices (and lists, which become tensors) are collected at the dim they apply
     to, ``None`` standing for the dims in between, and ``aten.index`` applies them all at
     once to the view of step 1 (``ops/indexing.py`` has the result layout).
``x[index] = v`` makes the same view and, with tensor indices, ``index_put_``s into it;
without, it ``copy_``s into it (a write through a view: ``CopySlices`` under autograd).
"""

from __future__ import annotations

import builtins as _builtins
import numbers

from . import _api as F
from . import _dtype
from ._tensor import Tensor
from .ops._ops import ops

_aten = ops.aten



def _check_step(step) -> None:
    """Python's ``x[::-1]``: torch's indexing refuses it before any op runs."""
    if isinstance(step, int) and step <= 0:
        raise ValueError("step must be greater than zero")

def _method(fn):
    setattr(Tensor, fn.__name__, fn)
    return fn


_FULL = slice(None)


def _as_index_tensor(item, device):
    if isinstance(item, Tensor):
        return item
    t = F.tensor(item, device=device)  # a (nested) list of ints or bools
    if t.dtype.is_floating_point:
        raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
    return t


def _is_sym_int(item) -> bool:
    """A symbolic size (``x[x.shape[0] // 2]`` while tracing with dynamic shapes)."""
    return hasattr(item, "hint") and hasattr(item, "expr")


def _normalize_index(self, index):
    if not isinstance(index, tuple):
        index = (index,)
    out = []
    for item in index:
        if isinstance(item, list):
            item = _as_index_tensor(item, self.device)
        if isinstance(item, Tensor):
            if item.ndim == 0 and not item.dtype.is_floating_point and item.dtype is not \
                    _dtype.bool_:
                item = int(item)
            elif item.dtype.is_floating_point:
                raise IndexError("tensors used as indices must be long, int, byte or bool "
                                 "tensors")
        elif isinstance(item, bool) or not (item is None or item is Ellipsis or isinstance(
                item, (slice, numbers.Integral)) or _is_sym_int(item)):
            raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and long or "
                             f"byte Variables are valid indices (got {type(item).__name__})")
        out.append(item)
    specified = _builtins.sum(
        (i.ndim if i.dtype is _dtype.bool_ else 1) if isinstance(i, Tensor) else 1
        for i in out if i is not None and i is not Ellipsis)
    if specified > self.ndim:
        raise IndexError(f"too many indices for tensor of dimension {self.ndim}")
    if _builtins.sum(1 for i in out if i is Ellipsis) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    return out, specified


def _apply_slicing(self, index):
    """Step 1: the view of ``self``; step 2's ``indices`` (``None`` if there are none).
    torch's out-of-bounds error names the int's position in the index tuple (``real_dim``)."""
    items, specified = _normalize_index(self, index)
    result, dim, indices, real_dim = self, 0, [], 0
    for item in items:
        if item is None:
            result = _aten.unsqueeze(result, dim)
            dim += 1
        elif item is Ellipsis:
            dim += self.ndim - specified
        elif isinstance(item, slice):
            if item != slice(None):
                step = 1 if item.step is None else item.step
                _check_step(step)
                result = _aten.slice(result, dim, item.start, item.stop, step)
            dim += 1
        elif isinstance(item, Tensor):
            indices.extend([None] * (dim - len(indices)))
            indices.append(item)
            dim += item.ndim if item.dtype is _dtype.bool_ else 1
        else:  # a symbolic index stays symbolic (int() would specialise it)
            if not _is_sym_int(item):
                item = int(item)
                _check_bound(item, real_dim, result.shape[dim])
            result = _aten.select(result, dim, item)
        real_dim += 1
    return result, (indices or None)


def _check_bound(index, dim: int, size) -> None:
    """An int index out of range is an ``IndexError`` naming the dim (the ``select`` op's own
    message is for ``x.select(d, i)``)."""
    if isinstance(index, int) and isinstance(size, int) and not -size <= index < size:
        raise IndexError(f"index {index} is out of bounds for dimension {dim} with size {size}")


def _check_expandable(value_shape, target_shape) -> None:
    """``x[...] = v`` expands ``v`` to the written region (torch's ``copy_to``: leading size-1
    dims of ``v`` dropped first), so a mismatch is ``expand``'s error, not broadcasting's."""
    vs = list(value_shape)
    while len(vs) > len(target_shape) and vs[0] == 1:
        vs.pop(0)
    ts = list(target_shape)
    for i in range(1, min(len(vs), len(ts)) + 1):
        have, want = vs[-i], ts[-i]
        if isinstance(have, int) and isinstance(want, int) and have not in (1, want):
            raise RuntimeError(
                f"The expanded size of the tensor ({want}) must match the existing size ({have}) "
                f"at non-singleton dimension {len(ts) - i}.  Target sizes: {ts}.  Tensor sizes: "
                f"{list(value_shape)}")


@_method
def __getitem__(self, index):
    kind = type(index)
    if self._data.ndim:  # fast paths: x[i] and x[a:b:c] are one view op
        if kind is int:
            _check_bound(index, 0, self.shape[0])
            return _aten.select(self, 0, index)
        if kind is slice and index != _FULL:
            step = 1 if index.step is None else index.step
            _check_step(step)
            return _aten.slice(self, 0, index.start, index.stop, step)
    result, indices = _apply_slicing(self, index)
    if indices is not None:
        return _aten.index.Tensor(result, indices)
    if result is self:
        result = _aten.alias(self)
    return result


@_method
def __setitem__(self, index, value):
    target, indices = _apply_slicing(self, index)
    if indices is None:
        if isinstance(value, Tensor):
            _check_expandable(value.shape, target.shape)
            lead = 0  # torch's slicePrefix1sDims: x[0] = ones(1, 1, n) writes n values
            while value.ndim - lead > target.ndim and value.shape[lead] == 1:
                lead += 1
            target.copy_(value.reshape(tuple(value.shape[lead:])) if lead else value)
        else:
            target.fill_(value)
        return
    if not isinstance(value, Tensor):
        value = F.full((), value, dtype=self.dtype, device=self.device)
    elif value.dtype is not self.dtype:
        value = value.to(self.dtype)
    _aten.index_put_(target, indices, value)


for _name in ("index_put_", "index_put", "masked_select", "take"):
    setattr(Tensor, _name, F.generate_function(
        next(iter(getattr(_aten, _name).overloads.values())), _name, first="self"))


@_method
def nonzero(self, *, as_tuple=False):
    out = _aten.nonzero(self)
    return out.unbind(1) if as_tuple else out


@_method
def masked_fill_(self, mask, value):
    return self.copy_(_aten.where(mask, value, self))
