"""``mtc.npu``: a simulated Ascend-like NPU, plugged in the way torch_npu plugs in.

Teaches torch_npu (``torch_npu/__init__.py``, ``torch_npu/npu/``): the device module behind
``device="npu"``, ``x.npu()`` and ``torch.npu.*``.  Importing it (``minitorch_compile`` does)

1. names the PrivateUse1 backend ``npu`` and registers this module as its device module
   (``mtc.utils.rename_privateuse1_backend``, ``mtc._register_device_module``);
2. runs the registrations generated from ``npu_native_functions.yaml``
   (``_generated_registrations.py``): an NPU kernel for every op of the op table, the
   ``npu::`` custom ops, the Python API redirections.

Kernels compute with numpy on the host; the memory model (``spec``, ``memory``, ``units``,
``kernel``) counts every byte and cycle, and ``profile()`` shows them.  See docs/npu.md.
"""

from __future__ import annotations

from .. import _device
from .formats import FORMAT_NAMES, FRACTAL_NZ, FRACTAL_Z, NC1HWC0, NCDHW, NCHW, ND, NDHWC, NHWC
from .kernel import KernelLaunch
from .memory import NPUMemoryError, gm
from .memory import track_npu_storage as _track_storage  # noqa: F401 - the GM hook
from .profiler import KernelRecord, profile
from .spec import NPUSpec, get_spec, set_spec

__all__ = ["NPUSpec", "get_spec", "set_spec", "profile", "KernelRecord", "KernelLaunch",
           "NPUMemoryError", "is_available", "device_count", "current_device", "synchronize",
           "memory_allocated", "max_memory_allocated", "reset_peak_memory_stats",
           "empty_with_format", "FORMAT_NAMES", "ND", "NCHW", "NHWC", "NC1HWC0", "FRACTAL_Z",
           "FRACTAL_NZ", "NDHWC", "NCDHW"]


def is_available() -> bool:
    """Always True: the device is simulated."""
    return True


def device_count() -> int:
    """One simulated chip (``npu:0``)."""
    return 1


def current_device() -> int:
    return 0


def synchronize(device=None) -> None:
    """Kernels run synchronously on the host: nothing to wait for."""


def memory_allocated(device=None) -> int:
    """Bytes of GM held by live npu tensors (block-rounded, private formats at their
    physical size)."""
    return gm.allocated


def max_memory_allocated(device=None) -> int:
    return gm.peak


def reset_peak_memory_stats(device=None) -> None:
    gm.reset_peak()


def empty_with_format(size, dtype=None, device="npu", acl_format: int = ND):
    """``torch_npu.empty_with_format``: a new npu tensor stored in ``acl_format``."""
    from ..ops import ops

    return ops.npu.empty_with_format(tuple(size), dtype=dtype, device=_device.device(device),
                                     acl_format=acl_format)


def _install() -> None:
    from .. import utils
    from .._device import _register_device_module

    utils.rename_privateuse1_backend("npu")
    import sys

    _register_device_module("npu", sys.modules[__name__])
    import importlib

    importlib.import_module(f"{__name__}._generated_registrations")  # registers kernels, ops


try:
    _install()
except ModuleNotFoundError as e:  # bootstrapping: codegen runs before the file exists
    if e.name != f"{__name__}._generated_registrations":
        raise
