"""What the npu kernels Inductor generates call at run time: the three stages of an Ascend C
operator on numpy arrays, each counted through ``npu/kernel.py`` (``codegen/npu.py`` writes the
calls; this module is small on purpose, so the generated code reads as the whole algorithm).

===================================  ============================================================
``CopyIn(que, gm_view, ..., at=)``   MTE2: a tile of each GM view into one buffer of ``que``
                                     (UB, at byte offsets ``at``), ``EnQue`` + ``DeQue``;
                                     returns the tiles as arrays in UB
``Alloc(que_or_tbuf, shape, dtype)`` a UB buffer of a queue (VECOUT) or a ``TBuf`` (VECCALC)
``AllocParts(que, parts, at)``       one queue buffer holding several outputs, at byte offsets
``Vec(name, *arrays)``               one vector instruction over the widest array (the cost of
                                     the numpy call written just before it)
``CopyOut(gm_view, que, ub)``        MTE3: UB -> GM through the VECOUT queue
``Tiles(core, c0, c1, rows)``        the core's tile loop; each pass is one ``core.tile()``
``block_range(i, n, per)``           the rows of block ``GetBlockIdx() == i``
``SyncAll()``                        every core waits for all (a split reduction's partials
                                     are in the GM workspace after it)
``call_npu(op, args)``               an extern kernel (``mm``) or fallback as the npu eager kernel
===================================  ============================================================

Copies of one stage of one tile share the DMA start-up latency.  Strided GM views are copied by
one ``DataCopy`` with strides (Ascend C's ``DataCopyParams``): the bytes counted are the
elements moved.
"""

from __future__ import annotations

import numpy as np

from ..npu import kernel as K
from ..npu import units
from ..npu.kernel import (  # noqa: F401 - re-exported for the generated modules
    VECIN,
    VECOUT,
    GetBlockIdx,
    GetBlockNum,
    KernelLaunch,
    SyncAll,
    TBuf,
    TPipe,
    TQue,
)
from . import config


def buffer_num(planned: int = 2) -> int:
    """Buffers per queue: the tiling function's choice (2 = double buffering, more = deeper
    queues), at most ``config.npu_buffer_num`` (1: one buffer per queue, a serial kernel)."""
    return max(1, min(planned, config.npu_buffer_num))


def _ub(tensor, shape, dtype, offset: int = 0) -> np.ndarray:
    """``shape`` elements of ``dtype`` at byte ``offset`` of a queue buffer or TBuf."""
    n = int(np.prod(shape, dtype=np.int64))
    flat = tensor.buffer.view(tensor.alloc, np.uint8)[offset:].view(np.dtype(dtype))
    return flat[:n].reshape(shape)


def Alloc(que, shape: tuple, dtype) -> np.ndarray:  # noqa: N802 - Ascend C's style
    t = que.Get(dtype) if isinstance(que, TBuf) else que.AllocTensor(dtype)
    return _ub(t, shape, dtype)


def AllocParts(que, parts: tuple, at: tuple) -> tuple:  # noqa: N802
    """One buffer of ``que`` holding several tensors, ``parts[i] = (shape, dtype)`` at byte
    offset ``at[i]`` (Ascend C: several outputs in one queue, used by offsets)."""
    t = que.AllocTensor(np.uint8)
    return tuple(_ub(t, shape, dtype, off) for (shape, dtype), off in zip(parts, at))


def CopyIn(que, *srcs: np.ndarray, at: tuple = (0,)):  # noqa: N802
    """Copy GM views into one buffer of ``que``, ``srcs[i]`` at byte offset ``at[i]`` (several
    inputs in one queue, used by offsets); one array, or a tuple for several."""
    core = K._current_core()
    t = que.AllocTensor(srcs[0].dtype)
    ubs = []
    for src, off in zip(srcs, at, strict=True):
        core.add("MTE2", units.dma_cycles(core.spec, src.nbytes, core.launch.block_dim),
                 latency=core.spec.dma_latency_cycles, gm_read=src.nbytes)
        ubs.append(_ub(t, src.shape, src.dtype, off))
        np.copyto(ubs[-1], src)
    que.EnQue(t)
    que.DeQue()
    return ubs[0] if len(ubs) == 1 else tuple(ubs)


def CopyOut(dst: np.ndarray, que, ub: np.ndarray) -> None:  # noqa: N802
    core = K._current_core()
    nbytes = dst.size * dst.itemsize
    core.add("MTE3", units.dma_cycles(core.spec, nbytes, core.launch.block_dim),
             latency=core.spec.dma_latency_cycles, gm_write=nbytes)
    np.copyto(dst, ub, casting="unsafe")


def Vec(name: str, *arrays) -> None:  # noqa: N802
    width = max((a.size * a.itemsize for a in arrays if isinstance(a, np.ndarray)), default=0)
    K.vector_instruction(name, width)


def Tiles(core, c0: int, c1: int, rows: int):  # noqa: N802
    for t0 in range(c0, c1, rows):
        with core.tile():
            yield t0, min(t0 + rows, c1)


def block_range(i: int, n: int, per: int) -> tuple:
    return i * per, min(n, (i + 1) * per)


def call_npu(op, args: list):
    """Run ``op`` as the npu's eager kernel (one profiled kernel, e.g. ``aten::mm`` on the
    cube through L1/L0); arrays in, arrays out."""
    from .runtime import call_fallback

    return call_fallback(op, args, "npu")


def npu_matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The extern matmul of a generated module: ``aten::mm`` / ``aten::bmm`` on the cube."""
    import minitorch_compile as mtc

    aten = mtc.ops.aten
    op = aten.mm.default if a.ndim == 2 and b.ndim == 2 else \
        aten.bmm.default if a.ndim == 3 and b.ndim == 3 else aten.matmul.default
    return call_npu(op, [a, b])


def nd_data(t) -> np.ndarray:
    """An input's ND array; a tensor in a private format pays its ``TransData`` first."""
    from ..npu import formats
    from .codegen.npu_cube import note_version

    if getattr(t, "_npu_format", formats.ND) != formats.ND:
        formats.trans_data(t)
    note_version(t)  # a kept NZ copy of it stays valid while its version does
    return t._data


def report_first_run(run, source: str, plans: list):
    """``run`` of a module compiled for the npu, reporting itself to the compile report
    (``report/trace.py``'s ``npu_compiled_graph`` event) the first time it runs while a trace
    is on: the generated source, each kernel's plan (static) and the kernel records of that
    run (simulated bytes, times and the per-core timeline exist only once it ran)."""
    from ..npu.profiler import profile
    from ..report.trace import trace_event, tracing

    reported = False
    name = ", ".join(p.name for p in plans) or "extern kernels only"

    def traced_run(*args):
        nonlocal reported
        if reported or not tracing():
            return run(*args)
        reported = True
        with profile() as prof:
            out = run(*args)
        trace_event("npu_compiled_graph", name=name, source=source, plans=list(plans),
                    kernels=list(prof.kernels))
        return out
    return traced_run

