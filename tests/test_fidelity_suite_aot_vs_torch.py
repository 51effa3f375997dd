"""AOTAutograd against torch's, on more programs modelled on pytorch's
``test/functorch/test_aotdispatch.py``: input mutations through views, index writes,
duplicate-index gathers, multiple outputs that are views, integer outputs, ``no_grad`` regions
and ``detach`` inside the compiled function, losses and batch norm.

For every program: the compiled outputs, input mutations and gradients equal eager's and
torch's; whether a backward graph exists is torch's decision; and — where both decompose the
program into the same primitives — the tensors saved for backward and the ops the backward
recomputes are torch's too (``tests/aot_fidelity.py`` reads both libraries' graphs the same
way). The programs where the decompositions differ are listed with the reason.
"""

from __future__ import annotations

import pytest

from .aot_fidelity import assert_same_values, eager, ours, theirs, torch

G = "grad"


def inplace_on_transposed_input(T):  # test_input_mutation_transpose (a nonleaf input)
    def f(a):
        a.t().mul_(2)
        return a + 1
    return f


def input_row_written_from_other_input(T):  # test_input_mutation_multiple (a view of an input)
    def f(a, b):
        a[0].add_(b[0])
        return a * b
    return f


def outputs_are_views_of_one_intermediate(T):  # test_output_aliases_intermediate_multiple
    def f(a):
        b = a * 2
        return b.view(-1), b[0], b.t()
    return f


def index_put_into_clone(T):  # test_index_put / setitem with a tensor index
    def f(a, idx):
        b = a.clone()
        b[idx] = a[idx] * 3
        return b.sum(0)
    return f


def gather_with_duplicate_indices(T):  # index backward accumulates duplicates
    return lambda a, idx: a[idx].exp()


def setitem_scalar_column(T):
    def f(a):
        b = a * 1
        b[:, 1] = 0
        return b.sigmoid()
    return f


def where_on_mask(T):
    return lambda a, b: T.where(a > 0, a * b, b.tanh())


def cross_entropy(T):  # test_aot_autograd_exhaustive: nn.functional.cross_entropy
    return lambda x, t: T.nn.functional.cross_entropy(x, t)


def mse_of_linear(T):
    return lambda x, w, y: T.nn.functional.mse_loss(x @ w, y)


def batch_norm_training(T):  # test_batch_norm (no running stats)
    return lambda x, w, b: T.nn.functional.batch_norm(x, None, None, w, b, training=True)


def cumsum_times_sort(T):
    return lambda a: a.cumsum(1) * a.sort(1)[0]


def expand_clone_then_inplace(T):
    def f(a, b):
        c = b.expand(3, 4).clone()
        c.add_(a)
        return c
    return f


def detach_inside(T):  # test_detach
    return lambda a: a.detach() * a + a.sin().detach()


def integer_and_float_outputs(T):  # argmax and a count next to a mean
    return lambda a: (a.argmax(1), (a > 0).sum(), a.mean())


def no_grad_region_inside(T):  # test_no_grad_input_output / set_grad_enabled inside
    def f(a):
        with T.no_grad():
            b = a * 2
        return a * b
    return f


def unbind_then_combine(T):
    def f(a):
        x, y, z = a.unbind(0)
        return x * y + z
    return f


def chunk_then_cat(T):
    return lambda a: T.cat([c.exp() for c in a.chunk(2, 1)], 0)


def matmul_relu_matmul(T):
    return lambda a, b, c: (a @ b).relu() @ c


def log_pow_clamp(T):
    return lambda a: (a.abs() + 1).log() ** 2 + a.clamp(-0.5, 0.5)


def one_input_without_grad(T):  # test_some_outputs_dont_require_grad_non_view
    return lambda a, b: (a * b, b + 1)


PROGRAMS = {
    inplace_on_transposed_input: [((3, 3), "nonleaf")],
    input_row_written_from_other_input: [((3, 4), "nonleaf"), ((3, 4), G)],
    outputs_are_views_of_one_intermediate: [((3, 4), G)],
    index_put_into_clone: [((4, 3), G), ((3,), "long")],
    gather_with_duplicate_indices: [((4, 3), G), ((5,), "long")],
    setitem_scalar_column: [((3, 4), G)],
    where_on_mask: [((3, 4), G), ((3, 4), G)],
    cross_entropy: [((4, 3), G), ((4,), "long")],
    mse_of_linear: [((4, 3), G), ((3, 2), G), ((4, 2), "float")],
    batch_norm_training: [((4, 3), G), ((3,), G), ((3,), G)],
    cumsum_times_sort: [((3, 4), G)],
    expand_clone_then_inplace: [((3, 4), G), ((4,), G)],
    detach_inside: [((3, 4), G)],
    integer_and_float_outputs: [((3, 4), G)],
    no_grad_region_inside: [((3, 4), G)],
    unbind_then_combine: [((3, 4), G)],
    chunk_then_cat: [((3, 4), G)],
    matmul_relu_matmul: [((3, 4), G), ((4, 5), G), ((5, 2), G)],
    log_pow_clamp: [((3, 4), G)],
    one_input_without_grad: [((3, 4), G), ((3, 4), "float")],
}

DECOMPOSED = ("torch saves the outputs of its single fused ops ({}); ours decomposes the op "
              "into primitives and saves fewer, smaller tensors, recomputing the rest")
KNOWN_GAPS = {
    "unbind_then_combine": "torch's unbind is one multi-output op (its list value cannot be "
                           "saved and the op is not recomputable), so torch's cut falls on the "
                           "rows its getitems read and it saves two of them; ours decomposes "
                           "unbind into select views, which are recomputable, and saves the "
                           "input (the same storage, more bytes by the count of "
                           "tests/aot_fidelity.py)",
}


def needs_torch(test):
    return pytest.mark.torch(pytest.mark.skipif(torch is None, reason="torch is not installed")(
        test))


def _ids(programs):
    return [pytest.param(p, id=p.__name__) for p in programs]


@pytest.mark.parametrize("program", _ids(PROGRAMS))
def test_compiled_matches_eager(program):
    spec = PROGRAMS[program]
    assert_same_values(ours(program, spec), eager(program, spec))


@needs_torch
@pytest.mark.parametrize("program", _ids(PROGRAMS))
def test_values_gradients_and_backward_decision_match_torchs(program):
    spec = PROGRAMS[program]
    mine, torchs = ours(program, spec), theirs(program, spec)
    assert_same_values(mine, torchs)
    assert mine.has_backward == torchs.has_backward


def _partition_param(program):
    gap = KNOWN_GAPS.get(program.__name__)
    marks = [pytest.mark.xfail(strict=True, reason=gap)] if gap else []
    return pytest.param(program, id=program.__name__, marks=marks)


@needs_torch
@pytest.mark.parametrize("program", [_partition_param(p) for p in PROGRAMS])
def test_saved_and_recomputed_match_torchs(program):
    spec = PROGRAMS[program]
    mine, torchs = ours(program, spec), theirs(program, spec)
    assert sorted(mine.saved) == sorted(torchs.saved)
    assert mine.recomputed == torchs.recomputed
