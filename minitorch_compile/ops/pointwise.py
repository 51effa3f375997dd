"""Pointwise ops: one output element from the same-index element of each (broadcast) input.

Their meta rule comes from the category (``table.pointwise_meta``: broadcast shapes, then
torch's type promotion of the given kind); each declaration gives the numpy kernel and the
derivative formulas, written with tensor ops so they run eagerly *and* under tracing.

Python numbers are accepted wherever a ``Tensor`` operand is (``x * 2``), and take part in
promotion as torch's "wrapped numbers": ``int_tensor * 2.5`` is ``float32``.
"""

from __future__ import annotations

import math

import numpy as np

from .. import _api as F
from .. import _dtype
from ._erf import erf as _erf
from ._erf import gelu_float32
from .table import (
    ALWAYS_BOOL,
    COMPOSITE,
    DEFAULT,
    INT_TO_FLOAT,
    NO_PROMOTION,
    POINTWISE,
    MetaError,
    TensorMeta,
    broadcast_shapes,
    check_int_fits,
    defop,
    elementwise_dtypes,
)

_SQRT2 = math.sqrt(2.0)
_M_SQRT1_2 = 0.70710678118654752440
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)

_LN2 = math.log(2.0)


def _unary(name, kernel, derivative, promotion=INT_TO_FLOAT, inplace=True, **kw):
    return defop(f"{name}(Tensor self) -> Tensor", POINTWISE, kernel=kernel,
                 promotion=promotion, derivatives={"self": derivative}, inplace=inplace, **kw)


# ---------------------------------------------------------------- unary

def _neg_kernel(a):
    if a.dtype == np.bool_:
        raise MetaError("Negation, the `-` operator, on a bool tensor is not supported. If you "
                        "are trying to invert a mask, use the `~` or `logical_not()` operator "
                        "instead.")
    return np.negative(a)


neg = _unary("neg", _neg_kernel, lambda grad: -grad, promotion=DEFAULT)
_unary("abs", np.abs, lambda grad, self: grad * self.sign(), promotion=DEFAULT)
def _sign_kernel(a):
    if a.dtype == np.bool_:  # numpy has no bool sign; it is the identity
        return a.copy()
    if a.dtype.kind == "f":  # torch's sign is (0 < x) - (x < 0): 0, not nan, for nan
        return np.where(np.isnan(a), 0, np.sign(a))
    return np.sign(a)


sign = _unary("sign", _sign_kernel, lambda grad: F.zeros_like(grad), promotion=DEFAULT)
exp = _unary("exp", np.exp, lambda grad, result: grad * result)
expm1 = _unary("expm1", np.expm1, lambda grad, result: grad * (result + 1))
log = _unary("log", np.log, lambda grad, self: grad / self)
log2 = _unary("log2", np.log2, lambda grad, self: grad / (self * _LN2))
log1p = _unary("log1p", np.log1p, lambda grad, self: grad / (self + 1))
sin = _unary("sin", np.sin, lambda grad, self: grad * self.cos())
cos = _unary("cos", np.cos, lambda grad, self: grad * -self.sin())
tanh = _unary("tanh", np.tanh, lambda grad, result: grad * (1 - result * result))
sigmoid = _unary("sigmoid", lambda a: 1 / (1 + np.exp(-a)),
                 lambda grad, result: grad * result * (1 - result))
relu = _unary("relu", lambda a: np.maximum(a, 0),
              lambda grad, result: F.where(result > 0, grad, 0), promotion=DEFAULT)
sqrt = _unary("sqrt", np.sqrt, lambda grad, result: grad / (2 * result))
rsqrt = _unary("rsqrt", lambda a: 1 / np.sqrt(a),
               lambda grad, result: -0.5 * grad * result * result * result)
reciprocal = _unary("reciprocal", lambda a: 1 / a, lambda grad, result: -grad * result * result)
erf = _unary("erf", _erf,
             lambda grad, self: grad * _TWO_OVER_SQRT_PI * (-(self * self)).exp())


def _gelu_kernel(a, approximate="none"):
    if approximate == "tanh":
        return 0.5 * a * (1 + np.tanh(_SQRT_2_OVER_PI * (a + 0.044715 * a * a * a)))
    if approximate != "none":
        raise ValueError(f"approximate argument must be either none or tanh, got {approximate}")
    if a.dtype == np.float32:  # the compiled kernel's body too (ops/_erf.py)
        return gelu_float32(a)
    return 0.5 * a * (1 + _erf(a * _M_SQRT1_2))  # a multiply, as torch and the decomposition


def _gelu_backward(grad, self, approximate):
    if approximate == "tanh":
        inner = _SQRT_2_OVER_PI * (self + 0.044715 * self * self * self)
        t = inner.tanh()
        d_inner = _SQRT_2_OVER_PI * (1 + 3 * 0.044715 * self * self)
        return grad * (0.5 * (1 + t) + 0.5 * self * (1 - t * t) * d_inner)
    cdf = 0.5 * (1 + (self / _SQRT2).erf())
    pdf = (-0.5 * self * self).exp() * _INV_SQRT_2PI
    return grad * (cdf + self * pdf)


gelu = defop("gelu(Tensor self, *, str approximate='none') -> Tensor", POINTWISE,
             kernel=_gelu_kernel, promotion=INT_TO_FLOAT, inplace=True,
             derivatives={"self": _gelu_backward})


def _clamp_kernel(a, min=None, max=None):  # noqa: A002 - torch's names
    if min is not None:
        a = np.maximum(a, min)
    if max is not None:
        a = np.minimum(a, max)
    return a


def _clamp_backward(grad, self, min, max):  # noqa: A002
    keep = F.ones_like(self, dtype=F.bool)
    if min is not None:
        keep = keep * (self >= min)
    if max is not None:
        keep = keep * (self <= max)
    return F.where(keep, grad, 0)


def _clamp_backward_min(grad, self, min, max):  # noqa: A002
    """The gradient goes to ``min`` where it was picked (torch: ``clamp_backward_min_max``)."""
    picked = self < min
    if max is not None:
        picked = picked * (min < max)
    return F.where(picked, grad, 0)


def _clamp_backward_max(grad, self, min, max):  # noqa: A002
    picked = self > max
    if min is not None:
        picked = F.logical_or(picked, max < min)
    return F.where(picked, grad, 0)


def _clamp_meta(self, min=None, max=None):  # noqa: A002
    if min is None and max is None:
        raise MetaError("torch.clamp: At least one of 'min' or 'max' must not be None")
    operands = [v for v in (self, min, max) if v is not None]
    _, result = elementwise_dtypes(DEFAULT, *operands)
    for bound in (min, max):
        check_int_fits(bound, result)
    return TensorMeta(broadcast_shapes(*[tuple(v.shape) for v in operands
                                         if hasattr(v, "shape")]), result)


# torch's ``clamp.Tensor``: bounds may be tensors or numbers, and take part in type promotion
# (``int_tensor.clamp(min=0.5)`` is float32), so they are Tensor-typed operands here.
clamp = defop("clamp(Tensor self, Tensor? min=None, Tensor? max=None) -> Tensor", POINTWISE,
              kernel=_clamp_kernel, meta=_clamp_meta, promotion=DEFAULT, inplace=True,
              derivatives={"self": _clamp_backward, "min": _clamp_backward_min,
                           "max": _clamp_backward_max})



# torch's ``clamp_min``/``clamp_max`` (``torch/_refs``: clamp with one bound), so they share
# clamp's kernel and its gradient (the bound is picked where self is beyond it)
# (torch records clamp_min as its own node: ClampMinBackward0/1, autograd/node_names.py)
clamp_min = defop("clamp_min(Tensor self, Tensor min) -> Tensor", COMPOSITE,
                  decomposition=lambda self, bound: clamp(self, bound, None))
clamp_max = defop("clamp_max(Tensor self, Tensor max) -> Tensor", COMPOSITE,
                  decomposition=lambda self, bound: clamp(self, None, bound))

clone = defop("clone(Tensor self, *, str? memory_format=None) -> Tensor", POINTWISE,
              kernel=lambda a, memory_format=None: np.array(a, order="C", copy=True),
              promotion=NO_PROMOTION, derivatives={"self": lambda grad: grad})

logical_not = defop("logical_not(Tensor self) -> Tensor", POINTWISE,
                    kernel=np.logical_not, promotion=ALWAYS_BOOL, differentiable=False)


def _classify(name, np_fn, for_non_float):
    """``isnan``/``isinf``/``isfinite``/``signbit``: bool, computed in the input's own dtype (an
    integer is never nan or inf, always finite; numpy's float tests reject integer arrays)."""
    def kernel(a):
        if a.dtype.kind in "f":
            return np_fn(a)
        return for_non_float(a)
    return defop(f"{name}(Tensor self) -> Tensor", POINTWISE, kernel=kernel,
                 promotion=ALWAYS_BOOL, differentiable=False)


isnan = _classify("isnan", np.isnan, lambda a: np.zeros(a.shape, dtype=bool))
isinf = _classify("isinf", np.isinf, lambda a: np.zeros(a.shape, dtype=bool))
isfinite = _classify("isfinite", np.isfinite, lambda a: np.ones(a.shape, dtype=bool))
signbit = _classify("signbit", np.signbit, lambda a: a < 0 if a.dtype.kind == "i"
                    else np.zeros(a.shape, dtype=bool))

# ---------------------------------------------------------------- binary


def _check_alpha(a, b, alpha, subtract=False):
    """torch's checks (``alpha_check``, ``sub_check``): no silent truncation of alpha."""
    kind = np.result_type(a, b).kind
    if subtract and kind == "b":
        raise MetaError("Subtraction, the `-` operator, with a bool tensor is not supported. "
                        "If you are trying to invert a mask, use the `~` or `logical_not()` "
                        "operator instead.")
    if kind != "b" and isinstance(alpha, bool):
        raise MetaError("Boolean alpha only supported for Boolean results.")
    if kind in "iub" and isinstance(alpha, float):
        raise MetaError("For integral input tensors, argument alpha must not be a floating "
                        "point number.")


def _as_alpha(a, b, alpha):
    """alpha in the computation's integer dtype (wrapping, as torch converts it: uint8 -1 is
    255, and ``a + 255 * b`` is ``a - b`` modulo 256)."""
    dt = np.result_type(a, b)
    if type(alpha) is int and dt.kind in "iu":
        return _dtype.wrap_int(alpha, dt)
    return alpha


def _add_kernel(a, b, alpha=1):
    _check_alpha(a, b, alpha)
    return a + b if alpha == 1 else a + _as_alpha(a, b, alpha) * b


def _sub_kernel(a, b, alpha=1):
    _check_alpha(a, b, alpha, subtract=True)
    return a - b if alpha == 1 else a - _as_alpha(a, b, alpha) * b


add = defop("add(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor", POINTWISE,
            kernel=_add_kernel,
            promotion=DEFAULT, inplace=True,
            derivatives={"self": lambda grad: grad,
                         "other": lambda grad, alpha: grad if alpha == 1 else grad * alpha})
sub = defop("sub(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor", POINTWISE,
            kernel=_sub_kernel,
            promotion=DEFAULT, inplace=True,
            derivatives={"self": lambda grad: grad,
                         "other": lambda grad, alpha: -grad if alpha == 1 else grad * -alpha})
rsub = defop("rsub(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor", POINTWISE,
             kernel=lambda a, b, alpha=1: _sub_kernel(b, a, alpha),
             promotion=DEFAULT,
             derivatives={"self": lambda grad, alpha: -grad if alpha == 1 else grad * -alpha,
                          "other": lambda grad: grad})
mul = defop("mul(Tensor self, Tensor other) -> Tensor", POINTWISE, kernel=np.multiply,
            promotion=DEFAULT, inplace=True,
            derivatives={"self": lambda grad, other: grad * other,
                         "other": lambda grad, self: grad * self})


def _div_kernel(a, b, rounding_mode=None):
    if rounding_mode is None:
        return np.true_divide(a, b)
    if rounding_mode not in ("trunc", "floor"):
        raise ValueError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' "
                         f"but found '{rounding_mode}'")
    if np.result_type(a, b).kind in "iub" and np.any(np.asarray(b) == 0):
        raise MetaError("ZeroDivisionError")  # torch's message for integer division by zero
    if rounding_mode == "floor":  # Python's floor division: 1.0 // 0.1 == 9.0, not floor(10.0)
        return np.floor_divide(a, b)
    return np.trunc(np.true_divide(a, b))


def _div_other(grad, self, other, rounding_mode):
    if rounding_mode is not None:
        return F.zeros_like(grad)
    return -grad * self / (other * other)


def _div_promotion(self, other, rounding_mode=None):
    """True division makes integers float; a rounding division keeps them integers."""
    return INT_TO_FLOAT if rounding_mode is None else DEFAULT


div = defop("div(Tensor self, Tensor other, *, str? rounding_mode=None) -> Tensor", POINTWISE,
            kernel=_div_kernel, promotion=_div_promotion, inplace=True,
            derivatives={"self": lambda grad, other, rounding_mode:
                         grad / other if rounding_mode is None else F.zeros_like(grad),
                         "other": _div_other})


def _pow_self(grad, self, exponent):
    """exponent * self^(exponent - 1), and 0 where exponent == 0 (not 0 * 0^-1 = nan), as
    torch's ``pow_backward_self``."""
    if not isinstance(exponent, F.Tensor):
        return F.zeros_like(grad) if exponent == 0 else grad * exponent * self ** (exponent - 1)
    return F.where(exponent == 0, 0, grad * exponent * self ** (exponent - 1))


def _pow_exponent(grad, self, exponent, result):
    """result * log(self), and 0 where self == 0 and exponent >= 0 (not 0 * -inf = nan), as
    torch's ``pow_backward_exponent``; a number base becomes a 0-dim tensor, so a negative one
    gives nan (as torch) rather than a math domain error."""
    if not isinstance(self, F.Tensor):
        self = F.full((), self, dtype=result.dtype, device=result.device)
    return F.where(F.logical_and(self == 0, exponent >= 0), 0, grad * result * self.log())


def _pow_kernel(a, b):
    if isinstance(b, int) and b < 0 and np.asarray(a).dtype.kind in "iu":
        raise MetaError("Integers to negative integer powers are not allowed.")
    return np.power(a, b)


defop("pow(Tensor self, Tensor exponent) -> Tensor", POINTWISE,
            kernel=_pow_kernel, promotion=DEFAULT, inplace=True,
            derivatives={"self": _pow_self, "exponent": _pow_exponent})


maximum = defop("maximum(Tensor self, Tensor other) -> Tensor", POINTWISE, kernel=np.maximum,
                promotion=DEFAULT,
                derivatives={"self": lambda grad, self, other: F.where(
                                 self == other, grad / 2, F.where(self > other, grad, 0)),
                             "other": lambda grad, self, other: F.where(
                                 self == other, grad / 2, F.where(other > self, grad, 0))})
minimum = defop("minimum(Tensor self, Tensor other) -> Tensor", POINTWISE, kernel=np.minimum,
                promotion=DEFAULT,
                derivatives={"self": lambda grad, self, other: F.where(
                                 self == other, grad / 2, F.where(self < other, grad, 0)),
                             "other": lambda grad, self, other: F.where(
                                 self == other, grad / 2, F.where(other < self, grad, 0))})


def _cmp(name, kernel):
    return defop(f"{name}(Tensor self, Tensor other) -> Tensor", POINTWISE, kernel=kernel,
                 promotion=ALWAYS_BOOL, differentiable=False)


eq = _cmp("eq", np.equal)
ne = _cmp("ne", np.not_equal)
lt = _cmp("lt", np.less)
le = _cmp("le", np.less_equal)
gt = _cmp("gt", np.greater)
ge = _cmp("ge", np.greater_equal)
logical_and = _cmp("logical_and", np.logical_and)
logical_or = _cmp("logical_or", np.logical_or)

def _where_meta(condition, self, other):
    """Broadcast all three; promote ``self`` and ``other`` only; the condition must be bool."""
    if condition.dtype is not _dtype.bool_:
        raise MetaError(f"where expected condition to be a boolean tensor, but got a tensor "
                        f"with dtype {condition.dtype.name}")
    shapes = [tuple(t.shape) for t in (condition, self, other) if isinstance(t, F.Tensor)]
    return TensorMeta(broadcast_shapes(*shapes), elementwise_dtypes(DEFAULT, self, other)[1])


where = defop("where(Tensor condition, Tensor self, Tensor other) -> Tensor", POINTWISE,
              kernel=lambda c, a, b: np.where(c, a, b), promotion=DEFAULT, meta=_where_meta,
              derivatives={"self": lambda grad, condition: F.where(condition, grad, 0),
                           "other": lambda grad, condition: F.where(condition, 0, grad)},
              notes="the condition takes part in promotion only as a bool, which never wins")
