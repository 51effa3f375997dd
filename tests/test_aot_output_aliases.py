"""Outputs of a compiled function that alias its inputs, or each other, are real autograd
views (``aot/functional_utils.py``): compiled vs eager, ``aot_eager`` and ``inductor``,
forward and backward — ``_base``, ``grad_fn``, writes through the output, and eager's errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitorch_compile as mtc

pytestmark = pytest.mark.usefixtures("strict_inductor")  # conftest.py
BACKENDS = ["aot_eager", "inductor"]


def _leaf():
    return mtc.tensor(np.arange(12.0).reshape(4, 3) / 7, requires_grad=True)


def _both(fn, make, post, backend, dynamic=None):
    """``post(input, fn(input))`` eagerly and compiled, on fresh inputs: equal results, or the
    same exception type and message."""
    results = []
    for compiled in (False, True):
        mtc.dynamo.reset()
        g = mtc.compile(fn, backend=backend, dynamic=dynamic) if compiled else fn
        x = make()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)
                warnings.filterwarnings("error", message="inductor:")
                results.append(post(x, g(x)))
        except RuntimeError as e:
            results.append(("raised", type(e).__name__, str(e)))
    assert results[0] == results[1]
    return results[1]


def _np(t):
    return np.round(t.detach().numpy(), 5).tolist()


@pytest.mark.parametrize("backend", BACKENDS)
def test_inplace_on_a_view_of_a_leaf_that_requires_grad_raises_as_eager(backend):
    """Was a strict xfail: Dynamo breaks at ``add_`` (its trace raises eager's error) and
    returns the compiled ``x[:]``, which was a new tensor: under ``inductor`` the ``add_`` ran
    and wrote ``x``; under ``aot_eager`` it raised another message."""
    got = _both(lambda x: x[:].add_(1), _leaf, lambda x, out: _np(out), backend)
    assert got[0] == "raised" and "view of a leaf Variable" in got[2]


@pytest.mark.parametrize("backend", BACKENDS)
def test_view_of_an_input_is_a_view_with_eagers_grad_fn(backend):
    def post(x, outs):
        view, other = outs
        return [view._base is x, type(view.grad_fn).__name__, _np(view), _np(other)]

    got = _both(lambda x: (x.t()[1:], x.sin()), _leaf, post, backend)
    assert got[:2] == [True, "SliceBackward0"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_inplace_on_a_returned_view_reaches_the_bases_history(backend):
    """The write through the returned view changes the (non-leaf) input and is recorded in its
    history (``CopySlices``): the leaf's gradient is eager's."""
    results = []
    for compiled in (False, True):
        mtc.dynamo.reset()
        f = lambda x: x[1:, :2]  # noqa: E731
        g = mtc.compile(f, backend=backend) if compiled else f
        w = _leaf()
        x = w * 1
        out = g(x)
        out.mul_(3)
        (out.sum() + (x ** 2).sum()).backward()
        results.append([_np(x), _np(w.grad), type(x.grad_fn).__name__])
    assert results[0] == results[1] and results[1][2] == "CopySlices"


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_output_that_is_an_input_is_the_input(backend):
    got = _both(lambda x: (x, x.cos()), _leaf, lambda x, outs: [outs[0] is x, _np(outs[1])],
                backend)
    assert got[0] is True


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_output_viewing_another_output(backend):
    """``y[:1]`` is a view of the output ``y``: a write through it changes ``y``, forward and
    backward (torch's ``alias_of_intermediate_base_is_user_output``)."""
    def fn(x):
        y = x * 2
        return y, y[:1]

    def post(x, outs):
        y, v = outs
        facts = [v._base is y, type(v.grad_fn).__name__]
        v.mul_(3)
        (y * y).sum().backward()
        return facts + [_np(y), _np(x.grad)]

    assert _both(fn, _leaf, post, backend)[:2] == [True, "SliceBackward0"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_outputs_viewing_one_intermediate(backend):
    """Two views of an intermediate that is not returned share it as their ``_base`` (it is an
    extra graph output: torch's ``alias_of_intermediate``)."""
    def fn(x):
        y = x * 2 + 1
        return y[:1], y[1:].t()

    def post(x, outs):
        a, b = outs
        facts = [a._base is b._base, a._base is not None, type(b.grad_fn).__name__]
        a.mul_(3)
        (a.sum() + (b * b).sum() + (a._base ** 2).sum()).backward()
        return facts + [_np(a._base), _np(x.grad)]

    assert _both(fn, _leaf, post, backend)[:3] == [True, True, "TBackward0"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_view_made_in_no_grad_mode_refuses_an_inplace_op_as_eager(backend):
    def fn(x):
        with mtc.no_grad():
            y = x[:2]
        return y, x.sin()

    got = _both(fn, _leaf, lambda x, outs: _np(outs[0].mul_(2)), backend)
    assert got[0] == "raised" and "no_grad mode" in got[2]


@pytest.mark.parametrize("backend", BACKENDS)
def test_detached_output_shares_the_inputs_memory(backend):
    def post(x, outs):
        outs[0].add_(1)
        return [_np(x), outs[0].requires_grad, outs[0]._base is None]

    _both(lambda x: (x.detach(), x.sin()), _leaf, post, backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_view_of_a_mutated_input_sees_the_write(backend):
    def fn(x):
        x.add_(1)
        return x[:2].t()

    make = lambda: mtc.tensor(np.arange(6.0).reshape(3, 2))  # noqa: E731
    got = _both(fn, make, lambda x, out: [out._base is x, _np(out), _np(x)], backend)
    assert got[0] is True


@pytest.mark.parametrize("backend", BACKENDS)
def test_dynamic_view_sizes_are_read_from_the_call(backend):
    """A view chain with symbolic sizes (``view(s0 * 3)``) is replayed with this call's sizes:
    the third call is the dynamic recompile."""
    def fn(x):
        return x.view(-1)[1:], x.sum()

    mtc.dynamo.reset()
    g = mtc.compile(fn, backend=backend)
    for n in (4, 5, 7):
        x = mtc.tensor(np.arange(3.0 * n).reshape(n, 3), requires_grad=True)
        v, s = g(x)
        assert v._base is x and v.shape == (3 * n - 1,)
        np.testing.assert_array_equal(v.detach().numpy(), x.detach().numpy().reshape(-1)[1:])
        (v * v).sum().backward()
        np.testing.assert_array_equal(x.grad.numpy().reshape(-1)[1:],
                                      2 * x.detach().numpy().reshape(-1)[1:])


_VIEWS = {
    "t": lambda t: t.t(),
    "slice": lambda t: t[1:],
    "select": lambda t: t[0],
    "unsqueeze": lambda t: t.unsqueeze(0),
    "flatten": lambda t: t.reshape(-1),
    "detach": lambda t: t.detach(),
    "expand": lambda t: t.expand(2, *t.shape),
    "permute": lambda t: t.permute(*reversed(range(t.dim()))),
    "narrow": lambda t: t.narrow(0, 1, 1),
    "chunk": lambda t: t.chunk(2)[-1],
}
_APPLIES = {  # which tensors a view applies to (else the step is left out)
    "t": lambda t: 1 <= t.dim() <= 2, "slice": lambda t: t.dim() >= 1,
    "select": lambda t: t.dim() >= 1 and t.shape[0] >= 1, "flatten": lambda t: t.dim() >= 1,
    "narrow": lambda t: t.dim() >= 1 and t.shape[0] >= 2,
    "chunk": lambda t: t.dim() >= 1 and t.shape[0] >= 1}
_WRITES = {"mul_": lambda t: t.mul_(3), "zero_": lambda t: t.zero_(),
           "copy_": lambda t: t.copy_(t.detach() + 1)}


@given(chain=st.lists(st.sampled_from(sorted(_VIEWS)), min_size=1, max_size=3),
       from_input=st.booleans(), backend=st.sampled_from(BACKENDS),
       write=st.sampled_from(sorted(_WRITES)), grad_mode=st.booleans())
def test_random_view_chains_then_an_inplace_op(chain, from_input, backend, write, grad_mode):
    """Views of an input or of an intermediate, returned (the call with grad mode on or off);
    then an in-place op on the output and a backward: values, errors and gradients as
    eager's."""
    def fn(x):
        t = x if from_input else x * 2
        for name in chain:
            if not _APPLIES.get(name, lambda t: True)(t):
                continue
            t = _VIEWS[name](t)
        return t, x.cos()

    def post(w, outs):
        out, c = outs
        facts = [out._base is post.x, out.shape, out.requires_grad]
        if from_input:  # (the only view of an intermediate is returned as is, as in torch)
            facts.append(type(out.grad_fn).__name__)
        _WRITES[write](out)
        loss = (post.x * post.x).sum() + c.sum()
        if out.requires_grad:
            loss = loss + out.sum()
        loss.backward()
        return facts + [_np(post.x), _np(w.grad)]

    def make():
        w = _leaf()
        post.x = w * 1  # a non-leaf input, so a write through its views is allowed
        return w

    results = []
    for compiled in (False, True):
        mtc.dynamo.reset()
        g = mtc.compile(fn, backend=backend) if compiled else fn
        w = make()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)
                with mtc.set_grad_enabled(grad_mode):
                    outs = g(post.x)
                results.append(post(w, outs))
        except RuntimeError as e:
            results.append(("raised", str(e)))
    if results[0][0] == "raised" and "multiple views" in results[0][1] and not from_input:
        # A known deviation, torch's too: the only view of an intermediate is returned as is
        # (torch's unsafe_view_alias), so the in-place op eager refuses on a chunk() output
        # runs (or meets the next check, an expanded tensor's overlap).  (A view *of* a chunk()
        # output of an input keeps the rule: fake tensors carry it to the traced output.)
        return
    assert results[0] == results[1]


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_inplace_op_on_a_returned_chunk_of_an_input_raises_as_eager(backend):
    """A regenerated ``chunk()``/``unbind()`` output keeps eager's multiple-views rule (torch's
    compiled output raises too, naming ``CompiledFunction``)."""
    got = _both(lambda x: (x.chunk(2)[-1], x.cos()), lambda: _leaf() * 1,
                lambda x, outs: _np(outs[0].mul_(3)), backend)
    assert got[0] == "raised" and "multiple views" in got[2]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("view", ["select", "view", "t"])
def test_a_view_of_a_returned_chunk_of_an_input_keeps_the_rule(backend, view):
    """A view *of* a ``chunk()``/``unbind()`` output: the fake tensor of the traced view
    carries ``_multi_output_view`` (as eager's ``_set_view_of`` does), so the regenerated
    output refuses the in-place write with eager's message; and a write to the input then
    makes reading the output's ``grad_fn`` the "its base ... has been modified" error."""
    views = {"select": lambda t: t.chunk(2)[-1][0], "view": lambda t: t.unbind(0)[1].view(3),
             "t": lambda t: t.split(2)[0].t()}

    def post(x, outs):
        try:
            outs[0].mul_(3)
        except RuntimeError as e:
            first = str(e)
        x.mul_(2)
        outs[0].grad_fn  # raises the indirect error
        return first  # pragma: no cover - unreachable when both raise

    got = _both(lambda x: (views[view](x), x.cos()), lambda: _leaf() * 1, post, backend)
    assert got[0] == "raised" and "its base or another view of its base has been" in got[2]
    assert "multiple views" in got[2]


def test_fake_tensor_views_carry_the_multiple_views_rule():
    from minitorch_compile.fx.fake_tensor import FakeTensorMode

    mode = FakeTensorMode()
    x = mode.from_tensor(_leaf() * 1)
    with mode:
        a, b = x.chunk(2)
        v = b[0].unsqueeze(0)
    assert b._multi_output_view == ("Split", 1) and v._multi_output_view == (None, 0)


@pytest.mark.parametrize("backend", BACKENDS)
def test_detach_of_a_view_of_an_input_shares_its_memory(backend):
    """A ``detach()`` has no ``_base``; it remembers what it detached (weakly) so the compiled
    output is regenerated from the input (found by the random chains: ``x.chunk(2)[-1]
    .detach()`` was a copy under Inductor, so writing it left ``x`` unchanged)."""
    def post(x, outs):
        outs[0].copy_(outs[0] + 1)
        return [_np(x), outs[0].requires_grad]

    make = lambda: mtc.tensor(np.arange(12.0).reshape(4, 3))  # noqa: E731
    _both(lambda x: (x.chunk(2)[-1].detach(), x.cos()), make, post, backend)


def test_a_detached_tensor_does_not_keep_its_base_alive():
    import gc
    import weakref

    x = mtc.randn(3, requires_grad=True)
    y = x * 2
    d, ref = y.detach(), weakref.ref(y)
    del y
    gc.collect()
    assert ref() is None and d._detached_from[0]() is None
