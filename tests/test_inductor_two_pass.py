"""Kernels that pass over their tiles more than once (``codegen/cpu.py``, ``_phases``).

A reduction over everything whose result another node of the same kernel reads (``x.var(0)``
on an ``(N, 1)`` input reads its mean; ``softmax(x, 0)`` its max and its sum) runs as passes:
each pass runs its chunks over the tiles on the thread pool, its partial results are combined
in chunk order, and the next pass reads the finished values.  Checked against eager mode at
tiny tiles on one and two threads, and for bit-identical results from run to run.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitorch_compile as mtc
import minitorch_compile.nn.functional as F
from minitorch_compile import inductor
from minitorch_compile.inductor import metrics

pytestmark = pytest.mark.usefixtures("strict_inductor")  # conftest.py

PROGRAMS = {
    "var0": (lambda x: x.var(0), 2),
    "softmax0": (lambda x: F.softmax(x, 0), 3),
    "absdev0": (lambda x: (x - x.mean(0)).abs().sum(0), 2),
    # an epilogue value (the std) and a reduction (the max) read by the last pass, next to
    # epilogue temporaries that must not take their buffers
    "mixed": (lambda x: (x - x.max(0)[0]) / (x.std(0) + 1) + x.mean(0) * 2, 3),
}


@pytest.fixture
def tiny_tiles():
    c = inductor.config
    old = c.tile_bytes, c.threads, c.min_parallel_numel
    c.tile_bytes, c.min_parallel_numel = 64, 1  # 16 float32 per tile: many chunks
    yield c
    c.tile_bytes, c.threads, c.min_parallel_numel = old


def _compiled(fn, x):
    mtc.dynamo.reset()
    metrics.reset()
    out = mtc.compile(fn)(x)
    return out, inductor.compiled_graphs[-1]


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("name", list(PROGRAMS))
def test_passes_over_tiles_equal_eager(tiny_tiles, name, threads):
    tiny_tiles.threads = threads
    fn, passes = PROGRAMS[name]
    x = mtc.tensor(np.random.default_rng(0).standard_normal((1000, 1)).astype(np.float32) * 3
                   + 1)
    got, graph = _compiled(fn, x)
    np.testing.assert_allclose(got.numpy(), fn(x).numpy(), rtol=1e-5, atol=1e-6)
    assert metrics.generated_kernel_count == 1  # one kernel, as before: only its loop changed
    src = graph.source
    assert f"# pass {passes} of {passes} over the tiles" in src
    assert "one tile is the whole loop" not in src  # tiled, not one tile
    assert f"run_tiles(chunk{passes - 1}, 1000, 16," in src


COLUMNS = {
    "center0": (lambda x: x - x.mean(0), 2),
    "standardize0": (lambda x: (x - x.mean(0)) / x.std(0), 3),
    "softmax0": (lambda x: F.softmax(x, 0), 3),
}


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("name", list(COLUMNS))
def test_column_reductions_read_by_their_kernel_tile_over_rows(tiny_tiles, name, threads):
    """``x - x.mean(0)`` on a C-contiguous (N, M) input: the loop runs reduced dim first
    (tiles of whole rows, ``_reduction_outer``) and the subtraction in a second pass, where it
    used to run one column per tile (strided reads: 4x slower than numpy at (1M, 16))."""
    tiny_tiles.threads = threads
    tiny_tiles.tile_bytes = 4 * 8 * 4  # 4 rows of 8 float32
    fn, passes = COLUMNS[name]
    x = mtc.tensor(np.random.default_rng(4).standard_normal((203, 8)).astype(np.float32))
    got, graph = _compiled(fn, x)
    np.testing.assert_allclose(got.numpy(), fn(x).numpy(), rtol=1e-5, atol=1e-6)
    assert metrics.generated_kernel_count == 1
    assert f"# pass {passes} of {passes} over the tiles" in graph.source
    assert f"run_tiles(chunk{passes - 1}, 203, 4," in graph.source


def test_the_same_bits_on_every_run(tiny_tiles):
    """Partial results are combined in chunk order, whichever thread ran a chunk."""
    tiny_tiles.threads = 2
    x = mtc.tensor(np.random.default_rng(1).standard_normal((5000, 1)).astype(np.float32))
    f = mtc.compile(lambda x: F.softmax(x, 0) * x.var(0))
    first = f(x).numpy()
    for _ in range(5):
        np.testing.assert_array_equal(f(x).numpy(), first)


def test_a_symbolic_length_passes_over_its_tiles(tiny_tiles):
    """Dynamic sizes: one compile, the tile count read at run time, every size right."""
    tiny_tiles.threads = 2
    fn = PROGRAMS["softmax0"][0]
    mtc.dynamo.reset()
    f = mtc.compile(fn, dynamic=True)
    rng = np.random.default_rng(2)
    for n in (300, 777, 20):
        x = mtc.tensor(rng.standard_normal((n, 1)).astype(np.float32))
        np.testing.assert_allclose(f(x).numpy(), fn(x).numpy(), rtol=1e-5, atol=1e-7)
    assert "pass 3 of 3" in inductor.compiled_graphs[-1].source


@given(n=st.integers(1, 300), tile=st.sampled_from([4, 16, 64, 4096]),
       threads=st.sampled_from([1, 2]), which=st.sampled_from(sorted(PROGRAMS)))
def test_any_length_and_tile(n, tile, threads, which):
    c = inductor.config
    old = c.tile_bytes, c.threads, c.min_parallel_numel
    c.tile_bytes, c.threads, c.min_parallel_numel = tile, threads, 1
    try:
        fn = PROGRAMS[which][0]
        x = mtc.tensor(np.random.default_rng(n).standard_normal((n, 1)).astype(np.float32))
        got, _ = _compiled(fn, x)
        want = fn(x)
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-4, atol=1e-6)
    finally:
        c.tile_bytes, c.threads, c.min_parallel_numel = old


def test_a_gathering_kernel_stays_one_tile():
    """Passes share finished values only; a kernel that gathers keeps the one-tile form."""
    x = mtc.tensor(np.random.default_rng(3).standard_normal((300, 1)).astype(np.float32))
    i = mtc.tensor(np.arange(299, -1, -1))
    fn = lambda x, i: x[i].var(0)  # noqa: E731
    mtc.dynamo.reset()
    got = mtc.compile(fn)(x, i)
    np.testing.assert_allclose(got.numpy(), fn(x, i).numpy(), rtol=1e-5)
