"""The autograd API against torch: grad modes and inference mode, ``autograd.grad`` and
``backward`` arguments, custom Functions, node names, ``requires_grad`` propagation, and the
gradients of nn functional ops — programs modelled on pytorch's ``test/test_autograd.py``
(``TestAutograd``, ``TestAutogradInferenceMode``) and ``test/test_nn.py``.

Each program's outcome must be torch's (``tests/fidelity.py``); without torch, the regression
tests at the end check recorded expectations.
"""

from __future__ import annotations

import pytest

import minitorch_compile as mtc

from .fidelity import programs_of, run_program

pytestmark = pytest.mark.torch


def _x(T, rows=2, cols=3):
    return T.arange(1.0, rows * cols + 1, dtype=T.float64).reshape(rows, cols).requires_grad_()


# ------------------------------------------------------------------ grad modes


def inference_mode_marks_tensors(T):  # TestAutogradInferenceMode: test_inference_mode_context
    x = _x(T)
    with T.inference_mode():
        y = x * 2
        inside = T.is_inference_mode_enabled()
    return [y.requires_grad, y.is_inference(), x.is_inference(), inside,
            T.is_inference_mode_enabled()]


def inference_tensor_saved_for_backward_error(T):  # test_inference_mode_handle_direct_view
    with T.inference_mode():
        y = T.ones(2)
    z = _x(T)[0, :2] * y
    z.sum().backward()
    return [z]


def inference_tensor_inplace_outside_error(T):  # test_inference_mode_inf_tensor_in_normal_mode
    with T.inference_mode():
        y = T.ones(2)
    y.add_(1)
    return [y]


def inference_tensor_used_out_of_place(T):  # reading is fine, and the result is normal
    with T.inference_mode():
        y = T.ones(2)
    z = y * 2
    with T.inference_mode():
        y.mul_(3)  # in place inside inference mode is fine
    return [z, z.is_inference(), y]


def inference_mode_false_records(T):
    x = _x(T)
    with T.inference_mode(False):
        y = x * 2
    return [y.requires_grad, y.is_inference()]


def set_grad_enabled_as_function(T):  # test_set_grad_enabled
    x = _x(T)
    T.set_grad_enabled(False)
    y = x * 2
    T.set_grad_enabled(True)
    return [y.requires_grad, T.is_grad_enabled()]


def enable_grad_inside_no_grad(T):  # test_enable_grad
    x = _x(T)
    with T.no_grad():
        with T.enable_grad():
            y = x * 2
        z = x * 2
    return [y.requires_grad, z.requires_grad]


# ------------------------------------------------------------------ grad and backward


def grad_of_several_outputs(T):  # test_grad (a list of outputs)
    x = _x(T)
    return list(T.autograd.grad([(x * 2).sum(), (x ** 2).sum()], [x]))


def grad_with_grad_outputs(T):
    x = _x(T)
    y = x * 3
    return list(T.autograd.grad(y, x, grad_outputs=T.ones_like(y) * 2))


def grad_twice_with_retain_graph(T):
    x = _x(T)
    y = x.exp().sum()
    return [T.autograd.grad(y, x, retain_graph=True)[0], T.autograd.grad(y, x)[0]]


def grad_materialize_grads(T):  # test_grad_materialize_grads
    x, z = _x(T), _x(T)
    return list(T.autograd.grad((x * 2).sum(), [x, z], allow_unused=True,
                                materialize_grads=True))


def backward_with_inputs_subset(T):  # test_backward_with_inputs
    x, z = _x(T), _x(T)
    (x * z).sum().backward(inputs=[x])
    return [x.grad, z.grad]


def autograd_backward_grad_tensors(T):
    x = _x(T)
    y = x * 2
    T.autograd.backward([y], grad_tensors=[T.ones_like(y)])
    return [x.grad]


def backward_gradient_of_other_dtype(T):  # validate_outputs casts the gradient
    x = _x(T)
    (x * 2).backward(T.ones(2, 3, dtype=T.float32))
    return [x.grad]


def backward_of_integer_output_error(T):
    _x(T).argmax().backward()
    return []


def integer_tensor_requires_grad_error(T):  # the factory's wording
    return [T.ones(2, dtype=T.int64, requires_grad=True)]


# ------------------------------------------------------------------ custom Functions


def _function(T, forward, backward, name="F"):
    return type(name, (T.autograd.Function,), {"forward": staticmethod(forward),
                                                "backward": staticmethod(backward)})


def custom_function_non_tensor_argument(T):  # test_function (a Python number argument)
    def forward(ctx, x, k):
        ctx.k = k
        return x * k
    F = _function(T, forward, lambda ctx, g: (g * ctx.k, None))
    x = _x(T)
    F.apply(x, 3).sum().backward()
    return [x.grad]


def custom_function_two_outputs(T):  # test_function_returns_multiple... / node class name
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * 2, x * 3
    F = _function(T, forward, lambda ctx, g1, g2: g1 * 2 + g2 * 3, "TwoOut")
    x = _x(T)
    a, b = F.apply(x)
    (a.sum() + (b * b).sum()).backward()
    return [x.grad, type(a.grad_fn).__name__, a.grad_fn.name()]


def custom_function_unused_output_gets_zeros(T):  # test_materialize_grads
    F = _function(T, lambda ctx, x: (x * 2, x * 3), lambda ctx, g1, g2: g1 + g2)
    x = _x(T)
    F.apply(x)[0].sum().backward()
    return [x.grad]


def custom_function_set_materialize_grads_false(T):  # test_set_materialize_grads
    seen = []

    def forward(ctx, x):
        ctx.set_materialize_grads(False)
        return x * 2, x * 3

    def backward(ctx, g1, g2):
        seen.append(g2 is None)
        return g1 * 2
    x = _x(T)
    _function(T, forward, backward).apply(x)[0].sum().backward()
    return [x.grad, seen]


def custom_function_saved_input_modified_error(T):  # test_save_for_backward version check
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * 2

    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * x
    x = _x(T)
    a = x * 1
    y = _function(T, forward, backward).apply(a)
    a.add_(1)
    y.sum().backward()
    return [x.grad]


def custom_function_double_backward(T):  # test_function double backward through formulas
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 2

    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 2 * x * g
    x = _x(T)
    (g,) = T.autograd.grad(_function(T, forward, backward).apply(x).sum(), x,
                           create_graph=True)
    g.sum().backward()
    return [g, x.grad]


# ------------------------------------------------------------------ nodes and flags


def node_class_names(T):  # test_grad_fn_name / type(out.grad_fn).__name__
    x = _x(T)
    outs = [x * 2, x + 1, x.sum(), x[0], x.exp(), x.view(6), x.mean(), x @ x.t(), x.relu(),
            x.clone()]
    return [type(o.grad_fn).__name__ for o in outs] + [outs[0].grad_fn.name()]


def requires_grad_propagation(T):
    x = _x(T)
    z = T.ones(2, 3, dtype=T.float64)
    return [(x * z).requires_grad, (z * 2).requires_grad, (x > 1).requires_grad,
            x.argmax().requires_grad, x.detach().requires_grad, x.int().requires_grad,
            x.float().requires_grad]


def leaf_status(T):  # test_is_leaf
    x = _x(T)
    p = T.nn.Parameter(T.ones(2))
    return [x.is_leaf, (x * 2).is_leaf, T.ones(2).is_leaf, p.is_leaf, x.detach().is_leaf,
            x.requires_grad_(False).is_leaf]


def dtype_conversion_grad(T):
    x = _x(T)
    y = x.float()
    (y * 2).sum().backward()
    return [x.grad, y.dtype]


# ------------------------------------------------------------------ nn functional gradients


def softmax_grads(T):
    x = _x(T)
    F = T.nn.functional
    (F.softmax(x, 1) * T.arange(3.0, dtype=T.float64)).sum().backward()
    first = x.grad.clone()
    x.grad = None
    (F.log_softmax(x, 0) * T.arange(3.0, dtype=T.float64)).sum().backward()
    return [first, x.grad]


def activation_grads(T):  # OpInfo samples of the nn.functional activations
    x = T.linspace(-3, 3, 13, dtype=T.float64).requires_grad_()
    F = T.nn.functional
    ys = [F.gelu(x), F.gelu(x, approximate="tanh"), F.silu(x), F.elu(x), F.leaky_relu(x, 0.1),
          F.softplus(x), F.hardtanh(x), F.hardswish(x), F.hardsigmoid(x), F.relu6(x),
          F.mish(x), F.logsigmoid(x), F.selu(x), F.celu(x), F.softsign(x), F.tanhshrink(x)]
    sum(y.sum() for y in ys).backward()
    return ys + [x.grad]


def conv_and_pool_grads(T):
    x = T.linspace(-1, 1, 144, dtype=T.float64).reshape(2, 2, 6, 6).requires_grad_()
    w = T.linspace(-1, 1, 54, dtype=T.float64).reshape(3, 2, 3, 3).requires_grad_()
    F = T.nn.functional
    y = F.conv2d(x, w, stride=2, padding=1)
    z = (F.max_pool2d(y, 2).sum() + F.avg_pool2d(x, 3, stride=1, padding=1).sum()
         + F.adaptive_avg_pool2d(y, (2, 1)).sum())
    z.backward()
    return [y, z, x.grad, w.grad]


def embedding_padding_idx_grad(T):  # test_embedding_padding_idx
    e = T.nn.Embedding(4, 2, padding_idx=0)
    with T.no_grad():
        e.weight.copy_(T.arange(8.0).reshape(4, 2))
    y = e(T.tensor([[0, 1], [1, 3]]))
    y.sum().backward()
    return [y, e.weight.grad]


def linear_grads(T):
    lin = T.nn.Linear(3, 2).double()
    with T.no_grad():
        lin.weight.copy_(T.arange(6.0).reshape(2, 3))
        lin.bias.fill_(0.5)
    x = _x(T, 4, 3)
    y = lin(x)
    (y ** 2).sum().backward()
    return [y, lin.weight.grad, lin.bias.grad, x.grad]


PROGRAMS = programs_of(globals())


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__)
def test_program_matches_torch(program):
    run_program(program)


# ------------------------------------------------------------------ regressions without torch


def test_inference_tensors_are_marked_and_guarded():
    with mtc.inference_mode():
        y = mtc.ones(2) * 2
        assert mtc.is_inference_mode_enabled()
    assert y.is_inference() and not mtc.is_inference_mode_enabled()
    with pytest.raises(RuntimeError, match="Inplace update to inference tensor outside"):
        y.add_(1)
    with pytest.raises(RuntimeError, match="Inference tensors cannot be saved for backward"):
        mtc.ones(2, requires_grad=True) * y


def test_nodes_are_named_like_torchs_classes():
    x = _x(mtc)
    assert type((x * 2).grad_fn).__name__ == "MulBackward0"
    assert isinstance((x * 2).grad_fn, mtc.autograd.graph.OpBackward)
