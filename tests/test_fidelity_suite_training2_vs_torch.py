"""More training-code idioms against torch (the second half of
``test_fidelity_suite_training_vs_torch.py``): in-place ops on views and on saved tensors
(version-counter errors), leaf checks, ``unique``, ``Tensor.type``, gradient clipping,
optimizer and scheduler state, and the learning-rate schedules — programs modelled on
pytorch's ``test/test_autograd.py``, ``test/test_nn.py`` and ``test/test_optim.py``.
"""

from __future__ import annotations

import warnings

import pytest

from .fidelity import arange_leaf, programs_of, run_program

pytestmark = pytest.mark.torch


_x = arange_leaf


# ------------------------------------------------------------------ in place and versions


def inplace_on_leaf_requiring_grad_errors(T):  # test_leaf_assignment
    x = _x(T)
    x.add_(1)
    return [x]


def inplace_on_plain_leaf_errors(T):
    x = T.ones(2, 3, requires_grad=True)
    x.mul_(2)
    return [x]


def data_write_does_not_bump_version(T):  # .data escapes autograd
    x = T.ones(3, requires_grad=True)
    y = x * x
    x.data.mul_(2)
    y.sum().backward()
    return [x.grad, x, x.data.requires_grad]


def backward_with_inputs_argument(T):  # test_backward_with_inputs
    a, b = _x(T), _x(T)
    (a * b).sum().backward(inputs=[a])
    return [a.grad, b.grad is None]


def autograd_backward_of_two_roots(T):
    a = _x(T)
    T.autograd.backward([(a * 2).sum(), (a * a).sum()], [T.tensor(1.0), T.tensor(0.5)])
    return [a.grad]


def grad_accumulates_across_backwards_then_zero(T):
    w, opt = _sgd(T)
    (w * 2).sum().backward()
    (w * 3).sum().backward()
    g = w.grad.clone()
    opt.zero_grad(set_to_none=False)
    return [g, w.grad]


def zero_grad_sets_none(T):
    w, opt = _sgd(T)
    (w * 2).sum().backward()
    opt.zero_grad()
    return [w.grad is None]


def inplace_on_view_of_leaf_errors(T):
    x = _x(T)
    x[0].mul_(2)
    return [x]


def modified_saved_tensor_errors(T):  # test_inplace_on_view_saved_output
    x = _x(T)
    y = x * 2
    z = y * y
    y.add_(1)
    z.sum().backward()
    return [x.grad]


def modified_saved_output_errors(T):
    x = _x(T)
    y = x.exp()
    y.mul_(2)
    y.sum().backward()
    return [x.grad]


def inplace_on_unsaved_intermediate_is_fine(T):
    x = _x(T)
    y = x * 2
    y.add_(1)
    (y * 3).sum().backward()
    return [x.grad, y]


def inplace_through_view_of_intermediate(T):  # test_inplace_on_view_backward
    x = _x(T)
    y = x * 1
    y[:, 0].mul_(3)
    y.sum().backward()
    return [x.grad, type(y.grad_fn).__name__]


def view_sees_inplace_on_base(T):
    x = _x(T)
    y = x * 1
    v = y[1]
    y.mul_(2)
    (v * v).sum().backward()
    return [v, x.grad]


def version_counter_counts_writes(T):
    x = T.ones(3)
    v0 = x._version
    x.add_(1)
    x[0] = 5
    return [v0, x._version, x[1:]._version]


def inplace_relu_then_backward(T):
    x = _x(T) - 3
    y = x * 1
    T.nn.functional.relu(y, inplace=True)
    y.sum().backward()
    return [y]


def leaf_is_leaf_and_grad_of_non_leaf_warns(T):
    x = _x(T)
    y = x * 2
    y.sum().backward()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        g = y.grad
    return [x.is_leaf, y.is_leaf, g is None]


def set_grad_of_wrong_shape_errors(T):
    x = _x(T)
    x.grad = T.ones(3)
    return []


def set_grad_of_wrong_dtype_errors(T):
    x = _x(T)
    x.grad = T.ones(2, 3, dtype=T.float64)
    return []


# ------------------------------------------------------------------ unique and type()


def unique_sorted_with_inverse_and_counts(T):
    x = T.tensor([3, 1, 2, 3, 1, 5])
    u, inv, cnt = x.unique(return_inverse=True, return_counts=True)
    return [u, inv, cnt, x.unique()]


def unique_float_2d_flattens(T):
    x = T.tensor([[1.5, 0.5], [0.5, 2.0]])
    return list(T.unique(x, return_inverse=True))


def unique_along_dim(T):
    x = T.tensor([[1, 2], [0, 1], [1, 2], [0, 1], [3, 3]])
    return list(T.unique(x, dim=0, return_inverse=True, return_counts=True)) + \
        [x.unique(dim=1)]


def unique_of_bool_and_scalar(T):
    return [T.tensor([True, False, True]).unique(), T.unique(T.tensor(4.0)),
            T.unique(T.tensor(4.0), return_inverse=True)[1]]


def unique_bad_dim_errors(T):
    return [T.unique(T.ones(2, 2), dim=2)]


def tensor_type_names(T):
    return [T.ones(2).type(), T.ones(2, dtype=T.int64).type(), T.ones(1, dtype=T.bool).type(),
            T.ones(2, dtype=T.float64).type()]


def tensor_type_converts(T):
    x = T.tensor([1.7, -2.2])
    return [x.type(T.int64), x.type("torch.DoubleTensor"), x.type(T.float32) is x]


# ------------------------------------------------------------------ clipping


def clip_grad_norm_total_norm(T):  # test_clip_grad_norm
    a, b = _x(T), _x(T, 3)
    (a * a).sum().backward()
    (b * 3).sum().backward()
    total = T.nn.utils.clip_grad_norm_([a, b], max_norm=1.0)
    return [total, a.grad, b.grad]


def clip_grad_norm_inf_norm(T):
    a = _x(T)
    (a * a).sum().backward()
    total = T.nn.utils.clip_grad_norm_(a, max_norm=2.0, norm_type=float("inf"))
    return [total, a.grad]


def clip_grad_value(T):
    a = _x(T)
    (a * a).sum().backward()
    T.nn.utils.clip_grad_value_([a], clip_value=5.0)
    return [a.grad]


# ------------------------------------------------------------------ optimizer / scheduler state


def _sgd(T, lr=0.1):
    w = T.nn.Parameter(T.ones(2))
    return w, T.optim.SGD([w], lr=lr, momentum=0.9)


def optimizer_state_dict_round_trip(T):  # test_state_dict
    w, opt = _sgd(T)
    for _ in range(2):
        opt.zero_grad()
        (w * w).sum().backward()
        opt.step()
    w2, opt2 = _sgd(T)
    opt2.load_state_dict(opt.state_dict())
    opt2.zero_grad()
    (w2 * w2).sum().backward()
    opt2.step()
    return [w2, opt2.state[w2]["momentum_buffer"], opt2.param_groups[0]["momentum"]]


def scheduler_state_dict_round_trip(T):
    w, opt = _sgd(T)
    s = T.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    for _ in range(3):
        opt.step()
        s.step()
    w2, opt2 = _sgd(T)
    s2 = T.optim.lr_scheduler.StepLR(opt2, step_size=2, gamma=0.5)
    s2.load_state_dict(s.state_dict())
    opt2.step()
    s2.step()
    return [s2.last_epoch, s2.get_last_lr(), opt2.param_groups[0]["lr"]]


def _rates(T, make, steps, metric=None):
    w, opt = _sgd(T, lr=1.0)
    sched = make(opt, T.optim.lr_scheduler)
    out = [opt.param_groups[0]["lr"]]
    for i in range(steps):
        opt.step()
        sched.step() if metric is None else sched.step(metric[i])
        out.append(opt.param_groups[0]["lr"])
    return out + [sched.get_last_lr()]


def sequential_lr_warmup_then_cosine(T):
    return _rates(T, lambda o, L: L.SequentialLR(
        o, [L.LinearLR(o, 0.1, total_iters=3), L.CosineAnnealingLR(o, T_max=4)],
        milestones=[3]), 9)


def sequential_lr_three_schedules(T):
    return _rates(T, lambda o, L: L.SequentialLR(
        o, [L.ConstantLR(o, 0.5, total_iters=2), L.ExponentialLR(o, 0.9),
            L.StepLR(o, 2, 0.5)], milestones=[2, 5]), 9)


def chained_scheduler_multiplies(T):
    return _rates(T, lambda o, L: L.ChainedScheduler(
        [L.ConstantLR(o, 0.5, total_iters=3), L.ExponentialLR(o, 0.9)]), 6)


def reduce_lr_on_plateau_min(T):
    metric = [1.0, 0.9, 0.95, 0.95, 0.95, 0.8, 0.85, 0.85, 0.85, 0.85]
    return _rates(T, lambda o, L: L.ReduceLROnPlateau(o, patience=1, factor=0.5,
                                                      cooldown=1), 10, metric)


def reduce_lr_on_plateau_max_abs_min_lr(T):
    metric = [1.0, 1.0, 1.0, 1.0, 2.0, 2.0, 2.0, 2.0, 2.0]
    return _rates(T, lambda o, L: L.ReduceLROnPlateau(
        o, mode="max", threshold_mode="abs", threshold=0.5, patience=0, min_lr=0.2), 9, metric)


def one_cycle_sgd_momentum(T):
    w, opt = _sgd(T)
    s = T.optim.lr_scheduler.OneCycleLR(opt, max_lr=1.0, total_steps=8)
    out = []
    for _ in range(7):
        opt.step()
        s.step()
        out += [opt.param_groups[0]["lr"], opt.param_groups[0]["momentum"]]
    return out


def one_cycle_three_phase_linear(T):
    return _rates(T, lambda o, L: L.OneCycleLR(o, max_lr=2.0, epochs=2, steps_per_epoch=5,
                                               three_phase=True, anneal_strategy="linear"), 9)


def one_cycle_too_many_steps_errors(T):
    return _rates(T, lambda o, L: L.OneCycleLR(o, max_lr=1.0, total_steps=3), 5)


def cosine_warm_restarts(T):
    return _rates(T, lambda o, L: L.CosineAnnealingWarmRestarts(o, T_0=3, T_mult=2,
                                                                eta_min=0.05), 12)


def polynomial_lr(T):
    return _rates(T, lambda o, L: L.PolynomialLR(o, total_iters=4, power=2.0), 6)


def sequential_lr_wrong_milestones_errors(T):
    return _rates(T, lambda o, L: L.SequentialLR(o, [L.ExponentialLR(o, 0.9)], [1]), 2)


PROGRAMS = programs_of(globals())


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__)
def test_program_matches_torch(program):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run_program(program)
