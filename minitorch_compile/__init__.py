"""minitorch_compile: PyTorch's compiler stack, re-implemented to be read.

``import minitorch_compile as mtc`` gives a torch-shaped API over numpy: ``mtc.Tensor``,
``mtc.cos``, ``mtc.autograd``, ``mtc.nn``, ``mtc.optim``, ``mtc.library`` and ``mtc.ops``.
Every op is declared once in the op table (``ops/``) and reached through the dispatcher
(``_dispatch.py``); see ``docs/eager.md`` for the tour.
"""
# ruff: noqa: I001, E402, F401, F403, A004 - import order matters: the op table first

from __future__ import annotations

from ._device import device
from ._dtype import bool_ as bool, dtype, float16, float32, float64, int32, int64, uint8
from ._dtype import double, float, half, int, int8, int16, long, short
from ._size import Size
from ._tensor import Tensor
from . import _api  # declares the op table, generates the functions
from . import _tensor_methods  # attaches methods and operators to Tensor
from . import _tensor_methods_more  # the breadth ops' methods (cumsum, sort, masked_fill ...)
from . import _tensor_indexing  # attaches x[index] and x[index] = v to Tensor
from ._api import *
from ._api import all, any, max, min, sum
from ._random import default_generator
from ._api_more import linalg
from ._dispatch import DispatchKey, TorchDispatchMode
from .ops import ops
from . import autograd
from .autograd import enable_grad, inference_mode, is_grad_enabled, no_grad, set_grad_enabled
from .autograd import is_inference_mode_enabled
from .autograd import is_anomaly_enabled, set_detect_anomaly
from . import library, nn, optim
from . import fx, viz, aot
from . import dynamo
from . import inductor
from .dynamo import compile
import sys as _sys

_dynamo = dynamo  # torch's name: `import minitorch_compile as torch; torch._dynamo.reset()`
_sys.modules[__name__ + "._dynamo"] = dynamo
_sys.modules[__name__ + "._dynamo.config"] = dynamo.config
from .dynamo._logging import set_logs
from ._device import _register_device_module, get_default_device, set_default_device
from . import utils
from . import npu  # last: names PrivateUse1 "npu" and registers an NPU kernel for every op
from . import report
from .viz import rich as _rich

_rich.install()  # _repr_html_ for cache entries, explain(), graphs, partitions, kernels, profiles

report.install_from_env()  # MTC_TRACE_DIR: trace this process, write the report at exit

jit = compile

__version__ = "0.1.0"
