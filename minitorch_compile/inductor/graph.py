"""``GraphLowering``: an fx ``Interpreter`` whose values are IR, not tensors
(``torch/_inductor/graph.py``).

Running the graph with this interpreter *lowers* it: each placeholder becomes an
``InputBuffer``; each ``call_function`` node goes to its decomposition (traced with ``make_fx``
and lowered in turn), its lowering, or a fallback extern kernel; the outputs are realized.
What is left is ``self.buffers`` — the realized buffers in topological order — which the
scheduler fuses and the code generator turns into Python.

Dynamic shapes: a placeholder whose sizes are symbolic (``SymInt``s of AOTAutograd's symbolic
trace) becomes an ``InputBuffer`` whose sizes are ``sizevars.Expr``s; ``sym_size`` nodes and
size arithmetic evaluate to ``Expr``s, which the lowerings use like ints.  ``symbol_inputs``
says where the generated code reads each symbol (``s0 = arg0_1.shape[0]``); ``hints`` holds
each symbol's value for the example inputs (scores and reports only — never the code).

Inlining and realizing (torch's ``mark_reuse``): a pointwise result stays an unrealized recipe
and is recomputed inside each consumer, unless it has several users *and* recomputing is not
cheap: it reads more than ``config.realize_reads_threshold`` buffers, its body has more than
``config.realize_opcount_threshold`` ops, or it calls a heavy op (``exp``, ``sigmoid``) — the
CPU rule of torch.
"""

from __future__ import annotations

import operator

from .._tensor import Tensor
from ..dynamo.symbolic_shapes import SymInt, hint_int
from ..fx.interpreter import Interpreter
from ..fx.node import map_arg
from ..fx.proxy_tensor import sym_size
from . import config
from .decomposition import get_decomposition
from .dependencies import extract_read_writes
from .ir import (
    FixedLayout,
    InputBuffer,
    Loops,
    Pointwise,
    StorageBox,
    TensorBox,
    contiguous_strides,
)
from .lowering import fallback, lowering_for
from .sizevars import as_sizes, from_sym_int, is_symbolic
from .virtualized import V

_HEAVY_OPS = ("exp", "sigmoid", "kernel")
_NOT_DECOMPOSED = object()
_SIZE_ARITHMETIC = (operator.add, operator.sub, operator.mul, operator.floordiv, operator.mod,
                    operator.neg)


class GraphLowering(Interpreter):
    def __init__(self, gm, example_inputs=None, name: str = "graph"):
        super().__init__(gm, garbage_collect_values=False)
        self.name = name
        self.buffers: list = []
        self.name_to_buffer: dict = {}
        self.graph_inputs: dict = {}  # name -> InputBuffer
        self.graph_input_names: list = []
        self.graph_outputs: list = []  # TensorBox or constant per output
        self.fallbacks: list = []  # (op name, reason)
        self.constants: dict = {}  # name -> numpy array (get_attr tensors)
        self.current_node = None
        self.hints: dict = {}  # size symbol -> its value for the example inputs
        self.symbol_inputs: dict = {}  # size symbol -> (input name, dim or None)
        self._meta_stack: list = []
        self._n_buf = 0

    # ---------------------------------------------------------------- bookkeeping
    def new_buffer_name(self) -> str:
        name = f"buf{self._n_buf}"
        self._n_buf += 1
        return name

    def register_buffer(self, buf) -> None:
        self.buffers.append(buf)
        self.name_to_buffer[buf.name] = buf

    def current_meta(self):
        return self._meta_stack[-1]

    def run(self, *args):
        with V.set_graph_handler(self):
            return super().run(*args)

    # ---------------------------------------------------------------- opcodes
    def placeholder(self, target, args, kwargs):
        super().placeholder(target, args, kwargs)
        node = self._node
        val = node.meta.get("val")
        self.graph_input_names.append(node.name)
        if not isinstance(val, Tensor):
            if is_sym_int(val):  # a size the graph receives (a saved size, an int input)
                self._bind(val, node.name, None)
                return from_sym_int(val, size=False)
            return val
        size = as_sizes(val.shape)
        stride = tuple(val.stride())
        if any(is_symbolic(s) for s in size):
            for d, s in enumerate(val.shape):
                self._bind(s, node.name, d)
            stride = _symbolic_strides(node.name, size, val)
        buf = InputBuffer(node.name, FixedLayout(val.dtype, size, stride, 0))
        self.graph_inputs[node.name] = buf
        self.name_to_buffer[node.name] = buf
        return TensorBox(StorageBox(buf))

    device_type = "cpu"  # the device the code generator targets (compile_fx sets "npu")

    def _bind(self, value, name: str, dim) -> None:
        """Remember where a size symbol can be read at run time, and its hint."""
        if not is_sym_int(value):
            return
        e = from_sym_int(value, size=False)
        if is_symbolic(e):
            if len(e.terms) == 1 and e.terms[0][1] == 1 and len(e.terms[0][0]) == 1 and \
                    str(e) in e.free_symbols:  # a plain symbol, not an atom like (s0//2)
                self.hints[str(e)] = value.hint
                self.symbol_inputs.setdefault(str(e), (name, dim))

    def get_attr(self, target, args, kwargs):
        """A constant tensor of the graph: a buffer the module defines at its top."""
        value = super().get_attr(target, args, kwargs)
        if not isinstance(value, Tensor):
            return value
        name = f"const_{len(self.constants)}"
        self.constants[name] = value._data  # written out contiguous by the wrapper
        buf = InputBuffer(name, FixedLayout(value.dtype, tuple(value.shape),
                                            contiguous_strides(value.shape), 0))
        self.name_to_buffer[name] = buf
        return TensorBox(StorageBox(buf))

    def run_node(self, n):
        val = n.meta.get("val")
        for v in (val if isinstance(val, (tuple, list)) else (val,)):
            if isinstance(v, Tensor) and v.device.type != self.device_type:
                raise NotImplementedError(  # the NPU has its own code generator
                    f"the cpu code generator got a tensor on {v.device} ({n.name})")
        self._node = n
        prev, self.current_node = self.current_node, n
        self._meta_stack.append(n.meta.get("val"))
        try:
            out = super().run_node(n)
            if n.op == "call_function":
                self._mark_reuse(out, len(n.users))
            return out
        finally:
            self._meta_stack.pop()
            self.current_node = prev

    def call_function(self, target, args, kwargs):
        if target is operator.getitem:
            return args[0][args[1]]
        if target is sym_size:  # a size: an Expr (or int) of the IR
            return args[0].get_size()[args[1]]
        if target in _SIZE_ARITHMETIC:
            return target(*args)
        bound = target.bind(*args, **kwargs)
        decomp = get_decomposition(target, self.device_type)
        if decomp is not None:
            out = self._lower_decomposition(decomp, bound)
            if out is not _NOT_DECOMPOSED:
                return out
        lowering = lowering_for(target)
        if lowering is None:
            reason = f"no lowering for {target}"
            return self._fallback(target, bound, reason)
        try:
            return lowering(*bound)
        except (NotImplementedError, TypeError, ValueError, IndexError, KeyError) as e:
            return self._fallback(target, bound, f"lowering failed: {type(e).__name__}: {e}")

    def _fallback(self, target, bound, reason):
        from .._dispatch import DispatchKey

        if DispatchKey.CPU not in getattr(target, "kernels", {}):
            raise NotImplementedError(f"{target} has no CPU kernel to fall back to")
        self.fallbacks.append((str(target), reason))
        from ..dynamo._logging import get_logger

        get_logger("fusion").info("fallback kernel %s: %s", target, reason)
        return fallback(target, bound, self.current_meta(), reason)

    def _lower_decomposition(self, decomp, bound):
        """Trace the decomposition on the node's fake inputs; lower the graph it gives."""
        from ..fx import make_fx

        node = self._node
        arg_nodes = node.target.bind(*node.args, **node.kwargs)
        fakes = map_arg(tuple(arg_nodes), lambda a: a.meta["val"])
        # tensor positions: (argument, None) or (argument, place in a list of tensors)
        tensor_pos = [(i, None) for i, f in enumerate(fakes) if isinstance(f, Tensor)] + [
            (i, j) for i, f in enumerate(fakes) if isinstance(f, (list, tuple))
            for j, e in enumerate(f) if isinstance(e, Tensor)]

        def at(args, pos):
            i, j = pos
            return args[i] if j is None else args[i][j]

        def fn(*tensors):
            a = [list(f) if isinstance(f, (list, tuple)) else f for f in fakes]
            for (i, j), t in zip(tensor_pos, tensors):
                if j is None:
                    a[i] = t
                else:
                    a[i][j] = t
            return decomp(*a)

        try:
            sub = make_fx(fn, None, "fake")(*[at(fakes, pos) for pos in tensor_pos])
        except NotImplementedError:  # does not apply to these arguments (nothing lowered yet)
            return _NOT_DECOMPOSED
        env = {}
        phs = [p for p in sub.graph.nodes if p.op == "placeholder"]
        for p, pos in zip(phs, tensor_pos):
            env[p] = at(bound, pos)
        result = None
        for sn in sub.graph.nodes:
            if sn.op == "placeholder":
                continue
            if sn.op == "output":
                outs = map_arg(sn.args[0], lambda x: env[x])
                result = outs[0] if isinstance(outs, (list, tuple)) and len(outs) == 1 else outs
                break
            if sn.op == "get_attr":
                raise NotImplementedError("decomposition made a constant tensor")
            self._meta_stack.append(sn.meta.get("val"))
            try:
                a = map_arg(sn.args, lambda x: env[x])
                k = map_arg(sn.kwargs, lambda x: env[x])
                saved, self._node = self._node, sn
                try:
                    env[sn] = self.call_function(sn.target, a, k)
                finally:
                    self._node = saved
                self._mark_reuse(env[sn], len(sn.users))
            finally:
                self._meta_stack.pop()
        return result

    def output(self, target, args, kwargs):
        outs = args[0]
        for o in outs:
            if isinstance(o, TensorBox):
                o.realize()
        self.graph_outputs = list(outs)
        return outs

    # ---------------------------------------------------------------- realizing
    def _mark_reuse(self, value, users: int) -> None:
        if not isinstance(value, TensorBox) or users <= 1:
            return
        store = value.storage()
        if not isinstance(store, StorageBox) or not isinstance(store.data, Loops):
            return
        if isinstance(store.data, Pointwise) and not _should_realize_on_reuse(store.data):
            return
        store.realize()


def _symbolic_strides(name: str, size: tuple, val) -> tuple:
    """Strides over symbolic sizes: the dense layout in the input's stride order (contiguous,
    or a permutation of it like a saved ``transpose``), checked against the example's."""
    hints = tuple(hint_int(s) for s in val.shape)
    have = tuple(val.stride())
    order = sorted(range(len(size)), key=lambda d: (-have[d], d))  # outermost first
    dense = dict(zip(order, contiguous_strides([size[d] for d in order])))
    strides = tuple(dense[d] for d in range(len(size)))
    dense_hints = dict(zip(order, contiguous_strides([hints[d] for d in order])))
    if any(h != 1 and have[d] != dense_hints[d] for d, h in enumerate(hints)):
        raise NotImplementedError(f"input {name} with symbolic sizes is not dense (strides "
                                  f"{list(have)} for sizes {list(hints)})")
    return strides


def is_sym_int(v) -> bool:
    return isinstance(v, SymInt)


def _should_realize_on_reuse(pw) -> bool:
    rw = extract_read_writes(pw)
    ops_used = rw.op_counts
    if any(op in ops_used for op in _HEAVY_OPS):
        return True
    return (len(rw.read_names) > config.realize_reads_threshold
            or sum(ops_used.values()) > config.realize_opcount_threshold)
