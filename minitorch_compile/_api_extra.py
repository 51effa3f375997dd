"""Public functions torch writes in Python over ops the table already has (``torch/
functional.py``, ``torch/_refs/__init__.py``): ``nonzero(as_tuple=True)``/``argwhere``/
``where(condition)``, ``std_mean``, ``masked_scatter``, ``tensor_split``, ``can_cast``.

Each is a composition of table ops, so autograd, tracing and compiling see those ops (a
``masked_scatter`` records ``IndexPutBackward0``, torch's ``MaskedScatterBackward0``; its
gradients are the same).  ``_api`` imports this module at its end.
"""

from __future__ import annotations

from . import _dtype
from ._tensor import Tensor
from .ops._ops import ops

_aten = ops.aten


def nonzero(input: Tensor, *, as_tuple: bool = False):  # noqa: A002
    """The indices of the non-zero elements: an ``(n, ndim)`` tensor, or (``as_tuple``) one
    index tensor per dim — a 0-dim input counts as 1-dim, as in torch."""
    if not as_tuple:
        return _aten.nonzero(input)
    return tuple(_aten.nonzero(input.reshape(1) if input.ndim == 0 else input).unbind(1))


def argwhere(input: Tensor) -> Tensor:  # noqa: A002
    return _aten.nonzero(input)


def std_mean(input: Tensor, dim=None, unbiased=None, keepdim=False, *,  # noqa: A002
             correction=None):
    """(std, mean) in one call: the square root of ``var_mean``'s variance."""
    from ._api import var_mean

    var, mean = var_mean(input, dim, unbiased, keepdim, correction=correction)
    return var.sqrt(), mean


def masked_scatter(input: Tensor, mask: Tensor, source: Tensor) -> Tensor:  # noqa: A002
    """``input`` with the elements where ``mask`` (broadcast to its shape) is true replaced, in
    row-major order, by the first elements of ``source``."""
    if mask.dtype is not _dtype.bool_:
        raise RuntimeError("masked_scatter_ only supports boolean masks, but got mask with "
                           f"dtype {_TORCH_NAMES.get(mask.dtype.name, mask.dtype.name)}")
    mask = mask.expand(input.shape) if tuple(mask.shape) != tuple(input.shape) else mask
    n = int(mask.sum().item())
    if source.numel() < n:
        raise RuntimeError("Number of elements of source < number of ones in mask")
    return input.index_put((mask,), source.reshape(-1)[:n].to(input.dtype))


_TORCH_NAMES = {"int64": "Long", "int32": "Int", "float32": "Float", "float64": "Double",
                "uint8": "Byte", "int8": "Char", "int16": "Short", "float16": "Half"}


def tensor_split(input: Tensor, indices_or_sections, dim: int = 0):  # noqa: A002
    """Sections of nearly equal size (the first ``n % sections`` one longer), or the pieces
    between the given indices; views made by ``narrow`` (torch's are ``SliceBackward0``)."""
    d = dim % max(input.ndim, 1)
    n = input.shape[d]
    if isinstance(indices_or_sections, int):
        sections = indices_or_sections
        if sections <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {sections}")
        size, extra = divmod(n, sections)
        bounds, start = [], 0
        for i in range(sections):
            stop = start + size + (1 if i < extra else 0)
            bounds.append((start, stop))
            start = stop
    else:
        cuts = [min(max(c if c >= 0 else c + n, 0), n) for c in indices_or_sections]
        edges = [0, *cuts, n]
        bounds = [(a, max(a, b)) for a, b in zip(edges, edges[1:])]
    return tuple(_aten.slice(input, d, a, b) for a, b in bounds)


def can_cast(from_: _dtype.dtype, to: _dtype.dtype) -> bool:
    """Whether ``copy_``/in-place ops may write ``from_`` into ``to``: never down a category
    (float -> integer, integer -> bool); any size within one."""
    return from_.category <= to.category


__all__ = ["nonzero", "argwhere", "std_mean", "masked_scatter", "tensor_split", "can_cast"]
