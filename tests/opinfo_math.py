"""OpInfos of the rest of torch's unary math (``ops/pointwise_math.py``): the other
trigonometric and hyperbolic functions, ``exp2``, ``log10``, ``erfc``, ``square``, ``sgn``.

Registered into ``opinfo.OPINFOS`` (imported at the end of ``opinfo.py``), so every generated
test — numpy references, Meta device, NPU, gradcheck, torch comparison — covers them too.
The inverse functions sample inside their domains, away from the poles and branch points
where a finite-difference gradient check means nothing.
"""

from __future__ import annotations

import math

import numpy as np

import minitorch_compile as mtc

from .opinfo import ALL, FLOATS, TO_FLOAT, S, dtype_of, pointwise, unary_sample

_erfc = np.vectorize(math.erfc, otypes=[np.float64])


def _scaled_sample(scale: float, shift: float = 0.0):
    """Floats of [-3, 3] mapped to ``[-3 scale + shift, 3 scale + shift]``."""
    def sample(g, dt):
        shape = g.shape(min_side=1 if g.grad else 0)
        return S(np.asarray(g.array(shape, dt) * scale + shift, dtype=dt.np))
    return sample


pointwise("tan", _scaled_sample(0.4), np.tan, TO_FLOAT, dtypes=FLOATS, second_order=True)
pointwise("asin", _scaled_sample(0.3), np.arcsin, TO_FLOAT, dtypes=FLOATS)
pointwise("acos", _scaled_sample(0.3), np.arccos, TO_FLOAT, dtypes=FLOATS)
pointwise("atan", unary_sample(), np.arctan, TO_FLOAT, second_order=True)
pointwise("sinh", unary_sample(), np.sinh, TO_FLOAT, second_order=True)
pointwise("cosh", unary_sample(), np.cosh, TO_FLOAT, second_order=True)
pointwise("asinh", unary_sample(), np.arcsinh, TO_FLOAT)
pointwise("acosh", _scaled_sample(0.5, 3.0), np.arccosh, TO_FLOAT, dtypes=FLOATS)
pointwise("atanh", _scaled_sample(0.3), np.arctanh, TO_FLOAT, dtypes=FLOATS)
pointwise("exp2", unary_sample(), np.exp2, TO_FLOAT, second_order=True)
pointwise("log10", unary_sample("positive"), np.log10, TO_FLOAT)
pointwise("erfc", unary_sample(), _erfc, TO_FLOAT)

pointwise("square", unary_sample(), lambda a: a.astype(np.int64) ** 2 if a.dtype == bool
          else a * a, dtypes=ALL,
          out_dtype=lambda s: mtc.int64 if dtype_of(s.args[0]) is mtc.bool else dtype_of(s.args[0]))
pointwise("sgn", unary_sample(), lambda a: a if a.dtype == bool else np.sign(a))
