"""Dynamic shapes in AOTAutograd: tracing Dynamo's symbolic dims once for every size.

torch's AOTAutograd receives fake tensors whose sizes are ``SymInt``s of Dynamo's ``ShapeEnv``
and traces with ``make_fx(tracing_mode="symbolic")`` (``torch/_functorch/aot_autograd.py``,
``torch/fx/experimental/proxy_tensor.py``); its guards join Dynamo's.  Here AOTAutograd keeps
its own ``ShapeEnv`` per trace and the compiled artifact checks the guards itself:

* ``_symbolic_inputs``: fake tensors whose dynamic dims are symbols (duck sized: equal sizes
  share one symbol, as in Dynamo);
* ``_symbolic_key``: the cache key of a call — a dynamic dim contributes *which* earlier
  dynamic dim has its value, never the value; a dim of size 0 or 1, or a non-contiguous input,
  gives ``None`` (keyed by concrete sizes instead: specialised, never wrong);
* ``guards_hold``: the decisions the trace took on sizes (``s0 == s1``, a size used as a plain
  int) evaluated on a call's sizes — a call they reject is traced again, as a new entry;
* ``_log_specialised``: a symbolic trace that fails is retried with concrete sizes, and says
  why under ``MTC_LOGS=dynamic``.
"""

from __future__ import annotations

from .. import _dispatch
from .._tensor import Tensor


def _symbolic_inputs(tensors: list, dynamic: list):
    """Fake tensors whose ``dynamic`` dims are symbols of one ShapeEnv (duck sized)."""
    from ..dynamo.symbolic_shapes import ShapeEnv
    from ..fx import FakeTensorMode

    env, mode = ShapeEnv(), FakeTensorMode()
    fakes = [mode.from_tensor(t, {d: env.create_symbol(str(k), d, t._data.shape[d])
                                  for d in dims})
             for k, (t, dims) in enumerate(zip(tensors, dynamic))]
    return env, mode, fakes


def guards_hold(pair, tensors) -> bool:
    """Do ``pair``'s trace guards hold for these inputs' sizes?"""
    if not pair.guards:
        return True
    if pair._check is None:
        params = ", ".join(pair.symbols) or "_"
        pair._check = eval(f"lambda {params}: "  # our own text: symbols s0, s1, ...
                           f"{' and '.join(f'({g})' for g in pair.guards)}",
                           {"__builtins__": {}})
    try:
        return bool(pair._check(*[tensors[k]._data.shape[d]
                                  for k, d in pair.symbols.values()]))
    except ArithmeticError:  # a guard divides by a size expression that is 0 here
        return False


def _guards(env) -> list:
    return [] if env is None else list(env.guards)


def _log_specialised(e: Exception) -> None:
    from ..dynamo._logging import get_logger

    get_logger("dynamic").info("AOTAutograd: cannot trace symbolically, specialising to the "
                               "input sizes: %s: %s", type(e).__name__, e)


def _symbolic_key(flat_args, dynamic: list):
    """The key of a call whose ``dynamic`` dims are symbols, or None (key it concretely).

    A dynamic dim contributes which earlier dynamic dim has the same value (duck sizing: equal
    sizes are one symbol), never its value; a dim of size 0 or 1, or a non-contiguous tensor
    (its strides would be symbolic too), falls back to the concrete key."""
    key: list = [_dispatch.state.grad_enabled]
    first_of: dict = {}  # value -> first dynamic dim with it
    first_seen: dict = {}
    k = 0
    for i, a in enumerate(flat_args):
        if not isinstance(a, Tensor):
            key.append(("C", type(a).__name__, repr(a)))
            continue
        dims, shape = dynamic[k], a._data.shape
        if dims and (not a._data.flags.c_contiguous or any(shape[d] < 2 for d in dims)):
            return None
        sizes = tuple(("s", first_of.setdefault(shape[d], (k, d))) if d in dims else shape[d]
                      for d in range(len(shape)))
        key.append(("T", sizes, a.dtype.name, str(a.device), a.requires_grad,
                    a.stride() if not dims else "contiguous", first_seen.setdefault(id(a), i)))
        k += 1
    return tuple(key)


def sizes_read_from_inputs(gm):
    """Dynamo passes each size symbol as a graph input of its own (``s0`` before ``l_x_``, as
    torch's graphs take it).  AOTAutograd keys a number input by its value, so a graph taking
    ``s0`` would be traced again for every size; it reads the symbol from the tensor instead:
    ``(graph module, positions of the dropped inputs)`` — the graph with each size placeholder
    replaced by ``l_x_.size(d)``, and which call arguments to drop (unchanged when there is
    none).  A symbol no tensor input carries (an int argument, or the size of a tensor the graph
    does not take) stays an input."""
    from ..dynamo.symbolic_shapes import is_symbolic
    from ..fx import Graph, GraphModule

    graph = getattr(gm, "graph", None)
    if graph is None:
        return gm, ()
    holders = [n for n in graph.nodes if n.op == "placeholder"]
    dims: dict = {}  # symbol -> (tensor placeholder, dim): the first tensor sized by it
    for n in holders:
        v = n.meta.get("example_value")
        for d, s in enumerate(getattr(v, "shape", ()) if isinstance(v, Tensor) else ()):
            if is_symbolic(s):
                dims.setdefault(s.expr, (n, d))
    lifted = [k for k, n in enumerate(holders) if is_symbolic(n.meta.get("example_value"))
              and n.meta["example_value"].expr in dims]
    if not lifted:
        return gm, ()
    new, env = Graph(), {}
    dropped = [holders[k] for k in lifted]
    for n in holders:
        if n not in dropped:
            env[n] = new.node_copy(n)
    for n in dropped:
        tensor, d = dims[n.meta["example_value"].expr]
        env[n] = new.call_method("size", (env[tensor], d))
        env[n].meta["example_value"] = n.meta["example_value"]
    for n in graph.nodes:
        if n.op == "placeholder":
            continue
        if n.op == "output":
            new.output(_map(n.args[0], env)).meta = dict(n.meta)
            break
        env[n] = new.node_copy(n, lambda a: env[a])
    return GraphModule(gm, new), tuple(lifted)


def _map(value, env):
    from ..fx.node import map_arg

    return map_arg(value, lambda a: env[a])
