"""Activation composites: ``silu``, ``hardtanh``, ``hardswish``, ``hardsigmoid``.

Mirrors ``torch/_decomp/decompositions.py`` and ``torch/_refs/nn/functional``: torch decomposes
each of these into pointwise primitives, and so do we — autograd, tracing and Inductor only see
``mul``, ``sigmoid``, ``where`` and comparisons.

The gradients are torch's ``*_backward`` formulas, which differ at the kinks:

* ``hardtanh``/``hardsigmoid``/``hardswish``: torch's backward kernels use the *strict*
  interior (``min < x < max``), so at a bound the gradient is the outer piece's (0 for
  hardtanh and hardsigmoid; 0 at -3 and 1 at 3 for hardswish).  ``clamp``'s gradient is 1 at
  its bounds, so instead of torch's ``clamp`` decompositions these are written as
  ``where(x <= lo, <left piece>, where(x >= hi, <right piece>, <middle piece>))``: each branch
  is differentiated on its own, which gives exactly torch's gradients, bounds included;
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
    return F.where(self <= -3, 0.0, F.where(self >= 3, self, self * (self + 3) / 6))


def _hardsigmoid(self):
    _float_only("hardsigmoid", self)
    return F.where(self <= -3, 0.0, F.where(self >= 3, 1.0, (self + 3) / 6))


silu = defop("silu(Tensor self) -> Tensor", COMPOSITE, decomposition=_silu)
hardtanh = defop("hardtanh(Tensor self, Scalar min_val=-1, Scalar max_val=1) -> Tensor",
                 COMPOSITE, decomposition=_hardtanh)
hardswish = defop("hardswish(Tensor self) -> Tensor", COMPOSITE, decomposition=_hardswish)
hardsigmoid = defop("hardsigmoid(Tensor self) -> Tensor", COMPOSITE,
                    decomposition=_hardsigmoid)
