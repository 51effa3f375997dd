"""OpInfos of the view-scatter and advanced-indexing ops (``ops/view_replay.py``,
``ops/indexing.py``), kept apart from ``opinfo.py`` so families of ops merge independently.

Imported at the end of ``opinfo.py``: registering here fills the same ``OPINFOS``.
"""

from __future__ import annotations

import numpy as np

from .opinfo import ALL, S, _select_sample, _slice_args, _slice_ref, opinfo, same


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
