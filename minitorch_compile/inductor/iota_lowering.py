"""Lowerings whose values come from the index itself (``ops.index_expr``): ``arange``,
``tril``/``triu`` and ``constant_pad_nd`` (``torch/_inductor/lowering.py``'s ``iota``,
``constant_pad_nd``, and ``torch/_refs``' ``tril``/``triu``, which torch's Inductor lowers
through ``iota`` too).

* ``arange(start, end, step)`` is ``Pointwise((n,), start + index_expr(i0) * step)`` — the
  eager kernel's own formula (an int64 ``arange`` times ``step`` plus ``start``, in float64 for
  a float result, then cast) — so it is a generated kernel that fuses into its consumers,
  reads no memory, and takes a symbolic ``n`` (``arange(x.shape[0])``).
* ``tril(x, k)`` is ``where(index_expr(i_col - i_row) <= k, x, 0)`` over ``x``'s shape
  (``triu``: ``>=``): one pointwise body, which inlines into its users as torch's does.
* ``constant_pad_nd(x, pad, value)``: element ``i`` reads ``x`` at ``i - lo`` along each padded
  dim.  A dim with negative pads only (a crop) is index arithmetic; a dim with padding reads
  at the position clamped into the dim (``ops.indirect_indexing`` of ``index_expr(i - lo)``)
  and ``where(in bounds, load, value)`` picks the pad — torch's ``ops.masked`` load, which
  this loop IR has no op for: the clamp keeps every read in bounds instead.

``masked_position`` is the shared step (pooling uses it for padded windows).  Everything that
writes ``ops.index_expr`` is CPU-only (the NPU code generator has no such op): elsewhere the
op stays a fallback kernel.
"""

from __future__ import annotations

from .. import _dtype
from .index_lowering import _cpu_only
from .ir import Pointwise, TensorBox
from .lowering import _aten, _cast, _origins, register_lowering
from .sizevars import as_index, as_sizes
from .virtualized import V, ops

I64 = _dtype.int64


def const(v, dtype=I64):
    return ops.constant(v, dtype)


def masked_position(pos, n, dim: int) -> tuple:
    """``(in bounds, index variable)`` for an int64 *value* ``pos`` along a dim of size ``n``:
    the variable reads at ``pos`` clamped into ``[0, n)``, so no read is out of bounds, and
    the mask says where the clamp changed it."""
    zero = const(0)
    inside = ops.logical_and(ops.greater_equal(pos, zero), ops.less(pos, const(n)))
    at = ops.minimum(ops.maximum(pos, zero), const(n - 1))
    return inside, ops.indirect_indexing(at, n, False, "index", dim)


# --------------------------------------------------------------------------- arange


@register_lowering(_aten("arange"))
def arange(start, end, step=1, dtype=None, device=None):
    _cpu_only("arange")
    meta = V.graph.current_meta()
    (n,) = as_sizes(meta.shape)
    out = meta.dtype
    for v in (start, step):
        if not isinstance(v, (int, float)) or isinstance(v, bool):
            raise NotImplementedError("arange with a symbolic start or step")
    # the eager kernel's arithmetic: an int64 arange times ``step`` plus ``start`` — in float64
    # when the result or a Python number in it is a float (``arange(0., 4., .5, dtype=int32)``)
    floats = out.is_floating_point or any(isinstance(v, float) for v in (start, step))
    wide = _dtype.float64 if floats else I64

    def body(index):
        value = _cast(ops.index_expr(index[0], I64), I64, wide)
        if step != 1:
            value = ops.multiply(value, const(step, wide))
        if start != 0:
            value = ops.add(const(start, wide), value)
        return _cast(value, wide, out)
    return TensorBox.create(Pointwise(out, body, (n,), _origins()))


# --------------------------------------------------------------------------- tril / triu


def _triangle(compare: str):
    def lower(x, diagonal=0):
        _cpu_only(compare)
        size = tuple(x.get_size())
        load = x.make_loader()
        dtype = x.dtype

        def body(index):
            offset = ops.index_expr(as_index(index[-1]) + as_index(index[-2]) * -1, I64)
            keep = getattr(ops, compare)(offset, const(diagonal))
            return ops.where(keep, load(index), const(False if dtype is _dtype.bool_ else 0,
                                                      dtype))
        return TensorBox.create(Pointwise(dtype, body, size, _origins(x)))
    return lower


register_lowering(_aten("tril"))(_triangle("less_equal"))
register_lowering(_aten("triu"))(_triangle("greater_equal"))


# --------------------------------------------------------------------------- constant_pad_nd


@register_lowering(_aten("constant_pad_nd"))
def constant_pad_nd(x, pad, value=0):
    """``pad`` lists ``(lo, hi)`` pairs from the last dim backwards, as ``F.pad``."""
    size = list(x.get_size())
    out_size = as_sizes(V.graph.current_meta().shape)
    dtype = x.dtype
    lows = [0] * len(size)
    padded = [False] * len(size)
    for k in range(len(pad) // 2):
        d = len(size) - 1 - k
        lows[d] = pad[2 * k]
        padded[d] = pad[2 * k] > 0 or pad[2 * k + 1] > 0
    if any(padded):
        _cpu_only("constant_pad_nd")
    load = x.make_loader()
    fill = value if dtype.is_floating_point else int(value) if dtype is not _dtype.bool_ \
        else bool(value)

    def body(index):
        at, inside = [], None
        for d, i in enumerate(index):
            if not padded[d]:
                at.append(as_index(i) + (-lows[d]))
                continue
            ok, var = masked_position(ops.index_expr(as_index(i) + (-lows[d]), I64),
                                      size[d], d)
            inside = ok if inside is None else ops.logical_and(inside, ok)
            at.append(var)
        v = load(at)
        return v if inside is None else ops.where(inside, v, const(fill, dtype))
    return TensorBox.create(Pointwise(dtype, body, tuple(out_size), _origins(x)))


__all__ = ["arange", "constant_pad_nd", "masked_position"]
