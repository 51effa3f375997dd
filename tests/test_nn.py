"""Tests for ``mtc.nn``: Parameter, Module, the layers, functional and init.

Layers are checked against numpy references (hypothesis varies the shapes), gradients against
central finite differences in float64, and — when torch is installed — forward passes,
gradients, reprs and error messages against real torch with copied weights.
"""

import copy
import math
import pickle
from collections import OrderedDict

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitorch_compile as mtc
from minitorch_compile import nn
from minitorch_compile.nn import functional as F
from minitorch_compile.nn import init

# ---------------------------------------------------------------- helpers


def _np(t):
    return t.detach().numpy()


def _t(a, requires_grad=False):
    return mtc.tensor(np.asarray(a), requires_grad=requires_grad)


_erf = np.vectorize(math.erf)


def np_gelu(x, approximate="none"):
    if approximate == "tanh":
        return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))
    return 0.5 * x * (1 + _erf(x / math.sqrt(2)))


def np_log_softmax(x, dim):
    s = x - x.max(axis=dim, keepdims=True)
    return s - np.log(np.exp(s).sum(axis=dim, keepdims=True))


def np_layer_norm(x, k, w=None, b=None, eps=1e-5):
    axes = tuple(range(x.ndim - k, x.ndim))
    mu = x.mean(axis=axes, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=axes, keepdims=True)
    y = (x - mu) / np.sqrt(var + eps)
    return y * (1 if w is None else w) + (0 if b is None else b)


def np_reduce(loss, reduction):
    return {"mean": np.mean, "sum": np.sum, "none": lambda a: a}[reduction](loss)


def np_cross_entropy(x, y, weight=None, ignore_index=-100, reduction="mean", ls=0.0):
    """torch's cross entropy for class-index targets, written out for (N, C) logits."""
    n, c = x.shape
    w = np.ones(c) if weight is None else weight
    logp = np_log_softmax(x, 1)
    valid = y != ignore_index
    safe_y = np.where(valid, y, 0)
    wy = np.where(valid, w[safe_y], 0.0)
    nll = -wy * logp[np.arange(n), safe_y]
    smooth = -(logp * w).sum(1) * valid
    if reduction == "mean":
        nll, smooth = nll.sum() / wy.sum(), smooth.sum() / wy.sum()
    else:
        nll, smooth = np_reduce(nll, reduction), np_reduce(smooth, reduction)
    return (1 - ls) * nll + ls / c * smooth


def numeric_grad(f, arrays, eps=1e-6):
    """Central differences of scalar ``f()`` w.r.t. each numpy array (perturbed in place)."""
    grads = []
    for a in arrays:
        g = np.zeros_like(a)
        for i in np.ndindex(a.shape):
            old = a[i]
            a[i] = old + eps
            hi = f()
            a[i] = old - eps
            lo = f()
            a[i] = old
            g[i] = (hi - lo) / (2 * eps)
        grads.append(g)
    return grads


shapes = st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple)

# ---------------------------------------------------------------- Parameter


def test_parameter_is_a_leaf_that_shares_its_data():
    t = mtc.randn(2, 3)
    p = nn.Parameter(t)
    assert isinstance(p, mtc.Tensor) and isinstance(p, nn.Parameter)
    assert p.requires_grad and p.is_leaf and p.grad_fn is None
    assert np.shares_memory(p._data, t._data)
    with mtc.no_grad():
        p.add_(1.0)
    np.testing.assert_array_equal(_np(p), _np(t))
    assert p._version == t._version == 1
    assert not nn.Parameter(t, requires_grad=False).requires_grad
    assert nn.Parameter().shape == (0,)


def test_parameter_repr_and_derived_tensors_are_plain():
    p = nn.Parameter(mtc.tensor([1.0, 2.0]))
    assert repr(p) == "Parameter containing:\ntensor([1., 2.], requires_grad=True)"
    assert str(p) == repr(p)
    for derived in (p * 2, p.detach(), p[0], p.data):
        assert type(derived) is mtc.Tensor


def test_parameter_copy_and_pickle():
    p = nn.Parameter(mtc.randn(3))
    for q in (copy.deepcopy(p), pickle.loads(pickle.dumps(p))):
        assert type(q) is nn.Parameter and q.requires_grad
        np.testing.assert_array_equal(_np(q), _np(p))
        assert not np.shares_memory(q._data, p._data)


def test_parameter_rejects_non_tensors_and_int_grads():
    with pytest.raises(TypeError):
        nn.Parameter([1.0, 2.0])
    with pytest.raises(RuntimeError, match="floating point"):
        nn.Parameter(mtc.tensor([1, 2]))
    assert not nn.Parameter(mtc.tensor([1, 2]), requires_grad=False).requires_grad


# ---------------------------------------------------------------- Module: registration


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(3, 4)
        self.act = nn.ReLU()
        self.fc2 = nn.Linear(4, 2)
        self.scale = nn.Parameter(mtc.ones(2))
        self.register_buffer("running", mtc.zeros(2))
        self.register_buffer("scratch", mtc.zeros(1), persistent=False)
        self.note = "plain attribute"

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x))) * self.scale + self.running


def test_setattr_sorts_parameters_buffers_modules_and_plain_attributes():
    m = Net()
    assert list(m._parameters) == ["scale"]
    assert list(m._buffers) == ["running", "scratch"]
    assert list(m._modules) == ["fc1", "act", "fc2"]
    assert m.__dict__["note"] == "plain attribute"
    assert m.fc1 is m._modules["fc1"] and m.running is m._buffers["running"]
    assert "scratch" in m._non_persistent_buffers_set
    with pytest.raises(AttributeError, match="'Net' object has no attribute 'missing'"):
        m.missing
    for name in ("scale", "running", "fc1", "fc2", "note"):
        assert name in dir(m)


def test_setattr_type_rules():
    m = Net()
    with pytest.raises(TypeError, match="cannot assign 'torch.FloatTensor' as parameter 'scale'"):
        m.scale = mtc.ones(2)
    with pytest.raises(TypeError, match="as child module 'fc1'"):
        m.fc1 = 3
    with pytest.raises(TypeError, match="as buffer 'running'"):
        m.running = 1.0
    m.running = mtc.ones(2)  # a tensor assigned to a buffer name stays a buffer
    assert "running" in m._buffers
    m.scale = None  # None is allowed and keeps the slot
    assert m._parameters["scale"] is None and m.scale is None
    m.fc1 = nn.Parameter(mtc.ones(1))  # a parameter replaces a module of the same name
    assert "fc1" in m._parameters and "fc1" not in m._modules
    m.note = nn.Identity()
    assert "note" in m._modules and "note" not in m.__dict__
    del m.fc2, m.running
    assert "fc2" not in m._modules and "running" not in m._buffers


def test_register_checks():
    m = nn.Module()
    with pytest.raises(KeyError, match="name can.*contain"):
        m.register_buffer("a.b", mtc.zeros(1))
    with pytest.raises(KeyError, match="empty string"):
        m.register_parameter("", None)
    with pytest.raises(KeyError, match="attribute 'training' already exists"):
        m.register_buffer("training", mtc.zeros(1))
    with pytest.raises(TypeError, match="torch.nn.Parameter or None required"):
        m.register_parameter("w", mtc.zeros(1))
    with pytest.raises(TypeError, match="is not a Module subclass"):
        m.add_module("sub", 3)
    leaf = mtc.ones(2, requires_grad=True)
    nonleaf = nn.Parameter(mtc.ones(2))
    nonleaf.grad_fn = (leaf * 2).grad_fn
    with pytest.raises(ValueError, match="Cannot assign non-leaf Tensor"):
        m.register_parameter("w", nonleaf)

    class Early(nn.Module):
        def __init__(self):
            self.w = nn.Parameter(mtc.ones(1))

    with pytest.raises(AttributeError, match="before Module.__init__"):
        Early()


def test_missing_forward_raises():
    with pytest.raises(NotImplementedError, match='Module \\[Module\\] is missing the required'):
        nn.Module()(1)


# ---------------------------------------------------------------- Module: walking


def test_named_parameters_buffers_modules():
    m = Net()
    assert [n for n, _ in m.named_parameters()] == [
        "scale", "fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"]
    assert [n for n, _ in m.named_parameters(prefix="net")][:2] == ["net.scale", "net.fc1.weight"]
    assert [n for n, _ in m.named_parameters(recurse=False)] == ["scale"]
    assert len(list(m.parameters())) == 5
    assert [n for n, _ in m.named_buffers()] == ["running", "scratch"]
    assert [n for n, _ in m.named_modules()] == ["", "fc1", "act", "fc2"]
    assert [n for n, _ in m.named_children()] == ["fc1", "act", "fc2"]
    assert list(m.modules())[0] is m and len(list(m.children())) == 3
    assert m.get_submodule("fc2") is m.fc2
    outer = nn.Sequential(m)
    assert outer.get_submodule("0.fc1") is m.fc1
    with pytest.raises(AttributeError):
        outer.get_submodule("0.nope")


def test_shared_modules_and_parameters_are_listed_once():
    lin = nn.Linear(2, 2)
    m = nn.Sequential(lin, nn.ReLU(), lin)
    assert len(list(m.parameters())) == 2
    assert len(list(m.named_parameters(remove_duplicate=False))) == 4
    assert [n for n, _ in m.named_modules()] == ["", "0", "1"]
    assert list(m.state_dict()) == ["0.weight", "0.bias", "2.weight", "2.bias"]
    m.load_state_dict(m.state_dict())  # every name is found


# ---------------------------------------------------------------- Module: state_dict


def test_state_dict_round_trip():
    src, dst = Net(), Net()
    with mtc.no_grad():
        src.running.fill_(0.5)
    sd = src.state_dict()
    assert list(sd) == ["scale", "running", "fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"]
    assert all(not v.requires_grad and type(v) is mtc.Tensor for v in sd.values())
    assert np.shares_memory(sd["fc1.weight"]._data, src.fc1.weight._data)
    assert type(src.state_dict(keep_vars=True)["scale"]) is nn.Parameter
    w_before = dst.fc1.weight
    result = dst.load_state_dict(sd)
    assert result.missing_keys == [] and result.unexpected_keys == []
    assert repr(result) == "<All keys matched successfully>"
    assert dst.fc1.weight is w_before  # copied in place: the Parameter keeps its identity
    assert not np.shares_memory(dst.fc1.weight._data, sd["fc1.weight"]._data)
    x = mtc.randn(5, 3)
    np.testing.assert_array_equal(_np(dst(x)), _np(src(x)))


def test_load_state_dict_errors():
    m = Net()
    sd = m.state_dict()
    del sd["fc1.bias"]
    sd["fc2.extra"] = mtc.zeros(1)
    sd["ghost.weight"] = mtc.zeros(1)
    with pytest.raises(RuntimeError) as e:
        m.load_state_dict(sd)
    assert str(e.value) == (
        'Error(s) in loading state_dict for Net:\n\tMissing key(s) in state_dict: "fc1.bias". '
        '\n\tUnexpected key(s) in state_dict: "ghost.weight", "fc2.extra". ')  # torch's order
    res = m.load_state_dict(sd, strict=False)
    assert res.missing_keys == ["fc1.bias"]
    assert res.unexpected_keys == ["ghost.weight", "fc2.extra"]
    bad = m.state_dict()
    bad["fc2.bias"] = mtc.zeros(3)
    with pytest.raises(RuntimeError, match=r"size mismatch for fc2.bias: copying a param with "
                       r"shape mtc.Size\(\[3\]\) from checkpoint, the shape in current model is "
                       r"mtc.Size\(\[2\]\)."):
        m.load_state_dict(bad, strict=False)
    with pytest.raises(TypeError, match="dict-like"):
        m.load_state_dict([1, 2])


def test_load_state_dict_assign_and_dtype_cast():
    m = nn.Linear(2, 2)
    sd = {"weight": mtc.ones(2, 2, dtype=mtc.float64), "bias": mtc.zeros(2)}
    m.load_state_dict(sd)
    assert m.weight.dtype is mtc.float32 and float(m.weight.sum()) == 4.0
    m.load_state_dict(sd, assign=True)
    assert m.weight.dtype is mtc.float64 and isinstance(m.weight, nn.Parameter)
    assert np.shares_memory(m.bias._data, sd["bias"]._data)


# ---------------------------------------------------------------- Module: modes, grads, hooks


def test_train_eval_recurse():
    m = nn.Sequential(nn.Linear(2, 2), nn.Sequential(nn.Dropout(0.5)))
    assert all(x.training for x in m.modules())
    assert m.eval() is m
    assert not any(x.training for x in m.modules())
    m.train()
    assert all(x.training for x in m.modules())
    m[1].train(False)
    assert m.training and not m[1][0].training
    with pytest.raises(ValueError, match="boolean"):
        m.train("yes")


def test_zero_grad_and_requires_grad():
    m = Net()
    m(mtc.randn(4, 3)).sum().backward()
    assert all(p.grad is not None for p in m.parameters())
    m.zero_grad(set_to_none=False)
    assert all(p.grad is not None and not p.grad._data.any() for p in m.parameters())
    m.zero_grad()
    assert all(p.grad is None for p in m.parameters())
    m.requires_grad_(False)
    assert not any(p.requires_grad for p in m.parameters())


def test_forward_hooks():
    m = nn.Linear(2, 2)
    calls = []
    h1 = m.register_forward_pre_hook(lambda mod, args: (args[0] * 0,))
    h2 = m.register_forward_hook(lambda mod, args, out: out + 1)
    m.register_forward_hook(lambda mod, args, out: calls.append("last"))
    m.register_forward_hook(lambda mod, args, out: calls.append("first"), prepend=True)
    x = mtc.randn(3, 2)
    np.testing.assert_allclose(_np(m(x)), np.broadcast_to(_np(m.bias) + 1, (3, 2)))
    assert calls == ["first", "last"]
    h1.remove()
    h2.remove()
    np.testing.assert_allclose(_np(m(x)), _np(F.linear(x, m.weight, m.bias)))
    with m.register_forward_pre_hook(lambda mod, args: mtc.zeros(3, 2)):
        np.testing.assert_allclose(_np(m(x)), np.broadcast_to(_np(m.bias), (3, 2)))
    np.testing.assert_allclose(_np(m(x)), _np(F.linear(x, m.weight, m.bias)))


def test_apply_to_and_dtype_conversion():
    m = Net()
    seen = []
    assert m.apply(lambda mod: seen.append(type(mod).__name__)) is m
    assert seen == ["Linear", "ReLU", "Linear", "Net"]
    m.apply(lambda mod: init.zeros_(mod.bias) if isinstance(mod, nn.Linear) else None)
    assert not m.fc1.bias._data.any()
    w = m.fc1.weight
    m.register_buffer("count", mtc.tensor([3]))
    m(mtc.randn(2, 3)).sum().backward()
    assert m.to(mtc.float64) is m
    assert m.fc1.weight is w and w.dtype is mtc.float64 and w.grad.dtype is mtc.float64
    assert m.running.dtype is mtc.float64 and m.count.dtype is mtc.int64
    assert m(mtc.randn(2, 3, dtype=mtc.float64)).dtype is mtc.float64
    assert m.float().fc2.weight.dtype is mtc.float32
    with pytest.raises(TypeError, match="floating point"):
        m.to(mtc.int64)


def test_deepcopy_and_pickle_module():
    m = Net()
    for c in (copy.deepcopy(m), pickle.loads(pickle.dumps(m))):
        assert type(c.fc1.weight) is nn.Parameter
        assert not np.shares_memory(c.fc1.weight._data, m.fc1.weight._data)
        x = mtc.randn(2, 3)
        np.testing.assert_array_equal(_np(c(x)), _np(m(x)))


# ---------------------------------------------------------------- repr


NESTED_REPR = """Sequential(
  (0): Linear(in_features=2, out_features=3, bias=True)
  (1): ReLU()
  (2): GELU(approximate='tanh')
  (3): LayerNorm((3,), eps=1e-05, elementwise_affine=True, bias=True)
  (4): Dropout(p=0.1, inplace=False)
  (5): Sequential(
    (0): Linear(in_features=3, out_features=3, bias=False)
    (1): Softmax(dim=1)
  )
  (6): ModuleList(
    (0-1): 2 x Tanh()
    (2): Sigmoid()
  )
  (7): ModuleDict(
    (emb): Embedding(4, 3, padding_idx=1)
    (loss): CrossEntropyLoss()
  )
  (8): Flatten(start_dim=1, end_dim=-1)
  (9): Identity()
  (10): MSELoss()
  (11): LogSoftmax(dim=-1)
)"""


def _nested(lib):
    n = lib.nn
    return n.Sequential(
        n.Linear(2, 3), n.ReLU(), n.GELU(approximate="tanh"), n.LayerNorm(3), n.Dropout(0.1),
        n.Sequential(n.Linear(3, 3, bias=False), n.Softmax(dim=1)),
        n.ModuleList([n.Tanh(), n.Tanh(), n.Sigmoid()]),
        n.ModuleDict({"emb": n.Embedding(4, 3, padding_idx=1), "loss": n.CrossEntropyLoss()}),
        n.Flatten(), n.Identity(), n.MSELoss(), n.LogSoftmax(dim=-1))


def test_nested_repr():
    assert repr(_nested(mtc)) == NESTED_REPR
    assert repr(nn.ModuleList()) == "ModuleList()"
    assert repr(nn.ReLU(inplace=True)) == "ReLU(inplace=True)"


# ---------------------------------------------------------------- containers


def test_sequential_container():
    a, b, c = nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1)
    s = nn.Sequential(a, b)
    assert len(s) == 2 and s[0] is a and s[-1] is b and list(s) == [a, b]
    assert s.append(c) is s and s[2] is c
    sub = s[1:]
    assert type(sub) is nn.Sequential and list(sub) == [b, c]
    x = mtc.randn(4, 2)
    np.testing.assert_allclose(_np(s(x)), _np(c(b(a(x)))))
    with pytest.raises(IndexError, match="index 3 is out of range"):
        s[3]
    d = nn.Identity()
    s.insert(1, d)
    assert list(s) == [a, d, b, c]
    del s[1]
    assert list(s) == [a, b, c] and list(s._modules) == ["0", "1", "2"]
    s[1] = d
    assert s[1] is d
    named = nn.Sequential(OrderedDict([("fc", a), ("act", b)]))
    assert [n for n, _ in named.named_parameters()] == ["fc.weight", "fc.bias"]
    assert named.extend([c]) is named and len(named) == 3


def test_module_list_and_dict():
    layers = nn.ModuleList([nn.Linear(2, 2) for _ in range(3)])
    assert len(layers) == 3 and len(list(layers.parameters())) == 6
    assert [n for n, _ in layers.named_parameters()][:2] == ["0.weight", "0.bias"]
    layers.append(nn.ReLU())
    layers += [nn.Tanh()]
    assert isinstance(layers[-1], nn.Tanh) and type(layers[1:3]) is nn.ModuleList
    del layers[0]
    assert list(layers._modules) == ["0", "1", "2", "3"]
    layers.insert(0, nn.Sigmoid())
    assert isinstance(layers[0], nn.Sigmoid) and len(layers) == 5
    with pytest.raises(TypeError, match="iterable"):
        layers.extend(3)
    with pytest.raises(NotImplementedError):
        layers(mtc.zeros(1))

    d = nn.ModuleDict({"a": nn.Linear(1, 1)})
    d["b"] = nn.ReLU()
    d.update([("c", nn.Tanh())])
    assert list(d) == ["a", "b", "c"] and "b" in d and len(d) == 3
    assert list(d.keys()) == ["a", "b", "c"] and len(list(d.parameters())) == 2
    assert isinstance(d.pop("b"), nn.ReLU) and list(d) == ["a", "c"]
    with pytest.raises(ValueError, match="has length 1"):
        d.update([("x",)])
    d.clear()
    assert len(d) == 0


# ---------------------------------------------------------------- layers vs numpy


@given(batch=shapes, fin=st.integers(1, 6), fout=st.integers(1, 6), bias=st.booleans())
def test_linear_forward(batch, fin, fout, bias):
    m = nn.Linear(fin, fout, bias=bias)
    x = np.random.randn(*batch, fin).astype(np.float32)
    ref = x @ _np(m.weight).T + (_np(m.bias) if bias else 0)
    np.testing.assert_allclose(_np(m(_t(x))), ref, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(_np(F.linear(_t(x), m.weight, m.bias)), ref, rtol=1e-5, atol=1e-6)
    assert (m.bias is None) == (not bias)


def test_linear_default_init_bounds():
    m = nn.Linear(256, 200)
    bound = 1 / math.sqrt(256)
    w, b = _np(m.weight), _np(m.bias)
    assert np.abs(w).max() <= bound and np.abs(b).max() <= bound
    assert np.abs(w).max() > 0.99 * bound  # fills the whole range ...
    np.testing.assert_allclose(w.std(), bound / math.sqrt(3), rtol=0.02)  # ... uniformly
    assert m.weight.shape == (200, 256) and m.weight.is_leaf
    assert nn.Linear(3, 2, dtype=mtc.float64).weight.dtype is mtc.float64


ACTIVATIONS = [
    (nn.ReLU(), F.relu, lambda x: np.maximum(x, 0)),
    (nn.GELU(), F.gelu, np_gelu),
    (nn.GELU("tanh"), lambda x: F.gelu(x, approximate="tanh"), lambda x: np_gelu(x, "tanh")),
    (nn.Tanh(), F.tanh, np.tanh),
    (nn.Sigmoid(), F.sigmoid, lambda x: 1 / (1 + np.exp(-x))),
    (nn.Identity(), lambda x: x, lambda x: x),
]


@pytest.mark.parametrize("module,fn,ref", ACTIVATIONS, ids=lambda v: repr(v)[:12])
@given(shape=shapes)
def test_activations(module, fn, ref, shape):
    x = np.random.randn(*shape).astype(np.float32) * 3
    np.testing.assert_allclose(_np(module(_t(x))), ref(x), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(_np(fn(_t(x))), ref(x), rtol=1e-5, atol=1e-6)


def test_relu_inplace():
    x = mtc.tensor([-1.0, 2.0])
    assert nn.ReLU(inplace=True)(x) is x and x.tolist() == [0.0, 2.0]


@given(shape=shapes, data=st.data())
def test_softmax_and_log_softmax(shape, data):
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    x = np.random.randn(*shape).astype(np.float32) * 4
    ref = np_log_softmax(x, dim)
    np.testing.assert_allclose(_np(nn.LogSoftmax(dim)(_t(x))), ref, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(_np(F.log_softmax(_t(x), dim)), ref, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(_np(nn.Softmax(dim)(_t(x))), np.exp(ref), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(_np(F.softmax(_t(x), dim=dim, dtype=mtc.float64)),
                               np.exp(ref), rtol=1e-5, atol=1e-6)


def test_softmax_implicit_dim_warns():
    x = mtc.randn(2, 3)
    with pytest.warns(UserWarning, match="Implicit dimension choice"):
        y = nn.Softmax()(x)
    np.testing.assert_allclose(_np(y).sum(1), 1, rtol=1e-6)


@given(shape=st.lists(st.integers(1, 3), min_size=1, max_size=4).map(tuple), data=st.data())
def test_flatten(shape, data):
    n = len(shape)
    start = data.draw(st.integers(0, n - 1))
    end = data.draw(st.integers(start, n - 1))
    x = np.random.randn(*shape).astype(np.float32)
    ref = x.reshape(shape[:start] + (-1,) + shape[end + 1:])
    np.testing.assert_array_equal(_np(nn.Flatten(start, end)(_t(x))), ref)
    if n >= 2:
        assert nn.Flatten()(_t(x)).shape == (shape[0], int(np.prod(shape[1:])))


@given(lead=shapes, norm=st.lists(st.integers(1, 4), min_size=1, max_size=2).map(tuple),
       affine=st.booleans(), bias=st.booleans())
def test_layer_norm(lead, norm, affine, bias):
    m = nn.LayerNorm(norm, eps=1e-4, elementwise_affine=affine, bias=bias)
    if affine:
        init.normal_(m.weight)
        if bias:
            init.normal_(m.bias)
    x = np.random.randn(*lead, *norm).astype(np.float32) * 2 + 1
    w = _np(m.weight) if m.weight is not None else None
    b = _np(m.bias) if m.bias is not None else None
    ref = np_layer_norm(x.astype(np.float64), len(norm), w, b, 1e-4)
    np.testing.assert_allclose(_np(m(_t(x))), ref, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(_np(F.layer_norm(_t(x), norm, m.weight, m.bias, 1e-4)), ref,
                               rtol=1e-4, atol=1e-4)
    assert (m.bias is not None) == (affine and bias)


def test_layer_norm_init_and_int_shape():
    m = nn.LayerNorm(5)
    assert m.normalized_shape == (5,)
    assert _np(m.weight).tolist() == [1.0] * 5 and _np(m.bias).tolist() == [0.0] * 5


def test_dropout_train_and_eval():
    x = mtc.ones(200, 50)
    m = nn.Dropout(0.3)
    y = _np(m(x))
    kept = y != 0
    np.testing.assert_allclose(y[kept], 1 / 0.7, rtol=1e-6)
    assert abs(1 - kept.mean() - 0.3) < 0.02
    assert m.eval()(x) is x  # identity when not training
    assert F.dropout(x, 0.3, training=False) is x
    assert not _np(F.dropout(x, 1.0)).any()
    assert F.dropout(x, 0.0) is x
    with pytest.raises(ValueError, match="between 0 and 1"):
        nn.Dropout(1.5)
    with pytest.raises(ValueError, match="between 0 and 1"):
        F.dropout(x, -0.1)


def test_dropout_inside_model_follows_model_mode():
    model = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5))
    x = mtc.randn(64, 4)
    model.eval()
    np.testing.assert_array_equal(_np(model(x)), _np(model(x)))
    model.train()
    assert not np.array_equal(_np(model(x)), _np(model(x)))


@given(idx_shape=shapes, num=st.integers(2, 6), dim=st.integers(1, 4), data=st.data())
def test_embedding(idx_shape, num, dim, data):
    pad = data.draw(st.none() | st.integers(-num, num - 1))
    m = nn.Embedding(num, dim, padding_idx=pad)
    idx = np.random.randint(0, num, size=idx_shape)
    w = _np(m.weight).copy()
    out = m(_t(idx))
    np.testing.assert_array_equal(_np(out), w[idx])
    np.testing.assert_array_equal(_np(F.embedding(_t(idx), m.weight, pad)), w[idx])
    g = np.random.randn(*idx_shape, dim).astype(np.float32)
    out.backward(_t(g))
    ref = np.zeros_like(w)
    np.add.at(ref, idx.reshape(-1), g.reshape(-1, dim))
    if pad is not None:
        p = pad % num
        assert m.padding_idx == p and not w[p].any()
        ref[p] = 0
    np.testing.assert_allclose(_np(m.weight.grad), ref, rtol=1e-5, atol=1e-6)


def test_embedding_checks_and_from_pretrained():
    with pytest.raises(AssertionError, match="Padding_idx"):
        nn.Embedding(3, 2, padding_idx=3)
    w = mtc.randn(4, 2)
    e = nn.Embedding.from_pretrained(w)
    assert not e.weight.requires_grad and np.shares_memory(e.weight._data, w._data)
    assert nn.Embedding.from_pretrained(w, freeze=False).weight.requires_grad
    weights = np.stack([_np(nn.Embedding(50, 40).weight) for _ in range(2)])
    assert abs(weights.std() - 1) < 0.05 and abs(weights.mean()) < 0.05  # N(0, 1) init


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@given(shape=shapes)
def test_mse_loss(reduction, shape):
    x, y = np.random.randn(*shape), np.random.randn(*shape)
    ref = np_reduce((x - y) ** 2, reduction)
    np.testing.assert_allclose(_np(nn.MSELoss(reduction=reduction)(_t(x), _t(y))), ref,
                               rtol=1e-10)
    np.testing.assert_allclose(_np(F.mse_loss(_t(x), _t(y), reduction=reduction)), ref,
                               rtol=1e-10)
    w = np.random.rand(*shape)
    wref = {"mean": (w * (x - y) ** 2).sum() / w.sum(), "sum": (w * (x - y) ** 2).sum(),
            "none": w * (x - y) ** 2}[reduction]
    np.testing.assert_allclose(_np(F.mse_loss(_t(x), _t(y), reduction=reduction,
                                              weight=_t(w))), wref, rtol=1e-10)


def test_mse_loss_legacy_arguments():
    x, y = mtc.randn(3), mtc.randn(3)
    with pytest.warns(UserWarning, match="reduction='sum'"):
        loss = nn.MSELoss(size_average=False)
    assert loss.reduction == "sum"
    with pytest.warns(UserWarning):
        np.testing.assert_allclose(_np(F.mse_loss(x, y, reduce=False)), _np((x - y) ** 2))


@given(n=st.integers(1, 6), c=st.integers(2, 5), weighted=st.booleans(),
       ignore=st.booleans(), ls=st.sampled_from([0.0, 0.1, 0.5]),
       reduction=st.sampled_from(["mean", "sum", "none"]))
def test_cross_entropy(n, c, weighted, ignore, ls, reduction):
    x = np.random.randn(n, c) * 2
    y = np.random.randint(0, c, size=n)
    if ignore:
        y[0] = -1  # make sure at least one target is kept when n > 1
    ignore_index = -1 if ignore else -100
    if ignore and n == 1 and reduction == "mean":
        return  # mean over zero targets is 0/0 (nan) in torch too
    w = np.random.rand(c) + 0.5 if weighted else None
    ref = np_cross_entropy(x, y, w, ignore_index, reduction, ls)
    kw = dict(ignore_index=ignore_index, reduction=reduction, label_smoothing=ls)
    wt = None if w is None else _t(w)
    got = nn.CrossEntropyLoss(weight=wt, **kw)(_t(x), _t(y))
    np.testing.assert_allclose(_np(got), ref, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(_np(F.cross_entropy(_t(x), _t(y), wt, **kw)), ref, rtol=1e-8,
                               atol=1e-10)


def test_nll_loss_and_probability_targets():
    x = np.random.randn(5, 3)
    y = np.random.randint(0, 3, size=5)
    logp = np_log_softmax(x, 1)
    ref = -logp[np.arange(5), y].mean()
    np.testing.assert_allclose(_np(nn.NLLLoss()(_t(logp), _t(y))), ref, rtol=1e-10)
    np.testing.assert_allclose(_np(F.nll_loss(_t(logp), _t(y))), ref, rtol=1e-10)
    probs = np.exp(np_log_softmax(np.random.randn(5, 3), 1))
    np.testing.assert_allclose(_np(F.cross_entropy(_t(x), _t(probs))),
                               -(probs * logp).sum(1).mean(), rtol=1e-10)


def test_loss_weight_is_a_buffer():
    loss = nn.CrossEntropyLoss(weight=mtc.ones(3))
    assert list(loss.state_dict()) == ["weight"] and list(loss.parameters()) == []
    assert list(nn.CrossEntropyLoss().state_dict()) == []


# ---------------------------------------------------------------- gradients vs finite differences


def _check_grads(loss_fn, arrays, tensors, rtol=1e-5, atol=1e-7):
    loss_fn().backward()
    analytic = [_np(t.grad).copy() for t in tensors]

    def f():
        with mtc.no_grad():
            return loss_fn().item()

    for a, n in zip(analytic, numeric_grad(f, arrays)):
        np.testing.assert_allclose(a, n, rtol=rtol, atol=atol)


@given(batch=st.integers(1, 3), fin=st.integers(1, 4), fout=st.integers(1, 3))
def test_linear_gradients_match_finite_differences(batch, fin, fout):
    m = nn.Linear(fin, fout, dtype=mtc.float64)
    x = _t(np.random.randn(batch, fin), requires_grad=True)
    cot = _t(np.random.randn(batch, fout))
    _check_grads(lambda: (m(x) * cot).sum(), [x._data, m.weight._data, m.bias._data],
                 [x, m.weight, m.bias])


@given(lead=st.integers(1, 3), norm=st.integers(2, 5))
def test_layer_norm_gradients_match_finite_differences(lead, norm):
    m = nn.LayerNorm(norm, dtype=mtc.float64)
    init.normal_(m.weight)
    init.normal_(m.bias)
    x = _t(np.random.randn(lead, norm), requires_grad=True)
    cot = _t(np.random.randn(lead, norm))
    _check_grads(lambda: (m(x) * cot).sum(), [x._data, m.weight._data, m.bias._data],
                 [x, m.weight, m.bias])


@given(n=st.integers(1, 4), c=st.integers(2, 4), ls=st.sampled_from([0.0, 0.2]),
       weighted=st.booleans())
def test_cross_entropy_gradients_match_finite_differences(n, c, ls, weighted):
    w = _t(np.random.rand(c) + 0.5) if weighted else None
    loss = nn.CrossEntropyLoss(weight=w, label_smoothing=ls)
    x = _t(np.random.randn(n, c), requires_grad=True)
    y = _t(np.random.randint(0, c, size=n))
    _check_grads(lambda: loss(x, y), [x._data], [x])


# ---------------------------------------------------------------- init


def test_calculate_gain_and_fans():
    assert init.calculate_gain("linear") == 1 and init.calculate_gain("sigmoid") == 1
    assert init.calculate_gain("relu") == math.sqrt(2)
    assert init.calculate_gain("tanh") == 5 / 3 and init.calculate_gain("selu") == 0.75
    assert init.calculate_gain("leaky_relu") == math.sqrt(2 / (1 + 0.01**2))
    assert init.calculate_gain("leaky_relu", math.sqrt(5)) == math.sqrt(1 / 3)
    with pytest.raises(ValueError, match="Unsupported nonlinearity"):
        init.calculate_gain("swish")
    with pytest.raises(ValueError, match="not a valid number"):
        init.calculate_gain("leaky_relu", "x")
    assert init._calculate_fan_in_and_fan_out(mtc.empty(5, 3)) == (3, 5)
    assert init._calculate_fan_in_and_fan_out(mtc.empty(8, 4, 3, 3)) == (36, 72)
    with pytest.raises(ValueError, match="fewer than 2 dimensions"):
        init._calculate_fan_in_and_fan_out(mtc.empty(4))
    with pytest.raises(ValueError, match="Mode fan_avg not supported"):
        init.kaiming_uniform_(mtc.empty(2, 2), mode="fan_avg")


SCALED_INITS = [  # (function, kwargs, expected std for a (out=300, in=200) weight, uniform?)
    (init.kaiming_uniform_, {}, math.sqrt(2 / 200), True),  # a=0: leaky_relu gain is sqrt(2)
    (init.kaiming_uniform_, dict(a=math.sqrt(5)), 1 / math.sqrt(3 * 200), True),  # Linear's
    (init.kaiming_uniform_, dict(mode="fan_out", nonlinearity="relu"),
     math.sqrt(2) / math.sqrt(300), True),
    (init.kaiming_normal_, dict(nonlinearity="relu"), math.sqrt(2 / 200), False),
    (init.xavier_uniform_, dict(gain=2.0), 2 * math.sqrt(2 / 500), True),
    (init.xavier_normal_, {}, math.sqrt(2 / 500), False),
]


@pytest.mark.parametrize("fn,kwargs,std,uniform", SCALED_INITS)
def test_scaled_inits(fn, kwargs, std, uniform):
    p = nn.Parameter(mtc.empty(300, 200))
    assert fn(p, **kwargs) is p
    a = _np(p)
    np.testing.assert_allclose(a.std(), std, rtol=0.02)
    assert abs(a.mean()) < 0.02 * std * 10
    if uniform:
        assert np.abs(a).max() <= math.sqrt(3) * std * (1 + 1e-6)
    assert p.is_leaf and p.grad_fn is None and p._version == 1


def test_basic_inits_and_reproducibility():
    t = mtc.empty(1000)
    init.uniform_(t, -2.0, 3.0)
    assert _np(t).min() >= -2 and _np(t).max() < 3 and abs(_np(t).mean() - 0.5) < 0.1
    init.normal_(t, 5.0, 0.1)
    assert abs(_np(t).mean() - 5) < 0.02 and abs(_np(t).std() - 0.1) < 0.01
    assert _np(init.constant_(t, 0.25)).tolist() == [0.25] * 1000
    assert not _np(init.zeros_(t)).any() and _np(init.ones_(t)).min() == 1
    assert t._version == 5
    mtc.manual_seed(7)
    a = _np(nn.Linear(4, 3).weight).copy()
    mtc.manual_seed(7)
    np.testing.assert_array_equal(_np(nn.Linear(4, 3).weight), a)
    g1, g2 = np.random.default_rng(3), np.random.default_rng(3)
    np.testing.assert_array_equal(_np(init.normal_(mtc.empty(5), generator=g1)),
                                  _np(init.normal_(mtc.empty(5), generator=g2)))
    with pytest.warns(UserWarning, match="zero-element"):
        init.kaiming_uniform_(mtc.empty(0, 3))


def test_init_of_a_parameter_used_in_a_graph_is_detected():
    p = nn.Parameter(mtc.randn(3))
    y = (p * p).sum()
    init.normal_(p)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()


# ---------------------------------------------------------------- comparison with real torch


def _torch_tensor(torch, a, requires_grad=False):
    return torch.tensor(np.array(a), requires_grad=requires_grad)


def _copy_into_torch(torch, ours, theirs):
    with torch.no_grad():
        for name, v in ours.state_dict().items():
            theirs.state_dict()[name].copy_(torch.from_numpy(_np(v).copy()))


@pytest.mark.torch
def test_torch_repr_and_state_dict_keys():
    torch = pytest.importorskip("torch")
    assert repr(_nested(mtc)) == repr(_nested(torch))
    ours, theirs = _nested(mtc), _nested(torch)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]


@pytest.mark.torch
def test_torch_load_state_dict_message():
    torch = pytest.importorskip("torch")
    msgs = []
    for lib in (mtc, torch):
        m = lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.ReLU(), lib.nn.Linear(2, 1))
        sd = dict(m.state_dict())
        del sd["0.bias"]
        sd["1.weight"] = sd["2.weight"]
        with pytest.raises(RuntimeError) as e:
            m.load_state_dict(sd)
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]


def _compare_module(torch, ours, theirs, inputs, float_inputs=(0,), atol=1e-5):
    """Copy weights; compare outputs, input grads and parameter grads."""
    _copy_into_torch(torch, ours, theirs)
    xs_m = [_t(a, requires_grad=i in float_inputs) for i, a in enumerate(inputs)]
    xs_t = [_torch_tensor(torch, a, requires_grad=i in float_inputs)
            for i, a in enumerate(inputs)]
    out_m, out_t = ours(*xs_m), theirs(*xs_t)
    np.testing.assert_allclose(_np(out_m), out_t.detach().numpy(), rtol=1e-5, atol=atol)
    cot = np.asarray(np.random.randn(*out_t.shape), dtype=out_t.detach().numpy().dtype)
    out_m.backward(_t(cot))
    out_t.backward(torch.from_numpy(cot))
    for i in float_inputs:
        np.testing.assert_allclose(_np(xs_m[i].grad), xs_t[i].grad.numpy(), rtol=1e-5,
                                   atol=atol)
    for (name, p), (_, q) in zip(ours.named_parameters(), theirs.named_parameters()):
        if q.grad is None:
            assert p.grad is None, name
        else:
            np.testing.assert_allclose(_np(p.grad), q.grad.numpy(), rtol=1e-5, atol=atol)


@pytest.mark.torch
@pytest.mark.parametrize("shape,fin,fout,bias", [((4,), 3, 5, True), ((2, 3), 4, 2, False),
                                                 ((1,), 1, 1, True)])
def test_torch_linear(shape, fin, fout, bias):
    torch = pytest.importorskip("torch")
    x = np.random.randn(*shape, fin).astype(np.float32)
    _compare_module(torch, nn.Linear(fin, fout, bias=bias),
                    torch.nn.Linear(fin, fout, bias=bias), [x])


@pytest.mark.torch
@pytest.mark.parametrize("affine,bias", [(True, True), (True, False), (False, False)])
def test_torch_layer_norm(affine, bias):
    torch = pytest.importorskip("torch")
    ours = nn.LayerNorm((3, 4), eps=1e-3, elementwise_affine=affine, bias=bias)
    for p in ours.parameters():
        init.normal_(p)
    theirs = torch.nn.LayerNorm((3, 4), eps=1e-3, elementwise_affine=affine, bias=bias)
    _compare_module(torch, ours, theirs, [np.random.randn(2, 3, 4).astype(np.float32) * 3])


@pytest.mark.torch
@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_torch_gelu(approximate):
    torch = pytest.importorskip("torch")
    x = np.random.randn(5, 6).astype(np.float32) * 3
    _compare_module(torch, nn.GELU(approximate), torch.nn.GELU(approximate=approximate), [x])


@pytest.mark.torch
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted,ignore_index,ls", [(False, -100, 0.0), (True, -100, 0.0),
                                                      (False, 1, 0.0), (True, 2, 0.1),
                                                      (False, -100, 0.3), (True, 0, 0.25)])
def test_torch_cross_entropy(reduction, weighted, ignore_index, ls):
    torch = pytest.importorskip("torch")
    x = np.random.randn(6, 4).astype(np.float32) * 2
    y = np.array([0, 1, 2, 3, 1, 2])
    w = (np.random.rand(4) + 0.5).astype(np.float32) if weighted else None
    kw = dict(ignore_index=ignore_index, reduction=reduction, label_smoothing=ls)
    ours = nn.CrossEntropyLoss(weight=None if w is None else _t(w), **kw)
    theirs = torch.nn.CrossEntropyLoss(weight=None if w is None else torch.tensor(w), **kw)
    _compare_module(torch, ours, theirs, [x, y])


@pytest.mark.torch
def test_torch_cross_entropy_probability_targets_and_3d():
    torch = pytest.importorskip("torch")
    probs = np.exp(np_log_softmax(np.random.randn(4, 3), 1)).astype(np.float32)
    x = np.random.randn(4, 3).astype(np.float32)
    _compare_module(torch, nn.CrossEntropyLoss(label_smoothing=0.1),
                    torch.nn.CrossEntropyLoss(label_smoothing=0.1), [x, probs])
    x3 = np.random.randn(2, 3, 5).astype(np.float32)
    y3 = np.random.randint(0, 3, size=(2, 5))
    _compare_module(torch, nn.CrossEntropyLoss(), torch.nn.CrossEntropyLoss(), [x3, y3])


@pytest.mark.torch
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_torch_mse_loss(reduction):
    torch = pytest.importorskip("torch")
    a, b = np.random.randn(3, 4).astype(np.float32), np.random.randn(3, 4).astype(np.float32)
    _compare_module(torch, nn.MSELoss(reduction=reduction),
                    torch.nn.MSELoss(reduction=reduction), [a, b], float_inputs=(0, 1))


@pytest.mark.torch
@pytest.mark.parametrize("padding_idx", [None, 0, -1])
def test_torch_embedding(padding_idx):
    torch = pytest.importorskip("torch")
    idx = np.array([[0, 2, 4], [4, 4, 1]])
    _compare_module(torch, nn.Embedding(5, 3, padding_idx=padding_idx),
                    torch.nn.Embedding(5, 3, padding_idx=padding_idx), [idx], float_inputs=())
    assert repr(nn.Embedding(5, 3, padding_idx=padding_idx)) == \
        repr(torch.nn.Embedding(5, 3, padding_idx=padding_idx))


@pytest.mark.torch
def test_torch_small_model_forward_backward():
    torch = pytest.importorskip("torch")

    def build(lib):
        n = lib.nn
        return n.Sequential(n.Linear(6, 8), n.GELU(), n.LayerNorm(8), n.Linear(8, 3),
                            n.LogSoftmax(dim=1))

    _compare_module(torch, build(mtc), build(torch), [np.random.randn(5, 6).astype(np.float32)])


def test_cross_entropy_rejects_class_indices_out_of_range():
    """The one-hot decomposition would silently ignore them; torch raises the same error."""
    x = mtc.randn(3, 4)
    with pytest.raises(IndexError, match="Target 4 is out of bounds"):
        mtc.nn.functional.cross_entropy(x, mtc.tensor([0, 4, 1]))
    with pytest.raises(IndexError, match="Target -2 is out of bounds"):
        mtc.nn.functional.nll_loss(x.log_softmax(1), mtc.tensor([0, -2, 1]))
    mtc.nn.functional.cross_entropy(x, mtc.tensor([0, -100, 1]))  # ignore_index is fine
