"""Integer-flavoured pointwise ops: ``remainder``/``fmod`` and the bitwise ops ``& | ^ ~``.

Mirrors ``aten/src/ATen/native/BinaryOps.cpp`` and the sign conventions of torch:

* ``remainder(a, b) = a - b * floor(a / b)`` takes the sign of the divisor, like Python's
  ``%`` (``-5 % 3 == 1``); ``fmod(a, b) = a - b * trunc(a / b)`` takes the sign of the dividend,
  like C's ``fmod`` (``fmod(-5, 3) == -2``).  Integer division by zero raises
  ``ZeroDivisionError`` (torch's message); floats give nan.
* ``bitwise_and/or/xor/not`` are defined on bool and integer tensors only (on bool they are the
  logical ops); a float operand is torch's ``"bitwise_xor_cpu" not implemented for 'Float'``.
  ``x & y``, ``x | y``, ``x ^ y``, ``~x`` reach these ops (``_tensor_methods.py``).

All promote like ``add`` (``DEFAULT``).  The bitwise ops are not differentiable.
"""

from __future__ import annotations

import numpy as np

from .. import _api as F
from .. import _dtype
from .table import DEFAULT, POINTWISE, MetaError, defop


def _not_implemented(op: str, a) -> NotImplementedError:
    name = _dtype.scalar_type_name(_dtype.from_numpy_dtype(np.asarray(a).dtype))
    return NotImplementedError(f'"{op}_cpu" not implemented for \'{name}\'')


# ---------------------------------------------------------------- remainder / fmod


def _modulo_kernel(name, np_fn):
    def kernel(a, b):
        kind = np.result_type(a, b).kind
        if kind == "b":
            raise _not_implemented(name, np.asarray(a, dtype=bool))
        if kind in "iu" and np.any(np.asarray(b) == 0):
            raise MetaError("ZeroDivisionError")
        return np_fn(a, b)
    return kernel


remainder = defop(
    "remainder(Tensor self, Tensor other) -> Tensor", POINTWISE,
    kernel=_modulo_kernel("remainder", np.remainder), promotion=DEFAULT, inplace=True,
    derivatives={"self": lambda grad: grad,
                 "other": lambda grad, self, other:
                 -grad * F.div(self, other, rounding_mode="floor")})
fmod = defop(
    "fmod(Tensor self, Tensor other) -> Tensor", POINTWISE,
    kernel=_modulo_kernel("fmod", np.fmod), promotion=DEFAULT, inplace=True,
    derivatives={"self": lambda grad: grad,
                 "other": lambda grad, self, other:
                 -grad * F.div(self, other, rounding_mode="trunc")})

# ---------------------------------------------------------------- bitwise


def _bitwise_kernel(name, np_fn):
    def kernel(*arrays):
        for a in arrays:
            if np.asarray(a).dtype.kind == "f":
                raise _not_implemented(name, a)
        return np_fn(*arrays)
    return kernel


def _bitwise(name, np_fn):
    return defop(f"{name}(Tensor self, Tensor other) -> Tensor", POINTWISE,
                 kernel=_bitwise_kernel(name, np_fn), promotion=DEFAULT, inplace=True,
                 differentiable=False)


bitwise_and = _bitwise("bitwise_and", np.bitwise_and)
bitwise_or = _bitwise("bitwise_or", np.bitwise_or)
bitwise_xor = _bitwise("bitwise_xor", np.bitwise_xor)
bitwise_not = defop("bitwise_not(Tensor self) -> Tensor", POINTWISE,
                    kernel=_bitwise_kernel("bitwise_not", np.invert), promotion=DEFAULT,
                    inplace=True, differentiable=False)
