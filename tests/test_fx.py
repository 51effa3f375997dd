"""fx: building graphs, codegen, GraphModule, Interpreter, lint and the passes."""

import operator

import numpy as np
import pytest

import minitorch_compile as mtc
from minitorch_compile.fx import Graph, GraphModule, Interpreter
from minitorch_compile.fx.passes import ShapeProp, cse, dead_code_elimination

aten = mtc.ops.aten


def _build():
    g = Graph()
    x = g.placeholder("x")
    y = g.placeholder("y")
    a = g.call_function(aten.cos.default, (x,))
    b = g.call_function(operator.mul, (a, y))
    c = g.call_method("sum", (b,), {"dim": -1})
    g.output(c)
    return g


def test_graph_builds_runs_and_prints_as_python():
    g = _build()
    g.lint()
    gm = GraphModule({}, g)
    assert "def forward(self, x, y):" in gm.code
    assert "cos = mtc.ops.aten.cos.default(x);  x = None" in gm.code
    assert "mul = cos * y;  cos = y = None" in gm.code
    assert "sum_1 = mul.sum(dim = -1);  mul = None" in gm.code
    assert "return sum_1" in gm.code
    x, y = mtc.randn(3, 4), mtc.randn(3, 4)
    np.testing.assert_allclose(gm(x, y).numpy(), (x.cos() * y).sum(-1).numpy(), rtol=1e-6)
    # the code is real: compiling it by hand gives the same function
    code = g.python_code("self")
    ns = dict(code.globals)
    exec(code.src, ns)
    assert mtc.allclose(ns["forward"](None, x, y), gm(x, y))


def test_graph_ir_string_and_users():
    g = _build()
    s = str(g)
    assert s.startswith("graph():")
    assert "%x : [num_users=1] = placeholder[target=x]" in s
    assert "call_function[target=mtc.ops.aten.cos.default](args = (%x,), kwargs = {})" in s
    assert "return %sum_1" in s
    cos = next(n for n in g.nodes if n.name == "cos")
    assert [u.name for u in cos.users] == ["mul"] and cos.all_input_nodes[0].name == "x"


def test_unique_names_avoid_builtins():
    g = Graph()
    x = g.placeholder("x")
    s1 = g.call_function(aten.sum.default, (x,))
    s2 = g.call_function(aten.sum.default, (s1,))
    g.output(s2)
    assert [n.name for n in g.nodes] == ["x", "sum_1", "sum_2", "output"]


def test_get_attr_and_call_module_from_a_module_root():
    lin = mtc.nn.Linear(4, 2)

    class M(mtc.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = lin
            self.register_buffer("scale", mtc.tensor(2.0))

    g = Graph()
    x = g.placeholder("x")
    s = g.get_attr("scale")
    h = g.call_module("lin", (x,))
    g.output(g.call_function(operator.mul, (h, s)))
    gm = GraphModule(M(), g)
    assert "lin = self.lin(x)" in gm.code and "scale = self.scale" in gm.code
    inp = mtc.randn(3, 4)
    np.testing.assert_allclose(gm(inp).detach().numpy(), (lin(inp) * 2).detach().numpy(),
                               rtol=1e-6)
    assert any(name == "lin.weight" for name, _ in gm.named_parameters())


def test_lint_catches_use_before_def_and_erase_with_users():
    g = Graph()
    x = g.placeholder("x")
    a = g.call_function(aten.neg.default, (x,))
    g.output(a)
    with pytest.raises(RuntimeError, match="still had 1 users"):
        g.erase_node(a)
    with g.inserting_before(a):
        b = g.call_function(aten.exp.default, (x,))
    a.args = (b,)  # a now uses b, which comes before it: fine
    g.lint()
    b.prepend(a)  # move a before b: now a uses b before b is defined
    with pytest.raises(RuntimeError, match="used before it is defined"):
        g.lint()


def test_replace_all_uses_and_inserting_after():
    g = _build()
    x = next(iter(g.nodes))
    cos = next(n for n in g.nodes if n.name == "cos")
    with g.inserting_after(cos):
        sin = g.call_function(aten.sin.default, (x,))
    cos.replace_all_uses_with(sin)
    g.eliminate_dead_code()
    g.lint()
    gm = GraphModule({}, g)
    a, b = mtc.randn(2, 3), mtc.randn(2, 3)
    assert mtc.allclose(gm(a, b), (a.sin() * b).sum(-1))
    assert "cos" not in gm.code


def test_dead_code_elimination_keeps_results_and_side_effects():
    def f(x):
        unused = x.exp() * 3  # noqa: F841 - dead
        buf = mtc.zeros(3)
        buf.add_(1)  # in-place: impure, kept even though buf is unused
        return x.cos()

    gm = mtc.fx.make_fx(f)(mtc.randn(3))
    before = len(gm.graph.nodes)
    assert dead_code_elimination(gm)
    names = [n.target.name for n in gm.graph.nodes if n.op == "call_function"]
    assert "exp" not in names and "add_" in names and "cos" in names
    assert len(gm.graph.nodes) < before
    x = mtc.randn(3)
    assert mtc.allclose(gm(x), f(x))


def test_cse_merges_pure_duplicates_but_not_random_ops():
    def f(x):
        a = x.sin() + x.sin()
        r = mtc.rand(3) + mtc.rand(3)
        return a, r

    gm = mtc.fx.make_fx(f)(mtc.randn(3))
    removed = cse(gm)
    sins = [n for n in gm.graph.nodes if n.op == "call_function" and n.target.name == "sin"]
    rands = [n for n in gm.graph.nodes if n.op == "call_function" and n.target.name == "rand"]
    assert removed == 1 and len(sins) == 1 and len(rands) == 2
    gm.graph.lint()
    x = mtc.randn(3)
    assert mtc.allclose(gm(x)[0], 2 * x.sin())


def test_shape_prop_fills_fake_values():
    g = _build()
    gm = GraphModule({}, g)
    ShapeProp(gm).propagate(mtc.randn(3, 4), mtc.randn(1, 4))
    by_name = {n.name: n for n in gm.graph.nodes}
    assert type(by_name["mul"].meta["val"]).__name__ == "FakeTensor"
    assert tuple(by_name["mul"].meta["val"].shape) == (3, 4)
    assert by_name["sum_1"].meta["tensor_meta"].shape == (3,)
    assert by_name["sum_1"].meta["tensor_meta"].dtype is mtc.float32
    assert 'sum_1: "f32[3]"' in gm.print_readable(print_output=False)


def test_interpreter_handlers_are_named_after_opcodes():
    calls = []

    class Counting(Interpreter):
        def call_function(self, target, args, kwargs):
            calls.append(getattr(target, "__name__", str(target)))
            return super().call_function(target, args, kwargs)

    gm = GraphModule({}, _build())
    x, y = mtc.randn(2), mtc.randn(2)
    out = Counting(gm).run(x, y)
    assert mtc.allclose(out, gm(x, y)) and len(calls) == 2


def test_generated_code_shows_in_tracebacks():
    import traceback

    g = Graph()
    x = g.placeholder("x")
    g.output(g.call_function(aten.mm.default, (x, x)))
    gm = GraphModule({}, g)
    try:
        gm(mtc.randn(2, 3))
    except RuntimeError:
        tb = traceback.format_exc()
    assert "mm = mtc.ops.aten.mm.default(x, x)" in tb
    assert "mm: mat1 and mat2 shapes cannot be multiplied (2x3 and 2x3)" in tb
