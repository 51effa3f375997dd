"""Tests for ``mtc.optim``: the update rules, the Optimizer bookkeeping, and training.

The update rules are checked against numpy transcriptions of torch's formulas with hand-fed
gradients (hypothesis varies the hyper-parameters), and — when torch is installed — against
real torch trajectories.  Two small MLPs must actually learn.
"""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitorch_compile as mtc
from minitorch_compile import nn, optim


def _np(t):
    return t.detach().numpy()


# ---------------------------------------------------------------- numpy references


def np_sgd(p, grads, lr, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False,
           maximize=False):
    p, buf, out = p.copy(), None, []
    for g in grads:
        g = -g if maximize else g
        g = g + weight_decay * p
        if momentum:
            buf = g.copy() if buf is None else momentum * buf + (1 - dampening) * g
            g = g + momentum * buf if nesterov else buf
        p = p - lr * g
        out.append(p)
    return out


def np_adam(p, grads, lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, amsgrad=False,
            maximize=False):
    b1, b2 = betas
    p, m, v, vmax, out = p.copy(), 0 * p, 0 * p, 0 * p, []
    for t, g in enumerate(grads, start=1):
        g = -g if maximize else g
        g = g + weight_decay * p
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        vmax = np.maximum(vmax, v)
        denom = np.sqrt(vmax if amsgrad else v) / np.sqrt(1 - b2**t) + eps
        p = p - lr / (1 - b1**t) * m / denom
        out.append(p)
    return out


def _run_with_grads(make_opt, p0, grads):
    """Feed the given gradients to an optimizer over one float64 parameter."""
    p = nn.Parameter(mtc.tensor(p0))
    opt = make_opt([p])
    out = []
    for g in grads:
        p.grad = mtc.tensor(g)
        opt.step()
        out.append(_np(p).copy())
    return out, p, opt


def _problem(steps=5, shape=(3, 2)):
    rng = np.random.default_rng(0)
    return rng.standard_normal(shape), [rng.standard_normal(shape) for _ in range(steps)]


# ---------------------------------------------------------------- update rules


@given(lr=st.sampled_from([0.0, 0.01, 0.5]), momentum=st.sampled_from([0.0, 0.5, 0.9]),
       dampening=st.sampled_from([0.0, 0.3]), weight_decay=st.sampled_from([0.0, 0.1]),
       nesterov=st.booleans(), maximize=st.booleans())
def test_sgd_matches_torch_formula(lr, momentum, dampening, weight_decay, nesterov, maximize):
    if nesterov and (momentum == 0 or dampening != 0):
        return  # rejected by the constructor, tested below
    kw = dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
              nesterov=nesterov, maximize=maximize)
    p0, grads = _problem()
    got, p, opt = _run_with_grads(lambda ps: optim.SGD(ps, **kw), p0, grads)
    for a, b in zip(got, np_sgd(p0, grads, **kw)):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
    assert ("momentum_buffer" in opt.state[p]) == (momentum != 0)
    assert p.is_leaf and p.requires_grad and p._version == len(grads)


@given(lr=st.sampled_from([1e-3, 0.1]), betas=st.sampled_from([(0.9, 0.999), (0.5, 0.9)]),
       eps=st.sampled_from([1e-8, 1e-3]), weight_decay=st.sampled_from([0.0, 0.1]),
       amsgrad=st.booleans(), maximize=st.booleans())
def test_adam_matches_torch_formula(lr, betas, eps, weight_decay, amsgrad, maximize):
    kw = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
              maximize=maximize)
    p0, grads = _problem()
    got, p, opt = _run_with_grads(lambda ps: optim.Adam(ps, **kw), p0, grads)
    for a, b in zip(got, np_adam(p0, grads, **kw)):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    state = opt.state[p]
    assert state["step"].item() == len(grads) and state["step"].dtype is mtc.float32
    assert ("max_exp_avg_sq" in state) == amsgrad
    assert sorted(state) == sorted(["step", "exp_avg", "exp_avg_sq"]
                                   + (["max_exp_avg_sq"] if amsgrad else []))


def test_adam_first_step_moves_each_coordinate_by_lr():
    """Bias correction makes step 1 exactly lr * sign(g) (up to eps), whatever g's scale."""
    p = nn.Parameter(mtc.zeros(3, dtype=mtc.float64))
    p.grad = mtc.tensor([1e-3, -5.0, 200.0], dtype=mtc.float64)
    optim.Adam([p], lr=0.1).step()
    np.testing.assert_allclose(_np(p), [-0.1, 0.1, -0.1], rtol=1e-4)


def test_params_without_grad_are_skipped():
    a, b = nn.Parameter(mtc.ones(2)), nn.Parameter(mtc.ones(2))
    for opt in (optim.SGD([a, b], lr=0.1, momentum=0.9), optim.Adam([a, b], lr=0.1)):
        a.grad = mtc.ones(2)
        opt.step()
        assert b not in opt.state and _np(b).tolist() == [1.0, 1.0]
        assert a in opt.state


def test_step_runs_without_recording_history():
    m = nn.Linear(3, 1)
    opt = optim.SGD(m.parameters(), lr=0.1)
    m(mtc.randn(4, 3)).sum().backward()
    opt.step()
    assert all(p.is_leaf and p.grad_fn is None and p.requires_grad for p in m.parameters())


def test_closure_is_evaluated_with_grad():
    p = nn.Parameter(mtc.tensor([2.0]))
    opt = optim.SGD([p], lr=0.25)

    def closure():
        opt.zero_grad()
        loss = (p * p).sum()
        loss.backward()
        return loss

    with mtc.no_grad():
        loss = opt.step(closure)
    assert loss.item() == 4.0 and _np(p).tolist() == [1.0]


# ---------------------------------------------------------------- validation


@pytest.mark.parametrize("make,match", [
    (lambda p: optim.SGD(p, lr=-1), "Invalid learning rate: -1"),
    (lambda p: optim.SGD(p, momentum=-0.5), "Invalid momentum value: -0.5"),
    (lambda p: optim.SGD(p, weight_decay=-1), "Invalid weight_decay value: -1"),
    (lambda p: optim.SGD(p, nesterov=True), "Nesterov momentum requires a momentum"),
    (lambda p: optim.SGD(p, momentum=0.9, dampening=0.1, nesterov=True), "zero dampening"),
    (lambda p: optim.Adam(p, lr=-0.1), "Invalid learning rate: -0.1"),
    (lambda p: optim.Adam(p, eps=-1), "Invalid epsilon value: -1"),
    (lambda p: optim.Adam(p, betas=(1.0, 0.9)), "Invalid beta parameter at index 0: 1.0"),
    (lambda p: optim.Adam(p, betas=(0.9, -0.1)), "Invalid beta parameter at index 1: -0.1"),
    (lambda p: optim.Adam(p, weight_decay=-1), "Invalid weight_decay value: -1"),
])
def test_hyper_parameter_validation(make, match):
    with pytest.raises(ValueError, match=match):
        make([nn.Parameter(mtc.ones(1))])


def test_param_list_validation():
    p = nn.Parameter(mtc.ones(1))
    with pytest.raises(ValueError, match="empty parameter list"):
        optim.SGD([], lr=0.1)
    with pytest.raises(TypeError, match="iterable of Tensors or dicts"):
        optim.SGD(p, lr=0.1)
    with pytest.raises(TypeError, match="ordered collections"):
        optim.SGD([{"params": {p}}])
    with pytest.raises(TypeError, match="can only optimize Tensors"):
        optim.SGD([p, 3.0])
    with pytest.raises(ValueError, match="non-leaf"):
        optim.SGD([p * 2])
    with pytest.raises(ValueError, match="more than one parameter group"):
        optim.SGD([{"params": [p]}, {"params": [p]}])
    with pytest.warns(UserWarning, match="duplicate parameters"):
        optim.SGD([p, p])


# ---------------------------------------------------------------- bookkeeping


def test_param_groups_and_defaults():
    a, b = nn.Parameter(mtc.ones(2)), nn.Parameter(mtc.ones(2))
    opt = optim.SGD([{"params": [a]}, {"params": b, "lr": 1.0}], lr=0.1, momentum=0.5)
    assert [g["lr"] for g in opt.param_groups] == [0.1, 1.0]
    assert opt.param_groups[1]["params"][0] is b and opt.param_groups[1]["momentum"] == 0.5
    a.grad, b.grad = mtc.ones(2), mtc.ones(2)
    opt.step()
    np.testing.assert_allclose(_np(a), [0.9, 0.9])
    np.testing.assert_allclose(_np(b), [0.0, 0.0])
    c = nn.Parameter(mtc.ones(1))
    opt.add_param_group({"params": [c], "momentum": 0.0})
    assert opt.param_groups[2]["lr"] == 0.1 and opt.param_groups[2]["momentum"] == 0.0
    assert repr(opt).startswith(  # torch's keys, the implementation switches too
        "SGD (\nParameter Group 0\n    dampening: 0\n    differentiable: False\n"
        "    foreach: None\n    fused: None\n    lr: 0.1\n")

    class NeedsLR(optim.Optimizer):
        def __init__(self, params):
            super().__init__(params, {"lr": optim.optimizer.required})

    with pytest.raises(ValueError, match="didn't specify a value of required optimization "
                                         "parameter lr"):
        NeedsLR([c])


def test_zero_grad():
    m = nn.Linear(2, 2)
    opt = optim.Adam(m.parameters())
    m(mtc.randn(3, 2)).sum().backward()
    opt.zero_grad(set_to_none=False)
    assert all(p.grad is not None and not _np(p.grad).any() for p in m.parameters())
    opt.zero_grad()
    assert all(p.grad is None for p in m.parameters())


def _train_steps(model, opt, x, steps):
    for _ in range(steps):
        opt.zero_grad()
        ((model(x) - 1.0) ** 2).mean().backward()
        opt.step()


@pytest.mark.parametrize("make", [
    lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9),
    lambda ps: optim.Adam(ps, lr=0.05, amsgrad=True),
])
def test_state_dict_round_trip_continues_the_same_trajectory(make):
    x = mtc.randn(8, 3)
    a = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
    opt_a = make(a.parameters())
    _train_steps(a, opt_a, x, 3)
    sd = opt_a.state_dict()
    assert sd["param_groups"][0]["params"] == [0, 1, 2, 3]
    assert sorted(sd["state"]) == [0, 1, 2, 3]

    b = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
    b.load_state_dict(a.state_dict())
    opt_b = make(b.parameters())
    opt_b.param_groups[0]["lr"] = 123.0  # overwritten by the loaded hyper-parameters
    opt_b.load_state_dict(sd)
    assert opt_b.param_groups[0]["lr"] == opt_a.param_groups[0]["lr"]
    assert all(p is q for p, q in zip(opt_b.param_groups[0]["params"], b.parameters()))
    for i, p in enumerate(b.parameters()):  # loaded state is copied, never aliased
        for key, v in opt_b.state[p].items():
            assert not np.shares_memory(v._data, sd["state"][i][key]._data)
    _train_steps(a, opt_a, x, 3)
    _train_steps(b, opt_b, x, 3)
    for p, q in zip(a.parameters(), b.parameters()):
        np.testing.assert_array_equal(_np(p), _np(q))


def test_load_state_dict_mismatches():
    p, q = nn.Parameter(mtc.ones(1)), nn.Parameter(mtc.ones(1))
    sd = optim.SGD([p], lr=0.1).state_dict()
    with pytest.raises(ValueError, match="different number of parameter groups"):
        optim.SGD([{"params": [p]}, {"params": [q]}], lr=0.1).load_state_dict(sd)
    with pytest.raises(ValueError, match="doesn't match the size"):
        optim.SGD([p, q], lr=0.1).load_state_dict(sd)


# ---------------------------------------------------------------- training


def _regression_data():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((128, 8)).astype(np.float32)
    y = x @ rng.standard_normal((8, 4)).astype(np.float32)
    y += 0.01 * rng.standard_normal(y.shape).astype(np.float32)
    return mtc.tensor(x), mtc.tensor(y)


def _fit(make_opt, steps=100):
    x, y = _regression_data()
    model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 4))
    opt, loss_fn = make_opt(model.parameters()), nn.MSELoss()
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


@pytest.mark.parametrize("name,make_opt", [
    ("sgd", lambda ps: optim.SGD(ps, lr=0.05, momentum=0.9)),
    ("adam", lambda ps: optim.Adam(ps, lr=1e-2)),
])
def test_mlp_regression_loss_falls_50x_in_100_steps(name, make_opt):
    losses = _fit(make_opt)
    assert losses[0] > 1.0  # y = x A has variance ~8 per output: the untrained MLP is far off
    assert losses[-1] < losses[0] / 50, (name, losses[0], losses[-1])


def test_the_training_check_can_fail():
    """Control for the test above: with lr=0 the same loop leaves the loss where it was."""
    losses = _fit(lambda ps: optim.SGD(ps, lr=0.0, momentum=0.9), steps=5)
    assert losses[-1] == losses[0]


def test_mlp_classifies_two_blobs_with_cross_entropy():
    rng = np.random.default_rng(2)
    x = np.concatenate([rng.standard_normal((64, 2)) + 2, rng.standard_normal((64, 2)) - 2])
    x, y = mtc.tensor(x.astype(np.float32)), mtc.tensor(np.repeat([0, 1], 64))
    model = nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 2))
    opt, loss_fn = optim.Adam(model.parameters(), lr=0.05), nn.CrossEntropyLoss()
    first = None
    for _ in range(100):
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        first = loss.item() if first is None else first
    assert loss.item() < first / 100
    assert (model(x).argmax(1) == y).float().mean().item() == 1.0


# ---------------------------------------------------------------- comparison with real torch


def _torch_trajectory(torch, make_ours, make_theirs, steps=5):
    """Train the same tiny MLP in both libraries; return max |param difference| per step."""
    rng = np.random.default_rng(3)
    xs = [rng.standard_normal((6, 3)).astype(np.float32) for _ in range(steps)]
    ys = [rng.standard_normal((6, 2)).astype(np.float32) for _ in range(steps)]
    ours = nn.Sequential(nn.Linear(3, 5), nn.Tanh(), nn.Linear(5, 2))
    theirs = torch.nn.Sequential(torch.nn.Linear(3, 5), torch.nn.Tanh(), torch.nn.Linear(5, 2))
    with torch.no_grad():
        for p, q in zip(ours.parameters(), theirs.parameters()):
            q.copy_(torch.from_numpy(_np(p).copy()))
    opt_m, opt_t = make_ours(ours.parameters()), make_theirs(theirs.parameters())
    diffs = []
    for x, y in zip(xs, ys):
        opt_m.zero_grad()
        nn.functional.mse_loss(ours(mtc.tensor(x)), mtc.tensor(y)).backward()
        opt_m.step()
        opt_t.zero_grad()
        torch.nn.functional.mse_loss(theirs(torch.from_numpy(x)), torch.from_numpy(y)).backward()
        opt_t.step()
        diffs.append(max(float(np.abs(_np(p) - q.detach().numpy()).max())
                         for p, q in zip(ours.parameters(), theirs.parameters())))
    return diffs


SGD_CONFIGS = [dict(lr=0.1), dict(lr=0.1, momentum=0.9), dict(lr=0.1, momentum=0.9,
               nesterov=True), dict(lr=0.05, momentum=0.8, dampening=0.2, weight_decay=0.1),
               dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01, maximize=True)]
ADAM_CONFIGS = [dict(lr=0.01), dict(lr=0.05, amsgrad=True), dict(lr=0.01, weight_decay=0.1),
                dict(lr=0.02, betas=(0.8, 0.99), eps=1e-6, amsgrad=True, weight_decay=0.05),
                dict(lr=0.01, maximize=True)]


@pytest.mark.torch
@pytest.mark.parametrize("kw", SGD_CONFIGS, ids=str)
def test_torch_sgd_trajectory(kw):
    torch = pytest.importorskip("torch")
    diffs = _torch_trajectory(torch, lambda ps: optim.SGD(ps, **kw),
                              lambda ps: torch.optim.SGD(ps, **kw))
    assert max(diffs) < 1e-5, diffs


@pytest.mark.torch
@pytest.mark.parametrize("kw", ADAM_CONFIGS, ids=str)
def test_torch_adam_trajectory(kw):
    torch = pytest.importorskip("torch")
    diffs = _torch_trajectory(torch, lambda ps: optim.Adam(ps, **kw),
                              lambda ps: torch.optim.Adam(ps, **kw))
    assert max(diffs) < 1e-5, diffs


@pytest.mark.torch
def test_torch_state_dict_layout():
    torch = pytest.importorskip("torch")
    layouts = []
    for lib in (mtc, torch):
        m = lib.nn.Linear(2, 1)
        opt = lib.optim.Adam(m.parameters(), amsgrad=True)
        m(lib.ones(1, 2)).sum().backward()
        opt.step()
        sd = opt.state_dict()
        layouts.append((sorted(sd), {k: sorted(v) for k, v in sd["state"].items()},
                        sd["param_groups"][0]["params"]))
    assert layouts[0] == layouts[1]
