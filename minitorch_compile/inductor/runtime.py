"""What generated modules call at run time: the tile runner and strided views
(``torch/_inductor/runtime/`` and the C++ ``parallel_for`` the CPU kernels use).

``run_tiles(chunk, n, tile)`` splits ``range(n)`` into contiguous chunks of whole tiles, up to
``config.chunks_per_thread`` per worker, and the workers of a thread pool (the calling thread
one of them) take the chunks in turn and run ``chunk(start, stop)`` for each — OpenMP's dynamic
schedule: numpy ufuncs release the GIL, so two workers really use two cores, and a worker that
is preempted, or waits for the GIL, takes fewer chunks.  Small loops run on the calling
thread.  It returns the chunks' results in chunk order (split reductions combine them), so a
result never depends on which thread ran what.
"""

from __future__ import annotations

import functools
import itertools
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from . import config

_pool: ThreadPoolExecutor | None = None
_pool_size = 0
_lock = threading.Lock()


def _get_pool(n: int) -> ThreadPoolExecutor:
    global _pool, _pool_size
    with _lock:
        if _pool is None or _pool_size != n:
            if _pool is not None:
                _pool.shutdown(wait=False)
            _pool = ThreadPoolExecutor(n, thread_name_prefix="mtc-inductor",
                                       initializer=np.seterr, initargs=("ignore",))
            _pool_size = n
    return _pool


def ufunc_bufsize(row: int) -> int | None:
    """numpy's ufunc buffer size for tiles that broadcast a per-row value along rows of ``row``
    elements, or None (keep numpy's).

    With the default buffer (8192 elements) numpy's iterator buffers such an operand when a row
    is shorter than half the buffer, and the op runs about 2x slower than a same-shape one; with
    a buffer no longer than a row (a multiple of 16, as numpy wants) it takes the strided path at
    full speed (measured: numpy 2.4, rows of 1024 float32).  Below 512 the small buffer would
    slow the casts numpy buffers; from 4096 on the default is already fine."""
    return -(-row // 16) * 16 if 512 <= row < 4096 else None


def run_tiles(chunk, n: int, tile: int, work: int, row_broadcast: int | None = None) -> list:
    """Run ``chunk`` over ``range(n)`` in whole tiles; ``work`` is the loop's element count;
    ``row_broadcast``: the row length when the tiles broadcast a per-row value (numpy's ufunc
    buffer is then set by ``ufunc_bufsize`` while a chunk runs, in whichever thread)."""
    bufsize = ufunc_bufsize(row_broadcast) if row_broadcast else None
    if bufsize:
        chunk = functools.partial(_with_bufsize, chunk, bufsize)
    threads = config.threads
    ntiles = -(-n // tile) if n else 0
    if threads <= 1 or ntiles <= 1 or work < config.min_parallel_numel \
            or threading.current_thread().name.startswith("mtc-inductor"):
        return [chunk(0, n)]
    workers = min(threads, ntiles)
    pieces = min(ntiles, workers * max(1, config.chunks_per_thread))
    per = -(-ntiles // pieces) * tile
    bounds = [(s, min(s + per, n)) for s in range(0, n, per)]
    results: list = [None] * len(bounds)
    taken = itertools.count()  # next() on a count is atomic under the GIL

    def worker():
        for k in taken:
            if k >= len(bounds):
                return
            results[k] = chunk(*bounds[k])
    futures = [_get_pool(threads).submit(worker) for _ in range(workers - 1)]
    worker()
    for f in futures:
        f.result()
    return results  # in chunk order, whichever thread ran each: split reductions combine


def _with_bufsize(chunk, bufsize: int, c0: int, c1: int):
    """``chunk(c0, c1)`` with numpy's ufunc buffer size set (per thread), then restored."""
    old = np.setbufsize(bufsize)
    try:
        return chunk(c0, c1)
    finally:
        np.setbufsize(old)


def strided(arr: np.ndarray, extent: int, offset: int, shape: tuple, strides: tuple):
    """The view ``arr.flat_storage[offset + Σ stride·i]`` of shape ``shape`` (element units),
    ``extent`` elements of storage being addressable from ``arr``'s first element."""
    item = arr.itemsize
    base = np.lib.stride_tricks.as_strided(arr, (max(extent, 1),), (item,))
    return np.lib.stride_tricks.as_strided(base[offset:], shape,
                                           tuple(s * item for s in strides))


def eager_kernel(op):
    """An op table numpy kernel for use inside generated kernels, raising the errors eager
    mode raises (``neg: Negation, the `-` operator, on a bool tensor ...``)."""
    from ..ops.table import MetaError, _prefix_error

    kernel = op.opdef.kernel

    def call(*args):
        try:
            return kernel(*args)
        except (ValueError, MetaError) as e:
            raise _prefix_error(op, e) from None
    return call


def restride(arr: np.ndarray, shape: tuple, strides: tuple) -> np.ndarray:
    """A copy of ``arr`` laid out with ``strides`` (elements): the layout the kernels were
    generated for.  (A size-1 dim's stride never matters; numpy may report any.)"""
    if all(s == 1 or a == st * arr.itemsize
           for s, a, st in zip(shape, arr.strides, strides)):
        return arr
    extent = 1 + sum((s - 1) * st for s, st in zip(shape, strides) if s)
    base = np.empty(max(extent, 1), dtype=arr.dtype)
    view = np.lib.stride_tricks.as_strided(base, shape, tuple(st * arr.itemsize
                                                               for st in strides))
    np.copyto(view, arr)
    return view


def call_fallback(op, args: list, device: str = "cpu"):
    """Run an op with no lowering through its eager kernel on ``device`` (arrays in, arrays
    out; on ``"npu"`` that is one profiled kernel, e.g. ``aten::mm`` on the cube).

    A result that is a view of something is copied, so memory planning may reuse any buffer."""
    from .._device import as_device
    from .._dispatch import DispatchKey
    from .._tensor import Tensor

    dev = as_device(device)
    key = DispatchKey.NPU if dev.type == "npu" else DispatchKey.CPU

    def wrap(a):
        if type(a) is np.ndarray:
            return Tensor._make(a, dev)
        if isinstance(a, list):
            return [wrap(x) for x in a]
        return a

    out = op.kernels[key](*[wrap(a) for a in args])

    def unwrap(t):
        d = t._data
        return d if d.base is None and d.flags.c_contiguous else np.array(d, order="C")
    if isinstance(out, (tuple, list)):
        return tuple(unwrap(t) for t in out)
    return unwrap(out)


# --------------------------------------------------------------------------- indirect indexing
# What ``ops.indirect_indexing`` and ``ops.index_expr`` become in a generated kernel
# (``codegen/cpu_indirect.py``): torch's C++ kernels ``TORCH_CHECK`` an index before they load
# at it; ours check a whole tile of indices with two reductions and raise eager mode's error.

_INDEX_ERRORS = {  # kind -> (exception, message): the eager kernels' own (ops/indexing.py, ...)
    "index": (IndexError, "index {bad} is out of bounds for dimension {dim} with size {size}"),
    "gather": (None, "index {bad} is out of bounds for dimension {dim} with size {size}"),
    "index_select": (RuntimeError, "INDICES element is out of DATA bounds, id={bad} "
                                   "axis_dim={size}"),
    "embedding": (IndexError, "embedding: index out of range in self (num_embeddings={size})"),
}


def check_indices(idx, size: int, wrap: bool, kind: str, dim: int) -> np.ndarray:
    """A tile of index values as ``intp`` positions into a dim of ``size``: negative ones count
    from the end when ``wrap`` (``x[idx]``), and any outside the valid range raises the error
    the eager kernel raises — a kernel never reads out of bounds.  The result is always a new
    array: ``idx`` may be a reused tile buffer that a later line of the kernel overwrites while
    the positions are still to be read."""
    ind = np.array(idx, dtype=np.intp, copy=True)
    if ind.size == 0:
        return ind
    lo, hi = ind.min(), ind.max()
    if lo >= 0 and hi < size:
        return ind
    low = -size if wrap else 0
    if lo >= low and hi < size:
        return np.where(ind < 0, ind + size, ind)
    bad = ind[(ind < low) | (ind >= size)].flat[0]
    exc, msg = _INDEX_ERRORS[kind]
    if exc is None:
        from ..ops.table import MetaError

        exc = MetaError
    raise exc(msg.format(bad=int(bad), dim=dim, size=size))


def iota(const, terms, ndim: int, dtype=np.int64) -> np.ndarray:
    """``const + Σ coef·i_axis`` over a tile (``ops.index_expr``): ``terms`` are
    ``(axis, coef, lo, hi)``, the loop variable of ``axis`` running over ``range(lo, hi)``;
    the result has ``ndim`` dims, of size 1 where no term varies (numpy broadcasts it)."""
    out = np.full((1,) * ndim, const, dtype=np.int64)
    for axis, coef, lo, hi in terms:
        shape = [1] * ndim
        shape[axis] = hi - lo
        out = out + np.arange(lo, hi, dtype=np.int64).reshape(shape) * coef
    return out.astype(dtype, copy=False)


def scatter_store(target: np.ndarray, indices: tuple, values, accumulate: bool,
                  tile: tuple | None = None, tail: tuple | None = None) -> None:
    """``target[indices] = values`` (``np.add.at`` when ``accumulate``: repeated indices add
    up), every index array and the values broadcast together first (``index_put``).

    With ``tile`` (the kernel's tile shape) and ``tail`` (the sizes of ``target``'s trailing
    axes the indices leave whole), the indices select whole rows: they are flattened, and the
    values, broadcast to the tile, reshaped to ``(rows,) + tail`` — numpy's fast row path."""
    if tile is not None:
        idx = tuple(i.reshape(-1) for i in np.broadcast_arrays(*indices))
        v = np.broadcast_to(np.asarray(values), tile).reshape((-1,) + tuple(tail))
    else:
        *idx, v = np.broadcast_arrays(*indices, np.asarray(values))
        idx = tuple(idx)
    if accumulate:
        np.add.at(target, idx, v)
    else:
        target[idx] = v
