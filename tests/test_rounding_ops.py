"""``floor``, ``ceil``, ``trunc``/``fix``, ``round`` (and ``decimals=``), ``frac``: values,
dtypes, errors and gradients as torch's; compiled (Inductor, aot_eager, the NPU) equal to eager;
bit for bit against torch where it is installed."""

from __future__ import annotations

import numpy as np
import pytest

import minitorch_compile as mtc

VALUES = [0.5, 1.5, 2.5, -0.5, -1.5, 0.125, 0.375, 1250.0, 1350.0, -2.7, 3.2, 1234.5678]


def _x():
    return mtc.tensor(VALUES)


def test_values_follow_torch():
    x = _x()
    assert mtc.round(x).tolist()[:5] == [0.0, 2.0, 2.0, -0.0, -2.0]  # half to even
    # torch.round(x, decimals=2): rint(x * 100) / 100 in float32
    assert mtc.round(x, decimals=2).tolist()[5] == np.float32(0.12)
    assert x.round(decimals=2).tolist()[11] == 1234.5699462890625
    assert mtc.round(x, decimals=-2).tolist()[7:9] == [1200.0, 1400.0]
    np.testing.assert_array_equal(x.floor().numpy(), np.floor(np.float32(VALUES)))
    np.testing.assert_array_equal(x.ceil().numpy(), np.ceil(np.float32(VALUES)))
    np.testing.assert_array_equal(mtc.fix(x).numpy(), np.trunc(np.float32(VALUES)))
    f = np.float32(VALUES)
    np.testing.assert_array_equal(x.frac().numpy(), f - np.trunc(f))


def test_dtypes_and_errors():
    i = mtc.tensor([1, -2, 3])
    for name in ("floor", "ceil", "trunc", "round"):
        out = getattr(i, name)()
        assert out.dtype is mtc.int64 and out.tolist() == [1, -2, 3]
        with pytest.raises(NotImplementedError, match=f'"{name}_vml_cpu" not implemented for '
                                                      "'Bool'"):
            getattr(mtc.tensor([True]), name)()
    with pytest.raises(NotImplementedError, match="\"frac_cpu\" not implemented for 'Long'"):
        i.frac()
    with pytest.raises(NotImplementedError, match="\"round_cpu\" not implemented for 'Long'"):
        i.round(decimals=1)
    assert mtc.tensor([1.5], dtype=mtc.float64).floor().dtype is mtc.float64


def test_in_place_forms():
    y = _x()
    y.round_(decimals=-2)
    assert y.tolist()[7] == 1200.0
    y = _x()
    assert y.floor_() is y and y.tolist()[0] == 0.0
    y = _x()
    y.fix_()
    assert y.tolist()[9] == -2.0


def test_gradients():
    x = _x().requires_grad_()
    (x.floor() + x.ceil() + x.round() + x.round(decimals=1) + x.trunc()).sum().backward()
    assert x.grad.tolist() == [0.0] * len(VALUES)
    x.grad = None
    (x.frac() * 3).sum().backward()
    assert x.grad.tolist() == [3.0] * len(VALUES)
    assert type(x.round().grad_fn).__name__ == "RoundBackward0"
    assert type(x.frac().grad_fn).__name__ == "FracBackward0"


def _prog(x):
    return (x * 3.3).floor() + x.ceil() * x.frac() - x.round(decimals=1) + mtc.round(x).trunc()


@pytest.mark.parametrize("backend", ["inductor", "aot_eager"])
def test_compiled_equals_eager(backend):
    mtc.dynamo.reset()
    x = mtc.linspace(-30, 30, 1001).requires_grad_()
    ref = _prog(x)
    ref.sum().backward()
    g, x.grad = x.grad, None
    out = mtc.compile(_prog, backend=backend, fullgraph=True)(x)
    out.sum().backward()
    np.testing.assert_array_equal(out.detach().numpy(), ref.detach().numpy())
    np.testing.assert_array_equal(x.grad.numpy(), g.numpy())


def test_inductor_fuses_them_into_one_kernel():
    mtc.dynamo.reset()
    mtc.inductor.metrics.reset()
    mtc.compile(_prog)(mtc.linspace(-3, 3, 64))
    assert mtc.inductor.metrics.generated_kernel_count == 1  # torch 2.13's CPU Inductor: 1


def test_npu_equals_cpu():
    a = mtc.linspace(-3, 3, 50)
    np.testing.assert_array_equal(mtc.compile(_prog)(a.to("npu")).to("cpu").numpy(),
                                  _prog(a).numpy())


def test_bit_for_bit_with_torch():
    torch = pytest.importorskip("torch")
    a = (np.random.default_rng(0).standard_normal(2000) * 100).astype(np.float32)
    a[:len(VALUES)] = VALUES
    for d in (0, 1, 2, 3, -1, -2):
        np.testing.assert_array_equal(mtc.round(mtc.from_numpy(a), decimals=d).numpy(),
                                      torch.round(torch.from_numpy(a), decimals=d).numpy())
    for name in ("floor", "ceil", "trunc", "frac", "fix"):
        np.testing.assert_array_equal(getattr(mtc, name)(mtc.from_numpy(a)).numpy(),
                                      getattr(torch, name)(torch.from_numpy(a)).numpy())
