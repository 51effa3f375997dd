"""The caching allocator (``inductor/allocator.py``) never hands out a buffer something still
holds: outputs kept by the user, views of them, outputs in lists, outputs autograd saved for
backward, arrays taken with ``.numpy()`` — each compared with eager after later calls that
would reuse the memory.  And it does reuse: a dropped output's memory comes back."""

from __future__ import annotations

import threading
import warnings

import numpy as np
import pytest

import minitorch_compile as mtc
from minitorch_compile import inductor
from minitorch_compile.inductor import allocator


@pytest.fixture(autouse=True)
def small_pool(monkeypatch):
    """Pool every buffer (tests use small tensors); strict: a fallback to eager fails."""
    monkeypatch.setattr(inductor.config, "caching_allocator", True)
    monkeypatch.setattr(inductor.config, "caching_allocator_min_bytes", 0)
    mtc.dynamo.reset()
    allocator.empty_cache()
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message="inductor:")
        yield
    mtc.dynamo.reset()
    allocator.empty_cache()


def f(x, y):
    return (x.cos() * y + 1).exp()


def _inputs(seed, n=64):
    rng = np.random.default_rng(seed)
    return [mtc.tensor(rng.standard_normal(n).astype(np.float32)) for _ in range(2)]


def _ptr(t) -> int:
    return t.numpy().__array_interface__["data"][0]


def test_dropped_output_memory_is_reused():
    g = mtc.compile(f)
    g(*_inputs(0))
    hits = allocator.memory_stats()["hits"]
    out = g(*_inputs(1))
    ptr = _ptr(out)
    del out
    again = g(*_inputs(2))
    assert _ptr(again) == ptr
    assert allocator.memory_stats()["hits"] > hits
    np.testing.assert_allclose(again.numpy(), f(*_inputs(2)).numpy(), rtol=1e-6)


def test_held_outputs_views_lists_and_arrays_are_never_reused():
    g = mtc.compile(f)
    held = g(*_inputs(0))
    view = g(*_inputs(1))[3:40:2]  # only a view of this output survives
    t_view = g(*_inputs(2)).view(8, 8).t()
    arr = g(*_inputs(3)).numpy()  # a plain numpy array of the output
    listed = [g(*_inputs(s)) for s in range(4, 8)]
    as_strided = np.lib.stride_tricks.as_strided(g(*_inputs(8)).numpy(), (16,), (8,))
    for s in range(9, 20):  # calls that would take any free buffer of this size
        g(*_inputs(s))
    want = [f(*_inputs(s)).numpy() for s in range(9)]
    np.testing.assert_allclose(held.numpy(), want[0], rtol=1e-6)
    np.testing.assert_allclose(view.numpy(), want[1][3:40:2], rtol=1e-6)
    np.testing.assert_allclose(t_view.numpy(), want[2].reshape(8, 8).T, rtol=1e-6)
    np.testing.assert_allclose(arr, want[3], rtol=1e-6)
    for t, w in zip(listed, want[4:8]):
        np.testing.assert_allclose(t.numpy(), w, rtol=1e-6)
    np.testing.assert_allclose(as_strided, want[8][::2][:16], rtol=1e-6)
    live = [held, view, t_view, *listed]
    ptrs = {_ptr(t._base if t._base is not None else t) for t in live}
    assert len(ptrs) == len(live)


def test_outputs_saved_for_backward_survive_later_calls():
    def h(x):
        return (x.sin() * 2).exp()  # exp's backward reads exp's output

    g = mtc.compile(h)
    xs = [mtc.tensor(np.linspace(-1, 1, 256, dtype=np.float32) + s, requires_grad=True)
          for s in range(3)]
    outs = [g(x) for x in xs]  # three forwards before any backward
    for _ in range(3):  # more calls whose buffers must not overwrite the saved ones
        g(mtc.tensor(np.zeros(256, np.float32), requires_grad=True)).sum().backward()
    for x, out in zip(xs, outs):
        out.sum().backward()
        xe = mtc.tensor(x.detach().numpy().copy(), requires_grad=True)
        h(xe).sum().backward()
        np.testing.assert_allclose(out.detach().numpy(), h(xe).detach().numpy(), rtol=1e-6)
        np.testing.assert_allclose(x.grad.numpy(), xe.grad.numpy(), rtol=1e-5)


def test_threads_never_share_a_buffer():
    g = mtc.compile(f)
    g(*_inputs(0))
    errors = []

    def worker(seed):
        try:
            for k in range(20):
                ins = _inputs(seed * 100 + k, 4096)
                out = g(*ins)
                np.testing.assert_allclose(out.numpy(), f(*ins).numpy(), rtol=1e-6)
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


def test_pool_is_bounded_and_can_be_emptied(monkeypatch):
    monkeypatch.setattr(inductor.config, "caching_allocator_max_bytes", 3000)
    pool = allocator.CachingAllocator()
    f32 = np.dtype(np.float32)
    kept = [pool.malloc((n,), f32, 4 * n) for n in (200, 300, 400)]  # 3600 bytes
    assert pool.memory_stats()["cached_bytes"] == 2000  # the third did not fit: uncached
    assert pool.memory_stats()["in_use_bytes"] == 2000
    del kept
    pool.malloc((700,), f32, 2800)  # evicts free buffers to fit
    stats = pool.memory_stats()
    assert stats["cached_bytes"] == 2800 and stats["buffers"] == 1
    assert stats["in_use_bytes"] == 0  # nothing holds the 700 (its view was dropped)
    pool.empty_cache()
    assert pool.memory_stats()["cached_bytes"] == 0
    # several owners of one size, some held: eviction drops only the free ones
    monkeypatch.setattr(inductor.config, "caching_allocator_max_bytes", 4000)
    a, b, c = (pool.malloc((250,), f32, 1000) for _ in range(3))
    del b
    d = pool.malloc((500,), f32, 2000)  # needs 1000 more bytes: drops b's owner only
    assert pool.memory_stats()["cached_bytes"] == 4000
    assert pool.memory_stats()["in_use_bytes"] == 4000
    for t, v in zip((a, c, d), (1.0, 2.0, 3.0)):
        t[...] = v
    assert (a == 1).all() and (c == 2).all() and (d == 3).all()


def test_off_switch_and_peak_memory_unchanged(monkeypatch):
    g = mtc.compile(f)
    g(*_inputs(0))
    plan_on = inductor.compiled_graphs[-1].memory.peak_memory_bytes
    monkeypatch.setattr(inductor.config, "caching_allocator", False)
    hits = allocator.memory_stats()["hits"], allocator.memory_stats()["misses"]
    out = g(*_inputs(1))
    assert (allocator.memory_stats()["hits"], allocator.memory_stats()["misses"]) == hits
    np.testing.assert_allclose(out.numpy(), f(*_inputs(1)).numpy(), rtol=1e-6)
    mtc.dynamo.reset()
    mtc.compile(f)(*_inputs(0))
    assert inductor.compiled_graphs[-1].memory.peak_memory_bytes == plan_on > 0


def test_dynamic_sizes_take_buffers_by_byte_size():
    """A graph compiled for symbolic sizes allocates with ``empty_cpu((s0, ...), ...)``:
    outputs of several sizes, held together, all stay what eager computes."""
    def h(x):
        return (x.cos() * 2).softmax(-1)

    g = mtc.compile(h, dynamic=True)
    sizes = [3, 5, 3, 7, 5, 3]
    xs = [mtc.tensor(np.random.default_rng(k).standard_normal((n, 8)).astype(np.float32))
          for k, n in enumerate(sizes)]
    outs = [g(x) for x in xs]
    assert any("empty_cpu((s0, " in c.source for c in inductor.compiled_graphs)
    for x, out in zip(xs, outs):
        np.testing.assert_allclose(out.numpy(), h(x).numpy(), rtol=1e-5)
