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
from . import modules as _modules
from .modules import *  # noqa: F403 - every layer, as torch/nn/__init__.py does
from .parameter import Parameter

__all__ = ["Parameter", "functional", "init", *_modules.__all__]
