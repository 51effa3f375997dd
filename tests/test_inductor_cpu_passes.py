"""The CPU code generator's cheaper pass forms (``codegen/cpu_passes.py``) and the float32
``erf`` / ``gelu`` bodies (``ops/_erf.py``) compute what eager mode computes.

* row sums as ``np.vecdot(v, ones)``: within float32 rounding of eager's pairwise sum, the same
  NaN / inf behaviour, any layout, float64, dynamic sizes, tiny shapes;
* row-broadcast inputs expanded once per call: bit for bit;
* ``erf`` without its clamp, and the folded ``gelu``: accurate on the whole tail, compiled ==
  eager bit for bit.

A compile that falls back to eager fails (``strict_inductor``).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minitorch_compile as mtc
from minitorch_compile import inductor

F = mtc.nn.functional
pytestmark = pytest.mark.usefixtures("strict_inductor")  # conftest.py


def _source() -> str:
    return inductor.compiled_graphs[-1].source


def _close(got, want, rtol=1e-5, atol=1e-6):
    got, want = got.numpy(), want.numpy()
    assert got.dtype == want.dtype and got.shape == want.shape
    assert (np.isnan(got) == np.isnan(want)).all()  # the same NaNs, the same infinities
    np.testing.assert_array_equal(np.isinf(got), np.isinf(want))
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, equal_nan=True)


@pytest.fixture
def small_tiles():
    """Tiles of a few rows and two threads even for small inputs: several chunks."""
    c = inductor.config
    old = c.tile_bytes, c.threads, c.min_parallel_numel
    c.tile_bytes, c.threads, c.min_parallel_numel = 4096, 2, 1
    yield
    c.tile_bytes, c.threads, c.min_parallel_numel = old


# --------------------------------------------------------------------------- row sums by BLAS


def test_softmax_row_sum_is_a_blas_dot_with_ones(small_tiles):
    x = mtc.randn(64, 300) * 4
    f = mtc.compile(lambda x: mtc.softmax(x, -1))
    _close(f(x), mtc.softmax(x, -1))
    src = _source()
    # a 2-D tile summed into a tile buffer: np.dot (it releases the GIL; np.vecdot does not)
    assert "np.dot(b1, ones_float32, out=b0[..., 0])" in src and "np.add.reduce" not in src
    assert "ones_float32 = np.ones((300,), dtype=np.float32)" in src


def test_row_sums_keep_nan_and_inf_rows(small_tiles):
    rows = np.random.default_rng(0).standard_normal((12, 700)).astype(np.float32)
    rows[1, 5] = np.nan
    rows[2, 9] = np.inf
    rows[3, :] = -np.inf  # softmax: every entry NaN
    rows[4, 3], rows[4, 7] = np.inf, -np.inf  # the sum is NaN
    rows[5, :] = 3e38  # the sum overflows to inf
    x = mtc.tensor(rows)
    for fn in (lambda x: x.sum(-1), lambda x: mtc.softmax(x, -1), lambda x: x.mean(-1),
               lambda x: (x * 2).sum(-1, keepdim=True) + 1, lambda x: x.exp().sum(-1)):
        mtc.dynamo.reset()
        with np.errstate(all="ignore"):
            _close(mtc.compile(fn)(x), fn(x))
        assert "ones_float32" in _source()


@pytest.mark.parametrize("dtype", [mtc.float32, mtc.float64])
def test_row_sums_float64_and_layouts(small_tiles, dtype):
    base = mtc.randn(40, 600).to(dtype)
    name = "ones_" + str(np.dtype(dtype.np))
    for x in (base, base.t().contiguous().t(), base[:, ::2], base.t()):  # strided, transposed
        mtc.dynamo.reset()
        fn = lambda x: mtc.softmax(x, -1)  # noqa: E731
        _close(mtc.compile(fn)(x), fn(x), rtol=1e-5 if dtype is mtc.float32 else 1e-12)
        if x.stride()[-1] == 1:
            assert name in _source()


def test_integer_sums_keep_add_reduce():
    x = mtc.randint(-5, 5, (16, 600))
    got = mtc.compile(lambda x: x.sum(-1))(x)
    assert "np.vecdot" not in _source()
    np.testing.assert_array_equal(got.numpy(), x.sum(-1).numpy())


def test_sum_of_products_stays_one_vecdot_of_the_factors():
    x = mtc.randn(64, 300)
    f = mtc.compile(lambda x: (x * x.cos()).sum(-1))
    _close(f(x), (x * x.cos()).sum(-1))
    src = _source()
    assert "ones_" not in src and "np.vecdot(" in src


@settings(deadline=None, max_examples=25)
@given(st.integers(1, 9), st.integers(1, 9), st.integers(1, 40))
def test_row_sums_tiny_and_three_dim_shapes(a, b, c):
    x = mtc.randn(a, b, c)
    for fn in (lambda x: mtc.softmax(x, -1), lambda x: x.sum(-1), lambda x: x.mean((1, 2))):
        mtc.dynamo.reset()
        _close(mtc.compile(fn)(x), fn(x), rtol=1e-5, atol=1e-5)


def test_row_sums_with_dynamic_sizes(small_tiles):
    before = len(inductor.compiled_graphs)
    f = mtc.compile(lambda x: mtc.softmax(x, -1), dynamic=True)
    for shape in ((5, 17), (33, 600), (2, 3)):  # (size 1 would specialize, as in torch)
        x = mtc.randn(*shape)
        _close(f(x), mtc.softmax(x, -1))
    assert len(inductor.compiled_graphs) == before + 1 and "ks" in _source()


# --------------------------------------------------------------------------- row operands


def test_layer_norm_weight_and_bias_expanded_once_per_call(small_tiles):
    x, w, b = mtc.randn(96, 512), mtc.randn(512), mtc.randn(512)
    w.numpy()[3] = np.inf
    b.numpy()[5] = np.nan
    fn = lambda x, w, b: F.layer_norm(x, (512,), w, b)  # noqa: E731
    got = mtc.compile(fn)(x, w, b)
    src = _source()
    assert "np.ascontiguousarray(np.broadcast_to(v1" in src and "w1[:t1 - t0]" in src
    _close(got, fn(x, w, b), rtol=2e-5, atol=2e-5)
    # the expansion itself changes no bit: the same kernel without it
    x2 = mtc.randn(96, 512)
    plain = mtc.compile(lambda x, w: x * w + w)(x2, w)
    assert "w1[:t1 - t0]" in _source()
    np.testing.assert_array_equal(plain.numpy(), (x2 * w + w).numpy())


def test_one_tile_keeps_the_broadcast_view():
    x, w = mtc.randn(4, 512), mtc.randn(512)
    got = mtc.compile(lambda x, w: x * w + 1)(x, w)
    assert "np.broadcast_to" not in _source()
    np.testing.assert_array_equal(got.numpy(), (x * w + 1).numpy())


def test_row_operands_with_dynamic_rows(small_tiles):
    f = mtc.compile(lambda x, w: (x - w) * w, dynamic=True)
    w = mtc.randn(300)
    for n in (3, 50, 129):
        x = mtc.randn(n, 300)
        np.testing.assert_array_equal(f(x, w).numpy(), ((x - w) * w).numpy())
    assert "rows" in _source()


# --------------------------------------------------------------------------- erf and gelu


def test_erf_without_the_clamp_is_accurate_on_the_whole_tail():
    tail = np.concatenate([np.geomspace(3.5, 3e38, 20000), [np.inf, np.nan, 1.8e19, 1.9e19]])
    x = mtc.tensor(np.concatenate([tail, -tail]).astype(np.float32))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow warning from the eager kernel
        want = x.erf().numpy()
    got = mtc.compile(lambda x: x.erf())(x).numpy()
    np.testing.assert_array_equal(got, want)
    assert "np.minimum" not in _source()
    ref = np.array([math.erf(v) if not math.isnan(v) else math.nan
                    for v in x.numpy().astype(np.float64)])
    np.testing.assert_allclose(got, ref, rtol=0, atol=1.3e-7, equal_nan=True)


def test_gelu_float32_body_is_folded_accurate_and_equal_to_eager():
    x = mtc.cat([mtc.linspace(-12, 12, 20001),
                 mtc.tensor([float("nan"), float("inf"), -float("inf"), 0.0, -0.0, 1e-38,
                             -3e38, 3e38])])
    got = mtc.compile(F.gelu)(x)
    src = _source()
    assert "fused_gelu_0" in src and "0.7071067811865476" not in src  # 1/sqrt2 folded
    assert src.count("np.multiply(") + src.count("np.add(") + src.count("np.tanh(") == 18
    with np.errstate(invalid="ignore"):
        want = F.gelu(x)
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    v = x.numpy().astype(np.float64)
    with np.errstate(invalid="ignore"):
        ref = np.array([0.5 * a * (1 + math.erf(a / math.sqrt(2))) for a in v])
    g = got.numpy()
    assert np.isnan(g[-8]) and g[-7] == np.inf and np.isnan(g[-6])  # nan, inf, -inf (-inf * 0)
    fin = np.isfinite(ref)
    assert (np.abs(g[fin] - ref[fin]) <= 6e-7 + 1.2e-7 * np.abs(v[fin])).all()


@pytest.mark.parametrize("dtype", [mtc.float64, mtc.float16, mtc.int64])
def test_gelu_other_dtypes_and_tanh_compile_like_eager(dtype):  # int64: promoted to float32
    x = (mtc.randn(3000) * 4).to(dtype) if dtype is not mtc.int64 else mtc.arange(-50, 50)
    for fn in (F.gelu, lambda x: F.gelu(x, approximate="tanh")):
        mtc.dynamo.reset()
        got, want = mtc.compile(fn)(x), fn(x)
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got.numpy().astype(np.float64),
                                   want.numpy().astype(np.float64), rtol=1e-3, atol=1e-3)


# --------------------------------------------------------------------------- run_tiles


@pytest.mark.parametrize("chunks", [1, 3, 4])
def test_dynamic_schedule_is_deterministic(small_tiles, chunks):
    old = inductor.config.chunks_per_thread
    inductor.config.chunks_per_thread = chunks
    try:
        x = mtc.randn(300, 70)
        for fn in (lambda x: x.sum(), lambda x: x.sum(0), lambda x: mtc.softmax(x, -1),
                   lambda x: x.cos() * 2):
            mtc.dynamo.reset()
            f = mtc.compile(fn)
            first, second = f(x), f(x)
            np.testing.assert_array_equal(first.numpy(), second.numpy())
            _close(first, fn(x), rtol=1e-5, atol=1e-4)
    finally:
        inductor.config.chunks_per_thread = old
