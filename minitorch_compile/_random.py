"""Random numbers as torch's CPU generator makes them: ``mtc.manual_seed(0); mtc.randn(5)`` is
``torch.manual_seed(0); torch.randn(5)``, value for value.

Mirrors ``aten/src/ATen/CPUGeneratorImpl.cpp`` (the generator), ``core/DistributionsHelper.h``
and ``core/TransformationHelper.h`` (turning raw bits into a distribution) and
``native/cpu/DistributionTemplates.h`` / ``DistributionKernels.cpp`` (the kernels).

* **The engine** is a 32-bit Mersenne Twister (``mt19937``) seeded with the seed's low 32 bits —
  numpy's ``MT19937`` with its legacy seeding is the same engine, so ``random_raw`` gives torch's
  ``random()``; ``random64()`` glues two draws, the first as the high half.  The default seed is
  torch's, ``67280421310721``.
* **Uniform** ``[from, to)``: keep the type's mantissa bits of one draw (24 of ``random()`` for
  float32, 11 for half, 53 of ``random64()`` for float64), scale by ``2^-digits``, then
  ``x * (to - from) + from`` in the type with one rounding (``uniform_real``; torch's AVX2
  build fuses it into a multiply-add).
* **Normal**: a float32 tensor of 16 or more elements is filled with uniforms, then Box-Muller
  over blocks of 16 (``normal_fill_16``: ``u1 = 1 - data[j]``, ``u2 = data[j + 8]``; cos to the
  first 8, sin to the last 8); a tail that is not a whole block redraws the *last 16*
  elements. Smaller tensors (and float64 below 16) take one double-precision Box-Muller draw per
  element, keeping the sine half for the next call (``next_double_normal_sample``).
* **Integers** ``[low, high)``: ``random() % range + low`` (``random64()`` when the range needs
  64 bits); ``randperm`` is Fisher-Yates with ``random() % (n - i)``.
* **Bernoulli**: ``bernoulli_(p)`` with a number compares a float64 uniform with ``p``;
  ``bernoulli(p_tensor)`` one of ``p``'s dtype.

torch's AVX2 kernel computes the float32 Box-Muller with vectorized ``log``/``sincos``
polynomials (``_avx_mathfun.py`` computes the same ones).  Compiled
code calls these same kernels: compiled random ops equal eager ones (torch's Inductor draws
from its own Philox stream instead, unless ``fallback_random`` is set).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from . import _avx_mathfun

DEFAULT_SEED = 67280421310721


class Generator:
    """``torch.Generator`` on the CPU: an ``mt19937`` engine and the cached normal sample."""

    def __init__(self, device="cpu"):
        self.device = device
        self.manual_seed(DEFAULT_SEED)

    def manual_seed(self, seed: int) -> Generator:
        self._initial_seed = int(seed)
        self._engine = np.random.MT19937(0)
        self._engine._legacy_seeding(int(seed) & 0xFFFFFFFF)
        self.next_double_normal_sample = None
        return self

    def seed(self) -> int:
        s = int(np.random.SeedSequence().entropy % (2**63))
        self.manual_seed(s)
        return s

    def initial_seed(self) -> int:
        return self._initial_seed

    def get_state(self):
        return {"engine": self._engine.state, "seed": self._initial_seed,
                "normal": self.next_double_normal_sample}

    def set_state(self, state) -> Generator:
        self._engine.state = state["engine"]
        self._initial_seed = state["seed"]
        self.next_double_normal_sample = state["normal"]
        return self

    def random(self, n: int) -> np.ndarray:
        """``n`` draws of 32 bits (as uint64)."""
        return self._engine.random_raw(n)

    def random64(self, n: int) -> np.ndarray:
        r = self._engine.random_raw(2 * n).reshape(n, 2)
        return (r[:, 0] << np.uint64(32)) | r[:, 1]


default_generator = Generator()


def manual_seed(seed: int) -> Generator:
    return default_generator.manual_seed(seed)


def seed() -> int:
    return default_generator.seed()


def initial_seed() -> int:
    return default_generator.initial_seed()


def generator(gen: Generator | None = None) -> Generator:
    return default_generator if gen is None else gen


def get_rng_state():
    return default_generator.get_state()


def set_rng_state(state) -> None:
    default_generator.set_state(state)


def numpy_generator(gen: Generator | None = None) -> np.random.Generator:
    """A numpy generator seeded by one 64-bit draw: for samplers that are not torch's
    (``multinomial``), reproducible under ``manual_seed`` but not torch's stream."""
    return np.random.default_rng(int(generator(gen).random64(1)[0]))


# ---------------------------------------------------------------- uniform (uniform_real)

# mantissa bits kept from one draw; half samples as float (torch's dist_acctype) and rounds
_DIGITS = {np.dtype(np.float16): 24, np.dtype(np.float32): 24, np.dtype(np.float64): 53}


def uniform(shape, dtype, low=0.0, high=1.0, gen=None) -> np.ndarray:
    """``n`` uniforms in ``[low, high)`` of numpy ``dtype``, torch's bits."""
    g, dtype = generator(gen), np.dtype(dtype)
    n = math.prod(shape)
    digits = _DIGITS[dtype]
    raw = g.random64(n) if digits == 53 else g.random(n)
    acc = np.float64 if digits == 53 else np.float32  # torch's dist_acctype
    t = dtype.type  # from/to are held in the tensor's type
    x = (raw & np.uint64((1 << digits) - 1)).astype(acc) * acc(1.0 / (1 << digits))
    if (low, high) != (0.0, 1.0):
        # x * (to - from) + from, contracted to a fused multiply-add by torch's AVX2 build:
        # one rounding (float32 products are exact in float64)
        wide = np.longdouble if acc is np.float64 else np.float64
        x = (x.astype(wide) * wide(t(high) - t(low)) + wide(t(low))).astype(acc)
    return x.astype(dtype).reshape(shape)


# ---------------------------------------------------------------- normal


def _normal_double(g: Generator, n: int, mean: float, std: float) -> np.ndarray:
    """``normal_distribution<double>``, one element at a time (the sine half is cached)."""
    out = np.empty(n)
    for k in range(n):
        if g.next_double_normal_sample is not None:
            z, g.next_double_normal_sample = g.next_double_normal_sample, None
        else:
            u1, u2 = uniform((2,), np.float64, gen=g)
            r = math.sqrt(-2.0 * math.log1p(-u2))
            theta = 2.0 * math.pi * u1
            g.next_double_normal_sample = r * math.sin(theta)
            z = r * math.cos(theta)
        out[k] = _fma(z, std, mean)
    return out


def _fma(a: float, b: float, c: float) -> float:
    """``a * b + c`` rounded once, as torch's AVX2 build computes ``val * std + mean``."""
    if b == 1.0 and c == 0.0:
        return a
    return float(Fraction(a) * Fraction(b) + Fraction(c))


def _fill_16(data: np.ndarray, mean, std) -> None:
    """Box-Muller over consecutive blocks of 16 (``normal_fill_16``), in ``data``'s dtype;
    float32 with the vectorized ``log``/``sincos`` of torch's AVX2 kernel."""
    if data.dtype == np.float32:
        _avx_mathfun.box_muller_16(data, mean, std)
        return
    t = data.dtype.type
    blocks = data.reshape(-1, 16)
    u1, u2 = t(1) - blocks[:, :8], blocks[:, 8:]
    radius = np.sqrt(t(-2) * np.log(u1))
    theta = t(2.0 * math.pi) * u2
    blocks[:, :8], blocks[:, 8:] = radius * np.cos(theta) * t(std) + t(mean), \
        radius * np.sin(theta) * t(std) + t(mean)


def normal(shape, dtype, mean=0.0, std=1.0, gen=None) -> np.ndarray:
    g, dtype = generator(gen), np.dtype(dtype)
    n = math.prod(shape)
    if n < 16:
        return _normal_double(g, n, mean, std).astype(dtype).reshape(shape)
    work = np.float32 if dtype == np.float16 else dtype  # half fills in float
    data = uniform((n,), work, gen=g)
    whole = n - n % 16
    _fill_16(data[:whole], mean, std)
    if n % 16:
        tail = uniform((16,), work, gen=g)
        _fill_16(tail, mean, std)
        data[n - 16:] = tail
    return data.astype(dtype).reshape(shape)


# ---------------------------------------------------------------- integers, permutations


def random_from_to(shape, low: int, high: int, gen=None) -> np.ndarray:
    g = generator(gen)
    n, span = math.prod(shape), high - low
    raw = g.random64(n) if span >= 1 << 32 else g.random(n)
    return ((raw % np.uint64(span)).astype(np.int64) + low).reshape(shape)


def randperm(n: int, gen=None) -> np.ndarray:
    g = generator(gen)
    out = np.arange(n, dtype=np.int64)
    if n < 2:
        return out
    raw = g.random(n - 1) if n < (1 << 32) // 20 else g.random64(n - 1)
    z = (raw % np.arange(n, 1, -1, dtype=np.uint64)).astype(np.int64)
    for i, step in enumerate(z.tolist()):  # each swap depends on the ones before
        j = i + step
        out[i], out[j] = out[j], out[i]
    return out


# ---------------------------------------------------------------- bernoulli


def bernoulli_scalar(shape, p: float, gen=None) -> np.ndarray:
    """``bernoulli_(p)``: a float64 uniform below ``p``."""
    return uniform(shape, np.float64, gen=gen) < p


def bernoulli_tensor(p: np.ndarray, gen=None) -> np.ndarray:
    """``bernoulli(p)``: a uniform of ``p``'s dtype below each ``p``."""
    return uniform(p.shape, p.dtype, gen=gen) < p
