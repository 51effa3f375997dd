"""Dispatch and compile one input signature: the joint trace, functionalization, the
partition and the two compilers (``torch/_functorch/_aot_autograd/jit_compile_runtime_wrappers.py``:
``aot_dispatch_autograd`` / ``aot_dispatch_base``, with the joint function of
``traced_function_transforms.py``: ``create_joint``).

``create_aot_pair(flat_fn, flat_args, ...)`` is everything ``aot_function`` does on a cache
miss (the numbered steps of ``aot_autograd.py``'s docstring) and returns a ``CompiledPair``:

1. a forward-only trace — the output metadata (which outputs are differentiable), and, when
   no input requires grad, the whole artifact (an inference graph, no backward);
2. the joint trace ``(primals, tangents) -> (outputs, grads)``, forward nodes tagged;
3. ``functionalize``: mutated inputs become extra forward outputs, moved before the grads;
4. ``partition_fn`` and the two compilers.

Invariants: the graphs are traced on fake tensors (nothing is computed); an input that is
mutated and also passed a second time is refused (``AOTUnsupported``), never compiled wrong;
an input with history that the program writes in place is traced on a clone, and its final
value copied back under autograd at run time (``history_inputs``), as torch's
``create_joint`` clones mutated inputs.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass, field

from .. import _dispatch
from .._tensor import Tensor
from ..dynamo.symbolic_shapes import hint_int, is_symbolic
from ..fx import make_fx
from ..fx.graph_module import GraphModule
from ..report.trace import trace_event
from .dynamic import _guards, _symbolic_inputs, guards_hold
from .functionalize import functionalize
from .partitioners import FORWARD_TAG


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
    # dynamic shapes: symbol -> (tensor position, dim), and the guards the trace relied on
    symbols: dict = field(default_factory=dict)
    guards: list = field(default_factory=list)
    _check: object = None

    def guards_hold(self, tensors) -> bool:
        """Do the symbolic trace's guards hold for these inputs' sizes?"""
        return guards_hold(self, tensors)


def create_aot_pair(flat_fn, flat_args, fw_compiler, bw_compiler, partition_fn,
                    decompositions, dynamic: list | None = None) -> CompiledPair:
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
    #
    # An input with history (not a leaf) that requires grad may be written in place, which
    # the trace's inputs — leaves — may not: as torch's ``create_joint`` does for mutated
    # inputs, the program is traced on a clone of it (``_fresh_inputs``); a clone that was
    # written is such a history output, and the others are traced again without the clone.
    # Clones are made only once a trace without them hit the leaf error, so a program that
    # writes no input is traced once, as before.
    history: list = []
    candidates = [k for k, t in enumerate(tensors)
                  if needs_grad and t.requires_grad and t._grad_fn is not None]
    fresh: list = []
    written: list = []  # the clones of the last trace, to read their versions

    def _fresh_inputs(primals):
        written[:] = [(k, primals[k].clone()) for k in fresh]
        args = list(primals)
        for k, clone in written:
            args[k] = clone
        return args

    def fw_only(*primals):
        args = _fresh_inputs(primals)
        return list(flat_fn(*with_tensors(args))) + [args[k] for k in history]

    env = fake_mode = None
    trace_inputs = tensors
    if dynamic and any(dynamic):  # trace the dynamic dims as symbols (module docstring)
        env, fake_mode, trace_inputs = _symbolic_inputs(tensors, dynamic)

    def trace(fn, *inputs):
        if env is None:
            return _flat_graph(make_fx(fn, decompositions, "fake")(*inputs))
        return _flat_graph(make_fx(fn, decompositions, "symbolic", shape_env=env)(*inputs))

    try:
        fw_graph = trace(fw_only, *trace_inputs)
    except RuntimeError as e:
        if not candidates or "leaf Variable that requires grad" not in str(e):
            raise
        fresh[:] = candidates
        fw_graph = trace(fw_only, *trace_inputs)
    if needs_grad:
        placeholders = [n for n in fw_graph.graph.nodes if n.op == "placeholder"]
        history.extend(k for k, p in enumerate(placeholders)
                       if getattr(p.meta.get("val"), "_grad_fn", None) is not None)
        history.extend(k for k, clone in written if clone._version > 0)
        unwritten = any(clone._version == 0 for _, clone in written)
        fresh[:] = [k for k, clone in written if clone._version > 0]
        if history or unwritten:
            fw_graph = trace(fw_only, *trace_inputs)
    symbols = {} if env is None else {name: (int(src), dim)
                                      for name, (src, dim, _) in env.symbols.items()}
    out_vals = [n for n in fw_graph.graph.output_node().args[0]]
    num_outputs = len(out_vals)
    if not needs_grad:
        mutated = _no_aliased_mutation(functionalize(fw_graph), aliased)
        trace_event("aot_joint", joint=None, partition=None, fw_graph=fw_graph)
        compiled = fw_compiler(fw_graph, tensors)
        return CompiledPair(compiled, None, num_outputs, [], [], mutated, fw_graph=fw_graph,
                            symbols=symbols, guards=_guards(env))

    out_meta = [o.meta.get("val") if hasattr(o, "meta") else o for o in out_vals]
    diff_outputs = [i for i, v in enumerate(out_meta) if isinstance(v, Tensor)
                    and v.dtype.is_floating_point and v.requires_grad]
    grad_inputs = [k for k, t in enumerate(tensors) if t.requires_grad]
    from .._api import zeros

    tangents = [zeros(tuple(hint_int(s) for s in out_meta[i].shape), dtype=out_meta[i].dtype)
                .to(out_meta[i].device) for i in diff_outputs]  # a host copy: no kernel
    if env is not None:  # a tangent has its output's symbolic sizes
        tangents = [fake_mode.from_tensor(t, {d: s for d, s in enumerate(out_meta[i].shape)
                                              if is_symbolic(s)})
                    for t, i in zip(tangents, diff_outputs)]

    unused: list = []  # inputs requiring grad that no output depends on

    def joint(primals, tangents):
        args = _fresh_inputs(primals)
        outs = list(flat_fn(*with_tensors(args))) + [args[k] for k in history]
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

    joint_gm = trace(joint, trace_inputs, tangents)
    for n in joint_gm.graph.nodes:  # make_fx adds getitems of multi-output ops on first use
        if n.target is operator.getitem and n.args[0].meta.get("partitioner_tag"):
            n.meta["partitioner_tag"] = n.args[0].meta["partitioner_tag"]
        # a size computed from the inputs belongs to the forward, wherever it was first used:
        # the backward receives it as an int instead of the tensor it was read from
        if is_symbolic(n.meta.get("val")) and n.op == "call_function" and all(
                a.op == "placeholder" and a.name.startswith("primals") or
                a.meta.get("partitioner_tag") == FORWARD_TAG for a in n.all_input_nodes):
            n.meta["partitioner_tag"] = FORWARD_TAG
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
                        mutated, partition, fw_graph, joint_gm, history, symbols, _guards(env))


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
