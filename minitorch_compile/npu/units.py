"""The engines of one AI core and what each costs, in cycles.

Teaches the Da Vinci core's division of labour (Ascend C docs, "AI Core architecture"):

=========  ==========================================  =======================================
engine     moves / computes                            cost model (cycles)
=========  ==========================================  =======================================
MTE2       GM -> UB / L1 / L0A / L0B  (``DataCopy``)   latency + bytes / per-core GM bandwidth
MTE1       L1 -> L0A / L0B                              bytes / ``mte1_bytes_per_cycle``
Vector     UB -> UB, 256 bytes per *repeat*             repeats * cost(instruction)
Cube       L0A x L0B -> L0C, 16x16x16 per step          steps * cycles(dtype)
MTE3       UB -> GM; FixPipe L0C -> GM (same lane)      latency + bytes / per-core GM bandwidth
=========  ==========================================  =======================================

The per-core GM bandwidth is the aggregate divided by the cores that are moving data, capped by
what one core's engine can do (``NPUSpec.core_bytes_per_cycle``).  A vector instruction covers
at most ``max_repeat_times`` (255) repeats; longer ones are issued again, which costs nothing
extra here.  Cube steps round every dimension up to the 16-wide fractal: a 17x17 matmul costs
as much as a 32x32 one.
"""

from __future__ import annotations

import math

from .spec import NPUSpec

STAGES = ("MTE2", "MTE1", "Cube", "Vector", "MTE3")  # the lanes of a core's pipeline


def dma_cycles(spec: NPUSpec, nbytes: int, active_cores: int) -> float:
    """One ``DataCopy`` between GM and a core (MTE2 or MTE3)."""
    if nbytes <= 0:
        return 0.0
    return spec.dma_latency_cycles + nbytes / spec.core_bytes_per_cycle(active_cores)


def mte1_cycles(spec: NPUSpec, nbytes: int) -> float:
    """One L1 -> L0A/L0B copy (on-chip: no GM latency)."""
    return nbytes / spec.mte1_bytes_per_cycle if nbytes > 0 else 0.0


def vector_repeats(spec: NPUSpec, nbytes: int) -> int:
    return math.ceil(nbytes / spec.vector_bytes_per_repeat) if nbytes > 0 else 0


def vector_cycles(spec: NPUSpec, instruction: str, nbytes: int) -> int:
    """One vector instruction over ``nbytes`` of its widest operand."""
    return vector_repeats(spec, nbytes) * spec.vector_instruction_cost(instruction)


def cube_steps(spec: NPUSpec, m: int, n: int, k: int) -> int:
    return (math.ceil(m / spec.cube_m) * math.ceil(n / spec.cube_n) * math.ceil(k / spec.cube_k))


def cube_cycles(spec: NPUSpec, m: int, n: int, k: int, dtype_name: str) -> int:
    """One ``Mmad``: an (m, k) x (k, n) product accumulated into L0C."""
    return cube_steps(spec, m, n, k) * spec.cube_step_cycles(dtype_name)
