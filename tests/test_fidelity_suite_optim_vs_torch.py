"""Optimizers against torch: programs modelled on pytorch's ``test/test_optim.py`` (and the
OptimizerInfo samples of ``torch/testing/_internal/common_optimizers.py``).

Each program trains two float64 parameters for several steps and returns every step's values,
so the update rules (momentum, nesterov, weight decay, amsgrad, maximize, decoupled decay, param
groups, tensor learning rates) are compared step by step with torch's (``tests/fidelity.py``);
bad hyper-parameters must raise torch's error.  Without torch, the regression tests at the end
compare with a numpy transcription of torch's formulas.
"""

from __future__ import annotations

import numpy as np
import pytest

import minitorch_compile as mtc

from .fidelity import programs_of, run_program

pytestmark = pytest.mark.torch


def _trajectory(T, make, steps=6):
    w = T.nn.Parameter(T.linspace(-1, 1, 6, dtype=T.float64).reshape(2, 3))
    b = T.nn.Parameter(T.linspace(0.5, 1, 2, dtype=T.float64))
    opt = make(T, [w, b])
    x = T.linspace(-2, 3, 9, dtype=T.float64).reshape(3, 3)
    out = []
    for i in range(steps):
        opt.zero_grad()
        loss = ((x @ w.t() + b) ** 2).sum() * (0.1 * (i + 1))
        loss.backward()
        opt.step()
        out += [w.detach().clone(), b.detach().clone()]
    return out


def sgd(T):  # test_optim.py: SGD, the OptimizerInfo defaults
    return _trajectory(T, lambda T, p: T.optim.SGD(p, lr=0.01))


def sgd_momentum(T):
    return _trajectory(T, lambda T, p: T.optim.SGD(p, lr=0.01, momentum=0.9))


def sgd_nesterov_weight_decay(T):
    return _trajectory(T, lambda T, p: T.optim.SGD(p, lr=0.01, momentum=0.9, nesterov=True,
                                                   weight_decay=0.1))


def sgd_dampening_maximize(T):
    return _trajectory(T, lambda T, p: T.optim.SGD(p, lr=0.01, momentum=0.5, dampening=0.3,
                                                   maximize=True))


def sgd_tensor_lr(T):  # OptimizerInfo: lr given as a tensor
    return _trajectory(T, lambda T, p: T.optim.SGD(p, lr=T.tensor(0.01), momentum=0.9))


def adam(T):
    return _trajectory(T, lambda T, p: T.optim.Adam(p, lr=0.01))


def adam_weight_decay_amsgrad(T):
    return _trajectory(T, lambda T, p: T.optim.Adam(p, lr=0.01, weight_decay=0.1, amsgrad=True,
                                                    betas=(0.8, 0.9)))


def adam_tensor_lr(T):
    return _trajectory(T, lambda T, p: T.optim.Adam(p, lr=T.tensor(0.01)))


def adam_decoupled_weight_decay(T):  # Adam(decoupled_weight_decay=True) is AdamW
    return _trajectory(T, lambda T, p: T.optim.Adam(p, lr=0.01, weight_decay=0.2,
                                                    decoupled_weight_decay=True))


def adamw(T):  # test_optim.py: AdamW (default weight_decay 1e-2)
    return _trajectory(T, lambda T, p: T.optim.AdamW(p, lr=0.01))


def adamw_amsgrad_maximize(T):
    return _trajectory(T, lambda T, p: T.optim.AdamW(p, lr=0.02, amsgrad=True, maximize=True,
                                                     weight_decay=0.3))


def sgd_param_groups(T):  # test_optim.py: per-group hyper-parameters
    return _trajectory(T, lambda T, p: T.optim.SGD(
        [{"params": [p[0]]}, {"params": [p[1]], "lr": 0.1, "momentum": 0.5}], lr=0.01))


def adam_param_groups(T):
    return _trajectory(T, lambda T, p: T.optim.Adam(
        [{"params": [p[0]], "weight_decay": 0.5}, {"params": [p[1]]}], lr=0.05))


def param_without_grad_is_skipped(T):  # test_optim.py: params without .grad keep no state
    a, b = T.nn.Parameter(T.ones(2)), T.nn.Parameter(T.ones(2))
    opt = T.optim.SGD([a, b], lr=0.1, momentum=0.9)
    (a * 2).sum().backward()
    opt.step()
    opt.step()
    return [a, b, len(opt.state), "momentum_buffer" in opt.state[a]]


def state_dict_layout(T):  # test_state_dict: keys, indices, the 0-d float step
    a = T.nn.Parameter(T.ones(2))
    opt = T.optim.Adam([a], lr=0.1)
    (a * 2).sum().backward()
    opt.step()
    sd = opt.state_dict()
    group = sd["param_groups"][0]
    return [sorted(sd), sorted(sd["state"][0]), group["params"], sorted(group),
            sd["state"][0]["step"], repr(T.optim.AdamW([a]))]


def load_state_dict_then_step(T):  # test_load_state_dict (hyper-parameters come along)
    a = T.nn.Parameter(T.ones(2))
    opt = T.optim.Adam([a], lr=0.1)
    (a * 2).sum().backward()
    opt.step()
    b = T.nn.Parameter(T.ones(2))
    opt2 = T.optim.Adam([b], lr=0.5)
    opt2.load_state_dict(opt.state_dict())
    b.grad = T.ones(2)
    opt2.step()
    return [b, opt2.param_groups[0]["lr"]]


def add_param_group_then_step(T):  # test_add_param_group
    a, b = T.nn.Parameter(T.ones(2)), T.nn.Parameter(T.ones(2))
    opt = T.optim.SGD([a], lr=0.1, momentum=0.9)
    opt.add_param_group({"params": b, "lr": 0.5})
    (a + b).sum().backward()
    opt.step()
    return [a, b, opt.param_groups[1]["momentum"], len(opt.param_groups)]


def step_with_closure(T):  # test_closure
    a = T.nn.Parameter(T.ones(2))
    opt = T.optim.SGD([a], lr=0.1)

    def closure():
        opt.zero_grad()
        loss = (a ** 2).sum()
        loss.backward()
        return loss
    return [opt.step(closure), a]


def zero_grad_to_none_and_to_zero(T):  # test_zero_grad
    a = T.nn.Parameter(T.ones(2))
    opt = T.optim.SGD([a], lr=0.1)
    a.sum().backward()
    opt.zero_grad()
    first = a.grad
    a.sum().backward()
    opt.zero_grad(set_to_none=False)
    return [first, a.grad]


def clip_grad_norm_and_value(T):  # test_nn.py: test_clip_grad_norm / test_clip_grad_value
    a, b = T.nn.Parameter(T.arange(4.0)), T.nn.Parameter(T.ones(3))
    (a * a).sum().backward()
    (b * 3).sum().backward()
    norm = T.nn.utils.clip_grad_norm_([a, b], 1.0)
    T.nn.utils.clip_grad_value_([b], 0.5)
    return [norm, a.grad, b.grad]


def _schedule(T, make, epochs=12, lr=0.1):
    """The rates a scheduler sets over ``epochs`` epochs (two groups), after each
    ``optimizer.step()``, and the parameter they train."""
    w = T.nn.Parameter(T.ones(2, dtype=T.float64))
    b = T.nn.Parameter(T.ones(1, dtype=T.float64))
    opt = T.optim.SGD([{"params": [w]}, {"params": [b], "lr": lr * 3}], lr=lr, momentum=0.5)
    sched = make(T, opt)
    rates = [sched.get_last_lr()]
    for _ in range(epochs):
        opt.zero_grad()
        ((w * w).sum() + b.sum()).backward()
        opt.step()
        sched.step()
        rates.append(sched.get_last_lr())
    return [rates, w, b, sorted(opt.param_groups[0]), sched.last_epoch]


def step_lr(T):  # test_lrscheduler.py: test_step_lr
    return _schedule(T, lambda T, o: T.optim.lr_scheduler.StepLR(o, step_size=3, gamma=0.5))


def multi_step_lr(T):  # test_multi_step_lr (a repeated milestone decays twice)
    return _schedule(T, lambda T, o: T.optim.lr_scheduler.MultiStepLR(o, [2, 5, 5, 9], 0.3))


def exponential_lr(T):
    return _schedule(T, lambda T, o: T.optim.lr_scheduler.ExponentialLR(o, gamma=0.8))


def linear_lr(T):  # test_linear_lr (warm-up, then constant)
    return _schedule(T, lambda T, o: T.optim.lr_scheduler.LinearLR(o, start_factor=0.25,
                                                                   total_iters=4))


def cosine_annealing_lr(T):  # test_cos_anneal_lr (past T_max the cosine climbs back)
    return _schedule(T, lambda T, o: T.optim.lr_scheduler.CosineAnnealingLR(o, T_max=5,
                                                                            eta_min=0.01))


def lambda_lr(T):  # test_lambda_lr (one lambda per group)
    return _schedule(T, lambda T, o: T.optim.lr_scheduler.LambdaLR(
        o, [lambda e: 0.9 ** e, lambda e: 1.0 / (e + 1)]))


def scheduler_state_dict_resume(T):  # test_step_lr_state_dict / resuming a schedule
    w = T.nn.Parameter(T.ones(2))
    opt = T.optim.SGD([w], lr=1.0)
    sched = T.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    for _ in range(3):
        opt.step()
        sched.step()
    state = sched.state_dict()
    opt2 = T.optim.SGD([w], lr=1.0)
    opt2.load_state_dict(opt.state_dict())
    sched2 = T.optim.lr_scheduler.StepLR(opt2, step_size=5, gamma=0.1)
    sched2.load_state_dict(state)
    opt2.step()
    sched2.step()
    return [sorted(state), sched2.get_last_lr(), sched2.step_size, state["base_lrs"]]


def scheduler_epoch_argument(T):  # step(epoch): the closed form (deprecated in torch)
    import warnings

    w = T.nn.Parameter(T.ones(2))
    opt = T.optim.SGD([w], lr=1.0)
    sched = T.optim.lr_scheduler.MultiStepLR(opt, [2, 4], 0.5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sched.step(5)
    return [sched.get_last_lr(), sched.last_epoch]


def _error(make):
    def program(T):
        return [make(T, [T.nn.Parameter(T.ones(1))])]
    return program


negative_lr_error = _error(lambda T, p: T.optim.SGD(p, lr=-1))
negative_momentum_error = _error(lambda T, p: T.optim.SGD(p, lr=0.1, momentum=-1))
nesterov_without_momentum_error = _error(lambda T, p: T.optim.SGD(p, lr=0.1, nesterov=True))
beta_one_error = _error(lambda T, p: T.optim.Adam(p, betas=(1.0, 0.9)))
negative_eps_error = _error(lambda T, p: T.optim.AdamW(p, eps=-1))
empty_params_error = _error(lambda T, p: T.optim.SGD([], lr=0.1))
tensor_as_params_error = _error(lambda T, p: T.optim.SGD(p[0], lr=0.1))
non_leaf_param_error = _error(lambda T, p: T.optim.SGD([p[0] * 2], lr=0.1))
scheduler_without_optimizer_error = _error(
    lambda T, p: T.optim.lr_scheduler.StepLR(p, step_size=2))
linear_lr_bad_factor_error = _error(
    lambda T, p: T.optim.lr_scheduler.LinearLR(T.optim.SGD(p, lr=0.1), start_factor=0))


def resume_without_initial_lr_error(T):  # torch's KeyError (caught: tests/fidelity.py takes an
    try:                                  # uncaught KeyError for an internal error)
        T.optim.lr_scheduler.ExponentialLR(T.optim.SGD([T.nn.Parameter(T.ones(1))], lr=0.1),
                                           0.5, last_epoch=3)
    except KeyError as e:
        return ["KeyError", str(e).split(" when")[0]]
    return []


same_param_in_two_groups_error = _error(
    lambda T, p: T.optim.SGD([{"params": p}, {"params": p}], lr=0.1))

for _name, _program in list(globals().items()):
    if getattr(_program, "__name__", None) == "program":  # the _error(...) ones: test ids
        _program.__name__ = _name

PROGRAMS = programs_of(globals())


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__)
def test_program_matches_torch(program):
    run_program(program)


# ------------------------------------------------------------------ regressions without torch


def _adamw_numpy(p, grads, lr, wd, b1=0.9, b2=0.999, eps=1e-8):
    """torch's AdamW, transcribed: decay the weight, then the bias-corrected Adam step."""
    m = np.zeros_like(p)
    v = np.zeros_like(p)
    for t, g in enumerate(grads, start=1):
        p = p * (1 - lr * wd)
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        p = p - lr / (1 - b1**t) * m / (np.sqrt(v) / np.sqrt(1 - b2**t) + eps)
    return p


@pytest.mark.parametrize("tensor_lr", [False, True])
def test_adamw_matches_the_numpy_transcription(tensor_lr):
    grads = [np.array([0.5, -1.0, 2.0]) * k for k in (1, 3, -2, 0.5)]
    p = mtc.nn.Parameter(mtc.tensor([1.0, 2.0, -3.0], dtype=mtc.float64))
    lr = mtc.tensor(0.05) if tensor_lr else 0.05
    opt = mtc.optim.AdamW([p], lr=lr, weight_decay=0.1)
    for g in grads:
        p.grad = mtc.tensor(g)
        opt.step()
    np.testing.assert_allclose(p.detach().numpy(),
                               _adamw_numpy(np.array([1.0, 2.0, -3.0]), grads, 0.05, 0.1),
                               rtol=1e-6)
    assert opt.param_groups[0]["decoupled_weight_decay"] is True


def test_differentiable_is_refused_not_ignored():
    with pytest.raises(NotImplementedError, match="differentiable=True"):
        mtc.optim.SGD([mtc.nn.Parameter(mtc.ones(1))], lr=0.1, differentiable=True)


def test_schedules_follow_their_closed_forms():
    """Chainable rates equal the closed forms, epoch by epoch (no torch needed)."""
    import math

    sched_cls = mtc.optim.lr_scheduler
    cases = [(lambda o: sched_cls.StepLR(o, 3, 0.5), lambda e: 0.5 ** (e // 3)),
             (lambda o: sched_cls.ExponentialLR(o, 0.8), lambda e: 0.8 ** e),
             (lambda o: sched_cls.LinearLR(o, 0.25, 1.0, 4), lambda e: 0.25 + 0.75 * min(e, 4) / 4),
             (lambda o: sched_cls.CosineAnnealingLR(o, 5, 0.0),
              lambda e: (1 + math.cos(math.pi * e / 5)) / 2)]
    for make, factor in cases:
        opt = mtc.optim.SGD([mtc.nn.Parameter(mtc.ones(1))], lr=0.1)
        sched = make(opt)
        for epoch in range(1, 6):
            opt.step()
            sched.step()
            assert math.isclose(sched.get_last_lr()[0], 0.1 * factor(epoch), rel_tol=1e-12,
                                abs_tol=1e-15), (sched, epoch)
