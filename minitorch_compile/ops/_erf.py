"""``erf`` for numpy arrays, vectorized: numpy has no ``erf`` and ``math.erf`` per element is a
Python call per element (it made GELU 7x slower than the rest of a numpy program).

Mirrors the vectorized ``erf`` of ATen's CPU kernels (``aten/src/ATen/cpu/vec``) in spirit: a
fixed approximation evaluated with array operations, no per-element Python.

float32 / float16 (``_erf_float32``)
    The rational approximation Eigen and XLA use for float32,
    ``erf(x) ~ x P(x^2) / Q(x^2)`` on ``x`` clamped to [-4, 4] (P of degree 6, Q of degree 4;
    past 4, ``erf`` is 1 to float32 precision).  Its own error is 6.5e-8; evaluating it in
    float32 would add ~4e-7 of rounding near |x| = 3, so it is evaluated in float64, one
    cache-sized block at a time (``_BLOCK`` elements, every intermediate in a reused buffer),
    and rounded once: max abs error vs ``math.erf`` <= 1e-7 (``tests/test_erf.py``).

float64 (``_erf_float64``)
    * |x| < 1: the Taylor series ``erf(x) = 2/sqrt(pi) sum_n (-1)^n x^(2n+1) / (n! (2n+1))``,
      21 terms (the first dropped term is < 1e-20);
    * 1 <= |x| < 6: ``erf(x) = 1 - exp(-x^2) g(x)`` with ``g(t) = exp(t^2) erfc(t)`` (smooth, in
      (0.08, 0.43)) as a Chebyshev series on [1, 2], [2, 4], [4, 6], coefficients generated in
      50-digit arithmetic by ``tools/gen_erf_coefficients.py``;
    * |x| >= 6: +-1 (erfc(6) = 2e-17 is below half an ulp of 1).
    Max abs error vs ``math.erf``: one ulp (<= 2.3e-16, ``tests/test_erf.py``).

NaN stays NaN; +-inf gives +-1.
"""

from __future__ import annotations

import math

import numpy as np

# ---------------------------------------------------------------- float32: Eigen's rational

_ALPHA = (-2.72614225801306e-10, 2.77068142495902e-08, -2.10102402082508e-06,
          -5.69250639462346e-05, -7.34990630326855e-04, -2.95459980854025e-03,
          -1.60960333262415e-02)  # P, highest power of x^2 first
_BETA = (-1.45660718464996e-05, -2.13374055278905e-04, -1.68282697438203e-03,
         -7.37332916720468e-03, -1.42647390514189e-02)  # Q
_BLOCK = 1 << 14  # 16K float64 values = 128 KiB per buffer: the five buffers stay in L2


def _horner(coefs, x2, out):
    np.multiply(x2, coefs[0], out=out)
    np.add(out, coefs[1], out=out)
    for c in coefs[2:]:
        np.multiply(out, x2, out=out)
        np.add(out, c, out=out)
    return out


def _erf_float32(a: np.ndarray) -> np.ndarray:
    flat = np.ascontiguousarray(a).reshape(-1)
    out = np.empty(a.shape, dtype=a.dtype)
    out_flat = out.reshape(-1)
    n = flat.size
    b = min(_BLOCK, max(n, 1))
    x, x2, p, q = (np.empty(b) for _ in range(4))
    for start in range(0, n, b):
        m = min(b, n - start)
        xv, x2v, pv, qv = x[:m], x2[:m], p[:m], q[:m]
        np.clip(flat[start:start + m], -4.0, 4.0, out=xv)
        np.multiply(xv, xv, out=x2v)
        _horner(_ALPHA, x2v, pv)
        _horner(_BETA, x2v, qv)
        np.multiply(pv, xv, out=pv)
        np.divide(pv, qv, out=out_flat[start:start + m], casting="same_kind")
    return out


# ---------------------------------------------------------------- float64: Taylor + Chebyshev

_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
_TAYLOR = tuple((-1) ** n / (math.factorial(n) * (2 * n + 1)) for n in range(21))

_ERFC_TABLES = (  # (lo, hi, Chebyshev coefficients of exp(t^2) erfc(t) on [lo, hi])
    (1.0, 2.0, np.array([
        0.331427281639452, -0.0850021377067432, 0.009951127341466115,
        -0.0010810888102208325, 0.0001102324363119495, -1.0636830518218601e-05,
        9.775012680479055e-07, -8.597922867888315e-08, 7.2677084117248425e-09,
        -5.923543840592542e-10, 4.6683928572294154e-11, -3.56612770156775e-12,
        2.6458779519104523e-13, -1.9101658673527567e-14, 1.343976588479829e-15,
        -9.228790549094326e-17, 6.19267308464391e-18,
    ])),
    (2.0, 4.0, np.array([
        0.1874295690262241, -0.05794652883669097, 0.008595247387396534,
        -0.0012284613640242594, 0.00016974366686180488, -2.2738329337044562e-05,
        2.959844378804878e-06, -3.7513575581379714e-07, 4.6372828761738244e-08,
        -5.599455392564088e-09, 6.613160896679916e-10, -7.648271522199816e-11,
        8.670904325876594e-12, -9.645456274382108e-13, 1.0536827959360625e-13,
        -1.1312630906760667e-14, 1.1945180669174577e-15, -1.241310752580407e-16,
        1.270246323185436e-17, -1.280725873663855e-18,
    ])),
    (4.0, 6.0, np.array([
        0.11277819743166245, -0.021913497155272348, 0.0020915397845687493,
        -0.00019628624819122983, 1.8126654238718202e-05, -1.6483628246572167e-06,
        1.4769699327777977e-07, -1.3047490253442588e-08, 1.136975347104367e-09,
        -9.778180226640498e-11, 8.303212348062975e-12, -6.964650842590714e-13,
        5.772832164827166e-14, -4.730148558369874e-15, 3.8327149744119825e-16,
        -3.0720233149986705e-17, 2.4364677192305794e-18,
    ])),
)


def _taylor(x: np.ndarray) -> np.ndarray:
    x2 = x * x
    s = np.full_like(x, _TAYLOR[-1])
    for c in _TAYLOR[-2::-1]:
        s *= x2
        s += c
    return _TWO_OVER_SQRT_PI * x * s


def _chebyshev(coefs: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Clenshaw's recurrence for sum_k c_k T_k(u)."""
    b1 = np.zeros_like(u)
    b2 = np.zeros_like(u)
    for c in coefs[:0:-1]:
        b1, b2 = 2 * u * b1 - b2 + c, b1
    return u * b1 - b2 + coefs[0]


def _erf_float64(a: np.ndarray) -> np.ndarray:
    t = np.abs(a)
    out = np.ones_like(a)
    small = t < 1.0
    out[small] = _taylor(a[small])
    for lo, hi, coefs in _ERFC_TABLES:
        m = (t >= lo) & (t < hi)
        tm = t[m]
        erfc = np.exp(-tm * tm) * _chebyshev(coefs, (2 * tm - (lo + hi)) / (hi - lo))
        out[m] = 1.0 - erfc
    big = ~small
    out[big] = np.copysign(out[big], a[big])
    out[np.isnan(a)] = np.nan
    return out


def erf(a: np.ndarray) -> np.ndarray:
    """Elementwise erf of a floating-point array, in its dtype."""
    a = np.asarray(a)
    if a.dtype == np.float64:
        return _erf_float64(a)
    if a.dtype == np.float16:
        return _erf_float32(a.astype(np.float32)).astype(np.float16)
    return _erf_float32(a)
