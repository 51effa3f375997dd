"""Symbolic scalars in Dynamo (``dynamo/symbolic_scalars.py``): ``.item()`` kept in the graph
with ``capture_scalar_outputs``, and automatic dynamic for float arguments.

Every program is written once against ``lib`` and called on a list of argument sets, compiled
with a counting backend, under ``mtc`` and (when installed) ``torch`` 2.13.  Each call must
equal eager mode; the number of compiled frames and explain()'s graphs and breaks (on the
first argument set) are asserted — the numbers written here are torch 2.13's, and the test
against torch checks them again.
"""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

import minitorch_compile as mtc

from .dynamo_utils import CountingBackend

try:
    import torch
except ImportError:  # the comparison with torch is optional
    torch = None


def _xs(lib, *scales):
    return [(lib.tensor([1.0, 2.0, 3.0]) * s,) for s in scales]


# name: (source of f, config, args(lib) -> list of argument tuples, frames, graphs, breaks)
PROGRAMS = {
    # ---- .item() with capture_scalar_outputs on: an unbacked symbol in the graph
    "item_times_tensor": ("""
        def f(x):
            s = x.sum().item()
            return x * s
        """, {"capture_scalar_outputs": True}, lambda lib: _xs(lib, 1, -2, 0.5), 1, 1, 0),
    "item_arithmetic": ("""
        def f(x):
            s = x.sum().item()
            t = s * 2 + 1
            return x + t / 3
        """, {"capture_scalar_outputs": True}, lambda lib: _xs(lib, 1, -2), 1, 1, 0),
    "item_int": ("""
        def f(x):
            n = x.sum().int().item()
            return x * n - n // 4
        """, {"capture_scalar_outputs": True}, lambda lib: _xs(lib, 1, 3), 1, 1, 0),
    "item_into_full": ("""
        def f(x):
            v = x.max().item()
            return lib.full((3,), v) + x
        """, {"capture_scalar_outputs": True}, lambda lib: _xs(lib, 1, -1), 1, 1, 0),
    "item_returned": ("""
        def f(x):
            return x.sum().item()
        """, {"capture_scalar_outputs": True}, lambda lib: _xs(lib, 1, 2), 1, 1, 0),
    "item_branch_breaks": ("""
        def f(x):
            s = x.sum().item()
            if s > 0:
                return x + 1
            return x - 1
        """, {"capture_scalar_outputs": True}, lambda lib: _xs(lib, 1, -1, 2), 3, 2, 1),
    "item_two_values": ("""
        def f(x, y):
            a = x.sum().item()
            b = y.mean().item()
            return x * a + y * b - a * b
        """, {"capture_scalar_outputs": True},
        lambda lib: [(lib.ones(3), lib.ones(3) * 2), (lib.ones(3) * 3, lib.ones(3))], 1, 1, 0),
    "item_then_print_breaks": ("""
        def f(x):
            s = x.sum().item()
            print("sum is", s)
            return x * s
        """, {"capture_scalar_outputs": True}, lambda lib: _xs(lib, 1, 2), 3, 2, 1),
    "tolist_breaks": ("""
        def f(x):
            a, b, c = x.tolist()
            return x * a + b
        """, {"capture_scalar_outputs": True}, lambda lib: _xs(lib, 1, 2), 2, 1, 0),
    # ---- .item() with capture_scalar_outputs off (the default): a graph break
    "item_times_tensor_off": ("""
        def f(x):
            s = x.sum().item()
            return x * s
        """, {}, lambda lib: _xs(lib, 1, -2, 0.5), 3, 2, 1),
    "item_branch_off": ("""
        def f(x):
            s = x.sum().item()
            if s > 0:
                return x + 1
            return x - 1
        """, {}, lambda lib: _xs(lib, 1, -1, 2), 4, 2, 1),
    # ---- float arguments: automatic dynamic for floats
    "lr_decay": ("""
        def f(x, lr):
            return x - lr * x.cos()
        """, {}, lambda lib: [(lib.ones(3), 0.1 * 0.9 ** i) for i in range(10)], 2, 1, 0),
    "float_arithmetic_returned": ("""
        def f(x, a):
            b = a * 2 + 1
            return x * b, b
        """, {}, lambda lib: [(lib.ones(3), 0.5), (lib.ones(3), 1.5), (lib.ones(3), 2.5)],
        2, 1, 0),
    "float_branch_guarded": ("""
        def f(x, a):
            if a > 1.0:
                return x * a
            return x - a
        """, {}, lambda lib: [(lib.ones(3), a) for a in (0.5, 1.5, 2.5, 0.25, 3.0)], 3, 1, 0),
    "float_then_int": ("""
        def f(x, lr):
            return x - lr * x
        """, {}, lambda lib: [(lib.ones(3), 0.1), (lib.ones(3), 0.2), (lib.ones(3), 3),
                              (lib.ones(3), 0.4)], 3, 1, 0),
    "float_unchanged": ("""
        def f(x, scale):
            return x * scale
        """, {}, lambda lib: [(lib.ones(3), 0.5)] * 4, 1, 1, 0),
    "float_momentum_update": ("""
        def f(p, g, buf, lr, momentum):
            buf = buf * momentum + g
            return p - lr * buf, buf
        """, {}, lambda lib: [(lib.ones(3), lib.ones(3) * 0.1, lib.zeros(3), 0.1 / (i + 1), 0.9)
                              for i in range(6)], 2, 1, 0),
    "float_int_tensor": ("""
        def f(x, a):
            return x * a
        """, {}, lambda lib: [(lib.arange(4), 0.5), (lib.arange(4), 1.25)], 2, 1, 0),
    "cosine_schedule_of_a_float": ("""
        import math
        def f(x, lr):
            return x - lr * (1 + math.cos(math.pi * lr)) / 2 * x
        """, {}, lambda lib: [(lib.ones(2), 0.1 * i) for i in range(1, 6)], 2, 1, 0),
    "cosine_schedule_of_an_int_step": ("""
        import math
        def f(x, step):
            lr = 0.1 * (1 + math.cos(math.pi * step / 10)) / 2
            return x * lr + math.sqrt(step)
        """, {}, lambda lib: [(lib.ones(2), i) for i in range(1, 7)], 2, 1, 0),
    "size_times_float": ("""
        def f(x):
            return x * (x.shape[0] * 0.5) - x.shape[0] / 4
        """, {}, lambda lib: [(lib.ones(n),) for n in (3, 4, 5, 6)], 2, 1, 0),
    "float_static_when_dynamic_false": ("""
        def f(x, a):
            return x * a
        """, {"automatic_dynamic_shapes": False},
        lambda lib: [(lib.ones(2), 0.5 + i) for i in range(4)], 4, 1, 0),
}


def _plain(v):
    if isinstance(v, (tuple, list)):
        return [_plain(i) for i in v]
    if hasattr(v, "detach"):
        return np.asarray(v.detach().numpy(), dtype=np.float64)
    return v


def _same(a, b) -> bool:
    a, b = _plain(a), _plain(b)
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(map(_same, a, b))
    if isinstance(a, np.ndarray):
        return isinstance(b, np.ndarray) and a.shape == b.shape and np.allclose(a, b)
    return type(a) is type(b) and np.isclose(a, b)


def _run(name, lib, backend=None):
    """(each compiled output equals eager, frames compiled, explain graphs, explain breaks)."""
    src, cfg, make_args = PROGRAMS[name][:3]
    ns = {"lib": lib, "__name__": f"sym_{name}"}
    exec(textwrap.dedent(src), ns)
    f = ns["f"]
    dynamo = lib._dynamo
    dynamo.reset()
    counter = CountingBackend()
    with dynamo.config.patch(**cfg):
        cf = (lib.compile(f, backend=backend or counter) if lib is mtc else
              torch.compile(f, backend=backend or counter))
        same = [_same(cf(*a), f(*a)) for a in make_args(lib)]
        dynamo.reset()
        ex = dynamo.explain(f)(*make_args(lib)[0])
    return same, counter.frame_count, ex.graph_count, ex.graph_break_count


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_counts_and_values(name, capsys):
    same, frames, graphs, breaks = _run(name, mtc)
    assert all(same), same
    assert (frames, graphs, breaks) == PROGRAMS[name][3:]


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_backends_take_symbolic_scalars(name, backend, capsys):
    """aot_eager and inductor get the float input as a 0-d tensor and the captured ``.item()``
    values as tensors (``aot/scalar_inputs.py``): same values as eager, nothing specialised."""
    import warnings

    from minitorch_compile.dynamo.exc import CompilerFallbackWarning

    with warnings.catch_warnings():
        warnings.simplefilter("error", CompilerFallbackWarning)  # compiled, not run eagerly
        same, *_ = _run(name, mtc, backend=backend)
    assert all(same), same


@pytest.mark.parametrize("backend", ["eager", "aot_eager", "inductor"])
def test_item_carries_no_gradient(backend):
    """``x * x.sum().item()``: the number is a constant to autograd, in eager and compiled."""
    def f(x, lr):
        return (x * x.sum().item() - lr * x).sum()

    grads = []
    for fn in (f, mtc.compile(f, backend=backend)):
        for lr in (0.5, 0.25, 0.125):
            x = mtc.tensor([1.0, 2.0, 3.0], requires_grad=True)
            with mtc._dynamo.config.patch(capture_scalar_outputs=True):
                fn(x, lr).backward()
            grads.append(x.grad.numpy())
    for got, want in zip(grads[3:], grads[:3]):
        assert np.allclose(got, want)


@pytest.mark.torch
@pytest.mark.skipif(torch is None, reason="torch not installed")
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_same_counts_as_torch(name, capsys):
    ours = _run(name, mtc)
    theirs = _run(name, torch)
    assert all(theirs[0])
    assert ours[1:] == theirs[1:]


def test_item_graph_is_torchs():
    """The captured graph: ``item`` gives ``Sym(zuf0)``, arithmetic on it is traced."""
    def f(x):
        s = x.sum().item()
        return x + (s * 2 + 1)

    cnt = CountingBackend()
    with mtc._dynamo.config.patch(capture_scalar_outputs=True):
        mtc.compile(f, backend=cnt)(mtc.ones(3))
    code = cnt.graphs[0].print_readable(print_output=False)
    assert 'item: "Sym(zuf0)" = sum_1.item()' in code, code
    assert 'mul: "Sym(' in code and "= item * 2" in code, code


def test_float_input_graph_and_guards():
    """The second value of a float makes it a 0-d float64 input read with ``item()``; the
    guards check its type, that it is not NaN, and every decision taken on it."""
    from minitorch_compile.dynamo.eval_frame import cache_entries

    def f(x, a):
        if a > 1.0:
            return x * a
        return x - a

    cnt = CountingBackend()
    cf = mtc.compile(f, backend=cnt)
    cf(mtc.ones(2), 0.5)
    cf(mtc.ones(2), 1.5)
    cf(mtc.ones(2), 2.5)
    assert cnt.frame_count == 2
    code = cnt.graphs[1].print_readable(print_output=False)
    assert 'l_a_: "f64[]"' in code and 'item: "Sym(zf0)" = l_a_.item()' in code, code
    assert cnt.example_inputs[1][0].dtype is mtc.float64  # the float, as a 0-d tensor
    src = cache_entries(f)[-1].guard.src
    assert "L['a'] == L['a']" in src and "L['a'] > 1.0" in src, src
    nan = cf(mtc.ones(2), float("nan"))  # NaN fails the guard: eager's answer
    assert np.isnan(nan.numpy()).all()


def test_unbacked_int_as_a_size_breaks_not_crashes():
    def f(x):
        n = x.sum().int().item()
        return mtc.zeros(n) + 1

    with mtc._dynamo.config.patch(capture_scalar_outputs=True):
        out = mtc.compile(f, backend="eager")(mtc.ones(3))
    assert np.allclose(out.numpy(), np.ones(3))


def test_input_deque_with_maxlen_is_never_wrong():
    """A deque from outside with a ``maxlen``: torch 2.13 traces its appends without dropping
    (``d[0]`` after two appends to a full deque is the old item there — a wrong answer); mtc
    breaks on the deque's methods and gets eager's answer."""
    import collections

    def f(x, d):
        d.append(x)
        d.append(x + 1)
        return d[0] + 1

    d1, d2 = (collections.deque([mtc.zeros(2)], maxlen=2) for _ in range(2))
    got = mtc.compile(f, backend="eager")(mtc.ones(2), d1)
    want = f(mtc.ones(2), d2)
    assert np.allclose(got.numpy(), want.numpy()) and len(d1) == len(d2) == 2
