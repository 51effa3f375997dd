"""Guard soundness: whatever a trace assumed, changing it recompiles — never a stale result.

Each test compiles a program, calls it, changes one thing the trace depended on (a global, a
module attribute, a tensor's metadata, a container's length or keys, a constant argument, a
closure cell, a default ...), calls again and checks: the result equals eager, a new cache
entry exists, and the recorded failure reason names the guard in words.  Then the recompile
limit: the 9th distinct compile falls back to eager with a warning and stays correct.
"""

import warnings

import pytest

import minitorch_compile as mtc
from minitorch_compile import nn
from minitorch_compile.dynamo import RECOMPILE_LIMIT

from .dynamo_utils import CountingBackend, assert_compiled, assert_same


@pytest.fixture(autouse=True)
def _reset():
    mtc.dynamo.reset()
    yield
    mtc.dynamo.reset()


def compiled(fn, backend="eager"):
    return mtc.compile(fn, backend=backend)


def same(fn, cfn, *args, compiled=True, **kwargs):
    """Compiled and eager agree on these inputs (the compiled call goes first), and — unless
    the test is about an eager fallback — every entry of ``fn`` runs compiled code."""
    actual = cfn(*args, **kwargs)
    expected = fn(*args, **kwargs)
    assert_same(actual, expected)
    if compiled:
        assert_compiled(fn)
    return actual


def n_entries(fn) -> int:
    return len(mtc.dynamo.cache_entries(fn))


def reason(fn, *args, index=0, **kwargs) -> str:
    """Why entry ``index`` of ``fn`` does not accept these arguments."""
    cfn = compiled(fn)
    L, _ = cfn._frame_locals(args, kwargs)
    return mtc.dynamo.cache_entries(fn)[index].guard.failure_reason(L)


# ============================================================== tensors
def f_tensor(x):
    return x.cos() * 2


@pytest.mark.parametrize("make_second,why", [
    (lambda: mtc.randn(8), "tensor 'x' size mismatch at index 0. expected 10, actual 8"),
    (lambda: mtc.randn(10, dtype=mtc.float64), "tensor 'x' dtype mismatch. expected float32, "
                                               "actual float64"),
    (lambda: mtc.randn(10, requires_grad=True), "tensor 'x' requires_grad mismatch. expected "
                                                "requires_grad=0"),
    (lambda: mtc.randn(10).npu(), "tensor 'x' device mismatch. expected cpu, actual npu:0"),
    (lambda: mtc.randn(10, 1), "tensor 'x' rank mismatch. expected 1, actual 2"),
    (lambda: nn.Parameter(mtc.randn(10)), "tensor 'x' type mismatch. expected Tensor, actual "
                                          "Parameter"),
])
def test_tensor_metadata_change_recompiles(make_second, why):
    cfn = compiled(f_tensor)
    same(f_tensor, cfn, mtc.randn(10))
    second = make_second()
    assert reason(f_tensor, second) == why
    same(f_tensor, cfn, second)
    assert n_entries(f_tensor) == 2
    same(f_tensor, cfn, mtc.randn(10))  # the first entry still serves the first kind of input
    assert n_entries(f_tensor) == 2


def f_mul(x):
    return x * 2


def test_tensor_then_float_recompiles():
    cfn = compiled(f_mul)
    same(f_mul, cfn, mtc.randn(3))
    assert reason(f_mul, 3.0) == "'x' is not a tensor (got float)"
    same(f_mul, cfn, 3.0)
    same(f_mul, cfn, 4.0)
    assert n_entries(f_mul) == 3


def test_new_values_same_metadata_hit_the_cache():
    cfn = compiled(f_tensor)
    for _ in range(3):
        same(f_tensor, cfn, mtc.randn(10))
    assert n_entries(f_tensor) == 1


def f_matmul(x, w):
    return x @ w


def test_transposed_input_has_other_strides():
    cfn = compiled(f_matmul)
    w = mtc.randn(4, 3)
    same(f_matmul, cfn, mtc.randn(2, 4), w)
    xt = mtc.randn(4, 2).t()  # same shape (2, 4), column-major strides
    assert reason(f_matmul, xt, w) == "tensor 'x' stride mismatch at index 0. expected 4, actual 1"
    same(f_matmul, cfn, xt, w)
    assert n_entries(f_matmul) == 2


def test_requires_grad_change_recompiles_and_grads_flow():
    cfn = compiled(f_tensor)
    x = mtc.randn(10)
    assert not cfn(x).requires_grad
    xg = mtc.randn(10, requires_grad=True)
    out = cfn(xg)
    assert out.requires_grad
    out.sum().backward()
    assert mtc.allclose(xg.grad, -2 * xg.detach().sin())
    assert n_entries(f_tensor) == 2


def test_grad_mode_change_recompiles():
    cfn = compiled(f_tensor)
    x = mtc.randn(10, requires_grad=True)
    assert cfn(x).requires_grad
    with mtc.no_grad():
        assert not cfn(x).requires_grad
        assert reason(f_tensor, x, index=0) == "___grad_enabled() is True"
    assert len(assert_compiled(f_tensor, graphs=2)) == 2


# ============================================================== constants and containers
def f_const(x, n, mode="a"):
    return x * n if mode == "a" else x - n


@pytest.mark.parametrize("args,why", [
    ((3,), "___check_type_id(L['n'], {int}) and L['n'] == 2"),
    ((2.0,), "___check_type_id(L['n'], {int}) and L['n'] == 2"),
    ((True,), "___check_type_id(L['n'], {int}) and L['n'] == 2"),
    ((2, "b"), "___check_type_id(L['mode'], {str}) and L['mode'] == 'a'"),
])
def test_constant_argument_change_recompiles(args, why):
    cfn = compiled(f_const)
    x = mtc.randn(3)
    same(f_const, cfn, x, 2)
    got = reason(f_const, x, *args)
    assert got == why.format(int=id(int), str=id(str))
    same(f_const, cfn, x, *args)
    assert n_entries(f_const) == 2


def f_to(x, a):
    return x.to(a) if isinstance(a, mtc.dtype) else x * a if isinstance(a, float) else x


@pytest.mark.parametrize("value", [mtc.float64, mtc.device("cpu"), float("inf"), float("nan"),
                                   -0.0, 1e300, 2j, b"raw", ...])
def test_constants_without_a_literal_repr_hit_the_cache(value):
    cfn = compiled(f_to)
    x = mtc.randn(2)
    for _ in range(3):
        cfn(x, value)
    assert n_entries(f_to) == 1, mtc.dynamo.cache_entries(f_to)[0].guard_source
    other = {mtc.float64: mtc.float32, float("inf"): float("-inf")}.get(value, 5.0)
    if isinstance(value, float) and value != value:
        other = 5.0
    same(f_to, cfn, x, other)
    assert n_entries(f_to) == 2


def test_dict_with_dtype_keys_runs_eagerly_and_hits_the_cache():
    def f(x, d):
        return x * len(d)

    cfn = compiled(f)
    d = {mtc.float32: 1}
    cfn(mtc.randn(2), d)
    cfn(mtc.randn(2), d)
    entries = mtc.dynamo.cache_entries(f)
    assert len(entries) == 1 and "not literals" in entries[0].reason


def f_list(xs):
    return sum(xs) * len(xs)


def test_list_length_change_recompiles():
    cfn = compiled(f_list)
    same(f_list, cfn, [mtc.randn(2), mtc.randn(2)])
    three = [mtc.randn(2), mtc.randn(2), mtc.randn(2)]
    assert reason(f_list, three) == "len(L['xs']) == 2"
    same(f_list, cfn, three)
    assert n_entries(f_list) == 2


def test_list_became_tuple_or_item_type_changed():
    cfn = compiled(f_list)
    same(f_list, cfn, [mtc.randn(2), mtc.randn(2)])
    same(f_list, cfn, (mtc.randn(2), mtc.randn(2)))
    same(f_list, cfn, [mtc.randn(2), 1.0])
    assert n_entries(f_list) == 3


def f_dict(d):
    return [v * 2 for v in d.values()], list(d)


def test_dict_keys_change_recompiles():
    cfn = compiled(f_dict)
    same(f_dict, cfn, {"a": mtc.randn(2), "b": mtc.randn(2)})
    other = {"a": mtc.randn(2), "c": mtc.randn(2)}
    assert reason(f_dict, other) == "list(L['d'].keys()) == ['a', 'b']"
    same(f_dict, cfn, other)
    reordered = {"b": mtc.randn(2), "a": mtc.randn(2)}
    same(f_dict, cfn, reordered)  # order is part of the keys guard: results are ordered
    assert n_entries(f_dict) == 3


def f_dict_const(x, cfg):
    return x * cfg["scale"]


def test_dict_value_change_recompiles():
    cfn = compiled(f_dict_const)
    cfg = {"scale": 2.0}
    same(f_dict_const, cfn, mtc.randn(2), cfg)
    cfg["scale"] = 5.0
    same(f_dict_const, cfn, mtc.randn(2), cfg)
    assert n_entries(f_dict_const) == 2


def f_optional(x, b=None):
    return x if b is None else x + b


def test_none_then_tensor_recompiles():
    cfn = compiled(f_optional)
    same(f_optional, cfn, mtc.randn(2))
    same(f_optional, cfn, mtc.randn(2), mtc.randn(2))
    same(f_optional, cfn, mtc.randn(2), None)
    assert n_entries(f_optional) == 2


# ============================================================== globals
SCALE = 2.0
WEIGHT = mtc.randn(3)
USE_COS = True


def f_globals(x):
    y = x.cos() if USE_COS else x.sin()
    return y * SCALE + WEIGHT


def test_global_constant_change_recompiles():
    global SCALE
    cfn = compiled(f_globals)
    x = mtc.randn(3)
    same(f_globals, cfn, x)
    SCALE = 3.0
    try:
        assert "G['SCALE'] == 2.0" in reason(f_globals, x)
        same(f_globals, cfn, x)
    finally:
        SCALE = 2.0
    assert n_entries(f_globals) == 2


def test_global_flag_change_recompiles():
    global USE_COS
    cfn = compiled(f_globals)
    x = mtc.randn(3)
    same(f_globals, cfn, x)
    USE_COS = False
    try:
        same(f_globals, cfn, x)
    finally:
        USE_COS = True
    assert n_entries(f_globals) == 2


def test_global_tensor_reassigned():
    global WEIGHT
    cfn = compiled(f_globals)
    x = mtc.randn(1)
    saved = WEIGHT
    same(f_globals, cfn, x)
    try:
        WEIGHT = mtc.randn(3)  # same metadata: the graph input is reloaded, no recompile
        same(f_globals, cfn, x)
        assert n_entries(f_globals) == 1
        WEIGHT = mtc.randn(5)
        assert reason(f_globals, x) == \
            "tensor 'G['WEIGHT']' size mismatch at index 0. expected 3, actual 5"
        same(f_globals, cfn, x)
        assert n_entries(f_globals) == 2
    finally:
        WEIGHT = saved


def helper(t):
    return t * 2


def f_calls_helper(x):
    return helper(x) + 1


def test_global_function_replaced_recompiles():
    global helper
    cfn = compiled(f_calls_helper)
    x = mtc.randn(2)
    same(f_calls_helper, cfn, x)
    saved = helper
    try:
        helper = lambda t: t * 10  # noqa: E731
        same(f_calls_helper, cfn, x)
    finally:
        helper = saved
    assert n_entries(f_calls_helper) == 2


def with_default(t, k=2):
    return t * k


def f_default(x):
    return with_default(x)


def test_default_of_inlined_function_changed():
    cfn = compiled(f_default)
    x = mtc.randn(2)
    same(f_default, cfn, x)
    with_default.__defaults__ = (7,)
    try:
        same(f_default, cfn, x)
    finally:
        with_default.__defaults__ = (2,)
    assert n_entries(f_default) == 2


def f_len(x):
    return x * len([1, 2, 3])


def test_shadowing_a_builtin_recompiles():
    cfn = compiled(f_len)
    x = mtc.randn(2)
    same(f_len, cfn, x)
    globals()["len"] = lambda s: 100
    try:
        assert reason(f_len, x) == "'len' not in G"
        same(f_len, cfn, x)
    finally:
        del globals()["len"]
    assert n_entries(f_len) == 2
    same(f_len, cfn, x)
    assert n_entries(f_len) == 2


# ============================================================== closures
def make_counter_pair():
    k = 2

    def inner(x):
        return x * k

    def set_k(v):
        nonlocal k
        k = v

    return inner, set_k


def test_closure_cell_change_recompiles():
    inner, set_k = make_counter_pair()
    cfn = compiled(inner)
    x = mtc.randn(2)
    same(inner, cfn, x)
    set_k(5)
    same(inner, cfn, x)
    assert n_entries(inner) == 2


def make_scaler(k, bias):
    def scaler(x):
        return x * k + bias
    return scaler


def test_closures_sharing_one_code_object():
    a, b = make_scaler(2.0, mtc.ones(2)), make_scaler(3.0, mtc.zeros(2))
    ca, cb = compiled(a), compiled(b)
    x = mtc.randn(2)
    for _ in range(2):
        same(a, ca, x)
        same(b, cb, x)
    assert a.__code__ is b.__code__ and n_entries(a) == 2
    c = make_scaler(2.0, mtc.full((2,), 5.0))  # same constant, another tensor: a hit
    same(c, compiled(c), x)
    assert n_entries(a) == 2


def make_inlined_closure():
    state = {"k": 2.0}

    def scaled(t):
        return t * state["k"]

    def outer(x):
        return scaled(x) + 1

    return outer, state


def test_closure_of_inlined_function_changes():
    outer, state = make_inlined_closure()
    cfn = compiled(outer)
    x = mtc.randn(2)
    same(outer, cfn, x)
    state["k"] = 3.0
    same(outer, cfn, x)
    assert n_entries(outer) == 2


# ============================================================== modules and objects
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)
        self.scale = 2.0
        self.act = "relu"

    def forward(self, x):
        y = self.lin(x) * self.scale
        if self.training:
            y = y + 1
        return y.relu() if self.act == "relu" else y.tanh()


def f_mod(x, mod):
    return mod(x)


def test_training_flag_change_recompiles():
    mod, x = Net(), mtc.randn(2, 3)
    cfn = compiled(f_mod)
    same(f_mod, cfn, x, mod)
    mod.eval()
    assert reason(f_mod, x, mod) == "L['mod'].training is True"
    same(f_mod, cfn, x, mod)
    mod.train()
    same(f_mod, cfn, x, mod)
    assert n_entries(f_mod) == 2


def test_plain_module_attribute_change_recompiles():
    mod, x = Net(), mtc.randn(2, 3)
    cfn = compiled(f_mod)
    same(f_mod, cfn, x, mod)
    mod.scale = 4.0
    assert "L['mod'].scale == 2.0" in reason(f_mod, x, mod)
    same(f_mod, cfn, x, mod)
    mod.act = "tanh"
    same(f_mod, cfn, x, mod)
    assert n_entries(f_mod) == 3


def test_parameter_replaced():
    mod, x = Net(), mtc.randn(2, 3)
    cfn = compiled(f_mod)
    same(f_mod, cfn, x, mod)
    mod.lin.weight = nn.Parameter(mtc.randn(3, 3))  # same metadata: reloaded from its source
    same(f_mod, cfn, x, mod)
    assert n_entries(f_mod) == 1
    mod.lin.weight = nn.Parameter(mtc.randn(3, 3, dtype=mtc.float64))
    mod.lin.bias = nn.Parameter(mtc.randn(3, dtype=mtc.float64))
    same(f_mod, cfn, x.double(), mod)
    assert n_entries(f_mod) == 2


def test_in_place_parameter_update_is_seen():
    mod, x = Net(), mtc.randn(2, 3)
    cfn = compiled(f_mod)
    same(f_mod, cfn, x, mod)
    with mtc.no_grad():
        mod.lin.weight.mul_(3)
    same(f_mod, cfn, x, mod)
    assert n_entries(f_mod) == 1


def test_submodule_replaced_by_one_of_its_class_reuses_the_graph():
    """torch 2.13 inlines modules: the new ``Linear``'s parameters are graph inputs, so it runs
    the same graph (with its own weights — ``same`` checks the values); another class or
    other parameter shapes recompile."""
    mod, x = Net(), mtc.randn(2, 3)
    cfn = compiled(f_mod)
    same(f_mod, cfn, x, mod)
    mod.lin = nn.Linear(3, 3)
    same(f_mod, cfn, x, mod)
    assert n_entries(f_mod) == 1
    mod.lin = nn.Linear(3, 3, bias=False)  # reads None for the bias: another graph
    same(f_mod, cfn, x, mod)
    mod.lin = nn.Sequential(nn.Linear(3, 3))
    same(f_mod, cfn, x, mod)
    assert n_entries(f_mod) == 3


def test_other_module_instance_reuses_the_graph_until_what_it_reads_differs():
    """Modules are guarded by type and by what the trace read (torch 2.13's
    ``inline_inbuilt_nn_modules``), not by identity."""
    a, b, x = Net(), Net(), mtc.randn(2, 3)
    cfn = compiled(f_mod)
    same(f_mod, cfn, x, a)
    same(f_mod, cfn, x, b)
    same(f_mod, cfn, x, a)
    assert n_entries(f_mod) == 1
    b.act = "tanh"  # a plain attribute forward reads: guarded by value
    same(f_mod, cfn, x, b)
    same(f_mod, cfn, x, a)
    assert n_entries(f_mod) == 2


class A(nn.Module):
    def forward(self, x):
        return mtc.exp(2 * x)


class B(nn.Module):
    def forward(self, x):
        return mtc.exp(-x)


def tutorial_f(x, mod):
    y = mod(x)
    z = mtc.log(y)
    return z


def test_tutorial_modules_a_and_b():
    cnt = CountingBackend()
    cfn = compiled(tutorial_f, backend=cnt)
    a, b, x = A(), B(), mtc.randn(5, 5, 5)
    same(tutorial_f, cfn, x, a)
    same(tutorial_f, cfn, x, a)
    assert cnt.frame_count == 1
    same(tutorial_f, cfn, x, b)
    same(tutorial_f, cfn, x, b)
    assert cnt.frame_count == 2
    e_a, e_b = mtc.dynamo.cache_entries(tutorial_f)
    assert "mul = 2 * l_x_" in e_a.graph_code and "neg = -l_x_" in e_b.graph_code
    assert f"___check_type_id(L['mod'], {id(A)})" in e_a.guard_source


class Doubler(nn.Module):
    def forward(self, x):
        return self.act(x) * 2

    def act(self, x):
        return x.cos()


def test_forward_assigned_on_the_instance_recompiles():
    mod, x = Doubler(), mtc.randn(3)
    cfn = compiled(f_mod)
    same(f_mod, cfn, x, mod)
    mod.forward = lambda t: t + 100  # Module.__call__ runs the instance's forward now
    same(f_mod, cfn, x, mod)
    del mod.forward
    same(f_mod, cfn, x, mod)
    assert n_entries(f_mod) == 2


def test_method_patched_on_the_class_recompiles():
    mod, x = Doubler(), mtc.randn(3)
    cfn = compiled(f_mod)
    same(f_mod, cfn, x, mod)
    saved = Doubler.act
    Doubler.act = lambda self, t: t.sin()
    try:
        assert reason(f_mod, x, mod).startswith("___check_obj_id(L['mod'].act.__func__, ")
        same(f_mod, cfn, x, mod)
    finally:
        Doubler.act = saved
    assert n_entries(f_mod) == 2


def test_forward_hook_registered_later_recompiles():
    mod, x = Doubler(), mtc.randn(3)
    cfn = compiled(f_mod)
    same(f_mod, cfn, x, mod)
    handle = mod.register_forward_hook(lambda m, args, out: out * 10)
    assert reason(f_mod, x, mod) == "len(L['mod']._forward_hooks) == 0"
    same(f_mod, cfn, x, mod)  # a module with hooks is called in Python, hooks included
    second = mtc.dynamo.cache_entries(f_mod)[1]
    assert second.is_eager or "hooks" in second.graph_break.reason
    handle.remove()
    same(f_mod, cfn, x, mod)
    assert n_entries(f_mod) == 2


class Layers(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(2, 2)])
        self.heads = nn.ModuleDict({"a": nn.Linear(2, 1)})

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return self.layers[-1](x), [h(x) for h in self.heads.values()], len(self.layers)


def test_appending_a_layer_recompiles():
    mod, x = Layers(), mtc.randn(1, 2)
    cfn = compiled(f_mod)
    same(f_mod, cfn, x, mod)
    mod.layers.append(nn.Linear(2, 2))
    assert reason(f_mod, x, mod) == "list(L['mod']._modules['layers']._modules.keys()) == ['0']"
    same(f_mod, cfn, x, mod)
    mod.heads["b"] = nn.Linear(2, 3)
    same(f_mod, cfn, x, mod)
    assert n_entries(f_mod) == 3


class Obj:
    pass


class WithMethod:
    def g(self, x):
        return x * 2


def f_method(x, p):
    return p.g(x)


def test_method_shadowed_on_a_plain_object_recompiles():
    p, x = WithMethod(), mtc.randn(2)
    cfn = compiled(f_method)
    same(f_method, cfn, x, p)
    p.g = lambda t: t * 3
    same(f_method, cfn, x, p)
    assert n_entries(f_method) == 2


def f_obj(x, o):
    return x * o.k + getattr(o, "extra", 0.0)


def test_plain_object_attribute_change_and_added_attribute():
    o = Obj()
    o.k = 2.0
    cfn = compiled(f_obj)
    x = mtc.randn(2)
    same(f_obj, cfn, x, o)
    o.k = 3.0
    same(f_obj, cfn, x, o)
    o.extra = 10.0  # getattr's default was taken: the HASATTR guard notices the new attribute
    assert reason(f_obj, x, o, index=1) == "hasattr(L['o'], 'extra') is False"
    same(f_obj, cfn, x, o)
    del o.k
    with pytest.raises(AttributeError):  # eager's error, from an entry that runs eagerly
        cfn(x, o)
    assert n_entries(f_obj) == 4 and mtc.dynamo.cache_entries(f_obj)[3].is_eager


class TwoWays:
    def double(self, x):
        return x * 2

    def triple(self, x):
        return x * 3


def f_bound(x, method):
    return method(x)


def test_bound_method_argument_rebound_to_another_function():
    obj, x = TwoWays(), mtc.randn(2)
    cfn = compiled(f_bound)
    same(f_bound, cfn, x, obj.double)
    same(f_bound, cfn, x, obj.double)  # a new bound-method object each time: still a hit
    assert n_entries(f_bound) == 1
    same(f_bound, cfn, x, obj.triple)
    assert n_entries(f_bound) == 2


def f_alias(x, y):
    return (x * 2 if x is y else x * 3), x + y


def test_aliased_tensor_arguments():
    cfn = compiled(f_alias)
    x, y = mtc.randn(2), mtc.randn(2)
    same(f_alias, cfn, x, y)
    same(f_alias, cfn, x, x)
    same(f_alias, cfn, y, x)
    assert n_entries(f_alias) == 2
    first, second = mtc.dynamo.cache_entries(f_alias)
    assert "___no_aliasing(L['x'], L['y'])" in first.guard_source
    assert "L['y'] is L['x']" in second.guard_source
    assert "def forward(self, l_x_):" in second.graph_code  # one input for the one tensor


def f_list_alias(xs, ys):
    return xs is ys, len(xs)


def test_aliased_list_arguments_are_one_tracker_guarded_to_stay_one():
    """One list passed twice is one tracker (side effects through either name must be seen
    through the other), guarded ``L['ys'] is L['xs']``; distinct lists fail that guard."""
    cfn = compiled(f_list_alias)
    xs = [1, 2]
    assert cfn(xs, xs) == (True, 2) and cfn(xs, [1, 2]) == (False, 2)
    first = mtc.dynamo.cache_entries(f_list_alias)[0]
    assert "L['ys'] is L['xs']" in first.guard_source


class Tied(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(3, 3, bias=False)
        self.b = nn.Linear(3, 3, bias=False)
        self.b.weight = self.a.weight

    def forward(self, x):
        return self.b(self.a(x))


def test_tied_weights_are_one_graph_input():
    mod = Tied()
    x = mtc.randn(2, 3, requires_grad=True)
    cfn = compiled(f_mod)
    same(f_mod, cfn, x, mod)
    entry = mtc.dynamo.cache_entries(f_mod)[0]
    assert len(entry.graph_module.graph.find_nodes(op="placeholder")) == 2
    assert "L['mod']._modules['b']._parameters['weight'] is " \
        "L['mod']._modules['a']._parameters['weight']" in entry.guard_source
    mod.b.weight = nn.Parameter(mtc.randn(3, 3))  # untied: recompile
    same(f_mod, cfn, x, mod)
    assert n_entries(f_mod) == 2


def f_factory(x):
    z = mtc.zeros(2)
    return x + z, z.dtype


def test_default_dtype_change_recompiles():
    cfn = compiled(f_factory)
    x = mtc.randn(2)
    same(f_factory, cfn, x)
    mtc.set_default_dtype(mtc.float64)
    try:
        assert reason(f_factory, x) == "___default_dtype() is ___float32"
        same(f_factory, cfn, x)
    finally:
        mtc.set_default_dtype(mtc.float32)
    assert n_entries(f_factory) == 2


def f_own_default(x, k=2, *, j=1):
    return x * k + j


def test_defaults_of_the_compiled_function_reassigned():
    cfn = compiled(f_own_default)
    x = mtc.randn(2)
    same(f_own_default, cfn, x)
    f_own_default.__defaults__ = (5,)
    f_own_default.__kwdefaults__["j"] = 7
    try:
        same(f_own_default, cfn, x)
    finally:
        f_own_default.__defaults__ = (2,)
        f_own_default.__kwdefaults__["j"] = 1
    same(f_own_default, cfn, x)
    assert n_entries(f_own_default) == 2


def f_contains(x, xs):
    return x in xs, "a" in ["b", "a"], 3 in (1, 2)


def f_contains_value(x, xs):
    return 1.0 in xs


def test_in_compares_by_identity_then_value():
    cfn = compiled(f_contains)
    x = mtc.randn(1)
    assert cfn(x, [x]) == (True, True, False) == f_contains(x, [x])
    assert mtc.dynamo.cache_entries(f_contains)[0].code is not None
    cfn = compiled(f_contains_value)  # `1.0 in [tensor]` asks the tensor's value
    one = [mtc.ones(1)]
    assert cfn(x, one) is True is f_contains_value(x, one)
    entry = mtc.dynamo.cache_entries(f_contains_value)[0]
    assert "by value" in (entry.reason or entry.graph_break.reason)


# ============================================================== recompile limit
def f_limit(x, n):
    return x * n


def test_ninth_compile_falls_back_to_eager_with_a_warning():
    # automatic dynamic off: every new float is a new entry (with it on, as in torch 2.13, a
    # float turns into a graph input on its second value: test_dynamo_symbolic_scalars.py)
    with mtc._dynamo.config.patch(automatic_dynamic_shapes=False):
        _ninth_compile()


def _ninth_compile():
    cnt = CountingBackend()
    cfn = compiled(f_limit, backend=cnt)
    x = mtc.randn(2)
    for n in range(RECOMPILE_LIMIT):
        same(f_limit, cfn, x, n + 0.5)
    assert cnt.frame_count == RECOMPILE_LIMIT == n_entries(f_limit) == 8
    with pytest.warns(UserWarning, match=r"recompile limit \(8 entries\).*L\['n'\] == 7\.5"):
        same(f_limit, cfn, x, 100.5)
    assert cnt.frame_count == 8 and n_entries(f_limit) == 8
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # said once
        same(f_limit, cfn, x, 101.5)
        same(f_limit, cfn, x, 3.5)  # an old entry still serves its inputs
    assert cnt.frame_count == 8


def test_an_int_argument_turns_dynamic_on_its_second_value():
    """torch's automatic dynamic for ints: static first, a symbol after a second value."""
    cnt = CountingBackend()
    cfn = compiled(f_limit, backend=cnt)
    x = mtc.randn(2)
    for n in range(2, 12):
        same(f_limit, cfn, x, n)
    assert cnt.frame_count == 2 == n_entries(f_limit)
    assert "l_n_" in cnt.graphs[-1].code and "mul = l_x_ * l_n_" in cnt.graphs[-1].code


def test_recompiles_are_logged_with_reasons(capsys):
    mtc.set_logs(recompiles=True)
    try:
        cfn = compiled(f_tensor)
        cfn(mtc.randn(10))
        cfn(mtc.randn(8))
    finally:
        mtc.set_logs()
    err = capsys.readouterr().err
    assert "Recompiling function f_tensor" in err
    assert "- 0: tensor 'x' size mismatch at index 0. expected 10, actual 8" in err


def test_reset_clears_entries():
    cfn = compiled(f_tensor)
    cfn(mtc.randn(10))
    assert n_entries(f_tensor) == 1
    mtc.dynamo.reset()
    assert n_entries(f_tensor) == 0
    cfn(mtc.randn(10))
    assert len(assert_compiled(f_tensor, graphs=1)) == 1


def test_backends_keep_separate_entries():
    a, b = CountingBackend(), CountingBackend()
    x = mtc.randn(10)
    compiled(f_tensor, backend=a)(x)
    compiled(f_tensor, backend=b)(x)
    assert a.frame_count == b.frame_count == 1
    assert n_entries(f_tensor) == 2


class Pair(nn.Module):
    def __init__(self, shared: bool, use_is: bool = False):
        super().__init__()
        self.a = nn.Linear(3, 3)
        self.b = self.a if shared else nn.Linear(3, 3)
        self.use_is = use_is

    def forward(self, x):
        y = self.a(x) + self.b(x)
        if self.use_is:
            return y * 2 if self.a is self.b else y
        return y


def test_module_identity_the_trace_used_is_guarded():
    """Guarded by type, a module's identity still matters where the trace relied on it: a
    submodule shared by two attributes is one tracker (its second source gets
    ``DUPLICATE_INPUT``), and ``self.a is self.b`` guards both with ``ID_MATCH``. Without those,
    an unshared instance would run the shared one's graph — reading ``a``'s weights twice.
    (torch 2.13 returns wrong values on this very sequence; we recompile instead.)"""
    x = mtc.randn(2, 3)
    cfn = compiled(f_mod)
    for mod in (Pair(True), Pair(False), Pair(True), Pair(False)):
        same(f_mod, cfn, x, mod)
    assert n_entries(f_mod) == 2
    shared = mtc.dynamo.cache_entries(f_mod)[0].guard_source
    assert "L['mod']._modules['b'] is L['mod']._modules['a']" in shared
    mtc.dynamo.reset()
    for mod in (Pair(True, True), Pair(False, True), Pair(True, True), Pair(False, True)):
        same(f_mod, cfn, x, mod)  # `is` pins the objects themselves: one entry per module
    assert n_entries(f_mod) == 4


def test_module_parameter_count_read_by_the_trace_is_guarded():
    def f(x, mod):
        return x * sum(p.sum() for p in mod.parameters())

    cfn = compiled(f)
    x = mtc.randn(3)
    for mod in (nn.Linear(3, 3), nn.Linear(3, 3), nn.Linear(3, 3, bias=False),
                Pair(False), Pair(True)):
        same(f, cfn, x, mod)


class Counted(nn.Module):
    def __init__(self, n: int, k: float):
        super().__init__()
        self.n, self.k = n, k

    def forward(self, x):
        return x * self.n + self.k


def test_an_int_read_through_a_module_is_specialized_on_every_value():
    """An int attribute of a module is a constant of the graph, whatever its history (torch's
    ``allow_unspec_int_on_nn_module=False``); an int *argument* becomes a symbol on its second
    value, and so does a float attribute."""
    x = mtc.randn(3)
    cnt = CountingBackend()
    cfn = compiled(f_mod, backend=cnt)
    for n in (2, 3, 4, 5):
        same(f_mod, cfn, x, Counted(n, 1.0))
    assert cnt.frame_count == 4
    assert all("l_mod_n" not in g.code for g in cnt.graphs)  # never a graph input
    for k in (2.0, 3.0, 4.0):
        same(f_mod, cfn, x, Counted(5, k))
    assert cnt.frame_count == 5  # 1.0 -> 2.0 made k dynamic; 3.0 and 4.0 reuse that graph
