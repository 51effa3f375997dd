"""The tensor ops ordinary programs meet (cumsum, sort, masked_fill, einsum, norm, ...): what the
OpInfo-generated tests (``opinfo_tensorops.py``) cannot say on their own.

* the public spellings: ``mtc.X`` functions, Tensor methods, in-place variants, named tuples,
  overloads (``prod(x)`` / ``prod(x, dim)``);
* gradients where the generic smooth samples never go: zeros in ``prod``/``cumprod``, ties in
  ``sort``, clamped ``logit``, ``masked_fill``'s value — against torch where installed;
* torch's errors for bad input (same exception type), eager and traced alike;
* (compiled programs using them: ``test_tensor_ops_compiled.py``).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitorch_compile as mtc

try:
    import torch
except ImportError:  # the torch comparisons skip
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed")


def _t(a, grad=False):
    return mtc.tensor(np.asarray(a), requires_grad=grad)


def _torch(a, grad=False):
    return torch.tensor(np.asarray(a), requires_grad=grad)


# --------------------------------------------------------------------------- public API


def test_functions_methods_and_inplace_variants_exist_and_agree():
    x = mtc.tensor([[3.0, 1.0, 2.0], [0.5, 5.0, 4.0]])
    m = x > 2
    assert mtc.equal(x.masked_fill(m, 0), mtc.masked_fill(x, m, 0))
    y = x.clone()
    assert y.masked_fill_(m, -1.0) is y and mtc.equal(y, x.masked_fill(m, -1.0))
    assert mtc.equal(x.cumsum(1), mtc.cumsum(x, dim=1))
    z = x.clone()
    z.addcmul_(x, x, value=0.5)
    assert np.allclose(z.numpy(), (x + 0.5 * x * x).numpy())
    z = x.clone()
    z.lerp_(mtc.zeros_like(x), 0.25)
    assert np.allclose(z.numpy(), 0.75 * x.numpy())
    t = x.clone()
    t.tril_()
    assert mtc.equal(t, x.tril())
    assert mtc.equal(mtc.arctan2(x, x), mtc.atan2(x, x))
    assert x.moveaxis(0, 1).shape == (3, 2)


def test_named_tuples_and_overloads():
    x = mtc.tensor([[3.0, 1.0, 2.0], [0.5, 5.0, 4.0]])
    s = x.sort(dim=1, descending=True)
    assert type(s).__name__ == "sort" and mtc.equal(s.values, s[0])
    assert mtc.equal(x.gather(1, s.indices), s.values)
    t = mtc.topk(x, 2)
    assert t.values.tolist() == [[3.0, 2.0], [5.0, 4.0]] and t.indices.tolist() == [[0, 2],
                                                                                     [1, 2]]
    assert x.kthvalue(2, 1).values.tolist() == [2.0, 4.0]
    assert x.median().item() == 2.0 and x.median(1).values.tolist() == [2.0, 4.0]
    assert x.prod().item() == pytest.approx(60.0) and x.prod(1, keepdim=True).shape == (2, 1)
    mm = x.aminmax()
    assert (mm.min.item(), mm.max.item()) == (0.5, 5.0)
    assert x.argsort(dim=0).tolist() == [[1, 0, 0], [0, 1, 1]]
    assert mtc.count_nonzero(mtc.tensor([0, 1, 2, 0])).item() == 2
    assert x.norm().item() == pytest.approx(float(np.linalg.norm(x.numpy())))
    assert mtc.linalg.vector_norm(x, 1, dim=1).tolist() == [6.0, 9.5]
    assert x.tile(2).shape == (2, 6) and x.tile(2, 1, 1).shape == (2, 2, 3)


def test_result_dtypes_follow_torch():
    i = mtc.tensor([1, 2, 3], dtype=mtc.int32)
    b = mtc.tensor([True, False])
    assert i.cumsum(0).dtype is mtc.int64 and b.cumsum(0).dtype is mtc.int64
    assert b.prod().dtype is mtc.int64 and i.prod(0).dtype is mtc.int64
    assert i.cumsum(0, dtype=mtc.float64).dtype is mtc.float64
    assert mtc.atan2(i, i).dtype is mtc.float32
    assert i.sort().indices.dtype is mtc.int64 and i.sort().values.dtype is mtc.int32
    assert i.masked_fill(i > 1, 2.7).tolist() == [1, 2, 2]  # the value is cast to self's dtype
    assert mtc.addcmul(i, i, i).dtype is mtc.int32


# --------------------------------------------------------------------------- sorting details


@needs_torch
def test_sort_ties_nan_and_descending_match_torch():
    a = np.array([[2.0, np.nan, 1.0, 2.0, -np.inf, 1.0, np.nan, 0.0]])
    for descending in (False, True):
        ours = mtc.sort(_t(a), descending=descending, stable=True)
        theirs = torch.sort(_torch(a), descending=descending, stable=True)
        np.testing.assert_array_equal(ours.values.numpy(), theirs.values.numpy())
        assert ours.indices.tolist() == theirs.indices.tolist()


def test_topk_unsorted_gives_the_same_set():
    x = mtc.tensor([5.0, 1.0, 4.0, 2.0, 3.0])
    v, i = x.topk(3, sorted=False)
    assert sorted(v.tolist()) == [3.0, 4.0, 5.0] and mtc.equal(x[i], v)
    assert x.topk(2, largest=False).values.tolist() == [1.0, 2.0]


@needs_torch
def test_median_propagates_nan_like_torch():
    a = np.array([[1.0, np.nan, 3.0], [3.0, 1.0, 2.0]])
    ours, theirs = _t(a).median(1), _torch(a).median(1)
    np.testing.assert_array_equal(ours.values.numpy(), theirs.values.numpy())
    assert ours.indices.tolist() == theirs.indices.tolist()


# --------------------------------------------------------------------------- gradients


def _grads(fn_m, fn_t, *arrays):
    xs = [_t(a, True) for a in arrays]
    fn_m(*xs).sum().backward()
    ts = [_torch(a, True) for a in arrays]
    fn_t(*ts).sum().backward()
    for x, t in zip(xs, ts):
        np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-10, atol=1e-12)


@needs_torch
@given(st.lists(st.sampled_from([0.0, 0.0, 1.5, -2.0, 3.0, 0.5]), min_size=1, max_size=6),
       st.integers(0, 1))
def test_prod_and_cumprod_gradients_with_zeros_match_torch(values, which):
    a = np.array(values, dtype=np.float64)
    if which:
        _grads(lambda x: x.prod(), lambda x: x.prod(), a)
        _grads(lambda x: x.reshape(1, -1).prod(1), lambda x: x.reshape(1, -1).prod(1), a)
    else:
        _grads(lambda x: x.cumprod(0) * mtc.arange(len(values)),
               lambda x: x.cumprod(0) * torch.arange(len(values)), a)


@needs_torch
def test_selected_gradients_match_torch():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((3, 4))
    mask = a > 0
    _grads(lambda x: x.sort(1, descending=True).values * mtc.arange(4.0),
           lambda x: x.sort(1, descending=True).values * torch.arange(4.0), a)
    _grads(lambda x: x.topk(2, 0).values ** 2, lambda x: x.topk(2, 0).values ** 2, a)
    _grads(lambda x, v: x.masked_fill(_t(mask), v[0]) ** 2,
           lambda x, v: x.masked_fill(_torch(mask), v[0]) ** 2, a, np.array([0.5]))
    _grads(lambda x: x.logit(eps=0.2), lambda x: x.logit(eps=0.2), rng.uniform(0, 1, (5,)))
    _grads(lambda x: x.norm(dim=1) + x.norm(float("inf")) + x.norm(3),
           lambda x: x.norm(dim=1) + x.norm(float("inf")) + x.norm(3), a)
    _grads(lambda x: mtc.einsum("ij,kj->ik", x, x.cos()),
           lambda x: torch.einsum("ij,kj->ik", x, x.cos()), a)
    _grads(lambda x: x.diag(1), lambda x: x.diag(1), a)
    _grads(lambda x: x.roll((1, -2), (0, 1)) * mtc.arange(4.0),
           lambda x: x.roll((1, -2), (0, 1)) * torch.arange(4.0), a)


# --------------------------------------------------------------------------- errors


def _raises_same(fn_m, fn_t):
    with pytest.raises(Exception) as ours:
        fn_m(mtc)
    if torch is not None:
        with pytest.raises(Exception) as theirs:
            fn_t(torch)
        assert isinstance(ours.value, type(theirs.value)) or \
            isinstance(theirs.value, type(ours.value)), (ours.value, theirs.value)
    return ours.value


@pytest.mark.parametrize("case", [
    lambda L: L.zeros(3).masked_fill(L.ones(3), 1.0),  # non-bool mask
    lambda L: L.zeros(3).masked_fill(L.ones(3) > 0, L.ones(2)),  # value with dims
    lambda L: L.tril(L.zeros(3)),  # 1-D
    lambda L: L.zeros(3).topk(4),  # k too large
    lambda L: L.zeros(3).kthvalue(0),
    lambda L: L.zeros(2, 2).cumsum(2),  # dim out of range
    lambda L: L.zeros(2, 3).roll([1, 2], [0]),  # shifts and dims disagree
    lambda L: L.einsum("ij,jk->ik", L.zeros(2, 3), L.zeros(4, 2)),  # sizes disagree
    lambda L: L.einsum("ijk->i", L.zeros(2, 3)),  # too many subscripts
    lambda L: L.outer(L.zeros(2, 2), L.zeros(2)),
    lambda L: L.diag(L.zeros(2, 2, 2)),
    lambda L: L.zeros(3, dtype=L.int64).norm(),  # integer norm
    lambda L: L.lerp(L.zeros(2), L.zeros(2, dtype=L.float64), 0.5),  # dtype mismatch
    lambda L: L.addcdiv(L.zeros(2), L.ones(2, dtype=L.int64), L.ones(2, dtype=L.int64)),
    lambda L: L.hypot(L.ones(2, dtype=L.int64), L.ones(2, dtype=L.int64)),
    lambda L: L.lerp(L.ones(2, dtype=L.int64), L.ones(2, dtype=L.int64), 1),
    lambda L: L.cross(L.zeros(2, 2), L.zeros(2, 2), dim=1),
    lambda L: L.repeat_interleave(L.tensor(2.0), 2, dim=0),
    lambda L: L.movedim(L.zeros(2, 3), (0, 0), (0, 1)),
])
def test_bad_input_raises_torchs_error_type(case):
    _raises_same(case, case)


def test_traced_code_fails_where_eager_code_does():
    f = mtc.compile(lambda x: x.topk(5), backend="eager", fullgraph=True)
    with pytest.raises(RuntimeError, match="selected index k out of range"):
        f(mtc.zeros(3))


# --------------------------------------------------------------------------- sampling, scatter_


def test_sampling_frequencies_follow_the_weights():
    mtc.manual_seed(3)
    w = mtc.tensor([[1.0, 0.0, 3.0], [2.0, 2.0, 4.0]])
    draws = mtc.multinomial(w, 20000, replacement=True).numpy()
    for row, weights in zip(draws, w.numpy()):
        freq = np.bincount(row, minlength=3) / row.size
        np.testing.assert_allclose(freq, weights / weights.sum(), atol=0.02)
    # without replacement the first draw has the same law; a zero weight is never drawn
    firsts = np.stack([mtc.multinomial(w, 2).numpy()[:, 0] for _ in range(3000)])
    np.testing.assert_allclose(np.bincount(firsts[:, 0], minlength=3) / 3000, [0.25, 0, 0.75],
                               atol=0.03)
    p = mtc.full((20000,), 0.3)
    assert abs(mtc.bernoulli(p).mean().item() - 0.3) < 0.02
    n = mtc.normal(mtc.full((20000,), 2.0), 0.5)
    assert abs(n.mean().item() - 2.0) < 0.02 and abs(n.std().item() - 0.5) < 0.02


def test_normal_is_differentiable_in_mean_and_std():
    mean, std = mtc.zeros(5, requires_grad=True), mtc.full((5,), 2.0, requires_grad=True)
    y = mtc.normal(mean, std)
    y.sum().backward()
    assert mean.grad.tolist() == [1.0] * 5
    np.testing.assert_allclose(std.grad.numpy(), (y.detach() / 2.0).numpy(), rtol=1e-6)


def test_inplace_sampling_and_scatter_():
    x = mtc.zeros(4, 5)
    assert x.uniform_(2.0, 3.0) is x and bool(((x >= 2) & (x < 3)).all())
    x.normal_(0.0, 1.0)
    assert x._version >= 2
    leaf = mtc.zeros(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf"):
        leaf.normal_()
    y = mtc.zeros(2, 3)
    y.scatter_(1, mtc.tensor([[2], [0]]), 5.0)
    assert y.tolist() == [[0, 0, 5], [5, 0, 0]]
    y.scatter_(1, mtc.tensor([[2], [0]]), mtc.tensor([[2.0], [3.0]]), reduce="multiply")
    assert y.tolist() == [[0, 0, 10], [15, 0, 0]]
    y.scatter_add_(0, mtc.tensor([[1, 1, 1]]), mtc.ones(1, 3))
    assert y.tolist() == [[0, 0, 10], [16, 1, 1]]
    y.index_add_(1, mtc.tensor([0, 0]), mtc.ones(2, 2))
    assert y[:, 0].tolist() == [2, 18]


@needs_torch
def test_scatter_reduce_and_index_ops_match_torch_on_repeated_indices():
    a = np.arange(12.0).reshape(3, 4) - 5
    idx = np.array([[0, 0, 2, 1], [2, 2, 2, 0]])
    src = np.array([[1.0, -2.0, 3.0, 4.0], [5.0, 6.0, -7.0, 8.0]])
    for reduce in ("sum", "prod", "mean", "amax", "amin"):
        for include_self in (True, False):
            ours = _t(a).scatter_reduce(0, _t(idx), _t(src), reduce, include_self=include_self)
            theirs = _torch(a).scatter_reduce(0, _torch(idx), _torch(src), reduce,
                                              include_self=include_self)
            np.testing.assert_allclose(ours.numpy(), theirs.numpy())
    for reduce in ("sum", "mean", "amax", "prod"):
        _grads(lambda x, s: x.scatter_reduce(0, _t(idx), s, reduce),
               lambda x, s: x.scatter_reduce(0, _torch(idx), s, reduce), a, src)
    _grads(lambda x, s: x.index_add(0, _t(np.array([2, 0, 2])), s, alpha=2) ** 2,
           lambda x, s: x.index_add(0, _torch(np.array([2, 0, 2])), s, alpha=2) ** 2,
           a, src[:1].repeat(3, 0)[:, :4] + np.arange(3)[:, None])


# --------------------------------------------------------------------------- special functions


def test_special_functions_against_the_math_module():
    import math

    x = np.concatenate([np.linspace(-9.7, 40.0, 997), [0.5, 1.0, 2.0, 1e-8, 1e6]])
    ours = mtc.lgamma(_t(x)).numpy()
    np.testing.assert_allclose(ours, [math.lgamma(v) for v in x], rtol=1e-12, atol=1e-13)
    y = np.linspace(-0.999, 0.999, 501)
    inv = mtc.erfinv(_t(y)).numpy()
    np.testing.assert_allclose([math.erf(v) for v in inv], y, rtol=0, atol=1e-15)
    # digamma = d lgamma / dx (central differences of math.lgamma), trigamma = d digamma / dx
    pts = np.linspace(0.3, 20.0, 50)
    h = 1e-5
    fd = [(math.lgamma(v + h) - math.lgamma(v - h)) / (2 * h) for v in pts]
    np.testing.assert_allclose(mtc.digamma(_t(pts)).numpy(), fd, rtol=1e-7, atol=1e-7)
    d = mtc.digamma
    fd2 = ((d(_t(pts + h)) - d(_t(pts - h))) / (2 * h)).numpy()
    np.testing.assert_allclose(mtc.polygamma(1, _t(pts)).numpy(), fd2, rtol=1e-6, atol=1e-6)
    assert mtc.lgamma(_t([0.0, -3.0])).tolist() == [np.inf, np.inf]
    assert mtc.erfinv(_t([1.0, -1.0])).tolist() == [np.inf, -np.inf]
    assert np.isnan(mtc.erfinv(_t([1.5])).item())


# --------------------------------------------------------------------------- in-place view ops


def test_inplace_view_ops_change_the_tensor_itself():
    x = mtc.zeros(2, 3)
    assert x.unsqueeze_(0) is x and tuple(x.shape) == (1, 2, 3)
    x.squeeze_(0)
    x.t_()
    assert tuple(x.shape) == (3, 2) and not x.is_contiguous()
    x.transpose_(0, 1)
    x[0, 2] = 7.0  # still the same storage
    assert x.tolist() == [[0, 0, 7], [0, 0, 0]]
    if torch is not None:
        t = torch.zeros(2, 3)
        t.unsqueeze_(0).squeeze_(0).t_().transpose_(0, 1)
        assert tuple(t.shape) == tuple(x.shape) and t.stride() == x.stride()


def test_inplace_view_ops_refuse_what_they_do_not_model():
    with pytest.raises(RuntimeError, match="leaf Variable"):
        mtc.zeros(3, requires_grad=True).unsqueeze_(0)
    with pytest.raises(NotImplementedError, match="view"):
        mtc.zeros(2, 3)[0].unsqueeze_(0)
    with pytest.raises(RuntimeError, match="t_"):
        mtc.zeros(2, 2, 2).t_()

    def f(a):
        b = a * 2
        b.unsqueeze_(0)  # a graph break: run eagerly
        return b.sum(1)

    x = mtc.ones(2, 3)
    assert "unsqueeze_" in mtc.dynamo.explain(f)(x).break_reasons[0].reason
    assert mtc.equal(mtc.compile(f, backend="inductor")(x), f(x))
