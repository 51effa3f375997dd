"""torch's aliases and small composites (``negative``, ``multiply``, ``clip``, ``swapaxes``,
``dot``, ``inner``, ``fmax``, ``nan_to_num``, ``nansum`` ...): values, dtypes and errors equal
to torch's where it is installed; numpy references always."""

from __future__ import annotations

import numpy as np
import pytest

import minitorch_compile as mtc

CASES = {
    "negative": lambda L, a, b, v, n: L.negative(a),
    "positive": lambda L, a, b, v, n: a.positive(),
    "absolute": lambda L, a, b, v, n: L.absolute(a),
    "multiply": lambda L, a, b, v, n: a.multiply(b),
    "divide": lambda L, a, b, v, n: L.divide(a, b, rounding_mode="trunc"),
    "true_divide": lambda L, a, b, v, n: L.true_divide(a, 2),
    "subtract": lambda L, a, b, v, n: L.subtract(a, b, alpha=2),
    "greater": lambda L, a, b, v, n: a.greater(b),
    "less": lambda L, a, b, v, n: L.less(a, 0),
    "clip": lambda L, a, b, v, n: a.clip(-0.5, 0.5),
    "floor_divide": lambda L, a, b, v, n: L.floor_divide(a, b),
    "swapaxes": lambda L, a, b, v, n: a.swapaxes(0, 1),
    "ravel": lambda L, a, b, v, n: a.t().ravel(),
    "broadcast_to": lambda L, a, b, v, n: L.broadcast_to(v, (2, 4)),
    "fliplr": lambda L, a, b, v, n: L.fliplr(a),
    "flipud": lambda L, a, b, v, n: a.flipud(),
    "dot": lambda L, a, b, v, n: L.dot(v, v),
    "dot_err": lambda L, a, b, v, n: L.dot(a, b),
    "mv": lambda L, a, b, v, n: a.mv(v),
    "inner": lambda L, a, b, v, n: L.inner(a, b),
    "inner_v": lambda L, a, b, v, n: L.inner(a, v),
    "ger": lambda L, a, b, v, n: L.ger(v, v),
    "logical_xor": lambda L, a, b, v, n: L.logical_xor(a > 0, b),
    "fmax": lambda L, a, b, v, n: L.fmax(n, L.zeros(5)),
    "fmin": lambda L, a, b, v, n: L.fmin(n, n.flip(0)),
    "nan_to_num": lambda L, a, b, v, n: L.nan_to_num(n),
    "nan_to_num2": lambda L, a, b, v, n: n.nan_to_num(nan=0.5, posinf=9.0),
    "nansum": lambda L, a, b, v, n: L.nansum(n),
    "nanmean": lambda L, a, b, v, n: n.nanmean(),
    "nansum_dim": lambda L, a, b, v, n: L.nansum(a, 1),
    "asin": lambda L, a, b, v, n: (a / 4).asin(),
}


def _run(L, f):
    L.manual_seed(0)
    a, b, v = L.randn(3, 4), L.randn(3, 4), L.randn(4)
    n = L.tensor([1.0, float("nan"), float("inf"), -float("inf"), 2.0])
    try:
        out = f(L, a, b, v, n)
        return out.numpy()
    except Exception as e:  # the error must be torch's
        return f"{type(e).__name__}: {e}"


def test_against_numpy():
    n = mtc.tensor([1.0, float("nan"), float("inf"), -float("inf"), 2.0])
    np.testing.assert_array_equal(mtc.nan_to_num(n).numpy(), np.nan_to_num(n.numpy()))
    assert mtc.nansum(n[:2]).item() == 1.0 and mtc.fmax(n, mtc.zeros(5))[1].item() == 0.0
    a = mtc.randn(3, 4)
    np.testing.assert_allclose(mtc.inner(a, a).numpy(), a.numpy() @ a.numpy().T, rtol=1e-5)
    with pytest.raises(RuntimeError, match="1D tensors expected, but got 2D and 2D tensors"):
        mtc.dot(a, a)


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_torch(name):
    torch = pytest.importorskip("torch")
    t, m = _run(torch, CASES[name]), _run(mtc, CASES[name])
    if isinstance(t, str):
        assert m == t
    else:
        assert isinstance(m, np.ndarray) and m.shape == t.shape and m.dtype == t.dtype
        np.testing.assert_allclose(m, t, rtol=1e-5, atol=1e-6, equal_nan=True)
