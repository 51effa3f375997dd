"""Small layers that are one functional call (torch's ``padding.py``, ``dropout.py``,
``distance.py``, ``pixelshuffle.py``, ``activation.py``): padding by a mode, channel-wise
dropout, ``CosineSimilarity``/``PairwiseDistance``, ``PixelShuffle``/``PixelUnshuffle`` and
``Softmax2d``.

Each is the formula of torch's functional form, composed of table ops:

* ``dropout1d/2d/3d`` zero whole channels: one Bernoulli draw per ``(N, C)``
  (``bernoulli_(1 - p)`` on a ``(N, C, 1, ...)`` tensor, torch's draw order), divided by
  ``1 - p``, broadcast over the spatial dims;
* ``pairwise_distance(x1, x2)`` is ``norm(x1 - x2 + eps, p, -1)``;
* ``pixel_shuffle(x, r)``: ``(N, C r^2, H, W) -> (N, C, H r, W r)`` by a reshape, a permute and
  a reshape (``pixel_unshuffle`` the inverse).
"""

from __future__ import annotations

import warnings

from ... import _api, _dtype
from .. import functional as F
from .module import Module

# ---------------------------------------------------------------- functional forms

_DROPOUT2D_3D = (
    "dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D dropout "
    "behavior is desired - input is interpreted as shape (N, C, L), where C is the channel dim. "
    "This behavior will change in a future release to interpret the input as one without a "
    "batch dimension, i.e. shape (C, H, W). To maintain the 1D channel-wise dropout behavior, "
    "please switch to using dropout1d instead.")


def _feature_dropout(name: str, spatial: int):
    def dropout(input, p: float = 0.5, training: bool = True, inplace: bool = False):  # noqa: A002
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        batched = input.dim() == spatial + 2
        if spatial == 2 and input.dim() == 3:  # torch's legacy reading of a 3-D input
            warnings.warn(_DROPOUT2D_3D, stacklevel=2)
            batched = True
        if not batched and input.dim() != spatial + 1:
            raise RuntimeError(f"{name}: Expected {spatial + 1}D or {spatial + 2}D input, but "
                               f"received a {input.dim()}D input")
        if not training or p == 0:
            return input
        x = input if batched else input.unsqueeze(0)
        shape = tuple(x.shape[:2]) + (1,) * (x.dim() - 2)
        keep = _api.ops.aten.bernoulli.p(_api.empty(shape, dtype=_dtype.bool_), 1 - p)
        out = x * (keep.to(x.dtype) / (1 - p)) if p < 1 else x * 0
        out = out if batched else out.squeeze(0)
        return input.copy_(out) if inplace else out
    dropout.__name__ = name
    return dropout


dropout1d = _feature_dropout("dropout1d", 1)
dropout2d = _feature_dropout("dropout2d", 2)
dropout3d = _feature_dropout("dropout3d", 3)


def pairwise_distance(x1, x2, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False):
    return _api.linalg.vector_norm(x1 - x2 + eps, p, -1, keepdim)


def pixel_shuffle(input, upscale_factor: int):  # noqa: A002
    r = upscale_factor
    *lead, c, h, w = input.shape
    if c % (r * r):
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be "
                           f"divisible by the square of upscale_factor, but input.size(-3)={c}"
                           f" is not divisible by {r * r}")
    n = len(lead)
    x = input.reshape(*lead, c // (r * r), r, r, h, w)
    x = x.permute(*range(n), n, n + 3, n + 1, n + 4, n + 2)
    return x.reshape(*lead, c // (r * r), h * r, w * r)


def pixel_unshuffle(input, downscale_factor: int):  # noqa: A002
    r = downscale_factor
    *lead, c, h, w = input.shape
    if h % r or w % r:
        raise RuntimeError(f"pixel_unshuffle expects height and width to be divisible by "
                           f"downscale_factor, but got height={h}, width={w}, "
                           f"downscale_factor={r}")
    n = len(lead)
    x = input.reshape(*lead, c, h // r, r, w // r, r)
    x = x.permute(*range(n), n, n + 2, n + 4, n + 1, n + 3)
    return x.reshape(*lead, c * r * r, h // r, w // r)


# ---------------------------------------------------------------- modules


class _Pad(Module):
    """``F.pad`` of the last ``dims`` dims by ``padding`` (one int: every side)."""

    mode, dims = "constant", 1

    def __init__(self, padding, value: float = 0.0) -> None:
        super().__init__()
        self.padding = (padding,) * (2 * self.dims) if isinstance(padding, int) \
            else tuple(padding)
        self.value = value

    def forward(self, input):  # noqa: A002
        if self.mode == "constant":
            return F.pad(input, self.padding, "constant", self.value)
        return F.pad(input, self.padding, self.mode)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class _ConstantPad(_Pad):
    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"


class _NoValuePad(_Pad):
    def __init__(self, padding) -> None:
        super().__init__(padding)


def _pad(name: str, base: type, mode: str, dims: int) -> type:
    return type(name, (base,), {"mode": mode, "dims": dims, "__module__": __name__})


ConstantPad1d = _pad("ConstantPad1d", _ConstantPad, "constant", 1)
ConstantPad2d = _pad("ConstantPad2d", _ConstantPad, "constant", 2)
ConstantPad3d = _pad("ConstantPad3d", _ConstantPad, "constant", 3)
ZeroPad1d = _pad("ZeroPad1d", _NoValuePad, "constant", 1)
ZeroPad2d = _pad("ZeroPad2d", _NoValuePad, "constant", 2)
ZeroPad3d = _pad("ZeroPad3d", _NoValuePad, "constant", 3)
ReflectionPad1d = _pad("ReflectionPad1d", _NoValuePad, "reflect", 1)
ReflectionPad2d = _pad("ReflectionPad2d", _NoValuePad, "reflect", 2)
ReplicationPad1d = _pad("ReplicationPad1d", _NoValuePad, "replicate", 1)
ReplicationPad2d = _pad("ReplicationPad2d", _NoValuePad, "replicate", 2)
CircularPad1d = _pad("CircularPad1d", _NoValuePad, "circular", 1)
CircularPad2d = _pad("CircularPad2d", _NoValuePad, "circular", 2)


class _DropoutNd(Module):
    fn = staticmethod(dropout2d)

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p, self.inplace = p, inplace

    def forward(self, input):  # noqa: A002
        return type(self).fn(input, self.p, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Dropout1d(_DropoutNd):
    fn = staticmethod(dropout1d)


class Dropout2d(_DropoutNd):
    fn = staticmethod(dropout2d)


class Dropout3d(_DropoutNd):
    fn = staticmethod(dropout3d)


class CosineSimilarity(Module):
    def __init__(self, dim: int = 1, eps: float = 1e-8) -> None:
        super().__init__()
        self.dim, self.eps = dim, eps

    def forward(self, x1, x2):
        return F.cosine_similarity(x1, x2, self.dim, self.eps)


class PairwiseDistance(Module):
    def __init__(self, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> None:
        super().__init__()
        self.norm, self.eps, self.keepdim = p, eps, keepdim

    def forward(self, x1, x2):
        return pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)


class PixelShuffle(Module):
    def __init__(self, upscale_factor: int) -> None:
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input):  # noqa: A002
        return pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self) -> str:
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    def __init__(self, downscale_factor: int) -> None:
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input):  # noqa: A002
        return pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self) -> str:
        return f"downscale_factor={self.downscale_factor}"


class Softmax2d(Module):
    def forward(self, input):  # noqa: A002
        if input.dim() not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.dim()}D "
                             "instead")
        return F.softmax(input, -3)
