"""``nn.TransformerEncoderLayer``/``nn.TransformerEncoder``: torch's parameters (seeded values
included), outputs and gradients — dropout masks too, since the random streams are torch's —
and compiled equal to eager."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import minitorch_compile as mtc

CAUSAL = np.triu(np.ones((5, 5), bool), 1).tolist()
PAD = [[False] * 4 + [True], [False] * 5]
CASES = {
    "post_norm": (dict(d_model=8, nhead=2, dim_feedforward=16, dropout=0.0), 0, {}, True),
    "dropout_train": (dict(d_model=8, nhead=2, dim_feedforward=16, dropout=0.1), 0, {}, True),
    "pre_norm_gelu_eval": (dict(d_model=8, nhead=2, dim_feedforward=16, batch_first=True,
                                norm_first=True, activation="gelu"), 0, {}, False),
    "stack_causal": (dict(d_model=8, nhead=2, dim_feedforward=16, dropout=0.0), 2,
                     dict(mask=CAUSAL), False),
    "stack_padding": (dict(d_model=8, nhead=2, dim_feedforward=16, dropout=0.0,
                           batch_first=True), 2, dict(src_key_padding_mask=PAD), True),
}


def _build(L, cfg, layers):
    L.manual_seed(0)
    layer = L.nn.TransformerEncoderLayer(**cfg)
    if not layers:
        return layer
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return L.nn.TransformerEncoder(layer, layers, norm=L.nn.LayerNorm(cfg["d_model"]))


def _run(L, cfg, layers, kw, train):
    m = _build(L, cfg, layers).train(train)
    L.manual_seed(1)
    shape = (2, 5, cfg["d_model"]) if cfg.get("batch_first") else (5, 2, cfg["d_model"])
    x = L.randn(*shape, requires_grad=True)
    out = m(x, **{k: L.tensor(v) for k, v in kw.items()})
    out.sum().backward()
    return dict(out=out.detach().numpy(), grad=x.grad.numpy(),
                params=[(n, p.detach().numpy()) for n, p in m.named_parameters()])


def test_stack_copies_one_layer_and_warns_as_torch():
    layer = mtc.nn.TransformerEncoderLayer(8, 2, dim_feedforward=16)
    with pytest.warns(UserWarning, match="self_attn.batch_first was not True"):
        enc = mtc.nn.TransformerEncoder(layer, 3)
    assert len(enc.layers) == 3 and enc.layers[0] is not layer
    assert mtc.equal(enc.layers[2].linear1.weight, layer.linear1.weight)
    names = [n for n, _ in layer.named_parameters()]
    assert names[:4] == ["self_attn.in_proj_weight", "self_attn.in_proj_bias",
                         "self_attn.out_proj.weight", "self_attn.out_proj.bias"]
    assert names[4:] == ["linear1.weight", "linear1.bias", "linear2.weight", "linear2.bias",
                         "norm1.weight", "norm1.bias", "norm2.weight", "norm2.bias"]


@pytest.mark.parametrize("case", ["post_norm", "pre_norm_gelu_eval", "stack_causal"])
def test_compiled_equals_eager(case):
    cfg, layers, kw, _ = CASES[case]
    m = _build(mtc, cfg, layers).eval()
    x = mtc.randn(*((2, 5, 8) if cfg.get("batch_first") else (5, 2, 8)))
    kw = {k: mtc.tensor(v) for k, v in kw.items()}
    mtc.dynamo.reset()
    np.testing.assert_allclose(mtc.compile(m)(x, **kw).detach().numpy(),
                               m(x, **kw).detach().numpy(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("case", sorted(CASES))
def test_matches_torch(case):
    torch = pytest.importorskip("torch")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = _run(torch, *CASES[case])
    m = _run(mtc, *CASES[case])
    assert [n for n, _ in t["params"]] == [n for n, _ in m["params"]]
    for (_, a), (_, b) in zip(t["params"], m["params"]):
        np.testing.assert_array_equal(b, a)
    np.testing.assert_allclose(m["out"], t["out"], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(m["grad"], t["grad"], rtol=1e-4, atol=1e-5)
