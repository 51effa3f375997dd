"""Lowerings that index by *values*: gathers (``x[idx]``, ``gather``, ``index_select``,
``embedding``), scatters (``index_put``, ``scatter_add``, ``embedding_dense_backward``),
``cat``, ``select_scatter`` and ``argmax``/``argmin`` (their lowerings in
``torch/_inductor/lowering.py``).

The loop IR's indices are affine in the loop variables; these ops need two more ``ops``:

* ``ops.indirect_indexing(value, size, wrap_neg, check)``: a loaded index value becomes an
  index *variable* (``indirect0``), bounded by ``size`` and checked against it with the eager
  kernel's error (``check`` names which one; ``wrap_neg``: negative values count from the end,
  as ``x[idx]`` allows and ``gather`` does not).  A gather is then a ``Pointwise`` whose body
  loads the index, then loads the source at it — so it fuses with what produces the index
  (inlined) and with what consumes the result, and it is a generated kernel, as in torch.
  A scatter is a ``Scatter`` (``ir.py``): a ``Pointwise`` over the values whose *store* index
  has indirect variables, into a fresh copy of the target, in place;
* ``ops.index_expr(index, dtype)``: an index as a value — ``select_scatter`` is
  ``where(i_dim == index, src, x)``.

``argmax``/``argmin`` are ``Reduction``s with ``reduction_type="argmax"`` (torch reduces
(value, index) pairs; the numpy kernel calls ``np.argmax`` on a whole reduction).  ``cat``
computes each input into its slice of the output (``ConcatSlice``), or is one pointwise body.

Invariants: every read or write at a data position is checked against the dim's size (the
kernel raises eager mode's error, never reads or writes out of bounds); a non-int index stays a
fallback kernel.  An empty gather reads nothing (a constant body) and an empty scatter stores
nothing; a kernel over no elements is never called (``codegen/wrapper.py``).  Everything here
is CPU-only (the NPU code generator has no indirect loads): elsewhere the lowering raises
``NotImplementedError`` and the op is a fallback kernel, as before.
"""
from __future__ import annotations

from .. import _dtype
from ..ops.table import wrap_dim
from .dependencies import extract_read_writes
from .ir import (
    ComputedBuffer,
    ConcatSlice,
    ExternKernel,
    FixedLayout,
    FlexibleLayout,
    Pointwise,
    Reduction,
    Scatter,
    TensorBox,
    contiguous_strides,
)
from .lowering import (
    _aten,
    _cast,
    _origins,
    broadcast_loader,
    make_pointwise,
    reduction_index,
    register_lowering,
)
from .sizevars import Affine, as_index, as_sizes, is_symbolic
from .view_lowerings import copy, unsqueeze
from .virtualized import V, ops

_INDEX_DTYPES = (_dtype.int64, _dtype.int32)


def _cpu_only(what: str) -> None:
    if getattr(V.graph, "device_type", "cpu") != "cpu":
        raise NotImplementedError(f"{what}: indirect indexing is CPU-only")


def _check_index(what: str, index) -> None:
    if not isinstance(index, TensorBox) or index.dtype not in _INDEX_DTYPES:
        raise NotImplementedError(f"{what}: the index is not an int32/int64 tensor")


def _empty(size) -> bool:
    return any(isinstance(s, int) and s == 0 for s in size)


def _gathered(x, out_size, body) -> TensorBox:
    """A ``Pointwise`` over ``out_size`` whose body is ``body(index)``.  An empty result has
    no values to gather: its body is a constant that reads nothing (a consumer reducing over
    the empty dim, ``embedding(empty, w).sum(0)``, would otherwise view the empty index input
    in a kernel that does run)."""
    if _empty(out_size):
        dtype = x.dtype
        body = lambda index: ops.constant(0, dtype)  # noqa: E731
    return TensorBox.create(Pointwise(x.dtype, body, tuple(out_size), _origins(x)))


# --------------------------------------------------------------------------- gathers


@register_lowering(_aten("embedding"))
def embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    """``out[*i, j] = weight[indices[*i], j]`` (``padding_idx`` only changes the backward)."""
    _cpu_only("embedding")
    _check_index("embedding", indices)
    rows, cols = weight.get_size()
    n = len(indices.get_size())
    iload, wload = indices.make_loader(), weight.make_loader()

    def body(index):
        row = ops.indirect_indexing(iload(index[:n]), rows, False, "embedding", 0)
        return wload([row, index[n]])
    return _gathered(weight, tuple(indices.get_size()) + (cols,), body)


@register_lowering(_aten("index_select"))
def index_select(x, dim, index):
    """``out[..., j, ...] = x[..., index[j], ...]`` along ``dim``."""
    _cpu_only("index_select")
    _check_index("index_select", index)
    size = list(x.get_size())
    if not size:
        raise NotImplementedError("index_select of a 0-d tensor")
    d = wrap_dim(dim, len(size))
    iload, xload = index.make_loader(), x.make_loader()
    one = len(index.get_size()) == 1

    def body(idx):
        pos = ops.indirect_indexing(iload([idx[d]] if one else []), size[d], False,
                                    "index_select", d)
        return xload(list(idx[:d]) + [pos] + list(idx[d + 1:]))
    out = list(size)
    out[d] = index.get_numel()
    return _gathered(x, out, body)


@register_lowering(_aten("gather"))
def gather(x, dim, index, sparse_grad=False):
    """``out[i] = x[i with i_dim -> index[i]]`` (``index`` has ``x``'s rank)."""
    _cpu_only("gather")
    _check_index("gather", index)
    size = list(x.get_size())
    if not size or len(index.get_size()) != len(size):
        raise NotImplementedError("gather of a 0-d tensor or a 0-d index")
    d = wrap_dim(dim, len(size))
    iload, xload = index.make_loader(), x.make_loader()

    def body(idx):
        pos = ops.indirect_indexing(iload(idx), size[d], False, "gather", d)
        return xload(list(idx[:d]) + [pos] + list(idx[d + 1:]))
    return _gathered(x, index.get_size(), body)


class _AdvancedIndex:
    """``x[i0, :, i2]`` with integer index tensors (broadcast together): the indexed dims
    become the broadcast shape — in place when they are adjacent, else in front (numpy's and
    torch's rule).  ``positions(idx)`` maps an index of the result to one of ``x`` (indirect
    variables in the indexed dims)."""

    def __init__(self, what, size, indices):
        _cpu_only(what)
        self.size = list(size)
        self.indices = list(indices) + [None] * (len(size) - len(indices))
        where = [k for k, t in enumerate(self.indices) if t is not None]
        if not where:
            raise NotImplementedError(f"{what}: no index tensor")
        for k in where:
            _check_index(what, self.indices[k])
        from ..ops.table import broadcast_shapes

        self.bshape = broadcast_shapes(*[tuple(self.indices[k].get_size()) for k in where])
        self.start = where[0] if where[-1] - where[0] == len(where) - 1 else 0
        self.loaders = {k: broadcast_loader(self.indices[k], self.bshape) for k in where}
        kept = [s for t, s in zip(self.indices, self.size) if t is None]
        self.out_size = tuple(kept[:self.start]) + tuple(self.bshape) + \
            tuple(kept[self.start:])

    def positions(self, idx) -> list:
        nb = len(self.bshape)
        b = idx[self.start:self.start + nb]
        kept = iter(list(idx[:self.start]) + list(idx[self.start + nb:]))
        return [next(kept) if t is None else
                ops.indirect_indexing(self.loaders[k](b), self.size[k], True, "index", k)
                for k, t in enumerate(self.indices)]


@register_lowering(_aten("index", "Tensor"))
def index(x, indices):
    """``x[indices]``: a gather at the advanced index's positions.  A boolean mask
    (data-dependent size) is no int tensor: it stays a fallback."""
    adv = _AdvancedIndex("index", x.get_size(), indices)
    xload = x.make_loader()
    return _gathered(x, adv.out_size, lambda idx: xload(adv.positions(idx)))


@register_lowering(_aten("index_put"))
def index_put(x, indices, values, accumulate=False):
    """``x[indices] = values`` (``+=`` with ``accumulate``): a copy of ``x`` (a kernel that
    computes ``x``'s recipe straight into the new buffer), then a ``Scatter`` over the
    indexing result's shape that stores the values at the indirect positions into it, in
    place — the values and the indices inline into the scatter's body (torch's
    ``index_put_impl_`` lowering)."""
    adv = _AdvancedIndex("index_put", x.get_size(), indices)
    if not isinstance(values, TensorBox):
        raise NotImplementedError("index_put: values are not a tensor")
    vload = broadcast_loader(values, adv.out_size)
    return _scatter(copy(x), adv.out_size, lambda idx: _cast(vload(idx), values.dtype, x.dtype),
                    adv.positions, accumulate, x, values)


def _scatter(base: TensorBox, ranges, body, positions, accumulate: bool, *inputs):
    """``base`` (realized here) with ``body(idx)`` stored at ``positions(idx)`` — a list of
    ``base``'s dims with indirect variables — for every ``idx`` in ``ranges``, in place.  No
    ``idx`` (an empty index): ``base`` as it is."""
    if _empty(ranges):
        return base
    base.realize()
    buf0 = base.storage().data
    layout = buf0.layout

    def indexer(pos):
        # as ``layout.make_indexer()``, but a dim of size 1 keeps its indirect variable (whose
        # value is 0): without it the store would not be a scatter, and ``scatter_add`` into a
        # column (``zeros(n, 1).scatter_add(1, idx, src)``) would store, not add, its values
        out = Affine(layout.offset)
        for p, size, stride in zip(pos, layout.size, layout.stride):
            p = as_index(p)
            if size != 1 or any(v.startswith("indirect") for v in p.free_vars):
                out = out + p * stride
        return out
    scatter = Scatter(buf0.get_dtype(), body, tuple(ranges), _origins(*inputs),
                      lambda idx: indexer(positions(idx)), buf0.name,
                      "atomic_add" if accumulate else None)
    buf = ComputedBuffer(V.graph.new_buffer_name(), buf0.layout, set(scatter.origins), scatter)
    V.graph.register_buffer(buf)
    return TensorBox.create(buf)


@register_lowering(_aten("scatter_add"))
def scatter_add(x, dim, index, src, accumulate=True):
    """``out = x.clone(); out[i with i_dim -> index[i]] += src[i]`` (``gather``'s backward);
    ``scatter`` writes instead (repeated indices: the last write wins, as the eager kernel)."""
    _cpu_only("scatter")
    _check_index("scatter", index)
    size = list(x.get_size())
    if not size or len(index.get_size()) != len(size) or len(src.get_size()) != len(size):
        raise NotImplementedError("scatter_add of 0-d tensors")
    d = wrap_dim(dim, len(size))
    iload, sload = index.make_loader(), src.make_loader()

    def positions(idx):
        pos = ops.indirect_indexing(iload(idx), size[d], False, "gather", d)
        return list(idx[:d]) + [pos] + list(idx[d + 1:])
    return _scatter(copy(x), index.get_size(), lambda idx: sload(idx), positions, accumulate,
                    x, index, src)


@register_lowering(_aten("scatter"))
def scatter(x, dim, index, src):
    if not isinstance(src, TensorBox):
        raise NotImplementedError("scatter with a number")
    return scatter_add(x, dim, index, src, accumulate=False)


@register_lowering(_aten("embedding_dense_backward"))
def embedding_dense_backward(grad, indices, num_weights, padding_idx):
    """Zeros of the weight's shape, each gradient row added at its index's row
    (``padding_idx``'s rows add nothing)."""
    _cpu_only("embedding_dense_backward")
    _check_index("embedding_dense_backward", indices)
    from .sizevars import from_sym_int

    rows, cols = from_sym_int(num_weights), grad.get_size()[-1]
    n = len(indices.get_size())
    iload, gload = indices.make_loader(), grad.make_loader()
    dtype = grad.dtype

    def body(idx):
        g = gload(idx)
        if isinstance(padding_idx, int) and padding_idx >= 0:
            pad = ops.equal(iload(idx[:n]), ops.constant(padding_idx, indices.dtype))
            g = ops.where(pad, ops.constant(0, dtype), g)
        return g

    def positions(idx):
        return [ops.indirect_indexing(iload(idx[:n]), rows, False, "embedding", 0), idx[n]]
    zeros = make_pointwise(lambda: ops.constant(0, dtype), [], dtype, (rows, cols))
    return _scatter(zeros, tuple(indices.get_size()) + (cols,), body, positions, True,
                    grad, indices)


# --------------------------------------------------------------------------- cat


@register_lowering(_aten("cat"))
def cat(tensors, dim=0):
    """Each input computed straight into its slice of the output (torch's ``ConcatKernel``:
    an unrealized input's body runs in the kernel that writes the slice, so ``cat`` itself
    copies nothing; a realized input is one copy kernel).  Inputs with nothing to add (torch's
    legacy empty ``(0,)``) are skipped."""
    _cpu_only("cat")
    meta = V.graph.current_meta()
    size = as_sizes(meta.shape)
    d = wrap_dim(dim, len(size))
    tensors = [t for t in tensors if len(t.get_size()) == len(size) and 0 not in t.get_size()]
    if 1 < len(tensors) <= 8 and any(not extract_read_writes(
            Pointwise(t.dtype, t.make_loader(), tuple(t.get_size()))).reads for t in tensors):
        return _pointwise_cat(tensors, d, size, meta.dtype)
    strides = contiguous_strides(size)
    name = V.graph.new_buffer_name()
    slices, offset = [], 0
    for t in tensors:
        shape = tuple(t.get_size())
        body = make_pointwise(lambda v, t=t: _cast(v, t.dtype, meta.dtype), [t], meta.dtype)
        pw = body.storage().data
        buf = ConcatSlice(V.graph.new_buffer_name(), FixedLayout(meta.dtype, shape, strides),
                          set(pw.origins), pw, name, offset * strides[d])
        V.graph.register_buffer(buf)
        slices.append((buf, shape, strides, 0))
        offset += shape[d]
    out = ExternKernel(name, FlexibleLayout(meta.dtype, size), _origins(*tensors), "concat",
                       None, slices)
    V.graph.register_buffer(out)
    return TensorBox.create(out)


def _pointwise_cat(tensors, d, size, dtype) -> TensorBox:
    """``where(i_d < o1, a[.., i_d, ..], where(i_d < o2, b[.., i_d - o1, ..], ...))``, each
    input read at a clamped position (``ops.index_expr`` then ``ops.indirect_indexing``), so
    no read is out of bounds — torch's ``pointwise_cat`` with ``ops.masked`` loads.  Chosen
    when an input reads no memory (``zeros(...).expand``): as a slice kernel of its own it
    would share no data to fuse with.  Each input is computed over the whole output."""
    starts, offset = [], 0
    for t in tensors:
        starts.append(offset)
        offset += t.get_size()[d]
    loaders = [t.make_loader() for t in tensors]

    def body(idx):
        pos = ops.index_expr(idx[d], _dtype.int64)
        out = None
        for k in reversed(range(len(tensors))):
            n = tensors[k].get_size()[d]
            at = ops.minimum(ops.maximum(ops.subtract(pos, ops.constant(starts[k], _dtype.int64)),
                                         ops.constant(0, _dtype.int64)),
                             ops.constant(n - 1, _dtype.int64))
            full = list(idx)
            full[d] = ops.indirect_indexing(at, n, False, "index", d)
            v = _cast(loaders[k](full), tensors[k].dtype, dtype)
            if out is None:
                out = v
            else:
                out = ops.where(ops.less(pos, ops.constant(starts[k + 1], _dtype.int64)), v, out)
        return out
    return TensorBox.create(Pointwise(dtype, body, tuple(size), _origins(*tensors)))


# --------------------------------------------------------------------------- index values


@register_lowering(_aten("select_scatter"))
def select_scatter(x, src, dim, index):
    """``out = where(i_dim == index, src, x)``: one pointwise body, as torch's lowering, so
    ``x[:, 3] = 3.0`` fuses with its neighbours; the condition compares ``ops.index_expr``
    of the loop variable with the index."""
    _cpu_only("select_scatter")
    size = list(x.get_size())
    d = wrap_dim(dim, len(size))
    if is_symbolic(index):
        raise NotImplementedError("select_scatter: a symbolic index")
    if index < 0:
        index = index + size[d]
    dtype = x.dtype
    sload = broadcast_loader(unsqueeze(src, d), tuple(size))
    xload = x.make_loader()

    def body(idx):
        hit = ops.equal(ops.index_expr(idx[d], _dtype.int64), ops.constant(index, _dtype.int64))
        return ops.where(hit, _cast(sload(idx), src.dtype, dtype), xload(idx))
    return _gathered(x, size, body)


def _arg_reduction(kind: str):
    def lower(x, dim=None, keepdim=False):
        _cpu_only(kind)
        size = list(x.get_size())
        if not size:
            raise NotImplementedError(f"{kind} of a 0-d tensor")
        dims = tuple(range(len(size))) if dim is None else (wrap_dim(dim, len(size)),)
        kept = [k for k in range(len(size)) if k not in dims]
        ranges = tuple(size[k] for k in kept)
        rranges = tuple(size[k] for k in dims)
        loader = x.make_loader()

        def inner_fn(index, rindex):
            return loader(reduction_index(len(size), kept, index, dims, rindex))
        if all(isinstance(s, int) and s == 1 for s in rranges):  # one element: index 0
            out = make_pointwise(lambda: ops.constant(0, _dtype.int64), [], _dtype.int64,
                                 ranges)
        else:
            out = TensorBox.create(Reduction(_dtype.int64, inner_fn, ranges, _origins(x),
                                             rranges, kind, x.dtype))
            out.realize()
        if keepdim:
            for k in dims:
                out = unsqueeze(out, k)
        return out
    return lower


register_lowering(_aten("argmax"))(_arg_reduction("argmax"))
register_lowering(_aten("argmin"))(_arg_reduction("argmin"))

__all__ = ["cat", "embedding", "embedding_dense_backward", "gather", "index", "index_put",
           "index_select", "scatter", "scatter_add", "select_scatter"]
