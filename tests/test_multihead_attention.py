"""``nn.MultiheadAttention``: torch's parameters (names, shapes, seeded values), torch's outputs,
attention weights and gradients for each option, and compiled equal to eager."""

from __future__ import annotations

import numpy as np
import pytest

import minitorch_compile as mtc

CAUSAL = np.triu(np.ones((4, 4), bool), 1).tolist()
CASES = {
    "self": (dict(embed_dim=8, num_heads=2), dict(q=(4, 3, 8))),
    "batch_first": (dict(embed_dim=8, num_heads=2, batch_first=True), dict(q=(3, 4, 8))),
    "cross": (dict(embed_dim=8, num_heads=4), dict(q=(4, 3, 8), k=(5, 3, 8), v=(5, 3, 8))),
    "causal_mask": (dict(embed_dim=8, num_heads=2), dict(q=(4, 3, 8), kw=dict(mask=CAUSAL))),
    "no_weights": (dict(embed_dim=8, num_heads=2), dict(q=(4, 3, 8),
                                                       kw=dict(need_weights=False))),
    "no_weights_mask": (dict(embed_dim=8, num_heads=2),
                        dict(q=(4, 3, 8), kw=dict(need_weights=False, mask=CAUSAL))),
    "per_head": (dict(embed_dim=8, num_heads=2),
                 dict(q=(4, 3, 8), kw=dict(average_attn_weights=False))),
    "padding": (dict(embed_dim=8, num_heads=2),
                dict(q=(4, 2, 8), kw=dict(kpm=[[False, False, True, True],
                                               [False, False, False, True]]))),
    "kdim_vdim": (dict(embed_dim=8, num_heads=2, kdim=6, vdim=5),
                  dict(q=(4, 3, 8), k=(5, 3, 6), v=(5, 3, 5))),
    "no_bias": (dict(embed_dim=8, num_heads=2, bias=False), dict(q=(4, 3, 8))),
    "unbatched": (dict(embed_dim=8, num_heads=2), dict(q=(4, 8))),
}


def _run(L, cfg, call):
    L.manual_seed(0)
    m = L.nn.MultiheadAttention(**cfg)
    L.manual_seed(1)
    q = L.randn(*call["q"], requires_grad=True)
    k = L.randn(*call["k"]) if "k" in call else q
    v = L.randn(*call["v"]) if "v" in call else k
    kw = dict(call.get("kw", {}))
    if "mask" in kw:
        kw["attn_mask"] = L.tensor(kw.pop("mask"))
    if "kpm" in kw:
        kw["key_padding_mask"] = L.tensor(kw.pop("kpm"))
    out, w = m(q, k, v, **kw)
    out.sum().backward()
    grads = [p.grad.numpy() for p in m.parameters()]
    return dict(out=out.detach().numpy(), weights=None if w is None else w.detach().numpy(),
                q_grad=q.grad.numpy(), grads=grads,
                params=[(n, p.detach().numpy()) for n, p in m.named_parameters()])


def test_parameters_and_repr_are_torchs():
    m = mtc.nn.MultiheadAttention(8, 2)
    assert [(n, tuple(p.shape)) for n, p in m.named_parameters()] == [
        ("in_proj_weight", (24, 8)), ("in_proj_bias", (24,)), ("out_proj.weight", (8, 8)),
        ("out_proj.bias", (8,))]
    assert repr(m) == ("MultiheadAttention(\n  (out_proj): NonDynamicallyQuantizableLinear("
                       "in_features=8, out_features=8, bias=True)\n)")
    assert m.in_proj_bias.abs().sum().item() == 0 and m.out_proj.bias.abs().sum().item() == 0
    sep = mtc.nn.MultiheadAttention(8, 2, kdim=6, vdim=5)
    assert sep.in_proj_weight is None and tuple(sep.k_proj_weight.shape) == (8, 6)


@pytest.mark.parametrize("case", sorted(CASES))
def test_compiled_equals_eager(case):
    cfg, call = CASES[case]
    mtc.manual_seed(0)
    m = mtc.nn.MultiheadAttention(**cfg)
    mtc.manual_seed(1)
    q = mtc.randn(*call["q"])
    k = mtc.randn(*call["k"]) if "k" in call else q
    v = mtc.randn(*call["v"]) if "v" in call else k
    kw = dict(call.get("kw", {}))
    if "mask" in kw:
        kw["attn_mask"] = mtc.tensor(kw.pop("mask"))
    if "kpm" in kw:
        kw["key_padding_mask"] = mtc.tensor(kw.pop("kpm"))
    mtc.dynamo.reset()
    ref_out, ref_w = m(q, k, v, **kw)
    out, w = mtc.compile(m)(q, k, v, **kw)
    np.testing.assert_allclose(out.detach().numpy(), ref_out.detach().numpy(), rtol=1e-5,
                               atol=1e-6)
    assert (w is None) == (ref_w is None)
    if w is not None:
        np.testing.assert_allclose(w.detach().numpy(), ref_w.detach().numpy(), rtol=1e-5,
                                   atol=1e-6)


def test_bad_sizes_raise_torchs_errors():
    with pytest.raises(AssertionError, match="divisible"):
        mtc.nn.MultiheadAttention(8, 3)
    m = mtc.nn.MultiheadAttention(8, 2)
    with pytest.raises(RuntimeError, match="Need attn_mask"):
        m(mtc.ones(4, 1, 8), mtc.ones(4, 1, 8), mtc.ones(4, 1, 8), is_causal=True)


@pytest.mark.parametrize("case", sorted(CASES))
def test_matches_torch(case):
    torch = pytest.importorskip("torch")
    t, m = _run(torch, *CASES[case]), _run(mtc, *CASES[case])
    assert [n for n, _ in t["params"]] == [n for n, _ in m["params"]]
    for (_, a), (_, b) in zip(t["params"], m["params"]):
        np.testing.assert_array_equal(b, a)  # seeded initial values are torch's bits
    for key in ("out", "weights", "q_grad"):
        if t[key] is None:
            assert m[key] is None
        else:
            np.testing.assert_allclose(m[key], t[key], rtol=1e-4, atol=1e-5)
    for a, b in zip(t["grads"], m["grads"]):
        np.testing.assert_allclose(b, a, rtol=1e-4, atol=1e-5)
