"""The rest of torch's unary math: the other trigonometric and hyperbolic functions (``tan``,
``asin``, ``acos``, ``atan``, ``sinh``, ``cosh``, ``asinh``, ``acosh``, ``atanh``), ``exp2``,
``log10``, ``erfc`` — and ``square``/``sgn``, composites torch records as ``pow``/``sign``
(the rounding ops are ``ops/rounding.py``).

Mirrors ``aten/src/ATen/native/UnaryOps.cpp`` and the formulas of ``derivatives.yaml``::

    tan                         1 + tan(x)^2         asin   1 / sqrt(1 - x^2)
    acos                        -1 / sqrt(1 - x^2)   atan   1 / (1 + x^2)
    sinh                        cosh(x)              cosh   sinh(x)
    asinh                       1 / sqrt(x^2 + 1)    acosh  1 / sqrt(x^2 - 1)
    atanh                       1 / (1 - x^2)        exp2   exp2(x) ln 2
    log10                       1 / (x ln 10)        erfc   -2/sqrt(pi) exp(-x^2)

They are ``POINTWISE`` rows with numpy ufunc kernels, so Inductor lowers each to one
``ops.<ufunc>`` call with no extra work.  Invariant: integer inputs of the float functions
compute in the default float dtype (``INT_TO_FLOAT``).
"""

from __future__ import annotations

import math

import numpy as np

from .. import _api as F
from .. import _dtype
from .table import COMPOSITE, INT_TO_FLOAT, POINTWISE, defop

_LN2, _LN10 = math.log(2.0), math.log(10.0)
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


def _unary(name, kernel, derivative, promotion=INT_TO_FLOAT):
    return defop(f"{name}(Tensor self) -> Tensor", POINTWISE, kernel=kernel,
                 promotion=promotion, derivatives={"self": derivative}, inplace=True)


# ---------------------------------------------------------------- trigonometric, hyperbolic

tan = _unary("tan", np.tan, lambda grad, result: grad * (1 + result * result))
asin = _unary("asin", np.arcsin, lambda grad, self: grad * (1 - self * self).rsqrt())
acos = _unary("acos", np.arccos, lambda grad, self: -grad * (1 - self * self).rsqrt())
atan = _unary("atan", np.arctan, lambda grad, self: grad / (1 + self * self))
sinh = _unary("sinh", np.sinh, lambda grad, self: grad * self.cosh())
cosh = _unary("cosh", np.cosh, lambda grad, self: grad * self.sinh())
asinh = _unary("asinh", np.arcsinh, lambda grad, self: grad * (self * self + 1).rsqrt())
acosh = _unary("acosh", np.arccosh, lambda grad, self: grad * (self * self - 1).rsqrt())
atanh = _unary("atanh", np.arctanh, lambda grad, self: grad / (1 - self * self))

# ---------------------------------------------------------------- exponentials

exp2 = _unary("exp2", np.exp2, lambda grad, result: grad * result * _LN2)
log10 = _unary("log10", np.log10, lambda grad, self: grad / (self * _LN10))


def _erfc_kernel(a):
    """``math.erfc`` per element: ``1 - erf(x)`` would lose every digit in the tail
    (``erfc(5) = 1.5e-12``, where ``erf(5)`` rounds to 1), and numpy has no ``erfc``."""
    out = np.asarray(np.frompyfunc(math.erfc, 1, 1)(a), dtype=np.float64)
    return out.astype(a.dtype) if a.dtype.kind == "f" else out


erfc = _unary("erfc", _erfc_kernel,
              lambda grad, self: grad * (-(self * self)).exp() * -_TWO_OVER_SQRT_PI)

# ---------------------------------------------------------------- composites

square = defop("square(Tensor self) -> Tensor", COMPOSITE,
               decomposition=lambda self: F.ops.aten.pow(
                   self.to(_dtype.int64) if self.dtype is _dtype.bool_ else self, 2))
sgn = defop("sgn(Tensor self) -> Tensor", COMPOSITE,
            decomposition=lambda self: F.ops.aten.sign(self))  # (no complex dtypes here)
