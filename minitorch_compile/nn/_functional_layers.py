"""``nn.functional``'s layer functions over windows: convolution, pooling, padding
(``torch/nn/functional.py``; re-exported by ``functional.py``).

Same contract as ``functional.py``: torch's signatures and keyword names, each a thin adapter
over one op of the op table (``ops/conv.py``, ``ops/pooling.py``, ``ops/padding.py``) that
fills in the Python-level conveniences (``stride=None`` means "the kernel size",
``return_indices``, ``output_size`` entries of ``None``).
"""

from __future__ import annotations

from .._tensor import Tensor
from ..ops._ops import ops

_aten = ops.aten

__all__ = ["conv1d", "conv2d", "conv_transpose1d", "conv_transpose2d", "max_pool1d",
           "max_pool2d", "avg_pool1d", "avg_pool2d", "adaptive_avg_pool1d",
           "adaptive_avg_pool2d", "pad"]

# ---------------------------------------------------------------- convolution


def _conv(nd):
    def conv(input: Tensor, weight: Tensor, bias: Tensor | None = None,  # noqa: A002
             stride=1, padding=0, dilation=1, groups: int = 1) -> Tensor:
        packet = getattr(_aten, f"conv{nd}d")
        if isinstance(padding, str):
            return packet.padding(input, weight, bias, stride, padding, dilation, groups)
        return packet.default(input, weight, bias, stride, padding, dilation, groups)
    conv.__name__ = conv.__qualname__ = f"conv{nd}d"
    conv.__doc__ = (f"{nd}-d cross-correlation of ``input`` (N, C_in, *spatial) with ``weight`` "
                    f"(C_out, C_in/groups, *k), plus ``bias``; ``padding`` may be 'same' or "
                    "'valid'.")
    return conv


conv1d = _conv(1)
conv2d = _conv(2)


def _conv_transpose(nd):
    def conv_transpose(input: Tensor, weight: Tensor, bias: Tensor | None = None,  # noqa: A002
                       stride=1, padding=0, output_padding=0, groups: int = 1,
                       dilation=1) -> Tensor:
        packet = getattr(_aten, f"conv_transpose{nd}d")  # torch's overload names
        return (packet.input if nd == 2 else packet.default)(
            input, weight, bias, stride, padding, output_padding, groups, dilation)
    conv_transpose.__name__ = conv_transpose.__qualname__ = f"conv_transpose{nd}d"
    conv_transpose.__doc__ = (f"The {nd}-d transposed convolution (the gradient of ``conv{nd}d`` "
                              "with respect to its input); ``weight`` is (C_in, C_out/groups, "
                              "*k).")
    return conv_transpose


conv_transpose1d = _conv_transpose(1)
conv_transpose2d = _conv_transpose(2)

# ---------------------------------------------------------------- pooling


def _stride(stride):
    return [] if stride is None else stride


def max_pool2d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1,  # noqa: A002
               ceil_mode: bool = False, return_indices: bool = False):
    """The max of each window; with ``return_indices``, also its flat position in the plane."""
    if return_indices:
        return _aten.max_pool2d_with_indices(input, kernel_size, _stride(stride), padding,
                                             dilation, ceil_mode)
    return _aten.max_pool2d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)


def max_pool1d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1,  # noqa: A002
               ceil_mode: bool = False, return_indices: bool = False):
    if return_indices:
        return _aten.max_pool1d_with_indices(input, kernel_size, _stride(stride), padding,
                                             dilation, ceil_mode)
    return _aten.max_pool1d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)


def avg_pool2d(input: Tensor, kernel_size, stride=None, padding=0,  # noqa: A002
               ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override: int | None = None) -> Tensor:
    """The mean of each window (padding counted unless ``count_include_pad=False``)."""
    return _aten.avg_pool2d(input, kernel_size, _stride(stride), padding, ceil_mode,
                            count_include_pad, divisor_override)


def avg_pool1d(input: Tensor, kernel_size, stride=None, padding=0,  # noqa: A002
               ceil_mode: bool = False, count_include_pad: bool = True) -> Tensor:
    return _aten.avg_pool1d(input, kernel_size, _stride(stride), padding, ceil_mode,
                            count_include_pad)


def _output_size(input: Tensor, output_size, n: int) -> list:  # noqa: A002
    """An int repeats; a ``None`` entry keeps that input dim (torch's ``_list_with_default``)."""
    if isinstance(output_size, int):
        return [output_size] * n
    size = list(output_size)
    if len(size) != n:
        return size  # the op reports the length error
    return [input.shape[input.ndim - n + i] if s is None else s for i, s in enumerate(size)]


def adaptive_avg_pool2d(input: Tensor, output_size) -> Tensor:  # noqa: A002
    """Average over windows sized so the output is exactly ``output_size``."""
    return _aten.adaptive_avg_pool2d(input, _output_size(input, output_size, 2))


def adaptive_avg_pool1d(input: Tensor, output_size) -> Tensor:  # noqa: A002
    size = _output_size(input, output_size, 1)
    if input.ndim not in (2, 3):
        raise RuntimeError(f"adaptive_avg_pool1d() Expected 2D or 3D input tensor, but got "
                           f"{list(input.shape)}")
    return _aten.adaptive_avg_pool2d(input.unsqueeze(-2), [1, size[0]]).squeeze(-2)


# ---------------------------------------------------------------- padding


def pad(input: Tensor, pad, mode: str = "constant", value: float | None = None) -> Tensor:  # noqa: A002
    """Pad the last ``len(pad) // 2`` dims; ``pad`` lists (left, right) from the last dim."""
    return _aten.pad(input, list(pad), mode, value)
