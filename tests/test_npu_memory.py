"""The npu memory model: GM allocator, on-chip buffers, the Ascend C kernel API, the timing
model and the profiler's invariants."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minitorch_compile as mtc
from minitorch_compile.npu import kernel as K
from minitorch_compile.npu import units
from minitorch_compile.npu.memory import NPUMemoryError, core_buffers
from minitorch_compile.npu.spec import NPUSpec, get_spec


@pytest.fixture
def spec_guard():
    prev = mtc.npu.get_spec()
    yield
    mtc.npu.set_spec(prev)


# --------------------------------------------------------------------------- spec


def test_default_spec_has_the_documented_910b_numbers():
    s = NPUSpec()
    assert (s.num_cores, s.ub_bytes, s.l1_bytes, s.l0a_bytes, s.l0b_bytes, s.l0c_bytes) == \
        (24, 196_608, 524_288, 65_536, 65_536, 131_072)
    assert (s.ub_align, s.l0ab_align, s.l0c_align, s.vector_bytes_per_repeat) == (32, 512, 64, 256)
    assert s.clock_hz == 1.8e9 and s.gm_bytes_per_cycle == pytest.approx(1.6e12 / 1.8e9)


def test_set_spec_overrides_and_restores(spec_guard):
    prev = mtc.npu.set_spec(ub_bytes=65_536)
    assert mtc.npu.get_spec().ub_bytes == 65_536 and prev.ub_bytes == 196_608
    with pytest.raises(TypeError, match="unknown NPUSpec field"):
        mtc.npu.set_spec(ub_size=1)
    mtc.npu.set_spec()
    assert mtc.npu.get_spec() == NPUSpec()


# --------------------------------------------------------------------------- buffers


def test_misaligned_and_oversized_allocations_name_the_buffer():
    bufs = core_buffers(get_spec(), 3)
    ub = bufs["UB"]
    ub.alloc("x[0]", 99_968)
    with pytest.raises(NPUMemoryError, match=r"UB of core 3: allocation 'y' of 33 bytes is not a "
                                             r"multiple of the 32-byte alignment"):
        ub.alloc("y", 33)
    with pytest.raises(NPUMemoryError, match=r"UB of core 3 overflows: allocation 'z' of 100000 "
                                             r"bytes.*x\[0\]=99968"):
        ub.alloc("z", 100_000)
    with pytest.raises(NPUMemoryError, match="L0A of core 3.*512-byte alignment"):
        bufs["L0A"].alloc("a", 256)
    bufs["L0C"].alloc("c", 64)  # L0C aligns to 64


def test_init_buffer_that_does_not_fit_fails_in_the_kernel():
    with pytest.raises(NPUMemoryError, match=r"UB of core 0 overflows: allocation 'out\[1\]'.*"
                                             r"in\[0\]=65536, in\[1\]=65536, out\[0\]=65536"):
        with K.KernelLaunch("too_big", 1) as k:
            for _ in k.cores():
                pipe = K.TPipe()
                pipe.InitBuffer(K.TQue(K.VECIN, name="in"), 2, 65_536)
                pipe.InitBuffer(K.TQue(K.VECOUT, name="out"), 2, 65_536)


# --------------------------------------------------------------------------- a real kernel


def add_kernel(x: np.ndarray, y: np.ndarray, block_dim: int, tile: int, depth: int = 2):
    """An Ascend C vector add, written as a generated kernel would be."""
    n = x.size
    z = np.zeros_like(x)
    xg, yg, zg = K.GlobalTensor(x), K.GlobalTensor(y), K.GlobalTensor(z)
    per_core = -(-n // block_dim)
    with K.KernelLaunch("add_custom", block_dim, kind="test") as k:
        for _core in k.cores():
            start = K.GetBlockIdx() * per_core
            length = max(0, min(per_core, n - start))
            pipe = K.TPipe()
            qx, qy, qz = K.TQue(K.VECIN, name="x"), K.TQue(K.VECIN, name="y"), \
                K.TQue(K.VECOUT, name="z")
            for q in (qx, qy, qz):
                pipe.InitBuffer(q, depth, tile * x.itemsize)
            for i in _core.tiles(-(-length // tile)):
                cnt = min(tile, length - i * tile)
                off = start + i * tile
                lx, ly = qx.AllocTensor(x.dtype), qy.AllocTensor(y.dtype)
                K.DataCopy(lx, xg[off:], cnt)
                K.DataCopy(ly, yg[off:], cnt)
                qx.EnQue(lx)
                qy.EnQue(ly)
                lz = qz.AllocTensor(x.dtype)
                K.Add(lz, qx.DeQue(), qy.DeQue(), cnt)
                qz.EnQue(lz)
                K.DataCopy(zg[off:], qz.DeQue(), cnt)
    return z, k.record


@settings(max_examples=25)
@given(n=st.integers(1, 20_000), block_dim=st.integers(1, 24),
       tile=st.sampled_from([64, 256, 1024, 4096]))
def test_a_handwritten_kernel_computes_and_counts_every_byte(n, block_dim, tile):
    rng = np.random.default_rng(n)
    x, y = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    z, rec = add_kernel(x, y, block_dim, tile)
    np.testing.assert_array_equal(z, x + y)
    assert rec.gm_read_bytes == 8 * n and rec.gm_write_bytes == 4 * n
    assert rec.min_gm_bytes == 12 * n and rec.peak_ub_bytes == 3 * 2 * tile * 4
    assert rec.lower_bound_us <= rec.time_us <= rec.time_us_serial
    spec = get_spec()
    # vector cycles: one Add per tile, ceil(4 * count / 256) repeats each
    per_core = -(-n // block_dim)
    counts = [min(tile, max(0, min(per_core, n - c * per_core)) - i * tile)
              for c in range(block_dim)
              for i in range(-(-max(0, min(per_core, n - c * per_core)) // tile))]
    assert rec.vector_cycles == sum(units.vector_repeats(spec, 4 * c) for c in counts)


def test_double_buffering_overlaps_copy_and_compute():
    x = np.ones(200_000, np.float32)
    _, db = add_kernel(x, x, 4, 2048, depth=2)
    _, single = add_kernel(x, x, 4, 2048, depth=1)
    assert db.double_buffered and not single.double_buffered
    assert db.time_us < single.time_us == single.time_us_serial
    assert db.time_us_serial == pytest.approx(single.time_us_serial)
    # pipelined ~ the slowest stage per tile times the tiles (+ fill), not the sum
    core = db.cores[0]
    (times, cyc), = {(t, tuple(sorted(c.items()))) for t, c in core.tiles[:1]}
    assert core.pipelined < core.serial


def test_ascend_c_calls_outside_a_kernel_are_an_error():
    with pytest.raises(RuntimeError, match="need a running kernel"):
        K.GetBlockIdx()


def test_cube_kernel_mmad_through_l1_and_l0():
    a = np.arange(32 * 48, dtype=np.float32).reshape(32, 48) / 100
    b = np.arange(48 * 16, dtype=np.float32).reshape(48, 16) / 100
    out = np.zeros((32, 16), np.float32)
    with K.KernelLaunch("mm_custom", 1, kind="test") as k:
        for _ in k.cores():
            pipe = K.TPipe()
            qs = {p: K.TQue(p, name=p) for p in (K.A1, K.B1, K.A2, K.B2, K.CO1)}
            for p, size in ((K.A1, a.nbytes), (K.B1, b.nbytes), (K.A2, a.nbytes),
                            (K.B2, b.nbytes), (K.CO1, out.nbytes)):
                pipe.InitBuffer(qs[p], 1, -(-size // 512) * 512)
            a1, b1 = qs[K.A1].AllocTensor(np.float32), qs[K.B1].AllocTensor(np.float32)
            K.DataCopy(a1, K.GlobalTensor(a), a.size)
            K.DataCopy(b1, K.GlobalTensor(b), b.size)
            a2, b2 = qs[K.A2].AllocTensor(np.float32), qs[K.B2].AllocTensor(np.float32)
            K.DataCopy(a2, a1, a.size)
            K.DataCopy(b2, b1, b.size)
            c = qs[K.CO1].AllocTensor(np.float32)
            K.Mmad(c, a2, b2, 32, 16, 48, accumulate=False)
            K.Fixpipe(K.GlobalTensor(out), c, out.size)
    np.testing.assert_allclose(out, a @ b, rtol=1e-6)
    rec = k.record
    assert rec.cube_cycles == 2 * 1 * 3 * get_spec().cube_step_cycles("float32")
    assert rec.l1_bytes == a.nbytes + b.nbytes and rec.l0_bytes == a.nbytes + b.nbytes
    assert rec.gm_read_bytes == a.nbytes + b.nbytes and rec.gm_write_bytes == out.nbytes


# --------------------------------------------------------------------------- eager invariants

SHAPES = st.lists(st.integers(1, 300), min_size=1, max_size=3).map(tuple).filter(
    lambda s: np.prod(s) <= 200_000)


@settings(max_examples=30, deadline=None)
@given(shape=SHAPES, dtype=st.sampled_from([mtc.float32, mtc.float64, mtc.float16]),
       op=st.sampled_from(["exp", "add", "sum", "softmax", "mm", "amax", "mul_bcast"]))
def test_eager_kernels_keep_the_accounting_invariants(shape, dtype, op):
    x = mtc.randn(*shape).to(dtype).npu()
    with mtc.npu.profile() as prof:
        if op == "exp":
            x.exp()
        elif op == "add":
            x + x
        elif op == "sum":
            x.sum(-1)
        elif op == "softmax":
            x.float().softmax(-1)
        elif op == "amax":
            x.amax(0)
        elif op == "mul_bcast":
            x * mtc.randn(shape[-1]).to(dtype).npu()
        else:
            m = x.reshape(-1, shape[-1])[:300]
            m @ m.t()
    assert prof.kernels
    for k in prof.kernels:
        assert k.gm_read_bytes + k.gm_write_bytes >= k.min_gm_bytes
        assert k.lower_bound_us <= k.time_us + 1e-12
        assert k.time_us <= k.time_us_serial + 1e-12
        assert 0 <= k.peak_ub_bytes <= get_spec().ub_bytes
        assert k.peak_ub_bytes > 0 or k.cube_cycles > 0  # a cube kernel stages in L1/L0
        assert k.bound in ("memory", "compute")


def test_pointwise_bytes_are_exact_and_broadcast_inputs_stay_in_ub():
    x, b = mtc.randn(64, 1000).npu(), mtc.randn(1000).npu()
    with mtc.npu.profile() as prof:
        x.exp()
        x * b
    exp, mul = prof.kernels
    assert (exp.gm_read_bytes, exp.gm_write_bytes) == (256_000, 256_000)
    # 64,000 elements over 24 cores: 16 cores take 2,667, 8 take 2,666; a repeat is 256 bytes
    repeats = 16 * -(-2667 * 4 // 256) + 8 * -(-2666 * 4 // 256)
    assert exp.vector_cycles == repeats * get_spec().vector_instruction_cost("exp")
    assert exp.bound == "memory" and exp.block_dim == 24
    assert mul.gm_write_bytes == 256_000
    assert mul.gm_read_bytes == 256_000 + 4000 * mul.block_dim  # b loaded once per core


def test_a_smaller_ub_means_more_tiles_and_fill_time(spec_guard):
    x = mtc.randn(1 << 20).npu()
    with mtc.npu.profile() as big:
        x.exp()
    mtc.npu.set_spec(ub_bytes=16_384)
    with mtc.npu.profile() as small:
        x.exp()
    assert small.kernels[0].tiles > big.kernels[0].tiles
    assert small.kernels[0].peak_ub_bytes <= 16_384 < big.kernels[0].peak_ub_bytes
    assert small.kernels[0].gm_read_bytes == big.kernels[0].gm_read_bytes


def test_a_row_longer_than_ub_is_streamed_in_chunks_and_read_again():
    x = mtc.randn(2, 200_000).npu()  # 800 KB rows: softmax reads each three times
    with mtc.npu.profile() as prof:
        x.softmax(-1)
    (k,) = prof.kernels
    assert k.gm_read_bytes >= 3 * x.numel() * 4 and k.min_gm_bytes == 2 * x.numel() * 4


def test_profiler_totals_and_table():
    x = mtc.randn(128, 64).npu()
    with mtc.npu.profile() as prof:
        y = (x @ x.t()).relu().sum()
    assert y.device.type == "npu"
    t = prof.totals()
    assert t["kernels"] == 3 == len(prof.kernels)
    for f in ("gm_read_bytes", "time_us", "cube_cycles", "vector_cycles"):
        assert t[f] == pytest.approx(sum(getattr(k, f) for k in prof.kernels))
    table = prof.table()
    for name in ("aten::mm", "aten::relu", "aten::sum", "Total"):
        assert name in table
    assert prof.kernels[0].cube_cycles > 0 and prof.kernels[0].bound in ("memory", "compute")


# --------------------------------------------------------------------------- GM allocator


def test_memory_allocated_follows_live_tensors_in_512_byte_blocks():
    import gc

    gc.collect()
    base = mtc.npu.memory_allocated()
    mtc.npu.reset_peak_memory_stats()
    x = mtc.zeros(1000, device="npu")  # 4000 B -> 4096
    assert mtc.npu.memory_allocated() == base + 4096
    v = x[10:20]  # a view shares the storage: nothing new
    assert mtc.npu.memory_allocated() == base + 4096
    y = x + 1
    assert mtc.npu.memory_allocated() == base + 8192
    del y
    assert mtc.npu.memory_allocated() == base + 4096
    assert mtc.npu.max_memory_allocated() == base + 8192
    del x, v
    assert mtc.npu.memory_allocated() == base
    mtc.npu.reset_peak_memory_stats()
    assert mtc.npu.max_memory_allocated() == base


def test_concat_of_many_small_tensors_and_gathers_count_what_they_read():
    xs = [mtc.randn(3, dtype=mtc.float64, device="npu") for _ in range(1000)]
    weight = mtc.randn(100_000, 8, device="npu")
    with mtc.npu.profile() as prof:
        mtc.cat(xs)
        mtc.nn.functional.embedding(mtc.tensor([1, 5, 7], device="npu"), weight)
    cat, emb = prof.kernels
    assert (cat.gm_read_bytes, cat.gm_write_bytes) == (24_000, 24_000)  # no UB overflow
    assert emb.gm_read_bytes == 3 * 8 + 3 * 8 * 4  # the indices and the rows they pick


def test_a_spec_the_cost_model_cannot_tile_warns_but_never_changes_results(spec_guard):
    a, b = mtc.randn(40, 30), mtc.randn(30, 20)
    mtc.npu.set_spec(l0a_bytes=4096)  # a 128-row cube block no longer fits L0A
    with mtc.npu.profile() as prof, pytest.warns(RuntimeWarning, match="no cost recorded for "
                                                                       "aten::mm.*L0A"):
        out = a.npu() @ b.npu()
    np.testing.assert_array_equal(out.cpu().numpy(), (a @ b).numpy())
    assert [k.name for k in prof.kernels] == []


def test_matmul_lower_bound_reads_each_operand_once_and_blocks_reread():
    a, b = mtc.randn(300, 200, device="npu"), mtc.randn(200, 500, device="npu")
    with mtc.npu.profile() as prof:
        a @ b
    (k,) = prof.kernels
    assert k.min_gm_bytes == (300 * 200 + 200 * 500 + 300 * 500) * 4
    assert k.gm_write_bytes == 300 * 500 * 4
    # 3 x 4 output blocks of 100 x 125: each reads its rows of a and columns of b
    assert k.gm_read_bytes == 12 * (100 * 200 + 200 * 125) * 4
    assert k.l1_bytes == k.gm_read_bytes == k.l0_bytes  # GM -> L1 -> L0A/L0B, once each
    ideal_steps = 19 * 32 * 13  # ceil(M/16) ceil(N/16) ceil(K/16)
    assert k.cube_cycles >= ideal_steps * get_spec().cube_step_cycles("float32")


def test_scratch_buffers_do_not_stop_double_buffering():
    x = mtc.randn(1 << 20, device="npu")
    with mtc.npu.profile() as prof:
        mtc.nn.functional.gelu(x)  # several vector instructions: a TBuf for temporaries
        x.softmax(0)
    for k in prof.kernels:
        assert k.double_buffered and k.time_us < k.time_us_serial, k


_stage = st.floats(0, 3000, allow_nan=False)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 40), _stage, _stage, _stage, st.booleans()),
                min_size=1, max_size=5))
def test_the_pipeline_schedule_is_bounded_and_its_shortcut_close(groups):
    """``launch.pipeline``: never slower than serial, never faster than its busiest engine or
    one pass's chain; the steady-state shortcut for very long repeats stays close to scheduling
    every pass."""
    from minitorch_compile.npu.launch import pipeline

    lat = 500.0
    tiles, latency = [], []
    for times, m2, v, m3, dma in groups:
        cyc = {"MTE2": m2 + (lat if dma else 0), "Vector": v, "MTE3": m3 + (lat if dma else 0)}
        tiles.append((times, cyc))
        latency.append({s: lat for s in ("MTE2", "MTE3") if dma})
    serial = sum(t * sum(c.values()) for t, c in tiles)
    _, end = pipeline(tiles, True, latency=latency)  # every pass scheduled (times <= 4096)
    _, short = pipeline(tiles, True, explicit=6, latency=latency)  # the steady-state shortcut
    _, full = pipeline(tiles, True, explicit=10**6, latency=latency)
    assert end <= serial + 1e-6 and full <= serial + 1e-6
    busiest = max(sum(t * (c[s] - lat_s.get(s, 0)) for (t, c), lat_s in zip(tiles, latency))
                  for s in ("MTE2", "Vector", "MTE3"))
    assert full >= busiest - 1e-6
    assert full >= max(sum(c.values()) for _, c in tiles) - 1e-6
    assert end == full
    assert abs(short - full) <= 0.25 * max(full, 1.0)  # an approximation, used past 4096
    assert pipeline(tiles, False, explicit=10**6)[1] == pytest.approx(serial)
