"""Private formats: how a tensor's elements are laid out in GM (torch_npu's ``aclFormat``).

Teaches torch_npu's ``npu_format_cast`` / ``get_npu_format`` and CANN's ``TransData``.  The cube
unit consumes 16x16 *fractals*, the vector unit 16-channel blocks, so torch_npu keeps weights
and activations in layouts that are not the row-major (ND) one.  The logical values never
change; only the physical array in GM does, and it is padded to whole blocks.

=============  ==  =================  ==========================================================
format         id  logical shape      physical array (``p``) and the element at each index
=============  ==  =================  ==========================================================
NCHW           0   (N, C, H, W)       the logical array itself
NHWC           1   (N, C, H, W)       ``p[n, h, w, c] = x[n, c, h, w]``
ND             2   any                the logical array itself
NC1HWC0        3   (N, C, H, W)       ``p[n, c1, h, w, c0] = x[n, 16*c1 + c0, h, w]``,
                                      C1 = ceil(C/16), zero padded
FRACTAL_Z      4   (N, C, H, W)       ``p[(c1*H + h)*W + w, n1, n0, c0] =
                                      x[16*n1 + n0, 16*c1 + c0, h, w]`` (conv weights)
FRACTAL_NZ     29  (..., M, N)        ``p[..., n1, m1, m0, n0] = x[..., 16*m1 + m0, 16*n1 + n0]``:
                                      16x16 blocks, column of blocks after column, each block
                                      row-major ("N big, z small"); zero padded
=============  ==  =================  ==========================================================

A tensor in a private format keeps its logical array (``_data``, what every op reads) and its
physical one (``_npu_storage``, what GM holds and ``memory_allocated`` counts).  The physical
array is rebuilt if the tensor was written since (its version counter moved).  Every cast is a
kernel (``TransData``) with its bytes; an op given an input in a format it does not take sees a
``TransData`` to ND first, as torch_npu inserts one.
"""

from __future__ import annotations

import numpy as np

NCHW, NHWC, ND, NC1HWC0, FRACTAL_Z, NDHWC, FRACTAL_NZ, NCDHW = 0, 1, 2, 3, 4, 27, 29, 30
FORMAT_NAMES = {NCHW: "NCHW", NHWC: "NHWC", ND: "ND", NC1HWC0: "NC1HWC0",
                FRACTAL_Z: "FRACTAL_Z", NDHWC: "NDHWC", FRACTAL_NZ: "FRACTAL_NZ", NCDHW: "NCDHW"}
C0 = 16  # the cube's fractal edge


def _ceil16(n: int) -> int:
    return -(-n // C0)


def _pad(x: np.ndarray, axis_sizes: dict) -> np.ndarray:
    widths = [(0, axis_sizes.get(i, s) - s) for i, s in enumerate(x.shape)]
    return np.pad(x, widths) if any(w for _, w in widths) else x


# each format: (rank check, logical -> physical, physical -> logical (needs the logical shape))
def _nc1hwc0(x):
    n, c, h, w = x.shape
    c1 = _ceil16(c)
    p = _pad(x, {1: c1 * C0}).reshape(n, c1, C0, h, w)
    return np.ascontiguousarray(p.transpose(0, 1, 3, 4, 2))


def _from_nc1hwc0(p, shape):
    n, c, h, w = shape
    return p.transpose(0, 1, 4, 2, 3).reshape(n, -1, h, w)[:, :c]


def _fractal_z(x):
    n, c, h, w = x.shape
    n1, c1 = _ceil16(n), _ceil16(c)
    p = _pad(x, {0: n1 * C0, 1: c1 * C0}).reshape(n1, C0, c1, C0, h, w)
    return np.ascontiguousarray(p.transpose(2, 4, 5, 0, 1, 3)).reshape(c1 * h * w, n1, C0, C0)


def _from_fractal_z(p, shape):
    n, c, h, w = shape
    c1, n1 = _ceil16(c), _ceil16(n)
    x = p.reshape(c1, h, w, n1, C0, C0).transpose(3, 4, 0, 5, 1, 2)
    return x.reshape(n1 * C0, c1 * C0, h, w)[:n, :c]


def _fractal_nz(x):
    *batch, m, n = x.shape
    m1, n1 = _ceil16(m), _ceil16(n)
    r = len(batch)
    p = _pad(x, {r: m1 * C0, r + 1: n1 * C0}).reshape(*batch, m1, C0, n1, C0)
    axes = list(range(r)) + [r + 2, r, r + 1, r + 3]
    return np.ascontiguousarray(p.transpose(axes))


def _from_fractal_nz(p, shape):
    *batch, m, n = shape
    r = len(batch)
    axes = list(range(r)) + [r + 1, r + 2, r, r + 3]
    x = p.transpose(axes)
    return x.reshape(*batch, x.shape[r] * C0, x.shape[r + 2] * C0)[..., :m, :n]


def _nhwc(x):
    return np.ascontiguousarray(x.transpose(0, 2, 3, 1))


LAYOUTS = {
    ND: (None, lambda x: x, lambda p, shape: p),
    NCHW: ((4,), lambda x: x, lambda p, shape: p),
    NHWC: ((4,), _nhwc, lambda p, shape: p.transpose(0, 3, 1, 2)),
    NC1HWC0: ((4,), _nc1hwc0, _from_nc1hwc0),
    FRACTAL_Z: ((4,), _fractal_z, _from_fractal_z),
    FRACTAL_NZ: ("2+", _fractal_nz, _from_fractal_nz),
}


def check_format(fmt, shape) -> None:
    if not isinstance(fmt, int) or isinstance(fmt, bool) or fmt not in FORMAT_NAMES:
        raise RuntimeError(f"npu_format_cast: unknown acl_format {fmt!r}; torch_npu's ids are "
                           + ", ".join(f"{v}={k}" for k, v in FORMAT_NAMES.items()))
    if fmt not in LAYOUTS:
        raise RuntimeError(f"npu_format_cast: format {FORMAT_NAMES[fmt]} ({fmt}) is not "
                           f"simulated; simulated formats: "
                           f"{', '.join(FORMAT_NAMES[f] for f in LAYOUTS)}")
    ranks = LAYOUTS[fmt][0]
    ok = ranks is None or (len(shape) >= 2 if ranks == "2+" else len(shape) in ranks)
    if not ok:
        need = "at least 2 dims" if ranks == "2+" else f"{ranks[0]} dims"
        raise RuntimeError(f"npu_format_cast: format {FORMAT_NAMES[fmt]} needs a tensor with "
                           f"{need}, got shape {list(shape)}")


def to_physical(x: np.ndarray, fmt: int) -> np.ndarray:
    """The array GM holds for logical array ``x`` in format ``fmt``."""
    check_format(fmt, x.shape)
    return LAYOUTS[fmt][1](x)


def to_logical(p: np.ndarray, fmt: int, shape) -> np.ndarray:
    """The logical array of physical array ``p`` (inverse of ``to_physical``)."""
    return np.ascontiguousarray(LAYOUTS[fmt][2](p, tuple(shape)))


# --------------------------------------------------------------------------- tensors


def get_format(t) -> int:
    return getattr(t, "_npu_format", ND)


def storage(t) -> np.ndarray:
    """The physical GM array of npu tensor ``t`` (rebuilt if ``t`` was written since)."""
    fmt = get_format(t)
    if fmt == ND:
        return t._data
    if getattr(t, "_npu_storage_version", None) != t._version:
        t._npu_storage = to_physical(t._data, fmt)
        t._npu_storage_version = t._version
    return t._npu_storage


def set_format(t, fmt: int) -> None:
    """Put npu tensor ``t`` into ``fmt``: store its physical array, charge GM for it."""
    from .memory import gm

    check_format(fmt, tuple(t.shape))
    t._npu_format = fmt
    t._npu_storage_version = None
    phys = storage(t)
    gm.track(t._data, nbytes=phys.nbytes)


def trans_data(t, dst: int = ND):
    """Account one ``TransData`` kernel moving ``t``'s GM bytes from its format to ``dst``."""
    from .eager_kernels import stream_kernel

    src = get_format(t)
    src_bytes = storage(t).nbytes
    item = t.element_size()
    dst_bytes = (t.numel() * item if dst in (ND, NCHW, NHWC)
                 else to_physical(np.empty(tuple(t.shape), t._data.dtype), dst).nbytes)
    return stream_kernel(f"TransData({FORMAT_NAMES[src]}->{FORMAT_NAMES[dst]})",
                         [_Bytes(src_bytes)], [_Bytes(dst_bytes)], ["copy"], gather=True)


class _Bytes:
    """A stand-in tensor of ``n`` bytes, for kernels that move raw bytes (casts)."""

    class _U8:
        np = np.dtype(np.uint8)

    dtype = _U8

    def __init__(self, n: int):
        self.n = n

    def numel(self) -> int:
        return self.n

    def element_size(self) -> int:
        return 1


def gm_offsets(shape, fmt: int) -> np.ndarray:
    """For each logical element, its offset (in elements) in the physical GM array: a picture
    of the layout (``print(gm_offsets((20, 18), FRACTAL_NZ))``)."""
    shape = tuple(shape)
    check_format(fmt, shape)
    numel = int(np.prod(shape)) if shape else 1
    ids = np.arange(numel, dtype=np.int64).reshape(shape) + 1  # 0 is the padding
    phys = to_physical(ids, fmt).reshape(-1)
    offsets = np.empty(numel, dtype=np.int64)
    where = np.nonzero(phys)[0]
    offsets[phys[where] - 1] = where
    return offsets.reshape(shape)
