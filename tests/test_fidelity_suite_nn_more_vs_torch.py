"""More ``nn.Module`` behaviours against torch (``test/test_nn.py``): nested ``state_dict``
names and prefixes, ``load_state_dict(assign=True)`` and dtype casts, parameters and buffers
set to ``None``, container slicing and ``OrderedDict`` construction, hook order across a
``Sequential`` in forward and backward, losses' reductions and their errors.

Each program's outcome must be torch's (``tests/fidelity.py``).
"""

from __future__ import annotations

from collections import OrderedDict

import pytest

from .fidelity import programs_of, run_program

pytestmark = pytest.mark.torch


def nested_state_dict_names(T):  # test_state_dict / named_parameters(prefix=...)
    m = T.nn.Sequential(T.nn.Sequential(T.nn.Linear(1, 2), T.nn.BatchNorm1d(2)),
                        T.nn.Linear(2, 1))
    return [list(m.state_dict().keys()), [n for n, _ in m.named_parameters(prefix="model")],
            list(m.state_dict(prefix="p.").keys())]


def load_state_dict_assign(T):  # test_load_state_dict_assign (the tensor becomes a Parameter)
    m = T.nn.Linear(2, 2)
    m.load_state_dict({"weight": T.ones(2, 2), "bias": T.zeros(2)}, assign=True)
    return [type(m.weight).__name__, m.weight.requires_grad, m.weight]


def load_state_dict_casts_dtype(T):  # copy_ into the existing parameter's dtype
    m = T.nn.Linear(2, 2)
    m.load_state_dict({"weight": T.ones(2, 2, dtype=T.float64),
                       "bias": T.zeros(2, dtype=T.int64)})
    return [m.weight, m.bias]


def to_integer_dtype_error(T):  # test_to (only floating point dtypes)
    return [T.nn.Linear(1, 1).to(T.int64)]


def parameter_set_to_none(T):  # test_register_parameter_none / Linear without bias
    m = T.nn.Linear(2, 2)
    m.bias = None
    return [list(m.state_dict().keys()), [n for n, _ in m.named_parameters()],
            m(T.ones(1, 2)).shape]


def buffer_set_to_none(T):
    m = T.nn.BatchNorm1d(2)
    m.running_mean = None
    return [list(m.state_dict().keys())]


def batchnorm_without_stats(T):  # affine=False, track_running_stats=False
    bn = T.nn.BatchNorm1d(2, affine=False, track_running_stats=False)
    return [list(bn.state_dict().keys()), [n for n, _ in bn.named_parameters()],
            bn(T.arange(4.0).reshape(2, 2))]


def double_casts_floats_only(T):  # num_batches_tracked stays int64
    m = T.nn.Sequential(T.nn.Linear(2, 2), T.nn.BatchNorm1d(2)).double()
    return [m[0].weight.dtype, m[1].running_mean.dtype, m[1].num_batches_tracked.dtype]


def sequential_delete_append_slice(T):  # test_Sequential_delitem / getitem slices
    s = T.nn.Sequential(T.nn.Linear(1, 2), T.nn.ReLU(), T.nn.Linear(2, 1))
    sliced = s[1:]
    del s[0]
    s.append(T.nn.Tanh())
    return [[n for n, _ in s.named_children()], len(s), type(sliced).__name__,
            [n for n, _ in sliced.named_children()]]


def sequential_from_ordered_dict(T):
    s = T.nn.Sequential(OrderedDict([("fc", T.nn.Linear(1, 2)), ("act", T.nn.ReLU())]))
    return [[n for n, _ in s.named_modules()], type(s.fc).__name__]


def get_submodule_of_a_parameter_error(T):  # test_get_submodule ("is not an nn.Module")
    try:  # torch's AttributeError, caught: tests/fidelity.py takes an uncaught one for a bug
        T.nn.Sequential(T.nn.Linear(1, 2)).get_submodule("0.weight")
    except AttributeError as e:
        return [str(e)]
    return []


def parameter_flags(T):
    return [repr(T.nn.Parameter(T.ones(2)))[:30],
            T.nn.Parameter(T.ones(2), requires_grad=False).requires_grad]


def hook_order_through_sequential(T):  # forward hooks in order, backward hooks reversed
    log = []
    m = T.nn.Sequential(T.nn.Linear(1, 1), T.nn.ReLU())
    for i, child in enumerate(m):
        child.register_forward_hook(lambda mod, a, o, i=i: log.append(("forward", i)))
        child.register_full_backward_hook(lambda mod, gi, go, i=i: log.append(("backward", i)))
    m(T.ones(1, 1, requires_grad=True)).sum().backward()
    return [log]


def loss_reductions(T):
    a, b = T.arange(6.0).reshape(2, 3), T.ones(2, 3)
    return [T.nn.MSELoss(reduction=r)(a, b) for r in ("none", "sum", "mean")] + \
        [T.nn.L1Loss()(a, b)]


def unknown_reduction_error(T):
    return [T.nn.functional.mse_loss(T.ones(2), T.ones(2), reduction="avg")]


def softmax_modules_and_flatten(T):
    return [T.nn.Softmax(dim=1)(T.ones(2, 3)), T.nn.LogSoftmax(dim=-1)(T.ones(2, 3)),
            T.nn.Flatten()(T.ones(2, 3, 4)).shape, T.nn.Flatten(0, 1)(T.ones(2, 3, 4)).shape,
            T.nn.Identity(54, unused="x")(T.ones(2))]


PROGRAMS = programs_of(globals())


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__)
def test_program_matches_torch(program):
    run_program(program)
