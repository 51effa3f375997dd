"""``nn`` against torch: programs modelled on pytorch's ``test/test_nn.py`` and
``test/nn/test_module_hooks.py`` — module trees (names, order, buffers, duplicates), train/eval,
``state_dict``/``load_state_dict`` strictness, ``zero_grad``, forward hooks (with kwargs) and
full backward hooks, losses and norms with their gradients, and errors on bad input.

Each program's outcome must be torch's (``tests/fidelity.py``); without torch, the regression
tests at the end check recorded expectations.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import minitorch_compile as mtc

from .fidelity import programs_of, run_program

pytestmark = pytest.mark.torch


def _mlp(T):
    m = T.nn.Sequential(T.nn.Linear(3, 4), T.nn.ReLU(), T.nn.Dropout(0.5), T.nn.Linear(4, 2))
    with T.no_grad():
        for i, p in enumerate(m.parameters()):
            p.copy_(T.linspace(-1, 1, p.numel()).reshape(p.shape) * (i + 1) * 0.3)
    return m


def _ones_linear(T):
    m = T.nn.Linear(2, 2)
    with T.no_grad():
        m.weight.fill_(1.0)
        m.bias.fill_(0.0)
    return m


# ------------------------------------------------------------------ the module tree


def names_in_order(T):  # test_named_parameters / test_named_modules / test_named_children
    m = _mlp(T)
    return [[n for n, _ in m.named_parameters()], [n for n, _ in m.named_modules()],
            [n for n, _ in m.named_children()], len(list(m.modules())),
            [n for n, _ in m.named_buffers()]]


def batchnorm_buffers_and_state_dict_keys(T):  # test_buffers_and_named_buffers
    m = T.nn.Sequential(T.nn.Conv2d(1, 2, 3), T.nn.BatchNorm2d(2))
    return [[n for n, _ in m.named_buffers()], list(m.state_dict().keys()),
            [n for n, _ in m.named_parameters()]]


def registered_members(T):  # test_register_buffer_allows_... / non-persistent buffers
    m = T.nn.Module()
    m.p = T.nn.Parameter(T.ones(2))
    m.register_buffer("b", T.zeros(2))
    m.register_buffer("nb", T.zeros(1), persistent=False)
    m.sub = T.nn.Linear(1, 1)
    return [list(m.state_dict().keys()), [n for n, _ in m.named_parameters()],
            [n for n, _ in m.named_buffers()]]


def shared_parameters_listed_once(T):  # test_parameters_and_named_parameters (duplicates)
    lin = T.nn.Linear(2, 2)
    m = T.nn.Sequential(lin, lin)
    return [len(list(m.parameters())), [n for n, _ in m.named_parameters()],
            len(list(m.named_parameters(remove_duplicate=False))), list(m.state_dict())]


def containers(T):  # test_ModuleList / test_ModuleDict / test_Sequential_delitem
    ml = T.nn.ModuleList([T.nn.Linear(1, 1) for _ in range(3)])
    ml.append(T.nn.ReLU())
    ml.insert(0, T.nn.Tanh())
    md = T.nn.ModuleDict({"b": T.nn.ReLU(), "a": T.nn.Tanh()})
    md["c"] = T.nn.Linear(1, 1)
    s = T.nn.Sequential(T.nn.ReLU(), T.nn.Tanh(), T.nn.Sigmoid())
    del s[1]
    return [len(ml), type(ml[-1]).__name__, len(ml[1:3]), [n for n, _ in ml.named_children()],
            list(md.keys()), [n for n, _ in md.named_parameters()],
            [n for n, _ in s.named_children()], type(s[-1]).__name__]


def module_repr(T):  # test_repr
    return [repr(T.nn.Sequential(T.nn.Linear(2, 3), T.nn.ReLU(), T.nn.Dropout(0.1),
                                 T.nn.Conv2d(1, 2, 3, stride=2, padding=1),
                                 T.nn.BatchNorm2d(4), T.nn.LayerNorm(3), T.nn.Embedding(4, 2)))]


def train_eval(T):  # test_train_eval
    m = _mlp(T)
    m.eval()
    out = m(T.ones(2, 3))
    m.train()
    return [out, m.training, m[2].training, m.eval() is m, m[2].training]


def batchnorm_running_stats(T):  # test_batchnorm_update_stats / momentum=None (average)
    bn = T.nn.BatchNorm1d(3, momentum=0.2)
    x = T.arange(12.0).reshape(4, 3)
    y = bn(x)
    bn.eval()
    z = bn(x)
    avg = T.nn.BatchNorm1d(3, momentum=None)
    avg(x)
    avg(x * 2)
    return [y, z, bn.running_mean, bn.running_var, bn.num_batches_tracked,
            avg.running_mean, avg.running_var]


def requires_grad_and_double(T):  # test_requires_grad_ / test_to / test_apply
    m = T.nn.Linear(2, 2)
    m.requires_grad_(False)
    frozen = [m.weight.requires_grad, m.bias.requires_grad]
    m.requires_grad_(True)
    m.double()
    names = []
    m.apply(lambda mod: names.append(type(mod).__name__))
    return frozen + [m.weight.dtype, names, m.weight.requires_grad, type(m.weight).__name__]


def zero_grad_modes(T):  # test_zero_grad
    m = T.nn.Linear(2, 3)
    m(T.ones(1, 2)).sum().backward()
    m.zero_grad()
    first = m.weight.grad
    m(T.ones(1, 2)).sum().backward()
    m.zero_grad(set_to_none=False)
    return [first, m.weight.grad]


# ------------------------------------------------------------------ state_dict


def load_state_dict_strict_error(T):  # test_load_state_dict (missing and unexpected keys)
    m = T.nn.Linear(2, 3)
    sd = m.state_dict()
    sd["extra"] = T.ones(1)
    del sd["bias"]
    m.load_state_dict(sd)
    return []


def load_state_dict_not_strict(T):  # test_load_state_dict (strict=False reports the keys)
    m = T.nn.Linear(2, 3)
    r = m.load_state_dict({"weight": T.ones(3, 2), "extra": T.ones(1)}, strict=False)
    return [sorted(r.missing_keys), sorted(r.unexpected_keys), m.weight]


def load_state_dict_shape_error(T):  # test_load_state_dict (size mismatch)
    T.nn.Linear(2, 3).load_state_dict({"weight": T.ones(2, 2), "bias": T.ones(3)})
    return []


def state_dict_shares_storage(T):  # test_state_dict (detached aliases unless keep_vars)
    m = T.nn.Linear(2, 3)
    sd = m.state_dict()
    sd["weight"].fill_(1.0)
    return [m.weight.detach(), sd["weight"].requires_grad,
            m.state_dict(keep_vars=True)["weight"].requires_grad]


def registration_errors(T):  # test_register_parameter / test_register_buffer errors
    out = []
    for register in (lambda m: m.register_parameter("a.b", T.nn.Parameter(T.ones(1))),
                     lambda m: m.register_buffer("", T.ones(1)),
                     lambda m: m.register_buffer("weight", T.ones(1)),
                     lambda m: getattr(m, "nothing")):
        try:
            register(T.nn.Linear(1, 1))
        except (KeyError, AttributeError) as e:
            out.append(type(e).__name__)
    return out


# ------------------------------------------------------------------ hooks


def forward_hooks_and_removal(T):  # test_module_hooks.py: test_forward_hooks / remove
    m = _ones_linear(T)
    h1 = m.register_forward_pre_hook(lambda mod, inp: (inp[0] * 2,))
    h2 = m.register_forward_hook(lambda mod, inp, out: out + 1)
    a = m(T.ones(1, 2))
    h1.remove()
    b = m(T.ones(1, 2))
    h2.remove()
    return [a, b, m(T.ones(1, 2))]


def forward_hooks_with_kwargs(T):  # test_module_hooks.py: test_forward_pre_hook_with_kwargs
    m = _ones_linear(T)
    m.register_forward_pre_hook(lambda mod, args, kwargs: ((args[0] * 3,), kwargs),
                                with_kwargs=True)
    m.register_forward_hook(lambda mod, args, kwargs, out: out * 2, with_kwargs=True)
    m.register_forward_hook(lambda mod, args, out: out - 1, prepend=True)
    return [m(T.ones(1, 2))]


def forward_pre_hook_bad_return_error(T):  # with_kwargs: must return (args, kwargs)
    m = _ones_linear(T)
    m.register_forward_pre_hook(lambda mod, args, kwargs: args, with_kwargs=True)
    return [m(T.ones(1, 2))]


def always_call_hook_runs_on_error(T):  # test_module_hooks.py: test_always_called_forward_hooks
    log = []
    m = _ones_linear(T)
    m.register_forward_hook(lambda mod, args, out: log.append("always"), always_call=True)
    m.register_forward_hook(lambda mod, args, out: log.append("normal"))
    try:
        m(T.ones(1, 3))
    except RuntimeError:
        log.append("raised")
    return [log]


def full_backward_hook_sees_module_grads(T):  # test_module_hooks.py: test_full_backward_hooks
    log = []
    m = _ones_linear(T)
    m.register_full_backward_hook(lambda mod, gi, go: log.append(list(gi) + list(go)))
    x = T.ones(1, 2, requires_grad=True)
    (m(x).sum() + (x * 7).sum()).backward()  # x's other use is not the module's grad_input
    return log[0] + [x.grad]


def full_backward_hook_replaces_grad_input(T):
    m = _ones_linear(T)
    m.register_full_backward_hook(lambda mod, gi, go: (gi[0] * 5,))
    x = T.ones(1, 2, requires_grad=True)
    m(x).sum().backward()
    return [x.grad, m.weight.grad]


def full_backward_pre_hook_replaces_grad_output(T):  # test_full_backward_pre_hooks
    m = _ones_linear(T)
    m.register_full_backward_pre_hook(lambda mod, go: (go[0] * 2,))
    x = T.ones(1, 2, requires_grad=True)
    m(x).sum().backward()
    return [x.grad, m.weight.grad]


class _TwoOutputs:
    @staticmethod
    def make(T):
        class TwoOutputs(T.nn.Module):
            def forward(self, a, b, scale=1.0):
                return a * b * scale, (a + 1).sum()
        return TwoOutputs()


def backward_hooks_multiple_inputs_outputs(T):  # non-grad input, unused output, kwargs
    log = []
    m = _TwoOutputs.make(T)
    m.register_full_backward_pre_hook(lambda mod, go: log.append(["pre", list(go)]))
    m.register_full_backward_hook(lambda mod, gi, go: log.append(["full", list(gi), list(go)]))
    a = T.ones(2, requires_grad=True)
    o1, _ = m(a, T.full((2,), 3.0), scale=2.0)
    o1.sum().backward()
    return log + [a.grad]


def backward_hook_non_tensor_argument(T):
    sizes = []

    class Scale(T.nn.Module):
        def forward(self, x, s):
            return x * s
    m = Scale()
    m.register_full_backward_hook(lambda mod, gi, go: sizes.append([len(gi), gi[1]]))
    m(T.ones(2, requires_grad=True), 3.0).sum().backward()
    return sizes


def backward_hook_wrong_count_error(T):
    m = _ones_linear(T)
    m.register_full_backward_hook(lambda mod, gi, go: (gi[0], gi[0]))
    m(T.ones(1, 2, requires_grad=True)).sum().backward()
    return []


def backward_hook_without_input_grads(T):  # grad_input is all None (and a warning)
    log = []
    m = _ones_linear(T)
    m.register_full_backward_hook(lambda mod, gi, go: log.append([list(gi), list(go)]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m(T.ones(1, 2)).sum().backward()
    return log + [m.weight.grad]


def backward_hook_removed(T):
    log = []
    m = _ones_linear(T)
    h = m.register_full_backward_hook(lambda mod, gi, go: log.append(1))
    h.remove()
    m(T.ones(1, 2, requires_grad=True)).sum().backward()
    return [log, len(m._backward_hooks)]


# ------------------------------------------------------------------ layers, losses, errors


def cross_entropy_variants(T):  # test_cross_entropy_loss (ignore_index, smoothing, weights)
    x = T.linspace(-1, 1, 12).reshape(4, 3).requires_grad_()
    t = T.tensor([0, 2, 1, -100])
    F = T.nn.functional
    losses = [F.cross_entropy(x, t, ignore_index=-100, label_smoothing=0.1),
              T.nn.CrossEntropyLoss(weight=T.tensor([1.0, 2.0, 0.5]))(x, T.tensor([0, 2, 1, 1])),
              F.cross_entropy(x, T.softmax(T.arange(12.0).reshape(4, 3), 1))]
    sum(losses).backward()
    return losses + [x.grad]


def elementwise_losses(T):  # test_loss_equal_input_target_shape and friends
    a = T.linspace(-2, 2, 6).reshape(2, 3).requires_grad_()
    b = T.linspace(0.1, 0.9, 6).reshape(2, 3)
    F = T.nn.functional
    ls = [F.l1_loss(a, b), F.smooth_l1_loss(a, b, beta=0.5), F.huber_loss(a, b, delta=0.7),
          F.binary_cross_entropy_with_logits(a, b, pos_weight=T.tensor([1.0, 2.0, 3.0])),
          F.binary_cross_entropy(a.sigmoid(), b), F.kl_div(a.log_softmax(1), b,
                                                           reduction="batchmean")]
    sum(ls).backward()
    return ls + [a.grad]


def norms_float64(T):  # test_LayerNorm / test_GroupNorm gradients
    x = T.linspace(-2, 2, 24, dtype=T.float64).reshape(2, 4, 3).requires_grad_()
    ln, gn = T.nn.LayerNorm(3).double(), T.nn.GroupNorm(2, 4).double()
    y = ln(x).sum() + gn(x).pow(2).sum()
    y.backward()
    return [y, x.grad, ln.weight.grad, gn.bias.grad]


def dropout_in_eval_is_identity(T):
    d = T.nn.Dropout(0.3)
    d.eval()
    return [d(T.ones(3)), T.nn.functional.dropout(T.ones(3), 0.5, training=False)]


def dropout_probability_error(T):
    return [T.nn.Dropout(1.5)]


def linear_shape_error(T):
    return [T.nn.Linear(3, 2)(T.ones(2, 4))]


def conv_channels_error(T):
    return [T.nn.Conv2d(3, 2, 3)(T.ones(1, 2, 5, 5))]


def embedding_index_error(T):
    return [T.nn.Embedding(3, 2)(T.tensor([3]))]


def nll_target_out_of_bounds_error(T):
    return [T.nn.functional.nll_loss(T.zeros(2, 3), T.tensor([0, 3]))]


PROGRAMS = programs_of(globals())


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__)
def test_program_matches_torch(program):
    run_program(program)


# ------------------------------------------------------------------ regressions without torch


def test_full_backward_hooks_see_the_module_boundary():
    """grad_output is d(loss)/d(out) = 1; grad_input is what flows through the module only
    (W^T @ 1 = 2), not x's total gradient (2 + 7); the pre-hook's doubling reaches both."""
    log = []
    m = _ones_linear(mtc)
    m.register_full_backward_pre_hook(lambda mod, go: (go[0] * 2,))
    m.register_full_backward_hook(lambda mod, gi, go: log.append((gi[0].numpy(), go[0].numpy())))
    x = mtc.ones(1, 2, requires_grad=True)
    (m(x).sum() + (x * 7).sum()).backward()
    (gi,), (go,) = [log[0][0]], [log[0][1]]
    np.testing.assert_array_equal(go, [[2.0, 2.0]])
    np.testing.assert_array_equal(gi, [[4.0, 4.0]])
    np.testing.assert_array_equal(x.grad.numpy(), [[11.0, 11.0]])
    np.testing.assert_array_equal(m.weight.grad.numpy(), np.full((2, 2), 2.0))


def test_a_module_with_backward_hooks_runs_eagerly_under_compile():
    """The compiler breaks the graph at the call of a module with backward hooks (as torch
    without compiled autograd) and guards the hook tables, so a hook registered after compiling
    still runs, and registering one leaves no trace in the forward pre-hooks."""
    m = _ones_linear(mtc)
    f = mtc.compile(lambda x: m(x).relu() * 2, backend="aot_eager")
    x = mtc.ones(1, 2, requires_grad=True)
    f(x).sum().backward()
    m.register_full_backward_hook(lambda mod, gi, go: (gi[0] * 5,))
    x2 = mtc.ones(1, 2, requires_grad=True)
    f(x2).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[4.0, 4.0]])
    np.testing.assert_array_equal(x2.grad.numpy(), [[20.0, 20.0]])
    assert not m._forward_pre_hooks


def test_with_kwargs_flags_leave_with_their_hook():
    m = _ones_linear(mtc)
    h = m.register_forward_hook(lambda mod, a, k, out: out, with_kwargs=True, always_call=True)
    h.remove()
    assert not m._forward_hooks_with_kwargs and not m._forward_hooks_always_called
