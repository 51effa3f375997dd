"""The kernels of the ``npu::`` custom ops (torch_npu's ``NPUNativeFunctions``).

Teaches what sits behind ``TORCH_LIBRARY(npu, m)``: each ``custom:`` entry of
``npu_native_functions.yaml`` names a schema, and the generated registrations bind it to the
function of the same name here (torch_npu's codegen binds ``NPUNativeFunctions::<name>``).
Every kernel computes with numpy and accounts its cost as one device kernel.
"""

from __future__ import annotations

import numpy as np

from .._device import as_device
from .._dtype import get_default_dtype
from .._tensor import Tensor
from . import formats
from .eager_kernels import stream_kernel


def _check_npu(t: Tensor, op: str) -> None:
    if t._device.type != "npu":
        raise RuntimeError(f"{op}: expected an npu tensor, got a {t._device.type} tensor "
                           f"(move it with .npu())")


def npu_format_cast(self: Tensor, acl_format: int) -> Tensor:
    """A copy of ``self`` stored in ``acl_format`` (``self`` when it already is)."""
    _check_npu(self, "npu_format_cast")
    formats.check_format(acl_format, tuple(self.shape))
    if formats.get_format(self) == acl_format:
        return self
    formats.trans_data(self, acl_format)
    out = Tensor._make(np.array(self._data, order="C", copy=True), self._device)
    formats.set_format(out, acl_format)
    return out


def npu_format_cast_(self: Tensor, acl_format: int) -> Tensor:
    """Re-lay ``self`` out in ``acl_format`` in place (its values do not change)."""
    _check_npu(self, "npu_format_cast_")
    formats.check_format(acl_format, tuple(self.shape))
    if formats.get_format(self) != acl_format:
        formats.trans_data(self, acl_format)
        formats.set_format(self, acl_format)
    return self


def get_npu_format(self: Tensor) -> int:
    _check_npu(self, "get_npu_format")
    return formats.get_format(self)


def empty_with_format(size, dtype=None, device=None, acl_format: int = formats.ND) -> Tensor:
    """A new (zero-filled) npu tensor of ``size`` stored in ``acl_format``."""
    dev = as_device(device if device is not None else "npu")
    if dev.type != "npu":
        raise RuntimeError(f"empty_with_format: expected an npu device, got {dev}")
    shape = tuple(int(s) for s in size)
    formats.check_format(acl_format, shape)
    dt = dtype if dtype is not None else get_default_dtype()
    out = Tensor._make(np.zeros(shape, dtype=dt.np), dev)
    if acl_format != formats.ND:
        formats.set_format(out, acl_format)
    return out


# fast_gelu(x) = x * sigmoid(1.702 x), computed as torch_npu's stable form
# x / (1 + exp(-1.702 |x|)) * exp(0.851 (x - |x|)); its derivative is
# s + 1.702 x s (1 - s) with s = sigmoid(1.702 x).
_FAST_GELU = ["abs", "mul", "exp", "add", "div", "sub", "mul", "exp", "mul"]
_FAST_GELU_BACKWARD = ["mul", "sigmoid", "sub", "mul", "mul", "mul", "add", "mul"]


def _float_input(t: Tensor, op: str) -> np.ndarray:
    _check_npu(t, op)
    if not t.dtype.is_floating_point:
        raise RuntimeError(f"{op}: expected a floating-point tensor, got {t.dtype}")
    return t._data


def npu_fast_gelu(self: Tensor) -> Tensor:
    x = _float_input(self, "npu_fast_gelu")
    with np.errstate(all="ignore"):
        ax = np.abs(x)
        y = x / (1 + np.exp(-1.702 * ax)) * np.exp(0.851 * (x - ax))
    out = Tensor._make(y.astype(x.dtype, copy=False), self._device)
    stream_kernel("npu::npu_fast_gelu", [self], [out], _FAST_GELU)
    return out


def npu_fast_gelu_backward(grad: Tensor, self: Tensor) -> Tensor:
    x = _float_input(self, "npu_fast_gelu_backward")
    g = _float_input(grad, "npu_fast_gelu_backward")
    with np.errstate(all="ignore"):
        s = 1 / (1 + np.exp(-1.702 * x))
        d = g * (s + 1.702 * x * s * (1 - s))
    out = Tensor._make(np.asarray(d, dtype=np.result_type(x, g)), self._device)
    stream_kernel("npu::npu_fast_gelu_backward", [grad, self], [out], _FAST_GELU_BACKWARD)
    return out
