"""Shape-moving ops: ``roll``, ``tril``/``triu``, ``diag``, ``movedim``, ``expand_as``,
``unflatten``, ``tile``, ``repeat_interleave`` (int repeats), ``hstack``/``vstack``.

Mirrors ``aten/src/ATen/native/TensorTransformations.cpp`` (roll), ``TriangularOps.cpp``
(tril/triu), ``TensorShape.cpp`` (diag, movedim, expand_as, unflatten, tile, the stacks) and
``Repeat.cpp``.

Primitives (each its own numpy kernel): ``roll`` (``np.roll``; no ``dims`` rolls the flattened
tensor), ``tril``/``triu`` (``np.tril``/``np.triu`` act on the last two dims of a batch, as
torch's do), ``diag`` (a vector to a square matrix with it on diagonal ``k``, or a matrix's
``k``-th diagonal to a vector).  Their gradients apply the same op to ``grad`` (``roll`` by
``-shifts``, ``tril`` again, ``diag`` back).

Composites, recorded in graphs as the views they decompose into, as torch's are:

* ``movedim(src, dst)``: ``permute`` with ``src`` placed at ``dst`` and the other dims in order;
* ``expand_as(other)``: ``expand(other.shape)``; ``unflatten(dim, sizes)``: ``view``;
* ``tile(reps)``: ``repeat`` with ``reps`` padded with leading 1s to the tensor's rank;
* ``repeat_interleave(r, dim)``: ``unsqueeze(dim + 1) -> expand r -> reshape`` (no dim: of
  the flattened tensor); with a tensor of per-slice repeats, ``index_select`` at
  ``repeat_interleave(repeats)`` (a primitive: ``i`` written ``repeats[i]`` times);
* ``hstack``/``vstack``: ``cat`` along dim 1 (0 for vectors) / dim 0 of ``atleast_1d``/``2d``.
"""

from __future__ import annotations

import numpy as np

from .. import _api as F
from .. import _dtype
from .indexing import _dynamic_output_shape, _has_data
from .table import COMPOSITE, INDEXING, MetaError, TensorMeta, defop, wrap_dim


def _int_list(v) -> tuple:
    return (v,) if isinstance(v, int) else tuple(v)


# ---------------------------------------------------------------- roll


def _roll_meta(self, shifts, dims=()):
    shifts, dims = _int_list(shifts), _int_list(dims)
    if not shifts:
        raise MetaError("`shifts` required")
    if dims and len(shifts) != len(dims) or not dims and len(shifts) != 1:
        raise MetaError(f"shifts and dimensions must align. shifts: {len(shifts)}, "
                        f"dims:{len(dims)}")
    for d in dims:
        wrap_dim(d, self.ndim)
    return TensorMeta(tuple(self.shape), self.dtype)


def _roll_kernel(a, shifts, dims=()):
    shifts, dims = _int_list(shifts), _int_list(dims)
    if not dims:
        return np.roll(a.reshape(-1), shifts[0]).reshape(a.shape)
    if a.ndim == 0:
        return a.copy()
    return np.roll(a, shifts, axis=tuple(d % a.ndim for d in dims))


roll = defop("roll(Tensor self, SymInt[1] shifts, int[1] dims=[]) -> Tensor", INDEXING,
             kernel=_roll_kernel, meta=_roll_meta,
             derivatives={"self": lambda grad, shifts, dims: F.ops.aten.roll(
                 grad, [-s for s in _int_list(shifts)], dims)})

# ---------------------------------------------------------------- tril / triu


def _tri_meta(name):
    def meta(self, diagonal=0):
        if self.ndim < 2:
            raise MetaError(f"{name}: input tensor must have at least 2 dimensions")
        return TensorMeta(tuple(self.shape), self.dtype)
    return meta


tril = defop("tril(Tensor self, int diagonal=0) -> Tensor", INDEXING,
             kernel=lambda a, diagonal=0: np.tril(a, diagonal), meta=_tri_meta("tril"),
             inplace=True,
             derivatives={"self": lambda grad, diagonal: grad.tril(diagonal)})
triu = defop("triu(Tensor self, int diagonal=0) -> Tensor", INDEXING,
             kernel=lambda a, diagonal=0: np.triu(a, diagonal), meta=_tri_meta("triu"),
             inplace=True,
             derivatives={"self": lambda grad, diagonal: grad.triu(diagonal)})

# ---------------------------------------------------------------- diag


def _diag_meta(self, diagonal=0):
    if self.ndim == 1:
        n = self.shape[0] + abs(diagonal)
        return TensorMeta((n, n), self.dtype)
    if self.ndim != 2:
        raise MetaError(f"diag(): Supports 1D or 2D tensors. Got {self.ndim}D")
    rows, cols = self.shape
    length = max(0, min(rows + min(diagonal, 0), cols - max(diagonal, 0)))
    return TensorMeta((length,), self.dtype)


def _diag_backward(grad, self_sizes, diagonal):
    """A vector's gradient is ``grad``'s diagonal; a matrix's is the vector ``grad`` put back on
    its diagonal: row ``r`` holds ``grad[r]`` at column ``r + k`` (``k >= 0``), column ``c``
    holds ``grad[c]`` at row ``c - k`` (``k < 0``) — a ``where`` over an index comparison."""
    if len(self_sizes) == 1:
        return F.ops.aten.diag(grad, diagonal)
    rows, cols = self_sizes
    r = F.arange(rows, device=grad.device).unsqueeze(1)
    c = F.arange(cols, device=grad.device).unsqueeze(0)
    along = rows if diagonal >= 0 else cols
    padded = F.cat([grad, grad.new_zeros((along - grad.shape[0],))]) if along > grad.shape[0] \
        else grad
    values = padded.unsqueeze(1) if diagonal >= 0 else padded.unsqueeze(0)
    return F.where(c - r == diagonal, values, 0)


diag = defop("diag(Tensor self, int diagonal=0) -> Tensor", INDEXING,
             kernel=lambda a, diagonal=0: np.diag(a, diagonal).copy(), meta=_diag_meta,
             derivatives={"self": _diag_backward})

# ---------------------------------------------------------------- view composites


def _movedim(self, source, destination):
    src = [wrap_dim(d, self.ndim) for d in _int_list(source)]
    dst = [wrap_dim(d, self.ndim) for d in _int_list(destination)]
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({src} dims) "
                           f"should contain the same number of dims as destination ({dst} dims)")
    if len(set(src)) != len(src):
        raise RuntimeError(f"movedim: repeated dim in `source` ({list(_int_list(source))})")
    if len(set(dst)) != len(dst):
        raise RuntimeError(f"movedim: repeated dim in `destination` "
                           f"({list(_int_list(destination))})")
    order = [None] * self.ndim
    for s, d in zip(src, dst):
        order[d] = s
    rest = iter(d for d in range(self.ndim) if d not in src)
    order = [next(rest) if o is None else o for o in order]
    return self.permute(order) if self.ndim else self.view(())


movedim = defop("movedim(Tensor(a) self, int[] source, int[] destination) -> Tensor(a)",
                COMPOSITE, decomposition=_movedim)
expand_as = defop("expand_as(Tensor(a) self, Tensor other) -> Tensor(a)", COMPOSITE,
                  decomposition=lambda self, other: self.expand(tuple(other.shape)))


def _unflatten(self, dim, sizes):
    d = wrap_dim(dim, self.ndim)
    sizes = list(sizes)
    if sizes.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    known = 1
    for s in sizes:
        known *= s if s != -1 else 1
    if -1 in sizes:
        sizes[sizes.index(-1)] = self.shape[d] // known if known else 0
    elif known != self.shape[d]:
        raise RuntimeError(f"unflatten: Provided sizes {list(sizes)} don't multiply up to the "
                           f"size of dim {dim} ({self.shape[d]}) in the input tensor")
    shape = tuple(self.shape)
    return self.view(shape[:d] + tuple(sizes) + shape[d + 1:])


unflatten = defop("unflatten.int(Tensor(a) self, int dim, SymInt[] sizes) -> Tensor(a)",
                  COMPOSITE, decomposition=_unflatten)

# ---------------------------------------------------------------- copies by repetition


def _tile(self, dims):
    dims = tuple(dims)
    return self.repeat((1,) * (self.ndim - len(dims)) + dims)


tile = defop("tile(Tensor self, SymInt[] dims) -> Tensor", COMPOSITE, decomposition=_tile)


def _repeat_interleave(self, repeats, dim=None, output_size=None):
    if repeats < 0:
        raise RuntimeError("repeats can not be negative")
    x = self.reshape(-1) if dim is None else self
    d = 0 if dim is None else wrap_dim(dim, x.ndim)
    inserted = x.unsqueeze(d + 1)  # a 0-dim self with a dim: torch's IndexError, from here
    shape = list(x.shape)
    expanded = shape[:d + 1] + [repeats] + shape[d + 1:]
    shape[d] *= repeats
    return inserted.expand(tuple(expanded)).reshape(tuple(shape))


repeat_interleave = defop(
    "repeat_interleave.self_int(Tensor self, SymInt repeats, int? dim=None, *, "
    "SymInt? output_size=None) -> Tensor", COMPOSITE, decomposition=_repeat_interleave,
    notes="int repeats only (torch also takes a tensor of per-element repeats)")


def _repeat_interleave_tensor_meta(repeats, output_size=None):
    if repeats.ndim != 1:
        raise MetaError("repeat_interleave only accept 1D vector as repeat")
    if repeats.dtype not in (_dtype.int64, _dtype.int32):
        raise MetaError("repeats has to be Long or Int tensor")
    if output_size is not None:
        return TensorMeta((output_size,), repeats.dtype)
    if not _has_data(repeats):
        raise _dynamic_output_shape("repeat_interleave", "its repeats")
    data = repeats._data
    if data.size and data.min() < 0:
        raise MetaError("repeats can not be negative")
    return TensorMeta((int(data.sum()),), repeats.dtype)


# ``repeat_interleave(repeats)``: the index ``i`` written ``repeats[i]`` times — the index an
# ``index_select`` needs to repeat each slice its own number of times.  Its length is the sum of
# the repeats, known only from their values (a graph break under ``mtc.compile``, as in torch).
repeat_interleave_tensor = defop(
    "repeat_interleave.Tensor(Tensor repeats, *, SymInt? output_size=None) -> Tensor",
    INDEXING, meta=_repeat_interleave_tensor_meta, differentiable=False,
    kernel=lambda repeats, output_size=None: np.repeat(
        np.arange(repeats.shape[0], dtype=repeats.dtype), repeats))


def _repeat_interleave_self_tensor(self, repeats, dim=None, output_size=None):
    x = self.reshape(-1) if dim is None else self
    d = 0 if dim is None else wrap_dim(dim, x.ndim)
    n = x.shape[d] if x.ndim else 1
    if repeats.ndim == 0 or repeats.numel() == 1:
        repeats = repeats.reshape(1).expand((n,))
    elif repeats.ndim != 1 or repeats.shape[0] != n:
        raise RuntimeError("repeats must have the same size as input along dim, but got "
                           f"repeats.size(0) = {repeats.shape[0]} and input.size({d}) = {n}")
    index = F.ops.aten.repeat_interleave.Tensor(repeats, output_size=output_size)
    return x.index_select(d, index)


repeat_interleave_self_tensor = defop(
    "repeat_interleave.self_Tensor(Tensor self, Tensor repeats, int? dim=None, *, "
    "SymInt? output_size=None) -> Tensor", COMPOSITE,
    decomposition=_repeat_interleave_self_tensor)


def _atleast(t, n):
    while t.ndim < n:
        t = t.unsqueeze(0)
    return t


def _hstack(tensors):
    ts = [_atleast(t, 1) for t in tensors]
    return F.cat(ts, 0 if ts and ts[0].ndim == 1 else 1)


hstack = defop("hstack(Tensor[] tensors) -> Tensor", COMPOSITE, decomposition=_hstack)
vstack = defop("vstack(Tensor[] tensors) -> Tensor", COMPOSITE,
               decomposition=lambda tensors: F.cat([_atleast(t, 2) for t in tensors], 0))
