"""Inductor's kernels against plain numpy, our eager mode, torch eager and ``torch.compile``.

Run: ``python benchmarks/bench_inductor.py`` (about a minute; ``--quick`` uses smaller inputs
and fewer repeats, ``--no-torch`` skips torch; ``--runs 3`` measures everything three times
and adds a table of the per-cell medians, with the load average before each run — on a shared
machine the load moves absolute times by 2-4x; ``--write-readme`` puts the output into
``benchmarks/README.md``).

Programs (issue 9, item 10), each written once and run through every implementation:

* ``pointwise x10``: a chain of 10 elementwise ops on 16 M float32;
* ``softmax``, ``layer_norm``: on (4096, 1024) float32, through the library's ops (so the
  decompositions are what gets compiled);
* ``gelu``: GELU (erf) on 16 M float32 — the numpy baseline uses a float32 erf approximation
  (numpy has none);
* ``cos(cos) fw+bw``: the tutorial's function, forward and backward, on 16 M float32;
* ``mlp step``: Linear 512→1024, ReLU, Linear 1024→64, MSE loss, backward, batch 1024;
* ``small call``: ``(x.cos() * y + 1).sum()`` on 10 elements — a cache hit's overhead.

Figures are the best of ``--repeat`` rounds (ms, µs for the small call): after the first calls,
each round calls numpy, ours, torch eager and ``torch.compile`` in that order, ``--block``
(default 2) calls of each back to back, every call timed (``--torch-first`` reverses the order,
to check it does not matter), so every column sees the same machine load, and each is also
timed in its own steady state: the first call of a block absorbs what the column before left
(its data in the caches; torch's OpenMP threads spinning for a while after a parallel region),
the second runs as in a loop of that library alone (``--block 1``: strictly alternating calls,
the earlier scheme); our eager mode is timed on its own (slow, best of 2).
Compile time is the first call, cold on both sides: ours after ``mtc.dynamo.reset()`` (our
content-keyed module cache is in-process only, and each case is a new program), torch's with
every cache off — ``torch._dynamo.reset()``, a fresh empty ``TORCHINDUCTOR_CACHE_DIR`` per
case, ``torch._inductor.config.fx_graph_cache``/``force_disable_caches`` and
``torch._functorch.config.enable_autograd_cache`` set to disable, and its in-process C++/Python
code caches cleared — so it really compiles C++ each time (``--warm-torch-cache`` measures it
with its caches as they are, as a user's second run sees them).  Baselines run in the same
process, so ratios are the figures that travel.  Targets (printed, not asserted): ours ≤ 0.5×
numpy and ≤ 1.25× ``torch.compile`` on the pointwise and reduction rows; the MLP step no
slower than numpy; first call ≤ 1/10 of ``torch.compile``'s; the small call no slower than
``torch.compile``'s.  ``--threads N`` sets both libraries' thread counts.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout

import minitorch_compile as mtc  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))  # benchmarks/_readme.py
from _readme import figures_for_readme  # noqa: E402


def best(fn, repeat: int) -> float:
    fn()
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def interleaved(fns: list, repeat: int, block: int = 1) -> dict:
    """Best time of each function over ``repeat`` rounds (after a warm-up call), each round
    calling every function ``block`` times back to back, each call timed: every column sees
    the same machine load, and with ``block >= 2`` each is also timed in its own steady state —
    the first call of a block pays for what the previous column left behind (its data in the
    caches instead of ours, torch's OpenMP threads still spinning on the cores after their
    parallel region), the next ones run as in a loop of that library's calls alone, which is
    how ``torch.compile``'s column is measured whatever comes before it.  Returns
    {position: seconds}."""
    for fn in fns:
        fn()
    times = [[] for _ in fns]
    for _ in range(repeat):
        for k, fn in enumerate(fns):
            for _ in range(block):
                t = time.perf_counter()
                fn()
                times[k].append(time.perf_counter() - t)
    return {k: min(ts) for k, ts in enumerate(times)}


def first_call(fn) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


# --------------------------------------------------------------------------- the programs
# written once over a library namespace ``L`` (mtc or torch) with the functional module ``F``


def chain(L, F):
    def f(x):
        y = x.cos() * 1.5 + 0.5
        y = y.sin() * x
        y = y.tanh() - 0.25
        y = y.abs() * y + 1
        return y.sqrt()
    return f


def softmax(L, F):
    return lambda x: L.softmax(x, -1)


def layer_norm(L, F):
    return lambda x, w, b: F.layer_norm(x, (x.shape[-1],), w, b)


def gelu(L, F):
    return lambda x: F.gelu(x)


def cos_cos(L, F):
    return lambda x: L.cos(L.cos(x))


def mlp(L, F):
    def step(x, t, w1, b1, w2, b2):
        h = F.relu(F.linear(x, w1, b1))
        return F.mse_loss(F.linear(h, w2, b2), t)
    return step


def small(L, F):
    return lambda x, y: (x.cos() * y + 1).sum()


# --------------------------------------------------------------------------- numpy baselines


def np_chain(x):
    y = np.cos(x) * 1.5 + 0.5
    y = np.sin(y) * x
    y = np.tanh(y) - 0.25
    y = np.abs(y) * y + 1
    return np.sqrt(y)


def np_softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def np_layer_norm(x, w, b):
    mu = x.mean(-1, keepdims=True)
    c = x - mu
    return c / np.sqrt((c * c).mean(-1, keepdims=True) + 1e-5) * w + b


def np_erf(x):  # Abramowitz & Stegun 7.1.26, |error| < 1.5e-7
    s = np.sign(x)
    a = np.abs(x)
    t = 1 / (1 + 0.3275911 * a)
    y = 1 - (((((1.061405429 * t - 1.453152027) * t) + 1.421413741) * t - 0.284496736) * t
             + 0.254829592) * t * np.exp(-a * a)
    return s * y


def np_gelu(x):
    return 0.5 * x * (1 + np_erf(x * np.float32(0.7071067811865476)))


def np_cos_cos(x, g):
    c = np.cos(x)
    out = np.cos(c)
    return out, g * -np.sin(c) * -np.sin(x)


def np_mlp(x, t, w1, b1, w2, b2):
    h = np.maximum(x @ w1.T + b1, 0)
    y = h @ w2.T + b2
    d = y - t
    loss = (d * d).mean()
    gy = 2 * d / d.size
    gw2, gb2, gh = gy.T @ h, gy.sum(0), gy @ w2
    gh = gh * (h > 0)
    return loss, gh.T @ x, gh.sum(0), gw2, gb2


# --------------------------------------------------------------------------- runners


def make_inputs(name, n, rows, cols, rng):
    f32 = np.float32
    if name in ("chain", "gelu", "cos_cos"):
        return [rng.standard_normal(n).astype(f32)]
    if name == "softmax":
        return [rng.standard_normal((rows, cols)).astype(f32)]
    if name == "layer_norm":
        return [rng.standard_normal((rows, cols)).astype(f32),
                rng.standard_normal(cols).astype(f32), rng.standard_normal(cols).astype(f32)]
    if name == "mlp":
        b = rows // 4
        return [rng.standard_normal((b, 512)).astype(f32), rng.standard_normal((b, 64)).astype(f32),
                (rng.standard_normal((1024, 512)) * 0.04).astype(f32), np.zeros(1024, f32),
                (rng.standard_normal((64, 1024)) * 0.03).astype(f32), np.zeros(64, f32)]
    return [rng.standard_normal(10).astype(f32), rng.standard_normal(10).astype(f32)]


CASES = [("pointwise x10", "chain", chain, np_chain, False),
         ("softmax", "softmax", softmax, np_softmax, False),
         ("layer_norm", "layer_norm", layer_norm, np_layer_norm, False),
         ("gelu", "gelu", gelu, np_gelu, False),
         ("cos(cos) fw+bw", "cos_cos", cos_cos, np_cos_cos, True),
         ("mlp step", "mlp", mlp, np_mlp, True),
         ("small call", "small", small, lambda x, y: (np.cos(x) * y + 1).sum(), False)]


def run_lib(L, F, builder, arrays, backward, compile_fn, to_tensor):
    grad_pos = list(range(len(arrays))) if backward else []
    if builder is mlp:
        grad_pos = [2, 3, 4, 5]
    tensors = [to_tensor(a, i in grad_pos) for i, a in enumerate(arrays)]
    fn = builder(L, F)
    fn = compile_fn(fn) if compile_fn else fn
    # the incoming gradient, made once (as the numpy baseline gets it): ones, contiguous
    grad = to_tensor(np.ones_like(arrays[0]), False) if backward and builder is cos_cos else None

    def call():
        out = fn(*tensors)
        if backward:
            out.backward(grad) if grad is not None else out.backward()
            for t in tensors:
                t.grad = None
        return out
    return call


@contextlib.contextmanager
def torch_cold(torch, cold: bool):
    """Every torch compile cache off for one first call: an empty on-disk cache directory of
    its own, the FX-graph and AOT-autograd caches disabled, the in-process code caches cleared
    (config names of torch 2.13)."""
    if not cold:
        yield
        return
    from torch._functorch import config as fconfig
    from torch._inductor import codecache
    from torch._inductor import config as iconfig

    old_env = os.environ.get("TORCHINDUCTOR_CACHE_DIR")
    saved = (iconfig.fx_graph_cache, iconfig.force_disable_caches, fconfig.enable_autograd_cache)
    tmp = tempfile.mkdtemp(prefix="bench_inductor_tc_")
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = tmp
    iconfig.fx_graph_cache, iconfig.force_disable_caches = False, True
    fconfig.enable_autograd_cache = False
    codecache.CppCodeCache.cache_clear()
    codecache.PyCodeCache.cache_clear()
    try:
        yield
    finally:
        iconfig.fx_graph_cache, iconfig.force_disable_caches, fconfig.enable_autograd_cache = \
            saved
        if old_env is None:
            os.environ.pop("TORCHINDUCTOR_CACHE_DIR", None)
        else:
            os.environ["TORCHINDUCTOR_CACHE_DIR"] = old_env
        shutil.rmtree(tmp, ignore_errors=True)


HEADER = ["case", "numpy", "eager", "compiled", "torch", "torch.compile", "c/np", "c/tc",
          "compile s", "tc compile s"]


def main(argv=None) -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--quick", action="store_true")
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--runs", type=int, default=1, help="measure N times; print the medians")
    p.add_argument("--block", type=int, default=2,
                   help="calls of each column back to back per round (1: strictly alternating)")
    p.add_argument("--no-torch", action="store_true")
    p.add_argument("--warm-torch-cache", action="store_true",
                   help="time torch.compile's first call with its on-disk caches as they are")
    p.add_argument("--torch-first", action="store_true",
                   help="in each case, time torch's columns before ours (order check)")
    p.add_argument("--threads", type=int, default=0,
                   help="threads for ours and for torch (torch.set_num_threads); 0: defaults")
    p.add_argument("--cases", default="", help="comma-separated keys: chain,softmax,...")
    p.add_argument("--write-readme", action="store_true",
                   help="also write the output into benchmarks/README.md")
    args = p.parse_args(argv)
    with figures_for_readme("bench_inductor.py", args.write_readme):
        print(f"minitorch_compile {mtc.__version__} · numpy {np.__version__} · "
              f"{os.cpu_count()} cores")
        runs = []
        for k in range(args.runs):
            print(f"\nrun {k + 1} of {args.runs} (load average {os.getloadavg()[0]:.1f})")
            runs.append(measure(args))
        if args.runs > 1:
            print(f"\nmedian of the {args.runs} runs, cell by cell:")
            print(" | ".join(HEADER))
            for rows in zip(*runs):
                med = {"case": rows[0]["case"]}
                for h in HEADER[1:]:
                    vals = [r[h] for r in rows if r.get(h) is not None]
                    med[h] = float(np.median(vals)) if vals else None
                print(" | ".join(_fmt(med.get(h)) for h in HEADER))


def measure(args) -> list:
    n, rows, cols = (1 << 20, 512, 1024) if args.quick else (1 << 24, 4096, 1024)
    repeat = 2 if args.quick else args.repeat
    torch = None
    if not args.no_torch:
        try:
            import torch
        except ImportError:
            torch = None
    rng = np.random.default_rng(0)
    warnings.simplefilter("ignore")
    if args.threads:
        mtc.inductor.config.threads = args.threads
        if torch is not None:
            torch.set_num_threads(args.threads)
    print(f"inductor benchmark: n={n}, rows×cols={rows}×{cols}, threads="
          f"{mtc.inductor.config.threads}, best of {repeat} rounds × {args.block} calls; ms "
          f"(small call: µs, 2000 rounds × 1); first calls "
          f"{'with torch caches warm' if args.warm_torch_cache else 'cold on both sides'}"
          f"{'; torch timed first' if args.torch_first else ''}")
    hdr = HEADER
    print(" | ".join(hdr))
    results = []
    only = {c.strip() for c in args.cases.split(",") if c.strip()}
    for label, key, builder, np_fn, backward in CASES:
        if only and key not in only:
            continue
        arrays = make_inputs(key, n, rows, cols, rng)
        unit = 1e6 if key == "small" else 1e3
        reps = repeat if key != "small" else 2000
        row = {"case": label}
        if backward and key == "cos_cos":
            g = np.ones_like(arrays[0])
            timed = {"numpy": lambda: np_fn(arrays[0], g)}
        else:
            timed = {"numpy": lambda: np_fn(*arrays)}

        def ours():
            mk = lambda a, rg: mtc.tensor(a).requires_grad_(rg)  # noqa: E731
            eager = run_lib(mtc, mtc.nn.functional, builder, arrays, backward, None, mk)
            row["eager"] = best(eager, max(1, min(reps, 2))) * unit
            mtc.dynamo.reset()
            comp = run_lib(mtc, mtc.nn.functional, builder, arrays, backward, mtc.compile, mk)
            row["compile s"] = first_call(comp)
            timed["compiled"] = comp

        def theirs():
            tk = lambda a, rg: torch.from_numpy(a.copy()).requires_grad_(rg)  # noqa: E731
            timed["torch"] = run_lib(torch, torch.nn.functional, builder, arrays, backward,
                                     None, tk)
            torch._dynamo.reset()
            with torch_cold(torch, not args.warm_torch_cache):
                tc = run_lib(torch, torch.nn.functional, builder, arrays, backward,
                             torch.compile, tk)
                row["tc compile s"] = first_call(tc)
            timed["torch.compile"] = tc
        order = [ours] if torch is None else [theirs, ours] if args.torch_first else \
            [ours, theirs]
        for part in order:
            part()
        names = list(timed)[::-1] if args.torch_first else list(timed)
        block = 1 if key == "small" else args.block  # 2000 rounds of the small call: no need
        for name, t in interleaved([timed[k] for k in names], reps, block).items():
            row[names[name]] = t * unit
        results.append(row)
        c, npt, tct = row["compiled"], row["numpy"], row.get("torch.compile")
        row["c/np"] = c / npt
        row["c/tc"] = c / tct if tct else float("nan")
        print(" | ".join(_fmt(row.get(h)) for h in hdr), flush=True)
    return results


def _fmt(v) -> str:
    if v is None:
        return "-"
    if isinstance(v, str):
        return v
    return f"{v:.3g}" if abs(v) < 10 else f"{v:.0f}"


if __name__ == "__main__":
    main()
