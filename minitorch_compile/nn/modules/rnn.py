"""Recurrent layers: ``nn.RNN``, ``nn.LSTM``, ``nn.GRU`` and their cells (``torch/nn/modules/
rnn.py``), written as the per-step equations torch documents.

One step, for input ``x`` and hidden state ``h`` (``W x`` is ``linear(x, W, b)``)::

    RNN   h' = tanh(W_ih x + b_ih + W_hh h + b_hh)            (or relu)
    LSTM  i, f, g, o = chunk4(W_ih x + b_ih + W_hh h + b_hh)
          c' = sigmoid(f) c + sigmoid(i) tanh(g);  h' = sigmoid(o) tanh(c')
    GRU   r, z, n_i = chunk3(W_ih x + b_ih);  r_h, z_h, n_h = chunk3(W_hh h + b_hh)
          r = sigmoid(r + r_h);  z = sigmoid(z + z_h);  n = tanh(n_i + r n_h)
          h' = (1 - z) n + z h

A layer runs the step over the sequence (backwards too when ``bidirectional``, concatenating
the two directions' outputs); ``num_layers`` layers feed each other, with dropout between them
in training.  Parameters are named, ordered and initialised as torch's (``weight_ih_l0``,
``weight_hh_l0``, ``bias_ih_l0``, ``bias_hh_l0``, ``..._reverse``; every one ``U(-1/sqrt(H),
1/sqrt(H))`` in that order), so a seeded layer holds torch's weights.  Shapes: ``(L, N, H_in)``,
``(N, L, H_in)`` with ``batch_first``, or ``(L, H_in)`` unbatched; states ``(D * layers, N,
H)``.  Not modelled: ``PackedSequence`` inputs and ``proj_size``.
"""

from __future__ import annotations

import math

from ... import _api
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


def _rnn_step(act):
    def step(x, h, w_ih, w_hh, b_ih, b_hh):
        return act(F.linear(x, w_ih, b_ih) + F.linear(h, w_hh, b_hh))
    return step


def _lstm_step(x, state, w_ih, w_hh, b_ih, b_hh):
    h, c = state
    i, f, g, o = (F.linear(x, w_ih, b_ih) + F.linear(h, w_hh, b_hh)).chunk(4, -1)
    c = f.sigmoid() * c + i.sigmoid() * g.tanh()
    return o.sigmoid() * c.tanh(), c


def _gru_step(x, h, w_ih, w_hh, b_ih, b_hh):
    r_i, z_i, n_i = F.linear(x, w_ih, b_ih).chunk(3, -1)
    r_h, z_h, n_h = F.linear(h, w_hh, b_hh).chunk(3, -1)
    r, z = (r_i + r_h).sigmoid(), (z_i + z_h).sigmoid()
    n = (n_i + r * n_h).tanh()
    return (1 - z) * n + z * h


_STEPS = {"RNN_TANH": _rnn_step(_api.tanh), "RNN_RELU": _rnn_step(F.relu), "LSTM": _lstm_step,
          "GRU": _gru_step}


class RNNBase(Module):
    def __init__(self, mode: str, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, proj_size: int = 0, device=None,
                 dtype=None) -> None:
        super().__init__()
        if proj_size:
            raise NotImplementedError("LSTM proj_size is not supported")
        if not 0 <= dropout <= 1 or isinstance(dropout, bool):
            raise ValueError("dropout should be a number in range [0, 1] representing the "
                             "probability of an element being zeroed")
        if hidden_size <= 0 or num_layers <= 0:
            raise ValueError("hidden_size and num_layers must be greater than 0")
        self.mode, self.input_size, self.hidden_size = mode, input_size, hidden_size
        self.num_layers, self.bias, self.batch_first = num_layers, bias, batch_first
        self.dropout, self.bidirectional, self.proj_size = float(dropout), bidirectional, 0
        directions = 2 if bidirectional else 1
        gate = _GATES[mode] * hidden_size
        factory = dict(device=device, dtype=dtype)
        self._flat_weights_names = []
        for layer in range(num_layers):
            for d in range(directions):
                size_in = input_size if layer == 0 else hidden_size * directions
                suffix = f"_l{layer}" + ("_reverse" if d == 1 else "")
                shapes = [("weight_ih", (gate, size_in)), ("weight_hh", (gate, hidden_size))]
                if bias:
                    shapes += [("bias_ih", (gate,)), ("bias_hh", (gate,))]
                for name, shape in shapes:
                    setattr(self, name + suffix, Parameter(_api.empty(*shape, **factory)))
                    self._flat_weights_names.append(name + suffix)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size)
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if not self.bias:
            s += ", bias=False"
        if self.batch_first:
            s += ", batch_first=True"
        if self.dropout:
            s += f", dropout={self.dropout}"
        if self.bidirectional:
            s += ", bidirectional=True"
        return s

    def _weights(self, layer: int, d: int):
        suffix = f"_l{layer}" + ("_reverse" if d == 1 else "")
        get = lambda name: getattr(self, name + suffix)  # noqa: E731
        return (get("weight_ih"), get("weight_hh"),
                get("bias_ih") if self.bias else None, get("bias_hh") if self.bias else None)

    def forward(self, input, hx=None):  # noqa: A002 - torch's name
        batched = input.dim() == 3
        if not batched:
            input = input.unsqueeze(1)
        elif self.batch_first:
            input = input.transpose(0, 1)
        directions = 2 if self.bidirectional else 1
        lstm = self.mode == "LSTM"
        if hx is None:
            zeros = _api.zeros(self.num_layers * directions, input.shape[1], self.hidden_size,
                               dtype=input.dtype, device=input.device)
            hx = (zeros, zeros) if lstm else zeros
        elif not batched:
            hx = tuple(h.unsqueeze(1) for h in hx) if lstm else hx.unsqueeze(1)
        step = _STEPS[self.mode]
        finals, x = [], input
        for layer in range(self.num_layers):
            outs = []
            for d in range(directions):
                k = layer * directions + d
                state = (hx[0][k], hx[1][k]) if lstm else hx[k]
                w = self._weights(layer, d)
                seq = []
                for t in (range(x.shape[0]) if d == 0 else range(x.shape[0] - 1, -1, -1)):
                    state = step(x[t], state, *w)
                    seq.append(state[0] if lstm else state)
                outs.append(_api.stack(seq if d == 0 else seq[::-1]))
                finals.append(state)
            x = outs[0] if directions == 1 else _api.cat(outs, -1)
            if self.dropout and self.training and layer < self.num_layers - 1:
                x = F.dropout(x, self.dropout, True)
        if lstm:
            h_n = (_api.stack([s[0] for s in finals]), _api.stack([s[1] for s in finals]))
        else:
            h_n = _api.stack(finals)
        if not batched:
            x = x.squeeze(1)
            h_n = tuple(h.squeeze(1) for h in h_n) if lstm else h_n.squeeze(1)
        elif self.batch_first:
            x = x.transpose(0, 1)
        return x, h_n


class RNN(RNNBase):
    def __init__(self, *args, nonlinearity: str = "tanh", **kwargs) -> None:
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or "
                             "'relu'.")
        super().__init__("RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU", *args, **kwargs)
        self.nonlinearity = nonlinearity


class LSTM(RNNBase):
    def __init__(self, *args, **kwargs) -> None:
        super().__init__("LSTM", *args, **kwargs)


class GRU(RNNBase):
    def __init__(self, *args, **kwargs) -> None:
        super().__init__("GRU", *args, **kwargs)


class RNNCellBase(Module):
    def __init__(self, mode: str, input_size: int, hidden_size: int, bias: bool = True,
                 device=None, dtype=None) -> None:
        super().__init__()
        self.mode, self.input_size, self.hidden_size, self.bias = mode, input_size, \
            hidden_size, bias
        gate = _GATES[mode] * hidden_size
        factory = dict(device=device, dtype=dtype)
        self.weight_ih = Parameter(_api.empty(gate, input_size, **factory))
        self.weight_hh = Parameter(_api.empty(gate, hidden_size, **factory))
        if bias:
            self.bias_ih = Parameter(_api.empty(gate, **factory))
            self.bias_hh = Parameter(_api.empty(gate, **factory))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        stdv = 1.0 / math.sqrt(hidden_size)
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def extra_repr(self) -> str:
        return f"{self.input_size}, {self.hidden_size}" + ("" if self.bias else ", bias=False")

    def forward(self, input, hx=None):  # noqa: A002 - torch's name
        batched = input.dim() == 2
        if not batched:
            input = input.unsqueeze(0)
        lstm = self.mode == "LSTM"
        if hx is None:
            zeros = _api.zeros(input.shape[0], self.hidden_size, dtype=input.dtype,
                               device=input.device)
            hx = (zeros, zeros) if lstm else zeros
        elif not batched:
            hx = tuple(h.unsqueeze(0) for h in hx) if lstm else hx.unsqueeze(0)
        out = _STEPS[self.mode](input, hx, self.weight_ih, self.weight_hh, self.bias_ih,
                                self.bias_hh)
        if not batched:
            out = tuple(o.squeeze(0) for o in out) if lstm else out.squeeze(0)
        return out


class RNNCell(RNNCellBase):
    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 nonlinearity: str = "tanh", device=None, dtype=None) -> None:
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity: {nonlinearity}")
        super().__init__("RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU", input_size,
                         hidden_size, bias, device, dtype)
        self.nonlinearity = nonlinearity

    def extra_repr(self) -> str:
        s = super().extra_repr()
        return s + (f", nonlinearity={self.nonlinearity}" if self.nonlinearity != "tanh" else "")


class LSTMCell(RNNCellBase):
    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None,
                 dtype=None) -> None:
        super().__init__("LSTM", input_size, hidden_size, bias, device, dtype)


class GRUCell(RNNCellBase):
    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None,
                 dtype=None) -> None:
        super().__init__("GRU", input_size, hidden_size, bias, device, dtype)
