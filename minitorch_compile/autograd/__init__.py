"""``mtc.autograd``: reverse-mode automatic differentiation (``torch/autograd/__init__.py``).

``backward`` and ``grad`` seed the output gradients and hand the graph to the engine
(``engine.py``); nodes are recorded by the Autograd dispatch key (``graph.py``); custom
functions live in ``function.py``.
"""

from __future__ import annotations

from . import functional, graph
from .engine import run_backward
from .function import Function, FunctionCtx, once_differentiable
from .grad_mode import (
    detect_anomaly,
    enable_grad,
    inference_mode,
    is_anomaly_enabled,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_detect_anomaly,
    set_grad_enabled,
)

__all__ = ["Function", "FunctionCtx", "backward", "grad", "no_grad", "enable_grad",
           "set_grad_enabled", "is_grad_enabled", "inference_mode", "is_inference_mode_enabled",
           "once_differentiable", "graph", "functional", "detect_anomaly", "set_detect_anomaly",
           "is_anomaly_enabled"]


def _as_tuple(x):
    if x is None:
        return None
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _make_grads(outputs, grad_outputs):
    from .._api import ones_like

    grads = []
    for i, out in enumerate(outputs):
        g = grad_outputs[i] if grad_outputs is not None else None
        if g is None:
            if out.requires_grad and out.numel() != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            g = ones_like(out)
        elif tuple(g.shape) != tuple(out.shape):
            raise RuntimeError(
                f"Mismatch in shape: grad_output[{i}] has a shape of {g.shape} and output[{i}] "
                f"has a shape of {out.shape}.")
        grads.append(g)
    return grads


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    """Accumulate d(tensors)/d(leaf) into every leaf's ``.grad``."""
    tensors = _as_tuple(tensors)
    grad_tensors = _as_tuple(grad_tensors)
    if retain_graph is None:
        retain_graph = create_graph
    grads = _make_grads(tensors, grad_tensors)
    if inputs is not None:
        inputs = _as_tuple(inputs)
        res = run_backward(tensors, grads, retain_graph, create_graph, inputs=inputs)
        for t, g in zip(inputs, res):
            if g is not None:
                g = g.detach() if not create_graph and g.requires_grad else g
                t.grad = g if t.grad is None else t.grad + g
        return
    run_backward(tensors, grads, retain_graph, create_graph)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         only_inputs=True, allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """Return d(outputs)/d(inputs) without touching ``.grad``."""
    outputs = _as_tuple(outputs)
    inputs_t = _as_tuple(inputs)
    grad_outputs = _as_tuple(grad_outputs)
    if retain_graph is None:
        retain_graph = create_graph
    if allow_unused is None:
        allow_unused = materialize_grads
    grads = _make_grads(outputs, grad_outputs)
    res = run_backward(outputs, grads, retain_graph, create_graph, inputs=inputs_t)
    out = []
    for i, (t, g) in enumerate(zip(inputs_t, res)):
        if g is None:
            if materialize_grads:
                from .._api import zeros_like

                g = zeros_like(t)
            elif not allow_unused:
                raise RuntimeError(
                    f"The differentiated Tensor at index {i} appears to not have been used in "
                    "the graph. Set allow_unused=True if this is the desired behavior.")
        elif not create_graph and g.requires_grad:  # e.g. a grad_output passed straight through
            g = g.detach()
        out.append(g)
    return tuple(out)
