"""Graph -> Python source (``torch/fx/graph.py: CodeGen``).

One line per node, in graph order::

    placeholder    -> a parameter of ``forward``
    get_attr       -> name = self.path.to.attr
    call_function  -> name = target(args)        (``a + b`` / ``a[i]`` for operator functions)
    call_method    -> name = obj.method(args)
    call_module    -> name = self.path.to.module(args)
    output         -> return value

After the last use of a value the line ends with ``;  x = None`` so the generated code frees
intermediates as early as torch's does.  ``verbose=True`` annotates each value with its dtype
and shape (``cos: "f32[5, 5, 5]" = ...``).  Graphs made by ``make_fx`` keep the traced
function's nested arguments: their code flattens inputs and unflattens the output (pytree).
"""

from __future__ import annotations

import math
import operator
from dataclasses import dataclass

from . import _pytree
from .graph import target_repr
from .node import Node

_INFIX = {operator.add: "+", operator.sub: "-", operator.mul: "*", operator.truediv: "/",
          operator.floordiv: "//", operator.mod: "%", operator.pow: "**", operator.matmul: "@",
          operator.lt: "<", operator.le: "<=", operator.gt: ">", operator.ge: ">=",
          operator.eq: "==", operator.ne: "!=", operator.and_: "&", operator.or_: "|",
          operator.xor: "^", operator.lshift: "<<", operator.rshift: ">>"}
_PREFIX = {operator.neg: "-", operator.pos: "+", operator.invert: "~", operator.not_: "not "}

DTYPE_ABBR = {"float16": "f16", "float32": "f32", "float64": "f64", "int32": "i32",
              "int64": "i64", "uint8": "u8", "int8": "i8", "int16": "i16", "bool": "b8"}


@dataclass
class PythonCode:
    src: str
    globals: dict


def type_str(val) -> str | None:
    """``f32[5, 5, 5]`` for a tensor value (also symbolic sizes), ``Sym(s0)`` / ``Sym(zuf0)``
    for a symbolic int, float or unbacked number, else None."""
    if hasattr(val, "expr") and (hasattr(val, "pytype") or hasattr(val, "hint")):
        return f"Sym({val})"  # a SymScalar (symbolic_scalars.py) or a SymInt
    dt = getattr(val, "dtype", None)
    shape = getattr(val, "shape", None)
    if dt is None or shape is None or not hasattr(dt, "name"):
        return None
    return f"{DTYPE_ABBR.get(dt.name, dt.name)}[{', '.join(str(s) for s in shape)}]"


def attr_expr(root: str, path: str) -> str:
    expr = root
    for part in path.split("."):
        expr = f"{expr}.{part}" if part.isidentifier() else f"getattr({expr}, {part!r})"
    return expr


class _Emitter:
    def __init__(self, graph, root_module: str, verbose: bool):
        import minitorch_compile as mtc

        self.graph = graph
        self.root = root_module
        self.verbose = verbose
        self.globals = {"mtc": mtc, "operator": operator, "device": mtc.device,
                        "inf": math.inf, "nan": math.nan, "fx_pytree": _pytree,
                        "pytree": _pytree}

    def add_global(self, hint: str, obj) -> str:
        for k, v in self.globals.items():
            if v is obj:
                return k
        base = "".join(c if c.isalnum() or c == "_" else "_" for c in hint) or "_obj"
        name, i = base, 0
        taken = {n.name for n in self.graph.nodes}  # a global must not be shadowed by a value
        while name in self.globals or name in taken:
            i += 1
            name = f"{base}_{i}"
        self.globals[name] = obj
        return name

    def arg(self, a) -> str:
        import minitorch_compile as mtc

        if isinstance(a, Node):
            return a.name
        if isinstance(a, tuple) and hasattr(a, "_fields"):
            cls = self.add_global(type(a).__name__, type(a))
            return f"{cls}({', '.join(self.arg(x) for x in a)})"
        if isinstance(a, tuple):
            inner = ", ".join(self.arg(x) for x in a)
            return f"({inner},)" if len(a) == 1 else f"({inner})"
        if isinstance(a, list):
            return f"[{', '.join(self.arg(x) for x in a)}]"
        if isinstance(a, dict):
            return "{" + ", ".join(f"{k!r}: {self.arg(v)}" for k, v in a.items()) + "}"
        if isinstance(a, slice):
            return f"slice({self.arg(a.start)}, {self.arg(a.stop)}, {self.arg(a.step)})"
        if a is Ellipsis:
            return "..."
        if a is None or type(a) in (bool, int, str, float) or \
                isinstance(a, (mtc.dtype, mtc.device)):
            return repr(a)  # (an int/str subclass — an IntEnum member — reprs as no Python)
        return self.add_global(type(a).__name__.lower(), a)

    def call_args(self, args, kwargs) -> str:
        parts = [self.arg(a) for a in args] + [f"{k} = {self.arg(v)}" for k, v in kwargs.items()]
        return ", ".join(parts)

    def target(self, t) -> str:
        import builtins

        r = target_repr(t)
        if r.startswith(("mtc.", "operator.")):
            return r
        if r.isidentifier() and getattr(builtins, r, None) is t:
            return r
        return self.add_global(getattr(t, "__name__", "fn"), t)

    def annotation(self, n: Node) -> str:
        if not self.verbose:
            return ""
        ts = type_str(n.meta.get("val", n.meta.get("example_value")))
        return f': "{ts}"' if ts else ""

    def expr(self, n: Node) -> str:
        if n.op == "get_attr":
            return attr_expr(self.root, n.target)
        if n.op == "call_method":
            obj, *rest = n.args
            return f"{self.arg(obj)}.{n.target}({self.call_args(rest, n.kwargs)})"
        if n.op == "call_module":
            return f"{attr_expr(self.root, n.target)}({self.call_args(n.args, n.kwargs)})"
        t = n.target
        if t in _INFIX and len(n.args) == 2 and not n.kwargs:
            return f"{self.arg(n.args[0])} {_INFIX[t]} {self.arg(n.args[1])}"
        if t in _PREFIX and len(n.args) == 1 and not n.kwargs:
            return f"{_PREFIX[t]}{self.arg(n.args[0])}"
        if t is operator.getitem and len(n.args) == 2 and not n.kwargs:
            return f"{self.arg(n.args[0])}[{self.arg(n.args[1])}]"
        return f"{self.target(t)}({self.call_args(n.args, n.kwargs)})"


def python_code(graph, root_module: str = "self", *, verbose: bool = False) -> PythonCode:
    em = _Emitter(graph, root_module, verbose)
    nodes = list(graph.nodes)
    last_use: dict[Node, Node] = {}
    for n in nodes:
        for inp in n.all_input_nodes:
            last_use[inp] = n
    frees: dict[Node, list[Node]] = {}
    for value, user in last_use.items():
        if user.op != "output":
            frees.setdefault(user, []).append(value)

    params, body = [], []
    placeholders = [n for n in nodes if n.op == "placeholder"]
    for n in placeholders:
        p = n.target + em.annotation(n) if not graph._pytree_info else n.target
        if n.args:
            p += f" = {em.arg(n.args[0])}"
        params.append(p)
    pytree_info = graph._pytree_info
    if pytree_info:
        orig_args = pytree_info[0]
        if verbose:
            body.append("".join(f'{n.name}{em.annotation(n)}; ' for n in placeholders))
        names = "".join(f"{n.name}, " for n in placeholders)
        if placeholders:  # a function of no inputs has nothing to unpack
            body.append(f"{names}= fx_pytree.tree_flatten_spec([{', '.join(orig_args)}], "
                        f"{root_module}._in_spec)")
        params = list(orig_args)
    for n in nodes:
        if n.op == "placeholder":
            continue
        if n.op == "output":
            if pytree_info:
                flat = _pytree.tree_leaves(n.args[0])
                body.append(f"return pytree.tree_unflatten([{', '.join(em.arg(x) for x in flat)}"
                            f"], {root_module}._out_spec)")
            else:
                body.append(f"return {em.arg(n.args[0])}")
            continue
        line = f"{n.name}{em.annotation(n)} = {em.expr(n)}"
        dead = frees.get(n, [])
        if not n.users:
            dead = dead + [n]
        if dead:
            line += ";  " + " = ".join(d.name for d in dead) + " = None"
        body.append(line)
    if not body or not body[-1].startswith("return"):
        body.append("return None")
    sig = ", ".join([root_module] + params)
    src = f"def forward({sig}):\n" + "".join(f"    {b}\n" for b in body)
    return PythonCode(src, em.globals)
