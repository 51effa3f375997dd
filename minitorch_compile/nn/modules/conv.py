"""Convolution layers: ``Conv1d``, ``Conv2d``, ``ConvTranspose1d``, ``ConvTranspose2d``
(``torch/nn/modules/conv.py``).

A convolution layer owns ``weight`` of shape ``(out_channels, in_channels / groups, *k)``
(transposed: ``(in_channels, out_channels / groups, *k)``) and an optional ``bias`` of
``out_channels``, and calls ``F.conv{1,2}d``.  Initialisation is torch's: ``kaiming_uniform_``
with ``a = sqrt(5)`` (a bound of ``1 / sqrt(fan_in)``), the bias uniform in the same bound.
``padding_mode`` other than ``'zeros'`` pads with ``F.pad`` first and convolves unpadded.
"""

from __future__ import annotations

import math

from ... import _api
from ..._tensor import Tensor
from .. import _functional_layers as F
from .. import init
from ..parameter import Parameter
from .module import Module

_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


def _ntuple(v, n) -> tuple:
    return (v,) * n if isinstance(v, int) else tuple(v)


class _ConvNd(Module):
    _nd = 2
    transposed = False

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0,
                 dilation=1, groups: int = 1, bias: bool = True, padding_mode: str = "zeros",
                 output_padding=0, device=None, dtype=None) -> None:
        super().__init__()
        n = self._nd
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                raise ValueError(f"Invalid padding string {padding!r}, should be one of "
                                 "{'valid', 'same'}")
            if padding == "same" and any(s != 1 for s in _ntuple(stride, n)):
                raise ValueError("padding='same' is not supported for strided convolutions")
        if padding_mode not in _PADDING_MODES:
            raise ValueError(f"padding_mode must be one of {_PADDING_MODES}, but got "
                             f"padding_mode='{padding_mode}'")
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size = _ntuple(kernel_size, n)
        self.stride = _ntuple(stride, n)
        self.padding = padding if isinstance(padding, str) else _ntuple(padding, n)
        self.dilation = _ntuple(dilation, n)
        self.output_padding = _ntuple(output_padding, n)
        self.groups = groups
        self.padding_mode = padding_mode
        factory = dict(device=device, dtype=dtype)
        shape = ((in_channels, out_channels // groups) if self.transposed
                 else (out_channels, in_channels // groups)) + self.kernel_size
        self.weight = Parameter(_api.empty(*shape, **factory))
        if bias:
            self.bias = Parameter(_api.empty(out_channels, **factory))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def _reversed_padding(self) -> list:
        """F.pad's order (last dim first, left/right) of this layer's symmetric padding."""
        out = []
        for p in reversed(self.padding):
            out += [p, p]
        return out

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002 - torch's name
        conv = getattr(F, f"conv{self._nd}d")
        if self.padding_mode != "zeros":
            x = F.pad(input, self._reversed_padding(), mode=self.padding_mode)
            return conv(x, self.weight, self.bias, self.stride, 0, self.dilation, self.groups)
        return conv(input, self.weight, self.bias, self.stride, self.padding, self.dilation,
                    self.groups)

    def extra_repr(self) -> str:
        s = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
             f"stride={self.stride}")
        if self.padding != (0,) * self._nd:
            s += f", padding={self.padding}"  # torch prints 'same' unquoted
        if self.dilation != (1,) * self._nd:
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * self._nd:
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s


class Conv1d(_ConvNd):
    """1-d convolution over (N, C_in, L)."""

    _nd = 1

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 dilation=1, groups=1, bias=True, padding_mode="zeros", device=None,
                 dtype=None) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode, device=device, dtype=dtype)


class Conv2d(_ConvNd):
    """2-d convolution over (N, C_in, H, W)."""

    _nd = 2

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 dilation=1, groups=1, bias=True, padding_mode="zeros", device=None,
                 dtype=None) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode, device=device, dtype=dtype)


class _ConvTransposeNd(_ConvNd):
    transposed = True

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 output_padding=0, groups=1, bias=True, dilation=1, padding_mode="zeros",
                 device=None, dtype=None) -> None:
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for '
                             f"{type(self).__name__}")
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode, output_padding, device=device, dtype=dtype)

    def forward(self, input: Tensor, output_size=None) -> Tensor:  # noqa: A002
        if output_size is not None:
            raise NotImplementedError(f"{type(self).__name__}(output_size=...) is not supported "
                                      "by minitorch_compile; pass output_padding")
        return getattr(F, f"conv_transpose{self._nd}d")(
            input, self.weight, self.bias, self.stride, self.padding, self.output_padding,
            self.groups, self.dilation)


class ConvTranspose1d(_ConvTransposeNd):
    _nd = 1


class ConvTranspose2d(_ConvTransposeNd):
    _nd = 2
