"""``nn.Flatten`` (``torch/nn/modules/flatten.py``): merge dims ``start_dim..end_dim`` into one;
``nn.Unflatten`` splits one dim back into several.

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


class Unflatten(Module):
    """Split dim ``dim`` into ``unflattened_size`` (one entry may be -1): the inverse of
    ``Flatten``, ``(N, C*H*W) -> (N, C, H, W)``."""

    def __init__(self, dim: int, unflattened_size) -> None:
        super().__init__()
        self.dim = dim
        self.unflattened_size = tuple(unflattened_size)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        shape = list(input.shape)
        d = self.dim % len(shape) if -len(shape) <= self.dim < len(shape) else self.dim
        sizes = list(self.unflattened_size)
        known = 1
        for s in sizes:
            known *= s if s != -1 else 1
        total = shape[d]
        if sizes.count(-1) == 1 and known and total % known == 0:
            sizes[sizes.index(-1)] = total // known
        elif -1 in sizes or known != total:
            raise RuntimeError(f"unflatten: Provided sizes {list(self.unflattened_size)} don't "
                               f"multiply up to the size of dim {self.dim} ({total}) in the "
                               "input tensor")
        return input.reshape(shape[:d] + sizes + shape[d + 1:])

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"
