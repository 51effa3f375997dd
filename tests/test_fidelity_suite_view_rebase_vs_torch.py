"""Writes through views whose creation forbids them, against torch — programs modelled on
pytorch's ``test/test_autograd.py`` (``test_inplace_on_view_multiple_outputs``,
``test_inplace_not_requires_grad``, ``test_view_no_grad_inplace``) and
``test/test_view_ops.py``: the outputs of ``unbind``/``split``/``chunk`` and views made in
no_grad mode, written directly (``check_inplace``) or *indirectly* — through their base or a
sibling view, which raises when the view's stale ``grad_fn`` is next read (torch's
``handle_view_on_rebase(indirect=True)``) — and the views of such views (the rule is
inherited, ``propagate_creation_meta``).

Each program's outcome must be torch's (``tests/fidelity.py``), comparing the whole error
message here; without torch, the tests at the end check the rules directly.
"""

from __future__ import annotations

import warnings

import pytest

import minitorch_compile as mtc

from .fidelity import arange_leaf, assert_same_outcome, outcome, programs_of, torch

pytestmark = pytest.mark.torch


def _grad_fn_name(t):
    return type(t.grad_fn).__name__


def view_of_chunk_output_written(T):
    a, b = (arange_leaf(T) * 1).chunk(2)
    b[0].mul_(2)


def view_of_unbind_output_written(T):
    a, b = (arange_leaf(T) * 1).unbind(0)
    b.view(3).mul_(2)


def view_of_view_of_split_output_written(T):
    a, b = (arange_leaf(T) * 1).split(1)
    b[:, 1:][0].mul_(2)


def transposed_chunk_output_written(T):
    a, b = (arange_leaf(T) * 1).chunk(2)
    a.t().mul_(2)


def sibling_chunk_output_written(T):
    x = arange_leaf(T) * 1
    a, b = x.chunk(2)
    b.mul_(2)


def base_written_then_chunk_output_read(T):
    x = arange_leaf(T) * 1
    a, b = x.chunk(2)
    x.mul_(2)
    return [_grad_fn_name(a)]


def base_written_then_view_of_chunk_output_read(T):
    x = arange_leaf(T) * 1
    a, b = x.chunk(2)
    v = a[0]
    x.mul_(2)
    return [_grad_fn_name(v)]


def base_written_then_chunk_output_used(T):
    x = arange_leaf(T) * 1
    a, b = x.chunk(2)
    v = a.view(3)
    x.add_(1)
    v.sum().backward()


def detached_chunk_output_written_then_read(T):
    x = arange_leaf(T) * 1
    a, b = x.chunk(2)
    a.detach().mul_(2)
    return [_grad_fn_name(b)]


def chunk_output_written_in_no_grad_then_read(T):
    x = arange_leaf(T) * 1
    a, b = x.chunk(2)
    with T.no_grad():
        a.mul_(2)
    return [_grad_fn_name(a)]


def chunk_output_read_in_no_grad_after_write(T):
    x = arange_leaf(T) * 1
    a, b = x.chunk(2)
    with T.no_grad():
        x.mul_(2)
        return [_grad_fn_name(a)]


def chunk_output_requires_grad_after_base_write(T):
    x = arange_leaf(T) * 1
    a, b = x.chunk(2)
    x.mul_(2)
    return [a.requires_grad, b.requires_grad]


def base_of_unbind_written_then_read(T):
    x = arange_leaf(T) * 1
    a, b = x.unbind()
    x.mul_(2)
    return [b.grad_fn]


def chunk_of_plain_tensor_then_base_gets_grad(T):
    x = T.ones(2, 3)
    a, b = x.chunk(2)
    x.add_(arange_leaf(T))
    return [a.requires_grad, _grad_fn_name(a)]


def chunk_of_plain_tensor_base_written(T):
    x = T.ones(2, 3)
    a, b = x.chunk(2)
    x.mul_(2)
    return [a, a.grad_fn, b.requires_grad]


def chunk_then_backward_through_base(T):
    x = arange_leaf(T) * 1
    a, b = x.chunk(2)
    x.mul_(2)
    x.sum().backward()
    return [True]


def chunk_made_in_no_grad_written(T):
    x = arange_leaf(T) * 1
    with T.no_grad():
        a, b = x.chunk(2)
    a.mul_(2)


def chunk_made_in_no_grad_base_written(T):
    x = arange_leaf(T) * 1
    with T.no_grad():
        a, b = x.chunk(2)
    x.mul_(2)
    return [_grad_fn_name(a)]


def no_grad_view_base_written_then_read(T):
    x = arange_leaf(T) * 1
    with T.no_grad():
        v = x[0]
    x.mul_(2)
    return [_grad_fn_name(v)]


def no_grad_view_base_written_then_used(T):
    x = arange_leaf(T) * 1
    with T.no_grad():
        v = x[0]
    x.mul_(2)
    return [(v * 2).requires_grad]


def no_grad_view_both_in_no_grad(T):
    x = arange_leaf(T) * 1
    with T.no_grad():
        v = x[0]
        x.mul_(2)
        return [_grad_fn_name(v)]


def no_grad_view_requires_grad_after_base_write(T):
    x = arange_leaf(T) * 1
    with T.no_grad():
        v = x[0]
    x.mul_(2)
    return [v.requires_grad]


def view_of_no_grad_view_written(T):
    x = arange_leaf(T) * 1
    with T.no_grad():
        v = x[0]
    v[1:].mul_(2)


def view_of_no_grad_view_base_written(T):
    x = arange_leaf(T) * 1
    with T.no_grad():
        v = x[0]
    w = v[1:]
    x.mul_(2)
    return [w.grad_fn]


def no_grad_view_of_plain_tensor_base_written(T):
    x = T.ones(2, 3)
    with T.no_grad():
        v = x[0]
    x.mul_(2)
    return [v, v.grad_fn]


def no_grad_detach_written_with_grad_on(T):
    x = arange_leaf(T) * 1
    with T.no_grad():
        d = x.detach()
        e = x[0].detach()
    d.mul_(2)
    e.add_(1)
    return [x, d._version, x.requires_grad]


def no_grad_view_written_in_no_grad(T):
    x = arange_leaf(T) * 1
    with T.no_grad():
        v = x[0]
        v.mul_(2)
    x.sum().backward()
    return [x]


def unbind_along_dim1_base_written(T):
    x = arange_leaf(T) * 1
    cols = x.unbind(1)
    x[0, 0] = 5.0
    return [_grad_fn_name(cols[2])]


def split_sizes_output_written(T):
    x = arange_leaf(T, 4, 2) * 1
    parts = x.split([1, 3])
    parts[1][1:].zero_()


PROGRAMS = programs_of(globals())


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__)
def test_program_matches_torch(program):
    """The whole message, not its first words: the header names the output and the op, the
    middle says direct or indirect, the suffix says which rule."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours = outcome(mtc, program)
        assert ours[0] == "value" or ours[1] == "RuntimeError", ours
        if torch is None:
            pytest.skip("torch is not installed: ran under mtc only")
        assert_same_outcome(ours, outcome(torch, program), message_words=60)


def test_a_write_to_the_base_makes_every_chunk_output_raise_on_read():
    x = arange_leaf(mtc) * 1
    a, b = x.chunk(2)
    v = b[0]
    x.mul_(2)
    for t, head in ((a, "Output 0 of Split"), (b, "Output 1 of Split"), (v, "Output 0 of Select")):
        with pytest.raises(RuntimeError, match=f"^{head} is a view and its base or another view"):
            t.grad_fn
        with pytest.raises(RuntimeError, match="returns multiple views"):
            t * 2  # (every op reads the grad_fn)
        assert t.requires_grad  # asks the base, without raising


def test_no_grad_views_and_their_views_raise_and_detaches_do_not():
    x = arange_leaf(mtc) * 1
    with mtc.no_grad():
        v = x[0]
        d = x.detach()
    w = v[1:]
    with pytest.raises(RuntimeError, match="^Output 0 of Slice is a view of a view which was "
                       "created in no_grad mode and is being modified"):
        w.mul_(2)
    d.mul_(2)  # a detach is no autograd view
    with pytest.raises(RuntimeError, match="^A view was created in no_grad mode and its base"):
        v.grad_fn
