"""Programs from PyTorch's Inductor test suite, and how to run them under both systems.

``torch_suite_pointwise.py`` and ``torch_suite_reductions.py`` hold programs modelled on the
``CommonTemplate`` tests of PyTorch's ``test/inductor/test_torchinductor.py``: each is named
after the test it comes from (``test_sum2``; ``test_softmax[bw]`` is the same program with its
backward), written once over a namespace ``L`` — ``minitorch_compile`` or ``torch`` — and
declares its inputs (``randn(8, 8)``, ``randint(0, 4, 8)``, ...) as numpy arrays, so both systems
see the same numbers.  A program returns a tuple of tensors, as the torch tests' functions do.

``run`` runs one program with one system, compiled or not: its outputs and, for a program with
``grad`` inputs, the gradients of ``sum(out.sum())`` with respect to them; with ``counts`` it
also reports the generated kernels of the forward graph and of forward + backward (metrics of
``mtc.inductor`` or ``torch._inductor``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np


@dataclass
class Program:
    name: str  # the torch test it comes from, e.g. "test_sum2" or "test_softmax[bw]"
    build: Callable  # L -> fn(*inputs) -> tuple of tensors
    inputs: tuple  # input specs: rng -> numpy array or Python scalar
    grad: tuple = ()  # indices of the inputs that require grad (a backward program)
    tol: float = 1e-4  # rtol = atol for float32 values
    notes: str = ""


PROGRAMS: list = []


def program(name: str, *inputs, grad=(), tol=1e-4, notes=""):
    def register(build):
        PROGRAMS.append(Program(name, build, inputs, tuple(grad), tol, notes))
        return build
    return register


# --------------------------------------------------------------------------- input specs


def randn(*shape, dtype="float32", scale=1.0, shift=0.0):
    return lambda rng: (rng.standard_normal(shape) * scale + shift).astype(dtype)


def rand(*shape, dtype="float32"):
    return lambda rng: rng.random(shape).astype(dtype)


def randint(low, high, *shape, dtype="int64"):
    return lambda rng: rng.integers(low, high, shape).astype(dtype)


def boolean(*shape):
    return lambda rng: rng.integers(0, 2, shape).astype(bool)


def array(values, dtype="float32"):
    return lambda rng: np.array(values, dtype=dtype)


def scalar(value):
    return lambda rng: value


def make_inputs(prog: Program, seed: int = 0) -> list:
    rng = np.random.default_rng(seed)
    return [spec(rng) for spec in prog.inputs]


# --------------------------------------------------------------------------- running


@dataclass
class Result:
    outputs: list  # numpy arrays (or Python scalars)
    grads: list = field(default_factory=list)  # numpy array or None per grad input
    inputs_after: list = field(default_factory=list)  # the inputs after the call (mutations)
    fw_kernels: int | None = None
    all_kernels: int | None = None
    # torch only: its generated C++ kernel functions (``cpp_fused_*``; its metric counts each
    # loop nest inside one, so a layer norm is 1 function and 8 "kernels")
    fw_functions: int | None = None
    all_functions: int | None = None


def _flatten(out) -> list:
    if isinstance(out, (tuple, list)):
        return [y for x in out for y in _flatten(x)]
    return [out]


def run(L, prog: Program, arrays: list, compiled: bool, counts: bool = False) -> Result:
    """Run ``prog`` with the system ``L`` (``minitorch_compile`` or ``torch``)."""
    is_torch = L.__name__ == "torch"
    tensors = []
    for k, a in enumerate(arrays):
        if isinstance(a, np.ndarray):
            t = L.from_numpy(a.copy()) if is_torch else L.tensor(a.copy())
            tensors.append(t.requires_grad_(True) if k in prog.grad else t)
        else:
            tensors.append(a)
    fn = prog.build(L)
    if compiled:
        fn = L.compile(fn)
    codes: list = []
    if counts:
        metrics, graphs, start = _metrics(L)
        if is_torch:
            fn = _saving_torch_code(fn, codes)
    out = _flatten(fn(*tensors))
    res = Result([])
    if counts:
        if is_torch:
            res.fw_kernels = metrics.generated_kernel_count
            res.fw_functions = _functions(codes)
        else:  # AOT compiles our forward and backward graphs together, at the first call
            res.fw_kernels = sum(len(g.kernels) for g in graphs[start:]
                                 if getattr(g, "kind", "forward") == "forward")
    if prog.grad:
        loss = sum(o.float().sum() for o in out if isinstance(o, L.Tensor) and o.requires_grad)
        _saving_torch_code(loss.backward, codes)() if counts and is_torch else loss.backward()
        res.grads = [None if tensors[k].grad is None else tensors[k].grad.numpy().copy()
                     for k in prog.grad]
    if counts:
        res.all_kernels = metrics.generated_kernel_count
        res.all_functions = _functions(codes) if is_torch else None
    res.outputs = [o.detach().numpy().copy() if isinstance(o, L.Tensor) else o for o in out]
    res.inputs_after = [t.detach().numpy().copy() for t in tensors if isinstance(t, L.Tensor)]
    return res


def _saving_torch_code(fn, codes: list):
    """``fn`` with the output code torch's Inductor generates meanwhile appended to ``codes``
    (as ``torch._inductor.utils.run_and_get_code``)."""
    from unittest import mock

    from torch._inductor.graph import GraphLowering

    def run(*args):
        with mock.patch.object(GraphLowering, "save_output_code", codes.append):
            return fn(*args)
    return run


def _functions(codes: list) -> int:
    return sum(code.count("async_compile.cpp_pybinding(") for code in codes)


def _metrics(L):
    if L.__name__ == "torch":
        import torch._inductor.metrics as metrics

        L._dynamo.reset()
        metrics.reset()
        return metrics, [], 0
    from minitorch_compile import inductor
    from minitorch_compile.inductor import metrics

    L.dynamo.reset()
    metrics.reset()
    return metrics, inductor.compiled_graphs, len(inductor.compiled_graphs)


def assert_same(got: Result, want: Result, prog: Program, what: str) -> None:
    """Values, dtypes and shapes of the outputs and the gradients."""
    assert len(got.outputs) == len(want.outputs), (prog.name, what)
    pairs = list(zip(got.outputs, want.outputs)) + list(zip(got.grads, want.grads)) + \
        list(zip(got.inputs_after, want.inputs_after))
    for k, (g, w) in enumerate(pairs):
        where = f"{prog.name}: {what}, output {k}"
        if w is None or g is None:
            assert g is None and w is None, where
            continue
        g, w = np.asarray(g), np.asarray(w)
        assert g.shape == w.shape, (where, g.shape, w.shape)
        assert g.dtype == w.dtype, (where, g.dtype, w.dtype)
        if g.dtype.kind == "f":
            tol = prog.tol if g.dtype.itemsize <= 4 else 1e-9
            np.testing.assert_allclose(g, w, rtol=tol, atol=tol, equal_nan=True,
                                       err_msg=where)
        else:
            np.testing.assert_array_equal(g, w, err_msg=where)


# ------------------------------------------------------------------ recording torch's counts


def all_programs() -> list:
    from . import (  # noqa: F401
        torch_suite_lowerings,
        torch_suite_more,
        torch_suite_pointwise,
        torch_suite_reductions,
    )
    from .torch_suite import PROGRAMS as registered  # this module even when run as __main__

    return list(registered)


def torch_setup():
    """Import torch for a comparison, configured so its counts are per graph: AOTAutograd's
    cache would load (and count) the backward's kernels at the forward call."""
    import torch
    import torch._functorch.config
    import torch._inductor.config

    torch._functorch.config.enable_autograd_cache = False
    torch._inductor.config.fx_graph_cache = False  # a cache hit would not show its code
    return torch


def record(path: str) -> None:
    """Write ``torch_suite_counts.py``: torch's kernel counts of every program (run with
    ``python -m tests.torch_suite --record``; needs torch 2.13)."""
    torch = torch_setup()
    lines = ['"""torch 2.13 CPU Inductor\'s generated kernels per program of the torch suite:',
             "(forward, forward + backward) by ``generated_kernel_count``, then the same in C++",
             "kernel functions (``cpp_fused_*``).  Written by ``python -m tests.torch_suite "
             "--record``;", 'checked against torch by ``test_inductor_torch_suite.py``."""', "",
             f"TORCH_VERSION = {torch.__version__.split('+')[0]!r}", "", "TORCH_KERNELS = {"]
    for prog in all_programs():
        res = run(torch, prog, make_inputs(prog), compiled=True, counts=True)
        lines.append(f"    {prog.name!r}: ({res.fw_kernels}, {res.all_kernels}, "
                     f"{res.fw_functions}, {res.all_functions}),")
        print(prog.name, res.fw_kernels, res.all_kernels, res.fw_functions, res.all_functions,
              flush=True)
    lines.append("}")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    import os
    import sys

    if "--record" in sys.argv:
        record(os.path.join(os.path.dirname(__file__), "torch_suite_counts.py"))
