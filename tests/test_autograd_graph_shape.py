"""The autograd graph's shape and the layout of leaf gradients, as torch 2.13 has them
(torch-free statements of the behaviour; ``test_fidelity_suite_training_vs_torch.py`` runs the
same idioms under both libraries):

* ``next_functions`` has ``(None, 0)`` for an input that needs no gradient;
* ``x.t()`` records ``TBackward0``; saved values read as ``_saved_<name>``;
* ``AccumulateGrad`` stores a gradient in the leaf's own strides when the leaf is dense (a
  transposed weight keeps a transposed ``.grad``), else contiguous — and later gradients are
  added in place into that ``.grad``.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitorch_compile as mtc


def test_missing_edges_are_none_zero_pairs():
    x = mtc.ones(2, requires_grad=True)
    y = x * mtc.ones(2)
    assert y.grad_fn.next_functions[1] == (None, 0)
    assert y.grad_fn.next_functions[0][0] is x.grad_fn or \
        type(y.grad_fn.next_functions[0][0]).__name__ == "AccumulateGrad"


def test_t_records_tbackward_and_still_differentiates():
    x = mtc.arange(6.0).reshape(2, 3).requires_grad_()
    y = x.t()
    assert type(y.grad_fn).__name__ == "TBackward0"
    assert type(x.transpose(0, 1).grad_fn).__name__ == "TransposeBackward0"
    (y * mtc.arange(6.0).reshape(3, 2)).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.arange(6.0).reshape(3, 2).T)


def test_saved_attributes_unpack_the_saved_values():
    x = mtc.tensor([1.0, 2.0], requires_grad=True)
    other = mtc.tensor([3.0, 4.0])
    y = x * other
    assert y.grad_fn._saved_other is other
    assert "_saved_other" in dir(y.grad_fn)
    e = x.exp()
    np.testing.assert_array_equal(e.grad_fn._saved_result.detach().numpy(), e.detach().numpy())
    assert x.reshape(2, 1).sum(1).grad_fn._saved_self_sym_sizes == (2, 1)
    with pytest.raises(AttributeError):
        y.grad_fn._saved_nothing  # noqa: B018
    y.sum().backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.grad_fn._saved_other  # noqa: B018 - freed by the backward, as in torch


def test_transposed_leaf_keeps_a_transposed_grad_and_accumulates_in_place():
    w = mtc.ones(3, 2).t().requires_grad_()
    (w * 2).sum().backward()
    g = w.grad
    assert g.stride() == w.stride() == (1, 2)
    (w * 3).sum().backward()
    assert w.grad is g and g.stride() == (1, 2)
    np.testing.assert_array_equal(g.numpy(), np.full((2, 3), 5.0))


def test_contiguous_leaf_gets_a_contiguous_grad_from_a_transposed_gradient():
    q = mtc.ones(4, 3, requires_grad=True)
    (q.t() * mtc.arange(4.0)).sum().backward()
    assert q.grad.stride() == (3, 1) and q.grad._base is None
    np.testing.assert_array_equal(q.grad.numpy(), np.repeat(np.arange(4.0), 3).reshape(4, 3))


@given(st.permutations([0, 1, 2]), st.permutations([0, 1, 2]))
def test_grad_strides_follow_the_leafs_for_any_permutations(leaf_perm, grad_perm):
    """Whatever layout the gradient arrives in, ``.grad`` has the leaf's strides."""
    base = mtc.zeros(2, 3, 4).permute(*leaf_perm)
    leaf = base.detach().requires_grad_()
    shape = tuple(leaf.shape)
    values = np.arange(float(np.prod(shape)), dtype=np.float32).reshape(shape)
    inv = np.argsort(grad_perm)
    incoming = mtc.tensor(values.transpose(grad_perm).copy()).permute(*inv)
    leaf.backward(incoming)
    assert leaf.grad.stride() == leaf.stride()
    np.testing.assert_array_equal(leaf.grad.numpy(), values)


def test_overlapping_leaf_gets_a_contiguous_grad():
    leaf = mtc.ones(3).expand(2, 3).detach().requires_grad_()  # not dense: stride 0
    leaf.backward(mtc.ones(3, 2).t())
    assert leaf.grad.is_contiguous()


def test_create_graph_grad_keeps_its_history():
    w = mtc.ones(3, 2).t().requires_grad_()
    (w.t() ** 2).sum().backward(create_graph=True)
    assert w.grad.requires_grad and w.grad.stride() == (1, 2)
    w.grad.sum().backward()  # d/dw sum(2 w) = 2, added to the first gradient 2 w
    np.testing.assert_array_equal(w.grad.detach().numpy(), np.full((2, 3), 4.0))


def test_mm_grads_come_out_in_their_operands_layouts():
    """torch's ``mm_mat1_backward``/``mm_mat2_backward``: a column-major operand (``linear``'s
    ``weight.t()``) gets a column-major gradient, so a weight's gradient is row-major like the
    weight and AccumulateGrad's layout contract needs no copy — also in a compiled backward."""
    x, w = mtc.randn(3, 4, requires_grad=True), mtc.randn(5, 4, requires_grad=True)
    gw, = mtc.autograd.grad(x.mm(w.t()).sum(), [w])
    assert gw.is_contiguous()
    wt = w.t()
    g_wt, = mtc.autograd.grad(x.mm(wt).sum(), [wt])
    assert g_wt.stride() == (1, 4)  # wt's own layout
    mtc.dynamo.reset()
    f = mtc.compile(lambda x, w, b: mtc.nn.functional.linear(x, w, b).relu().sum())
    b = mtc.zeros(5, requires_grad=True)
    f(x, w, b).backward()
    from minitorch_compile import inductor

    returned = inductor.compiled_graphs[-1].source.split("return (")[1].split(")\n")[0]
    assert "strided(" not in returned  # the weight's gradient is computed in its layout
    assert w.grad.is_contiguous()
