"""The breadth ops of issue 9 beyond what the OpInfo tests check one call at a time.

* ``erf``: the vectorized approximations against ``math.erf`` (the error bounds the docstring of
  ``ops/_erf.py`` states) and against torch;
* ``uint8``: torch's promotion rules, and ops on uint8 tensors against torch;
* the operators ``& | ^ ~ %`` on bool and integer tensors against torch;
* gradients at the kinks, where torch's ``*_backward`` formulas decide (hardtanh, hardsigmoid,
  hardswish) and ``scatter_add``'s gradient for a ``src`` larger than ``index``;
* ``nn.BatchNorm1d``/``nn.BatchNorm2d``: training trajectories (outputs, running statistics,
  gradients, parameters after SGD steps) against torch's modules, in train and eval mode, with
  ``affine``, ``track_running_stats`` and ``momentum=None`` varied.
"""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minitorch_compile as mtc
from minitorch_compile.ops._erf import erf as np_erf

from .conftest import torch_or_skip

_math_erf = np.vectorize(math.erf, otypes=[np.float64])

# ---------------------------------------------------------------- erf


def _erf_inputs(dtype):
    rng = np.random.default_rng(0)
    x = np.concatenate([np.linspace(-7, 7, 200_001), rng.standard_normal(20_000) * 3,
                        [0.0, -0.0, 1e-30, 0.5, 1.0, 2.0, 4.0, 6.0, 1e10]])
    return x.astype(dtype)


def test_erf_float32_is_within_1_3e_7_of_math_erf():
    # tanh(x g(x^2)) evaluated in float32 (the compiled kernel's arithmetic): ~2 ulp near 1;
    # torch's own float32 erf is off by 1.5e-7 (test_erf_and_gelu_match_torch)
    x = _erf_inputs(np.float32)
    got = np_erf(x)
    assert got.dtype == np.float32
    err = np.abs(got.astype(np.float64) - _math_erf(x.astype(np.float64)))
    assert err.max() <= 1.3e-7, err.max()
    tiny = np.geomspace(1e-37, 1e-2, 2000).astype(np.float32)  # relative accuracy near 0
    np.testing.assert_allclose(np_erf(tiny), _math_erf(tiny.astype(np.float64)), rtol=1e-6)
    np.testing.assert_array_equal(np_erf(-tiny), -np_erf(tiny))  # odd, exactly


def test_erf_float64_is_within_one_ulp_of_math_erf():
    x = _erf_inputs(np.float64)
    err = np.abs(np_erf(x) - _math_erf(x))
    assert err.max() <= 2.3e-16, err.max()
    tiny = np.array([1e-300, 1e-20, 5e-324])  # relative accuracy near 0 (Taylor, not 1 - erfc)
    np.testing.assert_allclose(np_erf(tiny), 2 / math.sqrt(math.pi) * tiny, rtol=1e-15)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_erf_special_values_and_shapes(dtype):
    x = np.array([np.nan, np.inf, -np.inf, 0.0], dtype=dtype)
    out = np_erf(x)
    assert out.dtype == dtype
    assert np.isnan(out[0]) and out[1] == 1 and out[2] == -1 and out[3] == 0
    assert np_erf(np.zeros((0, 3), dtype)).shape == (0, 3)
    assert np_erf(np.asarray(0.5, dtype)).shape == ()
    strided = np.linspace(-3, 3, 20, dtype=dtype).reshape(4, 5).T  # non-contiguous input
    np.testing.assert_allclose(np_erf(strided).astype(np.float64),
                               _math_erf(strided.astype(np.float64)), atol=1e-3)


@pytest.mark.torch
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_erf_and_gelu_match_torch(dtype):
    torch = torch_or_skip()
    x = _erf_inputs(np.dtype(dtype))[::7]
    t = torch.from_numpy(x)
    atol = 3e-7 if dtype == "float32" else 1e-15  # torch's own float32 erf is off by 1.5e-7
    np.testing.assert_allclose(mtc.erf(mtc.from_numpy(x)).numpy(), torch.erf(t).numpy(),
                               atol=atol, rtol=0)
    np.testing.assert_allclose(mtc.nn.functional.gelu(mtc.from_numpy(x)).numpy(),
                               torch.nn.functional.gelu(t).numpy(), atol=atol * 8,
                               rtol=atol)


# ---------------------------------------------------------------- uint8

u8 = lambda *v: mtc.tensor(list(v), dtype=mtc.uint8)  # noqa: E731

UINT8_PROMOTION = [
    ("uint8 + uint8", lambda: u8(1) + u8(2), mtc.uint8),
    ("uint8 + int64", lambda: u8(1) + mtc.tensor([2]), mtc.int64),
    ("uint8 + int32", lambda: u8(1) + mtc.tensor([2], dtype=mtc.int32), mtc.int32),
    ("uint8 + bool", lambda: u8(1) + mtc.tensor([True]), mtc.uint8),
    ("uint8 + 5", lambda: u8(1) + 5, mtc.uint8),
    ("uint8 + 2.5", lambda: u8(1) + 2.5, mtc.float32),
    ("uint8[1] + int64 0-dim", lambda: u8(1) + mtc.tensor(3), mtc.uint8),
    ("uint8 + float16", lambda: u8(1) + mtc.tensor([1.0], dtype=mtc.float16), mtc.float16),
    ("uint8 / uint8", lambda: u8(4) / u8(2), mtc.float32),
    ("sum(uint8)", lambda: u8(200, 100).sum(), mtc.int64),
    ("exp(uint8)", lambda: u8(1).exp(), mtc.float32),
    ("uint8 ^ uint8", lambda: u8(5) ^ u8(3), mtc.uint8),
    ("byte()", lambda: mtc.tensor([1.7]).byte(), mtc.uint8),
]


@pytest.mark.parametrize("label,fn,dtype", UINT8_PROMOTION, ids=[c[0] for c in UINT8_PROMOTION])
def test_uint8_promotion_follows_torch(label, fn, dtype):
    assert fn().dtype is dtype
    assert mtc.promote_types(mtc.uint8, mtc.int32) is mtc.int32


def test_uint8_wraps_and_converts_like_torch():
    assert (u8(250) + u8(10)).tolist() == [4]
    assert (u8(1, 200) + 300).tolist() == [45, 244]  # the number wraps to 44, as in torch
    assert (u8(1, 200) * -1).tolist() == [255, 56]
    assert (mtc.tensor([1], dtype=mtc.int32) + 2**40).tolist() == [1]
    with pytest.raises(OverflowError, match="int too big"):
        mtc.tensor([1]) + 2**70
    for make in (lambda: mtc.full((2,), 300, dtype=mtc.uint8), lambda: u8(1).clamp(0, 300)):
        with pytest.raises(RuntimeError, match="cannot be converted to type uint8_t"):
            make()
    assert (~u8(1)).tolist() == [254]
    assert mtc.from_numpy(np.array([3], dtype=np.uint8)).dtype is mtc.uint8
    assert (u8(200, 100).sum()).item() == 300


@pytest.mark.torch
@settings(max_examples=20)
@given(data=st.data())
def test_uint8_binary_ops_match_torch(data):
    torch = torch_or_skip()
    shape = data.draw(hnp.array_shapes(max_dims=2, max_side=4))
    a = data.draw(hnp.arrays(np.uint8, shape))
    other_dtype = data.draw(st.sampled_from([np.uint8, np.int64, np.bool_]))
    b = data.draw(hnp.arrays(other_dtype, shape, elements=st.integers(1, 100)
                             if other_dtype != np.bool_ else st.booleans()))
    for name in ("add", "mul", "bitwise_xor", "bitwise_and", "maximum", "eq"):
        ours = getattr(mtc, name)(mtc.tensor(a), mtc.tensor(b))
        theirs = getattr(torch, name)(torch.from_numpy(a), torch.from_numpy(b))
        assert ours.dtype.name == str(theirs.dtype).removeprefix("torch."), name
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy(), err_msg=name)


# ---------------------------------------------------------------- operators

OPERATORS = {"&": lambda a, b: a & b, "|": lambda a, b: a | b, "^": lambda a, b: a ^ b,
             "%": lambda a, b: a % b}


@pytest.mark.torch
@settings(max_examples=25)
@given(data=st.data())
def test_bitwise_and_modulo_operators_match_torch(data):
    torch = torch_or_skip()
    dtype = data.draw(st.sampled_from([np.int64, np.bool_]))
    shape = data.draw(hnp.array_shapes(max_dims=2, max_side=3))
    elements = st.integers(-20, 20).filter(bool) if dtype == np.int64 else st.booleans()
    a = data.draw(hnp.arrays(dtype, shape, elements=elements))
    b = data.draw(st.one_of(hnp.arrays(dtype, shape, elements=elements), elements))
    for sym, fn in OPERATORS.items():
        if sym == "%" and dtype == np.bool_:
            continue
        tb = torch.from_numpy(b) if isinstance(b, np.ndarray) else b
        mb = mtc.tensor(b) if isinstance(b, np.ndarray) else b
        theirs = fn(torch.from_numpy(a), tb)
        ours = fn(mtc.tensor(a), mb)
        assert ours.dtype.name == str(theirs.dtype).removeprefix("torch."), sym
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy(), err_msg=sym)
        if isinstance(b, int) and not isinstance(b, bool) and sym != "%":
            np.testing.assert_array_equal(fn(b, mtc.tensor(a)).numpy(),
                                          fn(b, torch.from_numpy(a)).numpy())
    np.testing.assert_array_equal((~mtc.tensor(a)).numpy(), (~torch.from_numpy(a)).numpy())


def test_inplace_operators_write_into_self():
    a = mtc.tensor([6, 5])
    version = a._version
    a ^= 3
    a &= mtc.tensor([7, 2])
    a %= 4
    assert a.tolist() == [1, 2] and a._version == version + 3


# ---------------------------------------------------------------- gradients at the kinks


@pytest.mark.torch
@pytest.mark.parametrize("name,args", [("hardtanh", ()), ("hardtanh", (0.0, 2.0)),
                                       ("hardsigmoid", ()), ("hardswish", ()), ("silu", ()),
                                       ("relu6", ())])
def test_activation_gradients_at_the_bounds_match_torch(name, args):
    torch = torch_or_skip()
    values = [-4.0, -3.0, -2.0, -1.0, -0.5, 0.0, 1.0, 2.0, 3.0, 4.0, 6.0, 7.0]
    x = mtc.tensor(values, dtype=mtc.float64, requires_grad=True)
    t = torch.tensor(values, dtype=torch.float64, requires_grad=True)
    y = getattr(mtc.nn.functional, name)(x, *args)
    ty = getattr(torch.nn.functional, name)(t, *args)
    np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), rtol=1e-15)
    (g,) = mtc.autograd.grad(y.sum(), x)
    (tg,) = torch.autograd.grad(ty.sum(), t)
    # torch's hardsigmoid_backward multiplies by the float32 constant 1/6, even in float64
    np.testing.assert_allclose(g.numpy(), tg.numpy(), rtol=1e-7, atol=0)


def test_scatter_add_gives_no_gradient_to_src_past_index():
    src = mtc.tensor([[1.0, 2.0, 3.0]], dtype=mtc.float64, requires_grad=True)
    out = mtc.scatter_add(mtc.zeros(1, 4, dtype=mtc.float64), 1, mtc.tensor([[3, 3]]), src)
    assert out.tolist() == [[0.0, 0.0, 0.0, 3.0]]
    (g,) = mtc.autograd.grad((out * mtc.arange(1.0, 5.0, dtype=mtc.float64)).sum(), src)
    assert g.tolist() == [[4.0, 4.0, 0.0]]


def test_narrow_is_a_view_and_flip_a_copy():
    x = mtc.arange(6.0).view(2, 3)
    n = x.narrow(1, 1, 2)
    n[0, 0] = 10.0
    assert x[0, 1].item() == 10.0
    f = x.flip(0)
    f[0, 0] = -1.0
    assert x[1, 0].item() == 3.0


# ---------------------------------------------------------------- BatchNorm vs torch


def _bn_pair(torch, cls, kwargs):
    ours = getattr(mtc.nn, cls)(**kwargs)
    theirs = getattr(torch.nn, cls)(**kwargs).double()
    ours = ours.double()
    if kwargs.get("affine", True):
        rng = np.random.default_rng(1)
        w, b = rng.standard_normal(kwargs["num_features"]), rng.standard_normal(
            kwargs["num_features"])
        with mtc.no_grad():
            ours.weight.copy_(mtc.tensor(w))
            ours.bias.copy_(mtc.tensor(b))
        with torch.no_grad():
            theirs.weight.copy_(torch.from_numpy(w))
            theirs.bias.copy_(torch.from_numpy(b))
    return ours, theirs


def _assert_state_equal(ours, theirs):
    mine = ours.state_dict()
    other = theirs.state_dict()
    assert list(mine) == list(other)
    for k in mine:
        np.testing.assert_allclose(mine[k].detach().numpy(), other[k].detach().numpy(),
                                   rtol=1e-12, atol=1e-12, err_msg=k)


BN_CASES = [
    ("BatchNorm1d", (8, 3), {}),
    ("BatchNorm1d", (4, 3, 5), {"momentum": 0.3}),
    ("BatchNorm1d", (6, 2), {"momentum": None}),
    ("BatchNorm1d", (5, 3), {"affine": False}),
    ("BatchNorm1d", (5, 3, 2), {"track_running_stats": False}),
    ("BatchNorm2d", (3, 2, 4, 5), {}),
    ("BatchNorm2d", (2, 3, 3, 3), {"eps": 1e-3, "momentum": None, "affine": False}),
    ("BatchNorm2d", (2, 2, 3, 2), {"track_running_stats": False, "affine": False}),
]


@pytest.mark.torch
@pytest.mark.parametrize("cls,shape,kwargs", BN_CASES,
                         ids=[f"{c}-{'-'.join(f'{k}={v}' for k, v in kw.items()) or 'default'}"
                              for c, _, kw in BN_CASES])
def test_batchnorm_training_trajectory_matches_torch(cls, shape, kwargs):
    """Five SGD steps in train mode, then eval: outputs, gradients, running statistics and
    parameters agree with torch's module at every step."""
    torch = torch_or_skip()
    kwargs = dict(kwargs, num_features=shape[1])
    ours, theirs = _bn_pair(torch, cls, kwargs)
    params = list(ours.parameters())
    opt = mtc.optim.SGD(params, lr=0.1) if params else None
    topt = torch.optim.SGD(theirs.parameters(), lr=0.1) if params else None
    rng = np.random.default_rng(0)
    for _step in range(5):
        x = rng.standard_normal(shape) * 2 + 0.5
        target = rng.standard_normal(shape)
        xm = mtc.tensor(x, requires_grad=True)
        xt = torch.from_numpy(x).requires_grad_(True)
        y, ty = ours(xm), theirs(xt)
        np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), rtol=1e-10,
                                   atol=1e-12)
        loss = ((y - mtc.tensor(target)) ** 2).sum()
        tloss = ((ty - torch.from_numpy(target)) ** 2).sum()
        if opt:
            opt.zero_grad()
            topt.zero_grad()
        loss.backward()
        tloss.backward()
        np.testing.assert_allclose(xm.grad.numpy(), xt.grad.numpy(), rtol=1e-9, atol=1e-10)
        if opt:
            for p, tp in zip(params, theirs.parameters()):
                np.testing.assert_allclose(p.grad.numpy(), tp.grad.numpy(), rtol=1e-9,
                                           atol=1e-10)
            opt.step()
            topt.step()
        _assert_state_equal(ours, theirs)
    ours.eval()
    theirs.eval()
    x = rng.standard_normal(shape)
    xm = mtc.tensor(x, requires_grad=True)
    xt = torch.from_numpy(x).requires_grad_(True)
    y, ty = ours(xm), theirs(xt)
    np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), rtol=1e-10, atol=1e-12)
    y.sum().backward()
    ty.sum().backward()
    np.testing.assert_allclose(xm.grad.numpy(), xt.grad.numpy(), rtol=1e-9, atol=1e-12)
    _assert_state_equal(ours, theirs)


def test_batchnorm_repr_buffers_and_reset():
    m = mtc.nn.BatchNorm2d(4, momentum=None)
    assert repr(m) == ("BatchNorm2d(4, eps=1e-05, momentum=None, affine=True, bias=True, "
                       "track_running_stats=True)")
    assert [n for n, _ in m.named_buffers()] == ["running_mean", "running_var",
                                                 "num_batches_tracked"]
    m(mtc.randn(2, 4, 3, 3))
    assert m.num_batches_tracked.item() == 1 and m.num_batches_tracked.dtype is mtc.int64
    m.reset_running_stats()
    assert m.running_var.tolist() == [1.0] * 4 and m.num_batches_tracked.item() == 0
    assert not m.running_mean.requires_grad
    bare = mtc.nn.BatchNorm1d(3, affine=False, track_running_stats=False)
    assert bare.running_mean is None and list(bare.state_dict()) == []


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_compiled_batchnorm_training_matches_eager(backend):
    """Outputs, running statistics (mutated buffers) and gradients of a compiled BatchNorm
    model equal eager mode's, step after step."""
    reference = mtc.nn.Sequential(mtc.nn.Linear(3, 4), mtc.nn.BatchNorm1d(4), mtc.nn.SiLU())
    compiled_model = mtc.nn.Sequential(mtc.nn.Linear(3, 4), mtc.nn.BatchNorm1d(4),
                                       mtc.nn.SiLU())
    compiled_model.load_state_dict(reference.state_dict())
    compiled = mtc.compile(compiled_model, backend=backend)
    for _ in range(3):
        x = mtc.randn(5, 3)
        a, b = reference(x), compiled(x)
        np.testing.assert_allclose(b.detach().numpy(), a.detach().numpy(), rtol=1e-6,
                                   atol=1e-6)
        ga = mtc.autograd.grad(a.sum(), list(reference.parameters()))
        gb = mtc.autograd.grad(b.sum(), list(compiled_model.parameters()))
        for u, v in zip(ga, gb):
            np.testing.assert_allclose(v.numpy(), u.numpy(), rtol=1e-5, atol=1e-6)
        for name in ("running_mean", "running_var", "num_batches_tracked"):
            np.testing.assert_allclose(getattr(compiled_model[1], name).numpy(),
                                       getattr(reference[1], name).numpy(), rtol=1e-6)
