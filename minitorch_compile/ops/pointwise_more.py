"""More pointwise ops that ordinary programs meet: ``atan2``, ``hypot``, ``logaddexp``,
``logit``, ``lerp``, ``addcmul``, ``addcdiv`` — and ``masked_fill``, which is pointwise in its
values but not in its promotion (the result keeps ``self``'s dtype).

Mirrors ``aten/src/ATen/native/BinaryOps.cpp``, ``PointwiseOps.cpp`` (``addcmul``/``addcdiv``),
``Lerp.cpp`` and ``masked_fill`` of ``TensorAdvancedIndexing.cpp``; the formulas of
``derivatives.yaml``.

The pointwise ones are ``POINTWISE`` rows, so Inductor lowers them with no extra work here: a
numpy ufunc kernel (``np.arctan2``, ``np.hypot``, ``np.logaddexp``) becomes one ``ops.<ufunc>``
call, any other kernel runs whole tiles inside the fused kernel (``ops.kernel``).
``masked_fill`` decomposes to ``where(mask, value, self)`` for Inductor
(``inductor/decomposition.py``), so it fuses too.

Invariants: a number operand promotes as torch's wrapped number; ``lerp`` takes ``self`` and
``end`` (and a tensor ``weight``) of one dtype, ``addcdiv`` refuses two integer operands,
``masked_fill`` a non-bool mask or a value with dimensions — each with torch's message.
"""

from __future__ import annotations

import numpy as np

from .. import _api as F
from .. import _dtype
from .table import (
    DEFAULT,
    INDEXING,
    INT_TO_FLOAT,
    POINTWISE,
    MetaError,
    TensorMeta,
    broadcast_shapes,
    defop,
    elementwise_dtypes,
)


def _shapes(*values) -> list:
    return [tuple(v.shape) for v in values if hasattr(v, "shape")]


def _float_only(name):
    """torch's CPU kernels of ``hypot``/``logaddexp`` exist for floating dtypes only."""
    def meta(self, other):
        _, result = elementwise_dtypes(DEFAULT, self, other)
        if not result.is_floating_point:
            raise NotImplementedError(f'"{name}_cpu" not implemented for '
                                      f"'{_dtype.scalar_type_name(result)}'")
        return TensorMeta(broadcast_shapes(*_shapes(self, other)), result)
    return meta


# ---------------------------------------------------------------- binary math

# d/dx atan2(x, y) = y / (x² + y²),  d/dy = -x / (x² + y²)
atan2 = defop("atan2(Tensor self, Tensor other) -> Tensor", POINTWISE, kernel=np.arctan2,
              promotion=INT_TO_FLOAT, inplace=True,
              derivatives={"self": lambda grad, self, other:
                           grad * other / (self * self + other * other),
                           "other": lambda grad, self, other:
                           grad * -self / (self * self + other * other)})

# d/dx sqrt(x² + y²) = x / result
hypot = defop("hypot(Tensor self, Tensor other) -> Tensor", POINTWISE, kernel=np.hypot,
              promotion=DEFAULT, meta=_float_only("hypot"), inplace=True,
              derivatives={"self": lambda grad, self, result: grad * self / result,
                           "other": lambda grad, other, result: grad * other / result})

# d/dx log(e^x + e^y) = 1 / (1 + e^(y - x))
logaddexp = defop("logaddexp(Tensor self, Tensor other) -> Tensor", POINTWISE,
                  kernel=np.logaddexp, promotion=DEFAULT, meta=_float_only("logaddexp"),
                  derivatives={"self": lambda grad, self, other:
                               grad / (1 + (other - self).exp()),
                               "other": lambda grad, self, other:
                               grad / (1 + (self - other).exp())})


def _logit_kernel(a, eps=None):
    if eps is not None:
        a = np.clip(a, eps, 1 - eps)
    return np.log(a / (1 - a))


def _logit_backward(grad, self, eps):
    """``grad / (x (1 - x))``; with ``eps``, zero where the input was clamped (torch)."""
    g = grad / (self * (1 - self))
    if eps is None:
        return g
    return F.where((self < eps) | (self > 1 - eps), 0, g)


logit = defop("logit(Tensor self, float? eps=None) -> Tensor", POINTWISE, kernel=_logit_kernel,
              promotion=INT_TO_FLOAT, inplace=True, derivatives={"self": _logit_backward})

# ---------------------------------------------------------------- lerp


def _lerp_meta(self, end, weight):
    for name, v in (("end", end), ("weight", weight)):
        if hasattr(v, "dtype") and v.dtype is not self.dtype:
            raise MetaError(f"expected dtype {self.dtype.name} for `{name}` but got dtype "
                            f"{v.dtype.name}")
    if not self.dtype.is_floating_point:
        raise NotImplementedError(f"\"lerp_kernel_scalar\" not implemented for "
                                  f"'{_dtype.scalar_type_name(self.dtype)}'")
    return TensorMeta(broadcast_shapes(*_shapes(self, end, weight)), self.dtype)


def _lerp_kernel(a, end, weight):
    """torch's two-sided form: exact at both ends (``weight`` 0 gives ``a``, 1 gives ``end``)."""
    diff = end - a
    return np.where(np.abs(weight) < 0.5, a + weight * diff, end - diff * (1 - weight))


lerp = defop("lerp(Tensor self, Tensor end, Tensor weight) -> Tensor", POINTWISE,
             kernel=_lerp_kernel, promotion=DEFAULT, meta=_lerp_meta, inplace=True,
             derivatives={"self": lambda grad, weight: grad * (1 - weight),
                          "end": lambda grad, weight: grad * weight,
                          "weight": lambda grad, self, end: grad * (end - self)})

# ---------------------------------------------------------------- addcmul / addcdiv


def _addc_kernel(combine):
    """``a + value * combine(t1, t2)``; an int ``value`` wraps to an integer dtype as torch's
    C++ cast does (``-1`` is 255 in uint8)."""
    def kernel(a, t1, t2, value=1):
        if type(value) is int and a.dtype.kind in "iu":
            value = _dtype.wrap_int(value, a.dtype)
        return a + value * combine(t1, t2)
    return kernel


def _addc_meta(name):
    def meta(self, tensor1, tensor2, value=1):
        if name == "addcdiv" and not tensor1.dtype.is_floating_point and \
                not tensor2.dtype.is_floating_point:
            raise MetaError(
                "Integer division with addcdiv is no longer supported, and in a future release "
                "addcdiv will perform a true division of tensor1 and tensor2. The historic "
                "addcdiv behavior can be implemented as (input + value * torch.trunc(tensor1 / "
                "tensor2)).to(input.dtype) for integer inputs and as (input + value * tensor1 / "
                "tensor2) for float inputs. The future addcdiv behavior is just the latter "
                "implementation: (input + value * tensor1 / tensor2), for all dtypes.")
        _, result = elementwise_dtypes(DEFAULT, self, tensor1, tensor2)
        if isinstance(value, float) and not result.is_floating_point:
            raise MetaError(f"For integral input tensors, argument {name} must not be a "
                            "floating point number.")
        return TensorMeta(broadcast_shapes(*_shapes(self, tensor1, tensor2)), result)
    return meta


addcmul = defop(
    "addcmul(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor",
    POINTWISE, kernel=_addc_kernel(np.multiply), promotion=DEFAULT,
    meta=_addc_meta("addcmul"), inplace=True,
    derivatives={"self": lambda grad: grad,
                 "tensor1": lambda grad, tensor2, value: grad * tensor2 * value,
                 "tensor2": lambda grad, tensor1, value: grad * tensor1 * value})

addcdiv = defop(
    "addcdiv(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor",
    POINTWISE, kernel=_addc_kernel(np.true_divide), promotion=DEFAULT,
    meta=_addc_meta("addcdiv"), inplace=True,
    derivatives={"self": lambda grad: grad,
                 "tensor1": lambda grad, tensor2, value: grad * value / tensor2,
                 "tensor2": lambda grad, tensor1, tensor2, value:
                 -grad * value * tensor1 / (tensor2 * tensor2)})

# ---------------------------------------------------------------- masked_fill


def _masked_fill_meta(self, mask, value):
    if mask.dtype is not _dtype.bool_:
        raise MetaError(f"masked_fill_ only supports boolean masks, but got mask with dtype "
                        f"{mask.dtype.name}")
    if hasattr(value, "shape") and len(value.shape):
        raise MetaError(f"masked_fill_ only supports a 0-dimensional value tensor, but got "
                        f"tensor with {len(value.shape)} dimension(s).")
    return TensorMeta(broadcast_shapes(tuple(self.shape), tuple(mask.shape)), self.dtype)


def _masked_fill_kernel(a, mask, value):
    """``where(mask, value, a)``, the value cast to ``a``'s dtype first (``2.7`` fills an int
    tensor with 2, as torch's C++ cast)."""
    return np.where(mask, np.asarray(value).astype(a.dtype), a)


masked_fill = defop(
    "masked_fill(Tensor self, Tensor mask, Tensor value) -> Tensor", INDEXING,
    kernel=_masked_fill_kernel, meta=_masked_fill_meta, inplace=True,
    derivatives={"self": lambda grad, mask: F.where(mask, 0, grad),
                 "value": lambda grad, mask: F.where(mask, grad, 0).sum()},
    notes="torch's masked_fill.Scalar and masked_fill.Tensor in one row: a number or a "
          "0-dim tensor value")
