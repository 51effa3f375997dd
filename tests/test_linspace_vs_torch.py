"""``linspace`` computes torch's bits, not numpy's: the first half counts up from ``start`` and
the second half down from ``end``, in the result's own dtype with fused multiply-adds (torch's
vectorized CPU kernel), half rounding after every operation, integer dtypes stepping in double.

Recorded values are torch 2.13's; where torch is installed, a grid of cases is compared bit for
bit."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import minitorch_compile as mtc


def test_float32_steps_round_as_float32():
    # torch.linspace(-1, 1, 12)[3] and .tolist() print these exact float32 values
    x = mtc.linspace(-1, 1, 12)
    assert x.tolist()[3] == -0.45454543828964233
    assert x.tolist()[8] == 0.45454543828964233  # the downward half mirrors it


def test_fused_multiply_add_leaves_torchs_residue():
    # 1 - fma(step, 3) with step = float32(1/3): torch returns -2.98e-08, not 0.0
    assert mtc.linspace(-1, 1, 7)[3].item() == np.float32(-2.9802322e-08)
    assert mtc.linspace(-1, 1, 7, dtype=mtc.float64)[3].item() == 5.551115123125783e-17


def test_ends_are_exact_and_dtype_is_kept():
    for dt in (mtc.float16, mtc.float32, mtc.float64):
        x = mtc.linspace(-3.7, 2.5, 100, dtype=dt)
        assert x.dtype is dt and x[0].item() == np.dtype(dt.np).type(-3.7)
        assert x[-1].item() == np.dtype(dt.np).type(2.5)
    assert mtc.linspace(0, 10, 5, dtype=mtc.int64).tolist() == [0, 2, 5, 7, 10]


def test_bit_for_bit_with_torch():
    torch = pytest.importorskip("torch")
    pairs = [(None, None), (torch.float64, mtc.float64), (torch.float16, mtc.float16),
             (torch.int64, mtc.int64), (torch.int32, mtc.int32)]
    bad = []
    for a, b, n in itertools.product([-1, 0, 0.1, 5, 1e3], [1, 2.5, -2, 7, 1e-3],
                                     [0, 1, 2, 3, 7, 12, 100, 1001]):
        for td, md in pairs:
            t = torch.linspace(a, b, n, dtype=td).numpy()
            m = mtc.linspace(a, b, n, dtype=md).numpy()
            if t.dtype != m.dtype or not np.array_equal(t, m):
                bad.append((a, b, n, td))
    assert bad == []
