"""``F.interpolate`` and ``nn.Upsample`` (``torch/nn/functional.py``,
``torch/nn/modules/upsampling.py``, ``aten/src/ATen/native/UpSample.h``): ``nearest`` and the
``linear``/``bilinear``/``trilinear`` modes, separable over the spatial dims.

Each output index along a dim reads input indices computed as torch computes them, in
float32 (torch's ``opmath`` for float tensors):

* ``nearest``: ``min(floor(out_index * scale), in - 1)`` with ``scale = in / out``, or
  ``1 / scale_factor`` when a scale factor is given (``nearest_idx``);
* linear, ``align_corners=False``: ``src = max(scale (out_index + 0.5) - 0.5, 0)``; with
  ``align_corners=True``: ``src = out_index (in - 1) / (out - 1)``; the output is
  ``(1 - l) x[i0] + l x[i1]`` with ``i0 = floor(src)``, ``i1 = min(i0 + 1, in - 1)``,
  ``l = src - i0`` (``area_pixel_compute_source_index``).

The gathers are ``index_select`` with constant indices and the weights constant tensors, so
the result differentiates and compiles like any composite.
"""

from __future__ import annotations

import math

import numpy as np

from ... import _api
from ..._tensor import Tensor
from .module import Module

_LINEAR = {"linear": 1, "bilinear": 2, "trilinear": 3}


def _scale(in_size: int, out_size: int, scale_factor, align_corners: bool) -> np.float32:
    if align_corners:
        return np.float32((in_size - 1) / (out_size - 1)) if out_size > 1 else np.float32(0)
    if scale_factor is not None:
        return np.float32(1.0 / scale_factor)
    return np.float32(in_size / out_size)


def _nearest(x: Tensor, dim: int, out_size: int, scale_factor) -> Tensor:
    in_size = x.shape[dim]
    scale = _scale(in_size, out_size, scale_factor, False)
    idx = np.minimum(np.floor(np.arange(out_size, dtype=np.float32) * scale).astype(np.int64),
                     in_size - 1)
    return x.index_select(dim, _api.tensor(idx))


def _linear(x: Tensor, dim: int, out_size: int, scale_factor, align_corners: bool) -> Tensor:
    in_size = x.shape[dim]
    scale = _scale(in_size, out_size, scale_factor, align_corners)
    out = np.arange(out_size, dtype=np.float32)
    src = out * scale if align_corners else \
        np.maximum(scale * (out + np.float32(0.5)) - np.float32(0.5), np.float32(0))
    i0 = np.minimum(src.astype(np.int64), in_size - 1)
    i1 = np.minimum(i0 + 1, in_size - 1)
    lam = (src - i0.astype(np.float32)).astype(x.dtype.np)
    shape = [1] * x.dim()
    shape[dim] = out_size
    w1 = _api.tensor(lam).reshape(shape)
    w0 = _api.tensor((1 - lam).astype(x.dtype.np)).reshape(shape)
    return w0 * x.index_select(dim, _api.tensor(i0)) + w1 * x.index_select(dim, _api.tensor(i1))


def interpolate(input: Tensor, size=None, scale_factor=None, mode: str = "nearest",  # noqa: A002
                align_corners=None, recompute_scale_factor=None, antialias: bool = False):
    spatial = input.dim() - 2
    if spatial < 1:
        raise ValueError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got "
                         f"{input.dim()}D) for the modes: nearest | linear | bilinear | "
                         f"bicubic | trilinear | area | nearest-exact (got {mode})")
    if mode not in ("nearest",) + tuple(_LINEAR):
        raise NotImplementedError(f"interpolate: mode {mode!r} is not supported")
    if mode in _LINEAR and _LINEAR[mode] != spatial:
        raise NotImplementedError(f"Got {input.dim()}D input, but {mode} mode needs "
                                  f"{_LINEAR[mode] + 2}D input")
    if mode == "nearest" and align_corners is not None:
        raise ValueError("align_corners option can only be set with the interpolating modes: "
                         "linear | bilinear | bicubic | trilinear")
    if (size is None) == (scale_factor is None):
        raise ValueError("only one of size or scale_factor should be defined")
    in_sizes = list(input.shape[2:])
    if size is not None:
        sizes = [size] * spatial if isinstance(size, int) else list(size)
        factors = [None] * spatial
    else:
        factors = [scale_factor] * spatial if not isinstance(scale_factor, (tuple, list)) \
            else list(scale_factor)
        sizes = [int(math.floor(n * f)) for n, f in zip(in_sizes, factors)]
        if recompute_scale_factor:
            factors = [None] * spatial
    out = input
    for k in range(spatial):
        dim = 2 + k
        if mode == "nearest":
            out = _nearest(out, dim, sizes[k], factors[k])
        else:
            out = _linear(out, dim, sizes[k], factors[k], bool(align_corners))
    return out


class Upsample(Module):
    def __init__(self, size=None, scale_factor=None, mode: str = "nearest",
                 align_corners=None, recompute_scale_factor=None) -> None:
        super().__init__()
        self.size, self.mode = size, mode
        self.scale_factor = float(scale_factor) if isinstance(scale_factor, (int, float)) \
            else (tuple(float(f) for f in scale_factor) if scale_factor else None)
        self.align_corners, self.recompute_scale_factor = align_corners, recompute_scale_factor

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return interpolate(input, self.size, self.scale_factor, self.mode, self.align_corners,
                           recompute_scale_factor=self.recompute_scale_factor)

    def extra_repr(self) -> str:
        info = f"scale_factor={self.scale_factor!r}" if self.scale_factor is not None \
            else f"size={self.size!r}"
        return info + f", mode={self.mode!r}"


class UpsamplingNearest2d(Upsample):
    def __init__(self, size=None, scale_factor=None) -> None:
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    def __init__(self, size=None, scale_factor=None) -> None:
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)
