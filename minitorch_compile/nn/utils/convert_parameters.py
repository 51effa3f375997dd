"""``parameters_to_vector`` / ``vector_to_parameters`` (``torch/nn/utils/convert_parameters.py``):
all parameters as one flat vector (in order, each flattened) and back — used to treat a
model's weights as one point, e.g. for line searches or weight averaging."""

from __future__ import annotations

from ... import _api
from ..._tensor import Tensor


def parameters_to_vector(parameters) -> Tensor:
    return _api.cat([p.reshape(-1) for p in parameters])


def vector_to_parameters(vec: Tensor, parameters) -> None:
    """Write consecutive slices of ``vec`` into each parameter's ``data`` (no autograd)."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {type(vec).__name__}")
    offset = 0
    for p in parameters:
        n = p.numel()
        p.data = vec[offset:offset + n].view_as(p).data
        offset += n
