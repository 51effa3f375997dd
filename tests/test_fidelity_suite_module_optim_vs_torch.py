"""``nn.Module`` and optimizer APIs against torch — programs modelled on pytorch's
``test/test_nn.py`` (``named_modules``/``children``/buffers, ``apply``, ``train``/``eval``,
``zero_grad(set_to_none)``, ``state_dict``/``load_state_dict`` strictness, containers,
``ParameterDict``, ``get_parameter``/``get_buffer``, reprs, assignment errors) and
``test/test_optim.py`` (``param_groups``, ``state_dict`` layout, argument errors)

Each program's outcome must be torch's (``tests/fidelity.py``); without torch, each still runs
under mtc (it must not fail in an unexpected way), and the tests at the end check the
behaviours fixed for them.
"""

from __future__ import annotations

import pytest

import minitorch_compile as mtc

from .fidelity import program_tests, programs_of

pytestmark = pytest.mark.torch


def _net(T):
    T.manual_seed(0)
    return T.nn.Sequential(
        T.nn.Linear(3, 4), T.nn.ReLU(), T.nn.Sequential(T.nn.Linear(4, 2), T.nn.Tanh())
    )


def nn_named_modules_prefix(T):
    m = _net(T)
    return [
        [n for n, _ in m.named_modules()],
        [n for n, _ in m.named_modules(prefix="net")],
        [n for n, _ in m.named_children()],
        [type(c).__name__ for c in m.children()],
        len(list(m.modules())),
    ]


def nn_named_parameters_recurse(T):
    m = _net(T)
    return [
        [n for n, _ in m.named_parameters(recurse=False)],
        [n for n, _ in m[2].named_parameters(prefix="x")],
        [tuple(p.shape) for p in m.parameters()],
    ]


def nn_buffers_persistent(T):
    m = T.nn.Module()
    m.register_buffer("a", T.ones(2))
    m.register_buffer("b", T.zeros(1), persistent=False)
    m.register_buffer("c", None)
    return [[n for n, _ in m.named_buffers()], list(m.state_dict().keys())]


def nn_apply_init(T):
    m = _net(T)

    def init(mod):
        if isinstance(mod, T.nn.Linear):
            with T.no_grad():
                mod.weight.fill_(0.5)
                mod.bias.zero_()

    r = m.apply(init)
    return [r is m, m[0].weight, m[2][0].bias]


def nn_train_eval_flags(T):
    m = T.nn.Sequential(T.nn.Linear(2, 2), T.nn.Dropout(0.5))
    a = m.eval()
    f1 = [x.training for x in m.modules()]
    m.train()
    f2 = [x.training for x in m.modules()]
    m.train(False)
    return [a is m, f1, f2, m.training, m[1].training]


def nn_zero_grad_set_to_none(T):
    m = T.nn.Linear(2, 1)
    m(T.ones(1, 2)).sum().backward()
    m.zero_grad(set_to_none=False)
    g = m.weight.grad
    m(T.ones(1, 2)).sum().backward()
    m.zero_grad()
    return [g, m.weight.grad]


def nn_load_state_dict_missing_unexpected_error(T):
    m = T.nn.Linear(2, 2)
    sd = {"weight": T.ones(2, 2), "extra": T.ones(1)}
    m.load_state_dict(sd)


def nn_load_state_dict_size_mismatch_error(T):
    m = T.nn.Linear(2, 2)
    m.load_state_dict({"weight": T.ones(3, 2), "bias": T.ones(2)})


def nn_load_state_dict_result_fields(T):
    m = T.nn.Linear(2, 2)
    r = m.load_state_dict(m.state_dict())
    return [list(r.missing_keys), list(r.unexpected_keys), str(r)]


def nn_state_dict_detached_and_prefix(T):
    m = _net(T)
    sd = m.state_dict()
    sd2 = m.state_dict(prefix="p.")
    return [
        list(sd.keys()),
        list(sd2.keys())[:2],
        sd["0.weight"].requires_grad,
        sd["0.weight"].data_ptr() == m[0].weight.data_ptr(),
    ]


def nn_keep_vars(T):
    m = T.nn.Linear(2, 2)
    sd = m.state_dict(keep_vars=True)
    return [sd["weight"] is m.weight, sd["weight"].requires_grad]


def nn_parameter_repr_and_flags(T):
    p = T.nn.Parameter(T.ones(2))
    q = T.nn.Parameter(T.ones(2), requires_grad=False)
    return [
        p.requires_grad,
        q.requires_grad,
        isinstance(p, T.Tensor),
        type(p * 2).__name__,
        p.is_leaf,
        type(p.detach()).__name__,
    ]


def nn_setattr_parameter_and_module(T):
    m = T.nn.Module()
    m.w = T.nn.Parameter(T.ones(1))
    m.sub = T.nn.Linear(1, 1)
    m.t = T.ones(1)
    return [[n for n, _ in m.named_parameters()], "t" in dict(m.named_buffers()), hasattr(m, "t")]


def nn_assign_tensor_to_param_error(T):
    m = T.nn.Linear(2, 2)
    m.weight = T.ones(2, 2)


def nn_delattr(T):
    m = T.nn.Linear(2, 2)
    del m.bias
    return [[n for n, _ in m.named_parameters()], hasattr(m, "bias")]


def nn_modulelist_dict(T):
    ml = T.nn.ModuleList([T.nn.Linear(1, 1) for _ in range(3)])
    ml.append(T.nn.ReLU())
    ml.extend([T.nn.Tanh()])
    ml.insert(0, T.nn.Sigmoid())
    md = T.nn.ModuleDict({"a": T.nn.Linear(1, 1)})
    md["b"] = T.nn.ReLU()
    md.update({"c": T.nn.Tanh()})
    return [
        len(ml),
        type(ml[0]).__name__,
        type(ml[-1]).__name__,
        list(md.keys()),
        "b" in md,
        len(list(md.parameters())),
        [type(x).__name__ for x in ml[1:3]],
    ]


def nn_parameterlist_dict(T):
    pl = T.nn.ParameterList([T.nn.Parameter(T.ones(1)), T.nn.Parameter(T.zeros(2))])
    pd = T.nn.ParameterDict({"a": T.nn.Parameter(T.ones(1))})
    m = T.nn.Module()
    m.pl = pl
    m.pd = pd
    return [[n for n, _ in m.named_parameters()], len(pl), list(pd.keys())]


def nn_get_parameter_buffer(T):
    m = T.nn.Sequential(T.nn.BatchNorm1d(2))
    return [
        m.get_parameter("0.weight").shape,
        m.get_buffer("0.running_mean"),
        type(m.get_submodule("0")).__name__,
    ]


def nn_sequential_index_slice_len(T):
    m = _net(T)
    return [
        len(m),
        type(m[-1]).__name__,
        type(m[0:2]).__name__,
        len(m[1:]),
        [type(x).__name__ for x in m],
    ]


def nn_forward_hook_modifies_output(T):
    m = T.nn.Linear(2, 2)
    m.register_forward_hook(lambda mod, i, o: o * 0 + 1)
    return [m(T.ones(1, 2))]


def nn_module_to_dtype(T):
    m = T.nn.Linear(2, 2).double()
    b = T.nn.BatchNorm1d(2).half().float()
    return [
        m.weight.dtype,
        m(T.ones(1, 2, dtype=T.float64)).dtype,
        b.running_mean.dtype,
        b.num_batches_tracked.dtype,
        m.to(T.float32).bias.dtype,
    ]


def nn_linear_dtype_mismatch_error(T):
    m = T.nn.Linear(2, 2)
    m(T.ones(1, 2, dtype=T.float64))


def nn_extra_repr(T):
    return [
        repr(T.nn.Linear(2, 3, bias=False)),
        repr(T.nn.Conv2d(1, 2, 3, stride=2)),
        repr(T.nn.Dropout(0.2)),
        repr(T.nn.BatchNorm1d(4)),
        repr(T.nn.LayerNorm(4)),
        repr(T.nn.Embedding(5, 2)),
    ]


def nn_sequential_repr(T):
    return [repr(_net(T))]


def nn_param_count_and_numel(T):
    m = _net(T)
    return [
        sum(p.numel() for p in m.parameters()),
        sum(p.numel() for p in m.parameters() if p.requires_grad),
    ]


def optim_param_groups_keys(T):
    m = T.nn.Linear(2, 1)
    o = T.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
    return [sorted(o.param_groups[0].keys()), len(o.param_groups[0]["params"]), o.defaults["lr"]]


def optim_adam_state_dict_keys(T):
    m = T.nn.Linear(2, 1)
    o = T.optim.Adam(m.parameters(), lr=0.01)
    m(T.ones(1, 2)).sum().backward()
    o.step()
    sd = o.state_dict()
    return [
        sorted(sd.keys()),
        sorted(sd["state"][0].keys()),
        sd["param_groups"][0]["params"],
        sorted(sd["param_groups"][0].keys()),
        sd["state"][0]["step"],
    ]


def optim_param_groups_lr_change(T):
    w = T.nn.Parameter(T.ones(2))
    o = T.optim.SGD([w], lr=1.0)
    (w * 2).sum().backward()
    o.param_groups[0]["lr"] = 0.5
    o.step()
    return [w]


def optim_invalid_lr_error(T):
    T.optim.SGD([T.nn.Parameter(T.ones(1))], lr=-1.0)


def optim_invalid_betas_error(T):
    T.optim.Adam([T.nn.Parameter(T.ones(1))], betas=(1.0, 0.9))


def optim_empty_params_error(T):
    T.optim.SGD([], lr=0.1)


def optim_nesterov_requires_momentum_error(T):
    T.optim.SGD([T.nn.Parameter(T.ones(1))], lr=0.1, nesterov=True)


def optim_zero_grad_default_none(T):
    w = T.nn.Parameter(T.ones(2))
    o = T.optim.SGD([w], lr=0.1)
    (w * 2).sum().backward()
    o.zero_grad()
    return [w.grad]


def optim_load_state_dict_mismatch_error(T):
    w = T.nn.Parameter(T.ones(2))
    v = T.nn.Parameter(T.ones(2))
    o = T.optim.SGD([w], lr=0.1)
    o2 = T.optim.SGD([w, v], lr=0.1)
    o2.load_state_dict(o.state_dict())


def optim_step_without_grad_no_state(T):
    w = T.nn.Parameter(T.ones(2))
    o = T.optim.Adam([w])
    o.step()
    return [len(o.state), w]


def optim_params_as_dict_groups(T):
    a = T.nn.Parameter(T.ones(1))
    b = T.nn.Parameter(T.ones(1))
    o = T.optim.Adam([{"params": [a]}, {"params": b, "lr": 0.1}], lr=0.01)
    return [[g["lr"] for g in o.param_groups], [len(g["params"]) for g in o.param_groups]]


def optim_sched_get_last_lr(T):
    w = T.nn.Parameter(T.ones(1))
    o = T.optim.SGD([w], lr=1.0)
    s = T.optim.lr_scheduler.StepLR(o, 2, gamma=0.1)
    out = []
    for _ in range(5):
        o.step()
        s.step()
        out.append(s.get_last_lr())
    return [out, s.last_epoch, o.param_groups[0]["initial_lr"]]


PROGRAMS = programs_of(globals())


test_program_matches_torch = program_tests(PROGRAMS)


def test_parameter_dict_registers_tensors_as_parameters():
    pd = mtc.nn.ParameterDict({"a": mtc.ones(1)})
    pd["b"] = mtc.nn.Parameter(mtc.zeros(2))
    pd["s"] = "not a tensor"
    assert type(pd["a"]).__name__ == "Parameter" and list(pd) == ["a", "b", "s"]
    assert [n for n, _ in pd.named_parameters()] == ["a", "b"]
    assert pd.pop("a").shape == (1,) and list(pd.keys()) == ["b", "s"]


def test_get_parameter_and_buffer_and_their_errors():
    m = mtc.nn.Sequential(mtc.nn.BatchNorm1d(2))
    assert m.get_parameter("0.weight") is m[0].weight
    assert m.get_buffer("0.running_var") is m[0].running_var
    with pytest.raises(AttributeError, match="`weight` is not a buffer"):
        m.get_buffer("0.weight")
    with pytest.raises(AttributeError, match="BatchNorm1d has no attribute `nope`"):
        m.get_parameter("0.nope")
    with pytest.raises(TypeError, match="cannot assign 'torch.DoubleTensor' as parameter"):
        m[0].weight = mtc.ones(2, dtype=mtc.float64)
    with pytest.raises(RuntimeError, match="mat1 and mat2 must have the same dtype, but got "
                       "Double and Float"):
        mtc.nn.Linear(2, 2)(mtc.ones(1, 2, dtype=mtc.float64))
