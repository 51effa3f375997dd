"""What Dynamo costs: the first call of a compiled function, and every call after it.

Run: ``python benchmarks/bench_dynamo.py`` (about 5 s with torch installed; ``--no-torch`` skips
the comparison, ``--repeat`` sets the number of timing runs).

Part 1 — **first call** (capture). The first call of a compiled function binds the arguments,
traces the bytecode symbolically, builds the graph and the guard function, hands the graph to
the backend, writes the transformed code — and then runs it. Programs, from the tutorial:

* ``function(inputs)``: ``x = x.cos().cos(); if x.mean() > 0.5: x = x / 1.1; return x * y``.
  The ``if`` reads a tensor's value. minitorch_compile cannot break the graph yet (a later issue),
  so the trace stops there and the frame runs eagerly under the guards collected so far; torch
  makes a graph break and compiles two graphs and a resume function. The two do different work:
  the row says what each one compiled.
* ``function`` without the branch: ``x.cos().cos() / 1.1 * y``, one graph in both.

Each figure is the median of ``--repeat`` first calls, each after ``mtc.dynamo.reset()`` /
``torch._dynamo.reset()`` (and, for minitorch_compile, after clearing the tracer's cache of
decoded bytecode, which ``reset()`` keeps, so every run decodes the bytecode again). Before the
timed runs each program is compiled once, so one-time imports are not counted; the cold first
call of the process is printed separately.

Part 2 — **per-call overhead on a cache hit**. A 2-input function on 16-element tensors, where
the math is cheap: ``compiled − eager`` is what the wrapper, the guard function and the
transformed code cost per call. Best of ``--repeat`` timeit runs, in µs.

Ratios are against eager mode of the same framework in the same run. Targets printed beside the
figures (not asserted anywhere — timing depends on the machine): first call ≤ 1/5 of
``torch.compile(backend="eager")``'s; overhead per call ≤ torch.compile's.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
import time
import timeit
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout

import minitorch_compile as mtc  # noqa: E402
from minitorch_compile.dynamo import symbolic_convert  # noqa: E402

TARGET_FIRST_CALL_RATIO = 0.2  # mtc first call / torch first call
TARGET_OVERHEAD_RATIO = 1.0  # mtc overhead per hit / torch overhead per hit


# --------------------------------------------------------------------------- the programs
# Their bodies call tensor methods and operators only, so they run on mtc and torch tensors alike.


def function(inputs):
    x = inputs["x"]
    y = inputs["y"]
    x = x.cos().cos()
    if x.mean() > 0.5:
        x = x / 1.1
    return x * y


def function_no_branch(inputs):
    x = inputs["x"]
    y = inputs["y"]
    x = x.cos().cos()
    x = x / 1.1
    return x * y


def two_inputs(x, y):
    return x * y + x


def clone_function(fn):
    """A new function object with its own code object: a fresh cache and a cold trace."""
    code = fn.__code__.replace()  # an equal but distinct code object
    return type(fn)(code, fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__)


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1e3


def best_us(fn, repeat: int, budget_s: float = 0.02) -> float:
    """Best-of-``repeat`` time of one call in µs; each run lasts about ``budget_s``."""
    timer = timeit.Timer(fn)
    number, elapsed = 1, 0.0
    while elapsed < budget_s / 4:  # calibrate the loop count
        number *= 4
        elapsed = timer.timeit(number)
    number = max(1, int(number * budget_s / max(elapsed, 1e-9)))
    return min(timer.repeat(repeat=repeat, number=number)) / number * 1e6


# --------------------------------------------------------------------------- minitorch_compile


def mtc_inputs(n: int, requires_grad: bool):
    rng = np.random.default_rng(0)
    return {k: mtc.tensor(rng.standard_normal(n).astype(np.float32), requires_grad=requires_grad)
            for k in ("x", "y")}


def mtc_first_call_s(fn, inputs) -> tuple[float, str]:
    """Time the call that compiles ``fn``; return (seconds, what the cache entry holds)."""
    mtc.dynamo.reset()
    getattr(symbolic_convert, "_INSTRUCTION_CACHE", {}).clear()
    compiled = mtc.compile(fn, backend="eager")
    start = time.perf_counter()
    compiled(inputs)
    elapsed = time.perf_counter() - start
    entry = mtc.dynamo.cache_entries(compiled)[0]
    what = "ran eagerly (data-dependent if)" if entry.is_eager else "1 graph"
    return elapsed, what


def mtc_part1(repeat: int) -> dict:
    inputs = mtc_inputs(10, requires_grad=True)
    cold, _ = mtc_first_call_s(clone_function(function_no_branch), inputs)
    out = {"cold": cold}
    for fn in (function, function_no_branch):
        eager = mtc.compile(fn, backend="eager")(inputs)  # correctness: compiled == eager
        assert mtc.allclose(eager, fn(inputs)), fn.__name__
        mtc_first_call_s(fn, inputs)  # warm-up
        samples, what = [], ""
        for _ in range(repeat):
            t, what = mtc_first_call_s(fn, inputs)
            samples.append(t)
        out[fn.__name__] = (median_ms(samples), best_us(lambda: fn(inputs), repeat), what)
    mtc.dynamo.reset()
    return out


def mtc_part2(repeat: int) -> tuple[float, float]:
    x, y = mtc_inputs(16, requires_grad=False).values()
    compiled = mtc.compile(two_inputs, backend="eager")
    assert mtc.allclose(compiled(x, y), two_inputs(x, y))
    assert len(mtc.dynamo.cache_entries(compiled)) == 1 and \
        not mtc.dynamo.cache_entries(compiled)[0].is_eager
    t_eager = best_us(lambda: two_inputs(x, y), repeat)
    t_compiled = best_us(lambda: compiled(x, y), repeat)
    assert len(mtc.dynamo.cache_entries(compiled)) == 1  # every timed call was a hit
    mtc.dynamo.reset()
    return t_eager, t_compiled


# --------------------------------------------------------------------------- torch


def load_torch():
    try:
        import torch
        import torch._dynamo
    except ImportError:
        return None
    torch.set_num_threads(1)
    return torch


def torch_programs():
    """The same programs: their bodies call tensor methods only, so they run on torch as is."""
    return {fn.__name__: clone_function(fn) for fn in (function, function_no_branch)}


def torch_inputs(torch, n: int, requires_grad: bool):
    rng = np.random.default_rng(0)
    return {k: torch.tensor(rng.standard_normal(n).astype(np.float32),
                            requires_grad=requires_grad) for k in ("x", "y")}


def torch_first_call_s(torch, fn, inputs) -> tuple[float, str]:
    torch._dynamo.reset()
    graphs = []

    def eager_counting(gm, example_inputs):  # torch's "eager" backend, counting graphs
        graphs.append(gm)
        return gm.forward

    compiled = torch.compile(fn, backend=eager_counting)
    start = time.perf_counter()
    compiled(inputs)
    elapsed = time.perf_counter() - start
    return elapsed, f"{len(graphs)} graph{'s' if len(graphs) != 1 else ''}"


def torch_part1(torch, repeat: int) -> dict:
    inputs = torch_inputs(torch, 10, requires_grad=True)
    cold, _ = torch_first_call_s(torch, clone_function(function_no_branch), inputs)
    out = {"cold": cold}
    for name, fn in torch_programs().items():
        torch._dynamo.reset()
        assert torch.allclose(torch.compile(fn, backend="eager")(inputs), fn(inputs)), name
        torch_first_call_s(torch, fn, inputs)  # warm-up
        samples, what = [], ""
        for _ in range(repeat):
            t, what = torch_first_call_s(torch, fn, inputs)
            samples.append(t)
        out[name] = (median_ms(samples), best_us(lambda: fn(inputs), repeat), what)
    torch._dynamo.reset()
    return out


def torch_part2(torch, repeat: int) -> tuple[float, float]:
    x, y = torch_inputs(torch, 16, requires_grad=False).values()
    torch._dynamo.reset()
    compiled = torch.compile(clone_function(two_inputs), backend="eager")
    assert torch.allclose(compiled(x, y), two_inputs(x, y))
    t_eager = best_us(lambda: two_inputs(x, y), repeat)
    t_compiled = best_us(lambda: compiled(x, y), repeat)
    torch._dynamo.reset()
    return t_eager, t_compiled


# --------------------------------------------------------------------------- report


def verdict(ok: bool) -> str:
    return "ok" if ok else "OVER"


def print_part1(ours: dict, theirs: dict | None) -> None:
    print("Part 1 — first call of a compiled function (capture + compile + run), ms, median")
    print('mtc = mtc.compile(backend="eager"), torch = torch.compile(backend="eager"); '
          "10-element inputs, requires_grad=True")
    header = f"{'program':<22}{'':<6}{'eager µs':>9}{'1st call ms':>12}{'x eager':>9}  compiled"
    print(header)
    print("-" * 88)
    labels = {"function": "function(inputs)", "function_no_branch": "  without the if"}
    for name in ("function", "function_no_branch"):
        m_ms, m_eager, m_what = ours[name]
        print(f"{labels[name]:<22}{'mtc':<6}{m_eager:9.1f}{m_ms:12.2f}{m_ms * 1e3 / m_eager:8.0f}x"
              f"  {m_what}")
        if theirs is not None:
            t_ms, t_eager, t_what = theirs[name]
            print(f"{'':<22}{'torch':<6}{t_eager:9.1f}{t_ms:12.2f}{t_ms * 1e3 / t_eager:8.0f}x"
                  f"  {t_what}")
            ratio = m_ms / t_ms
            print(f"{'':<22}mtc / torch first call = {ratio:.3f}   target ≤ "
                  f"{TARGET_FIRST_CALL_RATIO}  {verdict(ratio <= TARGET_FIRST_CALL_RATIO)}")
    cold = f"mtc {ours['cold'] * 1e3:.1f} ms"
    if theirs is not None:
        cold += f", torch {theirs['cold'] * 1e3:.0f} ms"
    print(f"cold first call in this process (includes lazy imports): {cold}")


def print_part2(ours: tuple, theirs: tuple | None) -> None:
    print("\nPart 2 — per call on a cache hit: f(x, y) = x * y + x, 16-element float32, µs, "
          "best of repeats")
    print(f"{'':<8}{'eager':>9}{'compiled':>10}{'overhead':>10}{'ratio':>8}")
    print("-" * 45)
    rows = [("mtc", *ours)] + ([("torch", *theirs)] if theirs is not None else [])
    for name, eager, compiled in rows:
        print(f"{name:<8}{eager:9.2f}{compiled:10.2f}{compiled - eager:10.2f}"
              f"{compiled / eager:7.2f}x")
    if theirs is not None:
        m_over, t_over = ours[1] - ours[0], theirs[1] - theirs[0]
        ratio = m_over / t_over
        print(f"mtc overhead / torch overhead = {ratio:.2f}   target ≤ {TARGET_OVERHEAD_RATIO}  "
              f"{verdict(ratio <= TARGET_OVERHEAD_RATIO)}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5, help="timing runs per figure")
    parser.add_argument("--no-torch", action="store_true", help="skip the torch comparison")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    torch = None if args.no_torch else load_torch()
    versions = f"minitorch_compile {mtc.__version__} · numpy {np.__version__}"
    versions += f" · torch {torch.__version__}" if torch is not None else \
        " · torch: not compared" + ("" if args.no_torch else " (not installed)")
    print(f"{versions} · Python {platform.python_version()} · {platform.machine()}\n")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's and ours: fallbacks are reported in the table
        ours1 = mtc_part1(args.repeat)
        theirs1 = torch_part1(torch, args.repeat) if torch is not None else None
        ours2 = mtc_part2(args.repeat)
        theirs2 = torch_part2(torch, args.repeat) if torch is not None else None
    print_part1(ours1, theirs1)
    print_part2(ours2, theirs2)
    print(f"\n(total {time.perf_counter() - start:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
