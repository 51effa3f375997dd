"""Special functions numpy lacks: ``erfinv``, ``lgamma``, ``digamma``, ``polygamma`` —
vectorized.

Mirrors ``aten/src/ATen/native/Math.h`` (``calc_erfinv``, ``calc_digamma``; ``lgamma`` is
libm's there).  Each is evaluated in float64 with array operations only (no per-element
Python), then cast to the result dtype:

* ``erfinv(y)``: Giles' single-precision approximation ("Approximating the erfinv function",
  2010) as the first guess, then two Newton steps on ``erf(x) - y`` with the table's float64
  ``erf`` (``_erf.py``; ``erf'(x) = 2/sqrt(pi) exp(-x^2)``).  ``+-1 -> +-inf``, ``|y| > 1 ->
  nan``.
* ``lgamma(x) = log|Gamma(x)|``: the Lanczos approximation (g = 7, 9 terms; relative error
  ~1e-15) for ``x >= 0.5``, the reflection ``log(pi / |sin(pi x)|) - lgamma(1 - x)`` below;
  poles (0, -1, -2, ...) give ``inf``, as torch.
* ``digamma(x) = Gamma'(x) / Gamma(x)``: the recurrence ``psi(x) = psi(x + 1) - 1/x`` up to
  ``x >= 10``, then the asymptotic series; the reflection ``psi(1 - x) - pi / tan(pi x)`` for
  negative ``x``; ``psi(0) = -inf`` and ``nan`` at negative integers (torch's values).

* ``polygamma(n, x)`` (n >= 1): the same recurrence, for ``psi^(n)``, then its asymptotic
  series (Bernoulli numbers); ``x`` below -990 gives nan (the recurrence is capped).

Gradients (``derivatives.yaml``): ``erfinv``: ``sqrt(pi)/2 exp(result^2)``; ``lgamma``:
``digamma``; ``digamma``: ``polygamma(1, x)``; ``polygamma(n, x)``: ``polygamma(n + 1, x)``.
All agree with torch to ~1e-12 relative (not to the last ulp).
"""

from __future__ import annotations

import math

import numpy as np

from ._erf import erf as _erf
from .table import INT_TO_FLOAT, POINTWISE, defop

# ---------------------------------------------------------------- erfinv

_GILES_CENTRAL = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06,
                  0.00021858087, -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)
_GILES_TAIL = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773,
               -0.0076224613, 0.00943887047, 1.00167406, 2.83297682)


def _horner(coefs, w):
    p = np.full_like(w, coefs[0])
    for c in coefs[1:]:
        p = p * w + c
    return p


def _erfinv_kernel(a):
    y = np.asarray(a, dtype=np.float64)
    with np.errstate(all="ignore"):
        w = -np.log((1.0 - y) * (1.0 + y))
        central = _horner(_GILES_CENTRAL, w - 2.5)
        tail = _horner(_GILES_TAIL, np.sqrt(w) - 3.0)
        x = np.where(w < 5.0, central, tail) * y
        for _ in range(2):  # Newton on erf(x) = y
            step = (_erf(x) - y) / (2.0 / math.sqrt(math.pi) * np.exp(-x * x))
            x = np.where(np.isfinite(step), x - step, x)
        x = np.where(np.abs(y) == 1.0, np.copysign(np.inf, y), x)
        x = np.where(np.abs(y) > 1.0, np.nan, x)
    return x.astype(a.dtype) if a.dtype.kind == "f" else x


erfinv = defop("erfinv(Tensor self) -> Tensor", POINTWISE, kernel=_erfinv_kernel,
               promotion=INT_TO_FLOAT, inplace=True,
               derivatives={"self": lambda grad, result:
                            grad * (0.5 * math.sqrt(math.pi)) * (result * result).exp()})

# ---------------------------------------------------------------- lgamma

_LANCZOS_G = 7.0
_LANCZOS = (0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313,
            -176.61502916214059, 12.507343278686905, -0.13857109526572012,
            9.9843695780195716e-6, 1.5056327351493116e-7)


def _lgamma_right(x):
    """log Gamma(x) for x >= 0.5 (Lanczos)."""
    z = x - 1.0
    s = np.full_like(z, _LANCZOS[0])
    for i, c in enumerate(_LANCZOS[1:], start=1):
        s = s + c / (z + i)
    t = z + _LANCZOS_G + 0.5
    return 0.5 * math.log(2 * math.pi) + (z + 0.5) * np.log(t) - t + np.log(s)


def _lgamma_kernel(a):
    x = np.asarray(a, dtype=np.float64)
    with np.errstate(all="ignore"):
        left = x < 0.5
        right = _lgamma_right(np.where(left, 1.0 - x, x))
        reflected = np.log(math.pi / np.abs(np.sin(math.pi * x))) - right
        out = np.where(left, reflected, right)
        pole = left & (x == np.floor(x))
        out = np.where(pole | np.isinf(x), np.inf, out)
        out = np.where(np.isnan(x), np.nan, out)
    return out.astype(a.dtype) if a.dtype.kind == "f" else out


# ---------------------------------------------------------------- digamma


def _digamma_kernel(a):
    x0 = np.asarray(a, dtype=np.float64)
    with np.errstate(all="ignore"):
        negative = x0 < 0
        x = np.where(negative, 1.0 - x0, x0)
        acc = np.zeros_like(x)
        for _ in range(10):  # psi(x) = psi(x + 1) - 1/x until x >= 10
            small = x < 10.0
            acc = acc - np.where(small, 1.0 / x, 0.0)
            x = np.where(small, x + 1.0, x)
        inv2 = 1.0 / (x * x)
        series = np.log(x) - 0.5 / x - inv2 * (1 / 12 - inv2 * (1 / 120 - inv2 * (
            1 / 252 - inv2 * (1 / 240 - inv2 / 132))))
        out = acc + series
        out = np.where(negative, out - math.pi / np.tan(math.pi * x0), out)
        out = np.where(x0 == 0, -np.inf, out)
        out = np.where(negative & (x0 == np.floor(x0)), np.nan, out)
        out = np.where(x0 == np.inf, np.inf, out)
    return out.astype(a.dtype) if a.dtype.kind == "f" else out


# ---------------------------------------------------------------- polygamma (n >= 1)

# B_2k / (2k)! of the asymptotic series (Bernoulli numbers over factorials), k = 1..7
_BERNOULLI = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6)
_MAX_SHIFTS = 1000  # x below -990: nan (the recurrence would need more passes)


def _polygamma_kernel(n, a):
    """``psi^(n)(x)``, n >= 1: shift ``x`` up to >= 10 with
    ``psi^(n)(x) = psi^(n)(x + 1) + (-1)^(n+1) n! / x^(n+1)``, then the asymptotic series
    ``(-1)^(n+1) [(n-1)!/x^n + n!/(2 x^(n+1)) + sum_k B_2k (2k+n-1)! / ((2k)! x^(2k+n))]``.
    Each pass is one vectorized step over the whole array."""
    if n == 0:
        return _digamma_kernel(a)
    x = np.array(a, dtype=np.float64)
    sign = 1.0 if n % 2 == 1 else -1.0
    nfact = math.factorial(n)
    with np.errstate(all="ignore"):
        acc = np.zeros_like(x)
        for _ in range(_MAX_SHIFTS):
            small = x < 10.0
            if not small.any():
                break
            acc = acc + np.where(small, sign * nfact / x ** (n + 1), 0.0)
            x = np.where(small, x + 1.0, x)
        series = math.factorial(n - 1) / x ** n + nfact / (2 * x ** (n + 1))
        for k, b in enumerate(_BERNOULLI, start=1):
            series = series + b * math.factorial(2 * k + n - 1) / math.factorial(2 * k) \
                / x ** (2 * k + n)
        out = acc + sign * series
        x0 = np.asarray(a, dtype=np.float64)
        out = np.where((x0 <= 0) & (x0 == np.floor(x0)), sign * np.inf, out)  # poles
        out = np.where((x < 10.0) | (x0 == np.inf), np.nan, out)  # x0 < -990; torch's inf
    return out.astype(a.dtype) if a.dtype.kind == "f" else out


def _polygamma_meta_kernel(n, a):
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    return _polygamma_kernel(n, a)


polygamma = defop("polygamma(int n, Tensor self) -> Tensor", POINTWISE,
                  kernel=_polygamma_meta_kernel, promotion=INT_TO_FLOAT,
                  derivatives={"self": lambda grad, n, self: grad * polygamma(n + 1, self)})
digamma = defop("digamma(Tensor self) -> Tensor", POINTWISE, kernel=_digamma_kernel,
                promotion=INT_TO_FLOAT, inplace=True,
                derivatives={"self": lambda grad, self: grad * polygamma(1, self)})
lgamma = defop("lgamma(Tensor self) -> Tensor", POINTWISE, kernel=_lgamma_kernel,
               promotion=INT_TO_FLOAT, inplace=True,
               derivatives={"self": lambda grad, self: grad * digamma(self)})
