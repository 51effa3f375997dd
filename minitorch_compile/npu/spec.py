"""``NPUSpec``: the numbers the simulated Ascend-like device is built from.

Teaches the *platform ini* of a CANN chip (``Ascend910B2.ini``: core count, buffer sizes, clock)
— the table every Ascend C tiling function reads through ``GetCoreNumAiv()`` /
``GetCoreMemSize(UB)``.  Every field is a public figure or a stated assumption (see
``docs/npu.md`` for the source of each); every field can be overridden with
``mtc.npu.set_spec(ub_bytes=..., ...)`` and read back with ``mtc.npu.get_spec()``.

Derived quantities used by the cost model::

    GM bytes per cycle (all cores)  = gm_bandwidth_bytes_per_s / clock_hz
    GM bytes per cycle (one core)   = min(core_gm_bytes_per_cycle,
                                          GM bytes per cycle / active cores)
    DMA cycles                      = dma_latency_cycles + bytes / bytes per cycle
    vector cycles                   = ceil(bytes / vector_bytes_per_repeat) * cost(instruction)
    cube cycles                     = ceil(m/16) * ceil(n/16) * ceil(k/16) * cube_cycles(dtype)
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

# Vector cycles per 256-byte repeat, by instruction.  Public Ascend C docs give the repeat
# width but no per-instruction latency table: these are *assumptions* (simple arithmetic = 1,
# division and square root a few repeats, transcendentals several), documented in docs/npu.md.
DEFAULT_VECTOR_COST: dict[str, int] = {
    "copy": 1, "add": 1, "sub": 1, "mul": 1, "neg": 1, "abs": 1, "max": 1, "min": 1,
    "relu": 1, "compare": 1, "select": 1, "cast": 1, "duplicate": 1, "reduce": 1,
    "and": 1, "or": 1, "not": 1, "sign": 2,
    "div": 4, "reciprocal": 4, "sqrt": 4, "rsqrt": 4,
    "exp": 8, "log": 8, "sigmoid": 10, "tanh": 10, "sin": 12, "cos": 12, "erf": 12,
    "pow": 16, "gelu": 16,
    # the same families, for ops of the table under other names
    "log2": 8, "log10": 8, "log1p": 8, "exp2": 8, "expm1": 8, "logit": 8,
    "tan": 12, "asin": 12, "acos": 12, "atan": 12, "atan2": 12, "sinh": 12, "cosh": 12,
    "asinh": 12, "acosh": 12, "atanh": 12, "silu": 10, "softplus": 16, "mish": 16,
    "elu": 8, "lgamma": 16, "digamma": 16, "fmod": 4, "remainder": 4, "random": 4,
}

# Cube cycles per 16x16x16 step by dtype.  fp16 = 1 is the public figure (4096 MACs/cycle);
# the others are assumptions: fp32 runs at half rate, anything else (fp64, ints — units the
# real chip does not have for matmul) at a quarter.
DEFAULT_CUBE_CYCLES: dict[str, int] = {"float16": 1, "float32": 2}


@dataclass(frozen=True)
class NPUSpec:
    """One Ascend 910B-class chip, 24 AI cores (cube + vector coupled)."""

    name: str = "910B-like"
    num_cores: int = 24  # AI cores (Ascend910B2 ini)
    clock_hz: float = 1.8e9  # cube_freq=1800 MHz (Ascend910B2 ini)
    # on-chip buffers per core, bytes (Ascend910B2 ini)
    ub_bytes: int = 196_608
    l1_bytes: int = 524_288
    l0a_bytes: int = 65_536
    l0b_bytes: int = 65_536
    l0c_bytes: int = 131_072
    l2_bytes: int = 192 * 2**20  # shared, not modelled as a cache (recorded for reference)
    # alignment of every allocation in a buffer, bytes (Ascend C API docs)
    ub_align: int = 32
    l1_align: int = 32
    l0ab_align: int = 512
    l0c_align: int = 64
    gm_align: int = 512  # assumption: torch_npu's caching allocator rounds blocks to 512 B
    # data movement (assumptions: no public figure)
    gm_bandwidth_bytes_per_s: float = 1.6e12  # aggregate HBM bandwidth, shared by cores
    core_gm_bytes_per_cycle: float = 128.0  # the most one core's MTE2/MTE3 can move per cycle
    dma_latency_cycles: int = 500  # fixed start-up cost of every DataCopy
    # assumption: ``SyncAll()`` (every core waits for all): each core writes a flag to GM and
    # reads the others' back, one DMA start-up each way
    sync_all_cycles: int = 1000
    mte1_bytes_per_cycle: float = 256.0  # L1 -> L0A/L0B
    # queue buffers (``InitBuffer(que, num, len)``'s num, summed over a position's queues) one
    # position (VECIN, VECOUT, ...) may hold: 8 on Atlas A2 (CANN Ascend C API, InitBuffer)
    max_que_buffers: int = 8
    min_core_bytes: int = 4096  # a kernel gives each core at least this much work
    # compute
    vector_bytes_per_repeat: int = 256  # 8 blocks x 32 B (Ascend C API docs)
    max_repeat_times: int = 255  # one vector instruction covers at most 255 repeats
    cube_m: int = 16  # one cube step: 16x16x16 fp16 MACs (public architecture articles)
    cube_n: int = 16
    cube_k: int = 16
    cube_cycles: dict = field(default_factory=lambda: dict(DEFAULT_CUBE_CYCLES))
    cube_cycles_other: int = 4
    vector_cost: dict = field(default_factory=lambda: dict(DEFAULT_VECTOR_COST))
    vector_cost_default: int = 1
    kernel_launch_us: float = 0.0  # assumption: host launch overhead per kernel (0 = ignored)

    # ------------------------------------------------------------------ derived
    @property
    def gm_bytes_per_cycle(self) -> float:
        return self.gm_bandwidth_bytes_per_s / self.clock_hz

    def core_bytes_per_cycle(self, active_cores: int) -> float:
        return min(self.core_gm_bytes_per_cycle, self.gm_bytes_per_cycle / max(active_cores, 1))

    def cycles_to_us(self, cycles: float) -> float:
        return cycles / self.clock_hz * 1e6

    def vector_instruction_cost(self, name: str) -> int:
        return self.vector_cost.get(name, self.vector_cost_default)

    def cube_step_cycles(self, dtype_name: str) -> int:
        return self.cube_cycles.get(dtype_name, self.cube_cycles_other)

    @property
    def buffer_table(self) -> dict[str, tuple[int, int]]:
        """Per-core buffer name -> (capacity bytes, alignment bytes)."""
        return {"UB": (self.ub_bytes, self.ub_align), "L1": (self.l1_bytes, self.l1_align),
                "L0A": (self.l0a_bytes, self.l0ab_align),
                "L0B": (self.l0b_bytes, self.l0ab_align),
                "L0C": (self.l0c_bytes, self.l0c_align)}


_spec = NPUSpec()


def get_spec() -> NPUSpec:
    """The spec the device simulates now."""
    return _spec


def set_spec(spec: NPUSpec | None = None, **overrides) -> NPUSpec:
    """Replace the device spec (``set_spec(ub_bytes=65536)``; ``set_spec()`` restores defaults).

    Returns the previous spec so a caller can put it back.
    """
    global _spec
    prev = _spec
    base = spec if spec is not None else (NPUSpec() if not overrides else _spec)
    unknown = set(overrides) - {f.name for f in dataclasses.fields(NPUSpec)}
    if unknown:
        raise TypeError(f"set_spec: unknown NPUSpec field(s) {sorted(unknown)}")
    _spec = dataclasses.replace(base, **overrides)
    return prev
