"""A caching allocator for the buffers generated code allocates (the idea of c10's
``CUDACachingAllocator`` / ``CPUCachingAllocator``: keep freed blocks, hand them out again).

Why: ``np.empty`` of a large array gets fresh pages from the OS (glibc ``mmap``s blocks of
more than a few MiB and ``munmap``s them on free), and the first write to each page faults.
On the machine this was written on, a fresh 64 MiB float32 array written once costs 10–20 ms
more than the same write into an array written before — as much as a kernel's compute.

The algorithm: the pool maps ``(nbytes, dtype)`` to a list of *owner* arrays (1-D, owning
their memory).  ``empty_cpu(size, dtype)`` hands out ``owner.reshape(size)``, a view whose
``.base`` is the owner; every view of it, every view of a view (numpy points ``.base`` at
the owner), every Tensor over one, and every array built from one through the buffer
protocol (``as_strided``, ``memoryview``, ``np.frombuffer``) keeps a reference to the owner.
So an owner is free exactly when the pool's list holds its only reference: its
``sys.getrefcount`` equals the baseline measured at import.  A later ``empty_cpu`` of the
same byte size and dtype takes the first free owner; nothing is ever returned by hand, so a
buffer a user, a view, a list or autograd's saved tensors still hold is never handed out.

Invariants:
* the pool holds at most ``config.caching_allocator_max_bytes`` (owners in use count too);
  a miss that would exceed it first drops free owners (oldest first), else allocates
  uncached;
* arrays under ``config.caching_allocator_min_bytes`` are plain ``np.empty`` (malloc's free
  lists reuse small blocks already, and the pool's lock would cost more than it saves);
* taking an owner happens under a lock, so threads (the kernel pool, user threads) never take
  the same one; a reference dropped in any thread frees it.

What stays truthful: the memory plan's ``peak_memory_bytes`` counts live buffers of one call
(torch's "allocated"); the pool's cached bytes are a separate figure (``memory_stats()``,
torch's "reserved"), released by ``empty_cache()``.
"""

from __future__ import annotations

import math
import sys
import threading
from collections import OrderedDict

import numpy as np

from . import config


def _baseline_refcount() -> int:
    """An owner's refcount, seen from a loop over its pool list, when nothing else holds it
    (the list, the loop's name and ``getrefcount``'s argument), measured as ``malloc`` sees it."""
    owners = [np.empty(1)]
    for owner in owners:
        return sys.getrefcount(owner)
    raise AssertionError


_FREE_REFCOUNT = _baseline_refcount()


class CachingAllocator:
    def __init__(self) -> None:
        self._pool: OrderedDict = OrderedDict()  # (nbytes, dtype) -> [owner, ...]
        self._lock = threading.Lock()
        self.cached_bytes = 0
        self.hits = self.misses = self.uncached = 0

    def malloc(self, size: tuple, dtype: np.dtype, nbytes: int) -> np.ndarray:
        key = (nbytes, dtype)
        with self._lock:
            owners = self._pool.get(key)
            if owners is not None:
                for owner in owners:
                    if sys.getrefcount(owner) == _FREE_REFCOUNT:
                        self.hits += 1
                        return owner.reshape(size)
            self.misses += 1
            owner = np.empty(nbytes // dtype.itemsize, dtype)
            if self.cached_bytes + nbytes > config.caching_allocator_max_bytes:
                self._evict(self.cached_bytes + nbytes - config.caching_allocator_max_bytes)
            if self.cached_bytes + nbytes > config.caching_allocator_max_bytes:
                self.uncached += 1
                return owner.reshape(size)
            self._pool.setdefault(key, []).append(owner)
            self._pool.move_to_end(key)
            self.cached_bytes += nbytes
            return owner.reshape(size)

    def _evict(self, want: int) -> None:
        """Drop free owners, least recently grown size first, until ``want`` bytes are gone."""
        for key in list(self._pool):
            owners, kept = self._pool[key], []
            for owner in owners:
                if want > 0 and sys.getrefcount(owner) == _FREE_REFCOUNT:
                    self.cached_bytes -= key[0]
                    want -= key[0]
                else:
                    kept.append(owner)
            if kept:
                self._pool[key] = kept
            else:
                del self._pool[key]
            if want <= 0:
                return

    def empty_cache(self) -> None:
        """Release every free cached buffer (``torch.cuda.empty_cache``) and forget the ones in
        use (their holders free them; they just never come back to the pool)."""
        with self._lock:
            self._pool.clear()
            self.cached_bytes = 0

    def memory_stats(self) -> dict:
        """Cached ("reserved") bytes, the part in use, and hit/miss counts."""
        with self._lock:
            in_use = sum(key[0] for key, owners in self._pool.items() for o in owners
                         if sys.getrefcount(o) > _FREE_REFCOUNT)
            return {"cached_bytes": self.cached_bytes, "in_use_bytes": in_use,
                    "buffers": sum(len(v) for v in self._pool.values()),
                    "hits": self.hits, "misses": self.misses, "uncached": self.uncached}


allocator = CachingAllocator()


def empty_cpu(size: tuple, dtype) -> np.ndarray:
    """``np.empty(size, dtype)``, from the pool when the caching allocator is on (what the
    generated ``call`` allocates its buffers with; torch's wrapper: ``empty_strided_cpu``)."""
    if not config.caching_allocator:
        return np.empty(size, dtype)
    dtype = np.dtype(dtype)
    nbytes = math.prod(size) * dtype.itemsize
    if nbytes < config.caching_allocator_min_bytes:
        return np.empty(size, dtype)
    return allocator.malloc(size, dtype, nbytes)


def empty_cache() -> None:
    allocator.empty_cache()


def memory_stats() -> dict:
    return allocator.memory_stats()
