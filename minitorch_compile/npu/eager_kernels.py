"""The kernel skeletons of eager npu ops: streams, row reductions and cube matmuls.

Teaches how an Ascend C operator is *tiled* (the tiling function of an ``aclnn`` kernel): the
iteration space is split over AI cores, each core's share is cut into tiles whose buffers
(x 2 for double buffering, 32-byte aligned) fit the Unified Buffer, and each tile is one pass of
CopyIn -> Compute -> CopyOut through ``kernel.py``'s API in counting mode.  ``eager.py`` says
which skeleton an op uses; the table of skeletons is in its docstring.

A skeleton's cost depends on sizes only, so ``_launch`` computes it once per (sizes, spec) and
replays the record from a cache: accounting costs the same for 10 or 10 million elements.
"""

from __future__ import annotations

import math

from .._tensor import Tensor
from .kernel import (
    A1,
    A2,
    B1,
    B2,
    CO1,
    VECIN,
    VECOUT,
    DataCopy,
    Fixpipe,
    GlobalTensor,
    KernelLaunch,
    Mmad,
    TBuf,
    TPipe,
    TQue,
    vector_instruction,
)
from .memory import NPUMemoryError, round_up
from .profiler import KernelRecord, record_kernel
from .spec import get_spec

# reductions that need several sweeps over a row (when the row does not fit UB)
PASSES = {"std": 2, "_softmax": 3, "_log_softmax": 3, "_softmax_backward_data": 2,
          "_log_softmax_backward_data": 2}


def _cores_for(nbytes: float, limit: int) -> int:
    spec = get_spec()
    return max(1, min(spec.num_cores, limit, math.ceil(nbytes / spec.min_core_bytes)))


def _shares(total: int, cores: int):
    """Split ``total`` items over ``cores``: [(first core index, replicas, items)]."""
    base, extra = divmod(total, cores)
    groups = [(0, extra, base + 1), (extra, cores - extra, base)]
    return [g for g in groups if g[1] > 0 and g[2] > 0]


# --------------------------------------------------------------------------- streams


def stream_kernel(name: str, inputs: list, outputs: list, instructions: list[str], *,
                  gather: bool = False) -> KernelRecord | None:
    """An elementwise kernel over the largest output; see the module table."""
    ins = tuple((t.element_size(), t.numel()) for t in inputs)
    outs = tuple((o.element_size(), o.numel()) for o in outputs)
    return _launch((name, ins, outs, tuple(instructions), gather), _stream)


def _stream(name, inputs, outputs, instructions, gather) -> KernelRecord | None:
    """n = the output's elements, split over cores; per core, tiles of ``tile`` elements::

        UB = resident inputs (a broadcast input small enough, loaded once per core)
           + 2 x tile x (bytes of each input queue + bytes of each output)   (double buffers)
           + tile x widest dtype                      (a TBuf, if the op has > 1 instruction)
        per tile: DataCopy in (MTE2) -> the op's vector instructions -> DataCopy out (MTE3)

    ``gather`` (indexing ops): an input is read at most once per output element, so each reads
    ``min(its numel, n) / n`` elements per output element; many inputs (a concat) take turns
    in one shared input queue.
    """
    spec = get_spec()
    n = max((k for _, k in outputs), default=0) or max((k for _, k in inputs), default=0)
    if n == 0:
        return None
    width = max(isz for isz, _ in inputs + outputs)
    streams, resident, min_read, res_bytes = [], [], 0, 0
    for isz, numel in inputs:
        if gather:
            streams.append((isz, min(numel, n) / n))
            min_read += min(numel, n) * isz
            continue
        min_read += numel * isz
        size = round_up(numel * isz, spec.ub_align)
        if numel < n and res_bytes + size <= spec.ub_bytes // 4:  # small broadcast: keep it
            resident.append((isz, numel))
            res_bytes += size
        else:  # an input larger than the output (a streamed reduction) is read whole
            streams.append((isz, max(numel / n, 1.0)))
    # a gather/concat reads its inputs one after another: they share one input queue
    shared = gather and len(streams) > 2
    queues = [max(isz for isz, _ in streams)] if shared else [isz for isz, _ in streams]
    per_elem = 2 * (sum(queues) + sum(isz for isz, _ in outputs))
    per_elem += width if len(instructions) > 1 else 0
    cores = _cores_for(n * width, n)
    tile = (spec.ub_bytes - res_bytes) // max(per_elem, 1) // 32 * 32
    if tile < 32:
        raise NPUMemoryError(f"{name}: no 32-element tile fits UB ({spec.ub_bytes} bytes): "
                             f"{res_bytes} bytes of resident inputs, {per_elem} bytes per element")
    tile = min(tile, round_up(-(-n // cores), 32))
    min_write = sum(isz * k for isz, k in outputs)
    with KernelLaunch(name, cores, min_read_bytes=min_read, min_write_bytes=min_write,
                      counting=True, record=False) as k:
        for first, replicas, elems in _shares(n, cores):
            core = k.core(first, replicas)
            pipe = TPipe()
            res_q = [TBuf(f"resident{j}") for j in range(len(resident))]
            in_q = [TQue(VECIN, name=f"in{j}") for j in range(len(queues))]
            out_q = [TQue(VECOUT, name=f"out{j}") for j in range(len(outputs))]
            for q, (isz, numel) in zip(res_q, resident):
                pipe.InitBuffer(q, round_up(numel * isz, spec.ub_align))
                DataCopy(q.Get(_dtype(isz)), GlobalTensor.meta(_dtype(isz)), numel)
            for q, isz in zip(in_q, queues):
                pipe.InitBuffer(q, 2, tile * isz)
            for q, (isz, _) in zip(out_q, outputs):
                pipe.InitBuffer(q, 2, tile * isz)
            if len(instructions) > 1:
                pipe.InitBuffer(TBuf("tmp"), tile * width)

            def body(count):
                if shared:  # the tile touches ~(its share of the output) of the inputs
                    nbytes = count * sum(isz * frac for isz, frac in streams)
                    copies = min(len(streams), math.ceil(len(streams) * count / n))
                    for _ in range(copies):
                        DataCopy(in_q[0].AllocTensor("uint8"), GlobalTensor.meta("uint8"),
                                 nbytes / copies)
                else:  # frac < 1: a gathered input's average share (totals stay exact)
                    for q, (isz, frac) in zip(in_q, streams):
                        DataCopy(q.AllocTensor(_dtype(isz)), GlobalTensor.meta(_dtype(isz)),
                                 count * frac)
                for ins in instructions:
                    vector_instruction(ins, count * width)
                for q, (isz, _) in zip(out_q, outputs):
                    DataCopy(GlobalTensor.meta(_dtype(isz)), q.AllocTensor(_dtype(isz)), count)

            full, tail = divmod(elems, tile)
            if full:
                with core.tile(times=full):
                    body(tile)
            if tail:
                with core.tile():
                    body(tail)
    return k.record


def _dtype(itemsize: int):
    return {1: "uint8", 2: "float16", 4: "float32", 8: "float64"}[itemsize]


# --------------------------------------------------------------------------- reductions


def reduction_kernel(name: str, op, args, inputs: list, outputs: list,
                     instructions: list[str]) -> KernelRecord | None:
    big = max(inputs, key=lambda t: t.numel())
    ni = big.numel()
    no = max((o.numel() for o in outputs), default=1)
    if ni == 0:
        return stream_kernel(name, [], outputs, ["duplicate"]) if no else None
    names = op.schema.arg_names
    dim = args[names.index("dim")] if "dim" in names else None
    if no >= ni and isinstance(dim, int):  # softmax-like: rows along ``dim``
        length = big.shape[dim] if big.ndim else 1
    else:
        length = ni // max(no, 1)
    ins = tuple((t.element_size(), t.numel()) for t in inputs)
    outs = tuple((o.element_size(), o.numel()) for o in outputs)
    return _launch((name, ins, outs, tuple(instructions), length, PASSES.get(op.name, 1)),
                   _reduce)


def _reduce(name, inputs, outputs, instructions, length, passes) -> KernelRecord | None:
    """Rows of ``length`` elements (the reduced extent), split over cores::

        a row fits UB (2 x row inputs + a TBuf + 2 x row outputs):
            tiles of as many whole rows as fit; read once, written once
        else: each row streams through in UB-sized chunks, ``passes`` sweeps (softmax: max,
            sum of exp, normalise); only the last sweep writes
    """
    spec = get_spec()
    ni = max(k for _, k in inputs)
    rows = ni // max(length, 1)
    # bytes read per element of the largest input: smaller inputs (a target, a weight, row
    # statistics) are read alongside, spread over its elements
    in_isz = sum(isz * k for isz, k in inputs) / ni
    out_row = sum(isz * k for isz, k in outputs) / rows
    width = max(isz for isz, _ in inputs + outputs)
    cores = _cores_for(ni * width, rows)
    per_row = 2 * length * in_isz + length * width + 2 * out_row + 2 * spec.ub_align
    rows_per_tile = int(spec.ub_bytes // per_row)
    min_read = sum(isz * k for isz, k in inputs)
    with KernelLaunch(name, cores, min_read_bytes=min_read, counting=True, record=False) as k:
        for first, replicas, nrows in _shares(rows, cores):
            core = k.core(first, replicas)
            pipe = TPipe()
            qin, qout = TQue(VECIN, name="in"), TQue(VECOUT, name="out")
            out_elem = out_row / length  # output bytes per input element of a row
            if rows_per_tile >= 1:  # whole rows per tile
                r = min(rows_per_tile, nrows)
                chunk, chunks, sweeps = length, 1, 1
            else:  # a row streams through in chunks, ``passes`` sweeps; the last one writes
                r = 1
                chunk = int((spec.ub_bytes - 6 * spec.ub_align)
                            // (2 * in_isz + width + 2 * out_elem)) // 32 * 32
                chunks, sweeps = math.ceil(length / chunk), passes
            pipe.InitBuffer(qin, 2, round_up(math.ceil(r * chunk * in_isz), spec.ub_align))
            pipe.InitBuffer(qout, 2, round_up(math.ceil(r * chunk * out_elem), spec.ub_align))
            pipe.InitBuffer(TBuf("tmp"), round_up(r * chunk * width, spec.ub_align))

            def body(nr, count, out_bytes):
                DataCopy(qin.AllocTensor("uint8"), GlobalTensor.meta("uint8"),
                         math.ceil(nr * count * in_isz))
                for ins in instructions:
                    vector_instruction(ins, nr * count * width)
                if out_bytes:
                    DataCopy(GlobalTensor.meta("uint8"), qout.AllocTensor("uint8"),
                             math.ceil(out_bytes))

            if chunks == 1:
                full, tail = divmod(nrows, r)
                if full:
                    with core.tile(times=full):
                        body(r, length, r * out_row)
                if tail:
                    with core.tile():
                        body(tail, length, tail * out_row)
            else:
                last = length - (chunks - 1) * chunk
                if sweeps > 1:  # the sweeps before the last read only
                    with core.tile(times=nrows * (sweeps - 1) * chunks):
                        body(1, chunk, 0)
                if chunks > 1:
                    with core.tile(times=nrows * (chunks - 1)):
                        body(1, chunk, chunk * out_elem)
                with core.tile(times=nrows):
                    body(1, last, last * out_elem)
    return k.record


# --------------------------------------------------------------------------- cube


def matmul_kernel(name: str, a: Tensor, b: Tensor, outputs: list) -> KernelRecord | None:
    """``[batch] (M, K) @ (K, N)`` in 128x128 blocks through L1 and L0 (see module table)."""
    m, kk, n = a.shape[-2], a.shape[-1], b.shape[-1]
    batch = 1
    for s in a.shape[:-2]:
        batch *= s
    if m * n * batch == 0:
        return None
    if kk == 0:
        return stream_kernel(name, [], outputs, ["duplicate"])
    return _launch((name, batch, m, kk, n, a._data.dtype, outputs[0]._data.dtype), _matmul)


def _matmul(name, batch, m, kk, n, dt, out_dt) -> KernelRecord:
    """Output blocks of bm x bn (<= 128 x 128, the fp32 accumulator double-buffered in L0C),
    split over cores; per block, K in steps of bk (an A tile of 128 x bk fills half of L0A)::

        per k-step: DataCopy A, B tiles GM -> L1 (MTE2); L1 -> L0A / L0B (MTE1); Mmad (Cube)
        after the last k-step: Fixpipe L0C -> GM (the MTE3 lane)

    Every block re-reads its rows of A and columns of B, so GM reads exceed the lower bound
    (each operand once) by the block counts.
    """
    spec = get_spec()
    isz, acc = dt.itemsize, max(4, dt.itemsize)
    bm, bn = min(128, round_up(m, 16)), min(128, round_up(n, 16))
    while bm * bn * acc > spec.l0c_bytes // 2:
        bn //= 2
    bk = max(16, spec.l0a_bytes // 2 // (128 * isz) // 16 * 16)
    mb, nb, ks = math.ceil(m / bm), math.ceil(n / bn), math.ceil(kk / bk)
    me, ne = math.ceil(m / mb), math.ceil(n / nb)  # rows/cols a block really moves
    blocks = batch * mb * nb
    cores = min(spec.num_cores, blocks)
    min_read = batch * (m * kk + kk * n) * isz  # each operand once; blocks re-read them
    min_write = batch * m * n * out_dt.itemsize
    with KernelLaunch(name, cores, min_read_bytes=min_read, min_write_bytes=min_write,
                      counting=True, record=False) as k:
        for first, replicas, nblk in _shares(blocks, cores):
            core = k.core(first, replicas)
            pipe = TPipe()
            qa1, qb1, qa2, qb2, qc = (TQue(A1, name="a_l1"), TQue(B1, name="b_l1"),
                                      TQue(A2, name="a_l0a"), TQue(B2, name="b_l0b"),
                                      TQue(CO1, name="c_l0c"))
            for q, size in ((qa1, bm * bk * isz), (qb1, bk * bn * isz), (qa2, bm * bk * isz),
                            (qb2, bk * bn * isz), (qc, bm * bn * acc)):
                pipe.InitBuffer(q, 2, round_up(size, 512))

            def kstep(kc, last):
                a1, b1 = qa1.AllocTensor(dt), qb1.AllocTensor(dt)
                DataCopy(a1, GlobalTensor.meta(dt), me * kc)
                DataCopy(b1, GlobalTensor.meta(dt), kc * ne)
                a2, b2 = qa2.AllocTensor(dt), qb2.AllocTensor(dt)
                DataCopy(a2, a1, me * kc)
                DataCopy(b2, b1, kc * ne)
                c = qc.AllocTensor("float32")
                Mmad(c, a2, b2, me, ne, kc)
                if last:
                    Fixpipe(GlobalTensor.meta(out_dt), c, me * ne)

            if ks > 1:
                with core.tile(times=nblk * (ks - 1)):
                    kstep(bk, False)
            with core.tile(times=nblk):
                kstep(kk - (ks - 1) * bk, True)
    return k.record


# --------------------------------------------------------------------------- the cost cache

_cache: dict = {}
_cache_spec: list = [None]


def _launch(key: tuple, build):
    """Record the kernel ``build(*key)`` describes.  Its cost depends on sizes only, so it is
    computed once per (sizes, spec) and replayed from a cache afterwards."""
    spec = get_spec()
    if _cache_spec[0] is not spec:
        _cache.clear()
        _cache_spec[0] = spec
    rec = _cache.get(key)
    if rec is None:
        if len(_cache) > 4096:
            _cache.clear()
        rec = _cache[key] = build(*key)
    if rec is not None:
        record_kernel(rec)
    return rec
