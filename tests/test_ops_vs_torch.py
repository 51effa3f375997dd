"""Differential tests against real PyTorch (skipped when torch is not installed).

Generated from the OpInfo registry, so every op family is covered — pointwise (with mixed
dtypes, 0-dim tensors and Python numbers), reductions, views, matrix products, nn ops and
creation: the same sample runs through ``mtc.ops.aten.<op>`` and ``torch.ops.aten.<op>`` (or
the ``torch.nn.functional`` spelling an OpInfo names) and must give the same dtypes, shapes and
values, and for float64 samples of differentiable ops, the same gradients.  Samples come from
``Gen(smooth=True)``: no ties, so argmax and friends have one right answer.
"""

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import minitorch_compile as mtc

from .opinfo import F32, OPINFOS, Gen, as_list, call, float_leaves, rebuild

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch

EXAMPLES = max(5, settings().max_examples // 3)
NAMES = sorted(OPINFOS)
GRAD_NAMES = sorted(n for n, i in OPINFOS.items() if i.grad and i.torch_values)
# Arguments torch does not differentiate (``nll_loss_forward`` refuses a weight requiring grad;
# our composite differentiates it, checked against finite differences in test_gradcheck).
# argument indices torch has no derivative for (ours go beyond: test_gradcheck checks them)
NO_GRAD_IN_TORCH = {"nll_loss": (2,), "cross_entropy_loss": (2,), "nll_loss_forward": (2,),
                    "nll_loss_backward": (3, 6)}


def torch_value(v):
    if isinstance(v, np.ndarray):
        return torch.from_numpy(v.copy())
    if isinstance(v, list) and any(isinstance(a, np.ndarray) for a in v):
        return [torch_value(a) for a in v]
    if isinstance(v, mtc.dtype):
        return getattr(torch, v.name)
    return v


def _torch_args(args, kwargs):
    return [torch_value(a) if not isinstance(a, torch.Tensor) else a for a in args], \
        {k: torch_value(v) if not isinstance(v, torch.Tensor) else v for k, v in kwargs.items()}


def _clamp(x, min=None, max=None):  # noqa: A002
    """torch has clamp(Scalar?, Scalar?) and clamp(Tensor?, Tensor?), not the mix aten.clamp
    here accepts (a number is a wrapped-number operand of clamp.Tensor).  With these samples'
    dtypes (float32, float64, int64) a number promotes exactly like ``torch.tensor(number)``,
    so that gives the dtype; the values are the two bounds applied one after the other."""
    if isinstance(min, torch.Tensor) != isinstance(max, torch.Tensor) and \
            min is not None and max is not None:
        def as_t(b):
            return b if isinstance(b, torch.Tensor) else torch.tensor(b)
        dtype = torch.ops.aten.clamp.Tensor(x, as_t(min), as_t(max)).dtype
        return torch.clamp(torch.clamp(x.to(dtype), min=min), max=max).to(dtype)
    return torch.clamp(x, min=min, max=max)


def _logical(fn):
    """torch.logical_and/or take tensors only; a number's truth value is all that matters."""
    return lambda a, b: fn(a, b if isinstance(b, torch.Tensor) else torch.tensor(b))


SPECIAL = {"clamp": _clamp, "logical_and": _logical(torch.logical_and),
           "logical_or": _logical(torch.logical_or)}


def torch_op(info):
    if info.torch is not None:
        return lambda *a, **k: info.torch(torch, *a, **k)
    if info.name in SPECIAL:
        return SPECIAL[info.name]
    name, _, overload = info.name.partition(".")
    packet = getattr(torch.ops.aten, name)
    return getattr(packet, overload) if overload else packet


def torch_call(info, s, tensors=None):
    if tensors is not None:
        s = rebuild(s, tensors, lambda a: torch.from_numpy(a.copy()))
    args, kwargs = _torch_args(s.args, s.kwargs)
    if info.op.schema.is_mutable:
        args[0] = args[0].clone()
    return as_list(torch_op(info)(*args, **kwargs))


def _torch_dtype_name(t) -> str:
    return str(t.dtype).removeprefix("torch.")


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=EXAMPLES)
@given(data=st.data())
def test_values_and_dtypes_match_torch(name, data):
    info = OPINFOS[name]
    dtype = data.draw(st.sampled_from(info.dtypes), label="dtype")
    s = info.sample(Gen(data.draw, smooth=True), dtype)
    ours = as_list(call(info, s))
    theirs = torch_call(info, s)
    assert len(ours) == len(theirs)
    for o, t in zip(ours, theirs):
        assert o.dtype.name == _torch_dtype_name(t), f"{name}: {o.dtype} vs torch {t.dtype}"
        assert tuple(o.shape) == tuple(t.shape), f"{name}: {tuple(o.shape)} vs {tuple(t.shape)}"
        if info.torch_values:
            rtol, atol = (info.rtol32, info.atol32) if o.dtype is F32 else (1e-6, 1e-9)
            np.testing.assert_allclose(o.numpy(), t.numpy(), rtol=rtol, atol=atol,
                                       equal_nan=True, err_msg=name)


@pytest.mark.parametrize("name", GRAD_NAMES)
@settings(max_examples=max(3, EXAMPLES // 2))
@given(data=st.data())
def test_gradients_match_torch(name, data):
    info = OPINFOS[name]
    s = info.sample(Gen(data.draw, grad=True), mtc.float64)
    leaves = float_leaves(s)
    assume(leaves)
    # torch bugs (our gradients agree with finite differences in test_gradcheck):
    if name == "clamp":  # clamp's backward fails when a bound broadcasts self to a bigger shape
        assume(all(np.broadcast_shapes(s.args[0].shape, np.shape(b)) == s.args[0].shape
                   for b in s.args[1:]))
    if name in ("var", "std", "var_mean"):  # var(x, dim=[]) reduces all dims; backward divides by 1
        assume(s.args[1] != [])
    if name == "group_norm":  # torch's backward fails with a bias and no weight ("tensor does
        assume(s.args[2] is not None or s.args[3] is None)  # not have a device")
    frozen = [s.args[i] for i in NO_GRAD_IN_TORCH.get(name, ())]
    wants = [all(a is not f for f in frozen) for a in leaves]
    xs = [mtc.tensor(a, requires_grad=w) for a, w in zip(leaves, wants)]
    m = rebuild(s, xs, lambda a: mtc.tensor(a.copy()))
    args = list(m.args)
    if info.op.schema.is_mutable:
        args[0] = args[0].clone()
    ours = [o for o in as_list(info.op(*args, **m.kwargs)) if o.dtype.is_floating_point]
    ts = [torch.from_numpy(a.copy()).requires_grad_(w) for a, w in zip(leaves, wants)]
    theirs = [t for t in torch_call(info, s, ts) if t.dtype.is_floating_point]
    assume(all(np.all(np.isfinite(t.detach().numpy())) for t in theirs))
    rng = np.random.default_rng(0)
    gouts = [rng.standard_normal(tuple(o.shape)) for o in ours]
    pairs = [(o, g) for o, g in zip(ours, gouts) if o.requires_grad]
    leaves = [a for a, w in zip(leaves, wants) if w]
    xs, ts = [x for x in xs if x.requires_grad], [t for t in ts if t.requires_grad]
    our_grads = mtc.autograd.grad([o for o, _ in pairs], xs, [mtc.tensor(g) for _, g in pairs],
                                  allow_unused=True)
    tpairs = [(t, g) for t, g in zip(theirs, gouts) if t.requires_grad]
    their_grads = torch.autograd.grad([t for t, _ in tpairs], ts,
                                      [torch.from_numpy(g) for _, g in tpairs],
                                      allow_unused=True)
    for i, (a, g, tg) in enumerate(zip(leaves, our_grads, their_grads)):
        ours_np = np.zeros(a.shape) if g is None else g.numpy()
        theirs_np = np.zeros(a.shape) if tg is None else tg.numpy(force=True)  # (ZeroTensor)
        np.testing.assert_allclose(ours_np, theirs_np, rtol=1e-6, atol=1e-9,
                                   err_msg=f"{name}: gradient of input {i}")

