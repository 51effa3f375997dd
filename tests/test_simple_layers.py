"""Padding layers, channel dropout, ``CosineSimilarity``/``PairwiseDistance``,
``PixelShuffle``/``PixelUnshuffle`` and ``Softmax2d``: repr, values, gradients and dropout
masks as torch's (torch where installed; numpy references always), compiled == eager."""

from __future__ import annotations

import numpy as np
import pytest

import minitorch_compile as mtc

LAYERS = {
    "ConstantPad1d": (lambda nn: nn.ConstantPad1d((1, 2), 3.5), [(2, 3, 4)]),
    "ConstantPad2d": (lambda nn: nn.ConstantPad2d(1, -1.0), [(2, 3, 4, 4)]),
    "ZeroPad2d": (lambda nn: nn.ZeroPad2d((1, 0, 2, 1)), [(2, 3, 4, 4)]),
    "ReflectionPad1d": (lambda nn: nn.ReflectionPad1d(2), [(2, 3, 5)]),
    "ReflectionPad2d": (lambda nn: nn.ReflectionPad2d((1, 2, 0, 1)), [(1, 2, 4, 4)]),
    "ReplicationPad2d": (lambda nn: nn.ReplicationPad2d(1), [(1, 2, 3, 3)]),
    "CircularPad1d": (lambda nn: nn.CircularPad1d(1), [(2, 3, 5)]),
    "Dropout1d": (lambda nn: nn.Dropout1d(0.4), [(4, 6, 5)]),
    "Dropout2d": (lambda nn: nn.Dropout2d(0.3), [(3, 8, 2, 2)]),
    "Dropout2d_unbatched": (lambda nn: nn.Dropout2d(0.5), [(8, 2, 2)]),
    "Dropout3d": (lambda nn: nn.Dropout3d(0.5), [(2, 4, 2, 2, 2)]),
    "CosineSimilarity": (lambda nn: nn.CosineSimilarity(dim=-1), [(4, 5), (4, 5)]),
    "PairwiseDistance": (lambda nn: nn.PairwiseDistance(p=1.5, keepdim=True), [(4, 5), (4, 5)]),
    "PixelShuffle": (lambda nn: nn.PixelShuffle(2), [(1, 8, 2, 3)]),
    "PixelUnshuffle": (lambda nn: nn.PixelUnshuffle(2), [(1, 2, 4, 6)]),
    "Softmax2d": (lambda nn: nn.Softmax2d(), [(2, 3, 2, 2)]),
}


def _run(L, name, compile_=False):
    make, shapes = LAYERS[name]
    m = make(L.nn)
    L.manual_seed(3)
    xs = [L.randn(*s, requires_grad=True) for s in shapes]
    L.manual_seed(4)
    out = (mtc.compile(m) if compile_ else m)(*xs)
    out.sum().backward()
    return repr(m), out.detach().numpy(), [x.grad.numpy() for x in xs]


def test_pixel_shuffle_round_trips_and_pads_match_numpy():
    x = mtc.arange(48.0).reshape(1, 12, 2, 2)
    y = mtc.nn.functional.pixel_shuffle(x, 2)
    assert tuple(y.shape) == (1, 3, 4, 4)
    assert mtc.equal(mtc.nn.functional.pixel_unshuffle(y, 2), x)
    assert y[0, 0, 0, :2].tolist() == [0.0, 4.0]  # channels 0 and 1 interleave in a row
    a = np.arange(10.0, dtype=np.float32).reshape(1, 2, 5)
    np.testing.assert_array_equal(mtc.nn.ReflectionPad1d(2)(mtc.tensor(a)).numpy(),
                                  np.pad(a, ((0, 0), (0, 0), (2, 2)), mode="reflect"))


def test_channel_dropout_zeroes_whole_channels():
    mtc.manual_seed(0)
    out = mtc.nn.functional.dropout2d(mtc.ones(4, 16, 3, 3), 0.5)
    per_channel = out.reshape(4, 16, 9)
    assert ((per_channel == 0).all(-1) | (per_channel == 2).all(-1)).all()


@pytest.mark.parametrize("name", ["ConstantPad2d", "ReflectionPad2d", "CosineSimilarity",
                                  "PixelShuffle", "Softmax2d", "PairwiseDistance"])
def test_compiled_equals_eager(name):
    mtc.dynamo.reset()
    _, ref, ref_g = _run(mtc, name)
    _, out, g = _run(mtc, name, compile_=True)
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-6)
    for a, b in zip(g, ref_g):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_matches_torch(name):
    torch = pytest.importorskip("torch")
    t, m = _run(torch, name), _run(mtc, name)
    assert m[0] == t[0]
    np.testing.assert_allclose(m[1], t[1], rtol=1e-5, atol=1e-6)
    for a, b in zip(m[2], t[2]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
