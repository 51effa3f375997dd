"""make_fx and fake tensors: traced graphs equal eager, in real and fake mode."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitorch_compile as mtc
from minitorch_compile.fx import DataDependentOutputException, FakeTensor, FakeTensorMode, make_fx


def _ops_in(gm):
    return [str(n.target) for n in gm.graph.nodes if n.op == "call_function"]


def run_autograd_ahead_of_time(function, inputs, grad_outputs):
    """The tutorial's function, with only the import changed."""
    torch = mtc

    def forward_and_backward(inputs, grad_outputs):
        outputs = function(*inputs)
        grad_inputs = torch.autograd.grad(outputs, inputs, grad_outputs)
        return grad_inputs

    wrapped_function = make_fx(forward_and_backward, tracing_mode="fake")
    joint_graph = wrapped_function(inputs, grad_outputs)
    return joint_graph, joint_graph._graph.python_code(root_module="self", verbose=True).src


def test_tutorial_joint_graph_of_cos_cos():
    def f(x0):
        x1 = mtc.cos(x0)
        return mtc.cos(x1)

    inp = mtc.randn((5, 5, 5), requires_grad=True)
    grad_output = mtc.randn((5, 5, 5))
    gm, src = run_autograd_ahead_of_time(f, [inp], [grad_output])
    # the same joint graph torch records: forward cos, cos; backward sin, neg, mul twice
    assert _ops_in(gm) == ["aten.cos.default", "aten.cos.default", "aten.sin.default",
                           "aten.neg.default", "aten.mul.default", "aten.sin.default",
                           "aten.neg.default", "aten.mul.default"]
    assert 'cos: "f32[5, 5, 5]" = mtc.ops.aten.cos.default(inputs_1)' in src
    assert "def forward(self, inputs, grad_outputs):" in src
    # fake tracing computed nothing, yet the module runs for real and matches eager
    (out,) = gm([inp], [grad_output])
    (ref,) = mtc.autograd.grad(f(inp), [inp], [grad_output])
    assert mtc.allclose(out, ref)
    vals = [n.meta["val"] for n in gm.graph.nodes if n.op == "call_function"]
    assert all(isinstance(v, FakeTensor) for v in vals)


def test_real_mode_records_real_values():
    gm = make_fx(lambda x: x.exp().sum(0))(mtc.ones(2, 3))
    val = next(n for n in gm.graph.nodes if n.name == "sum_1").meta["val"]
    assert not isinstance(val, FakeTensor)
    np.testing.assert_allclose(val.numpy(), np.full(3, 2 * np.e), rtol=1e-6)


def test_placeholders_named_after_parameters_and_nested_inputs():
    def f(x, pair, scale):
        a, b = pair
        return {"out": x * a + b * scale}

    gm = make_fx(f, tracing_mode="fake")(mtc.randn(3), (mtc.randn(3), mtc.randn(3)), 2.0)
    names = [n.name for n in gm.graph.nodes if n.op == "placeholder"]
    assert names == ["x_1", "pair_1", "pair_2", "scale_1"]
    x, a, b = mtc.randn(3), mtc.randn(3), mtc.randn(3)
    out = gm(x, (a, b), 2.0)
    assert set(out) == {"out"} and mtc.allclose(out["out"], x * a + b * 2.0)


def test_constant_tensors_become_get_attr():
    def f(x):
        return x + mtc.tensor([1.0, 2.0, 3.0])

    gm = make_fx(f)(mtc.zeros(3))
    assert "_tensor_constant0 = self._tensor_constant0" in gm.code
    assert gm(mtc.ones(3)).tolist() == [2.0, 3.0, 4.0]


def test_multi_output_ops_use_getitem():
    gm = make_fx(lambda x: x.max(dim=1).values * 2, tracing_mode="fake")(mtc.randn(3, 4))
    assert "getitem = max_1[0]" in gm.code
    x = mtc.randn(3, 4)
    assert mtc.allclose(gm(x), x.max(1).values * 2)


def test_inplace_ops_are_recorded():
    def f(x):
        y = x.clone()
        y.mul_(2)
        return y + 1

    gm = make_fx(f, tracing_mode="fake")(mtc.randn(3))
    assert "aten.mul_.default" in _ops_in(gm)
    x = mtc.randn(3)
    assert mtc.allclose(gm(x), x * 2 + 1)


def test_decomposition_table_replaces_ops():
    def relu_as_where(x):
        return mtc.where(x > 0, x, 0.0)

    gm = make_fx(lambda x: x.relu(), {mtc.ops.aten.relu.default: relu_as_where})(mtc.randn(4))
    assert _ops_in(gm) == ["aten.gt.default", "aten.where.default"]


def test_data_dependent_control_flow_raises_naming_the_op():
    def f(x):
        if x.sum() > 0:
            return x
        return -x

    with pytest.raises(DataDependentOutputException, match=r"aten\.gt\.default"):
        make_fx(f, tracing_mode="fake")(mtc.randn(3))


def test_fake_tensor_mode_direct():
    mode = FakeTensorMode()
    real = mtc.randn(4, 6)
    fake = mode.from_tensor(real)
    assert mode.from_tensor(real) is fake  # memoized
    with mode:
        out = (fake.t() @ fake).softmax(-1)
        z = mtc.zeros(2, 2)
    assert isinstance(out, FakeTensor) and tuple(out.shape) == (6, 6)
    assert isinstance(z, FakeTensor)
    assert fake.t().stride() == (1, 6)  # views keep real strides on fake storage
    for what in (lambda: out.item(), lambda: out.numpy(), lambda: out.tolist(),
                 lambda: bool(out[0, 0])):
        with pytest.raises(DataDependentOutputException):
            what()
    assert "FakeTensor(..., size=(6, 6)" in repr(out)
    real_other = mtc.randn(4, 6)
    with pytest.raises(RuntimeError, match="real tensor argument"):
        with mode:
            fake + real_other


def test_fake_tensors_raise_eager_errors():
    mode = FakeTensorMode()
    a, b = mode.from_tensor(mtc.randn(2, 3)), mode.from_tensor(mtc.randn(4, 5))
    with pytest.raises(RuntimeError, match=r"mm: mat1 and mat2 shapes cannot be multiplied"):
        a @ b


# ---------------------------------------------------------------- generated programs

UNARY = ["neg", "exp", "sin", "cos", "tanh", "sigmoid", "relu", "abs", "erf"]
BINARY = ["add", "sub", "mul", "maximum", "minimum"]


@st.composite
def programs(draw):
    """A random straight-line program over a few tensors, as a list of instructions."""
    n_inputs = draw(st.integers(1, 3))
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=3)))
    steps = []
    n_values = n_inputs
    for _ in range(draw(st.integers(1, 8))):
        kind = draw(st.sampled_from(["unary", "binary", "reduce", "view", "softmax"]))
        src = draw(st.integers(0, n_values - 1))
        if kind == "unary":
            steps.append(("unary", draw(st.sampled_from(UNARY)), src))
        elif kind == "binary":
            steps.append(("binary", draw(st.sampled_from(BINARY)), src,
                          draw(st.integers(0, n_values - 1))))
        elif kind == "reduce":
            steps.append(("reduce", draw(st.sampled_from(["sum", "mean", "amax"])), src))
        elif kind == "view":
            steps.append(("view", draw(st.sampled_from(["t", "flat", "unsq"])), src))
        else:
            steps.append(("softmax", "softmax", src))
        n_values += 1
    return n_inputs, shape, steps


def _run(program, inputs):
    _, _, steps = program
    vals = list(inputs)
    for step in steps:
        kind, name, src = step[:3]
        v = vals[src]
        if kind == "unary":
            out = getattr(v, name)()
        elif kind == "binary":
            out = getattr(mtc, name)(v, vals[step[3]])
        elif kind == "reduce":
            out = getattr(v, name)(-1, keepdim=True) if v.ndim else v * 1
        elif kind == "view":
            out = {"t": lambda t: t.transpose(0, -1) if t.ndim else t,
                   "flat": lambda t: t.reshape(-1),
                   "unsq": lambda t: t.unsqueeze(0)}[name](v)
        else:
            out = v.softmax(-1) if v.ndim else v.exp()
        vals.append(out)
    return vals[-1]


@given(programs(), st.sampled_from(["real", "fake"]))
def test_make_fx_of_generated_programs_equals_eager(program, mode):
    n_inputs, shape, _ = program
    inputs = [mtc.randn(*shape) for _ in range(n_inputs)]
    try:
        expected = _run(program, inputs)
    except RuntimeError:
        return  # broadcast mismatch after views: eager rejects it, nothing to compare
    gm = make_fx(lambda *xs: _run(program, xs), tracing_mode=mode)(*inputs)
    gm.graph.lint()
    out = gm(*inputs)
    np.testing.assert_allclose(out.numpy(), expected.numpy(), rtol=1e-5, atol=1e-6)
    # metadata recorded while tracing agrees with real execution
    final = gm.graph.output_node().args[0][0]
    assert tuple(final.meta["val"].shape) == tuple(expected.shape)
    assert final.meta["val"].dtype is expected.dtype


@given(programs())
def test_make_fx_joint_graph_of_generated_programs_matches_eager_grads(program):
    n_inputs, shape, _ = program
    inputs = [mtc.randn(*shape, dtype=mtc.float64, requires_grad=True)
              for _ in range(n_inputs)]
    try:
        out = _run(program, inputs)
    except RuntimeError:
        return
    if not out.requires_grad:
        return
    g_out = mtc.randn(*out.shape, dtype=mtc.float64)
    expected = mtc.autograd.grad(out, inputs, g_out, allow_unused=True)

    def joint(xs, g):
        y = _run(program, xs)
        return mtc.autograd.grad(y, xs, g, allow_unused=True)

    gm = make_fx(joint, tracing_mode="fake")(inputs, g_out)
    got = gm(inputs, g_out)
    for a, b in zip(got, expected):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(a.detach().numpy(), b.numpy(), rtol=1e-9, atol=1e-12)


def test_fake_mode_lifts_literal_tensors_as_constants():
    gm = make_fx(lambda x: x + mtc.tensor([1.0, 2.0, 3.0]), tracing_mode="fake")(mtc.zeros(3))
    assert "_tensor_constant0" in gm.code
    assert gm(mtc.ones(3)).tolist() == [2.0, 3.0, 4.0]


def test_dead_code_elimination_keeps_random_ops():
    from minitorch_compile.fx.passes import dead_code_elimination

    def f(x):
        unused = mtc.rand(3)  # noqa: F841 - consumes random numbers all the same
        return x + mtc.rand(3)

    gm = make_fx(f)(mtc.zeros(3))
    dead_code_elimination(gm)
    mtc.manual_seed(0)
    expected = f(mtc.zeros(3))
    mtc.manual_seed(0)
    assert mtc.equal(gm(mtc.zeros(3)), expected)
