"""``square`` and ``sgn``: composites torch records as ``pow`` (``PowBackward0``) and
``sign`` (the trigonometric, hyperbolic and exponential ops are ``ops/pointwise_trig.py``, the
rounding ones ``ops/rounding.py``).

Invariant: ``square`` keeps integer dtypes (a bool squares to int64, as torch's
``pow(bool, 2)``); ``sgn`` is ``sign`` for the real dtypes we have.
"""

from __future__ import annotations

from .. import _api as F
from .. import _dtype
from .table import COMPOSITE, defop

square = defop("square(Tensor self) -> Tensor", COMPOSITE,
               decomposition=lambda self: F.ops.aten.pow(
                   self.to(_dtype.int64) if self.dtype is _dtype.bool_ else self, 2))
sgn = defop("sgn(Tensor self) -> Tensor", COMPOSITE,
            decomposition=lambda self: F.ops.aten.sign(self))  # (no complex dtypes here)
