"""An Ascend C kernel, simulated: ``TPipe``, ``TQue``, ``DataCopy``, vector and cube
instructions, each counted in bytes and cycles on the core that issues it.

Teaches the Ascend C programming model (CANN "Ascend C" docs, vector operator samples).  An
operator is launched on ``block_dim`` AI cores; core ``GetBlockIdx()`` takes its slice of the
iteration space and streams it through the Unified Buffer in *tiles*::

    with KernelLaunch("add", block_dim=8) as k:
        for core in k.cores():                       # one pass per AI core
            pipe = TPipe()
            in_x, out = TQue(VECIN, name="x"), TQue(VECOUT, name="z")
            pipe.InitBuffer(in_x, 2, tile_bytes)     # 2 buffers: double buffering
            pipe.InitBuffer(out, 2, tile_bytes)
            for i in core.tiles(n_tiles):           # CopyIn -> Compute -> CopyOut
                x = in_x.AllocTensor(np.float32)
                DataCopy(x, x_gm[off + i * n:], n)   # MTE2: GM -> UB
                z = out.AllocTensor(np.float32)
                Exp(z, in_x.DeQue(), n)              # Vector: ceil(4n / 256) repeats * 8
                DataCopy(z_gm[off + i * n:], out.DeQue(), n)   # MTE3: UB -> GM

Scratch space for temporaries is a ``TBuf`` (``pipe.InitBuffer(tbuf, length)``; outside the
pipeline, so it does not stop double buffering).  Everything moves real data when the tensors
carry it (``GlobalTensor(array)``), so a generated kernel computes for real.  A kernel that only
needs its cost (the eager kernels) passes ``GlobalTensor.meta(dtype)`` and may say that one
tile body stands for many identical ones (``core.tile(times=k)``) or one core for several
(``k.core(i, replicas=r)``): the accounting is then arithmetic on sizes, never a Python loop
over elements.

Cores, the launch and the timing model are in ``launch.py``.
"""

from __future__ import annotations

import numpy as np

from . import units
from .launch import (  # noqa: F401 - the launch is part of the kernel API
    CoreContext,
    KernelLaunch,
    Tile,
    _current_core,
    _state,
)
from .memory import LocalBuffer

# queue positions -> the buffer their tensors live in (Ascend C's ``TPosition``)
VECIN, VECOUT, VECCALC = "VECIN", "VECOUT", "VECCALC"
A1, B1, A2, B2, CO1 = "A1", "B1", "A2", "B2", "CO1"
POSITION_BUFFER = {VECIN: "UB", VECOUT: "UB", VECCALC: "UB", A1: "L1", B1: "L1",
                   A2: "L0A", B2: "L0B", CO1: "L0C"}


# --------------------------------------------------------------------------- tensors


class GlobalTensor:
    """A span of GM: a flat numpy array (or only a dtype, for counting) and an offset."""

    __slots__ = ("data", "dtype", "offset")

    def __init__(self, data: np.ndarray | None = None, dtype=None, offset: int = 0):
        self.data = None if data is None else data.reshape(-1)
        self.dtype = np.dtype(dtype if dtype is not None else data.dtype)
        self.offset = offset

    @classmethod
    def meta(cls, dtype) -> GlobalTensor:
        return cls(None, dtype)

    def __getitem__(self, index: slice) -> GlobalTensor:
        return GlobalTensor(self.data, self.dtype, self.offset + (index.start or 0))

    def span(self, count: int) -> np.ndarray | None:
        return None if self.data is None else self.data[self.offset:self.offset + count]


class LocalTensor:
    """One buffer of a queue in UB / L1 / L0x, typed."""

    __slots__ = ("buffer", "alloc", "dtype", "counting")

    def __init__(self, buffer: LocalBuffer, alloc, dtype, counting: bool):
        self.buffer, self.alloc, self.counting = buffer, alloc, counting
        self.dtype = np.dtype(dtype)

    @property
    def position(self) -> str:
        return self.buffer.kind

    @property
    def data(self) -> np.ndarray | None:
        return None if self.counting else self.buffer.view(self.alloc, self.dtype)


class TQue:
    """A queue between two pipeline stages; its ``depth`` buffers live in one on-chip buffer."""

    def __init__(self, position: str = VECIN, depth: int = 2, name: str = ""):
        if position not in POSITION_BUFFER:
            raise ValueError(f"TQue: unknown position {position!r}; one of {list(POSITION_BUFFER)}")
        self.position, self.depth, self.name = position, depth, name or position.lower()
        self.buffers: list = []
        self._next = 0
        self._fifo: list = []

    def AllocTensor(self, dtype) -> LocalTensor:  # noqa: N802 - Ascend C's names
        core = _current_core()
        if not self.buffers:
            raise RuntimeError(f"TQue '{self.name}': AllocTensor before TPipe.InitBuffer")
        buf, alloc = self.buffers[self._next % len(self.buffers)]
        self._next += 1
        return LocalTensor(buf, alloc, dtype, core.launch.counting)

    def EnQue(self, t: LocalTensor) -> None:  # noqa: N802
        self._fifo.append(t)

    def DeQue(self) -> LocalTensor:  # noqa: N802
        return self._fifo.pop(0)

    def FreeTensor(self, t: LocalTensor) -> None:  # noqa: N802
        pass


class TPipe:
    """Owns a core's on-chip memory: ``InitBuffer(queue, num, length)`` carves it up."""

    def __init__(self):
        self.core = _current_core()

    def InitBuffer(self, que, num: int, length: int | None = None) -> None:  # noqa: N802
        """``InitBuffer(queue, num, length)``, or ``InitBuffer(tbuf, length)`` for a TBuf."""
        if isinstance(que, TBuf):
            num, length = 1, num
        buf = self.core.buffers[POSITION_BUFFER[que.position]]
        que.buffers = [(buf, buf.alloc(f"{que.name}[{i}]", length)) for i in range(num)]
        que.depth = num
        if que.position != VECCALC:  # scratch space does not take part in the pipeline
            self.core.queue_depths.append(num)
            # Atlas A2 allows ``spec.max_que_buffers`` per position: recorded, not enforced
            # (Inductor's kernels keep to it; eager skeletons give each input its own queue)
            que_buffers = self.core.que_buffers
            que_buffers[que.position] = que_buffers.get(que.position, 0) + num


class TBuf(TQue):
    """Scratch space in UB (``TBuf<VECCALC>``): one buffer, outside the pipeline's queues."""

    def __init__(self, name: str = "tmp"):
        super().__init__(VECCALC, 1, name)

    def Get(self, dtype) -> LocalTensor:  # noqa: N802
        self._next = 0
        return self.AllocTensor(dtype)


def GetBlockIdx() -> int:  # noqa: N802
    return _current_core().index


def GetBlockNum() -> int:  # noqa: N802
    return _state.launch.block_dim


def SyncAll() -> None:  # noqa: N802
    """Every core waits until all reach this point (the cores' GM writes before it are visible
    after it); costs ``spec.sync_all_cycles`` once, after the slowest core (``launch.py``).
    Cores run one after the other here, so work after it belongs to the last core's pass."""
    _current_core().sync_all()


# --------------------------------------------------------------------------- instructions


def DataCopy(dst, src, count: int) -> None:  # noqa: N802
    """Copy ``count`` elements; the direction picks the engine (MTE2, MTE1, MTE3 or Vector)."""
    core = _current_core()
    src_local, dst_local = isinstance(src, LocalTensor), isinstance(dst, LocalTensor)
    nbytes = count * (src.dtype.itemsize)
    if not src_local and dst_local:
        core.add("MTE2", units.dma_cycles(core.spec, nbytes, core.launch.block_dim),
                 latency=core.spec.dma_latency_cycles, gm_read=nbytes,
                 l1=nbytes if dst.position == "L1" else 0)
        if not dst.counting and src.data is not None:
            dst.data[:count] = src.span(count)
    elif src_local and dst_local and src.position == "L1":
        core.add("MTE1", units.mte1_cycles(core.spec, nbytes), l0=nbytes)
        if not dst.counting:
            dst.data[:count] = src.data[:count]
    elif src_local and not dst_local:
        core.add("MTE3", units.dma_cycles(core.spec, nbytes, core.launch.block_dim),
                 latency=core.spec.dma_latency_cycles, gm_write=nbytes)
        if not src.counting and dst.data is not None:
            dst.span(count)[:] = src.data[:count]
    elif src_local and dst_local:
        vector_instruction("copy", nbytes)
        if not dst.counting:
            dst.data[:count] = src.data[:count]
    else:
        raise RuntimeError("DataCopy: GM -> GM needs a trip through UB (CopyIn, then CopyOut)")


def Fixpipe(dst: GlobalTensor, src: LocalTensor, count: int) -> None:  # noqa: N802
    """L0C -> GM (counted in the MTE3 lane), casting the fp32 accumulator to ``dst``'s dtype."""
    core = _current_core()
    nbytes = count * dst.dtype.itemsize
    core.add("MTE3", units.dma_cycles(core.spec, nbytes, core.launch.block_dim),
             latency=core.spec.dma_latency_cycles, gm_write=nbytes)
    if not src.counting and dst.data is not None:
        dst.span(count)[:] = src.data[:count]


def Mmad(c: LocalTensor, a: LocalTensor, b: LocalTensor, m: int, n: int, k: int,  # noqa: N802
         accumulate: bool = True) -> None:
    """``c[m, n] (+)= a[m, k] @ b[k, n]`` on the cube unit (row-major tiles in L0A/L0B/L0C)."""
    core = _current_core()
    core.add("Cube", units.cube_cycles(core.spec, m, n, k, a.dtype.name))
    if not c.counting:
        prod = a.data[:m * k].reshape(m, k).astype(c.dtype) @ b.data[:k * n].reshape(k, n)
        out = c.data[:m * n].reshape(m, n)
        out[...] = out + prod if accumulate else prod


def vector_instruction(name: str, nbytes: int) -> None:
    """Count one vector instruction over ``nbytes`` (its widest operand)."""
    core = _current_core()
    core.add("Vector", units.vector_cycles(core.spec, name, nbytes))


def vector_op(name: str, fn, dst: LocalTensor, srcs: tuple, count: int, *scalars) -> None:
    """Any vector instruction: ``dst[:count] = fn(*srcs[:count], *scalars)``, costed as the
    cost-table entry ``name`` (what a code generator uses for an op without an Ascend C name)."""
    width = max([dst.dtype.itemsize] + [s.dtype.itemsize for s in srcs])
    vector_instruction(name, count * width)
    if not dst.counting:
        with np.errstate(all="ignore"):
            dst.data[:count] = fn(*[s.data[:count] for s in srcs], *scalars)


# Ascend C vector instruction -> (cost-table name, numpy function, number of tensor sources)
VECTOR_INSTRUCTIONS = {
    "Add": ("add", np.add, 2), "Sub": ("sub", np.subtract, 2), "Mul": ("mul", np.multiply, 2),
    "Div": ("div", np.divide, 2), "Max": ("max", np.maximum, 2), "Min": ("min", np.minimum, 2),
    "Exp": ("exp", np.exp, 1), "Ln": ("log", np.log, 1), "Abs": ("abs", np.abs, 1),
    "Relu": ("relu", lambda x: np.maximum(x, 0), 1), "Sqrt": ("sqrt", np.sqrt, 1),
    "Rsqrt": ("rsqrt", lambda x: 1 / np.sqrt(x), 1), "Reciprocal": ("reciprocal", np.reciprocal, 1),
    "Tanh": ("tanh", np.tanh, 1), "Sin": ("sin", np.sin, 1), "Cos": ("cos", np.cos, 1),
    "Sigmoid": ("sigmoid", lambda x: 1 / (1 + np.exp(-x)), 1),
    "Adds": ("add", np.add, 1), "Muls": ("mul", np.multiply, 1),
    "Maxs": ("max", np.maximum, 1), "Mins": ("min", np.minimum, 1),
    "Cast": ("cast", lambda x: x, 1),
}


def _make_instruction(op: str):
    name, fn, nsrc = VECTOR_INSTRUCTIONS[op]

    def instruction(dst, *args):
        srcs, rest = args[:nsrc], args[nsrc:]
        scalars, count = rest[:-1], rest[-1]
        vector_op(name, fn, dst, srcs, count, *scalars)

    instruction.__name__ = op
    instruction.__doc__ = f"Ascend C ``{op}``: {nsrc} source(s), costed as '{name}'."
    return instruction


for _op in VECTOR_INSTRUCTIONS:
    globals()[_op] = _make_instruction(_op)


def Duplicate(dst: LocalTensor, value, count: int) -> None:  # noqa: N802
    vector_op("duplicate", lambda: value, dst, (), count)


def ReduceSum(dst: LocalTensor, src: LocalTensor, count: int) -> None:  # noqa: N802
    vector_op("reduce", lambda x: np.sum(x, keepdims=True), dst, (src,), count)


def ReduceMax(dst: LocalTensor, src: LocalTensor, count: int) -> None:  # noqa: N802
    vector_op("reduce", lambda x: np.max(x, keepdims=True), dst, (src,), count)
