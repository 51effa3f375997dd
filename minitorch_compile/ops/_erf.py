"""``erf`` for numpy arrays, vectorized: numpy has no ``erf`` and ``math.erf`` per element is a
Python call per element (it made GELU 7x slower than the rest of a numpy program).

Mirrors the vectorized ``erf`` of ATen's CPU kernels (``aten/src/ATen/cpu/vec``) in spirit: a
fixed approximation evaluated with array operations, no per-element Python.

float32 / float16 (``erf_float32_body``, one definition for eager mode and compiled kernels)
    ``erf(x) ~ tanh(x g(x^2))`` with ``g`` a degree-6 polynomial in ``y = x^2``, fitted by a
    linearized minimax on ``y`` in [0, 16] (``tools/gen_erf_coefficients.py``; in exact
    arithmetic within 1.0e-7 of ``erf`` on [0, 4]).  Past 4 ``erf`` is 1 in float32, and so is
    the formula: ``x g(x^2) >= 9.69`` for every float32 ``x >= 4`` (checked exhaustively, all
    5.2e8 of them up to 2^64, where ``x^2`` overflows to inf and ``g`` with it; the polynomial's
    leading term only grows), which an earlier version ensured with a ``min(x^2, 16)`` pass —
    without it the argument of ``tanh`` is never smaller than the clamped one, so the result
    is never further from 1.  ``tanh`` is odd and saturates exactly as ``erf`` does, so the
    sign, the tails, ``+-0`` and ``+-inf`` need no extra pass, and there is no division: 15
    float32 passes (a product, twelve for Horner's rule, a product, ``tanh``) against 24 and a
    division for Eigen's ``x P(x^2) / Q(x^2)``.  Evaluated in float32 (numpy's ``tanh`` is
    within 1.4 ulp): max abs error vs ``math.erf`` <= 1.3e-7, about 2 float32 ulp near 1 —
    torch's own float32 ``erf`` (Abramowitz & Stegun 7.1.26) is off by 1.5e-7; near 0 the
    relative error is <= 1e-6, where 7.1.26's is unbounded.  Eager mode runs the body with
    numpy over cache-sized blocks, the compiled kernel with ``ops.*`` over its tiles: the same
    float32 operations in the same order, so compiled and eager agree bit for bit
    (``tests/test_ops_breadth.py``, ``tests/test_inductor.py``).

GELU in float32 (``gelu_float32_body``)
    ``gelu(x) = x (1 + erf(x / sqrt 2)) / 2`` with ``erf(x / sqrt 2) = tanh(x h(x^2))``,
    ``h(z) = g(z / 2) / sqrt 2`` — the scaling folded into the coefficients, so no ``x / sqrt 2``
    pass — and ``x ((1 + t) / 2)`` (a product by 1/2 is exact), so ``x / 2`` is not kept live
    through the polynomial: 18 passes where ``0.5 x (1 + erf(x sqrt(1/2)))`` makes 20, the
    same error against ``math.erf`` (max abs 5.8e-7 on [-12, 12], from ``x``'s own rounding)
    and half the relative error in the negative tail.  Eager ``gelu`` and the compiled kernel
    both run it (the CPU code generator keeps ``aten::gelu`` whole instead of decomposing it).

float64 (``_erf_float64``)
    * |x| < 1: the Taylor series ``erf(x) = 2/sqrt(pi) sum_n (-1)^n x^(2n+1) / (n! (2n+1))``,
      21 terms (the first dropped term is < 1e-20);
    * 1 <= |x| < 6: ``erf(x) = 1 - exp(-x^2) g(x)`` with ``g(t) = exp(t^2) erfc(t)`` (smooth, in
      (0.08, 0.43)) as a Chebyshev series on [1, 2], [2, 4], [4, 6], coefficients generated in
      50-digit arithmetic by ``tools/gen_erf_coefficients.py``;
    * |x| >= 6: +-1 (erfc(6) = 2e-17 is below half an ulp of 1).
    Max abs error vs ``math.erf``: one ulp (<= 2.3e-16, ``tests/test_ops_breadth.py``).

NaN stays NaN; +-inf gives +-1.
"""

from __future__ import annotations

import math

import numpy as np

# ---------------------------------------------------------------- float32: tanh(x g(x^2))

_TANH_G = (1.5705996424154672e-07, -5.957722609099594e-06, 8.960091258514375e-05,
           -0.0006257588622977832, -0.00018346558577718634, 0.10276437801630352,
           1.1283799778416443)  # g, highest power of y = x^2 first (g(0) ~ 2 / sqrt(pi))
# gelu: h(z) = g(z / 2) / sqrt(2), so erf(x / sqrt 2) = tanh(x h(x^2)) (coefficients rounded to
# float32 where they meet a float32 tile, as g's are)
_GELU_H = tuple(c * 0.5 ** (len(_TANH_G) - 1 - k) * 0.7071067811865476
                for k, c in enumerate(_TANH_G))
_BLOCK = 1 << 14  # eager: 16K float32 values per block, so the temporaries stay in cache


def erf_float32_body(ops, x):
    """``erf(x) ~ tanh(x g(x^2))`` written once over an ops namespace: numpy ufuncs in eager
    mode (``_NumpyOps``), ``V.ops`` inside a compiled kernel (``inductor/lowering.py``).
    NaN stays NaN (``tanh`` propagates it)."""
    return ops.tanh(ops.multiply(x, _horner(ops, ops.multiply(x, x), _TANH_G)))


def gelu_float32_body(ops, x):
    """``gelu(x) = x ((1 + tanh(x h(x^2))) / 2)``: 18 passes, one definition for eager mode and
    the compiled kernel (as ``erf_float32_body``).  ``gelu(-inf)`` is NaN (``-inf * 0``), as
    ``0.5 x (1 + erf(x / sqrt 2))`` is in eager torch."""
    t = ops.tanh(ops.multiply(x, _horner(ops, ops.multiply(x, x), _GELU_H)))
    return ops.multiply(x, ops.multiply(ops.add(t, 1.0), 0.5))


def _horner(ops, y, coefs):
    acc = ops.add(ops.multiply(y, coefs[0]), coefs[1])
    for c in coefs[2:]:
        acc = ops.add(ops.multiply(acc, y), c)
    return acc


class _NumpyOps:
    """The ufuncs ``erf_float32_body`` calls, on float32 arrays (Python-float constants are
    rounded to float32 by numpy, as the generated kernel's literals are)."""
    multiply, add, tanh = np.multiply, np.add, np.tanh


def _blocked(body, a: np.ndarray) -> np.ndarray:
    flat = np.ascontiguousarray(a, dtype=np.float32).reshape(-1)
    out = np.empty(a.shape, dtype=np.float32)
    out_flat = out.reshape(-1)
    with np.errstate(over="ignore"):  # x^2 and the polynomial overflow to inf past 2^64: fine
        for start in range(0, flat.size, _BLOCK):
            out_flat[start:start + _BLOCK] = body(_NumpyOps, flat[start:start + _BLOCK])
    return out


def _erf_float32(a: np.ndarray) -> np.ndarray:
    return _blocked(erf_float32_body, a)


def gelu_float32(a: np.ndarray) -> np.ndarray:
    """Eager GELU of a float32 array (``gelu_float32_body`` over cache-sized blocks)."""
    return _blocked(gelu_float32_body, a)


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
