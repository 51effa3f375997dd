"""Eager vs fused on the simulated npu: simulated time and GM bytes (Inductor's npu target).

Run: ``python benchmarks/bench_npu.py`` (about half a minute; ``--write-readme`` also writes the
figures into benchmarks/README.md).  Every figure is *simulated* (``npu/kernel.py``'s cost
model, the default 910B-like spec), so it is deterministic: the same on any machine.

Part 1 — per program (float32): eager (one kernel per op), fused (Inductor's npu kernels),
fused with one buffer per queue (no double buffering), and for the programs with matmuls
fused with FRACTAL_NZ operands (``config.npu_cube_nz``: visible TransData kernels, after cast
elimination): kernels, GM bytes, simulated µs.

Part 2 — per fused kernel of Part 1: GM bytes over the minimum and the fraction of its
roofline bound reached.  Targets (issue 11): fused pointwise and reduction kernels move
**≤ 1.05×** the minimum GM bytes and reach **≥ 0.9** of their roofline bound.

Part 3 — the tutorial's claim that the fused, rematerialized backward of ``cos(cos(x))``
needs about 75 % of the memory time of the unfused one: the backward's GM bytes and time,
eager, fused with the default partition (save ``cos(x)``) and fused with the min-cut one
(save ``x`` only, recompute ``cos(x)``).
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout

import minitorch_compile as mtc  # noqa: E402
from minitorch_compile import inductor  # noqa: E402
from minitorch_compile.inductor.codegen import npu_cube  # noqa: E402

N = (2048, 1024)
MATMUL = ("attention fw+bw", "MLP step fw+bw")
F = mtc.nn.functional


def _attention(q, k, v):
    return mtc.softmax(q @ k.transpose(-2, -1) * 0.125, -1) @ v


def _mlp_step():
    mtc.manual_seed(0)
    w1, b1 = mtc.randn(256, 512) * 0.05, mtc.zeros(512)
    w2, b2 = mtc.randn(512, 10) * 0.05, mtc.zeros(10)
    params = [t.npu().requires_grad_() for t in (w1, b1, w2, b2)]
    x, target = mtc.randn(64, 256).npu(), mtc.tensor([i % 10 for i in range(64)]).npu()

    def loss(w1, b1, w2, b2, x, target):
        return F.cross_entropy(F.gelu(x @ w1 + b1) @ w2 + b2, target)
    return loss, [*params, x, target], True


def programs():
    def x(grad=False):
        mtc.manual_seed(0)
        return mtc.randn(*N).npu().requires_grad_(grad)
    mtc.manual_seed(1)
    qkv = [mtc.randn(8, 128, 64).npu().requires_grad_() for _ in range(3)]
    return {
        "cos(cos(x)) fw+bw": (lambda a: a.cos().cos(), [x(True)], True),
        "gelu": (F.gelu, [x()], False),
        "softmax": (lambda a: mtc.softmax(a, -1), [x()], False),
        "layer_norm": (lambda a: F.layer_norm(a, (N[1],)), [x()], False),
        "attention fw+bw": (_attention, qkv, True),
        "MLP step fw+bw": _mlp_step(),
    }


def run(fn, args, grad, mode: str):
    mtc.dynamo.reset()
    # kept NZ weight copies are found by address: start each measurement without any, so a
    # run's cast count never depends on which arrays an earlier run left at which address
    npu_cube._kept.clear()
    default_buffers = inductor.config.npu_buffer_num
    if mode == "fused, 1 buffer":
        inductor.config.npu_buffer_num = 1
    inductor.config.npu_cube_nz = mode == "fused, NZ casts"
    f = fn if mode == "eager" else mtc.compile(fn)
    args = [a.detach().requires_grad_(a.requires_grad) for a in args]
    if mode != "eager":
        with mtc.npu.profile():  # compile outside the measured run
            out = f(*args)
            if grad:
                out.sum().backward()
        args = [a.detach().requires_grad_(a.requires_grad) for a in args]
    with mtc.npu.profile() as prof:
        out = f(*args)
        if grad:
            out.sum().backward()
    inductor.config.npu_buffer_num, inductor.config.npu_cube_nz = default_buffers, False
    return prof


def part1_2(lines):
    fused_kernels = []
    lines.append("Part 1 — eager vs fused (simulated; float32; fw = forward, bw = backward)")
    head = f"{'program':<20}{'mode':<17}{'kernels':>8}{'GM MB':>9}{'min MB':>9}{'sim us':>9}"
    lines += [head, "-" * len(head)]
    for name, (fn, args, grad) in programs().items():
        base = None
        modes = ("eager", "fused", "fused, 1 buffer") + (("fused, NZ casts",) if name in MATMUL
                                                         else ())
        for mode in modes:
            t = run(fn, args, grad, mode).totals() if mode != "fused" else None
            if mode == "fused":
                prof = run(fn, args, grad, mode)
                t = prof.totals()
                fused_kernels += [(name, k) for k in prof.kernels if k.kind == "inductor"]
            gm = t["gm_read_bytes"] + t["gm_write_bytes"]
            base = base or t["time_us"]
            lines.append(f"{name if mode == 'eager' else '':<20}{mode:<17}{t['kernels']:>8}"
                         f"{gm / 1e6:>9.2f}{t['min_gm_bytes'] / 1e6:>9.2f}{t['time_us']:>9.1f}"
                         + ("" if mode == "eager" else f"   {base / t['time_us']:.2f}x eager"))
    lines += ["", "Part 2 — each fused kernel: GM bytes / minimum (target <= 1.05), "
              "lower bound / time (target >= 0.9)"]
    head = f"{'program':<20}{'kernel':<44}{'bytes/min':>10}{'of roof':>9}{'bound':>9}  target"
    lines += [head, "-" * len(head)]
    for prog, k in fused_kernels:
        ratio, roof = k.gm_bytes / max(k.min_gm_bytes, 1), k.lower_bound_us / k.time_us
        ok = "met" if ratio <= 1.05 and roof >= 0.9 else "MISSED"
        lines.append(f"{prog:<20}{k.name[:43]:<44}{ratio:>10.2f}{roof:>9.2f}{k.bound:>9}  {ok}")


def part3(lines):
    from minitorch_compile.aot import aot_module_simplified
    from minitorch_compile.aot.partitioners import (
        default_partition,
        min_cut_rematerialization_partition,
    )
    from minitorch_compile.inductor.compile_fx import compile_fx_inner

    def backend(partition):
        def compile_(gm, example_inputs):
            return aot_module_simplified(gm, example_inputs, compile_fx_inner, compile_fx_inner,
                                         partition_fn=partition)
        return compile_

    def backward_only(f):
        mtc.manual_seed(0)
        a = mtc.randn(*N).npu().requires_grad_()
        g = mtc.randn(*N).npu()
        out = f(a)
        with mtc.npu.profile() as prof:
            out.backward(g)
        return prof.totals()

    fn = lambda a: a.cos().cos()  # noqa: E731
    rows = [("eager (unfused)", fn)]
    for label, part in (("fused, default partition", default_partition),
                        ("fused, min-cut (remat)", min_cut_rematerialization_partition)):
        mtc.dynamo.reset()
        rows.append((label, mtc.compile(fn, backend=backend(part))))
    lines += ["", "Part 3 — the backward of cos(cos(x)) alone (x and grad 2048x1024 float32)"]
    head = f"{'backward':<28}{'kernels':>8}{'GM MB':>9}{'sim us':>9}{'MTE2+MTE3 cyc':>15}"
    lines += [head, "-" * len(head)]
    res = {}
    for label, f in rows:
        backward_only(f)  # compile
        t = backward_only(f)
        gm = t["gm_read_bytes"] + t["gm_write_bytes"]
        res[label] = (gm, t["time_us"])
        lines.append(f"{label:<28}{t['kernels']:>8}{gm / 1e6:>9.2f}{t['time_us']:>9.1f}"
                     f"{t['mte2_cycles'] + t['mte3_cycles']:>15,.0f}")
    remat, default, eager = (res["fused, min-cut (remat)"], res["fused, default partition"],
                             res["eager (unfused)"])
    lines.append(f"remat / default partition: {remat[0] / default[0]:.0%} of the GM bytes, "
                 f"{remat[1] / default[1]:.0%} of the time")
    lines.append(f"remat / eager (unfused):   {remat[0] / eager[0]:.0%} of the GM bytes, "
                 f"{remat[1] / eager[1]:.0%} of the time")


def main(argv=None) -> str:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--write-readme", action="store_true")
    a = p.parse_args(argv)
    lines: list = []
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message="inductor:")
        part1_2(lines)
        part3(lines)
    text = "\n".join(lines)
    print(text)
    if a.write_readme:
        from _readme import write_figures

        write_figures("bench_npu.py", text)
    return text


if __name__ == "__main__":
    main()
