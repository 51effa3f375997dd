"""The rest of the unary math: inverse and hyperbolic trigonometry, ``tan``, ``log10``,
``exp2``, ``erfc``, ``sinc``, ``deg2rad``/``rad2deg`` — one ``POINTWISE`` row each, with
``derivatives.yaml``'s formula (integers become the default float dtype, as in torch).

``asin(x)' = 1/sqrt(1 - x^2)``, ``acos(x)' = -1/sqrt(1 - x^2)``, ``atan(x)' = 1/(1 + x^2)``,
``sinh' = cosh``, ``cosh' = sinh``, ``tan' = 1 + tan^2`` (from the result),
``asinh(x)' = 1/sqrt(x^2 + 1)``, ``acosh(x)' = 1/sqrt(x^2 - 1)``, ``atanh(x)' = 1/(1 - x^2)``,
``log10(x)' = 1/(x ln 10)``, ``exp2' = exp2 ln 2``, ``erfc(x)' = -2/sqrt(pi) exp(-x^2)``,
``sinc(x)' = (pi x cos(pi x) - sin(pi x)) / (pi x^2)`` (0 at 0).  The numpy ufunc kernels lower
to one ``ops.<ufunc>`` call each in Inductor.
"""

from __future__ import annotations

import math

import numpy as np

from .. import _api as F
from .table import INT_TO_FLOAT, POINTWISE, defop


def _unary(name, kernel, derivative):
    return defop(f"{name}(Tensor self) -> Tensor", POINTWISE, kernel=kernel,
                 promotion=INT_TO_FLOAT, derivatives={"self": derivative}, inplace=True)


def _sinc_backward(grad, self):
    px = math.pi * self
    d = (px * px.cos() - px.sin()) / (math.pi * self * self)
    return grad * F.where(self == 0, 0.0, d)


asin = _unary("asin", np.arcsin, lambda grad, self: grad * (1 - self * self).rsqrt())
acos = _unary("acos", np.arccos, lambda grad, self: grad * -((1 - self * self).rsqrt()))
atan = _unary("atan", np.arctan, lambda grad, self: grad / (self * self + 1))
sinh = _unary("sinh", np.sinh, lambda grad, self: grad * self.cosh())
cosh = _unary("cosh", np.cosh, lambda grad, self: grad * self.sinh())
tan = _unary("tan", np.tan, lambda grad, result: grad * (1 + result * result))
asinh = _unary("asinh", np.arcsinh, lambda grad, self: grad * (self * self + 1).rsqrt())
acosh = _unary("acosh", np.arccosh, lambda grad, self: grad * (self * self - 1).rsqrt())
atanh = _unary("atanh", np.arctanh, lambda grad, self: grad / (1 - self * self))
log10 = _unary("log10", np.log10, lambda grad, self: grad / (self * math.log(10.0)))
exp2 = _unary("exp2", np.exp2, lambda grad, result: grad * result * math.log(2.0))
def _erfc_kernel(a):
    """``math.erfc`` per element: ``1 - erf(x)`` loses every digit in the tail (``erfc(10)``
    is 2e-45 in float64, where ``erf(10)`` rounds to 1)."""
    out = np.asarray(np.frompyfunc(math.erfc, 1, 1)(a), dtype=np.float64)
    return out.astype(a.dtype) if a.dtype.kind == "f" else out


erfc = _unary("erfc", _erfc_kernel,
              lambda grad, self: -2.0 / math.sqrt(math.pi) * (-(self * self)).exp() * grad)
sinc = _unary("sinc", np.sinc, _sinc_backward)
deg2rad = _unary("deg2rad", lambda a: a * a.dtype.type(math.pi / 180),
                 lambda grad: grad * (math.pi / 180))
rad2deg = _unary("rad2deg", lambda a: a * a.dtype.type(180 / math.pi),
                 lambda grad: grad * (180 / math.pi))
