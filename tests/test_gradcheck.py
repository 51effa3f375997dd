"""Derivative formulas against central finite differences, for every differentiable op.

Generated from the OpInfo registry: each differentiable op (in-place variants too) gets float64
samples from ``Gen(grad=True)`` — values in ±[0.25, 3], so no kinks or ties — and the check

    <d out / d x, g>  (mtc.autograd.grad with random grad_outputs g)
    == (L(x + eps) - L(x - eps)) / 2 eps,   L(x) = sum_k <out_k(x), g_k>

for every floating input, including each tensor of a ``Tensor[]`` (cat, stack) and every output
(max.dim's values, split's pieces).  Broadcasting samples check that gradients come back
reduced to each input's shape.  Ops marked ``second_order`` are also checked through
``create_graph=True``: the gradient of their gradient.
"""


import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import minitorch_compile as mtc
from minitorch_compile.ops import OP_TABLE

from .opinfo import OPINFOS, Gen, as_list, float_leaves, inplace_variants, rebuild

EPS = 1e-6
GRAD_EXAMPLES = max(5, settings().max_examples // 2)
GRAD_OPS = sorted(n for n, info in OPINFOS.items() if info.grad)
GRAD_INPLACE = dict((n, info) for n, info in inplace_variants() if info.grad)
SECOND_ORDER = sorted(n for n, info in OPINFOS.items() if info.second_order)


def split_sample(s):
    """The sample's floating arrays (what we differentiate by) and a function that rebuilds
    the call's arguments around given tensors for them."""
    return float_leaves(s), lambda tensors: rebuild(s, tensors, lambda a: mtc.tensor(a.copy()))


def op_function(op, build, seed: int):
    """inputs -> floating outputs; random ops replay the same stream on every call."""
    def fn(tensors):
        mtc.manual_seed(seed)
        m = build(tensors)
        args = list(m.args)
        if op.schema.is_mutable:  # write into a copy, not into the leaf
            args[0] = args[0].clone()
        skip = op.opdef.nondifferentiable_outputs  # (torch's output_differentiability)
        return [o for i, o in enumerate(as_list(op(*args, **m.kwargs)))
                if o.dtype.is_floating_point and i not in skip]
    return fn


def gradcheck(fn, arrays, rng, *, grad_mode_forward=False, rtol=1e-5, atol=1e-6):
    """Compare ``mtc.autograd.grad`` of ``fn`` with central differences, input by input."""
    xs = [mtc.tensor(a, requires_grad=True) for a in arrays]
    outs = fn(xs)
    assume(all(np.all(np.isfinite(o.detach().numpy())) for o in outs))
    gouts = [rng.standard_normal(tuple(o.shape)) for o in outs]
    diff = [(o, mtc.tensor(g)) for o, g in zip(outs, gouts) if o.requires_grad]
    assert diff or not outs, "no output requires grad: the op recorded no backward node"
    analytic = mtc.autograd.grad([o for o, _ in diff], xs, [g for _, g in diff],
                                 allow_unused=True) if diff else [None] * len(xs)

    def loss(values):
        ts = [mtc.tensor(v, requires_grad=grad_mode_forward) for v in values]
        if grad_mode_forward:
            res = fn(ts)
        else:
            with mtc.no_grad():
                res = fn(ts)
        return sum(float(np.sum(r.detach().numpy() * g)) for r, g in zip(res, gouts))

    for i, (a, g) in enumerate(zip(arrays, analytic)):
        numeric = np.zeros(a.shape)
        for j in np.ndindex(*a.shape):
            values = [v.copy() for v in arrays]
            values[i][j] += EPS
            up = loss(values)
            values[i][j] -= 2 * EPS
            numeric[j] = (up - loss(values)) / (2 * EPS)
        got = np.zeros(a.shape) if g is None else g.detach().numpy()
        if g is not None:
            assert tuple(g.shape) == a.shape and g.dtype is mtc.float64, \
                f"input {i}: gradient {g.dtype}{list(g.shape)} for a float64{list(a.shape)} input"
        np.testing.assert_allclose(got, numeric, rtol=rtol, atol=atol,
                                   err_msg=f"gradient of input {i}")


def _check(name, info, data, op):
    s = info.sample(Gen(data.draw, grad=True), mtc.float64)
    leaves, build = split_sample(s)
    assume(leaves)
    seed = data.draw(st.integers(0, 2**16), label="seed")
    rng = np.random.default_rng(seed)
    gradcheck(op_function(op, build, seed), leaves, rng)


@pytest.mark.parametrize("name", GRAD_OPS)
@settings(max_examples=GRAD_EXAMPLES)
@given(data=st.data())
def test_gradient_matches_finite_differences(name, data):
    info = OPINFOS[name]
    _check(name, info, data, info.op)


@pytest.mark.parametrize("name", sorted(GRAD_INPLACE))
@settings(max_examples=max(3, GRAD_EXAMPLES // 2))
@given(data=st.data())
def test_inplace_gradient_matches_finite_differences(name, data):
    """``x.clone().op_(...)`` has the functional op's gradient — also when a formula needs the
    value ``op_`` overwrote (the in-place op saves a clone of it first, as torch does)."""
    info, opdef = GRAD_INPLACE[name], OP_TABLE[name]
    s = info.sample(Gen(data.draw, grad=True), mtc.float64)
    assume(isinstance(s.args[0], np.ndarray))
    leaves, build = split_sample(s)
    seed = data.draw(st.integers(0, 2**16), label="seed")
    with mtc.no_grad():  # the in-place form needs the result to have self's shape
        (out,) = op_function(info.op, build, seed)([mtc.tensor(a) for a in leaves])
    assume(tuple(out.shape) == s.args[0].shape)
    fn = op_function(opdef.overload, build, seed)
    gradcheck(fn, leaves, np.random.default_rng(seed))


@pytest.mark.parametrize("name", SECOND_ORDER)
@settings(max_examples=max(3, GRAD_EXAMPLES // 2))
@given(data=st.data())
def test_second_order_gradient_matches_finite_differences(name, data):
    """d/dx <d out/dx, g> through ``create_graph=True``: the derivative formulas' own
    derivatives."""
    info = OPINFOS[name]
    s = info.sample(Gen(data.draw, grad=True), mtc.float64)
    leaves, build = split_sample(s)
    seed = data.draw(st.integers(0, 2**16), label="seed")
    first = op_function(info.op, build, seed)
    rng = np.random.default_rng(seed)
    shapes = [tuple(o.shape) for o in first([mtc.tensor(a) for a in leaves])]
    gouts = [mtc.tensor(rng.standard_normal(sh)) for sh in shapes]

    def grad_of_op(xs):
        grads = mtc.autograd.grad(first(xs), xs, gouts, create_graph=True, allow_unused=True)
        return [g for g in grads if g is not None]

    gradcheck(grad_of_op, leaves, rng, grad_mode_forward=True, rtol=1e-4, atol=1e-5)


# ---------------------------------------------------------------- the cases named in the brief


def test_broadcast_gradients_are_reduced_to_each_input_shape():
    a = mtc.randn(3, 1, dtype=mtc.float64, requires_grad=True)
    b = mtc.randn(4, dtype=mtc.float64, requires_grad=True)
    c = mtc.randn((), dtype=mtc.float64, requires_grad=True)
    ga, gb, gc = mtc.autograd.grad((a * b + c).sum(), [a, b, c])
    assert (tuple(ga.shape), tuple(gb.shape), tuple(gc.shape)) == ((3, 1), (4,), ())
    np.testing.assert_allclose(ga.numpy()[:, 0], np.full(3, b.detach().numpy().sum()))
    assert gc.item() == 12.0


def test_cat_sends_each_slice_of_the_gradient_to_its_input():
    xs = [mtc.randn(n, 2, dtype=mtc.float64, requires_grad=True) for n in (1, 3, 2)]
    g = mtc.arange(12.0, dtype=mtc.float64).view(6, 2)
    grads = mtc.autograd.grad(mtc.cat(xs), xs, g)
    np.testing.assert_array_equal(np.concatenate([x.numpy() for x in grads]), g.numpy())


def test_max_dim_gradient_goes_to_the_returned_index_and_ties_split_for_amax():
    x = mtc.tensor([[1.0, 3.0, 3.0], [2.0, 0.0, 1.0]], dtype=mtc.float64, requires_grad=True)
    values, indices = mtc.max(x, 1)
    (g,) = mtc.autograd.grad(values.sum(), x)
    assert indices.tolist() == [1, 0]
    assert g.tolist() == [[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]]
    (g,) = mtc.autograd.grad(x.amax(1).sum(), x)  # torch: ties share the gradient evenly
    assert g.tolist() == [[0.0, 0.5, 0.5], [1.0, 0.0, 0.0]]


@pytest.mark.parametrize("keepdim", [False, True])
def test_keepdim_reductions_backward(keepdim):
    x = mtc.randn(2, 3, 4, dtype=mtc.float64, requires_grad=True)
    for out in (x.sum((0, 2), keepdim=keepdim), x.mean(1, keepdim=keepdim),
                x.var(2, keepdim=keepdim)):
        (g,) = mtc.autograd.grad(out, x, mtc.ones_like(out))
        assert tuple(g.shape) == (2, 3, 4)


def test_non_differentiable_outputs_do_not_require_grad():
    x = mtc.randn(3, requires_grad=True)
    for out in (x.argmax(), x > 0, x.detach(), mtc.max(x, 0).indices):
        assert not out.requires_grad and out.grad_fn is None


def test_pow_gradients_at_a_zero_base_are_torch_s_limits_not_nan():
    """At 0 ** 0 and 0 ** e (e >= 0) finite differences cannot help; torch defines the
    gradients as 0 there (pow_backward_self / pow_backward_exponent)."""
    x = mtc.tensor([0.0, 0.0, 2.0], dtype=mtc.float64, requires_grad=True)
    e = mtc.tensor([0.0, 2.0, 1.5], dtype=mtc.float64, requires_grad=True)
    gx, ge = mtc.autograd.grad((x ** e).sum(), [x, e])
    np.testing.assert_allclose(gx.numpy(), [0.0, 0.0, 1.5 * 2 ** 0.5])
    np.testing.assert_allclose(ge.numpy(), [0.0, 0.0, np.log(2) * 2 ** 1.5])
    (g,) = mtc.autograd.grad((0 ** e).sum(), e)
    assert g.tolist() == [0.0, 0.0, 0.0]
    (g,) = mtc.autograd.grad(((-2.0) ** e).sum(), e)  # log of a negative base: nan, no crash
    assert np.isnan(g.numpy()).all()


def test_embedding_padding_row_gets_no_gradient():
    w = mtc.randn(3, 2, dtype=mtc.float64, requires_grad=True)
    (g,) = mtc.autograd.grad(mtc.embedding(w, mtc.tensor([0, 0, 1]), 0).sum(), w)
    assert g.tolist() == [[0.0, 0.0], [1.0, 1.0], [0.0, 0.0]]
