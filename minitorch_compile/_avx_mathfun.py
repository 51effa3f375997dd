"""The float32 ``log`` and ``sincos`` torch's CPU ``randn`` uses, so that a seeded ``randn`` of
16 or more float32 elements is torch's to the last bit.

Mirrors ``aten/src/ATen/native/cpu/avx_mathfun.h`` (after Julien Pommier's ``sse_mathfun``:
the cephes ``logf``/``sinf``/``cosf`` polynomials, eight lanes at a time), as torch's AVX2 and
AVX512 builds run it from ``normal_fill_16_AVX2``.  The same float32 operations in the same
order, vectorized with numpy instead of AVX lanes:

* ``log(x)``: split ``x = m 2^e`` with ``m`` in ``[0.5, 1)`` by bit operations, move ``m``
  below ``sqrt(1/2)`` to ``2m`` (``e - 1``), then ``x = m - 1`` and
  ``log x = x + x^3 P(x) - x^2 / 2 + e log 2`` with ``log 2`` split in two constants;
* ``sincos(x)``: reduce ``|x|`` by multiples of ``pi/4`` (``j``, rounded up to even) with
  ``pi/4`` split in three constants, evaluate the cosine and sine polynomials of the
  remainder, and pick and sign them by ``j``.

torch's build lets the compiler contract a multiply and the add that follows it into one fused
multiply-add; which pairs it contracted was found by matching 320,000 of torch's samples bit
for bit (``tests/test_random_vs_torch.py``).  ``_fma`` emulates one: the product of two float32s
is exact in float64, so the sum is rounded once (then to float32).
"""

from __future__ import annotations

import numpy as np

_F = np.float32

_LOG_P = [_F(c) for c in (7.0376836292e-2, -1.1514610310e-1, 1.1676998740e-1,
                          -1.2420140846e-1, 1.4249322787e-1, -1.6668057665e-1,
                          2.0000714765e-1, -2.4999993993e-1, 3.3333331174e-1)]
_LOG2_LO, _LOG2_HI = _F(-2.12194440e-4), _F(0.693359375)  # log 2 = HI + LO
_SQRT_HALF = _F(0.707106781186547524)
_MIN_NORMAL = np.array(0x00800000, np.int32).view(_F)
_FOUR_OVER_PI = _F(1.27323954473516)
_PI_4 = [_F(-0.78515625), _F(-2.4187564849853515625e-4), _F(-3.77489497744594108e-8)]
_COS_P = [_F(2.443315711809948e-5), _F(-1.388731625493765e-3), _F(4.166664568298827e-2)]
_SIN_P = [_F(-1.9515295891e-4), _F(8.3321608736e-3), _F(-1.6666654611e-1)]
_HALF, _ONE = _F(0.5), _F(1.0)


def _fma(a, b, c):
    """``a * b + c`` rounded once."""
    return (np.asarray(a, np.float64) * np.asarray(b, np.float64) + c).astype(_F)


def _horner(coeffs, x):
    """``((c0 x + c1) x + c2) ...`` with a fused multiply-add per step (``x`` widened once)."""
    wide = x.astype(np.float64)
    y = np.full_like(x, coeffs[0])
    step = np.empty_like(wide)
    for c in coeffs[1:]:
        np.multiply(y, wide, out=step)
        step += c
        y = step.astype(_F)
    return y


def log(x: np.ndarray) -> np.ndarray:
    """float32 ``log`` of positive ``x`` (``log256_ps``)."""
    x = np.maximum(x, _MIN_NORMAL)
    bits = x.view(np.int32)
    e = ((bits >> 23) - 127).astype(_F) + _ONE
    m = ((bits & ~0x7F800000) | np.array(_HALF).view(np.int32)).view(_F)  # in [0.5, 1)
    small = m < _SQRT_HALF
    e = e - small.astype(_F)
    x = (m - _ONE) + np.where(small, m, _F(0))
    z = x * x
    y = _horner(_LOG_P, x) * x
    y = _fma(y, z, e * _LOG2_LO)
    y = _fma(z, -_HALF, y)
    return _fma(e, _LOG2_HI, x + y)


def sincos(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """float32 ``(sin x, cos x)`` (``sincos256_ps``)."""
    sin_negative = np.signbit(x)
    x = np.abs(x)
    j = ((x * _FOUR_OVER_PI).astype(np.int32) + 1) & ~1  # octant, rounded up to even
    y = j.astype(_F)
    for c in _PI_4:  # x - j pi/4 in extended precision
        x = _fma(y, c, x)
    sin_negative = sin_negative ^ ((j & 4) != 0)
    cos_negative = (~(j - 2) & 4) != 0
    use_sin_poly = (j & 2) == 0
    z = x * x
    cos_poly = _fma(_horner(_COS_P, z) * z, z, -(z * _HALF)) + _ONE
    sin_poly = _fma(_horner(_SIN_P, z) * z, x, x)
    s = np.where(use_sin_poly, sin_poly, cos_poly)
    c = np.where(use_sin_poly, cos_poly, sin_poly)
    return np.where(sin_negative, -s, s), np.where(cos_negative, -c, c)


def box_muller_16(data: np.ndarray, mean: float, std: float) -> None:
    """``normal_fill_16_AVX2`` over every block of 16 float32 uniforms in ``data``."""
    blocks = data.reshape(-1, 16)
    with np.errstate(divide="ignore", invalid="ignore"):
        radius = np.sqrt(_F(-2) * log(_ONE - blocks[:, :8]))
    s, c = sincos(_F(2 * np.pi) * blocks[:, 8:])
    blocks[:, :8] = _fma(radius * c, _F(std), _F(mean))
    blocks[:, 8:] = _fma(radius * s, _F(std), _F(mean))
