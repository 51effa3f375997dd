"""``OutputGraph``: the graph being captured, its inputs, guards and fake mode.

Mirrors ``torch/_dynamo/output_graph.py``.  One ``OutputGraph`` is shared by the frame's
interpreter and every function it inlines.  It owns

* ``graph`` — the fx graph; ``call()`` adds a node *and* computes its example value by running
  the same function on fake tensors (so shapes are known and errors surface while tracing);
* graph inputs — one placeholder per tensor, named after its source (``l_inputs_x_``); the
  tensors themselves become the backend's ``example_inputs``.  A tensor met again under
  another source (``f(x, x)``, tied weights) reuses its input, guarded ``DUPLICATE_INPUT``;
  distinct inputs are guarded to stay distinct (``NO_TENSOR_ALIASING``), since the trace
  answered ``x is y`` and will be reused only for the same aliasing;
* ``guards`` — a ``GuardSet``;
* globals to install in the frame's module (``__compiled_fn_0``) when the entry is created.

Which inputs become symbols (automatic dynamic: ``dynamic_dims``, ``dynamic_int``,
``dynamic_float``, ``record_frame_state``) is the ``AutomaticDynamic`` mixin in ``pgo.py``.

``compile_subgraph`` finishes the graph: outputs are the tensors the frame's return value needs
(inputs passed through unchanged are reloaded from their source instead), then the backend
compiles the ``GraphModule``.
"""

from __future__ import annotations

import itertools
import operator
import re

from .. import _dtype
from .._dispatch import state as _dispatch_state
from .._tensor import Tensor
from ..autograd.grad_mode import _set_grad_enabled
from ..fx import FakeTensorMode, Graph, GraphModule
from .bound_symbols import BoundSymbols
from .exc import TensorifyScalarRestartAnalysis, Unsupported, unimplemented
from .pgo import AutomaticDynamic
from .side_effects import SideEffects
from .source import FloatTensorSource
from .symbolic_scalars import (
    MATH_FNS,
    ScalarEnv,
    is_float_output,
    is_sym_scalar,
    output_node,
    promote,
    representative,
    sym_math,
)
from .symbolic_shapes import ShapeEnv, hint_int, is_symbolic
from .variables.base import VariableTracker
from .variables.dicts import ConstDictVariable
from .variables.lists import BaseListVariable, ListIteratorVariable, SliceVariable
from .variables.numpy import has_ndarray
from .variables.tensor import SymNodeVariable, TensorVariable, wrap_fx_proxy

_compiled_fn_counter = itertools.count()

# Ops whose int operands are *values* (``x * n``, ``x.pow(n)``, ``x > n``), not sizes.  A value
# never changes the result's shape, and an int stays an int for type promotion, so the fake run
# of such an op uses a symbolic int's hint (the graph node still reads the ``size`` node).
# Sizes (``reshape(n, 2)``, ``zeros(n)``, ``x[:n]``) keep the SymInt and its expression.
_VALUE_OPS = frozenset({
    "add", "sub", "mul", "truediv", "div", "true_divide", "floordiv", "floor_divide", "mod",
    "remainder", "fmod", "pow", "rsub", "eq", "ne", "lt", "le", "gt", "ge", "maximum",
    "minimum", "clamp", "clamp_min", "clamp_max", "iadd", "isub", "imul", "itruediv",
    "ifloordiv", "add_", "sub_", "mul_", "div_", "__add__", "__radd__", "__sub__", "__rsub__",
    "__mul__", "__rmul__", "__truediv__", "__rtruediv__", "__floordiv__", "__rfloordiv__",
    "__mod__", "__rmod__", "__pow__", "__rpow__"})


def _value_operands(kind: str, target, args: list, ex_args: list) -> list:
    """``ex_args`` with the symbolic ints of a tensor op on values replaced by their hints."""
    name = target if kind == "call_method" else getattr(target, "__name__", "")
    if name not in _VALUE_OPS or not any(isinstance(a, TensorVariable) for a in args):
        return ex_args
    return [hint_int(e) if is_symbolic(e) else e for e in ex_args]


def _scalar_operands(target, ex_args: list, ex_kwargs: dict, scalar_env):
    """Symbolic floats and unbacked numbers in a fake run stand as plain numbers (the hint,
    else 1.0/1): a value never changes the result's shape, only its dtype, which the kind of
    number decides.  An unbacked int used as a *size* (``zeros(u0)``) is not supported."""
    found = []

    def sub(v):
        if is_sym_scalar(v):
            found.append(v)
            return representative(v)
        if isinstance(v, (list, tuple)) and not hasattr(v, "_fields"):
            return type(v)(sub(i) for i in v)
        return v

    if (target is operator.truediv or any(isinstance(a, float) or is_sym_scalar(a)
                                          for a in ex_args)) and any(
            is_symbolic(a) for a in ex_args) and not any(isinstance(a, Tensor) for a in ex_args):
        return [promote(a, scalar_env) for a in ex_args], ex_kwargs  # s0 * 0.5: a SymFloat
    if getattr(target, "__module__", None) in ("_operator", "math", "builtins") and not any(
            isinstance(a, Tensor) for a in ex_args):  # arithmetic on the symbols themselves
        return ex_args, ex_kwargs
    new_args = [sub(a) for a in ex_args]
    new_kwargs = {k: sub(v) for k, v in ex_kwargs.items()}
    if not found:
        return ex_args, ex_kwargs
    name = target if isinstance(target, str) else getattr(target, "__name__", "")
    if any(v.pytype is int and not v.is_backed for v in found) and \
            name not in _VALUE_OPS | _FILL_OPS and not all(is_sym_scalar(a) or isinstance(
                a, (int, float)) for a in ex_args):
        unimplemented(f"an unbacked symbol used by {name}() (as a size?): data-dependent "
                      "sizes are not supported")
    return new_args, new_kwargs


# ops taking a number as a *value* to fill with (not a size)
_FILL_OPS = frozenset({"full", "full_like", "new_full", "fill_", "fill", "where", "lerp",
                       "clamp_", "masked_fill", "masked_fill_", "scalar_tensor"})


class GraphArg:
    def __init__(self, source, example: Tensor, node, fake, vt):
        self.source, self.example, self.node, self.fake, self.vt = source, example, node, fake, vt


class OutputGraph(AutomaticDynamic, BoundSymbols):
    def __init__(self, f_globals: dict, code):
        from .guards import GuardSet

        self.f_globals = f_globals
        self.code = code
        self.graph = Graph()
        self.graphargs: list[GraphArg] = []  # every tensor read from the frame
        self.graph_inputs: list[GraphArg] = []  # those the finished graph takes, in order
        self.source_cache: dict = {}
        self.guards = GuardSet()
        self.fake_mode = FakeTensorMode(allow_non_fake_inputs=True)
        self.globals_to_install: dict = {}
        self.grad_enabled = _dispatch_state.grad_enabled
        self.initial_grad_enabled = self.grad_enabled
        self.final_grad_enabled = self.grad_enabled  # set_grad_enabled(b) outside a `with`
        self.guards.add("GRAD_MODE", None, value=self.grad_enabled)
        self.guards.add("DEFAULT_DTYPE", None, value=_dtype.get_default_dtype())
        self.compiled_fn_name: str | None = None
        self.gm: GraphModule | None = None
        self.output_vts: list[TensorVariable] = []
        self.instruction_count = 0
        self._globals_dicts: dict[int, str] = {}
        # dynamic shapes: the symbols, the compile's `dynamic=` setting, and what earlier
        # compiles of this code saw (automatic dynamic reads it)
        self.shape_env = ShapeEnv()
        self.dynamic = None
        self.frame_state: dict = {}
        self.int_inputs: dict = {}  # "int <source>" -> value seen (or "dynamic")
        self.nn_module_sources: set[str] = set()  # sources of the modules the trace read
        self.side_effects = SideEffects()  # mutations to replay after the graph
        self.scalar_env = ScalarEnv()  # float and unbacked symbols (symbolic_scalars.py)
        self.expr_to_proxy: dict = {}  # a symbolic int's expression -> its tracker

    def globals_dict_name(self, f_globals: dict) -> str:
        """A global of the frame's module holding another module's globals (for sources of
        globals read by inlined functions from other modules), named after that module as
        torch names it: ``__import_minitorch_compile_dot_nn_dot_modules_dot_linear``."""
        name = self._globals_dicts.get(id(f_globals))
        if name is None:
            mod = str(f_globals.get("__name__", "module"))
            base = "__import_" + re.sub(r"\W", "_", mod.replace(".", "_dot_"))
            name, n = base, 0
            while self.f_globals.get(name, f_globals) is not f_globals:  # another module's
                n += 1
                name = f"{base}_{n}"
            self._globals_dicts[id(f_globals)] = name
            self.globals_to_install[name] = f_globals
            self.f_globals.setdefault(name, f_globals)  # guards read it before installation
        return name

    # ---------------------------------------------------------------- inputs
    def add_graph_input(self, tx, source, value: Tensor) -> TensorVariable:
        from ..nn import Parameter

        for arg in self.graphargs:  # the same tensor under a second source (f(x, x), tied
            if arg.example is value:  # weights): one input, and a guard that they stay one
                self.guards.add("DUPLICATE_INPUT", source, value=arg.source)
                return arg.vt
        dims = self.dynamic_dims(source, value)
        sym = {d: self.shape_env.create_symbol(source.name(), d, value._data.shape[d])
               for d in dims}
        sizes = tuple(sym.get(d, s) for d, s in enumerate(value._data.shape))
        self.guards.add("TENSOR_MATCH", source, value=(value, tuple(sym), sizes))
        name = source.placeholder_name()
        node = self.new_placeholder(name)
        fake = self.fake_mode.from_tensor(value, sym)
        node.meta["example_value"] = fake
        node.meta["grapharg"] = source
        self.lift_size_symbols(source, value, sizes, node)  # s0 before l_x_ (bound_symbols.py)
        cls = Parameter if isinstance(value, Parameter) else Tensor
        vt = TensorVariable(node, fake, source, class_type=cls)
        self.graphargs.append(GraphArg(source, value, node, fake, vt))
        return vt

    def new_placeholder(self, name: str):
        """A placeholder after the existing ones (graph inputs come first, in the order they
        were found), before the first op."""
        first_op = next((n for n in self.graph.nodes if n.op != "placeholder"), None)
        if first_op is None:
            return self.graph.placeholder(name)
        with self.graph.inserting_before(first_op):
            return self.graph.placeholder(name)

    # ---------------------------------------------------------------- nodes
    def example_of(self, vt):
        """The example value of a tracker: fake tensors, constants, nested containers."""
        if isinstance(vt, TensorVariable):
            return vt.example_value
        if isinstance(vt, SymNodeVariable):
            return vt.sym
        if isinstance(vt, SliceVariable):  # symbolic bounds stay symbolic
            return slice(*(self.example_of(p) for p in vt.parts))
        if isinstance(vt, BaseListVariable):
            return vt.python_type()(self.example_of(i) for i in vt.items) \
                if vt.python_type() is not range else vt.as_python_constant()
        if isinstance(vt, ConstDictVariable):
            return {k: self.example_of(v) for k, v in vt.items.items()}
        try:
            return vt.as_python_constant()
        except NotImplementedError:
            unimplemented(f"{vt} cannot be an argument of a graph operation")

    def node_arg(self, vt):
        """The fx argument for a tracker: its node, or a constant (nested as needed)."""
        if isinstance(vt, (TensorVariable, SymNodeVariable)):
            return vt.proxy
        if isinstance(vt, SliceVariable):
            return slice(*(self.node_arg(p) for p in vt.parts))
        if isinstance(vt, BaseListVariable):
            items = [self.node_arg(i) for i in vt.items]
            t = vt.python_type()
            return tuple(items) if issubclass(t, tuple) else (
                vt.as_python_constant() if t is range else items)
        if isinstance(vt, ConstDictVariable):
            return {k: self.node_arg(v) for k, v in vt.items.items()}
        if isinstance(vt, VariableTracker):
            try:
                return vt.as_python_constant()
            except NotImplementedError:
                unimplemented(f"{vt} cannot be an argument of a graph operation")
        return vt

    def call(self, tx, kind: str, target, args: list, kwargs: dict):
        """Add ``target(*args, **kwargs)`` to the graph; return the tracker of its result."""
        if any(has_ndarray(a) for a in (*args, *kwargs.values())):  # only numpy's table may
            unimplemented(f"{getattr(target, '__name__', target)} of an ndarray is not "
                          "traced")  # put an array in the graph (variables/numpy.py)
        ex_args = [self.example_of(a) for a in args]
        ex_kwargs = {k: self.example_of(v) for k, v in kwargs.items()}
        ex_args = _value_operands(kind, target, args, ex_args)
        ex_args, ex_kwargs = _scalar_operands(target, ex_args, ex_kwargs, self.scalar_env)
        try:
            if target in MATH_FNS and len(ex_args) == 1 and (
                    is_symbolic(ex_args[0]) or is_sym_scalar(ex_args[0])):
                example = sym_math(target, ex_args[0], self.scalar_env)
            else:
                example = self._fake_run(kind, target, ex_args, ex_kwargs)
        except Exception as e:  # eager mode will raise the same error for the user
            name = target if isinstance(target, str) else getattr(target, "__name__", target)
            err = Unsupported(f"{name} raised {type(e).__name__} while tracing: {e}")
            err.user_error = e  # fullgraph=True re-raises it: the error eager mode gives
            raise err from e
        known = self.hash_consed(example)  # a symbolic int computed before: that node
        if known is not None:
            return known
        node = self.graph.create_node(kind, target, tuple(self.node_arg(a) for a in args),
                                      {k: self.node_arg(v) for k, v in kwargs.items()})
        node.meta["example_value"] = example
        node.meta["stack_trace"] = tx.current_user_line()
        vt = wrap_fx_proxy(tx, node, example)
        self.remember_symbolic(vt)
        return vt

    def _fake_run(self, kind, target, ex_args, ex_kwargs):
        with self.fake_mode:
            if kind == "call_method":
                return getattr(ex_args[0], target)(*ex_args[1:], **ex_kwargs)
            return target(*ex_args, **ex_kwargs)

    def set_grad_mode(self, tx, mode: bool) -> None:
        """Switch grad mode for the ops traced next, and record the switch in the graph."""
        if mode == self.grad_enabled:
            return
        last = next(reversed(self.graph.nodes), None)
        if last is not None and last.op == "call_function" and last.target is \
                _set_grad_enabled and not last.users:  # a switch with no op after it, undone
            self.graph.erase_node(last)  # (as torch 2.13: `with no_grad(): with enable_grad()`
        else:                            # ends in no switch at all)
            node = self.graph.call_function(_set_grad_enabled, (mode,))
            node.meta["stack_trace"] = tx.current_user_line()
        self.grad_enabled = mode
        _dispatch_state.grad_enabled = mode

    def restore_global_state(self) -> None:
        _dispatch_state.grad_enabled = self.initial_grad_enabled

    # ---------------------------------------------------------------- finishing
    def count_calls(self) -> int:
        """The call nodes of the graph so far (torch's ``count_calls``)."""
        return sum(1 for n in self.graph.nodes if n.op.startswith("call"))

    def has_ops(self) -> bool:
        """Anything to compile?  Grad-mode switches alone are not (an optimizer step that
        found no grads is ``with no_grad(): pass``); the transformed code sets the final mode
        itself."""
        return any(n.op not in ("placeholder", "output") and n.target is not _set_grad_enabled
                   for n in self.graph.nodes)

    def compile_subgraph(self, tx, return_vt, backend) -> None:
        """Make the graph's outputs, compile it with the backend, install it as a global."""
        self.final_grad_enabled = self.grad_enabled
        if self.grad_enabled != self.initial_grad_enabled:  # the graph restores what it
            self.set_grad_mode(tx, self.initial_grad_enabled)  # found; the frame's code then
            # switches to final_grad_enabled, as the user's code did (see transformed_code)
        outputs: list[TensorVariable] = []
        seen: set = set()

        def collect(vt):
            if isinstance(vt, (TensorVariable, SymNodeVariable)):
                # (a float symbol leaves as a scalar_tensor per tracker, as torch's as_tensor)
                key = id(vt) if is_float_output(vt) else id(vt.proxy)
                if vt.proxy.op != "placeholder" and key not in seen:
                    seen.add(key)
                    outputs.append(vt)
            elif isinstance(vt, BaseListVariable):
                for i in vt.items:
                    collect(i)
            elif isinstance(vt, ConstDictVariable):
                for i in vt.items.values():
                    collect(i)
            elif isinstance(vt, ListIteratorVariable):  # live at a break: rebuilt from these
                for i in vt.items[vt.index:]:
                    collect(i)
            elif hasattr(vt, "obj") and isinstance(vt.obj, VariableTracker):
                collect(vt.obj)  # a bound attribute (``t.item``) on the stack at a break

        collect(return_vt)
        for vt in self.side_effects.values():  # tensors the replay stores
            collect(vt)
        self.output_vts = outputs
        if not self.has_ops():
            return
        if getattr(tx, "graph_break", None) is None:  # (at a break torch keeps the graph)
            self.check_float_inputs_used()
        self.graph.output(tuple(output_node(self.graph, v, self.fake_mode) for v in outputs))
        self.remove_trivially_dead_nodes()
        self.prune_unused_inputs()
        self.gm = GraphModule({}, self.graph)
        example_inputs = [a.example for a in self.graph_inputs]
        compiled = backend(self.gm, example_inputs)
        self.compiled_fn_name = f"__compiled_fn_{next(_compiled_fn_counter)}"
        self.globals_to_install[self.compiled_fn_name] = compiled

    def check_float_inputs_used(self) -> None:
        """torch's ``tensorify_python_scalars``: a float that became a graph input (automatic
        dynamic) but that no tensor op reads — the graph would only compute Python floats
        (``item``, arithmetic) to return them — is specialized instead: the frame is traced
        again with those floats as constants (``TensorifyScalarRestartAnalysis``), so it
        makes no graph at all, as torch's does.  Only for a graph that ends at the frame's
        return: at a graph break torch 2.13 keeps the graph (``y = k * 2; print(y)``: item,
        mul, scalar_tensor) — or, for an input float passed straight to the resume function,
        compiles an empty one, which mtc does not (its graph holds item and scalar_tensor)."""
        floats = [a for a in self.graphargs if isinstance(a.source, FloatTensorSource)]
        if not floats or any(_tensor_op(n) for n in self.graph.nodes):
            return
        raise TensorifyScalarRestartAnalysis({a.source.base.name() for a in floats})

    def remove_trivially_dead_nodes(self) -> None:
        """torch's "miniature DCE pass, but only for obviously trivial operations"
        (``remove_unused_graphargs``): an unused ``getattr``, ``getitem``, size/stride/``item``
        access or arithmetic on symbolic numbers is erased; an unused tensor op stays in the
        graph the backend is given (``a + 1`` whose result the program drops), as in torch
        2.13 — the backend (AOTAutograd, Inductor) removes it.  Reverse order, so a chain of
        such nodes goes at once."""
        for node in reversed(list(self.graph.nodes)):
            if not node.users and _trivially_dead(node):
                self.graph.erase_node(node)

    def install_globals(self) -> None:
        self.f_globals.update(self.globals_to_install)

    @property
    def input_sources(self) -> list:
        return [a.source for a in self.graph_inputs]


_ACCESSORS = ("size", "stride", "storage_offset", "item")  # torch's is_accessor_node


def _is_sym_value(v) -> bool:
    return is_symbolic(v) or is_sym_scalar(v)


def _is_sym_arg(a) -> bool:
    if isinstance(a, (int, float, bool)):
        return True
    return hasattr(a, "meta") and _is_sym_value(a.meta.get("example_value"))


def _trivially_dead(node) -> bool:
    """Unused nodes torch's Dynamo erases (``remove_unused_graphargs`` with
    ``is_accessor_node`` and ``is_symnode_compute_node``); everything else is kept."""
    if node.op == "get_attr":
        return True
    if node.op == "call_function" and node.target is operator.getitem:
        return True
    if node.op == "call_method" and node.target in _ACCESSORS and node.args and \
            isinstance(getattr(node.args[0], "meta", {}).get("example_value"), Tensor):
        return True
    if node.op == "call_function" and getattr(node.target, "__name__", "") == "sym_size":
        return True
    return node.op == "call_function" and _is_sym_value(node.meta.get("example_value")) and \
        all(_is_sym_arg(a) for a in (*node.args, *node.kwargs.values()))


def _tensor_op(node) -> bool:
    """A call whose result is a tensor (not the ``item``/float arithmetic of a float input, nor
    a grad-mode switch)."""
    from .._tensor import Tensor

    return node.op.startswith("call") and node.target is not _set_grad_enabled and \
        isinstance(node.meta.get("example_value"), Tensor)
