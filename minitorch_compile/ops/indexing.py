"""Advanced indexing: integer and boolean tensor indices, ``masked_select``, ``nonzero``, ``take``.

Mirrors ``aten/src/ATen/native/TensorAdvancedIndexing.cpp`` and the ``index``/``index_put``
lines of ``derivatives.yaml``.  ``x[idx]`` with tensor indices is ``aten.index.Tensor(x,
indices)`` where ``indices`` has one entry per indexed dim — ``None`` for a dim kept whole —
after ``Tensor.__getitem__`` has applied the ints, slices and ``None``s as views.  The result's
layout is numpy's (and torch's)::

    the index tensors broadcast together to a shape B;
    adjacent indexed dims   ->  they are replaced by B in place      x[:, i, j]   (2, B.., 4)
    separated by a kept dim ->  B comes first                        x[i, :, j]   (B.., 3)

A boolean mask of k dims stands for the k integer index tensors of its ``nonzero()``, so the
size of ``x[mask]`` depends on the *values* of the mask: a meta or fake tensor cannot know it,
and the meta rule raises ``DynamicOutputShapeException`` (torch's name) — which makes Dynamo
break the graph there, as torch's does.  ``masked_select`` and ``nonzero`` are data-dependent
the same way; ``index_put`` and ``take`` are not (their sizes come from shapes alone).

Gradients (``derivatives.yaml``): ``index`` scatters back with an accumulating ``index_put``
(repeated indices add up); ``index_put`` passes ``grad`` to ``self`` with the written places
zeroed (all of it when accumulating) and ``grad[indices]`` to ``values``.
"""

from __future__ import annotations

import numpy as np

from .. import _api as F
from .. import _dtype
from .table import INDEXING, TensorMeta, broadcast_shapes, defop

_INDEX_DTYPES = (_dtype.int64, _dtype.int32, _dtype.bool_, _dtype.uint8) \
    if hasattr(_dtype, "uint8") else (_dtype.int64, _dtype.int32, _dtype.bool_)
_TORCH_TYPE_NAME = {"float32": "Float", "float64": "Double", "float16": "Half", "int64": "Long",
                    "int32": "Int", "bool": "Bool", "uint8": "Byte", "int8": "Char",
                    "int16": "Short"}


def _dynamic_output_shape(op: str, what: str):
    from ..fx.fake_tensor import DynamicOutputShapeException

    return DynamicOutputShapeException(
        f"aten.{op}: the size of the output depends on the values of {what}, which a meta or "
        "fake tensor does not have (torch raises DynamicOutputShapeException here too; under "
        "mtc.compile this is a graph break)")


def _has_data(t) -> bool:
    from ..fx.fake_tensor import FakeTensor

    return t._device.type != "meta" and not isinstance(t, FakeTensor)


def _is_mask(t) -> bool:
    return t.dtype is _dtype.bool_ or t.dtype.name == "uint8"


# ---------------------------------------------------------------- index


def _index_shape(op, self, indices, *, allow_unknown=False):
    """The shape of ``self[indices]``; ``None`` when a mask's count is unknown and allowed."""
    shape = tuple(self.shape)
    consumed = sum(i.ndim if i is not None and _is_mask(i) else 1 for i in indices)
    if consumed > len(shape):
        raise IndexError(f"too many indices for tensor of dimension {len(shape)} "
                         f"(got {consumed})")
    layout, adv, pos = [], [], 0  # layout: ("keep", size) or ("adv",), in dim order
    for idx in indices:
        if idx is None:
            layout.append(("keep", shape[pos]))
            pos += 1
            continue
        if idx.dtype not in _INDEX_DTYPES:
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        if _is_mask(idx):
            k = idx.ndim
            for j in range(k):
                if pos + j >= len(shape) or idx.shape[j] != shape[pos + j]:
                    raise IndexError(
                        f"The shape of the mask {list(idx.shape)} at index {j} does not match "
                        f"the shape of the indexed tensor {list(shape)} at index {pos + j}")
            if not _has_data(idx):
                if allow_unknown:
                    return None
                raise _dynamic_output_shape(op, "a boolean mask")
            adv.append((int(np.count_nonzero(idx._data)),))
            pos += k
        else:
            adv.append(tuple(idx.shape))
            pos += 1
        layout.append(("adv",))
    layout.extend(("keep", s) for s in shape[pos:])
    try:
        b = broadcast_shapes(*adv)
    except RuntimeError:
        raise IndexError("shape mismatch: indexing tensors could not be broadcast together "
                         "with shapes " + ", ".join(str(list(s)) for s in adv)) from None
    where = [i for i, item in enumerate(layout) if item[0] == "adv"]
    keeps = [item[1] for item in layout if item[0] == "keep"]
    if where and where[-1] - where[0] == len(where) - 1:  # adjacent: B replaces them in place
        first = sum(1 for item in layout[:where[0]] if item[0] == "keep")
        return tuple(keeps[:first]) + b + tuple(keeps[first:])
    return b + tuple(keeps)


def _numpy_key(shape, indices) -> tuple:
    """``indices`` as a numpy index tuple; torch's error for an out-of-range index."""
    key, pos = [], 0
    for idx in indices:
        if idx is None:
            key.append(slice(None))
            pos += 1
        elif idx.dtype == np.bool_ or idx.dtype == np.uint8:
            key.append(idx.astype(bool))
            pos += idx.ndim
        else:
            n = shape[pos]
            bad = idx[(idx >= n) | (idx < -n)]
            if bad.size:
                raise IndexError(f"index {int(bad.flat[0])} is out of bounds for dimension {pos} "
                                 f"with size {n}")
            key.append(idx)
            pos += 1
    return tuple(key)


def _index_kernel(a, indices):
    return a[_numpy_key(a.shape, indices)]


def _index_backward(grad, self_sizes, indices):
    zeros = F.zeros(self_sizes, dtype=grad.dtype, device=grad.device)
    return F.ops.aten.index_put(zeros, indices, grad, True)


index = defop(
    "index.Tensor(Tensor self, Tensor?[] indices) -> Tensor", INDEXING, kernel=_index_kernel,
    meta=lambda self, indices: TensorMeta(_index_shape("index.Tensor", self, indices),
                                          self.dtype),
    derivatives={"self": _index_backward},
    notes="x[idx] / x[mask]; a boolean mask makes the output size data-dependent")

# ---------------------------------------------------------------- index_put


def _index_put_kernel(a, indices, values, accumulate=False):
    key = _numpy_key(a.shape, indices)
    out = np.array(a, copy=True, order="K")
    target = out[key].shape
    try:
        v = np.broadcast_to(values, target)
    except ValueError:
        raise RuntimeError(f"shape mismatch: value tensor of shape {list(values.shape)} cannot "
                           f"be broadcast to indexing result of shape {list(target)}") from None
    if accumulate:
        np.add.at(out, key, v)
    else:
        out[key] = v
    return out


def _index_put_meta(self, indices, values, accumulate=False):
    if values.dtype is not self.dtype:
        raise RuntimeError(
            "Index put requires the source and destination dtypes match, got "
            f"{_TORCH_TYPE_NAME.get(self.dtype.name, self.dtype.name)} for the destination and "
            f"{_TORCH_TYPE_NAME.get(values.dtype.name, values.dtype.name)} for the source.")
    target = _index_shape("index_put", self, indices, allow_unknown=True)
    if target is not None:
        try:
            if broadcast_shapes(tuple(values.shape), target) != target:
                raise RuntimeError
        except RuntimeError:
            raise RuntimeError(
                f"shape mismatch: value tensor of shape {list(values.shape)} cannot be "
                f"broadcast to indexing result of shape {list(target)}") from None
    return TensorMeta(tuple(self.shape), self.dtype)


def _index_put_self(grad, indices, values_sizes, accumulate):
    if accumulate:
        return grad
    zeros = F.zeros(values_sizes, dtype=grad.dtype, device=grad.device)
    return F.ops.aten.index_put(grad, indices, zeros, False)


index_put = defop(
    "index_put(Tensor self, Tensor?[] indices, Tensor values, bool accumulate=False) -> Tensor",
    INDEXING, kernel=_index_put_kernel, meta=_index_put_meta, inplace=True,
    derivatives={"self": _index_put_self,
                 "values": lambda grad, indices: F.ops.aten.index(grad, indices)},
    notes="x[idx] = v; accumulate=True adds (repeated indices add up)")

# ---------------------------------------------------------------- masked_select / nonzero / take


def _masked_select_meta(self, mask):
    if mask.dtype is not _dtype.bool_:
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    shape = broadcast_shapes(tuple(self.shape), tuple(mask.shape))
    if not _has_data(mask):
        raise _dynamic_output_shape("masked_select", "the mask")
    count = int(np.count_nonzero(np.broadcast_to(mask._data, shape)))
    return TensorMeta((count,), self.dtype)


def _masked_select_kernel(a, mask):
    a, mask = np.broadcast_arrays(a, mask)
    return a[mask]


def _masked_select_backward(grad, self_sizes, mask):
    shape = broadcast_shapes(tuple(self_sizes), tuple(mask.shape))
    zeros = F.zeros(shape, dtype=grad.dtype, device=grad.device)
    return F.ops.aten.index_put(zeros, [mask.expand(shape)], grad, True)  # summed to self


masked_select = defop(
    "masked_select(Tensor self, Tensor mask) -> Tensor", INDEXING,
    kernel=_masked_select_kernel, meta=_masked_select_meta,
    derivatives={"self": _masked_select_backward},
    notes="data-dependent output size")


def _nonzero_meta(self):
    if not _has_data(self):
        raise _dynamic_output_shape("nonzero", "its input")
    return TensorMeta((int(np.count_nonzero(self._data)), self.ndim), _dtype.int64)


nonzero = defop("nonzero(Tensor self) -> Tensor", INDEXING,
                kernel=lambda a: np.argwhere(a), meta=_nonzero_meta, differentiable=False,
                notes="data-dependent output size")


def _take_meta(self, index):
    if index.dtype is not _dtype.int64:
        raise RuntimeError(f"take(): Expected a long tensor for index, but got "
                           f"{_TORCH_TYPE_NAME.get(index.dtype.name, index.dtype.name)}")
    return TensorMeta(tuple(index.shape), self.dtype)


def _take_kernel(a, index):
    flat = a.reshape(-1)
    n = flat.size
    bad = index[(index >= n) | (index < -n)]
    if bad.size:
        raise IndexError(f"out of range: tried to access index {int(bad.flat[0])} on a tensor "
                         f"of {n} elements.")
    return flat[index]


def _take_backward(grad, self_sizes, index):
    numel = int(np.prod(self_sizes, dtype=np.int64))
    zeros = F.zeros((numel,), dtype=grad.dtype, device=grad.device)
    flat = F.ops.aten.index_put(zeros, [index.reshape(-1)], grad.reshape(-1), True)
    return flat.view(list(self_sizes))


take = defop("take(Tensor self, Tensor index) -> Tensor", INDEXING, kernel=_take_kernel,
             meta=_take_meta, derivatives={"self": _take_backward})
