"""Padding: ``constant_pad_nd`` is a primitive; ``pad`` (``F.pad``'s op) decomposes.

Mirrors ``aten/src/ATen/native/PadNd.cpp``.  ``pad`` lists ``(left, right)`` pairs starting
from the **last** dim: ``pad=[1, 2, 3, 4]`` pads the last dim by 1/2 and the one before by 3/4.
A negative amount crops.  Modes:

* ``constant``: fill with ``value`` (``np.pad``); its gradient is the same op with every amount
  negated — padding's adjoint is cropping (torch's ``constant_pad_nd_backward``);
* ``reflect`` / ``replicate`` / ``circular``: an ``index_select`` per padded dim with an index
  list computed from the sizes alone (reflect of ``[a b c d]`` by 2: indices ``2 1 0 1 2 3 2 1``).
  Gathers need no backward of their own: ``index_select``'s scatter-add sums the gradient of
  every copy into its source.
"""

from __future__ import annotations

import numpy as np

from .table import COMPOSITE, INDEXING, TensorMeta, defop


def _check_pad(self, pad):
    if len(pad) % 2:
        raise RuntimeError(f"Length of pad must be even but instead it equals {len(pad)}")
    if len(pad) // 2 > self.ndim:
        raise RuntimeError("Length of pad should be no more than twice the number of dimensions "
                           f"of the input. Pad length is {len(pad)}while the input has "
                           f"{self.ndim}dimensions.")


def _padded_shape(self, pad):
    shape = list(self.shape)
    for i in range(len(pad) // 2):
        d = self.ndim - 1 - i
        new = shape[d] + pad[2 * i] + pad[2 * i + 1]
        if new < 0:
            raise RuntimeError(f"The input size {shape[d]}, plus negative padding {pad[2 * i]} "
                               f"and {pad[2 * i + 1]} resulted in a negative output size, which "
                               f"is invalid. Check dimension {d} of your input.")
        shape[d] = new
    return tuple(shape)


def _constant_pad_meta(self, pad, value=0):
    _check_pad(self, pad)
    return TensorMeta(_padded_shape(self, pad), self.dtype)


def _constant_pad_kernel(a, pad, value=0):
    widths = [(0, 0)] * a.ndim
    crop = [slice(None)] * a.ndim
    for i in range(len(pad) // 2):
        d = a.ndim - 1 - i
        lo, hi = pad[2 * i], pad[2 * i + 1]
        widths[d] = (max(lo, 0), max(hi, 0))
        crop[d] = slice(max(-lo, 0), a.shape[d] - max(-hi, 0))
    a = a[tuple(crop)]
    return np.pad(a, widths, constant_values=value) if any(map(any, widths)) else a.copy()


constant_pad_nd = defop(
    "constant_pad_nd(Tensor self, SymInt[] pad, Scalar value=0) -> Tensor", INDEXING,
    kernel=_constant_pad_kernel, meta=_constant_pad_meta,
    derivatives={"self": lambda grad, pad: constant_pad_nd(grad, [-p for p in pad])})


def _mode_indices(mode, n, lo, hi) -> np.ndarray:
    """The source index of each output position along one dim of size ``n``."""
    i = np.arange(-lo, n + hi)
    if mode == "reflect":
        period = 2 * (n - 1)
        i = np.abs(i) % period if period else np.zeros_like(i)
        return np.where(i >= n, period - i, i)
    if mode == "replicate":
        return np.clip(i, 0, n - 1)
    return i % n  # circular


# torch's dispatch by mode and padded dims: which input ranks each accepts
_MODE_RANKS = {1: (2, 3), 2: (3, 4), 3: (4, 5)}


def _pad(self, pad, mode="constant", value=None):
    from .._api import tensor

    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) // 2 > self.ndim:
        raise RuntimeError("Padding length should be less than or equal to two times the input "
                           f"dimension but got padding length {len(pad)} and input of dimension "
                           f"{self.ndim}")
    if mode == "constant":
        return constant_pad_nd(self, list(pad), 0 if value is None else value)
    if mode not in ("reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if value is not None and value != 0:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    k = len(pad) // 2
    if self.ndim not in _MODE_RANKS.get(k, ()):
        raise NotImplementedError(f"Padding size {len(pad)} is not supported for "
                                  f"{self.ndim}D input tensor.")
    out = self
    for i in range(k):
        d = self.ndim - 1 - i
        n, lo, hi = self.shape[d], pad[2 * i], pad[2 * i + 1]
        if mode == "reflect" and (lo >= n or hi >= n):
            raise RuntimeError(f"Argument #4: Padding size should be less than the corresponding "
                               f"input dimension, but got: padding ({lo}, {hi}) at dimension {d} "
                               f"of input [{', '.join(map(str, self.shape))}]")
        if n == 0:
            raise RuntimeError(f"Expected {k + 1}D or {k + 2}D (batch mode) tensor with possibly "
                               "0 batch size and other non-zero dimensions for input, but got: "
                               f"[{', '.join(map(str, self.shape))}]")
        idx = tensor(_mode_indices(mode, n, lo, hi), device=self.device)
        out = out.index_select(d, idx)
    return out


pad = defop("pad(Tensor self, SymInt[] pad, str mode=\"constant\", float? value=None) -> Tensor",
            COMPOSITE, decomposition=_pad)
