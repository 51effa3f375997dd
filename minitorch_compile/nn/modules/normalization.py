"""``nn.LayerNorm``, ``nn.GroupNorm``, ``nn.RMSNorm`` (``torch/nn/modules/normalization.py``).

Normalise over the trailing ``normalized_shape`` dims of each sample, then scale and shift::

    y = (x - E[x]) / sqrt(Var[x] + eps) * weight + bias        (Var is the biased variance)

``weight`` starts at ones and ``bias`` at zeros, so a fresh LayerNorm is pure normalisation.
``elementwise_affine=False`` drops both; ``bias=False`` drops only the shift.
"""

from __future__ import annotations

import numbers

from ... import _api
from ..._tensor import Tensor
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module


class LayerNorm(Module):
    def __init__(self, normalized_shape, eps: float = 1e-5, elementwise_affine: bool = True,
                 bias: bool = True, device=None, dtype=None) -> None:
        super().__init__()
        if isinstance(normalized_shape, numbers.Integral):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        factory = dict(device=device, dtype=dtype)
        if elementwise_affine:
            self.weight = Parameter(_api.empty(self.normalized_shape, **factory))
            if bias:
                self.bias = Parameter(_api.empty(self.normalized_shape, **factory))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.elementwise_affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002 - torch's name
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}, bias={self.bias is not None}")


class GroupNorm(Module):
    """Normalise each group of ``num_channels / num_groups`` channels per sample, then a
    per-channel affine (``weight`` ones, ``bias`` zeros at first)."""

    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5,
                 affine: bool = True, bias: bool = True, device=None, dtype=None) -> None:
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError(f"num_channels ({num_channels}) must be divisible by num_groups "
                             f"({num_groups})")
        self.num_groups, self.num_channels, self.eps, self.affine = (num_groups, num_channels,
                                                                     eps, affine)
        factory = dict(device=device, dtype=dtype)
        if affine:
            self.weight = Parameter(_api.ones(num_channels, **factory))
            self.bias = Parameter(_api.zeros(num_channels, **factory)) if bias else None
            if not bias:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        from .. import _functional_more as _Fm

        return _Fm.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, "
                f"bias={self.bias is not None}")


class RMSNorm(Module):
    """x / sqrt(mean(x^2) + eps) * weight over the trailing ``normalized_shape``."""

    def __init__(self, normalized_shape, eps: float | None = None,
                 elementwise_affine: bool = True, device=None, dtype=None) -> None:
        super().__init__()
        if isinstance(normalized_shape, numbers.Integral):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps, self.elementwise_affine = eps, elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(_api.ones(*self.normalized_shape, device=device,
                                              dtype=dtype))
        else:
            self.register_parameter("weight", None)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        from .. import _functional_more as _Fm

        return _Fm.rms_norm(input, list(self.normalized_shape), self.weight, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}")
