"""``nn.InstanceNorm1d/2d/3d`` and ``F.instance_norm``: per-(sample, channel) statistics,
running statistics averaged over the batch, repr — torch's (where installed), compiled ==
eager, and a numpy check of the normalisation always."""

from __future__ import annotations

import numpy as np
import pytest

import minitorch_compile as mtc

CASES = {
    "1d": ("InstanceNorm1d", {}, (2, 3, 5), True),
    "2d_affine": ("InstanceNorm2d", dict(affine=True), (2, 3, 4, 4), True),
    "2d_running": ("InstanceNorm2d", dict(track_running_stats=True), (2, 3, 4, 4), True),
    "2d_running_eval": ("InstanceNorm2d", dict(track_running_stats=True, affine=True),
                        (2, 3, 4, 4), False),
    "1d_unbatched": ("InstanceNorm1d", {}, (3, 5), True),
    "3d": ("InstanceNorm3d", dict(affine=True), (1, 3, 2, 3, 2), True),
}


def _run(L, name):
    cls, cfg, shape, train = CASES[name]
    L.manual_seed(0)
    m = getattr(L.nn, cls)(3, **cfg).train(train)
    x = L.randn(*shape, requires_grad=True)
    out = m(x)
    (out * L.arange(out.numel()).reshape(out.shape).float()).sum().backward()
    again = m(x * 2)
    return ([out.detach().numpy(), x.grad.numpy(), again.detach().numpy()]
            + [b.numpy() for b in m.buffers()], repr(m))


def test_normalises_each_sample_and_channel():
    x = mtc.randn(2, 3, 7)
    got = mtc.nn.functional.instance_norm(x).numpy()
    a = x.numpy()
    want = (a - a.mean(-1, keepdims=True)) / np.sqrt(a.var(-1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_compiled_equals_eager():
    m = mtc.nn.InstanceNorm2d(3, affine=True)
    x = mtc.randn(2, 3, 4, 4)
    mtc.dynamo.reset()
    np.testing.assert_allclose(mtc.compile(m)(x).detach().numpy(), m(x).detach().numpy(),
                               rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_torch(name):
    torch = pytest.importorskip("torch")
    (t, t_repr), (m, m_repr) = _run(torch, name), _run(mtc, name)
    assert m_repr == t_repr
    for a, b in zip(t, m):
        np.testing.assert_allclose(b, a, rtol=1e-4, atol=1e-5)
