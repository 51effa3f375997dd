"""Functionalization of writes through views, on random programs: ``aot_function`` (which
functionalizes the traced joint graph) against eager mode — outputs and gradients.

A program takes ``x`` (2, 3, 4), makes ``y = x * 1`` and then does random steps, each one of

* make a view of ``y`` or of an earlier view (select, slice, transpose, view, unsqueeze,
  permute, detach);
* write in place through one of the tensors (``add_``, ``mul_`` by a function of ``x``,
  ``sin_``, ``copy_``, ``x[...] = c``, ``index_put_``);
* read a tensor into the outputs.

Eager mode defines the answer; the compiled graphs must be free of mutation.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import minitorch_compile as mtc
from minitorch_compile.aot import aot_function, min_cut_rematerialization_partition, nop

VIEWS = {
    "select": lambda t: t.select(0, t.shape[0] - 1) if t.ndim else t.detach(),
    "slice": lambda t: t[1:] if t.ndim and t.shape[0] > 1 else t[:],
    "transpose": lambda t: t.transpose(0, -1) if t.ndim >= 2 else t.view(t.shape),
    "view": lambda t: t.view(-1) if t.is_contiguous() else t.unsqueeze(0),
    "unsqueeze": lambda t: t.unsqueeze(0),
    "permute": lambda t: t.permute(*reversed(range(t.ndim))),
}


def _write(kind, t, x):
    if kind == "add_":
        t.add_(1.5)
    elif kind == "mul_":
        t.mul_(x.sum() * 0.1 + 1)
    elif kind == "sin_":
        t.sin_()
    elif kind == "copy_":
        t.copy_(x.mean() + t * 0.5)
    elif kind == "setitem" and t.ndim:
        t[0] = -0.25
    elif kind == "index_put_" and t.ndim:
        t.index_put_((mtc.tensor([0, 0]),), x.reshape(-1)[0] * 2.0, accumulate=True)


step = st.one_of(
    st.tuples(st.just("view"), st.integers(0, 9), st.sampled_from(sorted(VIEWS))),
    st.tuples(st.just("write"), st.integers(0, 9),
              st.sampled_from(["add_", "mul_", "sin_", "copy_", "setitem", "index_put_"])),
    st.tuples(st.just("read"), st.integers(0, 9), st.just(None)))


def _program(steps):
    def fn(x):
        live = [x * 1]
        outs = []
        for kind, who, what in steps:
            t = live[who % len(live)]
            if kind == "view":
                live.append(VIEWS[what](t))
            elif kind == "write":
                _write(what, t, x)
            else:
                outs.append(t * 1)
        outs.extend(t * 1 for t in live)  # every tensor's final value is an output
        return [o.sum() * (k + 1) for k, o in enumerate(outs)] + [live[0]]
    return fn


@settings(max_examples=40, deadline=None)
@given(steps=st.lists(step, min_size=1, max_size=8))
def test_random_writes_through_views_compile_to_eager_values_and_gradients(steps):
    fn = _program(steps)
    data = np.linspace(-1.0, 1.0, 24).reshape(2, 3, 4)
    xe = mtc.tensor(data, requires_grad=True)
    xc = mtc.tensor(data, requires_grad=True)
    expected = fn(xe)  # these steps never overwrite a saved tensor: eager succeeds
    compiled = aot_function(fn, nop, partition_fn=min_cut_rematerialization_partition)
    got = compiled(xc)
    for a, b in zip(expected, got):
        np.testing.assert_allclose(b.detach().numpy(), a.detach().numpy(), rtol=1e-10,
                                   atol=1e-12)
    sum(o.sum() for o in expected).backward()
    sum(o.sum() for o in got).backward()
    np.testing.assert_allclose(xc.grad.numpy(), xe.grad.numpy(), rtol=1e-10, atol=1e-12)
    pair = compiled.last_pair
    for gm in (pair.joint_graph, *pair.partition):
        assert not any(n.target.schema.is_mutable for n in gm.graph.nodes
                       if n.op == "call_function" and hasattr(n.target, "schema"))


def test_input_given_history_by_a_write_keeps_it():
    """``buf[0] = x.sum()`` gives the input ``buf`` autograd history in eager mode
    (``CopySlices``); compiled, its final value is an extra output copied back *with* history
    (``CopyBackwards``, as torch's runtime wrapper does) — a later backward through ``buf``
    reaches ``x``."""
    import warnings

    def f(x, buf):
        buf[0] = x.sum()
        buf[1:] *= 2
        return buf * x

    compiled = mtc.compile(f, backend="aot_eager")
    data = np.array([0.5, -1.0, 2.0])
    xc, xe = mtc.tensor(data, requires_grad=True), mtc.tensor(data, requires_grad=True)
    bc, be = mtc.ones(3), mtc.ones(3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no eager fallback
        oc = compiled(xc, bc)
    oe = f(xe, be)
    np.testing.assert_allclose(oc.detach().numpy(), oe.detach().numpy())
    np.testing.assert_allclose(bc.detach().numpy(), be.detach().numpy())
    assert bc.grad_fn is not None and bc.requires_grad
    (oc.sum() + (bc * bc).sum()).backward()
    (oe.sum() + (be * be).sum()).backward()
    np.testing.assert_allclose(xc.grad.numpy(), xe.grad.numpy())


def test_aot_function_returns_a_written_input_as_an_extra_output():
    def f(x, buf):
        buf[1:] = x.exp()
        return x * 2

    compiled = aot_function(f, nop)
    x = mtc.tensor([0.5, 1.0], requires_grad=True)
    buf = mtc.zeros(3)
    out = compiled(x, buf)
    pair = compiled.last_pair
    assert pair.history_inputs == [1] and pair.mutated_inputs
    assert pair.num_outputs == 2  # the user's output, then buf's final value
    (out.sum() + buf.sum()).backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 + np.exp([0.5, 1.0]))
