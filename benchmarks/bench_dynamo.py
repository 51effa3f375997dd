"""What Dynamo costs: the first call of a compiled function, and every call after it.

Run: ``python benchmarks/bench_dynamo.py`` (about 20 s with torch installed; ``--no-torch``
skips the comparison, ``--repeat`` sets the number of timing runs).

Part 1 — **first call** (capture). The first call of a compiled function binds the arguments,
traces the bytecode symbolically, builds the graph and the guard function, hands the graph to
the backend, writes the transformed code — and then runs it. Programs, from the tutorial:

* ``function(inputs)``: ``x = x.cos().cos(); if x.mean() > 0.5: x = x / 1.1; return x * y``.
  The ``if`` reads a tensor's value: both compilers break the graph there and compile two graphs
  (the frame's, and its resume function's) on the first call.
* ``function`` without the branch: ``x.cos().cos() / 1.1 * y``, one graph in both.

Each figure is the median of ``--repeat`` first calls, each after ``mtc.dynamo.reset()`` /
``torch._dynamo.reset()`` (and, for minitorch_compile, after clearing the tracer's cache of
decoded bytecode, which ``reset()`` keeps, so every run decodes the bytecode again). Before the
timed runs each program is compiled once, so one-time imports are not counted; the cold first
call of the process is printed separately.

Part 2 — **per-call overhead on a cache hit**. A 2-input function on 16-element tensors, where
the math is cheap: ``compiled − eager`` is what the wrapper, the guard function and the
transformed code cost per call. Best of ``--repeat`` timeit runs, in µs.

Part 3 — **dynamic shapes**: 1,000 calls of ``function(inputs)`` with sizes drawn uniformly from
2..64 (seeded; inputs built before timing, ``requires_grad=True`` as in the tutorial). Counted:
how often the first frame compiled (target 2: ``[n]``, then ``[s0]``) and how often its resume
functions compiled. Timed: the whole loop once, compiles included, right after a reset; then
the same loop again (every call a hit), best of ``--repeat``, per call, against eager on the same
loop. The overhead target compares ratios to eager: compiled/eager for mtc ≤ compiled/eager for
``torch.compile(backend="eager")`` (mtc's eager ops are slower than torch's, so the absolute µs
of overhead are printed too, for information). Every compiled output is checked against eager.

Part 4 — **dynamic shapes through Inductor**: the same 1,000 calls with the default backend,
``inductor``. Counted: Dynamo compiles of the first frame and its resume function, AOTAutograd
traces and Inductor graphs (forward and backward of each trace) — target: after the static first
compile, one symbolic trace serves every size (AOT traces = frame compiles, not one per size).
Timed as Part 3: the loop once cold, then per call on hits, against eager; with torch installed,
``torch.compile()`` (its Inductor) on the same loop.

Ratios are against eager mode of the same framework in the same run. Targets printed beside the
figures (not asserted anywhere — timing depends on the machine): first call ≤ 1/5 of
``torch.compile(backend="eager")``'s; overhead per call ≤ torch.compile's; first frame compiled
twice in the dynamic-shapes loop, with a per-call ratio to eager ≤ torch.compile's.
"""

from __future__ import annotations

import argparse
import collections
import platform
import statistics
import sys
import time
import timeit
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout
sys.path.insert(0, str(Path(__file__).resolve().parent))  # benchmarks/_readme.py

from _readme import figures_for_readme  # noqa: E402 - benchmarks/_readme.py

import minitorch_compile as mtc  # noqa: E402
from minitorch_compile.dynamo import convert_frame, symbolic_convert  # noqa: E402

TARGET_FIRST_CALL_RATIO = 0.2  # mtc first call / torch first call
TARGET_OVERHEAD_RATIO = 1.0  # mtc overhead per hit / torch overhead per hit
TARGET_FIRST_FRAME_COMPILES = 2  # dynamic-shapes loop: [n], then [s0]
N_CALLS = 1000  # dynamic-shapes loop: calls, sizes drawn from SIZES
SIZES = (2, 64)


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
    graphs = []

    def eager_counting(gm, example_inputs):  # the "eager" backend, counting graphs
        graphs.append(gm)
        return gm.forward

    compiled = mtc.compile(fn, backend=eager_counting)
    start = time.perf_counter()
    compiled(inputs)
    elapsed = time.perf_counter() - start
    if mtc.dynamo.cache_entries(compiled)[0].is_eager:
        return elapsed, "ran eagerly"
    return elapsed, f"{len(graphs)} graph{'s' if len(graphs) != 1 else ''}"


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


# --------------------------------------------------------------------------- part 3: dynamic shapes


def loop_sizes() -> list[int]:
    return [int(n) for n in np.random.default_rng(0).integers(SIZES[0], SIZES[1] + 1, N_CALLS)]


def loop_timings(compiled_call, eager_call, repeat: int) -> tuple[float, float]:
    """(best compiled loop, best eager loop) in seconds, alternating the two."""
    compiled_s, eager_s = [], []
    for _ in range(repeat):
        start = time.perf_counter()
        compiled_call()
        compiled_s.append(time.perf_counter() - start)
        start = time.perf_counter()
        eager_call()
        eager_s.append(time.perf_counter() - start)
    return min(compiled_s), min(eager_s)


def mtc_loop(repeat: int, backend=None, **tol) -> dict:
    """Parts 3 and 4 for mtc: the 1,000 calls through ``mtc.compile(function, backend=...)``.

    Counts Dynamo's compiles of ``function`` (``first``) and of its resume functions
    (``resume``) through ``convert_frame.compile_listeners``; ``cold`` is the first loop
    (compiling included), ``warm``/``eager`` the best later loops.
    """
    inputs = [mtc_inputs(n, requires_grad=True) for n in loop_sizes()]
    mtc.dynamo.reset()
    compiles = collections.Counter()

    def count(entry):  # called by convert_frame for every finished cache entry
        compiles[entry.original_code.co_name] += 1

    convert_frame.compile_listeners.append(count)
    try:
        compiled = mtc.compile(function, **({} if backend is None else {"backend": backend}))
        start = time.perf_counter()
        outputs = [compiled(i) for i in inputs]
        cold = time.perf_counter() - start
    finally:
        convert_frame.compile_listeners.remove(count)
    for out, i in zip(outputs, inputs):
        assert mtc.allclose(out, function(i), **tol), "compiled != eager"
    warm, eager = loop_timings(lambda: [compiled(i) for i in inputs],
                               lambda: [function(i) for i in inputs], repeat)
    first = compiles.pop(function.__name__, 0)
    assert len(mtc.dynamo.cache_entries(function)) == first  # no compile in the timed loops
    mtc.dynamo.reset()
    return {"first": first, "resume": sum(compiles.values()), "cold": cold, "warm": warm,
            "eager": eager}


def mtc_part3(repeat: int) -> dict:
    return mtc_loop(repeat, backend="eager")


def torch_loop(torch, backend, repeat: int, **tol) -> dict:
    """Parts 3 and 4 for torch: the 1,000 calls through ``torch.compile(fn, backend=...)``.

    ``first`` is the number of cache entries of the function's own code (its compiles);
    ``cold`` the first loop (compiling included), ``warm``/``eager`` the best later loops.
    """
    from torch._dynamo.eval_frame import _debug_get_cache_entry_list

    rng = np.random.default_rng(0)
    inputs = [{k: torch.tensor(rng.standard_normal(n).astype(np.float32), requires_grad=True)
               for k in ("x", "y")} for n in loop_sizes()]
    fn = clone_function(function)
    torch._dynamo.reset()
    compiled = torch.compile(fn, backend=backend)
    start = time.perf_counter()
    outputs = [compiled(i) for i in inputs]
    cold = time.perf_counter() - start
    for out, i in zip(outputs, inputs):
        assert torch.allclose(out, fn(i), **tol), "torch.compile != eager"
    warm, eager = loop_timings(lambda: [compiled(i) for i in inputs],
                               lambda: [fn(i) for i in inputs], repeat)
    first = len(_debug_get_cache_entry_list(fn.__code__))
    torch._dynamo.reset()
    return {"first": first, "cold": cold, "warm": warm, "eager": eager}


def torch_part3(torch, repeat: int) -> dict:
    graphs = []

    def eager_counting(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    result = torch_loop(torch, eager_counting, repeat)
    result["resume"] = len(graphs) - result["first"]  # one graph per compile here
    return result


# --------------------------------------------------------------------------- part 4: inductor


def mtc_part4(repeat: int) -> dict:
    """Part 4 adds AOTAutograd's traces and Inductor's graphs made during the loops."""
    import importlib

    from minitorch_compile.aot import aot_autograd

    compile_fx = importlib.import_module("minitorch_compile.inductor.compile_fx")
    traces, graphs = aot_autograd.counters["total"], len(compile_fx.compiled_graphs)
    result = mtc_loop(repeat, rtol=1e-4, atol=1e-5)  # the default backend, inductor
    result["aot"] = aot_autograd.counters["total"] - traces
    result["graphs"] = len(compile_fx.compiled_graphs) - graphs
    return result


def torch_part4(torch, repeat: int) -> dict:
    return torch_loop(torch, "inductor", repeat, rtol=1e-4, atol=1e-5)


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


def _dynamic_rows(title: str, compilers: str, header: str, width: int, ours: dict,
                  theirs: dict | None) -> list:
    """Print a dynamic-shapes part's title and table header; return its rows as
    (name, measurements, eager µs per call, compiled µs per call)."""
    print(title)
    print(f"{compilers}; per call: µs, loops of hits, best of repeats")
    print(header)
    print("-" * width)
    rows = [("mtc", ours)] + ([("torch", theirs)] if theirs is not None else [])
    return [(name, r, r["eager"] / N_CALLS * 1e6, r["warm"] / N_CALLS * 1e6) for name, r in rows]


def print_part3(ours: dict, theirs: dict | None) -> None:
    lo, hi = SIZES
    rows = _dynamic_rows(
        f"\nPart 3 — dynamic shapes: {N_CALLS:,} calls of function(inputs), sizes drawn from "
        f"{lo}..{hi} (seed 0), requires_grad=True",
        'mtc = mtc.compile(backend="eager"), torch = torch.compile(backend="eager")',
        f"{'':<8}{'compiles:':>10}{'frame':>6}{'resume':>7}{'1st loop ms':>13}"
        f"{'eager':>8}{'compiled':>10}{'ratio':>8}{'overhead':>10}", 80, ours, theirs)
    for name, r, eager, warm in rows:
        print(f"{name:<8}{'':>10}{r['first']:6d}{r['resume']:7d}{r['cold'] * 1e3:13.1f}"
              f"{eager:8.1f}{warm:10.1f}{warm / eager:7.2f}x{warm - eager:10.1f}")
    ok = ours["first"] == TARGET_FIRST_FRAME_COMPILES
    print(f"first frame compiled {ours['first']} times   target {TARGET_FIRST_FRAME_COMPILES}  "
          f"{verdict(ok)}")
    if theirs is not None:
        m_ratio, t_ratio = ours["warm"] / ours["eager"], theirs["warm"] / theirs["eager"]
        print(f"per-call ratio to eager: mtc {m_ratio:.2f}x, torch {t_ratio:.2f}x   target mtc ≤ "
              f"torch  {verdict(m_ratio <= t_ratio)}")
        m_over = (ours["warm"] - ours["eager"]) / N_CALLS * 1e6
        t_over = (theirs["warm"] - theirs["eager"]) / N_CALLS * 1e6
        print(f"(absolute overhead per call: mtc {m_over:.1f} µs, torch {t_over:.1f} µs)")


def print_part4(ours: dict, theirs: dict | None) -> None:
    lo, hi = SIZES
    rows = _dynamic_rows(
        f"\nPart 4 — dynamic shapes through Inductor: the same {N_CALLS:,} calls, "
        f"sizes {lo}..{hi}",
        "mtc = mtc.compile() (inductor), torch = torch.compile() (inductor)",
        f"{'':<8}{'frame':>6}{'resume':>7}{'AOT':>5}{'graphs':>7}{'1st loop ms':>13}"
        f"{'eager':>8}{'compiled':>10}{'ratio':>8}", 72, ours, theirs)
    for name, r, eager, warm in rows:
        aot = f"{r['aot']:5d}{r['graphs']:7d}" if "aot" in r else f"{'-':>5}{'-':>7}"
        resume = f"{r['resume']:7d}" if "resume" in r else f"{'-':>7}"
        print(f"{name:<8}{r['first']:6d}{resume}{aot}{r['cold'] * 1e3:13.1f}"
              f"{eager:8.1f}{warm:10.1f}{warm / eager:7.2f}x")
    compiles = ours["first"] + ours["resume"]
    ok = ours["aot"] == compiles
    print(f"AOT traces {ours['aot']} = Dynamo compiles {compiles} (one trace per graph, not per "
          f"size)  {verdict(ok)}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5, help="timing runs per figure")
    parser.add_argument("--no-torch", action="store_true", help="skip the torch comparison")
    parser.add_argument("--write-readme", action="store_true",
                        help="also write the output into benchmarks/README.md's figures")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    torch = None if args.no_torch else load_torch()
    versions = f"minitorch_compile {mtc.__version__} · numpy {np.__version__}"
    versions += f" · torch {torch.__version__}" if torch is not None else \
        " · torch: not compared" + ("" if args.no_torch else " (not installed)")
    with figures_for_readme("bench_dynamo.py", args.write_readme):
        print(f"{versions} · Python {platform.python_version()} · {platform.machine()}\n")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # torch's and ours: fallbacks are in the table
            ours1 = mtc_part1(args.repeat)
            theirs1 = torch_part1(torch, args.repeat) if torch is not None else None
            ours2 = mtc_part2(args.repeat)
            theirs2 = torch_part2(torch, args.repeat) if torch is not None else None
            ours3 = mtc_part3(args.repeat)
            theirs3 = torch_part3(torch, args.repeat) if torch is not None else None
            ours4 = mtc_part4(args.repeat)
            theirs4 = torch_part4(torch, args.repeat) if torch is not None else None
        print_part1(ours1, theirs1)
        print_part2(ours2, theirs2)
        print_part3(ours3, theirs3)
        print_part4(ours4, theirs4)
    print(f"\n(total {time.perf_counter() - start:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
