"""Regression tests for the bugs ``test_inductor_fuzz_ops.py``'s random programs found, each
minimized to the smallest program that showed it (compiled vs eager, or eager vs numpy)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import minitorch_compile as mtc
import minitorch_compile.nn.functional as F

pytestmark = pytest.mark.usefixtures("strict_inductor")  # conftest.py


def _same(fn, *args, backend="inductor"):
    mtc.dynamo.reset()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        warnings.filterwarnings("error", message="inductor:")
        got = mtc.compile(fn, backend=backend)(*args)
    want = fn(*args)
    got, want = (got, want) if isinstance(want, tuple) else ((got,), (want,))
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_allclose(g.detach().numpy(), w.detach().numpy(), rtol=1e-6)


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_reshape_of_a_pointwise_result_of_a_transposed_input(backend):
    """numpy's ufuncs keep their input's layout, so eager ``x.cos()`` of a transposed ``x`` was
    transposed, while its fake tensor (the Meta kernel) was contiguous: AOT traced the
    ``flatten`` as a ``view``, which failed on the real strides under ``aot_eager``
    ("view size is not compatible with input tensor's size and stride")."""
    x = mtc.from_numpy(np.random.default_rng(0).standard_normal((2, 1, 2)).astype(np.float32).T)
    _same(lambda x: mtc.outer(x.flatten(), x.cos().flatten()), x, backend=backend)


def test_eager_results_have_the_meta_kernels_strides():
    x = mtc.randn(3, 4).t()
    for out in (x.cos(), x + 1, mtc.where(x > 0, x, 0.0), x.cumsum(0), x.sort(0).values):
        assert out.is_contiguous()
    assert x.stride() == (1, 4) and x.detach().stride() == (1, 4)  # views keep theirs


def test_two_gathers_of_one_view_along_different_frame_dims_are_different_tiles():
    """``cosine_similarity(x[:, i], x, dim=0)`` with ``x`` 2×2, with grad: the fused kernel reads
    ``x`` at ``indirect0 + 2*r0`` (the reduction) and at ``indirect0 + 2*x0`` (the saved
    ``x[:, i]``) — one view, same shape and strides, and the gathered tile was cached under
    the view's name alone, so the second load reused the first's transposed tile
    ("could not broadcast input array from shape (1,2) into shape (2,1)")."""
    import minitorch_compile.nn.functional as F

    x = mtc.randn(2, 2, requires_grad=True)
    i = mtc.tensor([1])
    f = lambda x, i: F.cosine_similarity(x[:, i], x, dim=0)  # noqa: E731
    _same(f, x, i)
    mtc.dynamo.reset()
    mtc.compile(f)(x, i).sum().backward()
    got, x.grad = x.grad, None
    f(x, i).sum().backward()
    np.testing.assert_allclose(got.numpy(), x.grad.numpy(), rtol=1e-5)


@pytest.mark.parametrize("name", ["scatter_add", "scatter", "index_put", "index_add"])
def test_scatter_into_a_dim_of_size_one_adds_every_value(name):
    """The layout's indexer drops a size-1 dim's variable (its value is 0) — for a scatter that
    was the indirect one, so ``zeros(3, 1).scatter_add(1, idx, src)`` (``F.pad(x[:, i],
    mode='replicate')``'s backward) was a plain store of a (3, 4) tile into (3, 1): an error,
    where the four values of a row must add up."""
    src, idx = mtc.randn(3, 4), mtc.zeros(3, 4, dtype=mtc.int64)
    fn = {"scatter_add": lambda s, i: mtc.zeros(3, 1).scatter_add(1, i, s),
          "scatter": lambda s, i: mtc.zeros(3, 1).scatter(1, i[:, :1], s),
          "index_put": lambda s, i: mtc.zeros(1, 4).index_put((i[:, 0],), s, True),
          "index_add": lambda s, i: mtc.zeros(1, 4).index_add(0, i[:, 0], s)}[name]
    _same(fn, src, idx)


def test_a_kernel_of_dead_buffers_only_is_valid_python():
    """``x.repeat(2)`` left unused still made a kernel, which stores nothing: its one-tile body
    was an over-indented ``pass`` (IndentationError, the graph ran eagerly with a warning)."""
    def f(x):
        x.repeat(2)
        return x.cos()

    _same(f, mtc.randn(2))


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_inplace_on_a_view_of_a_leaf_that_requires_grad_raises_as_eager(backend):
    """Was a strict xfail. Dynamo breaks at ``add_`` (AOT's trace raises eager's error) and
    returns the compiled ``x[:]``, which was a new tensor, not a view of ``x``: under
    ``inductor`` the eager ``add_`` then ran and wrote ``x``; ``aot_eager`` raised the no_grad
    view message. Outputs aliasing inputs are now regenerated from the input by view replay
    (``aot/functional_utils.py``; more cases in ``test_aot_output_aliases.py``)."""
    def f(x):
        return x[:].add_(1)

    x = mtc.randn(2, requires_grad=True)
    before = x.detach().numpy().copy()
    with pytest.raises(RuntimeError, match="view of a leaf Variable"):
        f(x)
    mtc.dynamo.reset()
    with pytest.raises(RuntimeError, match="view of a leaf Variable"):
        mtc.compile(f, backend=backend)(x)
    np.testing.assert_array_equal(x.detach().numpy(), before)


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_an_input_saved_for_backward_keeps_its_version_check(backend):
    """Under ``inductor`` an input the backward needs (``cos``'s ``x``) was saved as the new
    tensor object the compiled forward returned, so writing ``x`` in place after the call went
    unnoticed and ``backward`` gave ``-sin(3x)`` where eager raises "modified by an inplace
    operation" (found by ``test_aot_output_aliases``'s random view chains). The runtime now
    saves the caller's tensor itself (``CompiledPair.saved_inputs``)."""
    w = mtc.tensor(np.arange(6.0).reshape(3, 2), requires_grad=True)
    x = w * 1
    mtc.dynamo.reset()
    out = mtc.compile(lambda x: x.cos(), backend=backend)(x)
    x.detach().mul_(3)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.sum().backward()


def test_t_of_a_vector_is_a_view_not_the_tensor_itself():
    """Eager vs torch: ``x.t()`` below 2-D returned ``x`` itself, where torch returns a view
    (``transpose(0, 0)``) — so an in-place op on it said "a leaf Variable" instead of torch's
    "a view of a leaf Variable", and ``x.t().requires_grad_(False)`` would change ``x``."""
    for x in (mtc.randn(3, requires_grad=True), mtc.tensor(1.5, requires_grad=True)):
        y = x.t()
        assert y is not x and y._base is x and y.shape == x.shape
        with pytest.raises(RuntimeError, match="a view of a leaf Variable"):
            y.add_(1)
        z = x.detach().t()
        z.add_(1)  # writes through to x
        np.testing.assert_array_equal(z.numpy(), x.detach().numpy())


def test_var_over_a_tiled_reduced_dim():
    """A reduction over everything whose result another node of the same kernel reads (var's
    mean) was cut by the tiles, so that node read a partial mean. Found with small tiles
    (``tile_bytes=16``); at the default tiles it needed a tall input: ``randn(200000, 1).var(0)``
    compiled gave 9.30 where eager gives 8.95, and ``softmax(x, 0)`` was off by 3x. Such a
    kernel was then made one tile; it now runs as passes over the tiles, the reader one pass
    after the reduction (``NumpyKernel._phases``; ``tests/test_inductor_two_pass.py``)."""
    from minitorch_compile.inductor import config

    x = mtc.tensor(np.random.default_rng(0).standard_normal((5, 1)).astype(np.float32))
    old = config.tile_bytes
    try:
        config.tile_bytes = 16
        _same(lambda x: x.var(0), x)
    finally:
        config.tile_bytes = old


@pytest.mark.parametrize("fn", [lambda x: x.var(0), lambda x: F.softmax(x, 0),
                                lambda x: (x - x.mean(0)).abs().sum(0),
                                lambda x: x.reshape(-1).var()],
                         ids=["var0", "softmax0", "absdev0", "var_all"])
def test_dependent_reductions_over_everything_at_default_tiles(fn):
    x = mtc.tensor(np.random.default_rng(1).standard_normal((200000, 1)).astype(np.float32) * 3
                   + 1)
    mtc.dynamo.reset()
    np.testing.assert_allclose(mtc.compile(fn)(x).numpy(), fn(x).numpy(), rtol=1e-4, atol=1e-6)


def test_an_expanded_view_read_after_its_base_is_written():
    """Functionalization replays a view's chain after its base is written in place; an
    ``expand`` step holds its keyword-only ``implicit`` by position, and the replay passed it
    positionally (``TypeError: bind() takes 2 positional arguments``), so the graph ran
    eagerly. Found by the slow fuzz profile (seed 13)."""
    def f(x, m):
        e = x.expand(2, *x.shape)
        x.masked_fill_(m, 0.5)
        return e * 1

    x = mtc.tensor(np.array([1.0, -2.0, 3.0], dtype=np.float32))
    m = mtc.tensor(np.array([True, False, True]))
    want = f(x.clone(), m)
    mtc.dynamo.reset()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no eager fallback
        got = mtc.compile(f)(x.clone(), m)
    np.testing.assert_array_equal(got.numpy(), want.numpy())


def _copy_broadcast(x, y):
    x.copy_(y)
    return x * 2


def _masked_fill_input(x, m):
    return x.masked_fill_(m, 0.5)


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
@pytest.mark.parametrize("fn", [_copy_broadcast, _masked_fill_input],
                         ids=["copy_broadcast", "masked_fill_input"])
def test_an_input_written_under_dynamic_sizes(fn, backend):
    """Functionalization wrote an input back as ``expand(new, dst's shape)`` with the symbolic
    shape itself as the argument, so the dynamic graph expanded to the first trace's sizes:
    the third call (size 4, the first dynamic one) raised a MetaError that eager does not.
    Found by the fuzz tests when run after other test files."""
    mtc.dynamo.reset()
    compiled = mtc.compile(fn, backend=backend)
    for n in (2, 3, 4, 5):
        a = mtc.tensor(np.random.default_rng(n).standard_normal(n).astype(np.float32))
        b = a.clone()
        other = (mtc.tensor(np.array([7.0], dtype=np.float32)) if fn is _copy_broadcast
                 else mtc.tensor(np.arange(n) % 2 == 0))
        np.testing.assert_array_equal(compiled(a, other).numpy(), fn(b, other).numpy())
        np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_bad_shape_inputs_grow_only_dims_that_can_grow():
    """Not a compiler bug: the fuzz test's "input of another shape" made an index with no
    repeats along a dim longer than the dim it indexes (``index_copy(0, i5, ...)`` with ``i5``
    of shape ``(3,)`` into a dim of size 2), which cannot exist, so building the input raised
    ``ValueError: cannot reshape`` in the test itself (seen with ``HYPOTHESIS_PROFILE=slow``,
    seed 13). Such a dim is no longer grown (``InputSpec.can_grow``)."""
    from .fuzz_ops_programs import InputSpec

    spec = InputSpec("i5", "index", (2,), "int64", bounds=(2, 2, 2), unique_dim=0)
    assert not spec.can_grow(0)
    spec.shape = (1,)
    assert spec.can_grow(0)
    spec.shape = (2,)
    spec.make(0, 4)  # the good shape still builds
    assert InputSpec("i6", "index", (2,), "int64", bounds=(2, 2, 2)).can_grow(0)


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
@pytest.mark.parametrize("grad", [False, True])
def test_dynamic_write_through_a_reshaping_view(backend, grad):
    """Functionalization scattered a write through a ``view``/``squeeze``/``unsqueeze`` back into
    its base with ``view(src, <the base's symbolic sizes themselves>)``, so the dynamic graph
    held the first trace's sizes: under ``aot_eager`` the third call raised "shape '[s0, 1]' is
    invalid for input of size 5", and Inductor fell back to eager mode ("the size symbol s0 is
    no input's size"; the slow fuzz profile's dynamic failure with inputs (3, 4) and (3, 1)).
    The sizes are now ``sym_size`` nodes read at run time."""
    def f(x0, x1):
        t = x1 * 2
        t.squeeze(1).relu_()
        u = x0 * 2
        u.view(-1).add_(1)
        return t, u, x0.clone().unsqueeze(0).mul_(2)[0]

    mtc.dynamo.reset()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        warnings.filterwarnings("error", message="inductor:")
        g = mtc.compile(f, backend=backend)
        for n in (3, 4, 5):
            rng = np.random.default_rng(n)
            args = [mtc.tensor(rng.standard_normal(s).astype(np.float32), requires_grad=grad)
                    for s in ((n, 4), (n, 1))]
            for got, want in zip(g(*args), f(*args)):
                np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(),
                                           rtol=1e-6)
