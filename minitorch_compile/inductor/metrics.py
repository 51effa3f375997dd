"""Counters a test or learner can read after compiling (``torch/_inductor/metrics.py``).

``generated_kernel_count`` counts generated (fused) kernels only — extern calls such as
``mm`` do not count, as in torch.  ``kernel_records`` holds one ``KernelRecord`` per generated
kernel; ``num_bytes_accessed`` sums the bytes those kernels read and write (each buffer once
per kernel, intermediates kept in tiles not at all).  ``reset()`` zeroes everything.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class KernelRecord:
    name: str
    nodes: list
    num_bytes: int
    numel: int
    reduction_numel: int = 1
    origins: list = field(default_factory=list)


generated_kernel_count: int = 0
num_bytes_accessed: int = 0
extern_kernel_count: int = 0
fallback_kernel_count: int = 0
kernel_records: list = []
fusion_rejections: list = []  # FusionDecision records of the latest compiles


def reset() -> None:
    global generated_kernel_count, num_bytes_accessed, extern_kernel_count
    global fallback_kernel_count
    generated_kernel_count = 0
    num_bytes_accessed = 0
    extern_kernel_count = 0
    fallback_kernel_count = 0
    kernel_records.clear()
    fusion_rejections.clear()
