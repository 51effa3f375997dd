"""Device memory: the GM allocator and each AI core's on-chip buffers.

Teaches two torch_npu / Ascend C ideas:

* **Global Memory (GM)** is the HBM every core shares.  torch_npu's ``NPUCachingAllocator``
  hands out blocks rounded up to 512 B; ``torch.npu.memory_allocated()`` is the sum of live
  blocks.  Here a block is one numpy *storage* (the root array behind a tensor and all of its
  views): it is counted once, when the first npu tensor over it is made, and returned to the
  pool when numpy frees it (a ``weakref.finalize``).  A tensor kept in a private format counts
  the bytes of its physical (padded) layout.
* **Local memory** is per core: the Unified Buffer (UB) for the vector unit, L1 and
  L0A/L0B/L0C for the cube.  Ascend C carves them with ``TPipe::InitBuffer``; every allocation
  is aligned (UB 32 B, L0A/L0B 512 B, L0C 64 B) and all of them together must fit the buffer.
  A misaligned or oversized allocation raises ``NPUMemoryError`` naming the buffer, the
  allocations already in it and their bytes.  The backing bytes are a real numpy array, made
  only when a kernel touches data (eager kernels only count, so they never pay for it).
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass, field

import numpy as np

from .spec import NPUSpec, get_spec


class NPUMemoryError(RuntimeError):
    """An on-chip buffer is over capacity or an allocation is misaligned."""


def round_up(n: int, align: int) -> int:
    return -(-n // align) * align


# --------------------------------------------------------------------------- GM


class GMAllocator:
    """Counts the bytes of live npu storages (``memory_allocated``) and their peak."""

    def __init__(self):
        self.allocated = 0
        self.peak = 0
        self._live: dict[int, tuple] = {}  # id(root array) -> (bytes charged, weak reference)

    def track(self, arr: np.ndarray, nbytes: int | None = None) -> None:
        """Charge the storage behind ``arr`` (once); ``nbytes`` overrides its size."""
        root = arr
        while isinstance(root.base, np.ndarray):
            root = root.base
        key = id(root)
        old = self._live.get(key)
        if old is not None and nbytes is None:
            return
        size = round_up(root.nbytes if nbytes is None else nbytes, get_spec().gm_align)
        if old is not None:  # re-charged at its physical (format) size
            self.allocated += size - old[0]
            self._live[key] = (size, old[1])
        else:
            self._live[key] = (size, weakref.ref(root, lambda _, key=key: self._free(key)))
            self.allocated += size
        if self.allocated > self.peak:
            self.peak = self.allocated

    def _free(self, key: int) -> None:
        entry = self._live.pop(key, None)
        if entry is not None:
            self.allocated -= entry[0]

    def reset_peak(self) -> None:
        self.peak = self.allocated


gm = GMAllocator()


def track_npu_storage(arr) -> None:
    """The hook ``Tensor`` calls for every npu tensor it makes (see ``_register_device_module``)."""
    if isinstance(arr, np.ndarray):
        gm.track(arr)


# --------------------------------------------------------------------------- local buffers


@dataclass
class Allocation:
    name: str
    offset: int
    nbytes: int


@dataclass
class LocalBuffer:
    """One on-chip buffer of one core (UB, L1, L0A, L0B or L0C): a bump allocator."""

    kind: str
    capacity: int
    align: int
    core: int = 0
    allocations: list = field(default_factory=list)
    used: int = 0
    peak: int = 0
    _bytes: np.ndarray | None = None

    def alloc(self, name: str, nbytes: int) -> Allocation:
        """Reserve ``nbytes`` (a multiple of the alignment) for ``name``."""
        if nbytes <= 0:
            raise NPUMemoryError(f"{self.kind} of core {self.core}: allocation '{name}' of "
                                 f"{nbytes} bytes must be positive")
        if nbytes % self.align:
            raise NPUMemoryError(
                f"{self.kind} of core {self.core}: allocation '{name}' of {nbytes} bytes is not "
                f"a multiple of the {self.align}-byte alignment (round it up to "
                f"{round_up(nbytes, self.align)})")
        if self.used + nbytes > self.capacity:
            live = ", ".join(f"{a.name}={a.nbytes}" for a in self.allocations) or "nothing"
            raise NPUMemoryError(
                f"{self.kind} of core {self.core} overflows: allocation '{name}' of {nbytes} "
                f"bytes does not fit ({self.used} of {self.capacity} bytes already used by "
                f"{live}); {self.used + nbytes} bytes needed")
        a = Allocation(name, self.used, nbytes)
        self.allocations.append(a)
        self.used += nbytes
        self.peak = max(self.peak, self.used)
        return a

    def free_all(self) -> None:
        self.allocations.clear()
        self.used = 0

    def view(self, a: Allocation, dtype) -> np.ndarray:
        """The bytes of allocation ``a`` as a typed numpy array (made on first use)."""
        if self._bytes is None:
            self._bytes = np.zeros(self.capacity, dtype=np.uint8)
        return self._bytes[a.offset:a.offset + a.nbytes].view(dtype)


def core_buffers(spec: NPUSpec, core: int) -> dict[str, LocalBuffer]:
    """A fresh set of one core's on-chip buffers, sized and aligned by the spec."""
    return {kind: LocalBuffer(kind, cap, align, core)
            for kind, (cap, align) in spec.buffer_table.items()}
