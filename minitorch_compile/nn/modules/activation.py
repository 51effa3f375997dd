"""Activation modules: ``ReLU``, ``GELU``, ``Tanh``, ``Sigmoid``, ``Softmax``, ``LogSoftmax``,
``SiLU``, ``Hardtanh``, ``ReLU6``, ``Hardswish``, ``Hardsigmoid``; further down ``LeakyReLU``,
``ELU``, ``CELU``, ``SELU``, ``Mish``, ``Softplus``, ``LogSigmoid``, ``Softsign``, ``Tanhshrink``,
``Softmin``, ``GLU``, ``Threshold``, ``Hardshrink``, ``Softshrink`` and ``PReLU`` (a learnt slope)
(``torch/nn/modules/activation.py``).

Each is a parameter-free module whose ``forward`` calls the function of the same name in
``nn.functional``; the module form exists so activations can sit in a ``Sequential`` and show
their settings in the model's repr (``GELU(approximate='tanh')``, ``Softmax(dim=1)``).
"""

from __future__ import annotations

from ..._tensor import Tensor
from .. import functional as F
from .module import Module


class ReLU(Module):
    """max(x, 0)."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002 - torch's name
        return F.relu(input, inplace=self.inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class GELU(Module):
    """x * Phi(x) (``approximate='none'``) or its tanh approximation (``'tanh'``)."""

    def __init__(self, approximate: str = "none") -> None:
        super().__init__()
        self.approximate = approximate

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class Tanh(Module):
    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.tanh(input)


class Sigmoid(Module):
    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.sigmoid(input)


class Softmax(Module):
    """exp(x_i) / sum_j exp(x_j) along ``dim``."""

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.softmax(input, self.dim, _stacklevel=5)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class LogSoftmax(Module):
    """x_i - log sum_j exp(x_j) along ``dim``."""

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.log_softmax(input, self.dim, _stacklevel=5)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class SiLU(Module):
    """x * sigmoid(x)."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.silu(input, inplace=self.inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class Hardtanh(Module):
    """x clamped to [min_val, max_val]."""

    def __init__(self, min_val: float = -1.0, max_val: float = 1.0,
                 inplace: bool = False) -> None:
        super().__init__()
        if min_val > max_val:
            raise ValueError("min_val cannot be greater than max_val")
        self.min_val, self.max_val, self.inplace = min_val, max_val, inplace

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self) -> str:
        return f"min_val={self.min_val}, max_val={self.max_val}" + (
            ", inplace=True" if self.inplace else "")


class ReLU6(Hardtanh):
    """min(max(x, 0), 6)."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class Hardswish(Module):
    """x * relu6(x + 3) / 6."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.hardswish(input, self.inplace)


class Hardsigmoid(Module):
    """relu6(x + 3) / 6."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.hardsigmoid(input, self.inplace)


# ---------------------------------------------------------------- more activations
# (``ops/activations_more.py``: each a composite of pointwise ops)

from .. import _functional_more as _Fm  # noqa: E402
from ..parameter import Parameter  # noqa: E402


class _Inplace(Module):
    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class LeakyReLU(Module):
    """x if x > 0 else negative_slope * x."""

    def __init__(self, negative_slope: float = 0.01, inplace: bool = False) -> None:
        super().__init__()
        self.negative_slope, self.inplace = negative_slope, inplace

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return _Fm.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self) -> str:
        return f"negative_slope={self.negative_slope}" + (", inplace=True" if self.inplace
                                                          else "")


class ELU(Module):
    """x if x > 0 else alpha (exp(x) - 1)."""

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha, self.inplace = alpha, inplace

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return _Fm.elu(input, self.alpha, self.inplace)

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}" + (", inplace=True" if self.inplace else "")


class CELU(ELU):
    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return _Fm.celu(input, self.alpha, self.inplace)


class SELU(_Inplace):
    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return _Fm.selu(input, self.inplace)


class Mish(_Inplace):
    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return _Fm.mish(input, self.inplace)


class Softplus(Module):
    """log(1 + exp(beta x)) / beta (x itself beyond ``threshold``)."""

    def __init__(self, beta: float = 1.0, threshold: float = 20.0) -> None:
        super().__init__()
        self.beta, self.threshold = beta, threshold

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return _Fm.softplus(input, self.beta, self.threshold)

    def extra_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"


class LogSigmoid(Module):
    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return _Fm.logsigmoid(input)


class Softsign(Module):
    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return _Fm.softsign(input)


class Tanhshrink(Module):
    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return _Fm.tanhshrink(input)


class Softmin(Module):
    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return _Fm.softmin(input, self.dim, _stacklevel=5)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class GLU(Module):
    def __init__(self, dim: int = -1) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return _Fm.glu(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Threshold(Module):
    def __init__(self, threshold: float, value: float, inplace: bool = False) -> None:
        super().__init__()
        self.threshold, self.value, self.inplace = threshold, value, inplace

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return _Fm.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self) -> str:
        return f"threshold={self.threshold}, value={self.value}" + (
            ", inplace=True" if self.inplace else "")


class Hardshrink(Module):
    def __init__(self, lambd: float = 0.5) -> None:
        super().__init__()
        self.lambd = lambd

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return _Fm.hardshrink(input, self.lambd)

    def extra_repr(self) -> str:
        return f"{self.lambd}"


class Softshrink(Hardshrink):
    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return _Fm.softshrink(input, self.lambd)


class PReLU(Module):
    """x if x > 0 else a x, with ``a`` learnt (one per channel, or one shared), init 0.25."""

    def __init__(self, num_parameters: int = 1, init: float = 0.25, device=None,
                 dtype=None) -> None:
        from ... import _api

        super().__init__()
        self.num_parameters, self.init = num_parameters, init
        self.weight = Parameter(_api.full((num_parameters,), init, device=device,
                                          dtype=dtype))

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return _Fm.prelu(input, self.weight)

    def extra_repr(self) -> str:
        return f"num_parameters={self.num_parameters}"
