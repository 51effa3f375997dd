"""Private formats: layouts checked element by element against their definitions, exact round
trips, casts as kernels, ops seeing logical values, GM charged at the physical size."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minitorch_compile as mtc
from minitorch_compile.npu import formats as F

dims = st.integers(1, 40)
small = st.integers(1, 5)


def _arr(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


@settings(max_examples=20)
@given(n=small, c=dims, h=small, w=small)
def test_nc1hwc0_layout_matches_its_definition(n, c, h, w):
    x = _arr((n, c, h, w))
    p = F.to_physical(x, F.NC1HWC0)
    c1 = -(-c // 16)
    assert p.shape == (n, c1, h, w, 16)
    for idx in np.ndindex(p.shape):
        ni, ci1, hi, wi, ci0 = idx
        ch = 16 * ci1 + ci0
        assert p[idx] == (x[ni, ch, hi, wi] if ch < c else 0.0)
    np.testing.assert_array_equal(F.to_logical(p, F.NC1HWC0, x.shape), x)


@settings(max_examples=20)
@given(n=dims, c=dims, h=st.integers(1, 3), w=st.integers(1, 3))
def test_fractal_z_layout_matches_its_definition(n, c, h, w):
    x = _arr((n, c, h, w))
    p = F.to_physical(x, F.FRACTAL_Z)
    c1, n1 = -(-c // 16), -(-n // 16)
    assert p.shape == (c1 * h * w, n1, 16, 16)
    for idx in np.ndindex(p.shape):
        row, ni1, ni0, ci0 = idx
        ci1, rest = divmod(row, h * w)
        hi, wi = divmod(rest, w)
        nn, cc = 16 * ni1 + ni0, 16 * ci1 + ci0
        assert p[idx] == (x[nn, cc, hi, wi] if nn < n and cc < c else 0.0)
    np.testing.assert_array_equal(F.to_logical(p, F.FRACTAL_Z, x.shape), x)


@settings(max_examples=25)
@given(batch=st.lists(small, max_size=2), m=dims, n=dims)
def test_fractal_nz_layout_matches_its_definition(batch, m, n):
    x = _arr((*batch, m, n))
    p = F.to_physical(x, F.FRACTAL_NZ)
    m1, n1 = -(-m // 16), -(-n // 16)
    assert p.shape == (*batch, n1, m1, 16, 16)
    for idx in np.ndindex(p.shape):
        *b, ni1, mi1, mi0, ni0 = idx
        mm, nn = 16 * mi1 + mi0, 16 * ni1 + ni0
        assert p[idx] == (x[(*b, mm, nn)] if mm < m and nn < n else 0.0)
    np.testing.assert_array_equal(F.to_logical(p, F.FRACTAL_NZ, x.shape), x)


def test_nz_memory_order_is_block_column_major_and_row_major_inside_a_block():
    x = np.arange(32 * 32, dtype=np.float32).reshape(32, 32)
    flat = F.to_physical(x, F.FRACTAL_NZ).reshape(-1)
    np.testing.assert_array_equal(flat[:16], x[0, :16])  # first row of block (0, 0)
    np.testing.assert_array_equal(flat[256:272], x[16, :16])  # then block (1, 0) below it
    np.testing.assert_array_equal(flat[512:528], x[0, 16:32])  # then the next block column


FORMATS = [F.ND, F.NCHW, F.NHWC, F.NC1HWC0, F.FRACTAL_Z, F.FRACTAL_NZ]


@settings(max_examples=30)
@given(fmt=st.sampled_from(FORMATS), shape=st.tuples(small, dims, small, dims),
       dtype=st.sampled_from([mtc.float32, mtc.float16, mtc.float64, mtc.int64]))
def test_format_casts_round_trip_exactly_and_ops_see_logical_values(fmt, shape, dtype):
    x = mtc.tensor(_arr(shape) * 10).to(dtype).npu()
    with mtc.npu.profile() as prof:
        y = mtc.npu.npu_format_cast(x, fmt)
    assert mtc.npu.get_npu_format(y) == fmt
    np.testing.assert_array_equal(y.cpu().numpy(), x.cpu().numpy())
    back = mtc.npu.npu_format_cast(y, F.ND)
    assert mtc.npu.get_npu_format(back) == F.ND
    np.testing.assert_array_equal(back.cpu().numpy(), x.cpu().numpy())
    if fmt != F.ND:
        (cast,) = prof.kernels
        assert cast.name == f"TransData(ND->{F.FORMAT_NAMES[fmt]})"
        assert cast.gm_write_bytes == F.storage(y).nbytes
        np.testing.assert_array_equal(F.storage(y), F.to_physical(x.cpu().numpy(), fmt))
    with mtc.npu.profile() as prof:
        z = y * 2
    np.testing.assert_array_equal(z.cpu().numpy(), x.cpu().numpy() * 2)
    names = [k.name for k in prof.kernels]
    assert names == ([f"TransData({F.FORMAT_NAMES[fmt]}->ND)"] if fmt != F.ND else []) + \
        ["aten::mul"]


def test_gm_charges_the_padded_physical_size():
    import gc

    gc.collect()
    base = mtc.npu.memory_allocated()
    x = mtc.npu.empty_with_format((2, 3, 4, 4), dtype=mtc.float32, acl_format=mtc.npu.NC1HWC0)
    assert mtc.npu.get_npu_format(x) == F.NC1HWC0 and tuple(x.shape) == (2, 3, 4, 4)
    assert F.storage(x).shape == (2, 1, 4, 4, 16)
    assert mtc.npu.memory_allocated() - base == 2 * 16 * 4 * 4 * 4  # 2048: C padded 3 -> 16
    nd = mtc.npu.npu_format_cast(x, F.ND)
    assert mtc.npu.memory_allocated() - base == 2048 + 512  # 384 bytes -> one 512-byte block
    del x, nd


def test_in_place_cast_and_writes_keep_the_physical_array_current():
    x = mtc.arange(0, 40, dtype=mtc.float32).reshape(2, 20).npu()
    assert mtc.npu.npu_format_cast_(x, F.FRACTAL_NZ) is x
    assert mtc.npu.get_npu_format(x) == F.FRACTAL_NZ
    x.mul_(3)
    np.testing.assert_array_equal(F.storage(x), F.to_physical(x.cpu().numpy(), F.FRACTAL_NZ))


def test_format_errors_are_clear():
    x = mtc.randn(3, 4).npu()
    with pytest.raises(RuntimeError, match="NC1HWC0 needs a tensor with 4 dims, got shape"):
        mtc.npu.npu_format_cast(x, F.NC1HWC0)
    with pytest.raises(RuntimeError, match="unknown acl_format 5"):
        mtc.npu.npu_format_cast(x, 5)
    with pytest.raises(RuntimeError, match="NDHWC .27. is not simulated"):
        mtc.npu.npu_format_cast(x, F.NDHWC)
    with pytest.raises(NotImplementedError, match="Could not run 'npu.npu_format_cast.default' "
                                           "with arguments from the 'CPU' backend"):
        mtc.npu.npu_format_cast(mtc.randn(3, 4), F.FRACTAL_NZ)
    with pytest.raises(RuntimeError, match="FRACTAL_NZ needs a tensor with at least 2 dims"):
        mtc.npu.npu_format_cast(mtc.randn(3).npu(), F.FRACTAL_NZ)


def test_format_cast_is_differentiable_and_grads_are_logical():
    x = mtc.randn(17, 5).npu().requires_grad_()
    y = mtc.npu.npu_format_cast(x, F.FRACTAL_NZ)
    (y * y).sum().backward()
    np.testing.assert_allclose(x.grad.cpu().numpy(), 2 * x.detach().cpu().numpy(), rtol=1e-6)


@settings(max_examples=20)
@given(fmt=st.sampled_from(FORMATS), shape=st.tuples(small, dims, small, dims))
def test_gm_offsets_say_where_each_element_lives(fmt, shape):
    x = _arr(shape)
    offsets = F.gm_offsets(shape, fmt)
    flat = F.to_physical(x, fmt).reshape(-1)
    np.testing.assert_array_equal(flat[offsets], x)
    assert len(np.unique(offsets)) == x.size
