"""More activation composites: ``leaky_relu``, ``elu``/``selu``/``celu``, ``softplus``,
``mish``, ``log_sigmoid``, ``glu``, ``prelu``, ``threshold``, ``hardshrink``/``softshrink``.

Mirrors ``torch/_decomp/decompositions.py`` and ``torch/_refs/nn/functional``: each is written
with pointwise ops (``where``, ``exp``, ``log1p``, comparisons), so autograd, tracing and
Inductor only see primitives — in a compiled graph a whole activation fuses into its
neighbours' kernel.

Two rules keep the gradients torch's:

* **the branch at a kink is torch's**: torch's ``*_backward`` kernels pick one side of each
  comparison (``elu``: ``x <= 0`` is the exponential side; ``leaky_relu``: ``x > 0`` the
  identity side); ``where(x > 0, a, b)`` differentiates each branch on its own, so the
  comparison written here is the one in torch's backward;
* **the branch not taken must not overflow**: ``where``'s gradient is 0 on the branch not
  taken, but an ``exp`` that overflowed there still multiplies that 0 by ``inf`` = NaN.  So an
  exponential only ever sees the values its branch uses: ``elu`` takes ``expm1(min(x, 0))``,
  ``softplus`` ``log1p(exp(min(beta x, threshold)))``.  (``clamp``'s gradient is 1 at its
  bound, so the kink itself is unaffected.)

``log_sigmoid(x) = -softplus(-x)``: stable for large ``|x|``, and its gradient at 0 is 1/2.
"""

from __future__ import annotations

from .. import _api as F
from .activations import _float_only
from .table import COMPOSITE, defop


def _leaky_relu(self, negative_slope=0.01):
    _float_only("leaky_relu", self)
    return F.where(self > 0, self, self * negative_slope)


def _elu(self, alpha=1, scale=1, input_scale=1):
    _float_only("elu", self)
    negative = (self.clamp(max=0) * input_scale).expm1() * (alpha * scale)
    return F.where(self > 0, self * scale, negative)


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _softplus(self, beta=1, threshold=20):
    _float_only("softplus", self)
    scaled = self * beta
    soft = scaled.clamp(max=threshold).exp().log1p() / beta
    return F.where(scaled > threshold, self, soft)


def _mish(self):
    _float_only("mish", self)
    return self * _softplus(self).tanh()


def _log_sigmoid(self):
    _float_only("log_sigmoid", self)
    return -_softplus(-self)


def _glu(self, dim=-1):
    if self.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    d = dim % self.ndim if -self.ndim <= dim < self.ndim else dim
    n = self.shape[d]
    if n % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {d} is size {n}")
    _float_only("glu", self)
    return self.narrow(d, 0, n // 2) * self.narrow(d, n // 2, n // 2).sigmoid()


def _prelu(self, weight):
    if weight.ndim > 1:
        raise RuntimeError(f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: "
                           f"ndim = {weight.ndim}")
    channels = self.shape[1] if self.ndim >= 2 else 1
    if weight.numel() != 1 and weight.numel() != channels:
        raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found "
                           f"parameter numbers = {weight.numel()} and channel size = "
                           f"{channels}.")
    _float_only("prelu", self)
    if weight.numel() == 1:
        w = weight.reshape(())
    else:
        w = weight.reshape([1, channels] + [1] * (self.ndim - 2))
    return F.where(self > 0, self, w * self)


def _threshold(self, threshold, value):
    return F.where(self > threshold, self, value)


def _hardshrink(self, lambd=0.5):
    return F.where(self.abs() > lambd, self, 0)


def _softshrink(self, lambd=0.5):
    if lambd < 0:
        raise RuntimeError(f"lambda must be greater or equal to 0, but found to be {lambd}.")
    return F.where(self > lambd, self - lambd, F.where(self < -lambd, self + lambd, 0))


leaky_relu = defop("leaky_relu(Tensor self, Scalar negative_slope=0.01) -> Tensor", COMPOSITE,
                   decomposition=_leaky_relu)
elu = defop("elu(Tensor self, Scalar alpha=1, Scalar scale=1, Scalar input_scale=1) -> Tensor",
            COMPOSITE, decomposition=_elu)
selu = defop("selu(Tensor self) -> Tensor", COMPOSITE,
             decomposition=lambda self: _elu(self, _SELU_ALPHA, _SELU_SCALE))
celu = defop("celu(Tensor self, Scalar alpha=1.0) -> Tensor", COMPOSITE,
             decomposition=lambda self, alpha=1.0: _elu(self, alpha, 1, 1 / alpha))
softplus = defop("softplus(Tensor self, Scalar beta=1, Scalar threshold=20) -> Tensor",
                 COMPOSITE, decomposition=_softplus)
mish = defop("mish(Tensor self) -> Tensor", COMPOSITE, decomposition=_mish)
log_sigmoid = defop("log_sigmoid(Tensor self) -> Tensor", COMPOSITE, decomposition=_log_sigmoid)
glu = defop("glu(Tensor self, int dim=-1) -> Tensor", COMPOSITE, decomposition=_glu)
prelu = defop("prelu(Tensor self, Tensor weight) -> Tensor", COMPOSITE, decomposition=_prelu)
threshold = defop("threshold(Tensor self, Scalar threshold, Scalar value) -> Tensor", COMPOSITE,
                  decomposition=_threshold)
hardshrink = defop("hardshrink(Tensor self, Scalar lambd=0.5) -> Tensor", COMPOSITE,
                   decomposition=_hardshrink)
softshrink = defop("softshrink(Tensor self, Scalar lambd=0.5) -> Tensor", COMPOSITE,
                   decomposition=_softshrink)
