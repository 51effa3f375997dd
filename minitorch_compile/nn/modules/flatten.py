"""``nn.Flatten`` (``torch/nn/modules/flatten.py``): merge dims ``start_dim..end_dim`` into one.

The default ``start_dim=1`` keeps the batch dimension: ``(N, C, H, W) -> (N, C*H*W)``.
"""

from __future__ import annotations

from ..._tensor import Tensor
from .module import Module


class Flatten(Module):
    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002 - torch's name
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"
