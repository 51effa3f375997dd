"""What the simulated npu's accounting costs on the host, per eager op.

Run: ``python benchmarks/bench_npu_eager.py`` (a few seconds).

An npu op runs the same numpy kernel as the cpu one, then accounts its bytes and cycles by
running the op's Ascend C skeleton in counting mode (``npu/eager_kernels.py``).  The cost of that
skeleton depends on sizes only, so it is computed once per (op, sizes, spec) and replayed from a
cache; this script times, in the same process:

* each op on cpu and on npu with a warm cache (the steady state of a training loop);
* the same npu op when every call misses the cache (sizes never seen before);
* one MLP training step (Linear 256→512, GELU, Linear 512→10, cross-entropy, SGD) on each device.

Targets printed beside the figures (not asserted): a warm npu op costs **≤ 3×** its cpu time on
these small inputs, so tests and notebooks that run on the npu stay fast.
"""

from __future__ import annotations

import argparse
import sys
import timeit
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout

import minitorch_compile as mtc  # noqa: E402
from minitorch_compile.npu import eager_kernels  # noqa: E402

TARGET_RATIO = 3.0


def best_us(fn, repeat: int, number: int) -> float:
    return min(timeit.Timer(fn).repeat(repeat=repeat, number=number)) / number * 1e6


def cases(device):
    x = mtc.randn(64, 64, device=device)
    w = mtc.randn(64, 64, device=device)
    return [("x + w", lambda: x + w), ("x.exp()", lambda: x.exp()),
            ("x.sum(1)", lambda: x.sum(1)), ("x.softmax(-1)", lambda: x.softmax(-1)),
            ("x @ w", lambda: x @ w)]


def mlp_step(device):
    mtc.manual_seed(0)
    model = mtc.nn.Sequential(mtc.nn.Linear(256, 512), mtc.nn.GELU(),
                              mtc.nn.Linear(512, 10)).to(device)
    opt = mtc.optim.SGD(model.parameters(), lr=0.1)
    x = mtc.randn(64, 256, device=device)
    target = mtc.tensor([i % 10 for i in range(64)], device=device)

    def step():
        opt.zero_grad()
        mtc.nn.functional.cross_entropy(model(x), target).backward()
        opt.step()

    return step


def main(argv=None) -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--repeat", type=int, default=5)
    args = p.parse_args(argv)
    r = args.repeat
    print(f"{'op (64x64 float32)':<16} {'cpu us':>8} {'npu us':>8} {'ratio':>6} "
          f"{'npu, cache miss us':>19}")
    for (name, cpu), (_, npu) in zip(cases("cpu"), cases("npu")):
        c, n = best_us(cpu, r, 300), best_us(npu, r, 300)

        def miss(npu=npu):
            eager_kernels._cache.clear()
            npu()

        m = best_us(miss, r, 100)
        flag = "" if n / c <= TARGET_RATIO else "  OVER"
        print(f"{name:<16} {c:8.1f} {n:8.1f} {n / c:5.1f}x {m:19.1f}{flag}")
    c, n = best_us(mlp_step("cpu"), r, 10), best_us(mlp_step("npu"), r, 10)
    print(f"{'MLP train step':<16} {c:8.1f} {n:8.1f} {n / c:5.1f}x")
    print(f"target: a warm npu op <= {TARGET_RATIO:.0f}x its cpu time")


if __name__ == "__main__":
    main()
