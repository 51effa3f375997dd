"""Activation composites: ``silu``, ``hardtanh``, ``hardswish``, ``hardsigmoid``.

Mirrors ``torch/_decomp/decompositions.py`` and ``torch/_refs/nn/functional``: torch decomposes
each of these into pointwise primitives, and so do we — autograd, tracing and Inductor only see
``mul``, ``sigmoid``, ``clamp``, ``where`` and comparisons.

The gradients are torch's ``*_backward`` formulas, which differ at the kinks:

* ``hardtanh``/``hardsigmoid``: the gradient is 0 *at* the bounds (torch's ``hardtanh_backward``
  and ``hardsigmoid_backward`` use strict ``min < x < max``).  ``clamp``'s gradient is 1 there,
  so these decompose into ``where(x <= min, min, where(x >= max, max, x))``: a constant branch
  gets no gradient, the strict interior gets ``grad``;
* ``hardswish``: ``x * clamp(x + 3, 0, 6) / 6`` (torch's decomposition); its gradient is
  ``x / 3 + 0.5`` on [-3, 3] and the clamp's inclusive bounds give exactly torch's
  ``hardswish_backward`` (-0.5 at -3, 1.5 at 3);
* ``silu``: ``x * sigmoid(x)``, whose gradient ``s (1 + x (1 - s))`` is ``silu_backward``.

Integer inputs raise torch's ``"silu_cpu" not implemented for 'Long'`` (``hardtanh`` accepts
them, as torch's does, and keeps their dtype).
"""

from __future__ import annotations

from .. import _api as F
from .. import _dtype
from .table import COMPOSITE, defop


def _float_only(name, self):
    if not self.dtype.is_floating_point:
        raise NotImplementedError(f'"{name}_cpu" not implemented for '
                                  f"'{_dtype.scalar_type_name(self.dtype)}'")


def _silu(self):
    _float_only("silu", self)
    return self * self.sigmoid()


def _hardtanh(self, min_val=-1, max_val=1):
    if not self.dtype.is_floating_point:  # torch casts the bounds to the input's dtype
        min_val, max_val = int(min_val), int(max_val)
    return F.where(self <= min_val, min_val, F.where(self >= max_val, max_val, self))


def _hardswish(self):
    _float_only("hardswish", self)
    return self * (self + 3).clamp(0, 6) / 6


def _hardsigmoid(self):
    _float_only("hardsigmoid", self)
    return F.where(self <= -3, 0.0, F.where(self >= 3, 1.0, (self + 3) / 6))


silu = defop("silu(Tensor self) -> Tensor", COMPOSITE, decomposition=_silu)
hardtanh = defop("hardtanh(Tensor self, Scalar min_val=-1, Scalar max_val=1) -> Tensor",
                 COMPOSITE, decomposition=_hardtanh)
hardswish = defop("hardswish(Tensor self) -> Tensor", COMPOSITE, decomposition=_hardswish)
hardsigmoid = defop("hardsigmoid(Tensor self) -> Tensor", COMPOSITE,
                    decomposition=_hardsigmoid)
