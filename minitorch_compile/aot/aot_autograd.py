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
   saved values; ``backward`` runs the compiled backward on them (``runtime_wrappers.py``).

With no input requiring grad (or grad mode off), only the forward is traced and compiled.
Later calls with the same metadata reuse the compiled pair. This file holds the API and the
cache (which call reuses which pair); steps 1-3 and the compilers run in
``jit_compile_runtime_wrappers.create_aot_pair``, step 4 in ``runtime_wrappers.py``.

**Dynamic shapes.** When Dynamo hands over a graph whose inputs have symbolic sizes
(``aot_module_simplified`` reads them from the placeholders), those dims are traced
*symbolically* (``make_fx(tracing_mode="symbolic")``): the joint, forward and backward graphs
hold ``s0`` and compute sizes with ``sym_size`` nodes, and the cache key of a dynamic dim is
its symbol — which dims share a value (duck sizing) — not the value, so one trace serves every
size.  A size the backward needs is saved by the forward as an int (after the saved tensors,
as torch's ``ctx.symints``) and is an input of the backward graph.  Decisions the trace took on
sizes (``s0 == s1``, a size specialised to its value) are guards *checked by the compiled
artifact* on each call: a call they reject is traced again, as a new entry.  Inputs it cannot
treat symbolically (a dynamic dim of size 0 or 1, a non-contiguous input) are keyed by their
concrete sizes instead — specialised, never wrong.
"""

from __future__ import annotations

from .. import _dispatch
from .._tensor import Tensor
from ..dynamo.symbolic_shapes import is_symbolic
from ..fx._pytree import tree_flatten, tree_unflatten
from .dynamic import _log_specialised, _symbolic_key, sizes_read_from_inputs
from .jit_compile_runtime_wrappers import (  # noqa: F401 - re-exported: tests patch them here
    AOTUnsupported,
    CompiledPair,
    _flat_graph,
    create_aot_pair,
)
from .partitioners import default_partition
from .runtime_wrappers import _run_entry, _runtime_function

counters: dict = {"total": 0}  # traces made by every aot_function (torch: counters["aot_autograd"])


def _tensor_facts(a: Tensor) -> tuple:
    """What a trace assumed of one tensor input: its sizes, strides (numpy's, in bytes: with
    the dtype, the same fact as element strides), dtype, device and requires_grad.  The single
    definition of a tensor's part of the cache keys (``_metadata_key``, ``_fast_key``)."""
    d = a._data
    # requires_grad (the property): a view whose base was written may have gained history
    # and whether it has history (then the program may write it in place: ``_fresh_inputs``)
    return (d.shape if a._sym_shape is None else a._sym_shape, d.strides, d.dtype, a._device,
            a.requires_grad, a.requires_grad and a._grad_fn is not None)


def _metadata_key(flat_args) -> tuple:
    """The cache key of any call: grad mode, then per argument a tensor's facts and the first
    position it was passed at (which inputs are the same tensor), or a constant's repr."""
    key = [_dispatch.state.grad_enabled]
    first_seen: dict = {}
    for i, a in enumerate(flat_args):
        if isinstance(a, Tensor):
            key.append(("T", _tensor_facts(a), first_seen.setdefault(id(a), i)))
        else:
            key.append(("C", type(a).__name__, repr(a)))
    return tuple(key)


def aot_function(fn, fw_compiler, bw_compiler=None, partition_fn=default_partition,
                 decompositions=None, num_params_buffers: int = 0,
                 keep_inference_input_mutations=False, inference_compiler=None,
                 dynamic_dims: list | None = None):
    """Compile ``fn``'s forward and backward ahead of time (torch's signature).

    ``dynamic_dims`` (one tuple of dims per tensor argument, in order) names the dims to trace
    symbolically; ``aot_module_simplified`` takes them from Dynamo's graph."""
    bw_compiler = bw_compiler or fw_compiler
    cache: dict = {}
    sym_cache: dict = {}  # symbolic key -> entries, each valid where its guards hold
    unsymbolic: set = set()  # symbolic keys whose trace failed: keyed concretely instead

    def returned(*args, **kwargs):
        fast = None if kwargs else _fast_key(args)
        entry = cache.get(fast) if fast is not None else None
        if entry is not None:  # the common call: flat tensors seen before
            return _run_entry(entry, list(args))
        flat_args, in_spec = tree_flatten((args, kwargs))
        tensors = [a for a in flat_args if isinstance(a, Tensor)]
        dynamic = dynamic_dims if dynamic_dims and len(dynamic_dims) == len(tensors) else None
        skey = _symbolic_key(flat_args, dynamic) if dynamic else None
        if skey is not None and (in_spec, skey) in unsymbolic:
            skey = None
        if skey is not None:
            key = (in_spec, skey)
            entry = next((e for e in sym_cache.get(key, ()) if e[0].guards_hold(tensors)),
                         None)
        else:
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

            pair = None
            if skey is not None:
                try:
                    pair = create_aot_pair(flat_fn, flat_args, fw_compiler, bw_compiler,
                                           partition_fn, decompositions, dynamic)
                except AOTUnsupported:
                    raise
                except Exception as e:  # noqa: BLE001 - not symbolic yet: specialise
                    _log_specialised(e)
                    unsymbolic.add(key)
                    skey, key = None, (in_spec, _metadata_key(flat_args))
                    out_spec_box.clear()
                    entry = cache.get(key)
            if pair is None and entry is None:
                try:
                    pair = create_aot_pair(flat_fn, flat_args, fw_compiler, bw_compiler,
                                           partition_fn, decompositions, None)
                except AOTUnsupported:
                    raise
                except NotImplementedError as e:  # while tracing on fake tensors: nothing ran
                    raise AOTUnsupported(f"aot_function: {e}") from e
        if entry is None:
            entry = (pair, out_spec_box[0],
                     _runtime_function(pair) if pair.backward else None)
            if skey is not None:
                sym_cache.setdefault(key, []).append(entry)
            else:
                cache[key] = entry
            returned.last_pair = pair
            returned.compile_count += 1
            counters["total"] += 1
        if fast is not None:  # these exact sizes passed the guards: the fast path may serve
            cache[fast] = entry
        return _run_entry(entry, tensors)

    returned.last_pair = None
    returned.compile_count = 0  # traces made (a dynamic graph: one for every size)
    return returned


def _fast_key(args: tuple):
    """The cache key of a call with only distinct, plain tensors (no pytree work), or None:
    ``_metadata_key``'s facts without the pytree spec and the first-seen positions, which
    such a call does not need."""
    key = ["fast", _dispatch.state.grad_enabled]
    for a in args:
        if not isinstance(a, Tensor):
            return None
        key.append(_tensor_facts(a))
    if len({id(a) for a in args}) != len(args):
        return None
    return tuple(key)


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

    original = gm
    gm, dropped = sizes_read_from_inputs(gm)  # s0 read from l_x_, not passed (dynamic.py)
    nodes = gm.graph.nodes if hasattr(gm, "graph") else ()  # any callable may come here
    dynamic = [tuple(d for d, s in enumerate(v.shape) if is_symbolic(s))
               for v in (n.meta.get("example_value") for n in nodes
                         if n.op == "placeholder") if isinstance(v, Tensor)]
    numbers = number_outputs(gm) if has_symbolic_numbers(gm) else []  # see scalar_inputs.py
    traced = ScalarsAsTensors(gm) if has_symbolic_numbers(gm) else gm
    compiled = aot_function(traced, fw_compiler, bw_compiler, partition_fn, decompositions,
                            dynamic_dims=dynamic if any(dynamic) else None)
    fallback = []

    def run(*args):
        if fallback:
            return original(*args)
        if dropped:
            args = tuple(a for i, a in enumerate(args) if i not in dropped)
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
            return gm(*args)  # (the same graph, the sizes read from the tensors)

    run.compiled = compiled
    return run
