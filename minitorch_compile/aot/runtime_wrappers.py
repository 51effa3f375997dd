"""The runtime side of AOTAutograd: what runs on every call of a compiled signature
(``torch/_functorch/_aot_autograd/runtime_wrappers.py``).

A ``CompiledPair`` (``jit_compile_runtime_wrappers.create_aot_pair``) holds a compiled forward
and backward.  At run time:

* with a backward, the pair is wrapped in a generated ``autograd.Function``
  (``_runtime_function``, torch's ``CompiledFunction``): ``forward`` runs the compiled forward,
  saves exactly the saved values (tensors with ``save_for_backward``, sizes as ``ctx.symints``)
  and writes mutated inputs back; ``backward`` runs the compiled backward on them and places
  each gradient at its input;
* without one, ``_run_entry`` runs the forward and writes the mutated inputs back itself;
* then outputs that alias inputs or each other, which the graph does not return, are
  regenerated from their bases by view replay (``functional_utils.regenerate_outputs``).

Invariant: the compiled forward is functional — it never writes an input.  Input mutations
are extra forward outputs, copied into the caller's tensors (``_apply_mutations``) only after
the whole forward ran, so a forward that raises has changed nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._tensor import Tensor
from ..autograd.function import Function
from ..fx._pytree import tree_unflatten
from .functional_utils import regenerate_outputs

if TYPE_CHECKING:
    from .jit_compile_runtime_wrappers import CompiledPair


def _runtime_function(pair: CompiledPair):
    """The generated ``autograd.Function`` around a compiled forward/backward pair."""
    n_out = pair.num_outputs
    num_fwd = n_out + len(pair.mutated_inputs)

    class CompiledFunction(Function):
        @staticmethod
        def forward(ctx, *tensors):
            fw_outs = list(pair.forward(*tensors))
            outs, extra, saved = fw_outs[:n_out], fw_outs[n_out:num_fwd], fw_outs[num_fwd:]
            for j, k in pair.saved_inputs:  # the caller's tensor, so its version is checked
                saved[j] = tensors[k]
            # saved sizes (ints) come after the saved tensors, as torch's ctx.symints
            n_tensors = sum(1 for v in saved if isinstance(v, Tensor))
            ctx.save_for_backward(*saved[:n_tensors])
            ctx.symints = saved[n_tensors:]
            _apply_mutations(pair, tensors, extra)
            outs = [o.detach() if any(o is t for t in tensors) else _unsafe_view(o, tensors)
                    for o in outs]
            non_diff = [o for i, o in enumerate(outs) if isinstance(o, Tensor)
                        and i not in pair.diff_outputs]
            ctx.mark_non_differentiable(*non_diff)
            ctx.tensor_outputs = [i for i, o in enumerate(outs) if isinstance(o, Tensor)]
            return tuple(outs)

        @staticmethod
        def backward(ctx, *grad_outs):
            # one gradient per *tensor* output (non-tensor outputs get none)
            grad_of = dict(zip(ctx.tensor_outputs, grad_outs))
            tangents = [grad_of[i] for i in pair.diff_outputs]
            grads = list(pair.backward(*ctx.saved_tensors, *ctx.symints, *tangents))
            full = [None] * len(ctx.needs_input_grad)
            for g, k in zip(grads, pair.grad_inputs):
                full[k] = g
            return tuple(full)

    return CompiledFunction


def _unsafe_view(o, tensors):
    """A graph output that is a view of an intermediate (the only one: see
    ``functional_utils.py``) as a plain tensor over the same memory — torch's
    ``aten._unsafe_view`` — so an in-place op on it is not refused as a write to a view made
    inside a custom Function."""
    if not isinstance(o, Tensor) or o._base is None or any(o._base is t for t in tensors):
        return o
    return type(o)._make(o._data, o._device)


def _apply_mutations(pair, tensors, extra) -> None:
    """Write the final values of mutated inputs back into the caller's tensors."""
    if not pair.mutated_inputs:
        return
    from ..autograd.grad_mode import no_grad

    with no_grad():
        for (i, _), value in zip(pair.mutated_inputs, extra):
            tensors[i].copy_(value)


def _run_entry(entry, tensors: list):
    pair, out_spec, runtime = entry
    if runtime is None:
        outs = list(pair.forward(*tensors))
        if pair.mutated_inputs:
            _apply_mutations(pair, tensors, outs[pair.num_outputs:])
        outs = outs[:pair.num_outputs]
    else:
        outs = list(runtime.apply(*tensors))  # applies input mutations itself
    if pair.history_inputs:  # the write again, recorded: the input's history (CopyBackward)
        n = len(outs) - len(pair.history_inputs)
        for k, value in zip(pair.history_inputs, outs[n:]):
            tensors[k].copy_(value)
        outs = outs[:n]
    if pair.output_info is not None:  # after the writes: a view of an input sees them
        outs = regenerate_outputs(pair.output_info, tensors, outs, pair.symbols)
    return tree_unflatten(outs, out_spec)
