"""Ranking, embedding and likelihood losses: torch's values and gradients for every reduction
(where torch is installed), formulas checked against numpy always, compiled == eager."""

from __future__ import annotations

import numpy as np
import pytest

import minitorch_compile as mtc


def _inputs(L):
    L.manual_seed(0)
    x1, x2, x3 = (L.randn(4, 5, requires_grad=True) for _ in range(3))
    sign = L.tensor([1.0, -1.0, 1.0, -1.0])
    pos = (L.rand(4, 5) * 3).floor()
    return x1, x2, x3, sign, pos


CASES = {
    "margin_ranking": lambda F, x1, x2, x3, s, p, r: F.margin_ranking_loss(
        x1[:, 0], x2[:, 0], s, margin=0.3, reduction=r),
    "hinge_embedding": lambda F, x1, x2, x3, s, p, r: F.hinge_embedding_loss(
        x1, s[:, None].expand(4, 5), margin=0.5, reduction=r),
    "soft_margin": lambda F, x1, x2, x3, s, p, r: F.soft_margin_loss(
        x1, s[:, None].expand(4, 5), reduction=r),
    "cosine_embedding": lambda F, x1, x2, x3, s, p, r: F.cosine_embedding_loss(
        x1, x2, s, margin=0.1, reduction=r),
    "triplet": lambda F, x1, x2, x3, s, p, r: F.triplet_margin_loss(x1, x2, x3, reduction=r),
    "triplet_swap_p1": lambda F, x1, x2, x3, s, p, r: F.triplet_margin_loss(
        x1, x2, x3, p=1, swap=True, reduction=r),
    "poisson_log": lambda F, x1, x2, x3, s, p, r: F.poisson_nll_loss(x1, p, reduction=r),
    "poisson_full": lambda F, x1, x2, x3, s, p, r: F.poisson_nll_loss(
        x1.abs() + 0.1, p, log_input=False, full=True, reduction=r),
    "gaussian": lambda F, x1, x2, x3, s, p, r: F.gaussian_nll_loss(
        x1, x2, x3.abs(), full=True, reduction=r),
    "gaussian_var_per_row": lambda F, x1, x2, x3, s, p, r: F.gaussian_nll_loss(
        x1, x2, x3[:, 0].abs() + 0.5, reduction=r),
    "multilabel_soft_margin": lambda F, x1, x2, x3, s, p, r: F.multilabel_soft_margin_loss(
        x1, (p > 1).float(), reduction=r),
}


def _run(L, name, reduction, compile_=False):
    x1, x2, x3, s, p = _inputs(L)
    fn = CASES[name]
    if compile_:
        fn = mtc.compile(fn)
    out = fn(L.nn.functional, x1, x2, x3, s, p, reduction)
    out.sum().backward()
    return [out.detach().numpy()] + [x.grad.numpy() if x.grad is not None else np.zeros(1)
                                     for x in (x1, x2, x3)]


def test_formulas_against_numpy():
    x1, x2, x3, s, p = _inputs(mtc)
    a, b, y = x1.detach().numpy(), x2.detach().numpy(), s.numpy()
    got = mtc.nn.functional.margin_ranking_loss(x1[:, 0], x2[:, 0], s, 0.3, reduction="none")
    np.testing.assert_allclose(got.detach().numpy(),
                               np.maximum(0, -y * (a[:, 0] - b[:, 0]) + 0.3), rtol=1e-6)
    got = mtc.nn.functional.soft_margin_loss(x1, s[:, None].expand(4, 5), reduction="sum")
    np.testing.assert_allclose(got.item(), np.log1p(np.exp(-y[:, None] * a)).sum(), rtol=1e-5)
    assert repr(mtc.nn.TripletMarginLoss()) == "TripletMarginLoss()"
    with pytest.raises(ValueError, match="margin to be greater than 0"):
        mtc.nn.TripletMarginLoss(margin=0)


@pytest.mark.parametrize("name", ["triplet", "cosine_embedding", "poisson_log"])
def test_compiled_equals_eager(name):
    mtc.dynamo.reset()
    for a, b in zip(_run(mtc, name, "mean"), _run(mtc, name, "mean", compile_=True)):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_torch(name, reduction):
    torch = pytest.importorskip("torch")
    for a, b in zip(_run(torch, name, reduction), _run(mtc, name, reduction)):
        assert a.shape == b.shape
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6)
