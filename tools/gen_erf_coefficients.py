"""Generate the coefficients of ``minitorch_compile/ops/_erf.py``: the float64 ``erfc``
Chebyshev tables and the float32 ``tanh(x g(x^2))`` polynomial ``_TANH_G``.

Run once (needs ``mpmath`` and, for the float32 fit, ``scipy``; neither is a runtime
dependency)::

    python tools/gen_erf_coefficients.py

float32: ``g``, a degree-6 polynomial in ``x^2``, minimizes the largest ``|tanh(x g(x^2)) -
erf(x)|`` over 3000 Chebyshev points of [0, 4], linearized (``tanh(z + dz) - tanh(z) ~
(1 - erf^2) dz`` with ``z = atanh(erf x)``) and solved as a linear program (bound 2.7e-8 on
the linearized error; the true error, where ``dz`` is not small, reaches 1.0e-7 near x = 1.57
in exact arithmetic; float32 rounding and numpy's ``tanh``, 1.4 ulp, bring it to <= 1.3e-7).

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


def tanh_fit(deg=6, xmax=4.0, n=3000):
    from scipy.optimize import linprog

    k = np.arange(n)
    x = xmax * (1 - np.cos(np.pi * (k + 0.5) / n)) / 2
    e = np.array([float(mpmath.erf(v)) for v in x])
    z = np.array([float(mpmath.atanh(mpmath.erf(v))) for v in x])
    sens = 1 - e ** 2
    a = np.stack([x * x ** (2 * j) for j in range(deg + 1)], 1) * sens[:, None]
    b = z * sens
    m = deg + 1  # unknowns: the coefficients and the bound t; minimize t, |a c - b| <= t
    cost = np.zeros(m + 1)
    cost[-1] = 1
    rows = np.vstack([np.hstack([a, -np.ones((n, 1))]), np.hstack([-a, -np.ones((n, 1))])])
    r = linprog(cost, A_ub=rows, b_ub=np.concatenate([b, -b]),
                bounds=[(None, None)] * m + [(0, None)], method="highs")
    return [float(v) for v in r.x[:m][::-1]]  # highest power first


if __name__ == "__main__":
    print("_TANH_G =", tuple(tanh_fit()))
    for lo, hi, deg in INTERVALS:
        c = [float(v) for v in cheb_coefficients(g, mpmath.mpf(lo), mpmath.mpf(hi), deg)]
        while abs(c[-1]) < 1e-18:
            c.pop()
        print(f"    ({lo!r}, {hi!r}, np.array([")
        for i in range(0, len(c), 3):
            print("        " + " ".join(f"{v!r}," for v in c[i:i + 3]))
        print("    ])),")
    np.set_printoptions(precision=17)
