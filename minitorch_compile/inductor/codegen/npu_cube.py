"""Matmuls of npu graphs on the cube, in FRACTAL_NZ, and the pass that removes redundant casts
(torch_npu's ``TransData`` insertion and its format-propagation passes).

The cube consumes 16×16 fractals, so an extern ``mm``/``bmm`` of a compiled npu graph is three
steps in ``call``, each a visible kernel in the profile::

    buf4_a = npu_cast(buf3, FRACTAL_NZ)          # TransData(ND->FRACTAL_NZ)
    buf4_b = npu_cast(arg1_1, FRACTAL_NZ)        # TransData(ND->FRACTAL_NZ)
    buf4_nz = cube_mm(buf4_a, buf4_b)            # GM -> L1 -> L0A/L0B -> Mmad -> L0C -> GM (NZ)
    np.copyto(buf4, npu_cast(buf4_nz, ND))       # TransData(FRACTAL_NZ->ND)

``eliminate_casts`` then rewrites the ``call`` lines, removing two kinds of cast:

==========  ================================================================================
repeats     ``npu_cast(E, FRACTAL_NZ)`` of an operand ``E`` already cast earlier: the first
            NZ copy is reused (``x @ w1`` and ``x @ w2`` cast ``x`` once)
cancels     ``npu_cast(buf, FRACTAL_NZ)`` where ``buf`` is the ND copy of a matmul's NZ result
            ``buf_nz``: ``buf_nz`` is used directly; the ND cast itself goes too when nothing
            else reads ``buf`` (``(a @ b) @ c`` keeps the product in NZ)
==========  ================================================================================

Every removal is recorded ``(kind, line)``.  A cast is never removed when its operand may have
changed in between: generated ``call`` bodies assign each buffer once (memory planning's
reuse lines rename, they do not overwrite a live buffer).
"""

from __future__ import annotations

import re
import weakref
from dataclasses import dataclass

import numpy as np

from ...npu import formats

ND, FRACTAL_NZ = formats.ND, formats.FRACTAL_NZ
_TO_NZ = re.compile(r"^(\s*)(\w+) = npu_cast\((.+), FRACTAL_NZ(?:, keep=True)?\)(.*)$")
_TO_ND = re.compile(r"^(\s*)np\.copyto\((\w+), npu_cast\((\w+), ND\)\)(.*)$")


@dataclass
class NZ:
    """A matrix (or batch of matrices) held in GM as FRACTAL_NZ: its physical array."""

    physical: np.ndarray
    shape: tuple

    def logical(self) -> np.ndarray:
        if len(self.shape) == 2:
            return formats.to_logical(self.physical, FRACTAL_NZ, self.shape)
        return np.stack([formats.to_logical(p, FRACTAL_NZ, self.shape[1:])
                         for p in self.physical])


def _to_nz(x: np.ndarray) -> np.ndarray:
    if x.ndim == 2:
        return formats.to_physical(np.ascontiguousarray(x), FRACTAL_NZ)
    return np.stack([formats.to_physical(np.ascontiguousarray(m), FRACTAL_NZ) for m in x])


_kept: dict = {}  # id(ND array) -> (weakref to it, its version counter, version, NZ copy)
_versions: dict = {}  # id(input array) -> (weakref to it, its tensor's version counter)


def note_version(t) -> None:
    """Remember the version counter of a graph input's array (``nd_data`` calls this)."""
    arr = t._data
    if isinstance(arr, np.ndarray):
        if len(_versions) > 256:  # forget arrays that are gone
            for k in [k for k, (ref, _) in _versions.items() if ref() is None]:
                del _versions[k]
        _versions[id(arr)] = (weakref.ref(arr), t._get_vc())


def npu_cast(x, fmt: int, keep: bool = False):
    """A ``TransData`` kernel: ND array -> NZ, or NZ -> ND array (counted as a stream kernel
    moving the physical bytes of each side).

    ``keep=True`` (a graph input: a weight) keeps the NZ copy across calls: while the tensor's
    version counter has not moved (every in-place write — an optimizer's update — bumps it,
    as in torch), the next call reuses it and no kernel runs — torch_npu keeps such weights
    in NZ.  An array whose tensor is not known is cast every time."""
    from ...npu.eager_kernels import stream_kernel
    from ...npu.formats import _Bytes

    if keep and fmt == FRACTAL_NZ:
        seen = _versions.get(id(x))
        vc = seen[1] if seen is not None and seen[0]() is x else None
        hit = _kept.get(id(x))
        # the same array object (a weakref, not just the id: a new array may reuse a freed
        # one's id) of the same tensor, not written since
        if vc is not None and hit is not None and hit[0]() is x and hit[1] is vc and \
                hit[2] == vc[0]:
            return hit[3]
        out = npu_cast(x, fmt)
        if vc is not None:
            if len(_kept) > 64:
                _kept.clear()
            _kept[id(x)] = (weakref.ref(x), vc, vc[0], out)
        return out
    if fmt == FRACTAL_NZ:
        out = NZ(_to_nz(x), tuple(x.shape))
        src, dst, name = x.nbytes, out.physical.nbytes, "TransData(ND->FRACTAL_NZ)"
    else:
        out = x.logical()
        src, dst, name = x.physical.nbytes, out.nbytes, "TransData(FRACTAL_NZ->ND)"
    stream_kernel(name, [_Bytes(src)], [_Bytes(dst)], ["copy"], gather=True)
    return out


def cube_mm(a: NZ, b: NZ) -> NZ:
    """``[batch] (M, K) @ (K, N)`` on the cube through L1 and L0 (``eager_kernels._matmul``'s
    blocking), operands and result in FRACTAL_NZ."""
    from ...npu.eager_kernels import _launch, _matmul

    la, lb = a.logical(), b.logical()
    out = np.matmul(la, lb)
    m, kk, n = la.shape[-2], la.shape[-1], lb.shape[-1]
    batch = int(np.prod(la.shape[:-2], dtype=np.int64)) if la.ndim > 2 else 1
    if m * n * batch and kk:
        name = "cube_bmm" if la.ndim > 2 else "cube_mm"
        _launch((name, batch, m, kk, n, la.dtype, out.dtype), _matmul)
    return NZ(_to_nz(out), tuple(out.shape))


def matmul_lines(buf: str, a: str, b: str, keep: tuple = (False, False)) -> list:
    ka, kb = (", keep=True" if k else "" for k in keep)
    return [f"{buf}_a = npu_cast({a}, FRACTAL_NZ{ka})  # TransData(ND->FRACTAL_NZ)",
            f"{buf}_b = npu_cast({b}, FRACTAL_NZ{kb})  # TransData(ND->FRACTAL_NZ)",
            f"{buf}_nz = cube_mm({buf}_a, {buf}_b)  # GM -> L1 -> L0A/L0B -> Mmad -> L0C -> GM",
            f"np.copyto({buf}, npu_cast({buf}_nz, ND))  # TransData(FRACTAL_NZ->ND)"]


def eliminate_casts(lines: list) -> tuple[list, list]:
    """Remove repeated and cancelling casts from ``call``'s lines; returns (lines, removed)."""
    removed: list = []
    nz_of_expr: dict = {}  # operand expression -> the name of its NZ copy
    nd_copy_of: dict = {}  # ND buffer -> the NZ result it is a cast of
    out = list(lines)
    cancelled: set = set()
    for i, line in enumerate(out):
        m = _TO_ND.match(line)
        if m:
            nd_copy_of[m.group(2)] = m.group(3)
            continue
        m = _TO_NZ.match(line)
        if not m:
            continue
        ind, name, expr = m.group(1), m.group(2), m.group(3)
        if expr in nz_of_expr:
            out[i] = f"{ind}{name} = {nz_of_expr[expr]}  # cast removed: repeats"
            removed.append(("repeats", line.strip()))
        elif expr in nd_copy_of:
            out[i] = f"{ind}{name} = {nd_copy_of[expr]}  # cast removed: cancels"
            removed.append(("cancels", line.strip()))
            nz_of_expr[expr] = nd_copy_of[expr]
            cancelled.add(expr)
        else:
            nz_of_expr[expr] = name
    for nd in cancelled:  # an ND copy nobody reads any more once its cast back is gone
        word = re.compile(rf"\b{re.escape(nd)}\b")
        uses = [ln for ln in out if word.search(ln) and not _is_bookkeeping(ln, nd)]
        if len(uses) == 1 and _TO_ND.match(uses[0]):
            k = out.index(uses[0])
            removed.append(("cancels", out[k].strip()))
            out[k] = f"{_TO_ND.match(uses[0]).group(1)}pass  # cast removed: cancels ({nd} unused)"
    return out, removed


def _is_bookkeeping(line: str, name: str) -> bool:
    """Allocation, reuse and ``del`` lines of memory planning mention a buffer without
    reading its values."""
    s = line.strip()
    return s.startswith(f"{name} = np.empty(") or s.startswith(f"del {name}") or \
        (s.endswith("# reuse") and f"= {name}.reshape" in s)
