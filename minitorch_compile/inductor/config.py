"""Inductor's knobs (``torch/_inductor/config.py``).

Change them at run time: ``mtc.inductor.config.threads = 1``.  Settings that shape the
generated code (tile size, fusion limits) are part of the compile cache key.
"""

from __future__ import annotations

import os

# tiles of the iteration space run on a thread pool of this many workers (numpy ufuncs release
# the GIL, so tiles really run in parallel); 1 runs every tile on the calling thread
threads: int = os.cpu_count() or 1

# bytes of one tile of a kernel's widest value: small enough that a tile's temporaries stay in
# the L2 cache (the machine this was tuned on: 2 MiB per core), big enough that numpy's per-call
# overhead (~1 µs) is small against the work of one call
tile_bytes: int = 256 * 1024

# a kernel with fewer elements than this runs as one tile on the calling thread
min_parallel_numel: int = 1 << 16

# a kernel's tiles are cut into up to this many chunks per thread, which the threads take in
# turn (OpenMP's dynamic schedule: a worker the OS preempts takes fewer chunks); 1, the default,
# is one fixed chunk per thread (static) — 4 measured no better on a busy machine (in-process
# A/B, medians within 5 %, slightly worse).  Chunks are fixed by the sizes, so results never
# depend on timing
chunks_per_thread: int = 1

# fusion (torch: ``max_fusion_size``, ``realize_reads_threshold``, ``realize_opcount_threshold``)
max_fusion_size: int = 64
realize_reads_threshold: int = 4
realize_opcount_threshold: int = 30
epilogue_fusion: bool = True
aggressive_fusion: bool = False  # horizontal fusion of nodes sharing no input

# a kernel that passes over its tiles more than once (codegen/cpu_phases.py): an elementwise
# value a later pass reads, and that costs more to recompute than to store and load, is stored
# by its pass into a full-size scratch buffer (False: always recomputed in the later pass)
passes_store_values: bool = True

# reuse a freed buffer of the same size for a new one (memory planning)
allow_buffer_reuse: bool = True
# a kernel writes its output over an input buffer of the same bytes that dies at that kernel,
# when it reads that input element for element where it writes (codegen/inplace.py)
inplace_buffers: bool = True

# the npu target (codegen/npu.py): the most buffers per queue the tiling function may use (1 =
# one buffer, serial; 2 = double buffering; more = deeper queues, within the spec's limit of
# queue buffers per position, ``max_que_buffers``), and whether extern
# matmuls take FRACTAL_NZ operands through visible TransData kernels (True, torch_npu's private
# format path, with cast elimination) or read ND directly (False: ND->NZ on the fly in the copy)
npu_buffer_num: int = 4
npu_cube_nz: bool = False
# a split reduction (``x.sum()``: the tiles cut the reduction) may run on several AI cores, each
# writing its partial to a GM workspace that the last core combines after ``SyncAll()`` (False:
# one core, its partial results in UB — the tiling function then never considers more)
npu_multicore_reduction: bool = True

# the caching allocator (allocator.py): the generated code's buffers of at least
# ``caching_allocator_min_bytes`` come from a pool of freed ones of the same byte size and dtype
# (a fresh large np.empty pays a page fault per 4 KiB page on its first write); the pool keeps
# at most ``caching_allocator_max_bytes`` (``mtc.inductor.allocator.empty_cache()`` frees it)
caching_allocator: bool = True
caching_allocator_min_bytes: int = 1 << 20
caching_allocator_max_bytes: int = 1 << 30
