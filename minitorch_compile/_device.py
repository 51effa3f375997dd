"""Devices: ``mtc.device("cpu")``, ``"npu:0"``, ``"meta"``.

Mirrors ``c10/core/Device.h`` and the PrivateUse1 hooks of ``torch/utils/backend_registration.py``.
Every device computes with numpy on the host; what differs is the *dispatch key* a tensor's
device selects (CPU, NPU, Meta — see ``_dispatch.py``).  ``meta`` tensors carry shape and dtype
only and never hold data.  ``npu`` is not built in: ``mtc.npu`` names the PrivateUse1 backend
(``mtc.utils.rename_privateuse1_backend("npu")``) and registers itself as its device module
(``mtc._register_device_module("npu", mtc.npu)``), exactly as torch_npu does on import.
"""

from __future__ import annotations

import sys

DEVICE_TYPES = ["cpu", "meta"]  # + the PrivateUse1 backend's name, once renamed
_privateuse1_name: str | None = None
_device_modules: dict = {}


class device:
    __slots__ = ("type", "index")

    def __init__(self, type: str | device, index: int | None = None):
        if isinstance(type, device):
            self.type, self.index = type.type, type.index
            return
        if not isinstance(type, str):
            raise TypeError(f"device() expected a string or device, got {type!r}")
        name, _, idx = type.partition(":")
        if name not in DEVICE_TYPES:
            raise RuntimeError(
                f"Expected one of {', '.join(DEVICE_TYPES)} device type at start of device "
                f"string: {type}"
            )
        if idx:
            index = int(idx)
        if name == _privateuse1_name and index is None:
            index = 0
        self.type, self.index = name, index

    def __eq__(self, other) -> bool:
        if isinstance(other, str):
            other = device(other)
        return isinstance(other, device) and (self.type, self.index) == (other.type, other.index)

    def __hash__(self) -> int:
        return hash((self.type, self.index))

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __repr__(self) -> str:
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"


CPU = device("cpu")
META = device("meta")


def as_device(d) -> device:
    if d is None:
        return _default_device
    if isinstance(d, device):
        return d
    return device(d)


# --------------------------------------------------------------------------- PrivateUse1


def rename_privateuse1_backend(backend_name: str) -> None:
    """Name the PrivateUse1 backend: ``device(backend_name)`` then selects the NPU key.

    As in torch it may be called once (again with the same name is a no-op).
    """
    global _privateuse1_name
    from ._dispatch import _KEY_ALIASES, BACKEND_KEYS, DispatchKey

    if _privateuse1_name is not None:
        if _privateuse1_name != backend_name:
            raise RuntimeError(f"torch.register_privateuse1_backend() has already been set! "
                               f"Current backend: {_privateuse1_name}")
        return
    _privateuse1_name = backend_name
    DEVICE_TYPES.append(backend_name)
    BACKEND_KEYS[backend_name] = DispatchKey.NPU
    _KEY_ALIASES.setdefault(backend_name, DispatchKey.NPU)


def _register_device_module(device_type: str, module) -> None:
    """``mtc.<device_type>`` becomes ``module``; its storage hook sees every new tensor."""
    from . import _tensor

    if device_type not in DEVICE_TYPES:
        raise RuntimeError(f"Expected one of {', '.join(DEVICE_TYPES)} device type at start of "
                           f"device string: {device_type}")
    prev = _device_modules.get(device_type)
    if prev is not None and prev is not module:
        raise RuntimeError(f"The runtime module of '{device_type}' has already been "
                           f"registered with '{prev.__name__}'")
    _device_modules[device_type] = module
    setattr(sys.modules[__package__], device_type, module)
    hook = getattr(module, "_track_storage", None)
    if hook is not None:
        _tensor._STORAGE_HOOKS[device_type] = hook


# --------------------------------------------------------------------------- default device

_default_device = CPU


def set_default_device(d) -> None:
    """``mtc.set_default_device("npu")``: factory functions (``zeros``, ``tensor``, ...) given
    no ``device`` create their tensors there.  ``None`` restores cpu."""
    global _default_device
    _default_device = CPU if d is None else as_device(d)


def get_default_device() -> device:
    return _default_device
