"""The global random generator: ``mtc.manual_seed`` (``torch/random.py``).

One numpy ``Generator`` (PCG64) feeds every random op (``randn``, ``rand``, dropout masks).
Streams are reproducible under ``manual_seed`` but are *not* torch's streams: the same seed
gives different numbers here and in torch.
"""

from __future__ import annotations

import numpy as np

_generator = np.random.default_rng(0)
_initial_seed = 0


def manual_seed(seed: int):
    global _generator, _initial_seed
    _initial_seed = int(seed)
    _generator = np.random.default_rng(_initial_seed)
    return _generator


def seed() -> int:
    s = int(np.random.SeedSequence().entropy % (2**63))
    manual_seed(s)
    return s


def initial_seed() -> int:
    return _initial_seed


def generator() -> np.random.Generator:
    return _generator


def get_rng_state():
    return _generator.bit_generator.state


def set_rng_state(state) -> None:
    _generator.bit_generator.state = state
