"""Lowerings that index by *values*: ``x[idx]``, ``gather``, ``index_select``, ``embedding``,
``select_scatter`` and ``argmax``/``argmin`` (the ``index``, ``gather``, ``embedding``,
``index_select``, ``select_scatter`` and ``argmax`` lowerings of
``torch/_inductor/lowering.py``).

The loop IR's indices are affine in the loop variables; these ops need two more ``ops``:

* ``ops.indirect_indexing(value, size, wrap_neg, check)``: a loaded index value becomes an
  index *variable* (``indirect0``), bounded by ``size`` and checked against it with the eager
  kernel's error (``check`` names which one; ``wrap_neg``: negative values count from the end,
  as ``x[idx]`` allows and ``gather`` does not).  A gather is then a ``Pointwise`` whose body
  loads the index, then loads the source at it — so it fuses with what produces the index
  (inlined) and with what consumes the result, and it is a generated kernel, as in torch;
* ``ops.index_expr(index, dtype)``: an index as a value — ``select_scatter`` is
  ``where(i_dim == index, src, x)``.

``argmax``/``argmin`` are ``Reduction``s with ``reduction_type="argmax"`` (torch reduces
(value, index) pairs; the numpy kernel calls ``np.argmax`` on a whole reduction).

Everything here is CPU-only (the NPU code generator has no indirect loads): elsewhere the
lowering raises ``NotImplementedError`` and the op is a fallback kernel, as before.
"""

from __future__ import annotations

from .. import _dtype
from ..ops.table import wrap_dim
from .ir import Affine, Pointwise, Reduction, TensorBox
from .lowering import _aten, _cast, _origins, broadcast_loader, make_pointwise, register_lowering
from .sizevars import as_sizes, is_symbolic
from .view_lowerings import unsqueeze
from .virtualized import V, ops

_INDEX_DTYPES = (_dtype.int64, _dtype.int32)


def _cpu_only(what: str) -> None:
    if getattr(V.graph, "device_type", "cpu") != "cpu":
        raise NotImplementedError(f"{what}: indirect indexing is CPU-only")


def _check_index(what: str, index) -> None:
    if not isinstance(index, TensorBox) or index.dtype not in _INDEX_DTYPES:
        raise NotImplementedError(f"{what}: the index is not an int32/int64 tensor")


def _gathered(x, out_size, body) -> TensorBox:
    """A ``Pointwise`` over ``out_size`` whose body is ``body(index)``."""
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


@register_lowering(_aten("index", "Tensor"))
def index(x, indices):
    """``x[i0, :, i2]`` with integer index tensors (broadcast together): the indexed dims
    become the broadcast shape — in place when they are adjacent, else in front (numpy's and
    torch's rule).  A boolean mask (data-dependent size) stays a fallback."""
    _cpu_only("index")
    size = list(x.get_size())
    indices = list(indices) + [None] * (len(size) - len(indices))
    tensors = [t for t in indices if t is not None]
    for t in tensors:
        _check_index("index", t)
    where = [k for k, t in enumerate(indices) if t is not None]
    if not where:
        raise NotImplementedError("index: no index tensor")
    out = as_sizes(V.graph.current_meta().shape)
    from ..ops.table import broadcast_shapes

    bshape = broadcast_shapes(*[tuple(t.get_size()) for t in tensors])
    adjacent = where[-1] - where[0] == len(where) - 1
    start = where[0] if adjacent else 0  # where the broadcast dims sit in the output
    loaders = {k: broadcast_loader(indices[k], bshape) for k in where}
    xload = x.make_loader()
    nb = len(bshape)

    def body(idx):
        b = idx[start:start + nb]
        kept = iter(list(idx[:start]) + list(idx[start + nb:]))
        full = []
        for k, t in enumerate(indices):
            if t is None:
                full.append(next(kept))
            else:
                full.append(ops.indirect_indexing(loaders[k](b), size[k], True, "index", k))
        return xload(full)
    return _gathered(x, out, body)


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
            full = [None] * len(size)
            for k, i in zip(kept, index):
                full[k] = i
            for k, r in zip(dims, rindex):
                full[k] = r
            return loader(full)
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

__all__ = ["Affine", "embedding", "gather", "index", "index_select", "select_scatter"]
