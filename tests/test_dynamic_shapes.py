"""Dynamic shapes: symbolic sizes, automatic dynamic, and the guards that keep them sound.

1. The tutorial: ``function(inputs)`` (with its ``if x.mean() > 0.5`` graph break) on sizes
   10, 10, 8, 6 — a hit, one recompile to ``[s0]``, then a hit — exactly as torch.compile;
   values and gradients right for every size 2..64 with no further compile.
2. The rules of the ``ShapeEnv``: 0 and 1 stay static (symbols are guarded ``>= 2``), duck
   sizing (equal sizes share a symbol, guarded equal), different sizes get two symbols.
3. Symbolic ints in the graph: ``x.shape[0]`` in Python arithmetic becomes ``size``/``mul``
   nodes feeding ``reshape``, ``view``, ``expand``, ``zeros``; decisions on sizes (``if n > 5``,
   ``range(n)``, ``view(-1, 2)``, matmul's inner dims) are guarded.
4. ``dynamic=True`` / ``dynamic=False`` / ``mark_dynamic``; an ``nn.Linear`` with a dynamic
   batch; the ``aot_eager`` backend on a dynamic graph.
5. ``SymInt`` itself: expressions, hints, facts that need no guard, and regressions.
6. Hypothesis: random programs over sizes, called on random sequences of sizes in 2..64 —
   every call equals eager (values and gradients), never a stale entry.
7. Graph counts against torch.compile on the tutorial's sequence (skipped without torch).
"""

from __future__ import annotations

import linecache

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitorch_compile as mtc
from minitorch_compile.dynamo.symbolic_shapes import ShapeEnv, SymInt

from .dynamo_utils import (
    CountingBackend,
    assert_compiled,
    assert_same,
    clone_input,
    function,
    ops_of,
    run_and_grads,
)


@pytest.fixture(autouse=True)
def _fresh_cache():
    mtc.dynamo.reset()
    yield
    mtc.dynamo.reset()


def tutorial_inputs(n: int) -> dict:
    return {"x": mtc.randn(n, requires_grad=True), "y": mtc.randn(n, requires_grad=True)}


def entries(fn) -> list:
    return mtc.dynamo.cache_entries(fn)


def shape_guards(entry) -> list[str]:
    """The SHAPE_ENV guards of an entry, as the ShapeEnv wrote them (``s0 >= 2``)."""
    return [g.value_repr for g in entry.guard.guard_set.guards if g.kind == "SHAPE_ENV"]


def placeholders(gm) -> str:
    """The graph's ``forward(...)`` line (placeholders with their printed shapes)."""
    return next(line for line in gm.print_readable(print_output=False).splitlines()
                if "def forward" in line)


def assert_compiled_matches_eager(compiled, fn, *args):
    """Values and gradients of ``compiled(*args)`` equal eager's, on separate copies."""
    e_args, c_args = clone_input(list(args)), clone_input(list(args))
    expected, e_grads = run_and_grads(fn, e_args, {})
    actual, c_grads = run_and_grads(compiled, c_args, {})
    assert_same(actual, expected, rtol=1e-5, atol=1e-6)
    assert (e_grads is None) == (c_grads is None)
    for a, e in zip(c_grads or [], e_grads or []):
        assert (a is None) == (e is None)
        if e is not None:
            np.testing.assert_allclose(a, e, rtol=1e-5, atol=1e-6)


# ------------------------------------------------------------------------ 1. the tutorial


def test_tutorial_sizes_10_10_8_6_hit_recompile_once_then_hit():
    cnt = CountingBackend()
    compiled = mtc.compile(function, backend=cnt)
    graphs_after, entries_after = [], []
    for n in (10, 10, 8, 6):
        assert_compiled_matches_eager(compiled, function, tutorial_inputs(n))
        graphs_after.append(cnt.frame_count)
        entries_after.append(len(entries(function)))
    # each compile of the frame makes two graphs: the frame's, and its resume function's
    assert graphs_after == [2, 2, 4, 4]
    assert entries_after == [1, 1, 2, 2]  # the first frame compiled twice: [10], then [s0]
    first_frame = [g for g in cnt.graphs if "l_inputs_x_" in placeholders(g)]
    assert len(first_frame) == 2
    assert 'l_inputs_x_: "f32[10]"' in placeholders(first_frame[0])
    assert 'l_inputs_x_: "f32[s0]"' in placeholders(first_frame[1])
    # y is first used after the break: the first graph does not take it (as torch's does not),
    # though its size is guarded (duck sizing, below)
    assert "l_inputs_y_" not in placeholders(first_frame[0]) + placeholders(first_frame[1])
    static, dynamic = entries(function)
    assert shape_guards(static) == []
    assert shape_guards(dynamic) == ["s0 >= 2", "L['inputs']['y'].size()[0] == s0"]
    assert "float32[s0]" in dynamic.guard_source
    # the resume function went through the same steps: [10], then [s0]
    resume = cnt.graphs[-1]
    assert placeholders(resume) == \
        '    def forward(self, s0: "Sym(s0)", l_x_: "f32[s0]", l_y_: "f32[s0]"):'


def test_tutorial_recompile_is_logged_once_with_the_size_that_changed(capsys):
    compiled = mtc.compile(function, backend="eager")
    mtc.set_logs(recompiles=True)
    try:
        for n in (10, 10, 8, 6):
            compiled(tutorial_inputs(n))
    finally:
        mtc.set_logs()
    err = capsys.readouterr().err
    assert err.count("Recompiling function function") == 1
    assert "size mismatch at index 0. expected 10, actual 8" in err
    assert err.count("Recompiling function __resume_at_") == 1  # its resume function, once


def test_tutorial_every_size_2_to_64_is_right_with_no_further_compile():
    cnt = CountingBackend()
    compiled = mtc.compile(function, backend=cnt)
    compiled(tutorial_inputs(10))
    compiled(tutorial_inputs(8))  # now [s0]
    assert cnt.frame_count == 4
    for n in range(2, 65):
        assert_compiled_matches_eager(compiled, function, tutorial_inputs(n))
    assert cnt.frame_count == 4
    assert len(entries(function)) == 2


def test_both_branches_of_the_break_stay_dynamic():
    def branchy(x):
        if x.sum() > 0:
            return x * 2
        return x - 1

    cnt = CountingBackend()
    compiled = mtc.compile(branchy, backend=cnt)
    for n in (10, 8, 6, 20, 33):
        for sign in (1.0, -1.0):
            x = mtc.rand(n) * sign + sign * 0.1
            assert_same(compiled(x), branchy(x))
    assert len(entries(branchy)) == 2  # [10], then [s0]
    # the frame and both resume functions (one per branch): each [10], then [s0]
    assert cnt.frame_count == 6
    # (a dynamic graph takes the size first, as torch's: `s0: "Sym(s0)", l_x_: "f32[s0]"`)
    assert [placeholders(g).split('"')[-2] for g in cnt.graphs] == \
        ["f32[10]"] * 3 + ["f32[s0]"] * 3
    assert all(placeholders(g).count('"Sym(s0)"') == 1 for g in cnt.graphs[3:])


# ------------------------------------------------------------------------ 2. ShapeEnv rules


def add(x, y):
    return x + y


def test_size_1_compiles_a_static_entry_and_symbols_are_guarded_ge_2():
    cnt = CountingBackend()
    compiled = mtc.compile(add, backend=cnt)
    for n in (3, 4, 5):
        assert_same(compiled(mtc.ones(n), mtc.ones(n)), mtc.ones(n) * 2)
    assert cnt.frame_count == 2
    assert "s0 >= 2" in shape_guards(entries(add)[1])
    assert "L['x'].size()[0] >= 2" in entries(add)[1].guard_source
    assert_same(compiled(mtc.ones(1), mtc.ones(1)), mtc.ones(1) * 2)  # fails s0 >= 2
    assert cnt.frame_count == 3
    assert placeholders(cnt.graphs[-1]) == \
        '    def forward(self, l_x_: "f32[1]", l_y_: "f32[1]"):'
    assert shape_guards(entries(add)[2]) == []
    compiled(mtc.ones(0), mtc.ones(0))  # 0 is static too
    assert 'l_x_: "f32[0]"' in placeholders(cnt.graphs[-1])
    compiled(mtc.ones(1), mtc.ones(1))
    compiled(mtc.ones(7), mtc.ones(7))
    assert cnt.frame_count == 4  # both hits


def test_size_1_broadcasting_stays_static_next_to_a_symbol():
    compiled = mtc.compile(add, backend="eager")
    for n in (3, 4, 9):
        x, y = mtc.randn(n, 5), mtc.randn(1, 5)
        assert_same(compiled(x, y), add(x, y))
    dynamic = entries(add)[1]
    assert "float32[s0, 5]" in dynamic.guard_source  # the 5s never changed
    assert "float32[1, 5]" in dynamic.guard_source
    assert len(entries(add)) == 2


def test_equal_dims_share_a_symbol_guarded_equal():
    cnt = CountingBackend()
    compiled = mtc.compile(add, backend=cnt)
    compiled(mtc.randn(3), mtc.randn(3))
    compiled(mtc.randn(4), mtc.randn(4))
    dynamic = entries(add)[1]
    assert 'l_x_: "f32[s0]", l_y_: "f32[s0]"' in placeholders(cnt.graphs[-1])
    assert "L['y'].size()[0] == L['x'].size()[0]" in dynamic.guard_source
    assert shape_guards(dynamic) == ["s0 >= 2", "L['y'].size()[0] == s0"]
    x, y = mtc.randn(5), mtc.randn(5)
    assert_same(compiled(x, y), add(x, y))
    assert cnt.frame_count == 2
    # different sizes fail the equality guard: eager raises, so must the compiled call
    with pytest.raises(RuntimeError, match="must match the size"):
        add(mtc.randn(5), mtc.randn(6))
    with pytest.raises(RuntimeError, match="must match the size"):
        compiled(mtc.randn(5), mtc.randn(6))


def total(x, y):
    return x.sum() + y.sum()


def test_different_sizes_get_two_symbols_without_an_equality_guard():
    cnt = CountingBackend()
    compiled = mtc.compile(total, backend=cnt)
    compiled(mtc.randn(3), mtc.randn(3))
    compiled(mtc.randn(4), mtc.randn(5))
    dynamic = entries(total)[1]
    # each symbol is an input just before the first tensor it sizes (torch's order)
    assert 's0: "Sym(s0)", l_x_: "f32[s0]", s1: "Sym(s1)", l_y_: "f32[s1]"' in \
        placeholders(cnt.graphs[-1])
    assert shape_guards(dynamic) == ["s0 >= 2", "s1 >= 2"]
    for a, b in ((6, 6), (7, 9), (64, 2)):
        x, y = mtc.randn(a), mtc.randn(b)
        assert_same(compiled(x, y), total(x, y))
    assert cnt.frame_count == 2  # equal sizes are fine for two symbols: no guard said !=


def test_duck_sizing_within_one_tensor_recompiles_when_the_dims_differ():
    def f(x):
        return x.sum(0)

    compiled = mtc.compile(f, backend="eager")
    compiled(mtc.randn(2, 2))
    compiled(mtc.randn(3, 3))  # both dims changed; equal hints: one symbol, x.size(1) == s0
    assert shape_guards(entries(f)[1]) == ["s0 >= 2", "L['x'].size()[1] == s0"]
    x = mtc.randn(3, 4)
    assert_same(compiled(x), f(x))
    assert len(entries(f)) == 3
    assert shape_guards(entries(f)[2]) == ["s0 >= 2", "s1 >= 2"]


# ------------------------------------------------------------------------ 3. sizes in the graph


def reshaper(x):
    n = x.shape[0]
    m = x.shape[1]
    a = x.reshape(n * m)  # a size computed in Python
    b = x.view(m, n)
    c = x.sum(1).unsqueeze(0).expand(2, n)
    z = mtc.zeros(n * 2, m)
    return a.sum() + b.sum(0).sum() + c.sum() + z.sum() + x * n


def test_shape_arithmetic_flows_into_views_and_factories():
    cnt = CountingBackend()
    compiled = mtc.compile(reshaper, backend=cnt)
    for shape in ((3, 4), (5, 6), (2, 9), (7, 3), (6, 6), (10, 2)):
        assert_compiled_matches_eager(compiled, reshaper, mtc.randn(*shape, requires_grad=True))
    assert cnt.frame_count == 2  # (3, 4), then [s0, s1] for all the rest
    gm = cnt.graphs[-1]
    ops = ops_of(gm)
    assert "size" not in ops and "mul" in ops  # sizes are the inputs s0, s1 (as torch's)
    for op in ("reshape", "view", "expand", "zeros"):
        assert op in ops
    code = gm.print_readable(print_output=False)
    assert 's0: "Sym(s0)", s1: "Sym(s1)", l_x_: "f32[s0, s1]"' in code
    assert 'mul: "Sym(s0*s1)" = s0 * s1\n' in code  # n * m, computed in the graph
    assert 'reshape: "f32[s0*s1]" = l_x_.reshape(mul)' in code
    assert 'zeros: "f32[s0*2, s1]"' in code


def test_tensor_times_a_symbolic_int_stays_in_one_graph():
    def f(x):
        n = x.shape[0]
        return x.mul(n) + mtc.mul(x, n) + x * n + n * x - x / n

    cnt = CountingBackend()
    compiled = mtc.compile(f, backend=cnt)
    for n in (3, 4, 5, 17):
        assert_compiled_matches_eager(compiled, f, mtc.randn(n, requires_grad=True))
    assert cnt.frame_count == 2
    assert all(e.graph_break is None and e.reason is None for e in entries(f))
    # an int tensor times n stays an int tensor (the hint, not a float, stands in for n)
    def g(x):
        return x * x.shape[0]

    compiled = mtc.compile(g, backend="eager")
    for n in (3, 4, 5):
        x = mtc.arange(n)
        assert_same(compiled(x), g(x))
    assert compiled(mtc.arange(6)).dtype is mtc.int64


def test_factories_and_indexing_with_symbolic_ints():
    def f(x):
        n = x.shape[0]
        return mtc.arange(n) * x + mtc.full((n,), n) + x[n // 2] + x[-1]

    cnt = CountingBackend()
    compiled = mtc.compile(f, backend=cnt)
    for n in range(2, 12):
        assert_compiled_matches_eager(compiled, f, mtc.randn(n))
    assert cnt.frame_count == 2
    gm = cnt.graphs[-1]
    assert 'arange: "i64[s0]"' in gm.print_readable(print_output=False)
    assert 'full: "i64[s0]"' in gm.print_readable(print_output=False)


def test_stride_of_a_dynamic_tensor_specialises_its_sizes():
    def f(x):
        return x * x.stride(0)

    compiled = mtc.compile(f, backend="eager")
    for shape in ((3, 4), (4, 5), (5, 6), (5, 7), (5, 6)):
        x = mtc.randn(*shape)
        assert_same(compiled(x), f(x))  # was a stale stride before the fix
    assert "s1 == 5" in shape_guards(entries(f)[1])


def test_a_branch_on_a_size_is_guarded_and_crossing_it_recompiles():
    def f(x):
        if x.shape[0] > 5:
            return x * 2
        return x + 1

    cnt = CountingBackend()
    compiled = mtc.compile(f, backend=cnt)
    counts = []
    for n in (3, 4, 5, 2, 6, 7, 64, 3):
        x = mtc.randn(n)
        assert_same(compiled(x), f(x))
        counts.append(cnt.frame_count)
    assert counts == [1, 2, 2, 2, 3, 3, 3, 3]
    assert shape_guards(entries(f)[1]) == ["s0 >= 2", "not (s0 > 5)"]
    assert shape_guards(entries(f)[2]) == ["s0 >= 2", "s0 > 5"]
    assert "L['x'].size()[0] > 5" in entries(f)[2].guard_source


def test_range_of_a_size_specialises_guarded_equal():
    def f(x):
        out = x
        for i in range(x.shape[0]):
            out = out + i
        return out

    compiled = mtc.compile(f, backend="eager")
    for n in (3, 4, 5, 4):
        x = mtc.randn(n)
        assert_same(compiled(x), f(x))
    assert len(entries(f)) == 3  # 3 static; then 4 and 5, each specialised
    assert shape_guards(entries(f)[1]) == ["s0 >= 2", "s0 == 4"]
    assert "L['x'].size()[0] == 4" in entries(f)[1].guard_source


def test_view_minus_1_guards_divisibility():
    def f(x):
        return x.view(-1, 2).sum(1)

    compiled = mtc.compile(f, backend="eager")
    for n in (4, 6, 8, 10, 64):
        x = mtc.randn(n)
        assert_same(compiled(x), f(x))
    assert len(entries(f)) == 2
    assert shape_guards(entries(f)[1]) == ["s0 >= 2", "not ((s0 % 2) != 0)"]
    assert "(L['x'].size()[0] % 2) != 0" in entries(f)[1].guard_source
    with pytest.raises(RuntimeError) as eager_error:
        f(mtc.randn(7))
    with pytest.raises(RuntimeError) as compiled_error:
        compiled(mtc.randn(7))  # fails the guard; the new trace meets eager's error
    assert str(compiled_error.value) == str(eager_error.value)


def test_matmul_of_dynamic_inner_dims_is_guarded_equal():
    def f(x, w):
        return x @ w

    compiled = mtc.compile(f, backend="eager")
    compiled(mtc.randn(3, 4), mtc.randn(4, 5))
    for a, k in ((5, 6), (7, 8), (2, 3), (9, 64)):
        x, w = mtc.randn(a, k), mtc.randn(k, 5)
        assert_same(compiled(x, w), f(x, w))
    dynamic = entries(f)[1]
    assert len(entries(f)) == 2
    assert "L['w'].size()[0] == L['x'].size()[1]" in dynamic.guard_source
    assert "float32[s1, 5]" in dynamic.guard_source  # w's 5 never changed: static
    with pytest.raises(RuntimeError):
        f(mtc.randn(3, 4), mtc.randn(6, 5))
    with pytest.raises(RuntimeError):
        compiled(mtc.randn(3, 4), mtc.randn(6, 5))


def test_matmul_of_a_dynamic_dim_with_a_static_one_specialises():
    def f(x, w):
        return x @ w

    compiled = mtc.compile(f, backend="eager", dynamic=False)
    x = mtc.randn(3, 4)
    mtc.dynamo.mark_dynamic(x, 1)
    compiled(x, mtc.randn(4, 5))  # dynamic=False wins over mark_dynamic
    assert shape_guards(entries(f)[0]) == []
    mtc.dynamo.reset()
    compiled = mtc.compile(f, backend="eager")
    compiled(x, mtc.randn(4, 5))
    assert shape_guards(entries(f)[0]) == ["s0 >= 2", "not (s0 != 4)"]  # == w.size(0)


# ------------------------------------------------------------------------ 4. how dims get dynamic


def double(x):
    return x * 2


def test_dynamic_true_makes_every_dim_symbolic_from_the_first_call():
    cnt = CountingBackend()
    compiled = mtc.compile(double, backend=cnt, dynamic=True)
    for shape in ((3, 4), (5, 6), (2, 2), (9, 3)):
        x = mtc.randn(*shape)
        assert_same(compiled(x), double(x))
    assert cnt.frame_count == 1
    assert 'l_x_: "f32[s0, s1]"' in placeholders(cnt.graphs[0])
    compiled(mtc.randn(1, 4))  # 1 stays static even with dynamic=True
    assert cnt.frame_count == 2
    assert 'l_x_: "f32[1, s0]"' in placeholders(cnt.graphs[1])


def test_dynamic_false_never_makes_a_symbol():
    cnt = CountingBackend()
    compiled = mtc.compile(double, backend=cnt, dynamic=False)
    for n in (3, 4, 5, 6):
        compiled(mtc.randn(n))
    assert cnt.frame_count == 4
    assert all(shape_guards(e) == [] for e in entries(double))
    assert all("s0" not in g.print_readable(print_output=False) for g in cnt.graphs)


def test_mark_dynamic_makes_a_dim_symbolic_on_the_first_compile():
    cnt = CountingBackend()
    compiled = mtc.compile(double, backend=cnt)
    x = mtc.randn(3, 4)
    mtc.dynamo.mark_dynamic(x, 0)
    compiled(x)
    assert 'l_x_: "f32[s0, 4]"' in placeholders(cnt.graphs[0])
    for n in (5, 6, 64):
        compiled(mtc.randn(n, 4))  # unmarked tensors hit the same entry
    compiled(mtc.randn(5, 6))  # dim 1 was static: recompile, now automatic dynamic
    assert cnt.frame_count == 2
    assert 'l_x_: "f32[s0, s1]"' in placeholders(cnt.graphs[1])
    y = mtc.randn(2, 3)
    mtc.dynamo.mark_dynamic(y, [0, -1])
    assert y._dynamo_dynamic_indices == {0, 1}


def test_linear_module_with_a_dynamic_batch():
    lin = mtc.nn.Linear(4, 3)
    cnt = CountingBackend()
    compiled = mtc.compile(lin, backend=cnt)
    for batch in (2, 3, 5, 8, 64, 2):
        x = mtc.randn(batch, 4, requires_grad=True)
        x_eager = x.detach().clone().requires_grad_(True)
        out = compiled(x)
        out.square().sum().backward()
        w_grad = lin.weight.grad.numpy().copy()
        lin.zero_grad()
        expected = lin(x_eager)
        expected.square().sum().backward()
        assert_same(out, expected)
        np.testing.assert_allclose(x.grad.numpy(), x_eager.grad.numpy(), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(w_grad, lin.weight.grad.numpy(), rtol=1e-5, atol=1e-6)
        lin.zero_grad()
    assert cnt.frame_count == 2
    assert 'l_input_: "f32[s0, 4]"' in placeholders(cnt.graphs[1])
    assert '"f32[3, 4]"' in placeholders(cnt.graphs[1])  # the weight stays static


def test_aot_eager_backend_on_a_dynamic_graph():
    def f(x, y):
        return (x.sum(0) * y).expand(3, -1).sum() + x.mean()

    compiled = mtc.compile(f, backend="aot_eager")
    for n in (4, 5, 6, 9):
        assert_compiled_matches_eager(compiled, f, mtc.randn(7, n, requires_grad=True),
                                      mtc.randn(n, requires_grad=True))
    assert len(entries(f)) == 2


# ------------------------------------------------------------------------ 5. SymInt


def symbols(*hints):
    env = ShapeEnv()
    return env, [env.create_symbol("L['x']", d, h) for d, h in enumerate(hints)]


def test_symint_expressions_carry_their_hints():
    env, (a, b) = symbols(6, 4)
    assert str(a) == "s0" and str(b) == "s1"
    cases = {a * 2: ("s0*2", 12), a + b: ("s0 + s1", 10), a - 1: ("s0 - 1", 5),
             a // 4: ("s0 // 4", 1), a % 4: ("s0 % 4", 2), 3 * a + 1: ("s0*3 + 1", 19),
             -a: ("-s0", -6), 100 // (a * b): ("100 // (s0*s1)", 4),
             100 % (a * b): ("100 % (s0*s1)", 4)}
    for sym, (text, hint) in cases.items():
        assert (str(sym), sym.hint) == (text, hint)
        assert eval(sym.expr, {"s0": 6, "s1": 4}) == hint  # the expression means its hint
    assert a + 0 is a and a * 1 is a and a // 1 is a
    assert env.guards == []  # arithmetic decides nothing


def test_symint_decisions_are_answered_by_the_hint_and_guarded():
    env, (a, b) = symbols(6, 4)
    assert (a > 5) is True and (a == b) is False and bool(a % 2 == 0) is True
    assert env.guards == ["s0 > 5", "not (s0 == s1)", "(s0 % 2) == 0"]
    assert list(range(a)) == list(range(6))  # __index__ specialises
    assert env.guards[-1] == "s0 == 6"


def test_symint_facts_that_need_no_guard():
    env, (a,) = symbols(6)
    assert (a == 1) is False and (a != 0) is True and (a >= 2) is True and (a > 1) is True
    assert bool(a) is True and (a == a) is True
    assert (a // 2 >= 0) is True and (a % 3 < 0) is False
    assert env.guards == []


def test_symint_bounds_do_not_assume_positive_divisors():
    env, (a,) = symbols(6)
    assert (a % -4 >= 0) is False  # 6 % -4 == -2, but 8 % -4 == 0: must be guarded
    assert (a // -4 >= 0) is False
    assert env.guards == ["not ((s0 % -4) >= 0)", "not ((s0 // -4) >= 0)"]


def test_sizes_0_and_1_are_never_symbols_and_equal_sizes_share_one():
    env = ShapeEnv()
    assert env.create_symbol("L['x']", 0, 0) == 0
    assert env.create_symbol("L['x']", 1, 1) == 1
    a = env.create_symbol("L['x']", 2, 5)
    b = env.create_symbol("L['y']", 0, 5)
    assert isinstance(a, SymInt) and b.expr == a.expr == "s0"
    assert env.guard_code() == [
        ("L['x'].size()[2] >= 2", "s0 >= 2"),
        ("L['y'].size()[0] == L['x'].size()[2]", "L['y'].size()[0] == s0")]


# ------------------------------------------------------------------------ 6. hypothesis

# steps on ``v`` (1-D, length n) and ``y`` (1-D, length n or m); each keeps ``v`` 1-D of length
# n, so any sequence is valid for every n >= 2
STEPS = [
    "v = v.cos()",
    "v = v * y[:1] + y.sum()",
    "v = v * v.shape[0]",
    "v = v - v.mean()",
    "v = v + mtc.arange(v.shape[0])",
    "v = (v.unsqueeze(1) * v.unsqueeze(0)).sum(1) / v.shape[0]",
    "v = v.expand(3, v.shape[0]).sum(0)",
    "v = mtc.cat([v[1:], v[:1]])",
    "v = v + mtc.zeros(v.shape[0] * 2).view(2, -1).sum(0)",
    "v = v.reshape(1, -1).squeeze(0) + len(v)",
    "v = v * v.numel() + v[v.shape[0] // 2]",
    "v = mtc.full((v.shape[0],), v.shape[0]) * v",
    "if v.shape[0] > {k}:\n        v = v * 2",
    "if v.shape[0] % 2 == 0:\n        v = v.view(-1, 2).t().reshape(-1)",
    "if v.sum() > 0:\n        v = v + 1",  # a graph break with a resume function
    "v = v + y.shape[0]",
    "v = v + mtc.zeros(2, v.shape[0]).stride(0)",
]


@st.composite
def size_programs(draw):
    steps = draw(st.lists(st.sampled_from(STEPS), min_size=1, max_size=6))
    body = "\n".join("    " + s.format(k=draw(st.integers(2, 64))) for s in steps)
    return f"def prog(x, y):\n    v = x\n{body}\n    return v\n"


_counter = iter(range(10**9))


def make_program(src: str):
    """Exec ``src`` as a new function.  Its name is unique: equal code objects share one
    cache today (see ``test_equal_code_objects_keep_separate_caches``)."""
    i = next(_counter)
    src = src.replace("def prog(", f"def prog_{i}(")
    filename = f"<dynamic_shapes_prog_{i}>"
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    ns = {"mtc": mtc}
    exec(compile(src, filename, "exec"), ns)
    return ns[f"prog_{i}"]


@given(size_programs(), st.lists(st.integers(2, 64), min_size=1, max_size=7),
       st.booleans(), st.booleans())
def test_random_sizes_and_programs_never_return_a_stale_result(src, sizes, same_y, grad):
    prog = make_program(src)
    compiled = mtc.compile(prog, backend="eager")
    for n in sizes:
        x = mtc.randn(n, requires_grad=grad)
        y = mtc.randn(n if same_y else (n * 7) % 13 + 2)
        assert_compiled_matches_eager(compiled, prog, x, y)
    assert len(entries(prog)) <= len(set(sizes))
    assert_compiled(prog)


def test_equal_code_objects_keep_separate_caches():
    """Two functions exec'd from the same source have *equal* code objects but different
    globals: the cache is keyed by code identity, as torch's is."""
    src = "def f(x):\n    return x * 2\n"
    a, b = {}, {}
    exec(compile(src, "<a>", "exec"), a)
    exec(compile(src, "<b>", "exec"), b)
    assert a["f"].__code__ == b["f"].__code__ and a["f"].__code__ is not b["f"].__code__
    x = mtc.randn(3)
    assert_same(mtc.compile(a["f"], backend="eager")(x), x * 2)
    assert_same(mtc.compile(b["f"], backend="eager")(x), x * 2)
    assert len(assert_compiled(a["f"])) == len(assert_compiled(b["f"])) == 1


# ------------------------------------------------------------------------ 7. against torch


def test_tutorial_graph_counts_match_torch_compile():
    torch = pytest.importorskip("torch")
    from torch._dynamo.testing import CompileCounter

    torch._dynamo.reset()
    theirs = CompileCounter()
    torch_fn = torch.compile(_clone(function), backend=theirs)
    ours = CountingBackend()
    mtc_fn = mtc.compile(function, backend=ours)
    counts = []
    for n in (10, 10, 8, 6):
        torch_fn({"x": torch.randn(n), "y": torch.randn(n)})
        mtc_fn(tutorial_inputs(n))
        counts.append((ours.frame_count, theirs.frame_count))
    torch._dynamo.reset()
    assert counts == [(2, 2), (2, 2), (4, 4), (4, 4)]


def _clone(fn):
    """The same function with its own code object (torch and mtc keep separate caches)."""
    return type(fn)(fn.__code__.replace(), fn.__globals__, fn.__name__)


def test_slicing_by_a_symbolic_size_stays_symbolic():
    """``x[:n]`` / ``x[n:]`` with ``n`` a dynamic size: one graph for every n (guarded n <= len)."""
    def f(x, y):
        n = y.shape[0]
        return x[:n] * 2 + x[n:].sum()

    cnt = CountingBackend()
    cf = mtc.compile(f, backend=cnt)
    for n in (4, 5, 6, 7, 3, 9):
        x, y = mtc.randn(10), mtc.randn(n)
        assert_same(cf(x, y), f(x, y))
    assert cnt.frame_count == 2
    assert "slice(None, s0, None)" in cnt.graphs[-1].code  # y's size is an input; y is not
    assert cnt.graphs[-1].code.startswith("def forward(self, s0, l_x_):")
