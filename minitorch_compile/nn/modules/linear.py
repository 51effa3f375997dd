"""``nn.Linear`` and ``nn.Identity`` (``torch/nn/modules/linear.py``).

``Linear(in_features, out_features)`` holds ``weight`` of shape ``(out_features, in_features)``
and ``bias`` of shape ``(out_features,)`` and computes ``y = x W^T + b`` over any leading
dims.  Its default init is torch's: ``kaiming_uniform_(weight, a=sqrt(5))``, which works out to
``U(-1/sqrt(in_features), 1/sqrt(in_features))``, and the bias from the same range.
"""

from __future__ import annotations

import math

from ... import _api
from ..._tensor import Tensor
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module


class Identity(Module):
    """Returns its input; accepts (and ignores) any constructor arguments."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__()

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002 - torch's name
        return input


class Linear(Module):
    """y = x W^T + b."""

    def __init__(self, in_features: int, out_features: int, bias: bool = True,
                 device=None, dtype=None) -> None:
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        factory = dict(device=device, dtype=dtype)
        self.weight = Parameter(_api.empty(out_features, in_features, **factory))
        if bias:
            self.bias = Parameter(_api.empty(out_features, **factory))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")
