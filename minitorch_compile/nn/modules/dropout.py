"""``nn.Dropout`` (``torch/nn/modules/dropout.py``).

While ``self.training`` is true, each element is zeroed with probability ``p`` and the
survivors are scaled by ``1/(1-p)`` so the expected activation is unchanged; after
``model.eval()`` it is the identity.  This is the canonical reader of the ``training`` flag
that ``Module.train()``/``eval()`` set.
"""

from __future__ import annotations

from ..._tensor import Tensor
from .. import functional as F
from .module import Module


class Dropout(Module):
    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002 - torch's name
        return F.dropout(input, self.p, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"
