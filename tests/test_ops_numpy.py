"""Every op against an independent numpy reference, over random shapes and dtypes.

Generated from the OpInfo registry (``tests/opinfo.py``): for each op, hypothesis draws a
dtype the op accepts and a sample (0-dim and size-1 dims included; binary ops broadcast and mix
dtypes, tensors of every rank and Python numbers), and the test checks

* the values against the numpy reference, and the dtype against torch's promotion rules;
* the in-place variant (``add_`` ...): same values written into ``self``, or torch's error when
  the result cannot be written there (broadcast to a bigger shape, float result into an int);
* the Meta device: the op on meta tensors gives the shape and dtype of the real run.
"""

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

import minitorch_compile as mtc
from minitorch_compile.fx import DynamicOutputShapeException
from minitorch_compile.ops import OP_TABLE

from .opinfo import (
    F32,
    OPINFOS,
    Gen,
    as_list,
    call,
    dtype_of,
    dtypes_list,
    expected_list,
    inplace_variants,
    map_sample,
)

NAMES = sorted(OPINFOS)


def assert_matches(actual, expected, dtype, info) -> None:
    """``actual`` (a tensor) has torch's ``dtype`` and the reference's shape and values."""
    expected = np.asarray(expected)
    assert actual.dtype is dtype, f"{info.name}: dtype {actual.dtype}, torch gives {dtype}"
    assert tuple(actual.shape) == expected.shape, \
        f"{info.name}: shape {tuple(actual.shape)}, expected {expected.shape}"
    got = actual.detach().numpy()
    if dtype.is_floating_point:
        rtol, atol = (info.rtol32, info.atol32) if dtype is F32 else (1e-7, 1e-9)
        np.testing.assert_allclose(got.astype(np.float64), expected.astype(np.float64),
                                   rtol=rtol, atol=atol, equal_nan=True,
                                   err_msg=f"{info.name} values")
    else:
        np.testing.assert_array_equal(got, expected.astype(dtype.np),
                                      err_msg=f"{info.name} values")


def check_outputs(info, s, out) -> None:
    outs = as_list(out)
    dtypes = dtypes_list(info, s, len(outs))
    if info.ref is None:
        for o, d in zip(outs, dtypes):
            assert o.dtype is d, f"{info.name}: dtype {o.dtype}, torch gives {d}"
        info.check([o.numpy() for o in outs], s)
        return
    expected = expected_list(info.reference(s))
    assert len(outs) == len(expected), f"{info.name}: {len(outs)} outputs, expected " \
                                       f"{len(expected)}"
    for o, e, d in zip(outs, expected, dtypes):
        assert_matches(o, e, d, info)


@pytest.mark.parametrize("name", NAMES)
@given(data=st.data())
def test_op_matches_numpy_reference(name, data):
    info = OPINFOS[name]
    dtype = data.draw(st.sampled_from(info.dtypes), label="dtype")
    s = info.sample(Gen(data.draw), dtype)
    check_outputs(info, s, call(info, s))


# ---------------------------------------------------------------- in-place variants

INPLACE = dict(inplace_variants())


def _category(d) -> int:
    return 2 if d.is_floating_point else (0 if d is mtc.bool else 1)


@pytest.mark.parametrize("name", sorted(INPLACE))
@given(data=st.data())
def test_inplace_variant_writes_the_functional_result_into_self(name, data):
    info = INPLACE[name]
    dtype = data.draw(st.sampled_from(info.dtypes), label="dtype")
    s = info.sample(Gen(data.draw), dtype)
    assume(isinstance(s.args[0], np.ndarray))  # pow(2, x) has no in-place form
    m = map_sample(s, lambda a: mtc.tensor(a.copy(order="C")))
    self = m.args[0]
    expected = np.asarray(info.reference(s))
    out_dtype = info.out_dtype(s)
    version = self._version
    op = OP_TABLE[name].overload
    if expected.shape != tuple(self.shape) or _category(out_dtype) > _category(self.dtype):
        with pytest.raises(RuntimeError, match=name):
            op(*m.args, **m.kwargs)
        return
    result = op(*m.args, **m.kwargs)
    assert result is self and self._version == version + 1
    assert_matches(self, expected.astype(out_dtype.np), dtype_of(s.args[0]), info)


# ---------------------------------------------------------------- the Meta device


@pytest.mark.parametrize("name", NAMES)
@given(data=st.data())
def test_meta_device_gives_the_shapes_and_dtypes_of_real_execution(name, data):
    info = OPINFOS[name]
    dtype = data.draw(st.sampled_from(info.dtypes), label="dtype")
    s = info.sample(Gen(data.draw), dtype)
    real = as_list(call(info, s))
    if info.dynamic_shape is not None and info.dynamic_shape(s):
        with pytest.raises(DynamicOutputShapeException):
            call(info, s, device="meta")
        return
    meta = as_list(call(info, s, device="meta"))
    assert len(meta) == len(real)
    for r, m in zip(real, meta):
        assert m.is_meta, f"{info.name}: the meta run returned a {m.device} tensor"
        assert (tuple(m.shape), m.dtype) == (tuple(r.shape), r.dtype), info.name


def test_meta_tensors_have_no_data():
    x = mtc.zeros(2, 3, device="meta")
    y = (x @ x.t()).softmax(-1)
    assert y.is_meta and tuple(y.shape) == (2, 2)
    with pytest.raises(NotImplementedError, match="meta tensor"):
        y.numpy()


# ---------------------------------------------------------------- type promotion, spelled out

i64 = lambda *v: mtc.tensor(list(v), dtype=mtc.int64)  # noqa: E731
f32 = lambda *v: mtc.tensor(list(v), dtype=mtc.float32)  # noqa: E731
boolean = lambda *v: mtc.tensor(list(v), dtype=mtc.bool)  # noqa: E731

PROMOTION_CASES = [
    ("int64 * 2.5 -> float32", lambda: i64(1, 2) * 2.5, mtc.float32),
    ("int64 * 2 -> int64", lambda: i64(1, 2) * 2, mtc.int64),
    ("float32[3] + float64 0-dim -> float32",
     lambda: f32(1, 2, 3) + mtc.tensor(1.0, dtype=mtc.float64), mtc.float32),
    ("int64[2] + float64 0-dim -> float64",
     lambda: i64(1, 2) + mtc.tensor(1.0, dtype=mtc.float64), mtc.float64),
    ("int64 + float16 -> float16",
     lambda: i64(1, 2) + mtc.tensor([1.0, 2.0], dtype=mtc.float16), mtc.float16),
    ("int32 + int64 0-dim -> int32",
     lambda: mtc.tensor([1], dtype=mtc.int32) + mtc.tensor(1), mtc.int32),
    ("bool + bool -> bool", lambda: boolean(True) + boolean(True), mtc.bool),
    ("bool + 1 -> int64", lambda: boolean(True) + 1, mtc.int64),
    ("bool * 1.5 -> float32", lambda: boolean(True) * 1.5, mtc.float32),
    ("float64 + 2.5 -> float64",
     lambda: mtc.tensor([1.0], dtype=mtc.float64) + 2.5, mtc.float64),
    ("int64 / int64 -> float32", lambda: i64(3) / i64(2), mtc.float32),
    ("int64 // int64 -> int64", lambda: i64(3) // i64(2), mtc.int64),
    ("int64 == 2.5 -> bool", lambda: i64(1) == 2.5, mtc.bool),
    ("float32 < int64 -> bool", lambda: f32(1) < i64(2), mtc.bool),
    ("exp(int64) -> float32", lambda: i64(1).exp(), mtc.float32),
    ("exp(bool) -> float32", lambda: boolean(True).exp(), mtc.float32),
    ("2 ** int64 -> int64", lambda: 2 ** i64(2), mtc.int64),
    ("2.5 ** int64 -> float32", lambda: 2.5 ** i64(2), mtc.float32),
    ("sum(int64) -> int64", lambda: i64(1, 2).sum(), mtc.int64),
    ("sum(bool) -> int64", lambda: boolean(True, True).sum(), mtc.int64),
    ("sum(int32) -> int64", lambda: mtc.tensor([1], dtype=mtc.int32).sum(), mtc.int64),
    ("sum(int64, dtype=float64)", lambda: i64(1, 2).sum(dtype=mtc.float64), mtc.float64),
    ("mean(int64, dtype=float32)", lambda: i64(1, 2).mean(dtype=mtc.float32), mtc.float32),
    ("clamp(int64, min=0.5) -> float32", lambda: i64(1, 2).clamp(min=0.5), mtc.float32),
    # a number next to a 0-dim tensor picks clamp(Scalar, Scalar): the tensor counts as a number
    ("clamp(int64, 0.5, f64 0-dim) -> float32",
     lambda: mtc.clamp(i64(1, 2), 0.5, mtc.tensor(1.0, dtype=mtc.float64)), mtc.float32),
    ("clamp(int64, f64 0-dim, f64 0-dim) -> float64",
     lambda: i64(1, 2).clamp(mtc.tensor(0.5), mtc.tensor(1.0, dtype=mtc.float64)), mtc.float64),
    ("where(c, int64, 2.5) -> float32",
     lambda: mtc.where(boolean(True, False), i64(1, 2), 2.5), mtc.float32),
    ("cat(int64, float64) -> float64",
     lambda: mtc.cat([i64(1), mtc.tensor([1.0], dtype=mtc.float64)]), mtc.float64),
    ("full((2,), 2) -> int64", lambda: mtc.full((2,), 2), mtc.int64),
    ("full((2,), True) -> bool", lambda: mtc.full((2,), True), mtc.bool),
    ("arange(3) -> int64", lambda: mtc.arange(3), mtc.int64),
    ("arange(0, 1, 0.5) -> float32", lambda: mtc.arange(0, 1, 0.5), mtc.float32),
    ("argmax -> int64", lambda: f32(1, 3).argmax(), mtc.int64),
]


@pytest.mark.parametrize("label,fn,dtype", PROMOTION_CASES, ids=[c[0] for c in PROMOTION_CASES])
def test_result_dtype_follows_torch_promotion(label, fn, dtype):
    assert fn().dtype is dtype


@pytest.mark.parametrize("dtype", [mtc.int64, mtc.bool])
def test_mean_of_integers_raises_where_sum_promotes(dtype):
    x = mtc.ones(3, dtype=dtype)
    assert x.sum().dtype is mtc.int64
    with pytest.raises(RuntimeError, match="mean.*floating point"):
        x.mean()


def test_sign_of_nan_is_zero_as_in_torch():
    assert mtc.tensor([float("nan"), -2.0, 0.0, 3.0]).sign().tolist() == [0.0, -1.0, 0.0, 1.0]


def test_int_floor_division_stays_exact():
    a = i64(-7, 7, -8, 9)
    assert (a // 2).tolist() == [-4, 3, -4, 4]
    assert mtc.div(a, 2, rounding_mode="trunc").tolist() == [-3, 3, -4, 4]


def test_float_floor_division_matches_python():
    """floor(1 / 0.1) is 9: 0.1 is a little more than a tenth (torch and Python agree)."""
    x = mtc.tensor([1.0], dtype=mtc.float64)
    assert (x // 0.1).item() == 1.0 // 0.1 == 9.0


def test_reshape_of_a_non_contiguous_tensor_copies():
    x = mtc.arange(6.0).view(2, 3).t()
    assert not x.is_contiguous()
    y = x.reshape(6)
    np.testing.assert_array_equal(y.numpy(), np.arange(6.0).reshape(2, 3).T.reshape(6))
    assert x.contiguous().is_contiguous()


def test_views_share_memory_with_their_base():
    x = mtc.zeros(2, 3)
    for v in (x.view(6), x.t(), x[1], x[:, 1:], x.unsqueeze(0), x.expand(2, 2, 3)):
        assert v.untyped_storage_base() is x.untyped_storage_base()
    x.view(6)[4] = 7.0
    assert x[1, 1].item() == 7.0


@pytest.mark.parametrize("name", NAMES)
@given(data=st.data())
def test_npu_device_computes_what_cpu_computes(name, data):
    """The simulated NPU runs the same kernels; results stay on the NPU (a decomposition that
    makes a tensor on the cpu would fail or leak here)."""
    info = OPINFOS[name]
    dtype = data.draw(st.sampled_from(info.dtypes), label="dtype")
    s = info.sample(Gen(data.draw), dtype)
    mtc.manual_seed(0)
    cpu = as_list(call(info, s))
    mtc.manual_seed(0)
    npu = as_list(call(info, s, device="npu"))
    for c, n in zip(cpu, npu):
        assert n.device == mtc.device("npu"), f"{name}: result on {n.device}"
        assert n.dtype is c.dtype and tuple(n.shape) == tuple(c.shape)
        if info.ref is not None:
            np.testing.assert_array_equal(n.numpy(), c.numpy(), err_msg=name)
