"""Devices: ``mtc.device("cpu")``, ``"npu:0"``, ``"meta"``.

Mirrors ``c10/core/Device.h``.  Every device computes with numpy on the host; what differs is
the *dispatch key* a tensor's device selects (CPU, NPU, Meta — see ``_dispatch.py``).  ``meta``
tensors carry shape and dtype only and never hold data.
"""

from __future__ import annotations

DEVICE_TYPES = ("cpu", "npu", "meta")


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
        if name == "npu" and index is None:
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
        return CPU
    if isinstance(d, device):
        return d
    return device(d)
