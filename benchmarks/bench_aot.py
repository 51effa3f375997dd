"""AOTAutograd memory: how many bytes each partitioner keeps alive for the backward.

Run: ``python benchmarks/bench_aot.py`` (about 10 s; ``--no-torch`` skips the comparison).

For each program — the tutorial's ``cos(cos(x))``, a tanh-GELU chain, a softmax, a layer norm,
a small attention ``softmax(q @ k^T / sqrt(d)) @ v`` and a 2-layer MLP — the same source is run
through ``mtc.aot.aot_function`` with ``default_partition`` and with
``min_cut_rematerialization_partition``, and the values the forward saves for the backward are
counted (number and bytes, from each saved node's ``meta["val"]``).

Where torch is installed (and networkx, which torch's min-cut partitioner needs), the same
source runs through torch's ``aot_function`` with torch's ``min_cut_rematerialization_partition``
and a forward compiler that records the forward graph's outputs: the values after the first
``num_outputs`` are what torch saves.  Two extra rows run a *hand-written* softmax
(``amax``, ``exp``, ``sum``, ``div``) in both libraries, so both partitioners see the same
primitive ops, and two more use a custom ``autograd.Function`` whose backward reads only the
softmax's output (torch's ``_softmax_backward_data`` formula).

Last, the time of one min-cut partition of a joint graph with at least 10,000 nodes (a long
elementwise chain and a deep residual MLP; only the partitioner call is timed).

Targets printed beside the figures (not asserted — see benchmarks/README.md):
ours <= torch's min-cut on every case; ``cos(cos(x))`` saves exactly one tensor;
min-cut of a 10,000-node joint graph in under 2 s.
"""

from __future__ import annotations

import argparse
import math
import platform
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout
sys.path.insert(0, str(Path(__file__).resolve().parent))  # benchmarks/_readme.py

from _readme import figures_for_readme  # noqa: E402 - benchmarks/_readme.py

import minitorch_compile as mtc  # noqa: E402
from minitorch_compile.aot import (  # noqa: E402
    aot_function,
    default_partition,
    min_cut_rematerialization_partition,
    nop,
)

TARGET_PARTITION_S = 2.0
BIG_GRAPH_NODES = 10_000


# --------------------------------------------------------------------------- the programs
# Each builder takes a library namespace (``mtc`` or ``torch``) and returns the function;
# the function's source is the same for both libraries.


def cos_cos(lib):
    def f(x):
        return lib.cos(lib.cos(x))
    return f


def gelu_tanh(lib):
    def f(x):
        return 0.5 * x * (1 + lib.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))
    return f


def softmax(lib):
    def f(x):
        return lib.nn.functional.softmax(x, dim=-1)
    return f


def layer_norm(lib):
    def f(x, w, b):
        return lib.nn.functional.layer_norm(x, (x.shape[-1],), w, b)
    return f


def attention(lib):
    def f(q, k, v):
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        return lib.nn.functional.softmax(scores, dim=-1) @ v
    return f


def mlp(lib):
    F = lib.nn.functional

    def f(x, w1, b1, w2, b2):
        return F.linear(F.relu(F.linear(x, w1, b1)), w2, b2)
    return f


def _softmax_by_hand(x):
    e = (x - x.amax(-1, keepdim=True).detach()).exp()
    return e / e.sum(-1, keepdim=True)


def softmax_by_hand(lib):
    def f(x):
        return _softmax_by_hand(x)
    return f


def attention_by_hand(lib):
    def f(q, k, v):
        return _softmax_by_hand(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])) @ v
    return f


def output_saving_softmax(lib):
    """Softmax as a custom Function whose backward reads only its output (torch's formula)."""

    class Softmax(lib.autograd.Function):
        @staticmethod
        def forward(x):
            return _softmax_by_hand(x)

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(output)

        @staticmethod
        def backward(ctx, grad):
            (y,) = ctx.saved_tensors
            return y * (grad - (grad * y).sum(-1, keepdim=True))

    return Softmax.apply


def softmax_function(lib):
    softmax_ = output_saving_softmax(lib)

    def f(x):
        return softmax_(x)
    return f


def attention_function(lib):
    softmax_ = output_saving_softmax(lib)

    def f(q, k, v):
        return softmax_(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])) @ v
    return f


# name, builder, input shapes (every input requires grad; float32)
CASES = [
    ("cos(cos(x))", cos_cos, [(64, 64)]),
    ("tanh-GELU", gelu_tanh, [(64, 64)]),
    ("softmax", softmax, [(64, 64)]),
    ("layer norm", layer_norm, [(64, 64), (64,), (64,)]),
    ("attention", attention, [(4, 32, 16)] * 3),
    ("2-layer MLP", mlp, [(32, 64), (128, 64), (128,), (10, 128), (10,)]),
    ("softmax, by hand", softmax_by_hand, [(64, 64)]),
    ("attention, by hand", attention_by_hand, [(4, 32, 16)] * 3),
    ("softmax, Function", softmax_function, [(64, 64)]),
    ("attention, Function", attention_function, [(4, 32, 16)] * 3),
]


def inputs(shapes, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s).astype(np.float32) for s in shapes]


# --------------------------------------------------------------------------- measuring


def ours(builder, shapes, partition_fn) -> tuple[int, int, object]:
    """(number saved, bytes saved, partition) of minitorch_compile's AOTAutograd."""
    compiled = aot_function(builder(mtc), nop, partition_fn=partition_fn)
    args = [mtc.tensor(a, requires_grad=True) for a in inputs(shapes)]
    out = compiled(*args)
    out.sum().backward()
    part = compiled.last_pair.partition
    return len(part.saved_values), part.saved_bytes, part


def torch_available() -> str | None:
    """None if the torch comparison can run, else why not."""
    try:
        import torch  # noqa: F401
    except ImportError:
        return "torch not installed"
    try:
        import networkx  # noqa: F401
    except ImportError:
        return "networkx not installed (torch's min-cut partitioner needs it: pip install networkx)"
    return None


def torch_min_cut(builder, shapes) -> tuple[int, int]:
    """(number saved, bytes saved) of torch's AOTAutograd with its min-cut partitioner."""
    import torch
    from torch._functorch.aot_autograd import aot_function as torch_aot_function
    from torch._functorch.partitioners import (
        min_cut_rematerialization_partition as torch_min_cut_partition,
    )

    fn = builder(torch)
    args = [torch.tensor(a, requires_grad=True) for a in inputs(shapes)]
    num_outputs = 1  # every case returns one tensor
    saved = []

    def fw_compiler(gm, example_inputs):
        outs = gm.graph.find_nodes(op="output")[0].args[0]
        saved.extend(outs[num_outputs:])
        return gm

    def nbytes(node) -> int:
        val = node.meta.get("val")
        if isinstance(val, torch.Tensor):
            return val.numel() * val.element_size()
        meta = node.meta["tensor_meta"]
        return math.prod(meta.shape) * meta.dtype.itemsize

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "compiler ... doesn't take boxed arguments"
        compiled = torch_aot_function(fn, fw_compiler, lambda gm, ex: gm,
                                      partition_fn=torch_min_cut_partition)
        compiled(*args).sum().backward()
    return len(saved), sum(nbytes(n) for n in saved)


# --------------------------------------------------------------------------- big graphs


def elementwise_chain(x):
    for _ in range(910):
        x = (x.sin() * 1.01 + x).tanh()
    return x


def deep_residual_mlp(x, *weights):
    for w in weights:
        x = mtc.nn.functional.gelu(x @ w, approximate="tanh") + x
    return x


def time_big_partition(fn, args) -> tuple[int, float, int]:
    """(joint graph nodes, seconds in min_cut_rematerialization_partition, saved values)."""
    timing = {}

    def timed(joint, joint_inputs, **kwargs):
        timing["nodes"] = len(joint.graph.nodes)
        start = time.perf_counter()
        part = min_cut_rematerialization_partition(joint, joint_inputs, **kwargs)
        timing["seconds"] = time.perf_counter() - start
        timing["saved"] = len(part.saved_values)
        return part

    aot_function(fn, nop, partition_fn=timed)(*args)
    return timing["nodes"], timing["seconds"], timing["saved"]


# --------------------------------------------------------------------------- main


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-torch", action="store_true", help="skip the torch comparison")
    parser.add_argument("--write-readme", action="store_true",
                        help="also write the output into benchmarks/README.md's figures")
    args = parser.parse_args()
    with figures_for_readme("bench_aot.py", args.write_readme):
        report(args)


def report(args) -> None:
    why_not = "skipped (--no-torch)" if args.no_torch else torch_available()
    versions = f"Python {platform.python_version()}, numpy {np.__version__}"
    if why_not is None:
        import torch

        versions += f", torch {torch.__version__}"
    print(f"{platform.system()} {platform.machine()}, {versions}\n")

    print("Bytes saved for backward (float32; count x bytes)")
    header = (f"{'program':<20}{'default (ours)':>17}{'min-cut (ours)':>17}"
              f"{'min-cut (torch)':>18}   target")
    print(header)
    print("-" * (len(header) + 20))
    for name, builder, shapes in CASES:
        n_def, b_def, _ = ours(builder, shapes, default_partition)
        n_mc, b_mc, _ = ours(builder, shapes, min_cut_rematerialization_partition)
        torch_cell, verdict = "-", ""
        if why_not is None:
            n_t, b_t = torch_min_cut(builder, shapes)
            torch_cell = f"{n_t} x {b_t}"
            verdict = "ours <= torch  ok" if b_mc <= b_t else \
                f"ours <= torch  OVER by {b_mc - b_t}"
        if name == "cos(cos(x))":
            verdict = ("1 tensor  ok" if n_mc == 1 else f"1 tensor  OVER ({n_mc})") + \
                (f"; {verdict}" if verdict else "")
        print(f"{name:<20}{f'{n_def} x {b_def}':>17}{f'{n_mc} x {b_mc}':>17}"
              f"{torch_cell:>18}   {verdict}".rstrip())
    if why_not is not None:
        print(f"(torch column: {why_not})")

    print(f"\nMin-cut partition of a joint graph with >= {BIG_GRAPH_NODES:,} nodes "
          "(partitioner call only)")
    big = [
        ("elementwise chain", elementwise_chain, [mtc.randn(16, requires_grad=True)]),
        ("deep residual MLP", deep_residual_mlp,
         [mtc.randn(8, 16, requires_grad=True)] +
         [mtc.randn(16, 16, requires_grad=True) for _ in range(360)]),
    ]
    print(f"{'graph':<20}{'nodes':>8}{'seconds':>10}{'saved':>8}   target")
    for name, fn, fn_args in big:
        nodes, seconds, saved = time_big_partition(fn, fn_args)
        ok = "ok" if seconds < TARGET_PARTITION_S else "OVER"
        print(f"{name:<20}{nodes:>8}{seconds:>10.2f}{saved:>8}   "
              f"< {TARGET_PARTITION_S:.0f} s  {ok}")


if __name__ == "__main__":
    main()
