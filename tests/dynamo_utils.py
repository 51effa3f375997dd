"""Shared helpers for the Dynamo tests: a counting backend and ``check`` (compiled vs eager).

``check(fn, *args)`` is the differential test every Dynamo program goes through:

1. copy the inputs twice (tensors become fresh leaves with the same values and the same
   ``requires_grad``; ``nn.Module``s are deep-copied for the eager run);
2. run ``fn`` eagerly on one copy and ``mtc.compile(fn)`` on the other;
3. compare the outputs structurally (same Python types, same constants, close tensor values,
   same dtypes/shapes) and — when some output requires grad — backpropagate the same scalar
   through both and compare the gradients of every input leaf and module parameter;
4. call the compiled function again on the same inputs: it must hit the cache (no new entry);
5. assert the number of graphs captured, that no entry fell back to eager (``assert_compiled``)
   and that the expected guards are present.
"""

from __future__ import annotations

import copy

import numpy as np

import minitorch_compile as mtc
from minitorch_compile.nn import Module


def function(inputs):
    """The torch.compile tutorial's program (its name too: logs say "function function")."""
    x = inputs["x"]
    y = inputs["y"]
    x = x.cos().cos()
    if x.mean() > 0.5:
        x = x / 1.1
    return x * y


class CountingBackend:
    """A backend that records every graph it is given and runs it as is (torch's
    ``CompileCounter``)."""

    def __init__(self):
        self.frame_count = 0
        self.op_count = 0
        self.graphs: list = []
        self.example_inputs: list = []

    def __call__(self, gm, example_inputs):
        self.frame_count += 1
        self.graphs.append(gm)
        self.example_inputs.append(list(example_inputs))
        self.op_count += sum(1 for n in gm.graph.nodes
                             if n.op in ("call_function", "call_method", "call_module"))
        return gm.forward


def ops_of(gm) -> list[str]:
    """The op targets of a graph, as short strings (``cos``, ``mul``, ``sum``)."""
    out = []
    for n in gm.graph.nodes:
        if n.op == "call_method":
            out.append(n.target)
        elif n.op == "call_function":
            out.append(getattr(n.target, "__name__", str(n.target)))
    return out


# ---------------------------------------------------------------- copying and comparing
def clone_input(v, memo=None):
    """A fresh copy of an input: tensors become new leaves, modules are deep-copied."""
    if isinstance(v, mtc.Tensor):
        t = v.detach().clone()
        if v.requires_grad:
            t.requires_grad_(True)
        return t
    if isinstance(v, Module):
        return copy.deepcopy(v)
    if isinstance(v, list):
        return [clone_input(i) for i in v]
    if isinstance(v, tuple):
        items = [clone_input(i) for i in v]
        return type(v)(*items) if hasattr(v, "_fields") else tuple(items)
    if isinstance(v, dict):
        return {k: clone_input(i) for k, i in v.items()}
    return v


def leaves(v) -> list:
    """Every tensor and module parameter reachable from an input or output, in order."""
    if isinstance(v, mtc.Tensor):
        return [v]
    if isinstance(v, Module):
        return list(v.parameters())
    if isinstance(v, (list, tuple)):
        return [t for i in v for t in leaves(i)]
    if isinstance(v, dict):
        return [t for i in v.values() for t in leaves(i)]
    return []


def _np(t):
    return t.detach().numpy() if t.device.type == "cpu" else t.detach().cpu().numpy()


def assert_same(actual, expected, path="out", rtol=1e-5, atol=1e-6):
    """Structural equality: same container types and constants, close tensors."""
    if isinstance(expected, mtc.Tensor):
        assert isinstance(actual, mtc.Tensor), f"{path}: expected a tensor, got {actual!r}"
        assert actual.dtype is expected.dtype, f"{path}: dtype {actual.dtype} != {expected.dtype}"
        assert tuple(actual.shape) == tuple(expected.shape), \
            f"{path}: shape {tuple(actual.shape)} != {tuple(expected.shape)}"
        assert actual.device == expected.device, f"{path}: device {actual.device}"
        assert actual.requires_grad == expected.requires_grad, f"{path}: requires_grad"
        np.testing.assert_allclose(_np(actual), _np(expected), rtol=rtol, atol=atol,
                                   err_msg=path)
        return
    assert type(actual) is type(expected), \
        f"{path}: type {type(actual).__name__} != {type(expected).__name__}"
    if isinstance(expected, (list, tuple)):
        assert len(actual) == len(expected), f"{path}: length {len(actual)} != {len(expected)}"
        for i, (a, e) in enumerate(zip(actual, expected)):
            assert_same(a, e, f"{path}[{i}]", rtol, atol)
    elif isinstance(expected, dict):
        assert list(actual) == list(expected), f"{path}: keys {list(actual)} != {list(expected)}"
        for k in expected:
            assert_same(actual[k], expected[k], f"{path}[{k!r}]", rtol, atol)
    elif isinstance(expected, Module):
        pass  # a module passed through: identity differs between the two runs by design
    else:
        assert actual == expected, f"{path}: {actual!r} != {expected!r}"


def _loss(out):
    """One scalar from every differentiable output tensor (weighted, so grads differ)."""
    total = None
    for i, t in enumerate(leaves(out)):
        if t.requires_grad and t.is_floating_point():
            term = (t * (i + 1.5)).sum()
            total = term if total is None else total + term
    return total


def run_and_grads(fn, args, kwargs):
    out = fn(*args, **kwargs)
    loss = _loss(out)
    grads = None
    if loss is not None:
        loss.backward()
        grads = [None if t.grad is None else _np(t.grad)
                 for t in leaves(list(args) + list(kwargs.values()))]
    return out, grads


def compile_and_compare(fn, *args, backend="eager", kwargs=None, rtol=1e-5, atol=1e-6,
                        **compile_kwargs):
    """Compiled vs eager on copies of ``args``: values and grads. Returns the compiled fn."""
    kwargs = kwargs or {}
    e_args, e_kwargs = clone_input(list(args)), clone_input(kwargs)
    c_args, c_kwargs = clone_input(list(args)), clone_input(kwargs)
    expected, e_grads = run_and_grads(fn, e_args, e_kwargs)
    compiled = mtc.compile(fn, backend=backend, **compile_kwargs)
    actual, c_grads = run_and_grads(compiled, c_args, c_kwargs)
    assert_same(actual, expected, rtol=rtol, atol=atol)
    assert (e_grads is None) == (c_grads is None)
    if e_grads is not None:
        for i, (a, e) in enumerate(zip(c_grads, e_grads)):
            assert (a is None) == (e is None), f"grad {i}: {a} vs {e}"
            if e is not None:
                np.testing.assert_allclose(a, e, rtol=rtol, atol=atol, err_msg=f"grad {i}")
    return compiled, (c_args, c_kwargs)


def guard_set(fn) -> set[tuple[str, str]]:
    """``{(kind, source)}`` of the first cache entry of ``fn``."""
    return {(g.kind, g.source_name) for g in mtc.dynamo.cache_entries(fn)[0].guard.guard_set.guards}


def graph_count(fn) -> int:
    return sum(1 for e in mtc.dynamo.cache_entries(fn) if e.graph_module is not None)


def assert_compiled(fn, graphs: int | None = None) -> list:
    """``fn`` has cache entries and every one runs compiled code (none fell back to eager):
    what a test claiming compiled behaviour must assert, or it passes on the eager fallback
    too (``tests/test_suite_self_check.py`` breaks the compiler to make sure)."""
    found = mtc.dynamo.cache_entries(fn)
    name = getattr(fn, "__name__", type(fn).__name__)
    assert found, f"{name} was never compiled"
    eager = [e.reason for e in found if e.is_eager]
    assert not eager, f"entries of {name} run eagerly: {eager}"
    if graphs is not None:
        assert graph_count(fn) == graphs, f"expected {graphs} graphs, got {graph_count(fn)}"
    return found


def check(fn, *args, graphs=1, guards=(), no_guards=(), ops=None, kwargs=None, backend="eager",
          entries=1, rtol=1e-5, atol=1e-6, eager=False):
    """Differential test of one program; see the module docstring. Returns the cache entry.
    Unless ``eager=True`` (a program that is meant to fall back), no entry may run eagerly."""
    compiled, (c_args, c_kwargs) = compile_and_compare(fn, *args, backend=backend, kwargs=kwargs,
                                                       rtol=rtol, atol=atol)
    before = len(mtc.dynamo.cache_entries(fn))
    compiled(*c_args, **c_kwargs)  # the same inputs again: a cache hit
    found = mtc.dynamo.cache_entries(fn)
    assert len(found) == before == entries, \
        f"expected {entries} cache entries, got {before} then {len(found)}"
    entry = found[0]
    assert graph_count(fn) == graphs, f"expected {graphs} graphs; entry reason: {entry.reason}"
    if not eager:
        assert_compiled(fn)
    have = guard_set(fn)
    for g in guards:
        assert g in have, f"missing guard {g}; have {sorted(have)}"
    for g in no_guards:
        assert g not in have, f"unexpected guard {g}"
    if ops is not None:
        assert entry.graph_module is not None
        assert ops_of(entry.graph_module) == list(ops), ops_of(entry.graph_module)
    return entry


def T(name: str) -> tuple[str, str]:
    """The TENSOR_MATCH guard on local ``name``."""
    return ("TENSOR_MATCH", f"L[{name!r}]")


def C(name: str) -> tuple[str, str]:
    """The CONSTANT_MATCH guard on local ``name``."""
    return ("CONSTANT_MATCH", f"L[{name!r}]")
