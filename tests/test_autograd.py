"""Autograd: the engine, grad(), errors, in-place safety, hooks, and custom Functions."""

import numpy as np
import pytest

import minitorch_compile as mtc


def test_backward_accumulates_into_leaves():
    x = mtc.tensor([1.0, 2.0, 3.0], requires_grad=True)
    (x * x).sum().backward()
    (x * 3).sum().backward()
    assert x.grad.tolist() == [5.0, 7.0, 9.0]
    assert x.is_leaf and x.grad.grad_fn is None


def test_shared_subexpression_sums_gradients():
    x = mtc.tensor([2.0], requires_grad=True)
    y = x * x
    z = y + y * x  # x^2 + x^3
    z.backward()
    assert x.grad.item() == pytest.approx(2 * 2 + 3 * 4)


def test_broadcast_gradients_are_reduced_to_input_shape():
    a = mtc.randn(3, 1, requires_grad=True)
    b = mtc.randn(4, requires_grad=True)
    (a * b).sum().backward()
    assert a.grad.shape == (3, 1) and b.grad.shape == (4,)
    np.testing.assert_allclose(a.grad.numpy()[:, 0], np.full(3, b.detach().numpy().sum()),
                               rtol=1e-5)
    np.testing.assert_allclose(b.grad.numpy(), np.full(4, a.detach().numpy().sum()), rtol=1e-5)


def test_scalar_number_operand_gets_no_gradient_but_tensor_does():
    x = mtc.tensor([1.0, 2.0], requires_grad=True)
    (2.0 ** x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.log(2) * 2.0 ** np.array([1.0, 2.0]),
                               rtol=1e-6)


def test_non_scalar_backward_needs_gradient():
    x = mtc.randn(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar"):
        (x * 2).backward()
    (x * 2).backward(mtc.ones(3))
    assert x.grad.tolist() == [2.0, 2.0, 2.0]


def test_second_backward_through_freed_graph_raises():
    x = mtc.randn(3, requires_grad=True)
    y = x.exp().sum()
    y.backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.backward()
    z = x.exp().sum()
    z.backward(retain_graph=True)
    z.backward()
    np.testing.assert_allclose(x.grad.numpy(), 3 * np.exp(x.detach().numpy()), rtol=1e-5)


def test_no_grad_and_enable_grad():
    x = mtc.randn(2, requires_grad=True)
    with mtc.no_grad():
        y = x * 2
        with mtc.enable_grad():
            z = x * 2
    assert not y.requires_grad and y.grad_fn is None
    assert z.requires_grad and z.grad_fn.name() == "MulBackward0"

    @mtc.no_grad()
    def f(t):
        return t * 3

    assert not f(x).requires_grad
    mtc.set_grad_enabled(False)
    try:
        assert not (x + 1).requires_grad
    finally:
        mtc.set_grad_enabled(True)


def test_backward_of_tensor_without_grad_raises():
    with pytest.raises(RuntimeError, match="does not require grad"):
        mtc.ones(2).sum().backward()


def test_int_tensor_cannot_require_grad_and_comparisons_are_not_differentiable():
    with pytest.raises(RuntimeError, match="floating point"):
        mtc.tensor([1, 2], requires_grad=True)
    x = mtc.randn(3, requires_grad=True)
    assert not (x > 0).requires_grad
    assert not x.argmax().requires_grad


def test_grad_function_and_allow_unused():
    x = mtc.randn(3, requires_grad=True)
    w = mtc.randn(3, requires_grad=True)
    y = (x * w).sum()
    gx, gw = mtc.autograd.grad(y, (x, w), retain_graph=True)
    np.testing.assert_allclose(gx.numpy(), w.detach().numpy())
    np.testing.assert_allclose(gw.numpy(), x.detach().numpy())
    assert x.grad is None and w.grad is None  # grad() does not accumulate
    unused = mtc.randn(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="appears to not have been used"):
        mtc.autograd.grad(y, (x, unused), retain_graph=True)
    gx2, gu = mtc.autograd.grad(y, (x, unused), allow_unused=True)
    assert gu is None


def test_grad_of_intermediate_tensor():
    x = mtc.randn(4, requires_grad=True)
    h = x * 3
    y = (h * h).sum()
    (gh,) = mtc.autograd.grad(y, h)
    np.testing.assert_allclose(gh.numpy(), 2 * h.detach().numpy(), rtol=1e-6)


def test_create_graph_gives_second_derivatives():
    x = mtc.tensor([0.3, -1.2, 2.0], dtype=mtc.float64, requires_grad=True)
    y = (x.sin() * x).sum()
    (g,) = mtc.autograd.grad(y, x, create_graph=True)
    assert g.requires_grad
    (h,) = mtc.autograd.grad(g.sum(), x)
    xv = x.detach().numpy()
    np.testing.assert_allclose(h.numpy(), 2 * np.cos(xv) - xv * np.sin(xv), rtol=1e-10)


def test_inplace_on_leaf_requiring_grad_is_an_error_but_fine_under_no_grad():
    x = mtc.randn(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        x.add_(1)
    with mtc.no_grad():
        x.add_(1)
    assert x._version == 1


def test_inplace_rebases_history():
    x = mtc.randn(3, requires_grad=True)
    y = x * 2
    y.mul_(3)
    assert y.grad_fn.name() == "MulBackward0"
    y.sum().backward()
    assert x.grad.tolist() == [6.0, 6.0, 6.0]


def test_modifying_a_saved_tensor_is_detected():
    x = mtc.randn(3, requires_grad=True)
    y = x * 1
    z = y.sin()  # saves y
    y.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.sum().backward()


def test_inplace_whose_formula_needs_the_old_value_saves_a_clone():
    x = mtc.randn(3, requires_grad=True)
    y = x * 1
    y.cos_()  # cos's derivative needs the value before the write: a clone is saved
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), -np.sin(x.detach().numpy()), rtol=1e-6)


def test_views_share_memory_and_version():
    x = mtc.zeros(2, 3)
    v = x[0]
    v.fill_(1.0)
    assert x.tolist() == [[1.0, 1.0, 1.0], [0.0, 0.0, 0.0]]
    assert x._version == v._version == 1
    x.t()[1].fill_(5.0)
    assert x[:, 1].tolist() == [5.0, 5.0]


def test_detach_shares_data_and_drops_history():
    x = mtc.randn(3, requires_grad=True)
    d = (x * 2).detach()
    assert not d.requires_grad and d.grad_fn is None


def test_retain_grad_and_hooks():
    x = mtc.randn(3, requires_grad=True)
    h = x * 2
    h.retain_grad()
    seen = []
    h.register_hook(lambda g: seen.append(g.tolist()))
    handle = x.register_hook(lambda g: g * 10)
    (h * h).sum().backward()
    np.testing.assert_allclose(h.grad.numpy(), 2 * h.detach().numpy(), rtol=1e-6)
    assert seen and len(seen[0]) == 3
    np.testing.assert_allclose(x.grad.numpy(), 10 * 8 * x.detach().numpy(), rtol=1e-5)
    handle.remove()


def test_backward_order_is_reverse_creation_order():
    """Among ready nodes the newest runs first, so traces of backward are deterministic."""
    order = []

    class Log(mtc.TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            order.append(func.name)
            return func(*args, **(kwargs or {}))

    x = mtc.randn(3, requires_grad=True)
    a, b = x.sin(), x.exp()
    with Log():
        (a + b).sum().backward()
    assert order.index("mul") < order.index("cos")  # exp's node (newer) before sin's


# ------------------------------------------------------------------ custom Functions


class Exp(mtc.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = x.exp()
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return g * y


class MulConst(mtc.autograd.Function):
    @staticmethod
    def forward(x, k):
        return x * k

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.k = inputs[1]

    @staticmethod
    def backward(ctx, g):
        assert ctx.needs_input_grad == (True, False)
        return g * ctx.k, None


def test_custom_function_ctx_style():
    x = mtc.randn(4, requires_grad=True)
    y = Exp.apply(x)
    assert y.grad_fn.name() == "ExpBackward"
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.exp(x.detach().numpy()), rtol=1e-6)


def test_custom_function_setup_context_style():
    x = mtc.randn(4, requires_grad=True)
    MulConst.apply(x, 3.0).sum().backward()
    assert x.grad.tolist() == [3.0] * 4


def test_custom_function_without_grad_records_nothing():
    y = Exp.apply(mtc.randn(2))
    assert y.grad_fn is None


def test_custom_function_wrong_number_of_grads():
    class Bad(mtc.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            return x + y

        @staticmethod
        def backward(ctx, g):
            return g

    a, b = mtc.randn(2, requires_grad=True), mtc.randn(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="incorrect number of gradients"):
        Bad.apply(a, b).sum().backward()


def test_custom_function_mark_non_differentiable():
    class SortLike(mtc.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            idx = x.argmax()
            out = x * 2
            ctx.mark_non_differentiable(idx)
            return out, idx

        @staticmethod
        def backward(ctx, g, g_idx):
            return g * 2

    x = mtc.randn(3, requires_grad=True)
    out, idx = SortLike.apply(x)
    assert out.requires_grad and not idx.requires_grad
    out.sum().backward()
    assert x.grad.tolist() == [2.0] * 3


def test_tutorial_custom_functions_match_eager():
    """The seed tutorial's Cosine/AOTTransformedTwoCosine (as the tour runs them)."""
    from minitorch_compile._tour import AOT_transformed_two_cosine as aot_two_cosine
    from minitorch_compile._tour import AOTTransformedTwoCosine, naive_two_cosine

    torch = mtc

    inp = torch.randn((5, 5, 5), requires_grad=True)
    grad_output = torch.randn((5, 5, 5))
    out1 = torch.cos(torch.cos(inp))
    (out1 * grad_output).sum().backward()
    g1 = inp.grad
    inp.grad = None
    out2 = naive_two_cosine(inp)
    (out2 * grad_output).sum().backward()
    g2 = inp.grad
    inp.grad = None
    out3 = aot_two_cosine(inp)
    (out3 * grad_output).sum().backward()
    g3 = inp.grad
    assert torch.allclose(out1, out2) and torch.allclose(out1, out3)
    assert torch.allclose(g1, g2) and torch.allclose(g1, g3)
    # AOTTransformedTwoCosine saves one tensor (the input); the naive one saves one per cos
    _, x0 = AOTTransformedTwoCosine.apply(inp)
    assert x0 is inp  # an input returned unchanged passes through


def test_leaf_gradients_never_alias():
    a, b = mtc.randn(3, requires_grad=True), mtc.randn(3, requires_grad=True)
    (a + b).sum().backward()
    assert a.grad is not b.grad
    a.grad.mul_(0)
    assert b.grad.tolist() == [1.0, 1.0, 1.0]
    g = mtc.ones(3)
    x = mtc.randn(3, requires_grad=True)
    x.backward(g)
    assert x.grad is not g


def test_std_gradient_is_zero_where_std_is_zero():
    """torch's std_backward: the gradient of sqrt(var) at var == 0 is defined as 0."""
    x = mtc.tensor([[1.0, 1.0, 1.0], [1.0, 2.0, 4.0]], dtype=mtc.float64, requires_grad=True)
    x.std(1).sum().backward()
    assert x.grad[0].tolist() == [0.0, 0.0, 0.0]
    centered = np.array([1.0, 2.0, 4.0]) - 7 / 3
    std = np.sqrt((centered ** 2).sum() / 2)
    np.testing.assert_allclose(x.grad[1].numpy(), centered / (2 * std), rtol=1e-12)
