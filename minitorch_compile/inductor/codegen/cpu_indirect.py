"""Indirect indexing in the numpy kernels: ``ops.indirect_indexing``, loads at indirect
indices, ``ops.index_expr`` and the ``argmax``/``argmin`` reductions (the parts of
``torch/_inductor/codegen/cpp.py`` that handle ``indirect_indexing``, ``index_expr`` and
``argmax``; the handler methods in ``cpu.py`` call these).

A body such as ``embedding``'s::

    tmp0 = ops.load(arg1_1, i0)
    indirect0 = ops.indirect_indexing(tmp0, 100, wrap_neg=False, check='embedding')
    tmp1 = ops.load(arg0_1, 16*indirect0 + i1)

becomes, per tile (every step a whole-tile numpy call, no per-element Python)::

    ti0 = check_indices(v0[t0:t1], 100, False, 'embedding', 0)   # intp; raises eager's error
    ti1 = g0[ti0].reshape((t1 - t0, 16))                         # one fancy-index gather

* ``indirect_indexing`` checks a tile of index values (min and max; negative ones wrapped when
  Python's rule applies) and gives an ``intp`` tile; the variable it returns (``indirect0``)
  names that tile.  An index outside the dim raises the eager kernel's error — the kernel
  never reads out of bounds.
* A load whose index has indirect variables reads a view ``g`` of the buffer with one axis per
  indirect variable (its stride the variable's coefficient) and one per frame dim the index
  walks.  When every dim the index tiles vary along comes before every dim the view walks,
  ``g[ind0, ..., :]`` is numpy's fast take and a reshape gives the tile; else, when each
  indirect variable's tile varies along one frame dim of its own that the index does not walk
  (clamped reads of padding and pooling windows), one ``np.take`` per variable along its axis;
  otherwise each walked dim is indexed by an ``arange`` grid too (numpy broadcasts all the
  index arrays).
* A store at an indirect index (a ``Scatter``: ``index_put``, ``scatter_add``) is
  ``scatter_store``: ``view[ind, ...] = values``, or ``np.add.at`` for ``atomic_add`` — whole
  rows when the indices select rows, else index arrays broadcast together.  A group with a
  scatter runs as one tile on one thread (``whole_frame``): two threads never write at once.
* ``index_expr`` is ``iota``: ``const + Σ coef·arange`` over the tile's ranges (the tile's rows
  are ``t0:t1``), plus any indirect terms.
* ``argmax``/``argmin`` are ``np.argmax`` over the reduced dims (flattened when several, in
  row-major order as torch's flattened index).  A group with one is one tile on one thread
  (``whole_frame``): the reduction is never split nor its loops reordered, and ``np.argmax``
  holds the GIL, so threads would only take turns.
"""

from __future__ import annotations

from ..sizevars import Affine
from .common import Value, const_repr, np_dtype
from .cpp_utils import Instr
from .simd import Frame, rewrite

IND = "indirect"
ARG_REDUCTIONS = {"argmax": "np.argmax", "argmin": "np.argmin"}


def is_indirect(index) -> bool:
    return isinstance(index, Affine) and any(v.startswith(IND) for v in index.free_vars)


def _tile_range(k, h, axis: int) -> tuple:
    """The range of frame dim ``axis``'s loop variable in this tile, as code."""
    if axis == 0 and not h.final:
        return "t0", "t1"
    return "0", const_repr(k.frame.sizes[axis])


def _tile_len(k, h, axis: int) -> str:
    lo, hi = _tile_range(k, h, axis)
    return "t1 - t0" if lo == "t0" else hi


def indirect_indexing(k, h, value, size, wrap_neg, check, dim):
    """A checked ``intp`` tile of ``value``; returns the index variable naming it."""
    key = ("indirect", id(value), size, wrap_neg, check, dim)
    tile = h.new(f"{{out}} = check_indices({{0}}, {const_repr(size)}, {wrap_neg!r}, "
                 f"{const_repr(check)}, {const_repr(dim)})", [value], h.flags([value]),
                 "int64", key=key, temp=False)
    name = f"{IND}{len(k.indirect)}"
    k.indirect[name] = (tile, size)
    return Affine.var(name)


def _split(k, expr: Affine) -> tuple:
    """(frame coefficients per frame dim, [(indirect var, coef)]) of a rewritten index."""
    names = set(k.frame.names)
    inds = [(v, c) for v, c in expr.terms if v.startswith(IND)]
    other = [v for v, _ in expr.terms if not v.startswith(IND) and v not in names]
    if other:
        raise NotImplementedError(f"index {expr} has variables outside the frame: {other}")
    return [expr.coef(v) for v in k.frame.names], inds


def _iota_terms(k, h, fcoefs) -> str:
    terms = [f"({axis}, {const_repr(c)}, {', '.join(_tile_range(k, h, axis))})"
             for axis, c in enumerate(fcoefs) if c != 0]
    return f"[{', '.join(terms)}]"


def index_expr(k, h, index, dtype: str):
    """``ops.index_expr``: the index's value at every element of the tile."""
    expr = rewrite(index, k.rules)
    fcoefs, inds = _split(k, expr)
    ndim = len(k.frame.sizes)
    args = [k.indirect[v][0] for v, _ in inds]
    flags = tuple(c != 0 for c in fcoefs)
    flags = h.flags([Value(flags=flags)] + args)
    extra = "".join(f" + {{{j}}} * {const_repr(c)}" for j, (_, c) in enumerate(inds))
    code = f"iota({const_repr(expr.const)}, {_iota_terms(k, h, fcoefs)}, {ndim})"
    if extra:
        code = f"({code}{extra})"
    return h.new(f"{{out}} = {code}.astype(np.{dtype}, copy=False)", args, flags, dtype,
                 key=("index_expr", expr, dtype, h.final) + tuple(map(id, args)), temp=False)


def _indirect_view(k, name, index) -> tuple:
    """(view name, frame coefs, [(indirect var, coef)], walked dims, index tiles): the view
    of ``name`` with one axis per indirect variable, then one per frame dim ``index`` walks."""
    expr = rewrite(index, k.rules)
    fcoefs, inds = _split(k, expr)
    fr = k.frame
    walked = [d for d, c in enumerate(fcoefs) if c != 0]
    shape = [k.indirect[v][1] for v, _ in inds] + [fr.sizes[d] for d in walked]
    strides = [c for _, c in inds] + [fcoefs[d] for d in walked]
    vkey = ("gather", name, tuple(shape), tuple(strides), expr.const)
    if vkey not in k.views:
        k.views[vkey] = len(k.views)
        code = k.module.view_code(k._arg(name), k.module.buffer(name), tuple(shape),
                                  tuple(strides), expr.const)
        k.view_lines.append(f"g{k.views[vkey]} = {code}")
    return f"g{k.views[vkey]}", fcoefs, inds, walked, [k.indirect[v][0] for v, _ in inds]


def indirect_store(k, h, name, index, value, mode):
    """``index_put``: the tile's values stored (``mode="atomic_add"``: added with
    ``np.add.at``, so repeated indices accumulate) through index arrays broadcast together —
    the kernel runs as one tile on one thread (``whole_frame``), so no two threads write."""
    k.values[name] = value
    if name not in k.materialized:  # nobody reads it (dead code elimination keeps none)
        return
    view, fcoefs, inds, walked, tiles = _indirect_view(k, name, index)
    acc = mode == "atomic_add"
    varying = [d for d, f in enumerate(h.flags(tiles)) if f]
    covered = set(varying) | set(walked)
    if not set(varying) & set(walked) and all(d in covered for d, f in
                                              enumerate(value.flags) if f) and \
            (not varying or not walked or max(varying) < min(walked)):
        # the index tiles select rows along the leading axes, the rest are whole rows
        sel = "".join(f"{{{j}}}, " for j in range(len(tiles)))
        tile = ", ".join(_tile_len(k, h, d) if d in covered else "1"
                         for d in range(len(k.frame.sizes)))
        tail = "".join(f"{const_repr(k.frame.sizes[d])}, " for d in walked)
        h.instrs.append(Instr(None, f"scatter_store({view}, ({sel}), {{{len(tiles)}}}, {acc!r}, "
                                    f"({tile},), ({tail}))", tiles + [value]))
        return
    grids = [index_expr(k, h, Affine.var(k.frame.names[d]), "intp") for d in walked]
    args = tiles + grids + [value]
    sel = "".join(f"{{{j}}}, " for j in range(len(args) - 1))
    h.instrs.append(Instr(None, f"scatter_store({view}, ({sel}), {{{len(args) - 1}}}, {acc!r})",
                          args))


def _take_along_dims(k, h, name, index):
    """``np.take(view, ind, axis=d)`` (one per indirect variable) for a load whose every
    indirect variable's tile varies along one frame dim of its own that the index does not
    walk itself (clamped reads of padding and pooling windows, ``index_select``): the view
    keeps the frame's axes — ``d`` strided by the variable's coefficient over its bound — so
    numpy copies whole rows, where index arrays broadcast over every walked dim would make an
    index per element (``pad`` of 16x64x56x56: 65 ms that way, eager's ``np.pad`` 2.6 ms).
    ``None`` when the load is not of that form."""
    expr = rewrite(index, k.rules)
    fcoefs, inds = _split(k, expr)
    if not inds:
        return None
    axes = {}  # frame dim -> (tile, bound, coef)
    for var, coef in inds:
        tile, bound = k.indirect[var]
        dims = [d for d, f in enumerate(tile.flags) if f]
        if len(dims) != 1 or fcoefs[dims[0]] != 0 or dims[0] in axes:
            return None
        axes[dims[0]] = (tile, bound, coef)
    fr = k.frame
    shape = tuple(axes[j][1] if j in axes else fr.sizes[j] if c != 0 else 1
                  for j, c in enumerate(fcoefs))
    strides = tuple(axes[j][2] if j in axes else c for j, c in enumerate(fcoefs))
    vkey = ("take", name, shape, strides, expr.const)
    if vkey not in k.views:
        k.views[vkey] = len(k.views)
        code = k.module.view_code(k._arg(name), k.module.buffer(name), shape, strides,
                                  expr.const)
        k.view_lines.append(f"g{k.views[vkey]} = {code}")
    code = f"g{k.views[vkey]}"
    if fcoefs[0] != 0 and _tile_range(k, h, 0)[0] == "t0":
        code += "[t0:t1]"
    order = sorted(axes)
    for j, d in enumerate(order):
        code = f"np.take({code}, {{{j}}}.reshape(-1), axis={d})"
    flags = tuple(j in axes or c != 0 for j, c in enumerate(fcoefs))
    dtype = np_dtype(k.module.buffer(name).get_dtype())
    tiles = [axes[d][0] for d in order]
    return h.new(f"{{out}} = {code}", tiles, flags, dtype,
                 key=("take", vkey, h.final) + tuple(map(id, tiles)), temp=False)


def indirect_load(k, h, name, index):
    """A load at an index with indirect variables: one numpy gather per tile."""
    if name in k.values:
        raise NotImplementedError(f"an indirect read of {name}, computed in this kernel")
    fcoefs, inds = _split(k, rewrite(index, k.rules))
    iflags = h.flags([k.indirect[v][0] for v, _ in inds])
    walked = [d for d, c in enumerate(fcoefs) if c != 0]
    varying = [d for d, f in enumerate(iflags) if f]
    rows = not any(iflags[d] for d in walked) and (not varying or not walked
                                                   or max(varying) < min(walked))
    if not rows:  # before index arrays over every walked dim: a take per indirect axis
        taken = _take_along_dims(k, h, name, index)
        if taken is not None:
            return taken
    view, fcoefs, inds, walked, tiles = _indirect_view(k, name, index)
    fr = k.frame
    buf = k.module.buffer(name)
    flags = tuple(f or c != 0 for f, c in zip(iflags, fcoefs))
    dtype = np_dtype(buf.get_dtype())
    ind_args = ", ".join(f"{{{j}}}" for j in range(len(tiles)))
    if rows:
        # numpy's take: the index tiles select along the leading axes, slices walk the rest
        slices = ", ".join("t0:t1" if _tile_range(k, h, d)[0] == "t0" else ":"
                           for d in walked)
        target = ", ".join(_tile_len(k, h, d) if flags[d] else "1"
                           for d in range(len(fr.sizes)))
        sel = ", ".join(x for x in (ind_args, slices) if x)
        fmt = f"{{out}} = {view}[{sel}].reshape(({target},))"
        args = tiles
    else:  # every walked dim indexed by an arange grid too: numpy broadcasts all of them
        grids = [index_expr(k, h, Affine.var(fr.names[d]), "intp") for d in walked]
        args = tiles + grids
        sel = ", ".join(f"{{{j}}}" for j in range(len(args)))
        fmt = f"{{out}} = {view}[{sel}]"
    # the key names the walked frame dims: one view (same shape and strides) read along the
    # kept dim and along the reduced dim of a square frame gives two different tiles
    return h.new(fmt, args, flags, dtype, key=("gather", view, tuple(walked), flags)
                 + tuple(map(id, args)) + (h.final,), temp=False)


# --------------------------------------------------------------------------- argmax / argmin


def has_arg_reduction(group) -> bool:
    return any(n.is_reduction and n.node.data.reduction_type in ARG_REDUCTIONS
               for n in group.nodes)


def has_scatter(group) -> bool:
    return any(getattr(n.node.data, "output_indexer", None) is not None for n in group.nodes)


def whole_frame(group, frame: Frame) -> Frame:
    """A leading size-1 kept dim, so the kernel is one tile on one thread, for a group that
    scatters (threads would race in ``np.add.at``) or that has an ``argmax``: ``np.argmax``
    holds the GIL (threads only take turns: measured, two threads over 4096x1024 float32 are
    slower than one) and a call per tile of 32 rows costs a third more than one call; a
    reduction over everything would also be cut by tiles (a (value, index) pair per partial
    would be torch's way)."""
    if not has_scatter(group) and not has_arg_reduction(group):
        return frame
    return frame.one_tile()


def arg_reduction(h, rtype: str, v, rdims: list, flags: tuple):
    """``np.argmax`` over the reduced dims (trailing in the frame) with kept dims of 1."""
    fn = ARG_REDUCTIONS[rtype]
    if len(rdims) == 1:
        fmt = f"{{out}} = {fn}({{0}}, axis={rdims[0]}, keepdims=True)"
    else:
        nk = rdims[0]
        ones = "(1,) * " + str(len(rdims))
        fmt = (f"{{out}} = {fn}({{0}}.reshape({{0}}.shape[:{nk}] + (-1,)), axis=-1)"
               f".reshape({{0}}.shape[:{nk}] + {ones})")
    if rdims != list(range(rdims[0], rdims[0] + len(rdims))) or rdims[-1] != len(flags) - 1:
        raise NotImplementedError("argmax over reduced dims that are not the frame's last")
    return h.new(fmt, [v], flags, "int64", temp=False)


__all__ = ["ARG_REDUCTIONS", "arg_reduction", "has_arg_reduction", "index_expr",
           "indirect_indexing", "indirect_load", "indirect_store", "is_indirect", "whole_frame"]
