"""Views and shape ops: view, transpose, permute, (un)squeeze, expand, slice, select, cat ...

A *view* op returns a tensor sharing memory with its input (numpy views do exactly that), its
``_base`` set and its version counter shared, so an in-place write through either is visible
in both — as in torch.  ``reshape``, ``flatten``, ``t``, ``contiguous``, ``stack``, ``split``
are composites: they decompose into the primitive views (and ``clone`` when a copy is needed).
"""

from __future__ import annotations

import numpy as np

from .. import _api as F
from .table import (
    COMPOSITE,
    INDEXING,
    POINTWISE,
    VIEW,
    MetaError,
    TensorMeta,
    defop,
    wrap_dim,
)


def infer_size(shape, numel: int) -> tuple:
    """Resolve one ``-1`` in ``shape``; torch's error when sizes disagree."""
    shape = tuple(shape)
    neg = [i for i, s in enumerate(shape) if s == -1]
    if len(neg) > 1:
        raise MetaError("only one dimension can be inferred")
    known = 1
    for s in shape:
        if s != -1:
            if s < 0:
                raise MetaError(f"invalid shape dimension {s}")
            known *= s
    if neg:
        if known == 0 or numel % known:
            raise MetaError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        shape = shape[: neg[0]] + (numel // known,) + shape[neg[0] + 1:]
    elif known != numel:
        raise MetaError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    return shape


def _numel(shape) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


# ---------------------------------------------------------------- view / reshape


def _view_kernel(a, size):
    shape = infer_size(size, a.size)
    try:
        return np.reshape(a, shape, copy=False)
    except ValueError:
        raise MetaError(
            "view: view size is not compatible with input tensor's size and stride (at least one "
            "dimension spans across two contiguous subspaces). Use .reshape(...) instead. "
            f"(input size {list(a.shape)}, strides {[s // a.itemsize for s in a.strides]}, "
            f"view size {list(size)})") from None


view = defop("view(Tensor(a) self, SymInt[] size) -> Tensor(a)", VIEW, kernel=_view_kernel,
             meta=lambda self, size: TensorMeta(infer_size(size, _numel(self.shape)), self.dtype),
             derivatives={"self": lambda grad, self_sizes: grad.reshape(self_sizes)})


def _reshape(self, shape):
    """A view when the memory layout allows (contiguous input), else a copy then a view."""
    try:
        infer_size(shape, self.numel())  # a bad shape is reshape's error, not view's
    except MetaError as e:
        raise MetaError(f"reshape: {e}") from None
    if self.is_contiguous():
        return F.ops.aten.view(self, shape)
    return F.ops.aten.view(F.ops.aten.clone(self), shape)


reshape = defop("reshape(Tensor(a) self, SymInt[] shape) -> Tensor(a)", COMPOSITE,
                decomposition=_reshape)


def _flatten(self, start_dim=0, end_dim=-1):
    if self.ndim == 0:
        return self.reshape((1,))
    s, e = wrap_dim(start_dim, self.ndim), wrap_dim(end_dim, self.ndim)
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    shape = tuple(self.shape)
    return self.reshape(shape[:s] + (_numel(shape[s:e + 1]),) + shape[e + 1:])


flatten = defop("flatten(Tensor(a) self, int start_dim=0, int end_dim=-1) -> Tensor(a)",
                COMPOSITE, decomposition=_flatten)

# ---------------------------------------------------------------- transpose / permute


def _transpose_meta(self, dim0, dim1):
    d0, d1 = wrap_dim(dim0, self.ndim), wrap_dim(dim1, self.ndim)
    shape = list(self.shape)
    if shape:
        shape[d0], shape[d1] = shape[d1], shape[d0]
    return TensorMeta(tuple(shape), self.dtype)


transpose = defop(
    "transpose(Tensor(a) self, int dim0, int dim1) -> Tensor(a)", VIEW,
    kernel=lambda a, d0, d1: np.swapaxes(a, d0, d1) if a.ndim else a.view(),
    meta=_transpose_meta,
    derivatives={"self": lambda grad, dim0, dim1: grad.transpose(dim0, dim1)})


def _permute_meta(self, dims):
    if len(dims) != self.ndim:
        raise MetaError(f"permute: number of dimensions in the tensor input does not match the "
                        f"length of the desired ordering of dimensions i.e. input.dim() = "
                        f"{self.ndim} is not equal to len(dims) = {len(dims)}")
    wrapped = [wrap_dim(d, self.ndim) for d in dims]
    if len(set(wrapped)) != len(wrapped):
        raise MetaError("permute(): duplicate dims are not allowed.")
    return TensorMeta(tuple(self.shape[d] for d in wrapped), self.dtype)


def _permute_backward(grad, dims):
    n = len(dims)
    inverse = [0] * n
    for i, d in enumerate(dims):
        inverse[d % n if n else 0] = i
    return grad.permute(inverse)


permute = defop("permute(Tensor(a) self, int[] dims) -> Tensor(a)", VIEW,
                kernel=lambda a, dims: np.transpose(a, [d % max(a.ndim, 1) for d in dims]),
                meta=_permute_meta, derivatives={"self": _permute_backward})


def _t(self):
    if self.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is "
                           f"{self.ndim}D")
    # torch: a view even below 2-D (``transpose(0, 0)``), never ``self`` itself
    out = self.transpose(0, 1) if self.ndim == 2 else self.transpose(0, 0)
    _name_grad_fn(out, "TBackward0")
    return out


# the node a composite records, renamed after the op torch records as its own node
_RENAMES = {"TBackward0": "TransposeBackward0", "UnbindBackward0": "SelectBackward0",
            "SplitBackward0": "SliceBackward0", "SplitWithSizesBackward0": "SliceBackward0"}
# (composites that are not views are renamed by autograd/node_names.py's table)


def _name_grad_fn(out, name: str) -> None:
    """Torch records ``t`` as its own node (``TBackward0``), and ``unbind``/``split`` too;
    ours is the ``transpose`` (``select``, ``slice``) they decompose into, renamed when it was recorded just now for this call (a node of that op's class:
    ``t()`` of a tensor without grad has none, and ``x.chunk(1)[0]`` is a slice too).
    Only the name changes: the node's formulas, edges and ``output_nr`` stay the op's."""
    from ..autograd.graph import OpBackward, node_class

    fn = out.__dict__.get("_grad_fn")
    if type(fn).__name__ == _RENAMES[name] and isinstance(fn, OpBackward):
        fn.__class__ = node_class(OpBackward, name)
        fn._name = name


t = defop("t(Tensor(a) self) -> Tensor(a)", COMPOSITE, decomposition=_t)

# ---------------------------------------------------------------- (un)squeeze / expand


def _unsqueeze_meta(self, dim):
    d = wrap_dim(dim, self.ndim + 1)
    shape = tuple(self.shape)
    return TensorMeta(shape[:d] + (1,) + shape[d:], self.dtype)


unsqueeze = defop("unsqueeze(Tensor(a) self, int dim) -> Tensor(a)", VIEW,
                  kernel=lambda a, dim: np.expand_dims(a, dim % (a.ndim + 1)),
                  meta=_unsqueeze_meta,
                  derivatives={"self": lambda grad, dim: grad.squeeze(dim)})


def _squeeze_dims(shape, dim) -> tuple:
    if dim is None:
        return tuple(i for i, s in enumerate(shape) if s == 1)
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    dims = tuple(wrap_dim(d, len(shape)) for d in dims)  # a 0-dim tensor accepts dim 0 / -1
    return tuple(d for d in dims if shape and shape[d] == 1)


def _squeeze_meta(self, dim=None):
    dims = _squeeze_dims(tuple(self.shape), dim)
    return TensorMeta(tuple(s for i, s in enumerate(self.shape) if i not in dims), self.dtype)


squeeze = defop("squeeze(Tensor(a) self, int[1]? dim=None) -> Tensor(a)", VIEW,
                kernel=lambda a, dim=None: np.squeeze(a, _squeeze_dims(a.shape, dim)),
                meta=_squeeze_meta,
                derivatives={"self": lambda grad, self_sizes: grad.reshape(self_sizes)})


def _expand_shape(shape, size) -> tuple:
    size = tuple(size)
    if len(size) < len(shape):
        raise MetaError(f"expand: the number of sizes provided ({len(size)}) must be greater or "
                        f"equal to the number of dimensions in the tensor ({len(shape)})")
    out = []
    lead = len(size) - len(shape)
    for i, s in enumerate(size):
        if i < lead:
            if s < 0:
                raise MetaError(f"expand: The expanded size of the tensor ({s}) isn't allowed "
                                f"in a leading, non-existing dimension {i}")
            out.append(s)
            continue
        have = shape[i - lead]
        if s == -1:
            s = have
        elif have != s and have != 1:
            raise MetaError(
                f"The expanded size of the tensor ({s}) must match the existing size ({have}) "
                f"at non-singleton dimension {i}.  Target sizes: {list(size)}.  Tensor sizes: "
                f"{list(shape)}")
        out.append(s)
    return tuple(out)


expand = defop(
    "expand(Tensor(a) self, SymInt[] size, *, bool implicit=False) -> Tensor(a)", VIEW,
    kernel=lambda a, size, implicit=False: np.broadcast_to(a, _expand_shape(a.shape, size)),
    meta=lambda self, size, implicit=False: TensorMeta(
        _expand_shape(tuple(self.shape), size), self.dtype),
    derivatives={"self": lambda grad, self_sizes: grad.sum_to_size(self_sizes)})


def _sum_to_size(self, size):
    """Sum ``self`` down to ``size`` (the reverse of broadcasting)."""
    size = tuple(size)
    shape = tuple(self.shape)
    if len(shape) == len(size) and shape == size:  # lengths first: (s0, 4) vs (4,) asks
        return self  # no question of s0 (a symbolic size would record a guard)
    lead = len(shape) - len(size)
    if lead < 0:
        raise RuntimeError(f"size {list(size)} is not expandable to size {list(shape)}")
    dims = list(range(lead))
    for i, s in enumerate(size):
        if s == 1 and shape[lead + i] != 1:
            dims.append(lead + i)
        elif s != shape[lead + i]:
            raise RuntimeError(f"size {list(size)} is not expandable to size {list(shape)}")
    out = self.sum(dims, keepdim=True) if dims else self
    return out.view(size) if lead or tuple(out.shape) != size else out


sum_to_size = defop("sum_to_size(Tensor self, SymInt[] size) -> Tensor", COMPOSITE,
                    decomposition=_sum_to_size)

# ---------------------------------------------------------------- slice / select


def _slice_length(size, start, end, step):
    """``len(range(size)[start:end:step])``; with symbolic sizes the common ``x[:n]`` /
    ``x[n:]`` (step 1, non-negative bounds) stays symbolic, decisions guarded."""
    symbolic = any(hasattr(v, "hint") for v in (size, start, end))
    if symbolic and step == 1:
        def from_end(v):  # x[:-1]: the bound is size - 1, at least 0 (decisions guarded)
            if type(v) is int and v < 0 and hasattr(size, "hint"):
                v = size + v
                return 0 if v < 0 else v
            return v
        lo = 0 if start is None else from_end(start)
        hi = size if end is None else from_end(end)
        if lo >= 0 and hi >= 0:  # guarded decisions on symbols
            lo = size if lo > size else lo
            hi = size if hi > size else hi
            return 0 if hi <= lo else hi - lo
    ints = [None if v is None else int(v) for v in (start, end, step)]  # specialises symbols
    return len(range(*slice(*ints).indices(int(size))))


def _slice_meta(self, dim=0, start=None, end=None, step=1):
    d = wrap_dim(dim, self.ndim)
    if step <= 0:
        raise MetaError("slice step must be positive")
    length = _slice_length(self.shape[d], start, end, step)
    shape = list(self.shape)
    shape[d] = length
    return TensorMeta(tuple(shape), self.dtype)


def _slice_kernel(a, dim=0, start=None, end=None, step=1):
    return a[(slice(None),) * wrap_dim(dim, a.ndim) + (slice(start, end, step),)]


defop(
    "slice.Tensor(Tensor(a) self, int dim=0, SymInt? start=None, SymInt? end=None, "
    "SymInt step=1) -> Tensor(a)", VIEW, kernel=_slice_kernel, meta=_slice_meta,
    derivatives={"self": lambda grad, self_sizes, dim, start, end, step:
                 F.ops.aten.slice_backward(grad, self_sizes, dim, start, end, step)})


def _select_meta(self, dim, index):
    if self.ndim == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = wrap_dim(dim, self.ndim)
    n = self.shape[d]
    if not -n <= index < n:
        raise IndexError(f"select(): index {index} out of range for tensor of size "
                         f"{list(self.shape)} at dimension {d}")
    if index < 0:  # torch's meta wraps a negative index: a symbolic one is guarded on its sign
        index = index + n
    return TensorMeta(tuple(s for i, s in enumerate(self.shape) if i != d), self.dtype)


select = defop(
    "select.int(Tensor(a) self, int dim, SymInt index) -> Tensor(a)", VIEW,
    # the trailing ``...`` keeps a 0-dim result a numpy *view* (``a[i]`` of a 1-D array copies)
    kernel=lambda a, dim, index: a[(slice(None),) * (dim % a.ndim) + (index, ...)],
    meta=_select_meta,
    derivatives={"self": lambda grad, self_sizes, dim, index:
                 F.ops.aten.select_backward(grad, self_sizes, dim, index)})


def _slice_backward_kernel(g, input_sizes, dim, start, end, step):
    out = np.zeros(tuple(input_sizes), dtype=g.dtype)
    out[(slice(None),) * wrap_dim(dim, len(input_sizes)) + (slice(start, end, step),)] = g
    return out


slice_backward = defop(
    "slice_backward(Tensor grad_output, SymInt[] input_sizes, int dim, SymInt? start, "
    "SymInt? end, SymInt step) -> Tensor", INDEXING, kernel=_slice_backward_kernel,
    meta=lambda grad_output, input_sizes, dim, start, end, step: TensorMeta(
        tuple(input_sizes), grad_output.dtype),
    derivatives={"grad_output": lambda grad, dim, start, end, step:
                 F.ops.aten.slice(grad, dim, start, end, step)})


def _select_backward_kernel(g, input_sizes, dim, index):
    out = np.zeros(tuple(input_sizes), dtype=g.dtype)
    out[(slice(None),) * wrap_dim(dim, len(input_sizes)) + (index,)] = g
    return out


select_backward = defop(
    "select_backward(Tensor grad_output, SymInt[] input_sizes, int dim, SymInt index) -> Tensor",
    INDEXING, kernel=_select_backward_kernel,
    meta=lambda grad_output, input_sizes, dim, index: TensorMeta(
        tuple(input_sizes), grad_output.dtype),
    derivatives={"grad_output": lambda grad, dim, index: grad.select(dim, index)})

# ---------------------------------------------------------------- copies and conversion

detach = defop("detach(Tensor(a) self) -> Tensor(a)", VIEW, kernel=lambda a: a.view(),
               meta=lambda self: TensorMeta(tuple(self.shape), self.dtype),
               differentiable=False)


def _contiguous(self, memory_format=None):
    return self if self.is_contiguous() else F.ops.aten.clone(self)


contiguous = defop("contiguous(Tensor(a) self, *, str? memory_format=None) -> Tensor(a)",
                   COMPOSITE, decomposition=_contiguous)


def _to_copy_meta(self, dtype=None, device=None):
    return TensorMeta(tuple(self.shape), dtype or self.dtype)


_to_copy = defop(
    "_to_copy(Tensor self, *, ScalarType? dtype=None, Device? device=None) -> Tensor", POINTWISE,
    kernel=lambda a, dtype=None, device=None: np.array(
        a, dtype=None if dtype is None else dtype.np, order="C", copy=True),
    meta=_to_copy_meta,
    derivatives={"self": lambda grad, self: F.ops.aten._to_copy(
        grad, dtype=self.dtype, device=self.device)},
    notes="dtype/device conversion; gradients flow back converted to the source's dtype/device")


def _copy_backward_src(grad, src_sizes, src_dtype):
    g = grad.sum_to_size(src_sizes) if tuple(grad.shape) != tuple(src_sizes) else grad
    return g.to(src_dtype)


copy_ = defop("copy_(Tensor(a!) self, Tensor src, bool non_blocking=False) -> Tensor(a!)",
              INDEXING, kernel=None,
              meta=lambda self, src, non_blocking=False: TensorMeta(tuple(self.shape),
                                                                    self.dtype),
              derivatives={"self": lambda grad: F.zeros_like(grad),
                           "src": _copy_backward_src})


def _copy_kernel(self, src, non_blocking=False, copy_data=True):
    from .table import broadcast_shapes, check_writable

    if broadcast_shapes(tuple(self.shape), tuple(src.shape)) != tuple(self.shape):
        raise RuntimeError(f"copy_: the size of src {list(src.shape)} can't be broadcast to "
                           f"the destination size {list(self.shape)}")
    if copy_data and self._device.type != "meta":
        check_writable(self)
        np.copyto(self._data, src._data if hasattr(src, "_data") else src, casting="unsafe")
    self._bump_version()
    return self


def _copy_meta(self, src, non_blocking=False):
    # meta and fake tensors (a fake cpu tensor too) have no data to write: check shapes only
    return _copy_kernel(self, src, non_blocking, copy_data=False)


for _key, _kernel in (("CPU", _copy_kernel), ("NPU", _copy_kernel), ("Meta", _copy_meta)):
    from .._dispatch import DispatchKey

    copy_.kernels[DispatchKey[_key]] = _kernel

alias = defop("alias(Tensor(a) self) -> Tensor(a)", VIEW, kernel=lambda a: a.view(),
              meta=lambda self: TensorMeta(tuple(self.shape), self.dtype),
              derivatives={"self": lambda grad: grad})
