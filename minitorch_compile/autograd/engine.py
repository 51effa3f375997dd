"""The backward engine (``torch/csrc/autograd/engine.cpp``), in the spirit of micrograd.

The algorithm, in three steps:

1. **Discover**: walk ``next_functions`` from the roots' ``grad_fn`` and count, for every node,
   how many edges point at it (its *dependencies*).  For ``autograd.grad(outputs, inputs)``
   keep only nodes that lie on a path to an input.
2. **Run**: a node is ready when every node feeding it has run; among ready nodes the most
   recently created runs first (a heap on ``-sequence_nr``, as torch does), which makes the
   order of backward ops deterministic — ``make_fx`` records them in that order.
3. **Route**: each result of ``node.apply`` is *validated* against the forward input it belongs
   to — summed back over broadcast dimensions (``sum_to_size``) and cast to its dtype — and
   added into the input buffer of the next node.  ``AccumulateGrad`` writes leaves' ``.grad``.

Derivative formulas are ordinary ops, so they run eagerly here and are recorded by ``make_fx``;
with ``create_graph=True`` grad mode stays on and they build a graph of their own.
"""

from __future__ import annotations

import heapq

from .._dispatch import state
from .graph import AccumulateGrad, gradient_edge


def _validate(grad, meta, node, index: int):
    """Reduce a gradient to the forward tensor's shape and dtype (``validate_outputs``); a
    gradient that cannot be is torch's error naming the node that returned it."""
    shape, dtype = meta
    if len(grad.shape) != len(shape) or tuple(grad.shape) != tuple(shape):  # (lengths first:
        # no comparison of a symbolic size when the ranks differ)
        try:
            grad = grad.sum_to_size(tuple(shape))
        except RuntimeError:
            raise RuntimeError(
                f"Function {node.name()} returned an invalid gradient at index {index} - got "
                f"{list(grad.shape)} but expected shape compatible with {list(shape)}"
            ) from None
    if grad.dtype is not dtype:
        grad = grad.to(dtype)
    return grad


def _check_hook_result(hook, grad, new):
    """A tensor hook may change a gradient's values, not its size or dtype (torch's
    ``check_single_result``): the next node would read the wrong shape."""
    name = getattr(hook, "__name__", repr(hook))
    if grad is None or not hasattr(new, "shape"):
        return new
    if tuple(new.shape) != tuple(grad.shape):
        raise RuntimeError(f"hook '{name}' has changed the size of value")
    if new.dtype != grad.dtype:
        raise RuntimeError(f"hook '{name}' has changed the type of value (was {grad.dtype} "
                           f"got {new.dtype})")
    return new


def run_backward(roots, grad_roots, retain_graph: bool, create_graph: bool,
                 inputs=None, accumulate: bool = True):
    """Backpropagate from ``roots``; return the grads of ``inputs`` (``autograd.grad`` mode)."""
    # edges of the roots
    root_edges = []
    for t, g in zip(roots, grad_roots):
        e = gradient_edge(t)
        if e is None:
            raise RuntimeError("element 0 of tensors does not require grad and does not have a "
                               "grad_fn")
        root_edges.append((e, g))

    capture = {}
    if inputs is not None:
        for i, t in enumerate(inputs):
            e = gradient_edge(t)
            if e is None:
                raise RuntimeError("One of the differentiated Tensors does not require grad")
            capture.setdefault((id(e[0]), e[1]), []).append(i)

    # 1. discover
    deps: dict[int, int] = {}
    nodes: dict[int, object] = {}
    stack = list({id(e[0]): e[0] for e, _ in root_edges}.values())  # a root twice counts once
    for n in stack:
        nodes[id(n)] = n
    while stack:
        n = stack.pop()
        for e in n._edges:
            if e is None:
                continue
            nid = id(e[0])
            deps[nid] = deps.get(nid, 0) + 1
            if nid not in nodes:
                nodes[nid] = e[0]
                stack.append(e[0])

    needed = None
    if inputs is not None:
        targets = {k[0] for k in capture}
        needed = set()

        # post-order over the discovered DAG
        order, seen, st = [], set(), [e[0] for e, _ in root_edges]
        while st:
            n = st[-1]
            if id(n) not in seen:
                seen.add(id(n))
                st.extend(e[0] for e in n._edges if e is not None
                          and id(e[0]) not in seen)
            else:
                st.pop()
                order.append(n)
        # a node runs when one of its edges leads to a target; a target itself only captures
        # its gradient (running it could free a graph another backward still needs: a
        # formula's inner autograd.grad whose inputs are the outer graph's tensors)
        for n in order:
            if any(e is not None and (id(e[0]) in needed or id(e[0]) in targets)
                   for e in n._edges):
                needed.add(id(n))

    # 2. run
    buffers: dict[int, list] = {}

    def add_to(node, nr, g):
        buf = buffers.get(id(node))
        if buf is None:
            buf = buffers[id(node)] = [None] * max(1, len(node.input_meta))
        buf[nr] = g if buf[nr] is None else buf[nr] + g

    results = [None] * (len(inputs) if inputs is not None else 0)
    heap = []
    for (node, nr), g in root_edges:
        add_to(node, nr, g)
    for (node, _), _g in root_edges:
        if deps.get(id(node), 0) == 0 and id(node) not in {id(h[2]) for h in heap}:
            heapq.heappush(heap, (-node.sequence_nr, id(node), node))

    prev = state.grad_enabled
    prev_claimed = AccumulateGrad.claimed
    # id -> the memory's tensor, kept alive for the run so that no other tensor reuses its id
    AccumulateGrad.claimed = {id(m): m for m in (g if g._base is None else g._base
                                                 for g in grad_roots if g is not None)}
    state.grad_enabled = create_graph
    graph_tasks.append(inputs is None and accumulate)
    try:
        while heap:
            _, nid, node = heapq.heappop(heap)
            grads = buffers.pop(nid, None) or [None] * len(node.input_meta)
            for nr, hooks in node.pre_hooks.items():
                for hook in hooks:
                    new = hook(grads[nr])
                    if new is not None:
                        grads[nr] = _check_hook_result(hook, grads[nr], new)
            for nr, t in node.retained.items():
                if grads[nr] is not None:
                    g = grads[nr]
                    if not create_graph and g.requires_grad:
                        g = g.detach()
                    t.grad = g if t.grad is None else t.grad + g
            for nr in range(len(grads)):
                for i in capture.get((nid, nr), ()):
                    results[i] = grads[nr]
            run = needed is None or nid in needed
            if isinstance(node, AccumulateGrad) and (not accumulate or inputs is not None):
                run = False
            if run:
                for hook in tuple(node.node_pre_hooks):
                    new = hook(tuple(grads))
                    if new is not None:
                        grads = list(new)
                outs = node.apply(grads)
                for hook in tuple(node.node_hooks):
                    new = hook(tuple(outs), tuple(grads))
                    if new is not None:
                        outs = list(new)
                if not retain_graph:
                    node.release()
            else:
                outs = [None] * len(node._edges)
            for index, (e, g) in enumerate(zip(node._edges, outs)):
                if e is None:
                    continue
                nxt, nr = e
                if g is not None:
                    add_to(nxt, nr, _validate(g, nxt.input_meta[nr], node, index))
                deps[id(nxt)] -= 1
                if deps[id(nxt)] == 0:
                    heapq.heappush(heap, (-nxt.sequence_nr, id(nxt), nxt))
    finally:
        graph_tasks.pop()
        state.grad_enabled = prev
        AccumulateGrad.claimed = prev_claimed
    return results


# one entry per running backward (a reentrant backward pushes its own): whether it
# accumulates into leaves' ``.grad`` (``backward()``) or returns gradients (``autograd.grad`` /
# ``backward(inputs=...)``) — the reentrant checkpoint refuses the latter, as torch's
graph_tasks: list[bool] = []
