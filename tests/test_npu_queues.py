"""Queues deeper than two buffers on the simulated npu: the pipeline model, the tiling function's
choice of buffers per queue, and several tiled inputs (outputs) sharing one queue.

Ascend C's ``InitBuffer(que, num, len)`` takes ``num`` > 2; an Atlas A2 core holds at most
``spec.max_que_buffers`` (8) queue buffers per position (VECIN, VECOUT), so a kernel's tiled
inputs share one VECIN queue, used by offsets (docs/npu.md, "Deeper queues")."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minitorch_compile as mtc
from minitorch_compile import inductor
from minitorch_compile.npu.launch import pipeline

_stage = st.floats(0, 3000, allow_nan=False)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 40), _stage, _stage, _stage, st.booleans()),
                min_size=1, max_size=5))
def test_more_buffers_never_slow_the_schedule(groups):
    """Each extra buffer per queue only relaxes a constraint of the flow shop: the schedule's
    end never grows with the depth, stays at or under serial, and the steady-state shortcut
    for long repeats stays close to scheduling every pass at every depth."""
    lat = 500.0
    tiles, latency = [], []
    for times, m2, v, m3, dma in groups:
        tiles.append((times, {"MTE2": m2 + (lat if dma else 0), "Vector": v,
                              "MTE3": m3 + (lat if dma else 0)}))
        latency.append({s: lat for s in ("MTE2", "MTE3") if dma})
    serial = sum(t * sum(c.values()) for t, c in tiles)
    ends = [pipeline(tiles, d, explicit=10**6, latency=latency)[1] for d in (1, 2, 3, 4, 8)]
    assert ends[0] == pytest.approx(serial)
    assert all(b <= a + 1e-6 for a, b in zip(ends, ends[1:])), ends
    assert pipeline(tiles, True, explicit=10**6, latency=latency)[1] == ends[1]
    for d, full in zip((3, 4), ends[2:4]):
        short = pipeline(tiles, d, explicit=7, latency=latency)[1]
        assert abs(short - full) <= 0.25 * max(full, 1.0)


def _compiled(fn, *args):
    mtc.dynamo.reset()
    g = mtc.compile(fn)
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message="inductor:")
        g(*args)  # compile outside the profile
    with mtc.npu.profile() as prof:
        out = g(*args)
    kernels = [k for k in prof.kernels if k.kind == "inductor"]
    return out, kernels, inductor.compiled_graphs[-1].source


def _scaled_softmax(a):
    return mtc.softmax(a * 0.125, -1)


def test_a_small_compute_bound_kernel_gets_deeper_queues(monkeypatch):
    """(1024, 128) scaled softmax: with two buffers per queue a tile's compute waits for the
    copy out of the tile before last (its DMA start-up included); the tiling function gives it
    more buffers, and the kernel runs faster, on the same bytes, computing the same values."""
    x = mtc.randn(1024, 128)
    out, (deep,), src = _compiled(_scaled_softmax, x.npu())
    nbuf = int(re.search(r"buffer_num\((\d+)\)", src).group(1))
    assert 2 < nbuf <= min(inductor.config.npu_buffer_num, mtc.npu.get_spec().max_que_buffers)
    assert all(c.buffers == nbuf for c in deep.cores)
    np.testing.assert_allclose(out.cpu().numpy(), _scaled_softmax(x).numpy(), rtol=1e-5,
                               atol=1e-6)
    monkeypatch.setattr(inductor.config, "npu_buffer_num", 2)
    out2, (double,), src2 = _compiled(_scaled_softmax, x.npu())
    assert "buffer_num(2)" in src2 and all(c.buffers == 2 for c in double.cores)
    assert deep.time_us < double.time_us
    assert deep.gm_bytes == double.gm_bytes == deep.min_gm_bytes
    assert deep.time_us >= deep.lower_bound_us
    assert deep.peak_ub_bytes <= mtc.npu.get_spec().ub_bytes
    np.testing.assert_array_equal(out.cpu().numpy(), out2.cpu().numpy())


def _five(a, b, c, d, e):
    return a * b + c * d - e.exp(), (a - e).relu()


def test_tiled_inputs_share_one_queue_within_the_position_limit():
    """Five tiled inputs and two tiled outputs: one VECIN and one VECOUT queue, each buffer
    holding every tensor's tile at its offset; no position holds more queue buffers than the
    spec allows, and the values are eager cpu's."""
    mtc.manual_seed(0)
    xs = [mtc.randn(300, 257) for _ in range(5)]
    out, (k,), src = _compiled(_five, *[x.npu() for x in xs])
    assert "q_in = TQue(VECIN" in src and "CopyIn(q_in, " in src
    assert "q_out = TQue(VECOUT" in src and "AllocParts(q_out, " in src
    limit = mtc.npu.get_spec().max_que_buffers
    for c in k.cores:
        assert c.que_buffers.get("VECIN", 0) <= limit and c.que_buffers.get("VECOUT", 0) <= limit
    assert k.gm_bytes == k.min_gm_bytes
    for got, want in zip(out, _five(*xs)):
        np.testing.assert_allclose(got.cpu().numpy(), want.numpy(), rtol=1e-5, atol=1e-6)


def test_one_buffer_caps_every_queue(monkeypatch):
    """``config.npu_buffer_num = 1`` at run time: every queue has one buffer, the kernel is
    serial, whatever depth the tiling function planned."""
    x = mtc.randn(1024, 128).npu()
    monkeypatch.setattr(inductor.config, "npu_buffer_num", 1)
    _, (k,), _ = _compiled(_scaled_softmax, x)
    assert not k.double_buffered and k.time_us == pytest.approx(k.time_us_serial)
