"""Generate the float64 ``erfc`` Chebyshev tables of ``minitorch_compile/ops/_erf.py``.

Run once (needs ``mpmath``, which is not a runtime dependency)::

    python tools/gen_erf_coefficients.py

For each interval [lo, hi] of ``INTERVALS`` it interpolates ``g(t) = exp(t^2) erfc(t)`` (smooth
and slowly varying, unlike erfc itself) at ``deg + 1`` Chebyshev points, with g evaluated in
50-digit arithmetic, and prints the Chebyshev coefficients rounded to float64 (``repr`` is
exact), trailing coefficients below 1e-18 dropped.
"""

import mpmath
import numpy as np

mpmath.mp.dps = 50
INTERVALS = ((1.0, 2.0, 26), (2.0, 4.0, 28), (4.0, 6.0, 20))


def cheb_coefficients(f, lo, hi, deg):
    n = deg + 1
    nodes = [mpmath.cos(mpmath.pi * (k + 0.5) / n) for k in range(n)]
    values = [f(lo + (u + 1) * (hi - lo) / 2) for u in nodes]
    coefs = []
    for j in range(n):
        s = sum(v * mpmath.cos(mpmath.pi * j * (k + 0.5) / n) for k, v in enumerate(values))
        coefs.append(s * 2 / n if j else s / n)
    return coefs


def g(t):
    return mpmath.exp(t * t) * mpmath.erfc(t)


if __name__ == "__main__":
    for lo, hi, deg in INTERVALS:
        c = [float(v) for v in cheb_coefficients(g, mpmath.mpf(lo), mpmath.mpf(hi), deg)]
        while abs(c[-1]) < 1e-18:
            c.pop()
        print(f"    ({lo!r}, {hi!r}, np.array([")
        for i in range(0, len(c), 3):
            print("        " + " ".join(f"{v!r}," for v in c[i:i + 3]))
        print("    ])),")
    np.set_printoptions(precision=17)
