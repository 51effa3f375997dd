"""OpInfos of the view-scatter and advanced-indexing ops (``ops/view_replay.py``,
``ops/indexing.py``), kept apart from ``opinfo.py`` so families of ops merge independently.

Imported at the end of ``opinfo.py``: registering here fills the same ``OPINFOS``.
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from .opinfo import ALL, INT, S, _select_sample, _slice_args, _slice_ref, dtype_of, opinfo, same


def _slice_scatter_sample(g, dt):
    a = g.array(g.shape(min_dims=1), dt)
    dim, start, end, step = _slice_args(g, a)
    src = g.array(_slice_ref(a, dim, start, end, step).shape, dt)
    return S(a, src, dim, start, end, step)


def _slice_scatter_ref(a, src, dim, start, end, step):
    out = a.copy()
    out[(slice(None),) * (dim % a.ndim) + (slice(start, end, step),)] = src
    return out


opinfo("slice_scatter", _slice_scatter_sample, _slice_scatter_ref, same(), dtypes=ALL)


def _select_scatter_sample(g, dt):
    a, dim, index = _select_sample(g, dt).args
    return S(a, g.array(np.take(a, index, axis=dim).shape, dt), dim, index)


def _select_scatter_ref(a, src, dim, index):
    out = a.copy()
    out[(slice(None),) * (dim % a.ndim) + (index,)] = src
    return out


opinfo("select_scatter", _select_scatter_sample, _select_scatter_ref, same(), dtypes=ALL)


# ---------------------------------------------------------------- advanced indexing


def _int_index(g, size, shape, *, unique=False):
    """Integer indices into a dim of ``size`` (negative ones too), of ``shape``."""
    if unique:  # distinct positions: a non-accumulating write then has one writer per place
        n = g.integers(1, size)
        pos = g.draw(st.permutations(range(size)))[:n]
        return np.asarray([p - size if g.bool() else p for p in pos], dtype=np.int64)
    return g.draw(hnp.arrays(np.int64, shape, elements=st.integers(-size, size - 1)))


def _indices(g, a, *, unique=False):
    """An ``index.Tensor`` index list for ``a``: per dim ``None``, an integer tensor or a
    boolean mask over the next dims; integer tensors broadcast together (shape ``B``)."""
    use_mask = g.bool()
    b = (1,) if use_mask else g.shape(max_dims=2, max_side=3)
    out, pos, n_adv = [], 0, 0
    last = g.integers(1, a.ndim)  # index dims [0, last)
    while pos < last:
        kind = g.choice(["none", "int", "mask"] if use_mask else ["none", "int"])
        if kind == "mask" and unique and n_adv:  # a unique int index has its own length:
            kind = "none"  # a mask beside it would not broadcast with it
        if kind == "none":
            out.append(None)
            pos += 1
        elif kind == "mask":
            k = g.integers(1, last - pos)
            out.append(g.draw(hnp.arrays(np.bool_, a.shape[pos:pos + k])))
            pos += k
            use_mask, n_adv = False, n_adv + 1  # one mask at most
        else:
            if unique and n_adv:
                out.append(None)
            else:
                out.append(_int_index(g, a.shape[pos], b, unique=unique))
                n_adv += 1
            pos += 1
    if n_adv == 0:
        out[-1] = _int_index(g, a.shape[pos - 1], b, unique=unique)
    return out


def _key(indices):
    return tuple(slice(None) if i is None else i for i in indices)


def _has_mask(indices):
    return any(i is not None and i.dtype == np.bool_ for i in indices)


opinfo("index.Tensor", lambda g, dt: (lambda a: S(a, _indices(g, a)))(
           g.array(g.shape(min_dims=1), dt)),
       lambda a, indices: a[_key(indices)], same(), dtypes=ALL,
       dynamic_shape=lambda s: _has_mask(s.args[1]))


def _index_put_sample(g, dt):
    a = g.array(g.shape(min_dims=1), dt)
    accumulate = g.bool()
    indices = _indices(g, a, unique=not accumulate)
    target = a[_key(indices)].shape
    vshape = target[g.integers(0, len(target)):] if target else ()
    if vshape and g.bool():
        vshape = (1,) + vshape[1:]
    return S(a, indices, g.array(vshape, dt), accumulate)


def _index_put_ref(a, indices, values, accumulate=False):
    out = a.copy()
    key = _key(indices)
    v = np.broadcast_to(values, out[key].shape)
    if accumulate:
        np.add.at(out, key, v)
    else:
        out[key] = v
    return out


opinfo("index_put", _index_put_sample, _index_put_ref, same(), dtypes=ALL)


def _masked_select_sample(g, dt):
    sa, sm = g.bshapes(2)
    return S(g.array(sa, dt), g.draw(hnp.arrays(np.bool_, sm)))


def _masked_select_ref(a, mask):
    a, mask = np.broadcast_arrays(a, mask)
    return a[mask]


opinfo("masked_select", _masked_select_sample, _masked_select_ref, same(), dtypes=ALL,
       dynamic_shape=lambda s: True)
opinfo("nonzero", lambda g, dt: S(g.array(g.shape(), dt)),
       lambda a: np.argwhere(a), lambda s: INT, dtypes=ALL, grad=False,
       dynamic_shape=lambda s: True)


def _take_sample(g, dt):
    a = g.array(g.shape(), dt)
    return S(a, g.draw(hnp.arrays(np.int64, g.shape(max_dims=2),
                                  elements=st.integers(-a.size, a.size - 1))))


opinfo("take", _take_sample, lambda a, index: a.reshape(-1)[index], same(), dtypes=ALL)


# ---------------------------------------------------------------- unique (data-dependent sizes)


def _unique_sample(g, dt):
    return S(g.array(g.shape(), dt), True, g.bool(), g.bool())


def _unique_ref(a, sorted=True, return_inverse=False, return_counts=False):  # noqa: A002
    values, inverse, counts = np.unique(a.reshape(-1), return_inverse=True,
                                        return_counts=True, equal_nan=False)
    empty = np.zeros((0,), np.int64)
    return (values, inverse.reshape(a.shape) if return_inverse else empty,
            counts if return_counts else empty)


def _unique_dim_sample(g, dt):
    a = g.array(g.shape(min_dims=1, min_side=1), dt)
    return S(a, g.dim(a.ndim), True, g.bool(), g.bool())


def _unique_dim_ref(a, dim, sorted=True, return_inverse=False, return_counts=False):  # noqa: A002
    values, inverse, counts = np.unique(a, axis=dim, return_inverse=True, return_counts=True,
                                        equal_nan=False)  # (always all three, as torch)
    return values, inverse.reshape(-1), counts


opinfo("_unique2", _unique_sample, _unique_ref, lambda s: (dtype_of(s.args[0]), INT, INT),
       dtypes=ALL, grad=False, dynamic_shape=lambda s: True)
opinfo("unique_dim", _unique_dim_sample, _unique_dim_ref,
       lambda s: (dtype_of(s.args[0]), INT, INT), dtypes=ALL, grad=False,
       dynamic_shape=lambda s: True)
