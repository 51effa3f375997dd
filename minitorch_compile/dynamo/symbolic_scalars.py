"""Symbolic scalars: ``SymFloat`` and unbacked symbols (``fx/experimental/symbolic_shapes.py``).

``SymInt`` (in ``symbolic_shapes.py``) stands for a *size*.  This module adds the two other
kinds of symbolic numbers torch 2.13's Dynamo traces, each a small expression plus — when it is
known — a *hint*, the value it has for the inputs being traced:

==================  =========  ==========================================================
made by             name       hint
==================  =========  ==========================================================
a float argument    ``zf0``    its value (*backed*): a float that changed between calls
that changed                   becomes a graph input instead of a constant (automatic
                               dynamic for floats)
``t.item()`` of a   ``zuf0``   none (*unbacked*): the value is computed by the graph, so
float tensor                   nothing is known while tracing
``t.item()`` of an  ``u0``     none (*unbacked*)
int tensor
==================  =========  ==========================================================

(``.item()`` stays in the graph only with ``mtc._dynamo.config.capture_scalar_outputs = True``,
as in torch; otherwise it is a graph break.)

Arithmetic builds new expressions (``2.0*zf0 + 1.0``).  A *decision* — a comparison, ``bool()``,
``float()`` — is answered with the hint and recorded as a guard, as for ``SymInt``.  An
unbacked symbol has no hint, so a decision on it is impossible: it raises
``GuardOnDataDependentSymNode``, which the tracer turns into a graph break (torch's
"data-dependent guard").  A comparison of an unbacked symbol is *not* a decision — it is traced
too, and gives an unbacked ``SymBool`` (``zuf0 > 0.0``); branching on that bool is.

Invariants: a symbol with a hint never needs its graph node to be decided; one without is
never decided at all.  Guards on float symbols read the source (``L['lr'] > 1.0``).
"""

from __future__ import annotations

import itertools
import math
import operator
import re

_ARITH = {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv,
          "//": operator.floordiv, "%": operator.mod, "**": operator.pow}
_COMPARE = {"==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le,
            ">": operator.gt, ">=": operator.ge}
_FLOAT_SYMBOL = re.compile(r"\bzf(\d+)\b")


class GuardOnDataDependentSymNode(RuntimeError):
    """A decision (``if``, ``float()``, a size) was asked of an unbacked symbol."""


class SymScalar:
    """A number known symbolically (``expr``) and, when backed, concretely (``hint``).

    ``pytype`` is the Python type it stands for: ``float``, ``int`` (unbacked ints only — a
    backed int is a ``SymInt``) or ``bool`` (a traced comparison of an unbacked symbol)."""

    __slots__ = ("expr", "hint", "env", "pytype")

    def __init__(self, expr: str, hint, env: ScalarEnv, pytype: type):
        self.expr, self.hint, self.env, self.pytype = expr, hint, env, pytype

    @property
    def is_backed(self) -> bool:
        return self.hint is not None

    # ---------------------------------------------------------------- arithmetic
    def _binary(self, other, op: str, reverse: bool = False):
        if not _is_number(other):
            return NotImplemented
        a, b = (other, self) if reverse else (self, other)
        ha, hb = _hint_of(a), _hint_of(b)
        hint = None if ha is None or hb is None else _ARITH[op](ha, hb)
        pytype = float if op == "/" or float in (_type_of(a), _type_of(b)) else int
        return SymScalar(f"({_expr_of(a)} {op} {_expr_of(b)})", hint, self.env, pytype)

    def __add__(self, o): return self._binary(o, "+")
    def __radd__(self, o): return self._binary(o, "+", True)
    def __sub__(self, o): return self._binary(o, "-")
    def __rsub__(self, o): return self._binary(o, "-", True)
    def __mul__(self, o): return self._binary(o, "*")
    def __rmul__(self, o): return self._binary(o, "*", True)
    def __truediv__(self, o): return self._binary(o, "/")
    def __rtruediv__(self, o): return self._binary(o, "/", True)
    def __floordiv__(self, o): return self._binary(o, "//")
    def __rfloordiv__(self, o): return self._binary(o, "//", True)
    def __mod__(self, o): return self._binary(o, "%")
    def __rmod__(self, o): return self._binary(o, "%", True)
    def __pow__(self, o): return self._binary(o, "**")
    def __rpow__(self, o): return self._binary(o, "**", True)

    def __neg__(self):
        hint = None if self.hint is None else -self.hint
        return SymScalar(f"(-{self.expr})", hint, self.env, self.pytype)

    def __pos__(self):
        return self

    def __abs__(self):
        hint = None if self.hint is None else abs(self.hint)
        return SymScalar(f"Abs({self.expr})", hint, self.env, self.pytype)

    # ---------------------------------------------------------------- decisions
    def _compare(self, other, op: str, reverse: bool = False):
        if not _is_number(other):
            return NotImplemented
        a, b = (other, self) if reverse else (self, other)
        ha, hb = _hint_of(a), _hint_of(b)
        text = f"{_expr_of(a)} {op} {_expr_of(b)}"
        if ha is None or hb is None:  # traced, not decided: an unbacked SymBool
            return SymScalar(f"({text})", None, self.env, bool)
        result = _COMPARE[op](ha, hb)
        self.env.record(text, result)
        return result

    def __eq__(self, o): return self._compare(o, "==")
    def __ne__(self, o): return self._compare(o, "!=")
    def __lt__(self, o): return self._compare(o, "<")
    def __le__(self, o): return self._compare(o, "<=")
    def __gt__(self, o): return self._compare(o, ">")
    def __ge__(self, o): return self._compare(o, ">=")

    def _decide(self, what: str):
        if self.hint is None:
            raise GuardOnDataDependentSymNode(
                f"could not guard on data-dependent expression {self} ({what}): the value is "
                "only known when the graph runs")
        self.env.record(f"{self.expr} == {self.hint!r}", True)
        return self.hint

    def __bool__(self):
        if self.pytype is bool:
            return bool(self._decide("bool()"))
        return self != 0 if self.hint is not None else bool(self._decide("bool()"))

    def __float__(self):
        return float(self._decide("float()"))

    def __int__(self):
        return int(self._decide("int()"))

    def __index__(self):
        if self.pytype is float:
            raise TypeError("'float' object cannot be interpreted as an integer")
        return int(self._decide("used as an int"))

    def __hash__(self):
        return hash(self.expr)

    def __str__(self) -> str:
        from .symbolic_shapes import strip_outer_parens

        return strip_outer_parens(self.expr)

    __repr__ = __str__


def _is_number(v) -> bool:
    from .symbolic_shapes import SymInt

    return isinstance(v, (int, float, SymScalar, SymInt))


def _hint_of(v):
    if isinstance(v, SymScalar):
        return v.hint
    return getattr(v, "hint", v)  # a SymInt's hint, or the number


def _expr_of(v) -> str:
    if isinstance(v, (bool, int, float)):
        return repr(v)
    return v.expr


def _type_of(v) -> type:
    if isinstance(v, SymScalar):
        return v.pytype
    return float if isinstance(v, float) else int


# ``math`` functions traced on symbolic numbers (torch: ``torch._sym_cos`` ...): float results
MATH_FNS = {getattr(math, n) for n in ("cos", "sin", "tan", "acos", "asin", "atan", "cosh",
                                       "sinh", "tanh", "exp", "log", "log2", "log10", "sqrt")}


def sym_math(fn, v, env: ScalarEnv) -> SymScalar:
    """``math.cos(zf0)``: a float symbol (backed when ``v`` is)."""
    hint = _hint_of(v)
    return SymScalar(f"{fn.__name__}({_expr_of(v)})", None if hint is None else fn(hint), env,
                     float)


def promote(v, env: ScalarEnv):
    """A ``SymInt`` (a size, an int argument) meeting a float: the same expression and hint as
    a ``SymScalar``, whose arithmetic with floats gives ``SymFloat``s."""
    if hasattr(v, "hint") and not isinstance(v, SymScalar):
        return SymScalar(v.expr, v.hint, env, int)
    return v


def is_sym_scalar(v) -> bool:
    return isinstance(v, SymScalar)


def representative(v):
    """A plain number standing for ``v`` in a fake-tensor run (only its type matters there):
    the hint when there is one, else 1.0 / 1 / True."""
    if not isinstance(v, SymScalar):
        return v
    if v.hint is not None:
        return v.hint
    return {float: 1.0, int: 1, bool: True}[v.pytype]


class ScalarEnv:
    """The float and unbacked symbols of one compilation, and the guards on float symbols
    (the ``ShapeEnv`` holds those on sizes)."""

    def __init__(self):
        self.float_sources: dict[str, str] = {}  # zf0 -> L['lr']
        self.guards: list[str] = []
        self._seen: set = set()
        self._unbacked_float = itertools.count()
        self._unbacked_int = itertools.count()

    def create_float_symbol(self, source_name: str, hint: float) -> SymScalar:
        """A backed SymFloat for a float argument that changed between compiles."""
        name = f"zf{len(self.float_sources)}"
        self.float_sources[name] = source_name
        return SymScalar(name, float(hint), self, float)

    def create_unbacked(self, pytype: type) -> SymScalar:
        """The result of ``.item()``: ``zuf0`` for a float, ``u0`` for an int."""
        if pytype is float:
            return SymScalar(f"zuf{next(self._unbacked_float)}", None, self, float)
        return SymScalar(f"u{next(self._unbacked_int)}", None, self, int)

    def record(self, expr: str, result: bool) -> None:
        text = expr if result else f"not ({expr})"
        if text not in self._seen:
            self._seen.add(text)
            self.guards.append(text)

    def guard_code(self, shape_env=None) -> list[tuple[str, str]]:
        """``(code over L, description)``: each float input is not NaN (torch's implicit guard:
        NaN compares unequal to everything), then every decision taken on a float symbol."""
        out = [(f"{src} == {src}", f"not math.isnan({src})")
               for src in self.float_sources.values()]
        for g in self.guards:
            code = _FLOAT_SYMBOL.sub(lambda m: self.float_sources[m.group(0)], g)
            if shape_env is not None and shape_env.symbols:
                from .symbolic_shapes import _SYMBOL

                code = _SYMBOL.sub(lambda m: shape_env.source_expr(m.group(0)), code)
            out.append((code, g))
        return out


def output_node(graph, vt, fake_mode):
    """The node the graph returns for the output ``vt``: a symbolic float leaves the graph as
    a 0-d float64 tensor (``scalar_tensor``, as torch 2.13's graphs return it; the transformed
    code reads it back with ``.item()``), anything else as is."""
    from .. import float64, scalar_tensor

    sym = getattr(vt, "sym", None)
    if not (is_sym_scalar(sym) and sym.pytype is float):
        return vt.proxy
    node = graph.call_function(scalar_tensor, (vt.proxy,), {"dtype": float64})
    with fake_mode:
        node.meta["example_value"] = scalar_tensor(representative(sym), dtype=float64)
    return node


def is_float_output(vt) -> bool:
    sym = getattr(vt, "sym", None)
    return is_sym_scalar(sym) and sym.pytype is float
