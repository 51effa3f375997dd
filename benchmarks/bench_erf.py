"""GELU (erf) on 16 M float32 elements: the vectorized ``erf`` of ``ops/_erf.py``.

Run: ``python benchmarks/bench_erf.py`` (about 10 s; ``--n`` sets the element count).

Rows, each the best of ``--repeat`` runs, with the ratio to plain numpy:

* ``mtc gelu``: ``mtc.nn.functional.gelu(x)`` in eager mode (the op table's kernel: erf
  evaluated block by block in float64, intermediates in reused cache-sized buffers);
* ``numpy erf-gelu``: the same formula written as plain whole-array numpy (the baseline);
* ``numpy tanh-gelu``: the cheaper tanh approximation in plain numpy, for scale;
* ``torch gelu``: torch's native kernel, when torch is installed.

Before ``erf`` was vectorized it called ``math.erf`` per element: 2.5 s here for 16 M, 4.8x
the numpy baseline.  No assertion: figures depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout

import minitorch_compile as mtc  # noqa: E402
from minitorch_compile.ops import _erf  # noqa: E402


def best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def numpy_erf_gelu(a: np.ndarray) -> np.ndarray:
    """GELU with the same erf approximation, as whole-array numpy (float64 inside)."""
    x = np.clip(a / np.float32(math.sqrt(2)), -4, 4).astype(np.float64)
    x2 = x * x
    p = _erf._ALPHA[0] * x2 + _erf._ALPHA[1]
    for c in _erf._ALPHA[2:]:
        p *= x2
        p += c
    q = _erf._BETA[0] * x2 + _erf._BETA[1]
    for c in _erf._BETA[2:]:
        q *= x2
        q += c
    return 0.5 * a * (1 + (x * p / q).astype(np.float32))


def numpy_tanh_gelu(a: np.ndarray) -> np.ndarray:
    c = np.float32(math.sqrt(2 / math.pi))
    return 0.5 * a * (1 + np.tanh(c * (a + np.float32(0.044715) * a * a * a)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=16 * 1024 * 1024)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    a = np.random.default_rng(0).standard_normal(args.n).astype(np.float32)
    x = mtc.from_numpy(a)
    np.testing.assert_allclose(mtc.nn.functional.gelu(x).numpy(), numpy_erf_gelu(a),
                               atol=1e-6)
    rows = [("mtc gelu", lambda: mtc.nn.functional.gelu(x)),
            ("numpy erf-gelu", lambda: numpy_erf_gelu(a)),
            ("numpy tanh-gelu", lambda: numpy_tanh_gelu(a))]
    try:
        import torch

        t = torch.from_numpy(a)
        rows.append(("torch gelu", lambda: torch.nn.functional.gelu(t)))
    except ImportError:
        pass
    times = {name: best(fn, args.repeat) for name, fn in rows}
    base = times["numpy erf-gelu"]
    print(f"GELU on {args.n:,} float32 elements (best of {args.repeat})")
    for name, t in times.items():
        print(f"  {name:16} {t * 1e3:8.1f} ms   {t / base:5.2f}x numpy erf-gelu")


if __name__ == "__main__":
    main()
