"""Advanced indexing: reads, writes and gradients as torch's, and Dynamo's graph breaks.

Programs are written once against a module ``T`` (``mtc`` or ``torch``) and compared; random
index expressions (ints, slices, None, ..., integer tensors, lists, boolean masks) are drawn by
hypothesis and compared with torch — or with numpy where torch's rule is numpy's.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minitorch_compile as mtc
from minitorch_compile.fx import DynamicOutputShapeException

from .test_inplace_autograd import assert_same_outcome, needs_torch, outcome

try:
    import torch
except ImportError:  # pragma: no cover
    torch = None

A = np.arange(24, dtype=np.float64).reshape(2, 3, 4) / 7 - 1.5


def _x(T):
    return T.tensor(A.tolist(), dtype=T.float64, requires_grad=True)


def _i(T, v):
    return T.tensor(v, dtype=T.int64)


# ---------------------------------------------------------------- programs vs torch


def read_forms(T):
    x = _x(T)
    outs = [x[_i(T, [1, 0, 1])], x[:, _i(T, [2, 2])], x[:, _i(T, [[0, 1], [2, 0]]), 1:],
            x[_i(T, [0, 1]), :, _i(T, [3, 0])], x[..., _i(T, [-1])], x[None, _i(T, [1])],
            x[1, :, _i(T, [0, 0, 3])], x[_i(T, [[1], [0]]), _i(T, [0, 2, 1])],
            x[[0, 1], [2, 0]], x[x > 0], x[:, x[0] > 0], x[T.tensor([True, False])],
            x[_i(T, [0]), None, _i(T, [1])]]
    sum(((o * (k + 1)) ** 2).sum() for k, o in enumerate(outs)).backward()
    return outs + [x.grad]


def write_forms(T):
    x = _x(T)
    y = x * 1
    y[y > 0.5] = 0.25
    y[_i(T, [1, 1, 0])] += 1.0
    y[:, _i(T, [0, 2])] = x[:, :2] * 3
    y[_i(T, [0]), :, _i(T, [1, 3])] -= x[1, :, :2].t() * x[0, 0, 0]
    y[0, x[0, 0] < 0] = T.tensor(7.0, dtype=T.float64)
    (y * y).sum().backward()
    return [y, x.grad]


def index_put_accumulate(T):
    x = _x(T)
    v = T.tensor([1.0, 2.0, 3.0], dtype=T.float64, requires_grad=True)
    y = (x * 1).index_put((_i(T, [0, 0, 1]), _i(T, [1, 1, 2]), _i(T, [3, 3, 0])), v,
                          accumulate=True)
    z = (x * 1).index_put_((_i(T, [1, 0]),), x[0, :2, 0].reshape(2, 1, 1) * v[:1])
    ((y * y).sum() + (z * z).sum()).backward()
    return [y, z, x.grad, v.grad]


def masked_select_nonzero_take(T):
    x = _x(T)
    m = x[:, :, :1] > -1
    a = x.masked_select(m)
    b = T.take(x, _i(T, [[0, 23], [-1, 5]]))
    nz = T.nonzero(x > 0.5)
    ((a * a).sum() + (b ** 3).sum()).backward()
    return [a, b, nz.to(T.float64), x.grad]


def setitem_into_buffer(T):
    x = _x(T)
    buf = T.zeros(4, 3, dtype=T.float64)
    buf[_i(T, [3, 0])] = x[0, :2, :3]
    buf[buf == 0] = 0.5
    (buf.exp() * 2).sum().backward()
    return [buf, x.grad]


def _raises(fn):
    def program(T):
        fn(T)
    program.__name__ = fn.__name__
    return program


@_raises
def out_of_bounds(T):
    _x(T)[_i(T, [2])]


@_raises
def negative_out_of_bounds(T):
    _x(T)[_i(T, [0]), _i(T, [-4])]


@_raises
def bad_mask_shape(T):
    _x(T)[T.tensor([True, False, True])]


@_raises
def float_index(T):
    _x(T)[T.tensor([0.0])]


@_raises
def unbroadcastable_indices(T):
    _x(T)[_i(T, [0, 1]), _i(T, [0, 1, 2])]


@_raises
def value_shape_mismatch(T):
    T.zeros(2, 3).index_put_((_i(T, [0]),), T.ones(2, 2))


@_raises
def index_put_dtype_mismatch(T):
    T.zeros(2, 3).index_put_((_i(T, [0]),), T.ones(3, dtype=T.float64))


@_raises
def take_out_of_range(T):
    T.take(T.zeros(2, 3), _i(T, [6]))


@_raises
def masked_select_needs_bool(T):
    T.zeros(3).masked_select(T.ones(3))


PROGRAMS = [read_forms, write_forms, index_put_accumulate, masked_select_nonzero_take,
            setitem_into_buffer, out_of_bounds, negative_out_of_bounds, bad_mask_shape,
            float_index, unbroadcastable_indices, value_shape_mismatch,
            index_put_dtype_mismatch, take_out_of_range, masked_select_needs_bool]


def _outcome(T, program):
    try:
        return outcome(T, program)
    except IndexError as e:
        return "raises", str(e)


@needs_torch
@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__)
def test_program_matches_torch(program):
    ours, theirs = _outcome(mtc, program), _outcome(torch, program)
    if ours[0] == theirs[0] == "raises":  # the same message, after our "op: " prefix
        assert ours[1].endswith(theirs[1]) or theirs[1] in ours[1], (ours[1], theirs[1])
        return
    assert_same_outcome(ours, theirs)


def test_gradient_of_repeated_indices_accumulates():
    x = mtc.tensor([1.0, 2.0, 3.0], requires_grad=True)
    x[mtc.tensor([0, 0, 2, 0])].sum().backward()
    assert x.grad.tolist() == [3.0, 0.0, 1.0]


def test_mask_read_matches_numpy():
    a = np.arange(12.0).reshape(3, 4)
    x = mtc.tensor(a)
    np.testing.assert_array_equal(x[x > 4].numpy(), a[a > 4])
    np.testing.assert_array_equal(mtc.nonzero(x > 8).numpy(), np.argwhere(a > 8))


# ---------------------------------------------------------------- random index expressions

_SHAPE = (3, 4, 2)


@st.composite
def index_exprs(draw):
    """A tuple of ints, slices, None, ..., integer tensors/lists and boolean masks for
    ``_SHAPE`` — what torch accepts."""
    items, dim, used_ellipsis = [], 0, False
    bshape = draw(st.sampled_from([(1,), (2,), (2, 1), (1, 3)]))
    mask_used = False
    while dim < len(_SHAPE) and len(items) < 4:
        kind = draw(st.sampled_from(["int", "slice", "none", "ellipsis", "tensor", "list",
                                     "mask", "stop"]))
        size = _SHAPE[dim]
        if kind == "stop":
            break
        if kind == "int":
            items.append(draw(st.integers(-size, size - 1)))
            dim += 1
        elif kind == "slice":
            items.append(slice(draw(st.one_of(st.none(), st.integers(-size, size))),
                               draw(st.one_of(st.none(), st.integers(-size, size))),
                               draw(st.sampled_from([None, 1, 2]))))
            dim += 1
        elif kind == "none":
            items.append(None)
        elif kind == "ellipsis" and not used_ellipsis:
            items.append(Ellipsis)
            used_ellipsis = True
            dim = len(_SHAPE) - sum(1 for i in items if i is not None and i is not Ellipsis)
            dim = max(dim, len(_SHAPE) - 1)
        elif kind in ("tensor", "list"):
            v = draw(hnp.arrays(np.int64, (1,) if mask_used else bshape,
                                elements=st.integers(-size, size - 1)))
            items.append(("t", v) if kind == "tensor" else ("l", v.tolist()))
            dim += 1
        elif kind == "mask" and not mask_used:
            k = draw(st.integers(1, len(_SHAPE) - dim))
            items.append(("m", draw(hnp.arrays(np.bool_, _SHAPE[dim:dim + k]))))
            mask_used = True
            dim += k
    return items


def _build(T, items):
    out = []
    for it in items:
        if isinstance(it, tuple):
            kind, v = it
            out.append(v if kind == "l" else T.tensor(v.tolist()) if kind == "t"
                       else T.tensor(v.tolist(), dtype=T.bool))
        else:
            out.append(it)
    return tuple(out)


def _index_program(items, write):
    def program(T):
        x = T.tensor(np.arange(24.0).reshape(_SHAPE).tolist(), dtype=T.float64,
                     requires_grad=True)
        y = x * 1
        if write:
            y[_build(T, items)] = -1.0
            (y * y).sum().backward()
            return [y, x.grad]
        r = y[_build(T, items)]
        (r * r).sum().backward()
        return [r, x.grad]
    return program


@needs_torch
@settings(max_examples=80, deadline=None)
@given(items=index_exprs(), write=st.booleans())
def test_random_index_expressions_match_torch(items, write):
    program = _index_program(items, write)
    ours, theirs = _outcome(mtc, program), _outcome(torch, program)
    assert ours[0] == theirs[0], (ours, theirs)
    if ours[0] == "value":
        assert_same_outcome(ours, theirs)


# ---------------------------------------------------------------- fake tensors and Dynamo


def test_fake_tensors_raise_dynamic_output_shape_for_masks_only():
    from minitorch_compile.fx import FakeTensorMode

    mode = FakeTensorMode()
    x = mode.from_tensor(mtc.randn(4, 3))
    idx = mode.from_tensor(mtc.tensor([0, 2, 2]))
    with mode:
        assert tuple(x[:, idx].shape) == (4, 3)  # shapes alone decide
        x[x > 0] = 1.0  # index_put: same shape as x
        for fn in (lambda: x[x > 0], lambda: x.nonzero(), lambda: x.masked_select(x > 0)):
            with pytest.raises(DynamicOutputShapeException):
                fn()


def test_dynamo_breaks_the_graph_at_a_mask_read_and_matches_eager():
    def f(x, idx):
        y = x.sin()
        z = y[x > 0]
        return z.sum() + y[:, idx].sum()

    x, idx = mtc.randn(4, 3), mtc.tensor([0, 2, 2])
    explanation = mtc.dynamo.explain(f)(x, idx)
    assert explanation.graph_break_count == 1
    assert "DynamicOutputShapeException" in explanation.break_reasons[0].reason
    compiled = mtc.compile(f, backend="aot_eager")
    assert mtc.allclose(compiled(x, idx), f(x, idx))


def test_index_writes_compile_into_one_graph_with_eager_gradients():
    def g(x, idx):
        y = x * 2
        y[y > 1] = 0.0
        y[:, idx] += 1
        return y * x

    compiled = mtc.compile(g, backend="aot_eager", fullgraph=True)
    idx = mtc.tensor([0, 1, 1])
    x1 = mtc.randn(4, 3, requires_grad=True)
    x2 = x1.detach().clone().requires_grad_(True)
    out_c, out_e = compiled(x1, idx), g(x2, idx)
    assert mtc.allclose(out_c, out_e)
    out_c.sum().backward()
    out_e.sum().backward()
    assert mtc.allclose(x1.grad, x2.grad)
