"""The backend registry (``torch/_dynamo/backends/registry.py``).

A backend receives the captured ``GraphModule`` and the example inputs (real tensors of the
call that triggered compilation) and returns the callable the transformed bytecode will call.
``register_backend`` adds one by name; ``mtc.compile(backend="name")`` looks it up.

Registered here: ``"eager"`` runs the graph's generated ``forward`` as is.  ``"aot_eager"``
runs it through AOTAutograd (joint graph, min-cut partition) with both halves run as they are,
as torch's ``aot_eager`` does.  ``"inductor"`` adds the code generator (``inductor/``): both
halves become fused numpy kernels.
"""

from __future__ import annotations

_BACKENDS: dict = {}


def register_backend(compiler_fn=None, name: str | None = None, tags=()):
    """Register ``compiler_fn`` under ``name`` (decorator or plain call)."""
    def register(fn):
        key = name or fn.__name__
        if key in _BACKENDS and _BACKENDS[key] is not fn:
            raise RuntimeError(f"duplicate name: {key}")
        _BACKENDS[key] = fn
        return fn

    return register(compiler_fn) if compiler_fn is not None else register


def lookup_backend(backend):
    if callable(backend):
        return backend
    if backend not in _BACKENDS:
        raise ValueError(f"unknown backend {backend!r}; registered: {list_backends()}")
    return _BACKENDS[backend]


def list_backends() -> list[str]:
    return sorted(_BACKENDS)


@register_backend(name="eager")
def eager(gm, example_inputs):
    return gm.forward


@register_backend(name="aot_eager")
def aot_eager(gm, example_inputs):
    from ...aot import aot_module_simplified, min_cut_rematerialization_partition, nop

    return aot_module_simplified(gm, example_inputs, nop, nop,
                                 partition_fn=min_cut_rematerialization_partition)


@register_backend(name="inductor")
def inductor(gm, example_inputs):
    from ...inductor.compile_fx import compile_fx

    return compile_fx(gm, example_inputs)
