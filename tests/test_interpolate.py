"""``F.interpolate``/``nn.Upsample``: nearest and (bi/tri)linear with and without
``align_corners``, by size or by scale factor — torch's values and gradients (where torch is
installed), numpy-checked indices always, compiled == eager."""

from __future__ import annotations

import numpy as np
import pytest

import minitorch_compile as mtc

CASES = {
    "nearest_x2": ((1, 2, 3, 4), dict(scale_factor=2)),
    "nearest_size": ((2, 1, 5, 7), dict(size=(3, 4))),
    "nearest_1d_frac": ((1, 2, 7), dict(scale_factor=1.7)),
    "bilinear": ((1, 2, 3, 4), dict(scale_factor=2, mode="bilinear")),
    "bilinear_ac": ((1, 2, 3, 4), dict(size=(5, 7), mode="bilinear", align_corners=True)),
    "bilinear_down": ((2, 1, 6, 8), dict(size=(4, 3), mode="bilinear")),
    "linear_1d": ((1, 3, 5), dict(scale_factor=2.5, mode="linear")),
    "trilinear": ((1, 1, 2, 3, 4), dict(scale_factor=2, mode="trilinear")),
}


def _run(L, name, compile_=False):
    shape, kw = CASES[name]
    L.manual_seed(0)
    x = L.randn(*shape, requires_grad=True)
    fn = lambda t: L.nn.functional.interpolate(t, **kw)  # noqa: E731
    out = (mtc.compile(fn) if compile_ else fn)(x)
    (out * L.arange(out.numel()).reshape(out.shape).float()).sum().backward()
    return out.detach().numpy(), x.grad.numpy()


def test_nearest_indices_and_module():
    x = mtc.arange(4.0).reshape(1, 1, 4)
    assert mtc.nn.functional.interpolate(x, size=6).tolist() == [[[0, 0, 1, 2, 2, 3]]]
    up = mtc.nn.Upsample(scale_factor=2, mode="bilinear")
    assert repr(up) == "Upsample(scale_factor=2.0, mode='bilinear')"
    assert tuple(up(mtc.ones(1, 1, 2, 3)).shape) == (1, 1, 4, 6)
    with pytest.raises(ValueError, match="only one of size or scale_factor"):
        mtc.nn.functional.interpolate(x, size=3, scale_factor=2)


@pytest.mark.parametrize("name", ["nearest_x2", "bilinear", "bilinear_ac"])
def test_compiled_equals_eager(name):
    mtc.dynamo.reset()
    for a, b in zip(_run(mtc, name), _run(mtc, name, compile_=True)):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_torch(name):
    torch = pytest.importorskip("torch")
    for a, b in zip(_run(torch, name), _run(mtc, name)):
        assert a.shape == b.shape
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-5)
