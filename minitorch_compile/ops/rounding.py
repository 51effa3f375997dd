"""Rounding ops: ``floor``, ``ceil``, ``trunc`` (``fix``), ``round`` (and ``round.decimals``),
``frac``.

Mirrors ``aten/src/ATen/native/UnaryOps.cpp`` and ``derivatives.yaml``: the first four have a
zero gradient (``zeros_like(grad)``), ``frac``'s is ``grad``.  They are ``POINTWISE`` rows, so
Inductor lowers them with no extra work: their kernels run whole tiles inside the fused
kernel (``ops.kernel``).

torch's dtype rules, which numpy does not share: on an integer tensor ``floor``/``ceil``/
``trunc``/``round`` return a copy in the same dtype (``np.floor`` would make float64), a bool
tensor is refused (``"floor_vml_cpu" not implemented for 'Bool'``), and ``frac`` and
``round(decimals=)`` accept floating dtypes only.  ``round`` rounds half to even, as numpy's
``rint`` does; with ``decimals`` it is torch's kernel: ``rint(x * 10^d) / 10^d``
(``rint(x / 10^-d) * 10^-d`` for ``d < 0``) in the tensor's own dtype.
"""

from __future__ import annotations

import numpy as np

from .. import _api as F
from .. import _dtype
from .table import DEFAULT, POINTWISE, TensorMeta, defop


def _zero_grad(grad):
    return F.zeros_like(grad)


def _meta(name: str, ints: bool):
    """Same shape and dtype; bool refused, integers refused unless ``ints``."""
    def meta(self, *args, **kwargs):
        refused = self.dtype is _dtype.bool_ or (not ints and not self.dtype.is_floating_point)
        if refused:
            raise NotImplementedError(f'"{name}" not implemented for '
                                      f"'{_dtype.scalar_type_name(self.dtype)}'")
        return TensorMeta(tuple(self.shape), self.dtype)
    return meta


def _integer_copy(ufunc):
    """``ufunc`` on floats; an integer tensor comes back as a copy of itself."""
    def kernel(a):
        return a.copy() if a.dtype.kind in "iu" else ufunc(a)
    kernel.__name__ = ufunc.__name__
    return kernel


def _rounding(name, ufunc):
    return defop(f"{name}(Tensor self) -> Tensor", POINTWISE, kernel=_integer_copy(ufunc),
                 meta=_meta(f"{name}_vml_cpu", ints=True), promotion=DEFAULT,
                 derivatives={"self": _zero_grad}, inplace=True)


floor = _rounding("floor", np.floor)
ceil = _rounding("ceil", np.ceil)
trunc = _rounding("trunc", np.trunc)
round = _rounding("round", np.rint)  # noqa: A001 - torch's name


def _round_decimals_kernel(a, decimals):
    if decimals >= 0:
        scale = a.dtype.type(10.0 ** decimals)
        return np.rint(a * scale) / scale
    scale = a.dtype.type(10.0 ** -decimals)
    return np.rint(a / scale) * scale


round_decimals = defop(
    "round.decimals(Tensor self, *, int decimals) -> Tensor", POINTWISE,
    kernel=_round_decimals_kernel, meta=_meta("round_cpu", ints=False), promotion=DEFAULT,
    derivatives={"self": _zero_grad}, inplace=True)


def _frac_kernel(a):
    return a - np.trunc(a)


frac = defop("frac(Tensor self) -> Tensor", POINTWISE, kernel=_frac_kernel,
             meta=_meta("frac_cpu", ints=False), promotion=DEFAULT,
             derivatives={"self": lambda grad: grad}, inplace=True)
