"""``nn.init``: fill a tensor in place with a chosen distribution (``torch/nn/init.py``).

The idea: a good initial scale keeps activations and gradients from exploding or vanishing
as they pass through many layers.  For a layer ``y = W x`` with ``fan_in`` inputs, each output
sums ``fan_in`` products, so ``Var[y] = fan_in * Var[W] * Var[x]``; choosing

    Var[W] = gain^2 / fan                                   (Kaiming/He;   fan = fan_in or fan_out)
    Var[W] = gain^2 * 2 / (fan_in + fan_out)                (Xavier/Glorot)

keeps ``Var[y]`` about ``Var[x]``.  ``gain`` corrects for what the nonlinearity does to the
variance (ReLU halves it, hence ``gain = sqrt(2)``).  A uniform ``U(-b, b)`` has variance
``b^2 / 3``, so the uniform variants use ``bound = sqrt(3) * std``.

For a weight of shape ``(out, in, *kernel)`` (``Linear``: ``(out_features, in_features)``):
``fan_in = in * prod(kernel)`` and ``fan_out = out * prod(kernel)``.

Every function writes *in place* and returns the tensor; it records no autograd history
(torch runs them under ``no_grad``).  Random values come from the global generator
(``mtc.manual_seed``) or the ``mtc.Generator`` passed, drawn as torch draws them: the same
seed gives torch's weights (``_random.py``).  A numpy ``Generator`` may be passed too (numpy's
stream).
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from .. import _random
from .._tensor import Tensor
from ..autograd import no_grad

__all__ = ["calculate_gain", "uniform_", "normal_", "constant_", "ones_", "zeros_",
           "xavier_uniform_", "xavier_normal_", "kaiming_uniform_", "kaiming_normal_"]

# ---------------------------------------------------------------- gains and fans

# gain per nonlinearity (torch's table); leaky_relu depends on its slope, see calculate_gain
_GAINS = {
    "linear": 1.0, "conv1d": 1.0, "conv2d": 1.0, "conv3d": 1.0, "conv_transpose1d": 1.0,
    "conv_transpose2d": 1.0, "conv_transpose3d": 1.0, "sigmoid": 1.0,
    "tanh": 5.0 / 3,
    "relu": math.sqrt(2.0),
    "selu": 3.0 / 4,  # chosen to keep SELU's self-normalising property (torch's note)
}


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    """The recommended gain; ``leaky_relu`` with slope ``a`` gives sqrt(2 / (1 + a^2))."""
    if nonlinearity == "leaky_relu":
        if param is None:
            negative_slope = 0.01
        elif isinstance(param, (int, float)) and not isinstance(param, bool):
            negative_slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + negative_slope**2))
    if nonlinearity not in _GAINS:
        raise ValueError(f"Unsupported nonlinearity {nonlinearity}")
    return _GAINS[nonlinearity]


def _calculate_fan_in_and_fan_out(tensor: Tensor) -> tuple[int, int]:
    if tensor.dim() < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 "
                         "dimensions")
    receptive_field_size = 1
    for s in tensor.shape[2:]:
        receptive_field_size *= s
    return tensor.size(1) * receptive_field_size, tensor.size(0) * receptive_field_size


def _calculate_correct_fan(tensor: Tensor, mode: str) -> int:
    mode = mode.lower()
    valid_modes = ["fan_in", "fan_out"]
    if mode not in valid_modes:
        raise ValueError(f"Mode {mode} not supported, please use one of {valid_modes}")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


# ---------------------------------------------------------------- writing


def _write(tensor: Tensor, sample) -> Tensor:
    """Overwrite ``tensor``'s memory with ``sample(generator, shape)`` and bump its version.

    Writing the numpy array directly records nothing for autograd, like torch's ``no_grad``
    init; the version bump makes any saved use of the old values fail loudly in backward.
    """
    if tensor.is_meta:
        return tensor  # no data to fill (torch's init is a no-op on meta tensors too)
    values = sample(tuple(tensor.shape))
    np.copyto(tensor._data, values, casting="unsafe")
    tensor._bump_version()
    return tensor


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0, generator=None) -> Tensor:
    """Fill with values drawn from U(a, b) (torch's bits: ``tensor.uniform_(a, b)``)."""
    if isinstance(generator, np.random.Generator):  # a numpy generator: numpy's stream
        return _write(tensor, lambda shape: generator.uniform(a, b, shape))
    return _write(tensor, lambda shape: _random.uniform(shape, tensor.dtype.np, a, b,
                                                        generator))


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, generator=None) -> Tensor:
    """Fill with values drawn from N(mean, std^2) (torch's bits: ``tensor.normal_``)."""
    if isinstance(generator, np.random.Generator):
        return _write(tensor, lambda shape: generator.normal(mean, std, shape))
    return _write(tensor, lambda shape: _random.normal(shape, tensor.dtype.np, mean, std,
                                                       generator))


def constant_(tensor: Tensor, val: float) -> Tensor:
    with no_grad():
        return tensor.fill_(val)


def ones_(tensor: Tensor) -> Tensor:
    return constant_(tensor, 1.0)


def zeros_(tensor: Tensor) -> Tensor:
    return constant_(tensor, 0.0)


# ---------------------------------------------------------------- scaled initialisations


def _no_op_if_empty(tensor: Tensor) -> bool:
    if 0 in tuple(tensor.shape):
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=3)
        return True
    return False


def xavier_uniform_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
    """U(-a, a) with a = gain * sqrt(6 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    a = math.sqrt(3.0) * std
    return uniform_(tensor, -a, a, generator)


def xavier_normal_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
    """N(0, std^2) with std = gain * sqrt(2 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return normal_(tensor, 0.0, std, generator)


def kaiming_uniform_(tensor: Tensor, a: float = 0, mode: str = "fan_in",
                     nonlinearity: str = "leaky_relu", generator=None) -> Tensor:
    """U(-bound, bound) with bound = gain * sqrt(3 / fan); ``a`` is leaky_relu's slope.

    ``nn.Linear`` uses ``a=sqrt(5)``: gain = sqrt(2 / 6), so bound = 1 / sqrt(fan_in).
    """
    if _no_op_if_empty(tensor):
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    std = calculate_gain(nonlinearity, a) / math.sqrt(fan)
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor: Tensor, a: float = 0, mode: str = "fan_in",
                    nonlinearity: str = "leaky_relu", generator=None) -> Tensor:
    """N(0, std^2) with std = gain / sqrt(fan)."""
    if _no_op_if_empty(tensor):
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    std = calculate_gain(nonlinearity, a) / math.sqrt(fan)
    return normal_(tensor, 0.0, std, generator)
