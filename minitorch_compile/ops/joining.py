"""Joining and splitting: ``cat`` (a primitive), ``stack``, ``split``, ``chunk``, ``unbind``
(composites of ``cat``, ``unsqueeze``, ``slice`` and ``select``; see ``views.py``).
"""

from __future__ import annotations

import numpy as np

from .. import _api as F
from .. import _dtype
from .._dispatch import state
from .table import (
    COMPOSITE,
    INDEXING,
    MetaError,
    TensorMeta,
    defop,
    wrap_dim,
)

# ---------------------------------------------------------------- cat / stack / split


def _cat_meta(tensors, dim=0):
    if not tensors:
        raise MetaError("torch.cat(): expected a non-empty list of Tensors")
    for i, t in enumerate(tensors):
        if t.ndim == 0:
            raise MetaError(f"zero-dimensional tensor (at position {i}) cannot be concatenated")
    dtype = _dtype.result_type(*tensors)  # legacy empty 1-D tensors still take part
    tensors = [t for t in tensors if not (t.ndim == 1 and t.shape[0] == 0)] or list(tensors)
    ref = tensors[0]
    d = wrap_dim(dim, ref.ndim)
    total = 0
    for i, t in enumerate(tensors):
        if t.ndim != ref.ndim:
            raise MetaError(f"Tensors must have same number of dimensions: got {ref.ndim} and "
                            f"{t.ndim}")
        for j in range(ref.ndim):
            if j != d and t.shape[j] != ref.shape[j]:
                raise MetaError(
                    f"Sizes of tensors must match except in dimension {d}. Expected size "
                    f"{ref.shape[j]} but got size {t.shape[j]} for tensor number {i} in the list.")
        total += t.shape[d]
    shape = list(ref.shape)
    shape[d] = total
    return TensorMeta(tuple(shape), dtype)


def _cat_kernel(arrays, dim=0):
    arrays = [a for a in arrays if not (a.ndim == 1 and a.shape[0] == 0)] or arrays
    return np.concatenate(arrays, axis=dim % max(arrays[0].ndim, 1))


def _cat_backward(grad, tensors_sizes, dim):
    nonempty = [s for s in tensors_sizes if not (len(s) == 1 and s[0] == 0)]
    d = wrap_dim(dim, len(nonempty[0]) if nonempty else 1)
    out, offset = [], 0
    for s in tensors_sizes:
        if len(s) == 1 and s[0] == 0 and len(nonempty[0]) != 1:
            out.append(F.zeros(s, dtype=grad.dtype, device=grad.device))
            continue
        out.append(F.ops.aten.slice(grad, d, offset, offset + s[d]))
        offset += s[d]
    return out


cat = defop("cat(Tensor[] tensors, int dim=0) -> Tensor", INDEXING,
            kernel=_cat_kernel, meta=_cat_meta, derivatives={"tensors": _cat_backward})


def _stack(tensors, dim=0):
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    for i, t in enumerate(tensors):
        if tuple(t.shape) != tuple(tensors[0].shape):
            raise RuntimeError(f"stack expects each tensor to be equal size, but got "
                               f"{list(tensors[0].shape)} at entry 0 and {list(t.shape)} at "
                               f"entry {i}")
    d = wrap_dim(dim, tensors[0].ndim + 1)
    return F.ops.aten.cat([t.unsqueeze(d) for t in tensors], d)


stack = defop("stack(Tensor[] tensors, int dim=0) -> Tensor", COMPOSITE, decomposition=_stack)


def _split(self, split_size, dim=0):
    d = wrap_dim(dim, self.ndim)
    n = self.shape[d]
    if isinstance(split_size, int):
        if split_size <= 0 and n:
            raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got "
                               f"dimension size of {n}")
        sizes = [min(split_size, n - i) for i in range(0, n, split_size)] if n else [0]
    else:
        sizes = list(split_size)
        if sum(sizes) != n:
            raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {n} "
                               f"(input tensor's size at dimension {d}), but got split_sizes="
                               f"{sizes}")
    out, offset = [], 0
    for s in sizes:
        out.append(F.ops.aten.slice(self, d, offset, offset + s))
        offset += s
    return tuple(out)


def mark_multi_output_views(outs: tuple, name: str) -> tuple:
    """torch's ``unbind``/``split`` are single ops returning several views: with grad mode on,
    writing one of them in place is an error (``autograd/inplace.check_inplace``)."""
    from .views import _name_grad_fn

    if state.grad_enabled:
        for i, o in enumerate(outs):
            o._multi_output_view = (name, i)
            o._view_no_grad = False  # the newest view's rule wins (propagate_creation_meta)
            _name_grad_fn(o, name + "Backward0")  # SplitBackward0, as torch's one node
    return outs


split = defop("split(Tensor(a) self, SymInt[1] split_size, int dim=0) -> Tensor(a)[]",
              COMPOSITE, decomposition=lambda self, split_size, dim=0: mark_multi_output_views(
                  _split(self, split_size, dim),
                  "Split" if isinstance(split_size, int) else "SplitWithSizes"))


def _chunk(self, chunks, dim=0):
    n = self.shape[wrap_dim(dim, self.ndim)]
    size = -(-n // chunks) if chunks > 0 else 0
    if chunks <= 0:
        raise RuntimeError("chunk expects `chunks` to be greater than 0")
    if n == 0:  # torch: an empty dim gives `chunks` empty pieces
        return _split(self, [0] * chunks, dim)
    return mark_multi_output_views(_split(self, size, dim), "Split")


chunk = defop("chunk(Tensor(a) self, int chunks, int dim=0) -> Tensor(a)[]", COMPOSITE,
              decomposition=_chunk)
unbind = defop("unbind.int(Tensor(a) self, int dim=0) -> Tensor(a)[]", COMPOSITE,
               decomposition=lambda self, dim=0: mark_multi_output_views(tuple(
                   self.select(dim, i) for i in range(self.shape[wrap_dim(dim, self.ndim)])),
                   "Unbind"))

# ---------------------------------------------------------------- narrow / repeat (composites)


def _narrow(self, dim, start, length):
    """``self[..., start:start + length, ...]`` along ``dim`` (a view, through ``slice``)."""
    if self.ndim == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    d = wrap_dim(dim, self.ndim)
    n = self.shape[d]
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    if not -n <= start <= n:
        raise IndexError(f"start out of range (expected to be in range of [{-n}, {n}], but got "
                         f"{start})")
    if start < 0:
        start = start + n
    if start + length > n:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({n}).")
    return F.ops.aten.slice(self, d, start, start + length)


narrow = defop("narrow(Tensor(a) self, int dim, SymInt start, SymInt length) -> Tensor(a)",
               COMPOSITE, decomposition=_narrow)


def _repeat(self, repeats):
    """Tile ``self`` ``repeats[i]`` times along dim i: unsqueeze a new dim in front of each
    (padded) dim, expand it to the repeat count, and fold each pair — ``torch/_refs`` does the
    same, so the gradient is expand's (a sum over the copies)."""
    repeats = tuple(repeats)
    if len(repeats) < self.ndim:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number "
                           "of dimensions of tensor")
    if any(r < 0 for r in repeats):
        raise RuntimeError(f"Trying to create tensor with negative dimension "
                           f"{min(repeats)}: {list(repeats)}")
    shape = (1,) * (len(repeats) - self.ndim) + tuple(self.shape)
    x = self.reshape(shape)
    interleaved = tuple(v for s in shape for v in (1, s))
    expanded = tuple(v for r, s in zip(repeats, shape) for v in (r, s))
    out = x.reshape(interleaved).expand(expanded)
    return out.reshape(tuple(r * s for r, s in zip(repeats, shape)))


repeat = defop("repeat(Tensor self, SymInt[] repeats) -> Tensor", COMPOSITE,
               decomposition=_repeat)
