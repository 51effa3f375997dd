"""OpInfos of ``ops/pointwise_math.py``: ``square`` and ``sgn``.

Registered into ``opinfo.OPINFOS`` (imported at the end of ``opinfo.py``), so every generated
test — numpy references, Meta device, NPU, gradcheck, torch comparison — covers them too.
"""

from __future__ import annotations

import numpy as np

import minitorch_compile as mtc

from .opinfo import ALL, dtype_of, pointwise, unary_sample

pointwise("square", unary_sample(), lambda a: a.astype(np.int64) ** 2 if a.dtype == bool
          else a * a, dtypes=ALL,
          out_dtype=lambda s: mtc.int64 if dtype_of(s.args[0]) is mtc.bool else dtype_of(s.args[0]))
pointwise("sgn", unary_sample(), lambda a: a if a.dtype == bool else np.sign(a))
