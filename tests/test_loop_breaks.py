"""Graph breaks at calls inside ``for``/``while`` loops, decided as torch 2.13 decides them.

torch skips a frame that breaks inside a loop (``maybe_has_backedge`` in
``torch/_dynamo/symbolic_convert.py``: a backward jump before the next ``return`` after the
breaking instruction — ``raise_loop_graph_break``), but its frame-evaluation hook stays on, so
every user function, module ``forward`` and optimizer method the skipped frame calls is compiled
as a frame of its own (``dynamo/eager_frame.py`` does the hook's job in mtc).  Each program is
run compiled and eagerly (values and printed text equal) and its counts — explain's
graph_count / graph_break_count on the first call, graphs compiled over ``CALLS`` calls — are
asserted, equal to torch 2.13's (checked again when torch is installed).
"""

from __future__ import annotations

import contextlib
import io
import textwrap

import numpy as np
import pytest

import minitorch_compile as mtc

from .dynamo_utils import CountingBackend

try:
    import torch
except ImportError:  # the comparison with torch is optional
    torch = None

CALLS = 3

PRELUDE = """
class Net(lib.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = lib.nn.Linear(3, 3)
    def forward(self, x):
        return lib.relu(self.fc(x))

def noisy(t):
    u = t * 2
    print("noisy", tuple(u.shape))
    return u + 1

def pure(t):
    return (t * t).sum()
"""

# name -> (source of f(x, w), torch 2.13's (graph_count, graph_break_count, graphs compiled))
PROGRAMS = {
    "print_in_for": ("""
def f(x, w):
    for i in range(3):
        x = x * w
        print("step", i)
    return x
""", (0, -1, 0)),
    "item_in_for_calls_pure": ("""
def f(x, w):
    total = 0.0
    for i in range(2):
        total += pure(x * w).item()
    return x * total
""", (1, 0, 1)),
    "backward_in_for": ("""
def f(x, w):
    for i in range(2):
        loss = pure(x * w * (i + 1))
        loss.backward()
    return w.grad * 1
""", (1, 0, 1)),
    "user_fn_that_breaks_in_for": ("""
def f(x, w):
    for i in range(2):
        x = noisy(x) * w
    return x
""", (4, 3, 4)),
    "module_in_while_with_print": ("""
def f(x, w):
    i = 0
    while i < 2:
        x = model(x)
        print("iteration", i)
        i += 1
    return x
""", (2, 1, 2)),
    "nested_loops_print": ("""
def f(x, w):
    for i in range(2):
        for j in range(2):
            x = model(x) + w
            print(i, j)
    return x
""", (2, 1, 2)),
    "break_in_last_iteration": ("""
def f(x, w):
    for i in range(3):
        x = pure(x * w) + x
        if i == 2:
            print("last")
    return x
""", (1, 0, 1)),
    "break_statement_after_print": ("""
def f(x, w):
    for i in range(5):
        x = model(x)
        print("at", i)
        if i == 1:
            break
    return x * w
""", (2, 1, 2)),
    "continue_after_print": ("""
def f(x, w):
    acc = x * 0
    for i in range(4):
        print("visit", i)
        if i % 2:
            continue
        acc = acc + noisy(x) * w
    return acc
""", (2, 1, 2)),
}


def _make(lib, name):
    ns = {"lib": lib}
    exec(compile(PRELUDE + textwrap.dedent(PROGRAMS[name][0]), f"<loop:{name}>", "exec"), ns)
    lib.manual_seed(0)
    ns["model"] = ns["Net"]()
    with lib.no_grad():
        for i, p in enumerate(ns["model"].parameters()):
            p.copy_(lib.ones(*p.shape) * (0.1 * (i + 1)))
    x = lib.arange(6).float().reshape(2, 3) * 0.25 - 0.5
    w = (lib.ones(3) * 0.5).requires_grad_()
    return ns, x, w


def _np(v):
    return v.detach().numpy() if hasattr(v, "detach") else v


def _run(lib, name, compile_fn=None, backend=None):
    ns, x, w = _make(lib, name)
    fn = ns["f"] if compile_fn is None else compile_fn(ns["f"], backend=backend)
    out, text = [], io.StringIO()
    with contextlib.redirect_stdout(text):
        for _ in range(CALLS):
            out.append(_np(fn(x, w)))
    return out, text.getvalue()


def _counts(lib, name, compile_fn, counter):
    ns, x, w = _make(lib, name)
    with contextlib.redirect_stdout(io.StringIO()):
        ex = lib._dynamo.explain(ns["f"])(x, w)
    lib._dynamo.reset()
    _run(lib, name, compile_fn, counter)
    return ex.graph_count, ex.graph_break_count, counter.frame_count


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_loop_break_program_compiled_equals_eager_with_torch_counts(name):
    mtc.dynamo.reset()
    eager_out, eager_text = _run(mtc, name)
    mtc.dynamo.reset()
    out, text = _run(mtc, name, mtc.compile, CountingBackend())
    assert text == eager_text
    for a, b in zip(out, eager_out):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)
    mtc.dynamo.reset()
    assert _counts(mtc, name, mtc.compile, CountingBackend()) == PROGRAMS[name][1]


def test_the_skipped_frame_runs_its_original_code_and_says_why():
    mtc.dynamo.reset()
    ns, x, w = _make(mtc, "backward_in_for")
    with contextlib.redirect_stdout(io.StringIO()):
        mtc.compile(ns["f"], backend=CountingBackend())(x, w)
    (entry,) = mtc.dynamo.cache_entries(ns["f"])
    assert entry.is_eager and "inside a loop" in entry.reason
    assert entry.eager_code is not None  # its callees go through the JIT
    (callee,) = mtc.dynamo.cache_entries(ns["pure"])
    assert not callee.is_eager and callee.graph_module is not None


@pytest.mark.torch
@pytest.mark.skipif(torch is None, reason="torch not installed")
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_loop_break_program_as_torch(name):
    import warnings

    from torch._dynamo.testing import CompileCounter

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch._dynamo.reset()
        counts = _counts(torch, name, torch.compile, CompileCounter())
        torch._dynamo.reset()
        t_out, t_text = _run(torch, name)
    assert counts == PROGRAMS[name][1]
    mtc.dynamo.reset()
    out, text = _run(mtc, name, mtc.compile, CountingBackend())
    assert text == t_text
    for a, b in zip(out, t_out):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_a_skipped_frame_still_subscripts_container_modules():
    # 3.11/3.12 load `layers` (after the call's NULL) before subscripting it: a container
    # module is passed through as it is, a called module is compiled
    layers = mtc.nn.ModuleList([mtc.nn.Linear(3, 3), mtc.nn.Linear(3, 3)])
    seq = mtc.nn.Sequential(mtc.nn.Linear(3, 3))

    def f(x):
        for i in range(2):
            x = layers[i](x) + seq[0](x) + seq(x)
            print(i)
        return x

    mtc.dynamo.reset()
    x = mtc.ones(2, 3)
    with contextlib.redirect_stdout(io.StringIO()):
        got = mtc.compile(f, backend=CountingBackend())(x)
        want = f(x)
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-6)


def test_a_rewrite_the_checker_rejects_runs_the_original_code(monkeypatch):
    """The rewritten code is checked (``bytecode_analysis.check_code``) before it can run; a
    rejected rewrite leaves ``eager_code`` empty and the frame runs its original code."""
    from minitorch_compile.dynamo import eager_frame
    from minitorch_compile.dynamo.bytecode_analysis import InvalidBytecode

    def reject(code):
        raise InvalidBytecode("rejected by the test")

    monkeypatch.setattr(eager_frame, "check_code", reject)
    mtc.dynamo.reset()
    ns, x, w = _make(mtc, "backward_in_for")
    eager_ns, ex, ew = _make(mtc, "backward_in_for")
    with contextlib.redirect_stdout(io.StringIO()):
        got = mtc.compile(ns["f"], backend=CountingBackend())(x, w)
        want = eager_ns["f"](ex, ew)
    (entry,) = mtc.dynamo.cache_entries(ns["f"])
    assert entry.is_eager and entry.eager_code is None
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy())
