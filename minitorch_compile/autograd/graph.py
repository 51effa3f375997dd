"""The autograd graph: nodes recorded by the Autograd dispatch key.

Mirrors ``torch/csrc/autograd/function.h`` (``Node``), ``saved_variable.cpp`` and the generated
``VariableType`` kernels.

When an op runs with a tensor that requires grad, the Autograd kernel (``autograd_kernel``)
runs the op below Autograd, then records a ``Node`` — ``grad_fn`` of each differentiable
output.  The node keeps:

* ``next_functions``: for each tensor input, the edge ``(node, output_nr)`` its gradient flows
  to — the input's own ``grad_fn``, or an ``AccumulateGrad`` for a leaf, or ``(None, 0)``;
* saved values: exactly those the op's derivative formulas name.  A formula is a function whose
  parameter names say what it needs, like a line of ``derivatives.yaml``::

      derivatives={"self": lambda grad, self: grad * -self.sin()}

  ``grad``/``grads`` are the output gradients, ``result`` (or the schema's return names) the
  outputs, ``grad_input_mask`` which inputs need a gradient (for a formula keyed by several
  inputs, ``"input, weight, bias"``, that returns one gradient each, as torch's
  ``native_layer_norm_backward``), ``<arg>_sizes`` / ``<arg>_strides`` / ``<arg>_dtype`` an
  input's shape / strides / dtype (no tensor is kept), any other name the input argument
  itself.  Saved-tensor hooks (``saved_hooks.py``) may replace what a ``SavedTensor`` keeps.

Saved tensors remember their version; an in-place change before backward is an error, never a
wrong gradient.  ``retain_graph=False`` frees them after use, so a second backward raises
torch's error.  In-place ops (which record *before* writing) and writes through views
(``CopySlices``) are in ``autograd/inplace.py``.
"""

from __future__ import annotations

import itertools

from .._dispatch import AUTOGRAD, dispatch_below_autograd, exclude, state
from .node_names import torch_node_name  # torch's grad_fn names

_sequence = itertools.count()


class Node:
    """A backward function. ``apply(grads)`` maps output grads to grads for ``next_functions``."""

    def __init__(self):
        self.sequence_nr = next(_sequence)  # later nodes run first in backward, as in torch
        self._edges: tuple = ()  # (node, output_nr) or None per input
        self.input_meta: list = []  # (shape, dtype) of each forward output, to validate grads
        self.pre_hooks: dict[int, list] = {}  # output_nr -> Tensor.register_hook hooks
        self.retained: dict[int, object] = {}  # output_nr -> tensor that called retain_grad()
        self.node_pre_hooks: list = []  # register_prehook: hook(grad_outputs)
        self.node_hooks: list = []  # register_hook: hook(grad_inputs, grad_outputs)

    def name(self) -> str:
        return type(self).__name__

    @property
    def next_functions(self) -> tuple:
        """One edge per input, ``(None, 0)`` for an input that needs no gradient (torch's
        spelling; the engine reads ``_edges``, where that edge is ``None``)."""
        return tuple((None, 0) if e is None else e for e in self._edges)

    @next_functions.setter
    def next_functions(self, edges) -> None:
        self._edges = tuple(None if e is None or e[0] is None else e for e in edges)

    def apply(self, grads: list) -> list:
        raise NotImplementedError

    def release(self) -> None:
        """Free saved values (``retain_graph=False``)."""

    def __repr__(self) -> str:
        return f"<{self.name()} object>"

    def register_hook(self, fn):
        """``fn(grad_inputs, grad_outputs) -> grad_inputs | None`` runs after this node: it
        sees the gradients it computed for its inputs and may replace them."""
        return removable_handle(self.node_hooks, fn)

    def register_prehook(self, fn):
        """``fn(grad_outputs) -> grad_outputs | None`` runs before this node (after the
        tensor hooks of its outputs) and may replace the gradients it receives."""
        return removable_handle(self.node_pre_hooks, fn)


class RemovableHandle:
    """``handle.remove()`` takes a hook out of its list; a second call does nothing."""

    def __init__(self, hooks: list, fn):
        self.hooks, self.fn = hooks, fn

    def remove(self) -> None:
        if any(h is self.fn for h in self.hooks):
            self.hooks.remove(self.fn)


def removable_handle(hooks: list, fn) -> RemovableHandle:
    hooks.append(fn)
    return RemovableHandle(hooks, fn)


_FREED = ("Trying to backward through the graph a second time (or directly access saved "
          "tensors after they have already been freed). Saved intermediate values of the graph "
          "are freed when you call .backward() or autograd.grad(). Specify retain_graph=True if "
          "you need to backward through the graph a second time or if you need to access saved "
          "tensors after calling backward.")


class SavedTensor:
    """A tensor saved for backward, with the version it had when saved (``SavedVariable``).

    ``producer`` is ``(grad_fn, output_nr)`` of the tensor *when it was saved* (``None`` for a
    leaf or a detached tensor): torch's error names it ("which is output 0 of Mul").
    """

    __slots__ = ("tensor", "version", "producer", "is_output", "packed")

    def __init__(self, tensor, producer=None, *, is_output: bool = False):
        if tensor._is_inference and not state.inference_mode:
            raise RuntimeError(
                "Inference tensors cannot be saved for backward. Please do not use Tensors "
                "created in inference mode in computation tracked by autograd. To work around "
                "this, you can make a clone to get a normal tensor and use it in autograd, or use "
                "`torch.no_grad()` instead of `torch.inference_mode()`.")
        self.tensor = tensor
        self.version = tensor._version
        self.is_output = is_output
        if not is_output:
            fn = tensor._grad_fn if tensor._view_chain is None else tensor.grad_fn
            producer = (fn, tensor._output_nr) if fn is not None else None
        self.producer = producer
        self.packed = None
        hooks = _hooks.current_hooks()
        if hooks is not None and not state.modes:  # (tracers' tensors: see saved_hooks.py)
            self.packed = hooks  # an output is packed once it has its grad_fn (_attach)
            if not is_output:
                self.pack_pending()

    def pack_pending(self) -> None:
        """Hand the tensor to the pack hook now (the hooks chosen when it was saved)."""
        if isinstance(self.packed, tuple):
            self.packed = _hooks.pack(self.tensor, self.packed)
            self.tensor = True  # not kept: the hooks hold what they want

    def release(self) -> None:
        self.tensor = self.packed = None

    def unpack(self):
        t = self.tensor
        if t is None:
            raise RuntimeError(_FREED)
        self.pack_pending()
        if self.packed is not None:
            return _hooks.unpack(self.packed)
        if t._version != self.version:
            which = ""
            if self.producer is not None:
                fn, nr = self.producer
                which = f", which is output {nr} of {_short_name(fn.name())},"
            raise RuntimeError(
                "one of the variables needed for gradient computation has been modified by an "
                f"inplace operation: [{t.dtype.name} {list(t.shape)}]{which} is at version "
                f"{t._version}; expected version {self.version} instead. Hint: the variable "
                "was changed in place after being saved; clone() it before the in-place op.")
        if self.is_output and state.modes:
            # torch saves an output as a new tensor without history, so a traced backward
            # reads it through a `detach` — which torch's min-cut will not recompute
            return t.detach()
        return t


def _short_name(name: str) -> str:
    """``MulBackward0`` -> ``Mul``, as torch names the producer in that error."""
    head, sep, _tail = name.rpartition("Backward")
    return head if sep else name


class _NotImplementedBackward(Node):
    def __init__(self, op):
        super().__init__()
        self.op = op

    def name(self) -> str:
        return "NotImplemented"

    def apply(self, grads):
        raise RuntimeError(f"the derivative for '{self.op}' is not implemented")


def check_grad_assignment(tensor, value) -> None:
    """torch's checks on assigning ``tensor.grad = value`` (``THPVariable_set_grad``): a
    tensor of the same dtype and size (symbolic sizes are not compared)."""
    from .._tensor import Tensor

    if not isinstance(value, Tensor):
        raise TypeError("assigned grad expected to be a Tensor or None but got grad of type "
                        f"{type(value).__name__}")
    if tensor._sym_shape or value._sym_shape:
        return
    if value.dtype != tensor.dtype:
        raise RuntimeError(
            f"attempting to assign a gradient with dtype '{value.dtype.name}' to a tensor "
            f"with dtype '{tensor.dtype.name}'. Please ensure that the gradient and the tensor "
            "have the same dtype")
    if value.shape != tensor.shape:
        raise RuntimeError(
            f"attempting to assign a gradient of size '{list(value.shape)}' to a tensor of "
            f"size '{list(tensor.shape)}'. Please ensure that the gradient and the tensor are "
            "the same size")


def gradient_edge(t):
    """Where the gradient of tensor ``t`` goes: ``(grad_fn, output_nr)`` or its accumulator."""
    if not t.requires_grad:
        return None
    if t.grad_fn is not None:
        return (t.grad_fn, t._output_nr)
    acc = t._grad_accumulator
    if acc is None:
        acc = t._grad_accumulator = AccumulateGrad(t)
    return (acc, 0)


class OpBackward(Node):
    """The node recorded for an op-table op; runs its derivative formulas."""

    def __init__(self, op, node_name):
        super().__init__()
        self.op = op
        self._name = node_name
        self.formulas: list = []  # (edge slice, formula, param names, is_list)
        self.saved: dict = {}

    def name(self) -> str:
        return self._name

    def __getattr__(self, attr):
        """``node._saved_self``, ``node._saved_other``, ``node._saved_result``: a value the
        derivative saved, unpacked (torch's generated attributes; ``<arg>_sizes`` reads as
        ``_saved_<arg>_sym_sizes``)."""
        name = attr[len("_saved_"):] if attr.startswith("_saved_") else None
        if name is not None and name.endswith("_sym_sizes"):
            name = name[:-len("_sym_sizes")] + "_sizes"
        saved = self.__dict__.get("saved", {})
        if name not in saved:
            raise AttributeError(f"'{type(self).__name__}' object has no attribute '{attr}'")
        v = self._value(name, ())
        return tuple(v) if name.endswith("_sizes") and isinstance(v, tuple) else v

    def __dir__(self):
        names = [n[:-len("_sizes")] + "_sym_sizes" if n.endswith("_sizes") else n
                 for n in self.saved]
        return sorted(set(super().__dir__()) | {f"_saved_{n}" for n in names})

    def _value(self, name, grads):
        if name == "grad":
            return grads[0]
        if name == "grads":
            return grads
        v = self.saved[name]
        if isinstance(v, SavedTensor):
            return v.unpack()
        if isinstance(v, list) and any(isinstance(s, SavedTensor) for s in v):
            return [None if s is None else s.unpack() for s in v]
        return v

    def apply(self, grads):
        from .._api import zeros

        grads = [zeros(m[0], dtype=m[1]) if g is None else g
                 for g, m in zip(grads, self.input_meta)]
        out = [None] * len(self._edges)
        for sl, fn, params, is_list in self.formulas:
            g = fn(*[self._value(p, grads) for p in params])
            if isinstance(sl, tuple):  # one formula for several inputs: a gradient each
                for s, gi in zip(sl, g):
                    if gi is not None and any(e is not None for e in self._edges[s]):
                        out[s.start] = gi
            elif is_list:
                out[sl] = list(g)
            else:
                out[sl.start] = g
        return out

    def release(self):
        """Free the saved tensors; numbers, sizes and dtypes stay (torch frees only its
        ``SavedVariable``s), so a node that saved no tensor can run again, as in torch."""
        for v in self.saved.values():
            for s in (v if isinstance(v, list) else [v]):
                if isinstance(s, SavedTensor):
                    s.release()


def _formula_params(fn) -> tuple[str, ...]:
    code = fn.__code__
    return code.co_varnames[: code.co_argcount]


def _needs_grad(t) -> bool:
    return t is not None and getattr(t, "requires_grad", False)  # a SymInt: no


def autograd_kernel(op, args: tuple):
    """The Autograd-key kernel shared by every op-table op (``VariableType`` in torch)."""
    opdef = op.opdef
    schema = op.schema
    if schema.is_mutable:
        return _inplace_autograd(op, args)
    with exclude(AUTOGRAD):
        out = dispatch_below_autograd(op, args)
    outs = out if isinstance(out, tuple) else (out,)
    derivs = opdef.derivatives if opdef is not None else None
    if derivs is None and (opdef is None or not opdef.differentiable):
        if opdef is not None:
            return out  # declared non-differentiable: outputs do not require grad
        node = _NotImplementedBackward(op)
        _set_edges(node, op, args)
        _attach(node, outs, args)
        return out
    node = _record(op, args, outs, derivs)
    _attach(node, outs, args)
    return out


def _set_edges(node, op, args):
    """One edge per tensor input (each element of a Tensor[] counts), in schema order."""
    edges, slots = [], {}
    for i, a in enumerate(op.schema.arguments):
        v = args[i]
        if a.type.is_tensor:
            slots[a.name] = slice(len(edges), len(edges) + 1)
            edges.append(gradient_edge(v) if _needs_grad(v) else None)
        elif a.type.is_tensor_list:
            slots[a.name] = slice(len(edges), len(edges) + len(v))
            edges.extend(gradient_edge(t) if _needs_grad(t) else None for t in v)
    node.next_functions = tuple(edges)
    return slots


_NODE_CLASSES: dict = {}


def node_class(base: type, name: str) -> type:
    """A subclass of ``base`` named after the node (``MulBackward0``, ``MyFnBackward``), made
    once per name: torch's nodes are one C++ class per derivative, so programs test
    ``type(y.grad_fn).__name__``; every behaviour stays ``base``'s."""
    cls = _NODE_CLASSES.get((base, name))
    if cls is None:
        cls = _NODE_CLASSES[(base, name)] = type(name, (base,), {"__doc__": base.__doc__,
                                                                  "__module__": base.__module__})
    return cls


def _record(op, args, outs, derivs, node_name=None, saver=None):
    """Make the node of one op call: its edges, its formulas, the values they name.

    ``outs=None`` means the op has not run yet (an in-place op records *before* writing):
    then the names of outputs a formula needs are returned for the caller to save afterwards,
    and ``saver(name, value)`` may replace an input's saved value (the in-place op's clone).
    """
    name = node_name or torch_node_name(op, args)
    node = node_class(OpBackward, name)(op, name)
    slots = _set_edges(node, op, args)
    schema = op.schema
    arg_index = {a.name: i for i, a in enumerate(schema.arguments)}
    ret_names = [r.name for r in schema.returns]
    saved = node.saved
    deferred = []
    for name, fn in derivs.items():
        names = [n.strip() for n in name.split(",")]
        sls = tuple(slots[n] for n in names)
        mask = [any(e is not None for e in node._edges[sl]) for sl in sls]
        if not any(mask):
            continue
        if getattr(fn, "not_differentiable", False):
            raise RuntimeError(f"The function '{op.name}' is not differentiable with respect "
                               f"to argument '{name}'. This input cannot have requires_grad "
                               "True.")
        params = _formula_params(fn)
        if len(sls) > 1:  # "input, weight, bias": one call gives all three (torch's
            node.formulas.append((sls, fn, params, False))  # native_layer_norm_backward)
            saved["grad_input_mask"] = mask
        else:
            node.formulas.append((sls[0], fn, params,
                                  schema.arguments[arg_index[name]].type.is_list))
        for p in params:
            if p in saved or p in ("grad", "grads") or p in deferred:
                continue
            if p == "result" or p in ret_names:
                if outs is None:
                    deferred.append(p)
                    continue
                i = 0 if p == "result" else ret_names.index(p)
                saved[p] = SavedTensor(outs[i], (node, i), is_output=True)
            elif p.endswith("_dtype") and p[:-6] in arg_index:
                saved[p] = args[arg_index[p[:-6]]].dtype  # torch saves only `options()`
            elif p.endswith("_strides") and p[:-8] in arg_index:
                saved[p] = tuple(args[arg_index[p[:-8]]].stride())  # (torch: sym_strides())
            elif p.endswith("_sizes") and p[:-6] in arg_index:
                v = args[arg_index[p[:-6]]]  # a Tensor[] argument saves each tensor's shape
                saved[p] = [tuple(t.shape) for t in v] if isinstance(v, (list, tuple)) \
                    else tuple(v.shape)
            else:
                v = args[arg_index[p]]
                if saver is not None:
                    v = saver(p, v)
                if hasattr(v, "_version"):
                    v = SavedTensor(v)
                elif isinstance(v, (list, tuple)) and any(hasattr(t, "_version") for t in v):
                    v = [None if t is None else SavedTensor(t) for t in v]
                saved[p] = v
    return (node, deferred) if outs is None else node


def _attach(node, outs, args):
    """Make ``node`` the ``grad_fn`` of every floating-point output."""
    node.input_meta = [(o.shape, o.dtype) for o in outs]
    opdef = getattr(getattr(node, "op", None), "opdef", None)
    skip = opdef.nondifferentiable_outputs if opdef is not None else ()
    for i, o in enumerate(outs):
        if o.dtype.is_floating_point and i not in skip:
            if any(o is a for a in args):
                raise RuntimeError("a kernel returned one of its inputs; register it as a view")
            o._requires_grad = True
            o.grad_fn = node
            o._output_nr = i
    for v in getattr(node, "saved", {}).values():
        if isinstance(v, SavedTensor):
            v.pack_pending()


def _inplace_autograd(op, args):
    from .inplace import inplace_autograd

    return inplace_autograd(op, args)


from . import saved_hooks as _hooks  # noqa: E402
from .accumulate_grad import AccumulateGrad  # noqa: E402 - it subclasses Node above
from .saved_hooks import (  # noqa: E402,F401 - torch.autograd.graph's names
    disable_saved_tensors_hooks,
    save_on_cpu,
    saved_tensors_hooks,
)
