"""The CPU code generator's speed rewrites compute exactly what eager mode computes.

Each rewrite (``codegen/cpu.py``) is checked on the values where a shortcut would show: NaN,
signed zeros, infinities, several tiles, both thread counts.  A compile that falls back to
eager fails (``strict_inductor``).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitorch_compile as mtc
from minitorch_compile import inductor

SPECIAL = [0.0, -0.0, 1.5, -2.0, float("inf"), float("-inf"), float("nan"), 3e-40, -7.25]


pytestmark = pytest.mark.usefixtures("strict_inductor")  # conftest.py


def _source() -> str:
    return inductor.compiled_graphs[-1].source


def _same_bits(got, want):
    got, want = got.numpy(), want.numpy()
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)
    num = ~np.isnan(want)
    np.testing.assert_array_equal(np.signbit(got[num]), np.signbit(want[num]))


WHERES = {
    "grad_or_zero": lambda c, a, b: mtc.where(c > 0, a, 0),
    "zero_or_grad": lambda c, a, b: mtc.where(c > 0, 0, a),
    "two_tensors": lambda c, a, b: mtc.where(c > 0, a, b),
    "literal_branch": lambda c, a, b: mtc.where(c > 0, a, -2.5),
    "negative_zero": lambda c, a, b: mtc.where(c > 0, a * 2, -0.0),
    "nan_literal": lambda c, a, b: mtc.where(c > 0, float("nan"), b + 1),
    "broadcast_row": lambda c, a, b: mtc.where(c > 0, a, b[:1]),
}


@pytest.mark.parametrize("dtype", [mtc.float32, mtc.float64, mtc.float16])
@pytest.mark.parametrize("name", list(WHERES))
def test_where_is_a_bit_select_equal_to_eager(name, dtype):
    rng = np.random.default_rng(0)
    vals = np.array(SPECIAL * 8)
    a = mtc.tensor(rng.permutation(vals).reshape(8, 9), dtype=dtype)
    b = mtc.tensor(rng.permutation(vals).reshape(8, 9), dtype=dtype)
    c = mtc.tensor(rng.standard_normal((8, 9)), dtype=dtype)
    fn = WHERES[name]
    _same_bits(mtc.compile(fn)(c, a, b), fn(c, a, b))
    src = _source()
    assert "np.where" not in src and "np.multiply(" in src and ".view(np.int" in src


@given(st.integers(1, 5), st.integers(1, 70), st.booleans())
def test_relu_backward_where_over_tiles_and_threads(rows, cols, one_thread):
    x = mtc.randn(rows * 7, cols, requires_grad=True)
    old = inductor.config.tile_bytes, inductor.config.threads, inductor.config.min_parallel_numel
    inductor.config.tile_bytes, inductor.config.min_parallel_numel = 256, 1
    inductor.config.threads = 1 if one_thread else 2
    try:
        mtc.dynamo.reset()
        mtc.compile(lambda x: (x.relu() * x).sum())(x).backward()
    finally:
        (inductor.config.tile_bytes, inductor.config.threads,
         inductor.config.min_parallel_numel) = old
    xe = x.detach().requires_grad_()
    (xe.relu() * xe).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), xe.grad.numpy(), rtol=1e-6, atol=1e-6)


def test_clamp_pair_is_one_clip_pass():
    x = mtc.tensor(SPECIAL * 3, dtype=mtc.float32)
    f = lambda x: mtc.minimum(mtc.maximum(x * 3, -4.0), 4.0)  # noqa: E731
    _same_bits(mtc.compile(f)(x), f(x))
    src = _source()
    assert "np.clip(" in src and "np.maximum" not in src


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("cols", [511, 512, 1000, 1024, 4095, 4096])
def test_row_broadcasts_set_numpy_bufsize_and_restore_it(cols, threads):
    """static rows: named in the code only where the buffer changes"""
    x = mtc.randn(64, cols)
    old = inductor.config.threads, inductor.config.min_parallel_numel, inductor.config.tile_bytes
    inductor.config.threads, inductor.config.min_parallel_numel = threads, 1
    inductor.config.tile_bytes = 8 * cols * 4  # eight tiles
    before = np.getbufsize()
    try:
        got = mtc.compile(lambda x: mtc.softmax(x, -1))(x)
    finally:
        (inductor.config.threads, inductor.config.min_parallel_numel,
         inductor.config.tile_bytes) = old
    assert np.getbufsize() == before
    np.testing.assert_allclose(got.numpy(), mtc.softmax(x, -1).numpy(), rtol=2e-6, atol=1e-8)
    assert (f"row_broadcast={cols})" in _source()) == (512 <= cols < 4096)
    assert inductor.runtime.ufunc_bufsize(cols) == \
        (-(-cols // 16) * 16 if 512 <= cols < 4096 else None)


@pytest.mark.parametrize("n", [16, 64])
def test_square_reduction_frame_reads_rows_for_both_nodes(n):
    """``relu``'s backward mask and the bias gradient ``sum(0)`` of a square (n, n) hidden layer
    share one kernel; the mask is laid out as the reduction reads it, so no transposed view."""
    x = mtc.randn(n, n)
    w = mtc.randn(n, n, requires_grad=True)
    b = mtc.randn(n, requires_grad=True)
    f = lambda x, w, b: (mtc.nn.functional.linear(x, w, b).relu() * x).sum()  # noqa: E731
    mtc.compile(f)(x, w, b).backward()
    src = _source()
    kernel = next(k for k in src.split("\ndef ") if "sum_where" in k.split("(")[0])
    assert "strided(" not in kernel and "axis=(0,)" in kernel
    w2, b2 = w.detach().requires_grad_(), b.detach().requires_grad_()
    f(x, w2, b2).backward()
    np.testing.assert_allclose(b.grad.numpy(), b2.grad.numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(w.grad.numpy(), w2.grad.numpy(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("n", [32, 48])
def test_square_frames_that_depend_on_the_reduction_keep_their_order(n):
    x = mtc.randn(n, n)
    progs = [lambda x: mtc.softmax(x, -1), lambda x: mtc.softmax(x, 0),
             lambda x: (x - x.sum(0)).relu() + x.t(), lambda x: (x.amax(0) + x.t().exp(), x * 2)]
    for p in progs:
        got, want = mtc.compile(p)(x), p(x)
        got, want = (got, want) if isinstance(got, tuple) else ((got,), (want,))
        for g, w in zip(got, want):
            np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=2e-5, atol=1e-6)
        mtc.dynamo.reset()


def test_a_symbolic_row_length_decides_the_buffer_at_run_time(monkeypatch):
    """A dynamic kernel names its row size; ``run_tiles`` picks the buffer per call."""
    from minitorch_compile.inductor import runtime

    seen = []
    real = runtime.ufunc_bufsize
    monkeypatch.setattr(runtime, "ufunc_bufsize", lambda row: seen.append(row) or real(row))
    old = inductor.config.min_parallel_numel
    inductor.config.min_parallel_numel = 1
    try:
        f = mtc.compile(lambda x: mtc.softmax(x, -1), dynamic=True)
        for cols in (100, 1000):
            x = mtc.randn(64, cols)
            np.testing.assert_allclose(f(x).numpy(), mtc.softmax(x, -1).numpy(), rtol=2e-6,
                                       atol=1e-8)
    finally:
        inductor.config.min_parallel_numel = old
    assert "row_broadcast=ks" in _source() and seen[-2:] == [100, 1000]


STORED_AND_USED = {  # a value both returned and used again by the same kernel
    "stored_then_summed": lambda x: (lambda y: (y, y.sum(0)))(x.relu() * 3),
    "stored_then_row_summed": lambda x: (lambda y: (y, y.sum(-1)))(x.exp() - 1),
    "stored_then_reused": lambda x: (lambda y: (y, y * y + 1))(mtc.where(x > 0, x, -0.0)),
    "stored_transposed": lambda x: (lambda y: (y.t().contiguous(), y.sum(-1)))(x.cos() * 2),
    "stored_as_float64": lambda x: (lambda y: (y.double(), y.sum(0)))(x * 1.5),
}


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("name", list(STORED_AND_USED))
def test_a_stored_value_read_back_from_its_output_equals_eager(name, threads):
    """A value stored and used again is computed into the output tile when that view is dense
    (no copy pass), and the uses read it back: bit for bit eager's values, NaN and -0.0
    included; a permuted or cast store keeps its copy."""
    rng = np.random.default_rng(1)
    vals = np.array(SPECIAL * 40)
    x = mtc.tensor(rng.permutation(vals)[:300].reshape(20, 15), dtype=mtc.float32)
    fn = STORED_AND_USED[name]
    c = inductor.config
    old = c.tile_bytes, c.threads, c.min_parallel_numel
    c.tile_bytes, c.threads, c.min_parallel_numel = 256, threads, 1
    try:
        got = mtc.compile(fn)(x)
    finally:
        c.tile_bytes, c.threads, c.min_parallel_numel = old
    for g, w in zip(got, fn(x)):
        if name in ("stored_then_summed", "stored_then_row_summed"):  # sums: BLAS order
            np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-6, equal_nan=True)
        else:
            _same_bits(g, w)
    src = _source()
    if name in ("stored_then_summed", "stored_then_reused"):
        assert "[t0:t1], b" not in src  # no tile copied into its output: computed there
