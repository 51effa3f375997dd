"""Public functions torch writes in Python over ops the table already has (``torch/
functional.py``, ``torch/_refs/__init__.py``, ``torch/_tensor.py``):

* indexing and splitting — ``nonzero(as_tuple=True)``/``argwhere``/``where(condition)``,
  ``masked_scatter``, ``tensor_split``/``hsplit``/``vsplit``, ``trace``;
* reductions — ``std_mean``; creation — ``eye``, ``logspace``;
* products — ``dot`` (torch's checks and messages);
* elementwise — ``isin``, ``copysign``, the shifts ``<<``/``>>``
  (``bitwise_left_shift``/``bitwise_right_shift``: integer multiplication and floor division);
* shapes — ``broadcast_tensors``, ``moveaxis``; and ``can_cast``.

(The one-line aliases — ``nansum``, ``mv``, ``ravel``, ``swapaxes`` ... — are in
``_api_more.py``; ``deg2rad``/``rad2deg`` are op-table rows, ``ops/pointwise_trig.py``.)

Each is a composition of table ops, so autograd, tracing and compiling see those ops — the
graph and the ``grad_fn`` names are those of the pieces (``trace`` records ``IndexBackward0``
and ``SumBackward0`` where torch records ``TraceBackward0``; the gradients are the same).
``_api`` imports this module at its end.
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


def moveaxis(input: Tensor, source, destination) -> Tensor:  # noqa: A002
    return input.movedim(source, destination)


# ---------------------------------------------------------------- creation


def eye(n: int, m: int | None = None, *, dtype=None, device=None,
        requires_grad: bool = False) -> Tensor:
    """The identity: ``arange(n)[:, None] == arange(m)``, as ``dtype`` (default float)."""
    from ._api import arange

    m = n if m is None else m
    out = (arange(n, device=device)[:, None] == arange(m, device=device)).to(
        dtype or _dtype.get_default_dtype())
    return out.requires_grad_() if requires_grad else out


def logspace(start, end, steps: int, base: float = 10.0, *, dtype=None) -> Tensor:
    from ._api import linspace

    return (base ** linspace(start, end, steps, dtype=_dtype.float64)).to(
        dtype or _dtype.get_default_dtype())


# ---------------------------------------------------------------- nan-aware reductions


# ---------------------------------------------------------------- products and shapes


def _vectors(name: str, a: Tensor, b: Tensor) -> None:
    if a.ndim != 1 or b.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {a.ndim}D and {b.ndim}D tensors")
    if a.dtype is not b.dtype:
        raise RuntimeError(f"{name} : expected both vectors to have same dtype, but found "
                           f"{_dtype.scalar_type_name(a.dtype)} and "
                           f"{_dtype.scalar_type_name(b.dtype)}")
    if a.shape[0] != b.shape[0]:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{a.shape[0]}] and src "
                           f"[{b.shape[0]}] to have the same number of elements, but got "
                           f"{a.shape[0]} and {b.shape[0]} elements respectively")


def dot(input: Tensor, other: Tensor) -> Tensor:  # noqa: A002
    _vectors("dot", input, other)
    return (input * other).sum(dtype=input.dtype)


def trace(input: Tensor) -> Tensor:  # noqa: A002
    """The sum of the main diagonal of a matrix (integers sum to int64)."""
    if input.ndim != 2:
        raise RuntimeError("trace: expected a matrix, but got tensor with dim "
                           f"{input.ndim}")
    from ._api import arange

    idx = arange(min(input.shape))
    return _aten.index(input, [idx, idx]).sum()


def broadcast_tensors(*tensors) -> tuple:
    from ._api import broadcast_shapes

    shape = broadcast_shapes(*(tuple(t.shape) for t in tensors))
    return tuple(t.expand(*shape) for t in tensors)


def hsplit(input: Tensor, indices_or_sections):  # noqa: A002
    return tensor_split(input, indices_or_sections, 1 if input.ndim > 1 else 0)


def vsplit(input: Tensor, indices_or_sections):  # noqa: A002
    return tensor_split(input, indices_or_sections, 0)


# ---------------------------------------------------------------- elementwise


def isin(elements: Tensor, test_elements, *, invert: bool = False) -> Tensor:
    """Whether each element is among ``test_elements`` (a tensor or a number)."""
    from ._api import tensor as tensor_

    test = test_elements if isinstance(test_elements, Tensor) else tensor_(test_elements)
    hit = (elements.unsqueeze(-1) == test.reshape(-1)).any(-1)
    return hit.logical_not() if invert else hit


def copysign(input: Tensor, other) -> Tensor:  # noqa: A002
    """``|input|`` with ``other``'s sign bit (so ``-0.0`` counts as negative)."""
    from ._api import tensor as tensor_

    sign_of = other if isinstance(other, Tensor) else tensor_(float(other))
    mag = input.abs() if input.dtype.is_floating_point else input.to(
        _dtype.get_default_dtype()).abs()
    return _aten.where(sign_of.signbit(), -mag, mag)


def _shift_operands(name: str, input, other):
    from ._api import tensor as tensor_

    for t in (input, other):
        if isinstance(t, Tensor) and t.dtype.is_floating_point:
            raise NotImplementedError(f'"{name}_cpu" not implemented for '
                                      f"'{_dtype.scalar_type_name(t.dtype)}'")
    if not isinstance(other, Tensor):
        other = tensor_(other, dtype=input.dtype)
    return input, other


def bitwise_left_shift(input, other) -> Tensor:  # noqa: A002
    """``input * 2**other`` for integers (``<<``); the result keeps the promoted dtype."""
    input, other = _shift_operands("lshift", input, other)
    return input * (2 ** other)


def bitwise_right_shift(input, other) -> Tensor:  # noqa: A002
    """``floor(input / 2**other)`` for integers (``>>`` is arithmetic: ``-5 >> 1 == -3``)."""
    input, other = _shift_operands("rshift", input, other)
    return _aten.div(input, 2 ** other, rounding_mode="floor")


__all__ = ["eye", "logspace", "dot", "trace", "broadcast_tensors", "hsplit", "vsplit", "isin",
           "copysign", "bitwise_left_shift", "bitwise_right_shift", "moveaxis", "nonzero",
           "argwhere", "std_mean", "masked_scatter", "tensor_split", "can_cast"]
