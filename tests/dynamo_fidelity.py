"""Programs from PyTorch's own Dynamo test suite, run under both systems and compared.

Each program is a ``Program``: the source of a function ``f`` written once over a namespace
(``lib`` is ``minitorch_compile`` or ``torch``; ``math``, ``collections``, ``dataclasses``,
``itertools``, ``functools``, ``operator`` and ``np`` (numpy) are there too), a maker of the
calls to run (``calls(lib) -> [args, ...]``, the same values under both libraries) and the
test of ``pytorch/test/dynamo`` it is ported from (``cite``: a test name, or
``after <file>::<name>`` for a program written in the manner of that file's tests whose name
was not checked).

``run`` calls ``f`` on every call, eagerly or compiled with a counting backend, and returns
everything a difference could show in: the values returned (tensors as numpy arrays,
containers by type), what was printed, the module-level ``log`` list the program may append to
(a side effect), and the counts — graphs handed to the backend over all the calls, the ops in
each of those graphs, and ``explain``'s graph count and graph-break count for the first call.

The tests (``tests/test_dynamo_fidelity_*.py``) check compiled == eager for every program on
every Python version, and the counts against ``TORCH_COUNTS`` — torch 2.13's, measured by
``python -m tests.dynamo_fidelity`` and checked again whenever torch is installed.
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import functools
import io
import itertools
import math
import operator
import sys
import textwrap
import types
from dataclasses import dataclass, field
from typing import Callable

import numpy as np


@dataclass
class Program:
    """One ported program: ``source`` defines ``f``; ``calls(lib)`` lists its argument tuples."""

    source: str
    calls: Callable
    cite: str
    ops: bool = True   # compare the ops per graph (False where naming makes them differ)
    prelude: str = ""  # module-level definitions the program reads (classes, globals)
    eager_ok: bool = False  # mtc may run (part of) it eagerly: an expected difference


@dataclass
class Counts:
    """What the compiler decided: graphs over all calls, ops per graph, explain's counts."""

    graphs: int
    ops: tuple
    explain_graphs: int
    explain_breaks: int

    def as_tuple(self, with_ops: bool = True) -> tuple:
        return (self.graphs, self.explain_graphs, self.explain_breaks) + \
            ((self.ops,) if with_ops else ())


class OpCounter:
    """A backend recording the number of call nodes of each graph it is given."""

    def __init__(self):
        self.ops: list[int] = []

    def __call__(self, gm, example_inputs):
        self.ops.append(sum(1 for n in gm.graph.nodes
                            if n.op in ("call_function", "call_method", "call_module")))
        return gm.forward


_modules = itertools.count()


def namespace(lib, prog: Program) -> dict:
    """A fresh module namespace holding ``f`` (and the prelude) for ``lib`` — a registered
    module, as ``dataclass`` needs its class's module in ``sys.modules``."""
    module = types.ModuleType(f"fidelity_program_{next(_modules)}")
    sys.modules[module.__name__] = module
    ns = module.__dict__
    ns.update({"lib": lib, "math": math, "collections": collections, "dataclasses": dataclasses,
                "dataclass": dataclass, "field": field, "itertools": itertools,
                "functools": functools, "operator": operator, "np": np, "log": []})
    src = textwrap.dedent(prog.prelude) + "\n" + textwrap.dedent(prog.source)
    exec(compile(src, "<fidelity program>", "exec"), ns)
    return ns


def plain(v, lib):
    """A value with tensors turned into numpy arrays and containers tagged by type name."""
    if isinstance(v, lib.Tensor):
        return ("tensor", str(v.dtype).split(".")[-1], v.detach().numpy().copy())
    if isinstance(v, np.ndarray):  # an ndarray out of a compiled frame: a real one, dtype too
        return ("ndarray", str(v.dtype), v.copy())
    if isinstance(v, np.generic):  # a numpy scalar (a.sum()): not a 0-d array
        return ("numpy scalar", type(v).__name__, v.item())
    if isinstance(v, np.dtype):
        return ("numpy dtype", str(v))
    if isinstance(v, (list, tuple)):
        return (type(v).__name__, [plain(i, lib) for i in v])
    if isinstance(v, dict):
        return (type(v).__name__, [(plain(k, lib), plain(i, lib)) for k, i in v.items()])
    if isinstance(v, (set, frozenset)):
        return (type(v).__name__, sorted(repr(i) for i in v))
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        return (type(v).__name__, [plain(getattr(v, f.name), lib)
                                   for f in dataclasses.fields(v)])
    if isinstance(v, (int, float, str, bool, type(None))):
        return v
    return type(v).__name__


def run(lib, prog: Program, compile_fn=None) -> dict:
    """Run every call of ``prog`` (compiled with a counting backend if ``compile_fn``)."""
    ns = namespace(lib, prog)
    fn, counter = ns["f"], OpCounter()
    if compile_fn is not None:
        fn = compile_fn(fn, backend=counter)
    out, text = [], io.StringIO()
    with contextlib.redirect_stdout(text):
        for args in prog.calls(lib):
            out.append(plain(fn(*args), lib))
    result = {"out": out, "printed": text.getvalue(), "log": plain(ns["log"], lib)}
    if compile_fn is not None:
        ns = namespace(lib, prog)
        with contextlib.redirect_stdout(io.StringIO()):
            ex = lib._dynamo.explain(ns["f"])(*prog.calls(lib)[0])
        result["counts"] = Counts(len(counter.ops), tuple(counter.ops), ex.graph_count,
                                  ex.graph_break_count)
    return result


def assert_same(a, b, where="out", rtol=1e-5, atol=1e-6):
    """Equal structure and constants, close arrays."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        assert isinstance(a, np.ndarray) and isinstance(b, np.ndarray), where
        assert a.shape == b.shape, f"{where}: shape {a.shape} != {b.shape}"
        np.testing.assert_allclose(a.astype(np.float64), b.astype(np.float64), rtol=rtol,
                                   atol=atol, err_msg=where)
    elif isinstance(a, (list, tuple)):
        assert isinstance(b, (list, tuple)) and len(a) == len(b), f"{where}: {a!r} != {b!r}"
        for i, (p, q) in enumerate(zip(a, b)):
            assert_same(p, q, f"{where}[{i}]", rtol, atol)
    elif isinstance(a, float) and isinstance(b, float):
        assert math.isclose(a, b, rel_tol=rtol, abs_tol=atol) or a == b, f"{where}: {a} != {b}"
    else:
        assert a == b, f"{where}: {a!r} != {b!r}"


def compare(a: dict, b: dict, printed: bool = True) -> None:
    for key in ("out", "log") + (("printed",) if printed else ()):
        assert_same(a[key], b[key], key)


def _mtc_compile(fn, backend):
    import minitorch_compile as mtc
    return mtc.compile(fn, backend=backend)


def _torch_compile(fn, backend):
    import torch
    return torch.compile(fn, backend=backend)


def mtc_vs_eager(prog: Program) -> Counts:
    """compiled == eager under mtc; returns mtc's counts."""
    import minitorch_compile as mtc
    mtc.dynamo.reset()
    compiled = run(mtc, prog, _mtc_compile)
    mtc.dynamo.reset()
    eager = run(mtc, prog)
    compare(compiled, eager)
    mtc.dynamo.reset()
    return compiled["counts"]


def torch_counts(prog: Program, check_values_against_mtc: bool = True) -> Counts:
    """torch 2.13's counts for ``prog`` (and its values equal mtc's eager values)."""
    import torch

    import minitorch_compile as mtc
    torch._dynamo.reset()
    limit = sys.getrecursionlimit()  # torch 2.13 recurses deeply skipping some frames: deep in
    sys.setrecursionlimit(max(limit, 5000))  # a full pytest run it hit the default limit
    try:
        theirs = run(torch, prog, _torch_compile)
    finally:
        sys.setrecursionlimit(limit)
    torch._dynamo.reset()
    if check_values_against_mtc:
        compare(run(mtc, prog), theirs, printed=False)
    return theirs["counts"]


def measure(programs: dict) -> dict:
    """``{name: torch counts tuple}`` — to write ``TORCH_COUNTS`` tables."""
    return {name: torch_counts(p, False).as_tuple(p.ops) for name, p in programs.items()}


if __name__ == "__main__":  # python -m tests.dynamo_fidelity MODULE [NAME...]: its torch table
    import importlib
    import sys
    mod = importlib.import_module(sys.argv[1])
    chosen = {n: mod.PROGRAMS[n] for n in sys.argv[2:]} or mod.PROGRAMS
    for name, counts in measure(chosen).items():
        print(f"    {name!r}: {counts},")


# ---------------------------------------------------------------- inputs (the same under both)
def ramp(lib, *shape, scale=0.1, shift=-0.3):
    """A float32 tensor ``arange * scale + shift`` of ``shape`` (deterministic, both libraries)."""
    n = math.prod(shape)
    return (lib.arange(n).float() * scale + shift).reshape(*shape)


def two(lib, *shape):
    """Calls with two different tensors ``a``, ``b`` of ``shape`` (one call)."""
    return [(ramp(lib, *shape), ramp(lib, *shape, scale=-0.05, shift=0.7))]


def one(lib, *shape):
    return [(ramp(lib, *shape),)]


def assert_mtc_counts(prog: Program, name: str, torch_table: dict, differs: dict) -> None:
    """compiled == eager (inside ``mtc_vs_eager``), and mtc's counts are torch's from the
    table — or the ``differs`` entry, whose reason says why not."""
    expected = differs[name][0] if name in differs else torch_table[name]
    assert mtc_vs_eager(prog).as_tuple(prog.ops) == expected


def assert_torch_counts(prog: Program, name: str, torch_table: dict, module: str = "") -> None:
    """The recorded table is what torch measures now (skips without torch)."""
    import pytest

    pytest.importorskip("torch")
    try:
        counts = torch_counts(prog).as_tuple(prog.ops)
    except Exception as e:
        # torch 2.13 recurses without end skipping some frames after some earlier tests of a
        # long session (an InternalTorchDynamoError: RecursionError); it does not in a fresh
        # interpreter, where the program is measured again
        if "RecursionError" not in str(e) or not module:
            raise
        counts = _torch_counts_in_a_fresh_interpreter(module, name)
    assert counts == torch_table[name]


def _torch_counts_in_a_fresh_interpreter(module: str, name: str) -> tuple:
    import ast
    import os
    import subprocess

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    proc = subprocess.run([sys.executable, "-m", "tests.dynamo_fidelity", module, name],
                          cwd=root, capture_output=True, text=True, timeout=600)
    line = [ln for ln in proc.stdout.splitlines() if ln.strip().startswith(repr(name))]
    assert line, proc.stdout[-2000:] + proc.stderr[-2000:]
    return ast.literal_eval(line[0].split(":", 1)[1].strip().rstrip(","))


def fidelity_tests(programs: dict, torch_table: dict, differs: dict | None = None,
                   torch_raises: dict | None = None, torch_wrong: dict | None = None):
    """The two tests every fidelity file runs over its programs, for its module to bind:
    compiled == eager with torch's counts (or ``differs``'), and the table is torch's now.
    ``torch_raises``: programs torch 2.13 gets *wrong* (``{name: exception type name}``, a
    torch bug: mtc's counts are then in ``differs``); the second test checks torch still
    raises, so a fixed torch shows up.  ``torch_wrong``: programs whose compiled values torch
    2.13 gets wrong without raising (``{name: what}``); the second test checks its values still
    differ from eager's, and its counts are the table's."""
    import pytest

    differs = {} if differs is None else differs
    torch_raises = {} if torch_raises is None else torch_raises
    torch_wrong = {} if torch_wrong is None else torch_wrong
    module = sys._getframe(1).f_globals.get("__name__", "")  # the fidelity file binding them

    @pytest.mark.parametrize("name", sorted(programs))
    def test_compiled_equals_eager_with_torchs_counts(name):
        assert_mtc_counts(programs[name], name, torch_table, differs)

    @pytest.mark.torch
    @pytest.mark.parametrize("name", sorted(programs))
    def test_torch_counts_are_the_table(name):
        if name in torch_raises:
            pytest.importorskip("torch")
            with pytest.raises(Exception) as info:
                torch_counts(programs[name], check_values_against_mtc=False)
            assert type(info.value).__name__ == torch_raises[name]
            return
        if name in torch_wrong:
            pytest.importorskip("torch")
            with pytest.raises(AssertionError):  # its compiled values are not eager's
                torch_counts(programs[name])
            assert torch_counts(programs[name], False).as_tuple(programs[name].ops) == \
                torch_table[name]
            return
        assert_torch_counts(programs[name], name, torch_table, module)

    return test_compiled_equals_eager_with_torchs_counts, test_torch_counts_are_the_table
