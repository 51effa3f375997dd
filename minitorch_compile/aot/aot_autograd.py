"""AOTAutograd: trace forward *and* backward ahead of time (``torch/_functorch/aot_autograd.py``).

``aot_function(fn, fw_compiler, bw_compiler, partition_fn)`` returns a function that, on its
first call with given input metadata (shapes, dtypes, requires_grad), does:

1. **trace the joint graph** with ``make_fx`` on fake tensors::

       def joint(primals, tangents):
           outs = fn(*primals)
           grads = autograd.grad(outs, primals that require grad, tangents)
           return outs, grads

   Nodes traced before ``autograd.grad`` are tagged as forward (the default partitioner uses
   the tags); placeholders are ``primals_1..`` and ``tangents_1..``.  An input no output
   depends on gets no gradient (``None``, as in eager); a tensor passed twice is traced as two
   inputs, whose gradients the engine adds up at run time.
2. **functionalize** it (in-place ops become out-of-place; mutated inputs become extra outputs);
3. **partition** it into a forward graph ``primals -> outputs + saved`` and a backward graph
   ``saved + tangents -> grads`` (``partitioners.py``), and compile each with its compiler;
4. wrap the two in a generated ``autograd.Function`` — the tutorial's
   ``AOTTransformedFunction``: ``forward`` runs the compiled forward and saves exactly the
   saved values; ``backward`` runs the compiled backward on them.

With no input requiring grad (or grad mode off), only the forward is traced and compiled.
Later calls with the same metadata reuse the compiled pair.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass, field

from .. import _dispatch
from .._tensor import Tensor
from ..autograd.function import Function
from ..fx import make_fx
from ..fx._pytree import tree_flatten, tree_unflatten
from ..fx.graph_module import GraphModule
from ..report.trace import trace_event
from .functionalize import functionalize
from .partitioners import FORWARD_TAG, default_partition


def _flat_graph(gm: GraphModule) -> GraphModule:
    """Drop make_fx's pytree wrapping: positional tensor inputs, a flat tuple of outputs."""
    gm.graph._pytree_info = None
    gm.recompile()
    return gm


def _current_graph():
    from ..fx.proxy_tensor import ProxyTorchDispatchMode

    for mode in reversed(_dispatch.state.modes):
        if isinstance(mode, ProxyTorchDispatchMode):
            return mode.tracer.graph
    return None


@dataclass
class CompiledPair:
    """What one input signature compiles to."""

    forward: object
    backward: object | None
    num_outputs: int
    diff_outputs: list  # indices of outputs that get a tangent
    grad_inputs: list  # indices of inputs that receive a gradient
    mutated_inputs: list  # (input index, forward output index)
    partition: object = None
    fw_graph: GraphModule | None = None
    joint_graph: GraphModule | None = None
    # inputs an in-place write gave autograd history (``buf[0] = x.sum()``): their final
    # values are extra (last) outputs, copied into the inputs *with* history after the call
    history_inputs: list = field(default_factory=list)


def _metadata_key(flat_args) -> tuple:
    key = [_dispatch.state.grad_enabled]
    first_seen: dict = {}  # which inputs are the same tensor
    for i, a in enumerate(flat_args):
        if isinstance(a, Tensor):
            key.append(("T", tuple(a.shape), a.dtype.name, str(a.device), a.requires_grad,
                        a.stride(), first_seen.setdefault(id(a), i)))
        else:
            key.append(("C", type(a).__name__, repr(a)))
    return tuple(key)


def create_aot_pair(flat_fn, flat_args, fw_compiler, bw_compiler, partition_fn,
                    decompositions) -> CompiledPair:
    tensor_pos = [i for i, a in enumerate(flat_args) if isinstance(a, Tensor)]
    needs_grad = _dispatch.state.grad_enabled and any(
        flat_args[i].requires_grad for i in tensor_pos)

    def with_tensors(tensors):
        args = list(flat_args)
        for i, t in zip(tensor_pos, tensors):
            args[i] = t
        return args

    tensors = [flat_args[i] for i in tensor_pos]
    # the same tensor passed twice is traced as two inputs, so each position gets its own
    # gradient; at run time the engine sums them into the one tensor, as eager does
    aliased = [k for k, t in enumerate(tensors) if sum(t is u for u in tensors) > 1]
    for k, t in enumerate(tensors):
        if any(t is u for u in tensors[:k]):
            tensors[k] = t.detach().requires_grad_(t.requires_grad)

    # forward-only trace: output metadata, and the inference graph.  An input that the program
    # writes with values requiring grad gets autograd history (CopySlices) in eager mode: its
    # final value becomes an extra output, so it can be copied back with that history (what
    # torch's runtime wrapper does); the trace is redone once to add those outputs.
    history: list = []

    def fw_only(*primals):
        return list(flat_fn(*with_tensors(primals))) + [primals[k] for k in history]

    fw_graph = _flat_graph(make_fx(fw_only, decompositions, "fake")(*tensors))
    if needs_grad:
        placeholders = [n for n in fw_graph.graph.nodes if n.op == "placeholder"]
        history.extend(k for k, p in enumerate(placeholders)
                       if getattr(p.meta.get("val"), "_grad_fn", None) is not None)
        if history:
            fw_graph = _flat_graph(make_fx(fw_only, decompositions, "fake")(*tensors))
    out_vals = [n for n in fw_graph.graph.output_node().args[0]]
    num_outputs = len(out_vals)
    if not needs_grad:
        mutated = _no_aliased_mutation(functionalize(fw_graph), aliased)
        trace_event("aot_joint", joint=None, partition=None, fw_graph=fw_graph)
        compiled = fw_compiler(fw_graph, tensors)
        return CompiledPair(compiled, None, num_outputs, [], [], mutated, fw_graph=fw_graph)

    out_meta = [o.meta.get("val") if hasattr(o, "meta") else o for o in out_vals]
    diff_outputs = [i for i, v in enumerate(out_meta) if isinstance(v, Tensor)
                    and v.dtype.is_floating_point and v.requires_grad]
    grad_inputs = [k for k, t in enumerate(tensors) if t.requires_grad]
    from .._api import zeros

    tangents = [zeros(tuple(out_meta[i].shape), dtype=out_meta[i].dtype)
                .to(out_meta[i].device) for i in diff_outputs]  # a host copy: no kernel

    unused: list = []  # inputs requiring grad that no output depends on

    def joint(primals, tangents):
        outs = list(flat_fn(*with_tensors(primals))) + [primals[k] for k in history]
        graph = _current_graph()
        for n in graph.nodes:  # every op traced so far is the forward
            if n.op != "placeholder":
                n.meta["partitioner_tag"] = FORWARD_TAG
        from .. import autograd

        grads = autograd.grad([outs[i] for i in diff_outputs],
                              [primals[k] for k in grad_inputs], tangents, allow_unused=True)
        # an unused input gets no gradient at all, as in eager (its .grad stays None)
        unused.extend(k for k, g in zip(grad_inputs, grads) if g is None)
        return outs, [g for g in grads if g is not None]

    joint_gm = _flat_graph(make_fx(joint, decompositions, "fake")(tensors, tangents))
    for n in joint_gm.graph.nodes:  # make_fx adds getitems of multi-output ops on first use
        if n.target is operator.getitem and n.args[0].meta.get("partitioner_tag"):
            n.meta["partitioner_tag"] = n.args[0].meta["partitioner_tag"]
    grad_inputs = [k for k in grad_inputs if k not in unused]
    mutated = _no_aliased_mutation(functionalize(joint_gm), aliased)
    num_fwd = num_outputs + len(mutated)
    if mutated:  # the extra outputs were appended after the grads: move them before
        outs = list(joint_gm.graph.output_node().args[0])
        n_grads = len(grad_inputs)
        extra = outs[num_outputs + n_grads:]
        reordered = outs[:num_outputs] + extra + outs[num_outputs:num_outputs + n_grads]
        joint_gm.graph.output_node().args = (tuple(reordered),)
        mutated = [(i, num_outputs + j) for j, (i, _) in enumerate(mutated)]
        joint_gm.recompile()
    partition = partition_fn(joint_gm, [tensors, tangents], num_fwd_outputs=num_fwd)
    fw_module, bw_module = partition
    trace_event("aot_joint", joint=joint_gm, partition=partition, fw_graph=fw_graph)
    compiled_fw = fw_compiler(fw_module, tensors)
    bw_examples = [n.meta.get("val") for n in bw_module.graph.nodes if n.op == "placeholder"]
    compiled_bw = bw_compiler(bw_module, bw_examples)
    return CompiledPair(compiled_fw, compiled_bw, num_outputs, diff_outputs, grad_inputs,
                        mutated, partition, fw_graph, joint_gm, history)


class AOTUnsupported(NotImplementedError):
    """A program AOTAutograd cannot compile faithfully; ``aot_module_simplified`` (Dynamo's
    backends) then runs the graph eagerly instead, with a warning."""


def _no_aliased_mutation(mutated: list, aliased: list) -> list:
    """Refuse a mutated input that is passed twice: the graph treats the two as different."""
    for i, _ in mutated:
        if i in aliased:
            raise AOTUnsupported(
                f"aot_function: tensor input {i} is mutated in place and also passed as "
                "another input; mutations of aliased inputs are not supported")
    return mutated


def _runtime_function(pair: CompiledPair):
    """The generated ``autograd.Function`` around a compiled forward/backward pair."""
    n_out = pair.num_outputs
    num_fwd = n_out + len(pair.mutated_inputs)

    class CompiledFunction(Function):
        @staticmethod
        def forward(ctx, *tensors):
            fw_outs = list(pair.forward(*tensors))
            outs, extra, saved = fw_outs[:n_out], fw_outs[n_out:num_fwd], fw_outs[num_fwd:]
            ctx.save_for_backward(*saved)
            _apply_mutations(pair, tensors, extra)
            outs = [o.detach() if any(o is t for t in tensors) else o for o in outs]
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
            grads = list(pair.backward(*ctx.saved_tensors, *tangents))
            full = [None] * len(ctx.needs_input_grad)
            for g, k in zip(grads, pair.grad_inputs):
                full[k] = g
            return tuple(full)

    return CompiledFunction


def _apply_mutations(pair, tensors, extra) -> None:
    """Write the final values of mutated inputs back into the caller's tensors."""
    if not pair.mutated_inputs:
        return
    from ..autograd.grad_mode import no_grad

    with no_grad():
        for (i, _), value in zip(pair.mutated_inputs, extra):
            tensors[i].copy_(value)


def aot_function(fn, fw_compiler, bw_compiler=None, partition_fn=default_partition,
                 decompositions=None, num_params_buffers: int = 0,
                 keep_inference_input_mutations=False, inference_compiler=None):
    """Compile ``fn``'s forward and backward ahead of time (torch's signature)."""
    bw_compiler = bw_compiler or fw_compiler
    cache: dict = {}

    def returned(*args, **kwargs):
        fast = None if kwargs else _fast_key(args)
        entry = cache.get(fast) if fast is not None else None
        if entry is not None:  # the common call: flat tensors seen before
            return _run_entry(entry, list(args))
        flat_args, in_spec = tree_flatten((args, kwargs))
        key = (in_spec, _metadata_key(flat_args))
        entry = cache.get(key)
        if entry is None:
            out_spec_box = []

            def flat_fn(*flat):
                a, k = tree_unflatten(list(flat), in_spec)
                out = fn(*a, **k)
                leaves, spec = tree_flatten(out)
                if not out_spec_box:
                    out_spec_box.append(spec)
                return leaves

            pair = create_aot_pair(flat_fn, flat_args, fw_compiler, bw_compiler, partition_fn,
                                   decompositions)
            entry = cache[key] = (pair, out_spec_box[0],
                                  _runtime_function(pair) if pair.backward else None)
            returned.last_pair = pair
        if fast is not None:
            cache[fast] = entry
        return _run_entry(entry, [a for a in flat_args if isinstance(a, Tensor)])

    returned.last_pair = None
    return returned


def _fast_key(args: tuple):
    """The cache key of a call with only distinct, plain tensors (no pytree work), or None.

    Same facts as ``_metadata_key``: grad mode, and per tensor its shape, strides, dtype,
    device and requires_grad."""
    key = ["fast", _dispatch.state.grad_enabled]
    for a in args:
        if not isinstance(a, Tensor):
            return None
        d = a._data
        # requires_grad (the property): a view whose base was written may have gained history
        key.append((d.shape, d.strides, d.dtype, a._device, a.requires_grad))
    if len({id(a) for a in args}) != len(args):
        return None
    return tuple(key)


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
    return tree_unflatten(outs, out_spec)


def aot_module(mod, fw_compiler, bw_compiler=None, partition_fn=default_partition,
               decompositions=None):
    """``aot_function`` over a module's forward; parameters and buffers become inputs."""
    from ..nn import Module

    names = [n for n, _ in mod.named_parameters()] + [n for n, _ in mod.named_buffers()]

    def functional_call(params_and_buffers, *args, **kwargs):
        originals = {}
        for name, value in zip(names, params_and_buffers):
            owner, attr = _owner(mod, name)
            store = owner._parameters if attr in owner._parameters else owner._buffers
            originals[(id(owner), attr)] = (store, store[attr])
            store[attr] = value
        try:
            return mod(*args, **kwargs)
        finally:
            for (_, attr), (store, value) in originals.items():
                store[attr] = value

    compiled = aot_function(functional_call, fw_compiler, bw_compiler, partition_fn,
                            decompositions)

    class AOTModule(Module):
        def __init__(self):
            super().__init__()
            self.orig_module = mod

        def forward(self, *args, **kwargs):
            values = [dict(mod.named_parameters())[n] if n in dict(mod.named_parameters())
                      else dict(mod.named_buffers())[n] for n in names]
            return compiled(values, *args, **kwargs)

    return AOTModule()


def _owner(mod, dotted: str):
    *path, attr = dotted.split(".")
    for p in path:
        mod = getattr(mod, p)
    return mod, attr


def aot_module_simplified(gm, example_inputs, fw_compiler, bw_compiler=None,
                          partition_fn=default_partition, decompositions=None,
                          eager_fallback: bool = True):
    """For Dynamo backends: ``gm`` takes flat tensors and returns a tuple.  A graph AOTAutograd
    cannot trace runs eagerly with a warning — or, with ``eager_fallback=False`` (the backend
    compiles under ``fullgraph=True``), raises ``AOTUnsupported``."""
    from .scalar_inputs import ScalarsAsTensors, has_symbolic_numbers, number_outputs

    numbers = number_outputs(gm) if has_symbolic_numbers(gm) else []  # see scalar_inputs.py
    traced = ScalarsAsTensors(gm) if has_symbolic_numbers(gm) else gm
    compiled = aot_function(traced, fw_compiler, bw_compiler, partition_fn, decompositions)
    fallback = []

    def run(*args):
        if fallback:
            return gm(*args)
        try:
            out = compiled(*args)
            if numbers:  # the graph's number outputs come back as 0-d tensors
                out = tuple(o.item() if i in numbers else o for i, o in enumerate(out))
            return out
        except AOTUnsupported as e:  # raised while tracing on fake tensors: nothing ran yet
            if not eager_fallback:
                raise
            from ..dynamo._logging import warn_user
            from ..dynamo.exc import CompilerFallbackWarning

            warn_user(f"AOTAutograd: {e}; running this graph eagerly", CompilerFallbackWarning)
            fallback.append(e)
            return gm(*args)

    run.compiled = compiled
    return run
