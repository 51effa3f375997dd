"""Higher-level differentiation (``torch/autograd/functional.py``): ``vjp``, ``jacobian``,
``hessian`` — each built from ``autograd.grad`` on a fresh, grad-requiring copy of the inputs.

``jacobian(f, x)[i..., j...] = d f(x)[i...] / d x[j...]``: one reverse pass per output element
(torch's default ``strategy="reverse-mode"``, without ``vectorize``); ``hessian(f, x)`` is the
jacobian of ``x -> grad(f(x), x, create_graph=True)``. A tuple of inputs (or outputs) gives a
tuple of blocks, as in torch.
"""

from __future__ import annotations

from .. import _api
from .grad_mode import enable_grad


def _prepare(inputs, create_graph: bool):
    is_tuple = isinstance(inputs, tuple)
    xs = inputs if is_tuple else (inputs,)
    return is_tuple, tuple(x.detach().requires_grad_(True) if not create_graph or
                           not x.requires_grad else x.view_as(x) for x in xs)


def _grads(out, xs, grad_out, create_graph: bool):
    from . import grad

    if not out.requires_grad:  # no path from these inputs: torch's zeros (strict=False)
        return tuple(_api.zeros_like(x) for x in xs)
    gs = grad(out, xs, grad_out, retain_graph=True, create_graph=create_graph,
              allow_unused=True)
    return tuple(_api.zeros_like(x) if g is None else g for g, x in zip(gs, xs))


def vjp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """``(func(inputs), v^T J)``."""
    is_tuple, xs = _prepare(inputs, create_graph)
    with enable_grad():
        out = func(*xs)
        if v is None and out.numel() != 1:
            raise RuntimeError("The vector v can only be None if the user-provided function "
                               "returns a single Tensor with a single element.")
        gs = _grads(out, xs, v if v is not None else _api.ones_like(out), create_graph)
    if not create_graph:
        out, gs = out.detach(), tuple(g.detach() for g in gs)
    return out, gs if is_tuple else gs[0]


def jacobian(func, inputs, create_graph: bool = False, strict: bool = False,
             vectorize: bool = False, strategy: str = "reverse-mode"):
    """The Jacobian of ``func`` at ``inputs``, block by block: ``out.shape + x.shape``."""
    is_tuple, xs = _prepare(inputs, create_graph)
    with enable_grad():
        outs = func(*xs)
        out_tuple = isinstance(outs, tuple)
        blocks = []
        for out in (outs if out_tuple else (outs,)):
            flat = out.reshape(-1)
            rows = [_grads(flat[i], xs, None, create_graph) for i in range(flat.numel())]
            per_input = []
            for j, x in enumerate(xs):
                if rows:
                    block = _api.stack([r[j] for r in rows]).reshape(tuple(out.shape)
                                                                     + tuple(x.shape))
                else:
                    block = _api.zeros(tuple(out.shape) + tuple(x.shape), dtype=x.dtype)
                per_input.append(block if create_graph else block.detach())
            blocks.append(tuple(per_input) if is_tuple else per_input[0])
    return tuple(blocks) if out_tuple else blocks[0]


def hessian(func, inputs, create_graph: bool = False, strict: bool = False,
            vectorize: bool = False, outer_jacobian_strategy: str = "reverse-mode"):
    """The Hessian of a scalar ``func``: the jacobian of its gradient."""
    is_tuple = isinstance(inputs, tuple)

    def gradient(*xs):
        out = func(*xs)
        if out.numel() != 1:
            raise RuntimeError("The function given to hessian should return a single element "
                               "Tensor")
        gs = _grads(out.reshape(()), xs, None, True)
        return gs if is_tuple else gs[0]

    return jacobian(gradient, inputs, create_graph=create_graph)
