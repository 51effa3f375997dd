"""``nn.LayerNorm`` (``torch/nn/modules/normalization.py``).

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
