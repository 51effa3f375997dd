"""``mtc.nn``: modules, parameters, functional layers and initialisers (``torch/nn``).

The pieces, in the order a learner meets them:

* ``Parameter`` (``parameter.py``) — a tensor that a module recognises as learnable;
* ``Module`` (``modules/module.py``) — the tree of parameters, buffers and submodules, with
  ``parameters()``, ``state_dict()``, ``train()``/``eval()`` and ``__call__`` → ``forward``;
* ``functional`` — the stateless layer functions, each a thin adapter over an op-table op;
* ``init`` — in-place initialisers (``kaiming_uniform_``, ``xavier_normal_``, ...);
* the layers (``modules/``): ``Linear``, activations, containers, ``LayerNorm``,
  ``BatchNorm1d``/``BatchNorm2d``, ``GroupNorm``, ``RMSNorm``, ``Dropout``, ``Embedding``,
  convolutions and pooling (``Conv2d``, ``MaxPool2d``, ...) and the losses.

``mtc.nn.Linear``, ``mtc.nn.functional.relu`` and friends have torch's names and signatures.
"""

from . import functional, init, utils  # noqa: F401 - mtc.nn.utils, as torch.nn.utils
from .modules import (  # noqa: E402 - conv and pooling layers
    GELU,
    AdaptiveAvgPool1d,
    AdaptiveAvgPool2d,
    AvgPool1d,
    AvgPool2d,
    BatchNorm1d,
    BatchNorm2d,
    Conv1d,
    Conv2d,
    ConvTranspose1d,
    ConvTranspose2d,
    CrossEntropyLoss,
    Dropout,
    Embedding,
    Flatten,
    Hardsigmoid,
    Hardswish,
    Hardtanh,
    Identity,
    L1Loss,
    LayerNorm,
    Linear,
    LogSoftmax,
    MaxPool1d,
    MaxPool2d,
    Module,
    ModuleDict,
    ModuleList,
    MSELoss,
    NLLLoss,
    ReLU,
    ReLU6,
    Sequential,
    Sigmoid,
    SiLU,
    Softmax,
    Tanh,
)
from .parameter import Parameter

__all__ = ["Parameter", "Module", "functional", "init", "Linear", "Identity", "ReLU", "GELU",
           "Tanh", "Sigmoid", "Softmax", "LogSoftmax", "Flatten", "Sequential", "ModuleList",
           "ModuleDict", "LayerNorm", "Dropout", "Embedding", "MSELoss", "NLLLoss",
           "CrossEntropyLoss", "SiLU", "Hardtanh", "ReLU6", "Hardswish", "Hardsigmoid",
           "BatchNorm1d", "BatchNorm2d", "L1Loss",
           "Conv1d", "Conv2d", "ConvTranspose1d", "ConvTranspose2d", "MaxPool1d", "MaxPool2d",
           "AvgPool1d", "AvgPool2d", "AdaptiveAvgPool1d", "AdaptiveAvgPool2d"]

from .modules import (  # noqa: E402 - activations, losses, norms, containers
    CELU,
    ELU,
    GLU,
    SELU,
    BCELoss,
    BCEWithLogitsLoss,
    GroupNorm,
    Hardshrink,
    HuberLoss,
    KLDivLoss,
    LeakyReLU,
    LogSigmoid,
    Mish,
    ParameterList,
    PReLU,
    RMSNorm,
    SmoothL1Loss,
    Softmin,
    Softplus,
    Softshrink,
    Softsign,
    Tanhshrink,
    Threshold,
    Unflatten,
)

__all__ += ["CELU", "ELU", "GLU", "Hardshrink", "LeakyReLU", "LogSigmoid", "Mish", "PReLU", "SELU",
            "Softmin", "Softplus", "Softshrink", "Softsign", "Tanhshrink", "Threshold", "BCELoss",
            "BCEWithLogitsLoss", "HuberLoss", "KLDivLoss", "SmoothL1Loss", "GroupNorm", "RMSNorm",
            "Unflatten", "ParameterList"]
