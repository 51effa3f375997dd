"""View lowerings: views as index arithmetic, no data moved (part of
``torch/_inductor/lowering.py``; torch's ``ir.py`` view nodes, ``View``/``PermuteView``/
``SqueezeView``/``ExpandView``/``SliceView``, hold the same reindexing functions).

A view of a ``TensorBox`` is a ``View`` node whose ``reindex`` maps an index of the view to an
index of its input: ``permute`` reorders it, ``unsqueeze``/``squeeze`` drop or insert a 0,
``expand`` maps a broadcast dim to 0, ``slice`` to ``start + step * i``, ``select`` inserts the
constant.  A kernel loading the view loads its input at the mapped index, so chains of views
cost nothing.  ``view`` (reshape) of a buffer reinterprets it with new contiguous strides;
of an unrealized recipe it is a ``ReshapeView`` (index arithmetic through merged dims, checked
affine on every load), so ``(x + 1).view(...) + y`` stays one kernel as in torch; only what is
neither (a non-contiguous view, a broadcast read through merged dims) is copied first.
"""

from __future__ import annotations

import itertools

from ..ops.table import wrap_dim
from .dependencies import extract_read_writes
from .ir import (
    Affine,
    FixedLayout,
    FlexibleLayout,
    Pointwise,
    ReinterpretView,
    StorageBox,
    TensorBox,
    View,
    contiguous_strides,
    strided_view,
)
from .lowering import _aten, make_pointwise, register_lowering
from .reshape import ReshapeView, substitute_merged
from .sizevars import as_sizes, is_symbolic
from .sizevars import numel as numel_of
from .virtualized import V


def _view(x, size, reindex, kind):
    return TensorBox(View(x.data, tuple(size), reindex, kind))


@register_lowering(_aten("transpose"))
def transpose(x, dim0, dim1):
    n = x.ndim
    if n == 0:
        return x
    d0, d1 = wrap_dim(dim0, n), wrap_dim(dim1, n)
    perm = list(range(n))
    perm[d0], perm[d1] = perm[d1], perm[d0]
    return permute(x, perm)


@register_lowering(_aten("permute"))
def permute(x, dims):
    n = x.ndim
    dims = [d % max(n, 1) for d in dims]
    size = [x.get_size()[d] for d in dims]

    def reindex(index):
        out = [None] * n
        for i, d in enumerate(dims):
            out[d] = index[i]
        return out
    return _view(x, size, reindex, f"permute{tuple(dims)}")


@register_lowering(_aten("unsqueeze"))
def unsqueeze(x, dim):
    d = wrap_dim(dim, x.ndim + 1)
    size = list(x.get_size())
    size.insert(d, 1)
    return _view(x, size, lambda index: list(index[:d]) + list(index[d + 1:]), "unsqueeze")


@register_lowering(_aten("squeeze"))
def squeeze(x, dim=None):
    size = list(x.get_size())
    if dim is None:
        dims = [i for i, s in enumerate(size) if s == 1]
    else:
        dims = [wrap_dim(d, len(size)) for d in ((dim,) if isinstance(dim, int) else dim)]
        dims = [d for d in dims if size and size[d] == 1]
    keep = [i for i in range(len(size)) if i not in dims]

    def reindex(index):
        out = [Affine(0)] * len(size)
        for j, i in enumerate(keep):
            out[i] = index[j]
        return out
    return _view(x, [size[i] for i in keep], reindex, "squeeze")


@register_lowering(_aten("expand"))
def expand(x, size, implicit=False):
    have = x.get_size()
    lead = len(size) - len(have)
    size = [have[i - lead] if s == -1 else s for i, s in enumerate(size)]
    if tuple(size) == tuple(have):
        return x
    return _view(x, size, lambda index: [
        index[lead + k] if s != 1 else Affine(0) for k, s in enumerate(have)], "expand")


@register_lowering(_aten("slice", "Tensor"))
def slice_(x, dim=0, start=None, end=None, step=1):
    d = wrap_dim(dim, x.ndim)
    size = list(x.get_size())
    if any(is_symbolic(v) for v in (size[d], start, end)):  # the meta rule sized it
        if step != 1 or not (start is None or is_symbolic(start) or start >= 0):
            raise NotImplementedError(f"slice [{start}:{end}:{step}] of a symbolic size")
        size[d] = as_sizes(V.graph.current_meta().shape)[d]
        lo = 0 if start is None else start
    else:
        r = range(size[d])[slice(start, end, step)]
        size[d] = len(r)
        lo = r.start if len(r) else 0

    def reindex(index):
        out = list(index)
        out[d] = index[d] * step + lo
        return out
    return _view(x, size, reindex, "slice")


@register_lowering(_aten("select", "int"))
def select(x, dim, index):
    d = wrap_dim(dim, x.ndim)
    size = list(x.get_size())
    i = index % size[d]
    return _view(x, size[:d] + size[d + 1:],
                 lambda idx: list(idx[:d]) + [Affine(i)] + list(idx[d:]), "select")


@register_lowering(_aten("flip"))
def flip(x, dims):
    """``flip``: index ``i`` of a flipped dim reads ``n - 1 - i`` — affine (a negative stride
    in the generated code).  Eager ``flip`` returns a new tensor, so the result is an
    unrealized copy of that view: its users inline the reversed read, and an output gets a
    buffer of its own (never an alias of the input)."""
    size = list(x.get_size())
    flipped = {wrap_dim(d, len(size)) for d in ((dims,) if isinstance(dims, int) else dims)}
    if any(is_symbolic(size[d]) for d in flipped):
        raise NotImplementedError("flip of a symbolic size")

    def reindex(index):
        return [Affine(size[d] - 1) + as_affine(i) * -1 if d in flipped else i
                for d, i in enumerate(index)]
    view = _view(x, size, reindex, "flip")
    return make_pointwise(lambda v: v, [view], x.dtype)


def as_affine(i):
    return i if isinstance(i, Affine) else Affine(i)


@register_lowering(_aten("alias"), _aten("detach"))
def alias(x):
    return x


@register_lowering(_aten("view"))
def view(x, size):
    size = _infer_view_size(size, x.get_numel())
    have = x.get_size()
    if [s for s in have if s != 1] == [s for s in size if s != 1]:  # only 1s move: no copy
        return unsqueeze_to(squeeze(x), size)
    if x.is_unrealized() and isinstance(x.data, StorageBox) and \
            not any(is_symbolic(s) for s in tuple(have) + tuple(size)):
        out = reshape_view(x, tuple(have), tuple(size))
        if out is not None:
            return out
    buf, _, stride, offset = strided_view(x)
    if any(s != 1 and st != c for s, st, c in zip(have, stride, contiguous_strides(have))):
        x = copy(x)
        buf, _, stride, offset = strided_view(x)
    layout = FixedLayout(buf.get_dtype(), tuple(size), contiguous_strides(size), offset)
    return TensorBox(ReinterpretView(buf, tuple(size), None, "reinterpret", layout))


_fresh = itertools.count()


def _reshape_groups(old: list, new: list):
    """Pair runs of dims with equal products: ``[(old dims, new dims)]`` (sizes without 1s)."""
    groups, i, j = [], 0, 0
    while i < len(old) and j < len(new):
        oi, nj, po, pn = [i], [j], old[i], new[j]
        while po != pn:
            if po < pn and i + 1 < len(old):
                i += 1
                oi.append(i)
                po *= old[i]
            elif pn < po and j + 1 < len(new):
                j += 1
                nj.append(j)
                pn *= new[j]
            else:
                return None
        groups.append((oi, nj))
        i, j = i + 1, j + 1
    return groups if i == len(old) and j == len(new) else None


def reshape_view(x, have: tuple, size: tuple):
    """``x`` (an unrealized recipe) reshaped by index arithmetic, or None (``ReshapeView``).

    Each group of old dims whose product equals a group of new dims: the new dims make one
    linear index ``j``; a single old dim is ``j`` itself (a split), several get fresh
    variables and a rule (a merge)."""
    old_dims = [d for d, s in enumerate(have) if s != 1]
    new_dims = [d for d, s in enumerate(size) if s != 1]
    groups = _reshape_groups([have[d] for d in old_dims], [size[d] for d in new_dims])
    if groups is None:
        return None
    n = next(_fresh)
    plan = []  # (old dims, new dims, fresh names, P_t per fresh name)
    for g, (oi, nj) in enumerate(groups):
        olds = [old_dims[i] for i in oi]
        news = [new_dims[j] for j in nj]
        names = [f"u{n}_{g}_{t}" for t in range(len(olds))] if len(olds) > 1 else []
        ps = [numel_of([have[d] for d in olds[t + 1:]]) for t in range(len(olds))]
        plan.append((olds, news, names, ps))

    def merged(index, news):
        out = Affine(0)
        for d in news:
            out = out * size[d] + index[d]
        return out

    def reindex(index):
        out = [Affine(0)] * len(have)
        for olds, news, names, _ in plan:
            if names:
                for d, u in zip(olds, names):
                    out[d] = Affine.var(u)
            else:
                out[olds[0]] = merged(index, news)
        return out

    def rules(index):
        return [(names, ps, merged(index, news)) for olds, news, names, ps in plan if names]

    box = TensorBox(ReshapeView(x.data, tuple(size), reindex, "reshape", rules))
    probe = [Affine.var(f"p{k}") for k in range(len(size))]
    contiguous = FlexibleLayout(x.get_dtype(), have).make_indexer()
    try:  # every read of the recipe, and of its realized (contiguous) buffer, is affine
        extract_read_writes(Pointwise(x.get_dtype(), box.make_loader(), tuple(size)), probe)
        substitute_merged(contiguous(reindex(probe)), rules(probe))
    except NotImplementedError:
        return None
    return box


def _infer_view_size(size, numel) -> tuple:
    """``infer_size`` for sizes that may be symbolic: the meta rule already checked the view
    is valid, so only the ``-1`` is resolved — exactly, or the lowering fails (fallback)."""
    from ..ops.views import infer_size

    if not any(is_symbolic(s) for s in tuple(size) + (numel,)):
        return infer_size(size, numel)
    size = tuple(size)
    known = numel_of([s for s in size if not (isinstance(s, int) and s == -1)])
    if len(size) == len([s for s in size if not (isinstance(s, int) and s == -1)]):
        if known != numel:
            raise NotImplementedError(f"view: cannot prove {list(size)} has {numel} elements")
        return size
    rest = numel // known if isinstance(known, int) else None
    if rest is None or is_symbolic(rest) and rest * known != numel:
        raise NotImplementedError(f"view: cannot infer -1 in {list(size)} from {numel}")
    return tuple(rest if isinstance(s, int) and s == -1 else s for s in size)


def unsqueeze_to(x, size):
    """``x`` (no 1s) with 1s inserted to have ``size``."""
    out = x
    for i, s in enumerate(size):
        if s == 1:
            out = unsqueeze(out, i)
    return out


def copy(x) -> TensorBox:
    box = make_pointwise(lambda v: v, [x], x.dtype)
    box.realize()
    return box
