"""Compiled == eager on random programs over the op table's breadth ("never wrong, never a
crash").

``fuzz_ops_programs.py`` writes straight-line programs mixing pointwise ops and activations,
reductions, scans and sorts, views, cat/stack, gathers and scatters (``x[idx]``,
``index_select``, ``embedding``, ``index_put``, ``scatter*``, ``index_add``), convolutions,
pooling, padding, normalization layers, softmax and losses, einsum and matmuls — over
broadcasting, permuted, strided and broadcast (stride 0) inputs of float32, float64, int64 and
bool, with a first dim ``N`` that varies.  Each program runs through ``mtc.compile`` with
Inductor (the default backend) and with ``aot_eager``, forward and backward, and must give
eager mode's values, dtypes, shapes, gradients and input mutations:

* ``test_compiled_equals_eager``: one call;
* ``test_dynamic_sizes``: three calls at three sizes of ``N`` (the second makes ``N``
  dynamic, the third runs the symbolic graph);
* ``test_bad_inputs_raise_eagers_error``: after a good call, an index out of range (above, or
  below ``-size``) or an input of another shape — eager mode's exception type, or its values
  where eager accepts it.

An Inductor compile that falls back to eager mode fails these tests.  The default hypothesis
profile runs a few dozen derandomized programs; ``HYPOTHESIS_PROFILE=slow`` runs many, freshly
random (``conftest.py``) — that is how the bugs fixed in ``test_inductor_fuzz_fixes.py`` were
found.
"""

from __future__ import annotations

import contextlib
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minitorch_compile as mtc
from minitorch_compile.inductor import config

from .fuzz_ops_programs import programs

BACKENDS = ["inductor", "aot_eager"]
EXAMPLES = max(8, settings().max_examples // 2)  # per backend: 12 in the default profile
STEPS = 6 if settings().max_examples < 100 else 12  # the slow profile: longer programs too


def _close(got, want, what):
    g, w = got.detach().numpy(), want.detach().numpy()
    assert g.shape == w.shape and g.dtype == w.dtype, (what, g.shape, w.shape, g.dtype, w.dtype)
    if w.dtype.kind == "f":
        finite = np.abs(w[np.isfinite(w)])
        scale = max(1.0, float(finite.max()) if finite.size else 1.0)
        tol = 2e-4 if w.dtype == np.float32 else 1e-9
        np.testing.assert_allclose(g, w, rtol=tol, atol=tol * scale, equal_nan=True,
                                   err_msg=what)
    else:
        np.testing.assert_array_equal(g, w, err_msg=what)


def _cotangent(t, k):
    rng = np.random.default_rng(k)
    dtype = t.detach().numpy().dtype
    return mtc.from_numpy(rng.standard_normal(tuple(t.shape)).astype(dtype))


def _call(thunk):
    """``thunk()``, or the exception it raised (an Inductor fallback warning is an error)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            warnings.filterwarnings("error", message="inductor:")
            warnings.filterwarnings("error", message="AOTAutograd:")  # ran the graph eagerly
            warnings.filterwarnings("error", message="mtc.compile: internal compiler error")
            return thunk()
    except Exception as e:  # noqa: BLE001 - compared with the other side's
        if any(m in str(e) for m in ("inductor:", "AOTAutograd:", "internal compiler error")):
            raise
        return e


def _run(fn, prog, variant, grad, bad=None):
    """(outputs or the exception, input grads or the backward's exception, inputs after the
    call)."""
    inputs = prog.inputs(variant, grad, bad)
    outs = _call(lambda: fn(*inputs))
    if isinstance(outs, Exception):
        return outs, [], inputs
    diff = [k for k, o in enumerate(outs) if o.requires_grad]
    if not (grad and diff):
        return outs, [x.grad for x in inputs], inputs
    loss = sum((outs[k] * _cotangent(outs[k], k)).sum() for k in diff)
    failed = _call(loss.backward)
    return outs, failed if isinstance(failed, Exception) else [x.grad for x in inputs], inputs


def _aliasing(outs, inputs) -> list:
    """Per output: is it an input, or a view of an input, of another output, or of a base
    it shares with another output?  Compiled outputs that alias must be real views, as
    eager's (``aot/functional_utils.py``); the only view of a hidden intermediate need not."""
    def which(t, pool, kind):
        return next((f"{kind}{i}" for i, p in enumerate(pool) if t is p), None)

    def kind(o):
        if o._base is None:
            return which(o, inputs, "input ")
        shared = [j for j, p in enumerate(outs) if p._base is o._base]
        return which(o, inputs, "input ") or which(o._base, inputs, "view of input ") or \
            which(o._base, outs, "view of output ") or \
            (f"shares a base with output {shared[0]}" if len(shared) > 1 else None)

    return [kind(o) for o in outs]


TILES = [None, 16, 48]  # None: the default tiles; else bytes per tile, two threads


@contextlib.contextmanager
def tiles(nbytes):
    """Small tiles and two threads: kernels over a few elements still run several tiles, in
    chunks on the thread pool (the default sizes make one tile of anything this small)."""
    if nbytes is None:
        yield
        return
    names = ("tile_bytes", "threads", "min_parallel_numel", "chunks_per_thread")
    old = {n: getattr(config, n) for n in names}
    try:
        config.tile_bytes, config.threads, config.min_parallel_numel = nbytes, 2, 1
        config.chunks_per_thread = 2
        yield
    finally:
        for n, v in old.items():
            setattr(config, n, v)


def check(prog, backend, variants=(0,), grad=False, bad=None, tile_bytes=None):
    """Compiled (one compiled function, called at each variant) == eager."""
    with tiles(tile_bytes):
        _check(prog, backend, variants, grad, bad)


def _check(prog, backend, variants, grad, bad):
    fn = prog.build()
    mtc.dynamo.reset()
    compiled = mtc.compile(fn, backend=backend)
    for v in variants:
        want, wgrads, win = _run(fn, prog, v, grad, bad if v == variants[-1] else None)
        got, ggrads, gin = _run(compiled, prog, v, grad, bad if v == variants[-1] else None)
        where = f"{prog!r}\n# backend {backend}, variant {v}, bad {bad}"
        if isinstance(want, Exception):
            assert isinstance(got, Exception), f"eager raised {want!r}, compiled did not\n{where}"
            assert type(got) is type(want), f"eager {want!r}, compiled {got!r}\n{where}"
            continue
        if isinstance(got, Exception):
            # AOTAutograd traces the backward with the forward: an error eager mode raises in
            # ``backward()`` (a saved value modified in place) comes at the compiled call
            if isinstance(wgrads, Exception) and type(wgrads) is type(got):
                continue
            raise AssertionError(f"compiled raised, eager did not\n{where}") from got
        assert len(got) == len(want)
        for k, (o, e) in enumerate(zip(got, want)):
            _close(o, e, f"output {k}\n{where}")
        assert _aliasing(got, gin) == _aliasing(want, win), f"aliasing\n{where}"
        for s, a, b in zip(prog.specs, gin, win):
            _close(a, b, f"input {s.name} after the call\n{where}")
        if isinstance(wgrads, Exception) or isinstance(ggrads, Exception):
            assert type(ggrads) is type(wgrads), f"backward: eager {wgrads!r}, compiled " \
                f"{ggrads!r}\n{where}"
            continue
        for s, a, b in zip(prog.specs, ggrads, wgrads):
            assert (a is None) == (b is None), f"grad of {s.name}\n{where}"
            if a is not None:
                _close(a, b, f"grad of {s.name}\n{where}")
    mtc.dynamo.reset()


@pytest.mark.parametrize("backend", BACKENDS)
@settings(max_examples=EXAMPLES)
@given(prog=programs(max_steps=STEPS), grad=st.booleans(), tile_bytes=st.sampled_from(TILES))
def test_compiled_equals_eager(backend, prog, grad, tile_bytes):
    check(prog, backend, (0,), grad, tile_bytes=tile_bytes)


@pytest.mark.parametrize("backend", BACKENDS)
@settings(max_examples=max(4, EXAMPLES // 2))
@given(prog=programs(max_steps=STEPS - 2), grad=st.booleans(), tile_bytes=st.sampled_from(TILES))
def test_dynamic_sizes(backend, prog, grad, tile_bytes):
    check(prog, backend, (0, 1, 2), grad, tile_bytes=tile_bytes)


@settings(max_examples=max(4, EXAMPLES // 2))
@given(prog=programs(max_steps=STEPS // 2, families=["indexing"], all_outputs=True),
       data=st.data())
def test_bad_inputs_raise_eagers_error(prog, data):
    indices = [s.name for s in prog.specs if s.kind == "index"]
    if indices and data.draw(st.booleans()):
        bad = {data.draw(st.sampled_from(indices)): data.draw(st.sampled_from(["high", "low"]))}
        check(prog, "inductor", (0, 0), bad=bad)
        return
    # another shape: one input's fixed dim one longer (eager may accept it: then its values)
    spec = data.draw(st.sampled_from(prog.specs))
    fixed = [d for d, s in enumerate(spec.shape) if s != "N" and spec.can_grow(d)]
    if not fixed:
        return
    d = data.draw(st.sampled_from(fixed))
    old = spec.shape
    spec.shape = old[:d] + (old[d] + 1,) + old[d + 1:]
    try:
        fn = prog.build()
        mtc.dynamo.reset()
        compiled = mtc.compile(fn)
        spec.shape = old
        _run(compiled, prog, 0, False)  # compile on good inputs first
        spec.shape = old[:d] + (old[d] + 1,) + old[d + 1:]
        want, _, _ = _run(fn, prog, 0, False)
        got, _, _ = _run(compiled, prog, 0, False)
        if isinstance(want, Exception):
            assert type(got) is type(want), (prog, want, got)
        else:
            assert not isinstance(got, Exception), (prog, got)
            for o, e in zip(got, want):
                _close(o, e, repr(prog))
    finally:
        spec.shape = old
        mtc.dynamo.reset()
