"""``nn.RNN``/``LSTM``/``GRU`` and their cells: torch's parameter names, order, seeded values
and repr; outputs, states and gradients equal to torch's (dropout between layers included);
compiled equal to eager."""

from __future__ import annotations

import numpy as np
import pytest

import minitorch_compile as mtc

CASES = {
    "rnn": ("RNN", dict(input_size=3, hidden_size=4), (5, 2, 3), False),
    "rnn_relu_2layers_h0": ("RNN", dict(input_size=3, hidden_size=4, nonlinearity="relu",
                                        num_layers=2), (5, 2, 3), True),
    "lstm": ("LSTM", dict(input_size=3, hidden_size=4), (5, 2, 3), False),
    "lstm_bidirectional_batch_first": ("LSTM", dict(input_size=3, hidden_size=4, num_layers=2,
                                                    bidirectional=True, batch_first=True),
                                       (2, 5, 3), True),
    "lstm_dropout": ("LSTM", dict(input_size=3, hidden_size=4, num_layers=2, dropout=0.3),
                     (5, 2, 3), False),
    "gru_h0": ("GRU", dict(input_size=3, hidden_size=4), (5, 2, 3), True),
    "gru_unbatched_no_bias": ("GRU", dict(input_size=3, hidden_size=4, bidirectional=True,
                                          bias=False), (5, 3), False),
    "rnn_cell": ("RNNCell", dict(input_size=3, hidden_size=4), (2, 3), True),
    "lstm_cell": ("LSTMCell", dict(input_size=3, hidden_size=4), (2, 3), True),
    "gru_cell_unbatched": ("GRUCell", dict(input_size=3, hidden_size=4), (3,), False),
}


def _flat(o):
    return [t for v in o for t in _flat(v)] if isinstance(o, tuple) else [o]


def _run(L, cls, cfg, shape, with_h, compile_=False):
    L.manual_seed(0)
    m = getattr(L.nn, cls)(**cfg)
    L.manual_seed(1)
    x = L.randn(*shape, requires_grad=True)
    args = [x]
    if with_h:
        if "Cell" in cls:
            hshape = (shape[0], cfg["hidden_size"])
        else:
            d = (2 if cfg.get("bidirectional") else 1) * cfg.get("num_layers", 1)
            hshape = (d, shape[0] if cfg.get("batch_first") else shape[1], cfg["hidden_size"])
        h = L.randn(*hshape)
        args.append((h, L.randn(*hshape)) if "LSTM" in cls else h)
    outs = _flat((mtc.compile(m) if compile_ else m)(*args))
    sum(o.sum() for o in outs).backward()
    return dict(outs=[o.detach().numpy() for o in outs], x_grad=x.grad.numpy(),
                grads=[p.grad.numpy() for p in m.parameters()],
                params=[(n, p.detach().numpy()) for n, p in m.named_parameters()], repr=repr(m))


def test_parameters_and_repr():
    m = mtc.nn.LSTM(3, 4, num_layers=2, bidirectional=True)
    names = [n for n, _ in m.named_parameters()]
    assert names[:4] == ["weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0"]
    assert names[4] == "weight_ih_l0_reverse" and len(names) == 16
    assert tuple(m.weight_ih_l1.shape) == (16, 8)
    assert repr(m) == "LSTM(3, 4, num_layers=2, bidirectional=True)"
    assert repr(mtc.nn.RNNCell(3, 4, nonlinearity="relu")) == \
        "RNNCell(3, 4, nonlinearity=relu)"


@pytest.mark.parametrize("case", sorted(CASES))
def test_compiled_equals_eager(case):
    mtc.dynamo.reset()
    eager, compiled = _run(mtc, *CASES[case]), _run(mtc, *CASES[case], compile_=True)
    for a, b in zip(eager["outs"] + [eager["x_grad"]] + eager["grads"],
                    compiled["outs"] + [compiled["x_grad"]] + compiled["grads"]):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("case", sorted(CASES))
def test_matches_torch(case):
    torch = pytest.importorskip("torch")
    t, m = _run(torch, *CASES[case]), _run(mtc, *CASES[case])
    assert t["repr"] == m["repr"]
    assert [n for n, _ in t["params"]] == [n for n, _ in m["params"]]
    for (_, a), (_, b) in zip(t["params"], m["params"]):
        np.testing.assert_array_equal(b, a)
    assert len(t["outs"]) == len(m["outs"])
    for a, b in zip(t["outs"] + [t["x_grad"]] + t["grads"],
                    m["outs"] + [m["x_grad"]] + m["grads"]):
        assert a.shape == b.shape
        np.testing.assert_allclose(b, a, rtol=1e-4, atol=1e-5)
