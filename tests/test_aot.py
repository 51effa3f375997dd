"""AOTAutograd: compiled forward/backward pairs compute what eager computes.

Differential tests first (aot-compiled vs eager on hypothesis-generated programs, with both
partitioners), then the edges eager users rely on — non-differentiable outputs, ``None``
gradients, integer inputs, functionalization, custom ``Function``s, modules and the
``aot_eager`` Dynamo backend.
"""

import operator

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitorch_compile as mtc
from minitorch_compile.aot import (
    aot_function,
    aot_module,
    aot_module_simplified,
    default_partition,
    functionalize,
    min_cut_rematerialization_partition,
    nop,
)
from minitorch_compile.aot.partitioners import is_recomputable, is_view
from minitorch_compile.fx import FakeTensor, make_fx
from minitorch_compile.fx._pytree import tree_flatten

from .dynamo_utils import assert_compiled

F = mtc.nn.functional
PARTITIONERS = [default_partition, min_cut_rematerialization_partition]
NEVER_RECOMPUTED = {"matmul", "random", "indexing", "composite"}


def category(n):
    opdef = getattr(n.target, "opdef", None) if n.op == "call_function" else None
    return opdef.category if opdef is not None else None


def calls(gm) -> list[str]:
    return [str(n.target) for n in gm.graph.nodes if n.op == "call_function"]


def leaf_copies(args):
    """Fresh leaves with the same values and requires_grad; a tensor passed twice stays one."""
    copies: dict = {}
    for a in args:
        if isinstance(a, mtc.Tensor) and id(a) not in copies:
            copies[id(a)] = a.detach().clone().requires_grad_(a.requires_grad)
    return [copies.get(id(a), a) for a in args]


def run_and_backward(fn, args, tangent_seed=1):
    """Outputs of ``fn(*args)`` and the gradients of a random linear loss of them."""
    out = fn(*args)
    outs = [o for o in tree_flatten(out)[0] if isinstance(o, mtc.Tensor) and o.requires_grad]
    if outs:
        rng = np.random.default_rng(tangent_seed)
        loss = sum((o * mtc.tensor(rng.standard_normal(tuple(o.shape)), dtype=o.dtype)).sum()
                   for o in outs)
        loss.backward()
    grads = [a.grad if isinstance(a, mtc.Tensor) else None for a in args]
    return out, grads


def assert_same(a, b):
    leaves_a, spec_a = tree_flatten(a)
    leaves_b, spec_b = tree_flatten(b)
    assert spec_a == spec_b, f"{spec_a} != {spec_b}"
    if len(leaves_a) != 1 or leaves_a[0] is not a:
        for x, y in zip(leaves_a, leaves_b):
            assert_same(x, y)
    elif isinstance(a, mtc.Tensor):
        assert isinstance(b, mtc.Tensor) and a.shape == b.shape and a.dtype == b.dtype
        np.testing.assert_allclose(b.detach().numpy(), a.detach().numpy(), rtol=1e-7,
                                   atol=1e-9)
    else:
        assert a == b


def assert_matches_eager(fn, args, partition_fn=min_cut_rematerialization_partition):
    """Run ``fn`` eagerly and aot-compiled on equal inputs; outputs and grads must agree."""
    compiled = aot_function(fn, nop, partition_fn=partition_fn)
    out_e, grads_e = run_and_backward(fn, leaf_copies(args))
    out_c, grads_c = run_and_backward(compiled, leaf_copies(args))
    assert_same(out_e, out_c)
    for ge, gc in zip(grads_e, grads_c):
        assert (ge is None) == (gc is None), "a gradient is None in one run only"
        if ge is not None:
            assert_same(ge, gc)
    return compiled


def check_partition(pair):
    """The contract of a partition, as torch's AOTAutograd states it."""
    part = pair.partition
    fw, bw = part
    joint = pair.joint_graph.graph
    saved = [n.name for n in part.saved_values]
    name = lambda o: getattr(o, "name", o)  # noqa: E731
    # the forward returns the outputs first, then the saved values
    joint_outs = list(joint.output_node().args[0])
    fw_outs = [name(o) for o in fw.graph.output_node().args[0]]
    assert fw_outs == [name(o) for o in joint_outs[:part.num_fwd_outputs]] + saved
    # the backward's inputs are the saved values then tangents_1..n, and nothing else
    tangents = [n.name for n in joint.nodes if n.op == "placeholder"
                and n.name.startswith("tangents")]
    assert tangents == [f"tangents_{i + 1}" for i in range(len(tangents))]
    assert [n.name for n in bw.graph.nodes if n.op == "placeholder"] == saved + tangents
    # it returns the gradients of the joint graph
    assert [name(o) for o in bw.graph.output_node().args[0]] == \
        [name(o) for o in joint_outs[part.num_fwd_outputs:]]
    # nothing banned is computed twice: matmuls, random ops, non-recomputable ops
    fw_calls = {n.name for n in fw.graph.nodes if n.op == "call_function"}
    for n in bw.graph.nodes:
        if n.op == "call_function" and n.name in fw_calls:
            assert category(n) not in NEVER_RECOMPUTED, f"{n.name} recomputed"
            assert n.name not in part.banned, f"banned {n.name} recomputed"
    for n in part.recomputed:
        assert is_recomputable(n) or is_view(n) or n.target is operator.getitem
    if part.method == "default_partition":
        assert part.recomputed == []
    # every value's metadata is a fake tensor (nothing real was computed while tracing)
    for gm in (fw, bw, pair.joint_graph):
        for n in gm.graph.nodes:
            if n.op in ("placeholder", "call_function"):
                val = n.meta.get("val")
                assert not isinstance(val, mtc.Tensor) or isinstance(val, FakeTensor), n.name
    assert part.saved_bytes == sum(int(np.prod(n.meta["val"].shape)) *
                                   n.meta["val"].dtype.itemsize for n in part.saved_values)


# ------------------------------------------------------------------------------ tutorial


def test_tutorial_cos_cos_saves_one_tensor_with_min_cut_and_two_by_default():
    def f(x0):
        x1 = mtc.cos(x0)
        return mtc.cos(x1)

    x = mtc.randn(5, 5, 5, requires_grad=True)
    by_default = assert_matches_eager(f, [x], default_partition)
    min_cut = assert_matches_eager(f, [x], min_cut_rematerialization_partition)
    assert [n.name for n in by_default.last_pair.partition.saved_values] == ["primals_1", "cos"]
    part = min_cut.last_pair.partition
    assert [n.name for n in part.saved_values] == ["primals_1"]
    assert part.saved_bytes == 5 * 5 * 5 * 4
    assert [n.name for n in part.recomputed] == ["cos"]  # x1 = cos(x0) again, in backward
    assert calls(part.bw_module) == ["aten.cos.default", "aten.sin.default", "aten.neg.default",
                                     "aten.mul.default", "aten.sin.default", "aten.neg.default",
                                     "aten.mul.default"]
    for pair in (by_default.last_pair, min_cut.last_pair):
        check_partition(pair)


def test_tutorial_custom_functions_agree_with_the_compiled_one():
    from minitorch_compile._tour import AOT_transformed_two_cosine as by_hand

    torch = mtc
    x = torch.randn(5, 5, 5, requires_grad=True)
    compiled = aot_function(lambda x: torch.cos(torch.cos(x)), nop,
                            partition_fn=min_cut_rematerialization_partition)
    assert_same(*[run_and_backward(f, leaf_copies([x]))[1][0] for f in (by_hand, compiled)])


# ------------------------------------------------------------------------------ programs

# Each step appends one value computed from earlier values ``v[i]``, ``v[j]`` (taken modulo
# the number of values); every value has the inputs' shape (m, n).
UNARY = {
    "sin": lambda a: a.sin(),
    "tanh": lambda a: a.tanh(),
    "sigmoid": lambda a: a.sigmoid(),
    "exp_tanh": lambda a: a.tanh().exp(),
    "relu": lambda a: F.relu(a),
    "gelu_tanh": lambda a: F.gelu(a, approximate="tanh"),
    "square": lambda a: a * a,
    "neg": lambda a: -a,
    "softmax": lambda a: F.softmax(a, dim=-1),
    "log_softmax": lambda a: F.log_softmax(a, dim=-1),
    "layer_norm": lambda a: F.layer_norm(a, (a.shape[-1],)),
    "center": lambda a: a - a.mean(-1, keepdim=True),
    "scale_by_col_sum": lambda a: a * a.sum(0, keepdim=True),
    "div_by_amax": lambda a: a / (1 + a.amax(-1, keepdim=True) ** 2),
    "transpose": lambda a: (a.t() * 2).t(),
    "reshape": lambda a: a.reshape(-1).cos().view(a.shape),
    "expand_sum": lambda a: a.unsqueeze(0).expand(2, *a.shape).sum(0),
    "slice_cat": lambda a: mtc.cat([a[:, :1] * 3, a[:, 1:]], dim=1),
    "inplace": lambda a: a.clone().mul_(2).add_(1),
}
BINARY = {
    "add": lambda a, b: a + b,
    "mul": lambda a, b: a * b,
    "sub": lambda a, b: a - b,
    "div": lambda a, b: a / (1 + b * b),
    "where": lambda a, b: mtc.where(a > b, a, b),
    "maximum": lambda a, b: mtc.maximum(a, b),
    "matmul": lambda a, w: a @ w,  # w: the (n, n) weight input
    "bmm": lambda a, w: mtc.bmm(a.unsqueeze(0), w.unsqueeze(0)).squeeze(0),
}

steps = st.lists(st.tuples(st.sampled_from(sorted(UNARY) + sorted(BINARY)),
                           st.integers(0, 20), st.integers(0, 20)), min_size=1, max_size=6)


def build_program(program, two_outputs: bool):
    def fn(x, y, w):
        values = [x, y]
        for op, i, j in program:
            a = values[i % len(values)]
            if op in UNARY:
                values.append(UNARY[op](a))
            elif op in ("matmul", "bmm"):
                values.append(BINARY[op](a, w))
            else:
                values.append(BINARY[op](a, values[j % len(values)]))
        return (values[-1], values[len(values) // 2]) if two_outputs else values[-1]

    return fn


@given(program=steps, m=st.integers(1, 4), n=st.integers(2, 4), two_outputs=st.booleans(),
       y_grad=st.booleans(), w_grad=st.booleans(), seed=st.integers(0, 2**16))
def test_generated_programs_match_eager_with_both_partitioners(program, m, n, two_outputs,
                                                               y_grad, w_grad, seed):
    fn = build_program(program, two_outputs)
    rng = np.random.default_rng(seed)
    x, y, w = (mtc.tensor(rng.standard_normal(s)) for s in [(m, n), (m, n), (n, n)])
    args = [x.requires_grad_(True), y.requires_grad_(y_grad), w.requires_grad_(w_grad)]
    for partition_fn in PARTITIONERS:
        compiled = assert_matches_eager(fn, args, partition_fn)
        check_partition(compiled.last_pair)


# ------------------------------------------------------------------------------ edges


def test_non_differentiable_outputs():
    def f(x):
        return x.sin(), x.argmax(), x > 0, x.sum(0).ge(0.5)

    x = mtc.randn(3, 4, requires_grad=True)
    compiled = assert_matches_eager(f, [x])
    outs = compiled(x)
    assert outs[0].requires_grad and not any(o.requires_grad for o in outs[1:])
    assert [o.dtype for o in outs[1:]] == [mtc.int64, mtc.bool, mtc.bool]
    assert_matches_eager(lambda x: x.argmax(-1), [x])  # no differentiable output at all


def test_unused_inputs_and_inputs_not_requiring_grad_get_none():
    x = mtc.randn(3, requires_grad=True)
    z = mtc.randn(3, requires_grad=True)
    for partition_fn in PARTITIONERS:
        for f in (lambda x, z: x.sin(), lambda x, z: z.sin(), lambda x, z: x * z.detach()):
            compiled = assert_matches_eager(f, [x, z], partition_fn)
            check_partition(compiled.last_pair)
        assert_matches_eager(lambda x, c: x * c, [x, mtc.randn(3)], partition_fn)


def test_integer_tensor_inputs():
    x = mtc.randn(3, 4, requires_grad=True)
    idx = mtc.arange(4)
    for partition_fn in PARTITIONERS:
        assert_matches_eager(lambda x, i: x * i + i.sum(), [x, idx], partition_fn)
        assert_matches_eager(lambda x, i: (x.exp() * (i > 1)).sum(-1), [x, idx], partition_fn)
        compiled = assert_matches_eager(lambda x, i: F.embedding(i, x).tanh(),
                                        [x, mtc.tensor([2, 0, 2])], partition_fn)
        check_partition(compiled.last_pair)


def test_outputs_of_every_shape():
    x = mtc.randn(2, 3, requires_grad=True)
    assert_matches_eager(lambda x: (3, x.sin(), "tag"), [x])  # non-tensor outputs
    assert_matches_eager(lambda x: {"a": x.exp(), "b": [x.cos(), x * 2]}, [x])
    assert_matches_eager(lambda x: x, [x])  # an input returned as is
    assert_matches_eager(lambda x: (x, x.sin()), [x])
    assert_matches_eager(lambda x: x.view(-1).t() if x.dim() == 1 else x.t(), [x])
    assert_matches_eager(lambda x: x.max(dim=1)[0], [x], default_partition)  # multi-output


def test_the_same_tensor_passed_twice():
    x = mtc.randn(3, requires_grad=True)
    for partition_fn in PARTITIONERS:
        compiled = assert_matches_eager(lambda a, b: a * b.sin(), [x, x], partition_fn)
    placeholders = [n.name for n in compiled.last_pair.joint_graph.graph.nodes
                    if n.op == "placeholder"]
    assert placeholders == ["primals_1", "primals_2", "tangents_1"]  # two inputs, two grads
    first = compiled.last_pair
    compiled(x, x.detach().requires_grad_(True))  # two different tensors: another entry
    assert compiled.last_pair is not first

    def mutates_one(a, b):
        a.add_(1)
        return b * 2

    a = mtc.zeros(3)
    with pytest.raises(NotImplementedError, match="aliased inputs"):
        aot_function(mutates_one, nop)(a, a)


def test_the_same_tensor_returned_twice():
    x = mtc.randn(3, requires_grad=True)
    y = x.sin()  # eager first: one root given twice reaches the leaf once, summed
    (g,) = mtc.autograd.grad([y, y], [x], [mtc.ones(3), mtc.ones(3) * 2])
    assert_same(g, 3 * x.detach().cos())
    for partition_fn in PARTITIONERS:
        compiled = assert_matches_eager(lambda x: (x.sin(),) * 2, [x], partition_fn)
        a, b = compiled(x)
        assert a is b


def test_loss_on_one_of_several_outputs():
    compiled = aot_function(lambda x: (x.sin(), x.cos()), nop)
    x = mtc.randn(3, requires_grad=True)
    a, b = compiled(x)
    a.sum().backward()  # b gets no gradient: its tangent is zeros
    np.testing.assert_allclose(x.grad.numpy(), np.cos(x.detach().numpy()), rtol=1e-6)


def test_constants_and_scalars_in_the_traced_function():
    c = mtc.tensor([1.0, 2.0, 3.0])
    x = mtc.randn(3, requires_grad=True)
    for partition_fn in PARTITIONERS:
        compiled = assert_matches_eager(lambda x, s: (x * c).sin() * s, [x, 2.5], partition_fn)
        check_partition(compiled.last_pair)


def test_random_ops_follow_the_generator_and_are_never_recomputed():
    def f(x):
        return F.dropout(x.sin(), 0.5).cos() * 2

    x = mtc.randn(50, requires_grad=True)
    for partition_fn in PARTITIONERS:
        compiled = aot_function(f, nop, partition_fn=partition_fn)
        compiled(x)  # compile (fake tracing draws no random numbers)
        mtc.manual_seed(7)
        out_e, (grad_e,) = run_and_backward(f, leaf_copies([x]))
        mtc.manual_seed(7)
        out_c, (grad_c,) = run_and_backward(compiled, leaf_copies([x]))
        assert_same(out_e, out_c)
        assert_same(grad_e, grad_c)
        check_partition(compiled.last_pair)
        fw, bw = compiled.last_pair.partition
        assert "aten.bernoulli.p" in calls(fw) and "aten.bernoulli.p" not in calls(bw)


def test_no_input_requiring_grad_traces_only_the_forward():
    compiled = aot_function(lambda x: x.sin().sum(), nop)
    out = compiled(mtc.randn(3))
    assert compiled.last_pair.backward is None and compiled.last_pair.partition is None
    assert not out.requires_grad and out.grad_fn is None
    x = mtc.randn(3, requires_grad=True)
    with mtc.no_grad():  # grad mode off: the same
        out = compiled(x)
    assert compiled.last_pair.backward is None and out.grad_fn is None
    compiled(x)  # grad mode on: a new entry with a backward
    assert compiled.last_pair.backward is not None


def test_compiled_pairs_are_cached_per_input_metadata():
    traces = []

    def f(x):
        traces.append(tuple(x.shape))
        return x.sin()

    compiled = aot_function(f, nop)
    x = mtc.randn(3, requires_grad=True)
    compiled(x)
    first, n = compiled.last_pair, len(traces)
    compiled(mtc.randn(3, requires_grad=True))
    assert compiled.last_pair is first and len(traces) == n  # no new trace
    compiled(mtc.randn(4, requires_grad=True))
    assert compiled.last_pair is not first


def test_compilers_receive_graphs_and_example_inputs():
    seen = {}

    def compiler(name):
        def compile_(gm, example_inputs):
            seen[name] = (gm, example_inputs)
            return gm.forward
        return compile_

    compiled = aot_function(lambda x, y: (x * y).exp(), compiler("fw"), compiler("bw"),
                            partition_fn=min_cut_rematerialization_partition)
    x, y = mtc.randn(2, 3, requires_grad=True), mtc.randn(2, 3, requires_grad=True)
    compiled(x, y)
    fw_gm, fw_inputs = seen["fw"]
    bw_gm, bw_inputs = seen["bw"]
    assert fw_inputs == [x, y]
    names = [n.name for n in bw_gm.graph.nodes if n.op == "placeholder"]
    assert names[-1] == "tangents_1" and len(bw_inputs) == len(names)
    assert all(isinstance(v, FakeTensor) for v in bw_inputs)


# ------------------------------------------------------------------------------ functionalization


def test_inplace_ops_on_intermediates_become_out_of_place():
    def f(x):
        y = x * 2
        y.add_(1)
        z = y.sin()
        z.mul_(3)
        return z.relu_()

    x = mtc.randn(4, requires_grad=True)
    for partition_fn in PARTITIONERS:
        compiled = assert_matches_eager(f, [x], partition_fn)
        pair = compiled.last_pair
        for gm in (pair.joint_graph, *pair.partition):
            assert not any(n.target.schema.is_mutable for n in gm.graph.nodes
                           if n.op == "call_function" and hasattr(n.target, "schema"))
        assert {"aten.add.default", "aten.mul.default", "aten.relu.default"} <= \
            set(calls(pair.joint_graph))


def test_functionalize_rewrites_a_traced_graph():
    def f(x):
        y = x.clone()
        y.add_(1)
        return y.mul_(y)

    gm = make_fx(f, tracing_mode="fake")(mtc.randn(3))
    assert "aten.add_.default" in calls(gm)
    assert functionalize(gm) == []  # no graph input was mutated
    assert calls(gm) == ["aten.clone.default", "aten.add.default", "aten.mul.default"]
    x = mtc.randn(3)
    assert mtc.allclose(gm(x), (x + 1) * (x + 1))


def test_input_mutated_in_place_is_written_back_after_the_graph():
    def f(x, buf):
        with mtc.no_grad():
            buf.add_(1)
        return x * buf

    for partition_fn in PARTITIONERS:
        compiled = aot_function(f, nop, partition_fn=partition_fn)
        x, buf = mtc.randn(4, requires_grad=True), mtc.zeros(4)
        out = compiled(x, buf)
        assert buf.tolist() == [1.0] * 4  # the caller's tensor holds the new value
        assert_same(out, x.detach())
        out.sum().backward()
        assert x.grad.tolist() == [1.0] * 4
        pair = compiled.last_pair
        assert pair.mutated_inputs == [(1, 1)]
        fw_outs = pair.partition.fw_module.graph.output_node().args[0]
        assert str(fw_outs[1].target) == "aten.add.default"  # outputs, mutated input, saved
        with mtc.no_grad():  # the forward-only path writes back too
            compiled(x, buf)
        assert buf.tolist() == [2.0] * 4


def _seen_through_a_view(x):
    y = x * 1
    v = y.view(-1)
    y.add_(1)  # v sees this: regenerated from the new y
    return v * 2


def _into_a_view(x):
    y = x * 1
    y.view(-1).add_(x.view(-1))
    return y


def _column_write(x):
    y = x.sin() * 2
    y[:, 0] = 0.0
    y.t()[1].mul_(x[:, 1])
    return y * y


def _views_of_views(x):
    y = x * 3
    row = y[1]
    col = y[:, 0]
    row[1:].sin_()
    col.add_(1)
    return row * 2, col, y


def _out_style(x):
    out = mtc.zeros(x.shape[1], x.shape[0])
    for i in range(x.shape[1]):
        out[i] = x[:, i] * (i + 1)
    return out.tanh()


def _detach_alias(x):
    y = x * 1
    d = y.detach()
    d.mul_(2)  # y changes too (no gradient through the write)
    return y * x


@pytest.mark.parametrize("fn", [_seen_through_a_view, _into_a_view, _column_write,
                                _views_of_views, _out_style, _detach_alias],
                         ids=lambda f: f.__name__.strip("_"))
@pytest.mark.parametrize("partition_fn", PARTITIONERS, ids=lambda p: p.__name__)
def test_mutations_through_views_are_functionalized(fn, partition_fn):
    compiled = assert_matches_eager(fn, [mtc.randn(2, 3, requires_grad=True)], partition_fn)
    pair = compiled.last_pair
    check_partition(pair)
    for gm in (pair.joint_graph, *pair.partition):
        assert not any(n.target.schema.is_mutable for n in gm.graph.nodes
                       if n.op == "call_function" and hasattr(n.target, "schema"))


def test_input_mutated_through_a_view_is_written_back():
    def f(x, buf):
        with mtc.no_grad():
            buf[1:].add_(1)
            buf.t()[0].mul_(3)
        return x * buf

    compiled = aot_function(f, nop)
    x, buf, buf_e = mtc.randn(2, 3, requires_grad=True), mtc.ones(2, 3), mtc.ones(2, 3)
    out = compiled(x, buf)
    expected = f(x, buf_e)
    assert buf.tolist() == buf_e.tolist()
    assert_same(out, expected)
    assert compiled.last_pair.mutated_inputs == [(1, 1)]
    assert "aten.slice_scatter.default" in calls(compiled.last_pair.joint_graph)


# ------------------------------------------------------------------------------ custom Function


class ClippedExp(mtc.autograd.Function):
    """exp with a backward eager autograd would never write: the gradient is clamped."""

    @staticmethod
    def forward(x):
        return x.exp()

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(output)

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        return (grad * y).clamp(-0.5, 0.5)


class Cosine(mtc.autograd.Function):
    """The tutorial's Cosine (saves its input, returns it as a second output)."""

    @staticmethod
    def forward(x0):
        return mtc.cos(x0), x0

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(output[1])

    @staticmethod
    def backward(ctx, grad_output):
        (x0,) = ctx.saved_tensors
        return (-mtc.sin(x0)) * grad_output


def test_custom_function_forward_and_backward_are_traced_into_the_joint_graph():
    def f(x):
        return ClippedExp.apply(x.sin()) * 3

    x = mtc.randn(5, requires_grad=True) * 2
    x = x.detach().requires_grad_(True)
    for partition_fn in PARTITIONERS:
        compiled = assert_matches_eager(f, [x], partition_fn)
        pair = compiled.last_pair
        check_partition(pair)
        assert "aten.exp.default" in calls(pair.partition.fw_module)
        assert "aten.clamp.default" in calls(pair.partition.bw_module)  # the user's backward


def test_tutorial_cosine_function_inside_the_traced_code():
    def naive_two_cosine(x0):
        x1, _ = Cosine.apply(x0)
        x2, _ = Cosine.apply(x1)
        return x2

    x = mtc.randn(5, 5, 5, requires_grad=True)
    by_default = assert_matches_eager(naive_two_cosine, [x], default_partition)
    min_cut = assert_matches_eager(naive_two_cosine, [x])
    assert len(by_default.last_pair.partition.saved_values) == 2
    assert [n.name for n in min_cut.last_pair.partition.saved_values] == ["primals_1"]


# ------------------------------------------------------------------------------ modules, backend


class MLP(mtc.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = mtc.nn.Linear(4, 8)
        self.fc2 = mtc.nn.Linear(8, 3)
        self.register_buffer("calls", mtc.zeros(()))

    def forward(self, x):
        with mtc.no_grad():
            self.calls.add_(1)
        return self.fc2(F.gelu(self.fc1(x)))


def module_grads(mod, x, owner=None):
    """Gradients of a loss of ``mod(x)`` for the parameters of ``owner`` (default: mod)."""
    owner = owner or mod
    for p in owner.parameters():
        p.grad = None
    mod(x).pow(2).sum().backward()
    return {n: p.grad for n, p in owner.named_parameters()}


def test_aot_module_gives_parameters_their_gradients():
    mod = MLP()
    x = mtc.randn(5, 4)
    eager = module_grads(mod, x)
    compiled = aot_module(mod, nop, partition_fn=min_cut_rematerialization_partition)
    assert compiled.orig_module is mod  # torch's AOTModule layout
    aot = module_grads(compiled, x, owner=mod)
    assert set(aot) == set(eager)
    for name in eager:
        assert_same(eager[name], aot[name])
    assert mod.calls.item() == 2.0  # the buffer mutation reached the real module


def test_aot_module_simplified_takes_flat_tensors():
    def gm(x, w):
        return ((x @ w).tanh(),)

    x, w = mtc.randn(2, 3), mtc.randn(3, 3, requires_grad=True)
    run = aot_module_simplified(gm, [x, w], nop, nop)
    (out,) = run(x, w)
    out.sum().backward()
    w2 = w.detach().requires_grad_(True)
    gm(x, w2)[0].sum().backward()
    assert_same(w2.grad, w.grad)


def test_compile_with_aot_eager_backend_end_to_end():
    from minitorch_compile.dynamo.backends.registry import lookup_backend

    used = []

    def spy(gm, example_inputs):  # aot_eager, remembering what it made
        used.append(lookup_backend("aot_eager")(gm, example_inputs))
        return used[-1]

    def fn(x, y):
        x = x.cos().cos()
        return x * y

    x, y = mtc.randn(10, requires_grad=True), mtc.randn(10, requires_grad=True)
    for backend in ("aot_eager", spy):
        out_e, grads_e = run_and_backward(fn, leaf_copies([x, y]))
        out_c, grads_c = run_and_backward(mtc.compile(fn, backend=backend), leaf_copies([x, y]))
        assert_same(out_e, out_c)
        assert_same(grads_e, grads_c)
    assert_compiled(fn, graphs=2)  # one entry per backend, each a graph
    part = used[0].compiled.last_pair.partition
    assert part.method == "min_cut_rematerialization_partition"
    # x and y are saved; both cosines are recomputed (y's gradient needs cos(cos(x)))
    assert [n.name for n in part.saved_values] == ["primals_1", "primals_2"]
    assert [n.name for n in part.recomputed] == ["cos", "cos_1"]

    # Cache entries live on the code object (``Sequential.forward``), shared by every
    # Sequential other tests compiled before: start from an empty cache, as torch's tests do.
    mtc.dynamo.reset()
    mod = mtc.nn.Sequential(mtc.nn.Linear(4, 8), mtc.nn.Tanh(), mtc.nn.Linear(8, 2))
    x = mtc.randn(3, 4)
    eager = module_grads(mod, x)
    opt = mtc.compile(mod, backend="aot_eager")
    compiled = module_grads(opt, x, owner=mod)
    for name in eager:
        assert_same(eager[name], compiled[name])
    assert_compiled(opt, graphs=1)
