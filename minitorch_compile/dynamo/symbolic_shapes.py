"""Symbolic sizes: ``SymInt`` and the ``ShapeEnv`` (``torch/fx/experimental/symbolic_shapes.py``).

A dynamic dimension is traced as a *symbol* (``s0``) instead of a number.  A ``SymInt`` is a
small expression over symbols (``s0``, ``2*s0``, ``(s0 + s1)``) together with its *hint* — the
value it has for the inputs being traced.  Arithmetic builds new expressions (``+ - * // %``);
a *decision* — a comparison, ``bool()``, or turning it into a plain ``int`` — is answered with
the hint and recorded as a **guard** in the ``ShapeEnv``, so the compiled code is only reused
when the same decision would be taken again::

    x.shape[0] == 1         ->  False, no guard needed: every symbol is >= 2
    s0 == s1                ->  answered by the hints, guarded (s0 == s1 or s0 != s1)
    range(x.shape[0])       ->  specialised: guard s0 == 10, and 10 is used

Rules, as torch's: sizes 0 and 1 are never symbols (they are special to broadcasting);
every symbol is guarded ``>= 2``; two dynamic dimensions with the same size share one symbol
("duck sizing"), guarded equal.
"""

from __future__ import annotations

import operator
import re

_SYMBOL = re.compile(r"\bs(\d+)\b")


class SymInt:
    """An integer known symbolically (``expr``) and concretely (``hint``)."""

    __slots__ = ("expr", "hint", "env", "lo")

    def __init__(self, expr: str, hint: int, env: ShapeEnv, lo: int | None = None):
        self.expr = expr  # always safe to embed: atoms or parenthesised
        self.hint = int(hint)
        self.env = env
        self.lo = lo  # a lower bound, when known (symbols: 2)

    # ---------------------------------------------------------------- arithmetic
    def _binary(self, other, op: str, fn, lo_fn, reverse=False):
        if isinstance(other, bool) or not isinstance(other, (int, SymInt)):
            return NotImplemented
        a, b = (other, self) if reverse else (self, other)
        ea, eb = _expr(a), _expr(b)
        if op in ("//", "%") and _is_product(eb):  # a // (b*c), not (a // b)*c
            eb = f"({eb})"
        hint = fn(_hint(a), _hint(b))
        lo = lo_fn(_lo(a), _lo(b))
        text = f"{ea}*{eb}" if op == "*" else f"({ea} {op} {eb})"
        return SymInt(text, hint, self.env, lo)

    def __add__(self, other):
        if isinstance(other, int) and not isinstance(other, bool) and other == 0:
            return self
        return self._binary(other, "+", operator.add, _lo_add)

    def __radd__(self, other):
        return self.__add__(other)

    def __sub__(self, other):
        if isinstance(other, int) and not isinstance(other, bool) and other == 0:
            return self
        return self._binary(other, "-", operator.sub, lambda a, b: None)

    def __rsub__(self, other):
        return self._binary(other, "-", operator.sub, lambda a, b: None, reverse=True)

    def __mul__(self, other):
        if isinstance(other, int) and not isinstance(other, bool) and other == 1:
            return self
        return self._binary(other, "*", operator.mul, _lo_mul)

    def __rmul__(self, other):
        return self.__mul__(other)

    def __floordiv__(self, other):
        if isinstance(other, int) and not isinstance(other, bool) and other == 1:
            return self
        out = self._binary(other, "//", operator.floordiv, _lo_floordiv)
        if type(other) is int and other >= 1 and self.lo is not None and self.lo >= 0:
            out.lo = self.lo // other  # a // k >= lo // k for a constant k (s0*4 // 2 >= 4)
        return out

    def __rfloordiv__(self, other):
        return self._binary(other, "//", operator.floordiv, _lo_floordiv, reverse=True)

    def __mod__(self, other):
        return self._binary(other, "%", operator.mod, _lo_mod)

    def __rmod__(self, other):
        return self._binary(other, "%", operator.mod, _lo_mod, reverse=True)

    def __neg__(self):
        return SymInt(f"(-{self.expr})", -self.hint, self.env, None)

    def __pos__(self):
        return self

    # ---------------------------------------------------------------- decisions
    def _compare(self, other, op: str, fn):
        if isinstance(other, bool) or not isinstance(other, (int, SymInt)):
            return NotImplemented
        result = fn(self.hint, _hint(other))
        if self.env.implied(self, other, op) is not None:
            return result
        self.env.record(f"{self.expr} {op} {_expr(other)}", result)
        return result

    def __eq__(self, other):
        return self._compare(other, "==", operator.eq)

    def __ne__(self, other):
        return self._compare(other, "!=", operator.ne)

    def __lt__(self, other):
        return self._compare(other, "<", operator.lt)

    def __le__(self, other):
        return self._compare(other, "<=", operator.le)

    def __gt__(self, other):
        return self._compare(other, ">", operator.gt)

    def __ge__(self, other):
        return self._compare(other, ">=", operator.ge)

    def __bool__(self):
        return self != 0

    def __index__(self):
        """Used as a plain int (``range(n)``, an index): specialise to the hint, guarded."""
        self.env.record(f"{self.expr} == {self.hint}", True)
        return self.hint

    __int__ = __index__

    def __float__(self):
        return float(self.__index__())

    def __hash__(self):
        return hash(self.expr)

    def __str__(self) -> str:
        return strip_outer_parens(self.expr)

    __repr__ = __str__


def _register_scalar() -> None:
    from .. import _dispatch

    _dispatch.register_number_type(SymInt)  # x * s0: a scalar operand, not a tensor


_register_scalar()


def strip_outer_parens(e: str) -> str:
    """``(s0 + 1)`` prints as ``s0 + 1``; ``(s0) * (s1)`` keeps its parentheses."""
    return e[1:-1] if e.startswith("(") and e.endswith(")") and _balanced(e[1:-1]) else e


def _balanced(s: str) -> bool:
    depth = 0
    for ch in s:
        depth += ch == "("
        depth -= ch == ")"
        if depth < 0:
            return False
    return depth == 0


def _expr(v) -> str:
    return v.expr if isinstance(v, SymInt) else str(int(v))


def _hint(v) -> int:
    return v.hint if isinstance(v, SymInt) else int(v)


def _lo(v):
    return v.lo if isinstance(v, SymInt) else int(v)


def _lo_add(a, b):
    return None if a is None or b is None else a + b


def _lo_mul(a, b):
    return a * b if a is not None and b is not None and a >= 0 and b >= 0 else None


def _lo_floordiv(a, b):
    """``a // b >= 0`` when ``a >= 0`` and ``b >= 1`` (``s0 // -2`` is negative)."""
    return 0 if a is not None and b is not None and a >= 0 and b >= 1 else None


def _lo_mod(a, b):
    """``a % b`` lies in ``[0, b)`` when ``b >= 1`` (``s0 % -3`` is <= 0)."""
    return 0 if b is not None and b >= 1 else None


def _is_product(e: str) -> bool:
    """Is ``e`` a product ``s0*s1`` (the one kind of expression not parenthesised)?"""
    depth = 0
    for ch in e:
        depth += ch == "("
        depth -= ch == ")"
        if ch == "*" and depth == 0:
            return True
    return False


def hint_int(v) -> int:
    """The concrete value of an int or a SymInt (never records a guard)."""
    return v.hint if isinstance(v, SymInt) else int(v)


def is_symbolic(v) -> bool:
    return isinstance(v, SymInt)


class ShapeEnv:
    """Symbols of one compilation and the guards on them."""

    def __init__(self):
        self.symbols: dict[str, tuple[str, int, int]] = {}  # name -> (source, dim, hint)
        self.duck: dict[int, str] = {}  # hint -> symbol (duck sizing)
        self.aliases: list[tuple[str, int, str]] = []  # (source, dim, symbol) sharing a symbol
        self.guards: list[str] = []  # boolean expressions over symbols
        self._seen: set = set()

    def create_int_symbol(self, source_name: str, hint: int) -> SymInt:
        """A symbol for an int argument that changed between compiles (dim ``None``)."""
        name = f"s{len(self.symbols)}"
        self.symbols[name] = (source_name, None, hint)
        return SymInt(name, hint, self)

    def create_symbol(self, source_name: str, dim: int, hint: int):
        """A symbol for ``source.size(dim)``; 0 and 1 stay static."""
        if hint in (0, 1):
            return hint
        name = self.duck.get(hint)
        if name is not None:
            self.aliases.append((source_name, dim, name))
        else:
            name = f"s{len(self.symbols)}"
            self.symbols[name] = (source_name, dim, hint)
            self.duck[hint] = name
        return SymInt(name, hint, self, lo=2)

    def implied(self, a: SymInt, b, op: str):
        """The comparison's answer when facts alone decide it (no guard needed), else None."""
        if isinstance(b, SymInt) and a.expr == b.expr:
            return {"==": True, "!=": False, "<": False, "<=": True, ">": False,
                    ">=": True}[op]
        if isinstance(b, int) and a.lo is not None:
            if b < a.lo:
                return {"==": False, "!=": True, "<": False, "<=": False, ">": True,
                        ">=": True}[op]
            if a.lo >= b and op in (">=", "<"):  # a >= lo >= b
                return op == ">="
        return None

    def record(self, expr: str, result: bool) -> None:
        text = expr if result else f"not ({expr})"
        if text not in self._seen:
            self._seen.add(text)
            self.guards.append(text)

    def source_expr(self, symbol: str) -> str:
        src, dim, _ = self.symbols[symbol]
        return src if dim is None else f"{src}.size()[{dim}]"  # torch's spelling

    def guard_code(self) -> list[tuple[str, str]]:
        """``(code over L, description)`` for every shape guard."""
        out = []
        for name, (src, dim, _) in self.symbols.items():
            if dim is not None:  # a size; int-argument symbols carry no range facts
                out.append((f"{src}.size()[{dim}] >= 2", f"{name} >= 2"))
        for src, dim, name in self.aliases:
            out.append((f"{src}.size()[{dim}] == {self.source_expr(name)}",
                        f"{src}.size()[{dim}] == {name}"))
        for g in self.guards:
            code = _SYMBOL.sub(lambda m: self.source_expr(m.group(0)), g)
            out.append((code, g))
        return out


# ---------------------------------------------------------------- reading an expression back
_AST_OPS = {"Add": "+", "Sub": "-", "Mult": "*", "FloorDiv": "//", "Mod": "%"}


def walk_expr(text: str, leaf, apply: dict):
    """Rebuild a ``SymInt`` expression (``(2*s0 + s1)``) bottom-up: ``leaf(name)`` for each
    symbol, ``apply[op](a, b)`` for ``+ - * // %`` and ``apply["neg"](a)``; ints stay ints.

    Its users: ``make_fx(tracing_mode="symbolic")`` records a size computation as graph nodes
    (``sym_size`` and ``operator.mul``), Inductor turns it into a ``sizevars.Expr``."""
    import ast

    def visit(n):
        if isinstance(n, ast.Expression):
            return visit(n.body)
        if isinstance(n, ast.Name) and _SYMBOL.fullmatch(n.id):
            return leaf(n.id)
        if isinstance(n, ast.Constant) and type(n.value) is int:
            return n.value
        if isinstance(n, ast.BinOp) and type(n.op).__name__ in _AST_OPS:
            return apply[_AST_OPS[type(n.op).__name__]](visit(n.left), visit(n.right))
        if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.USub):
            return apply["neg"](visit(n.operand))
        raise NotImplementedError(f"cannot read the size expression {text!r}")

    return visit(ast.parse(text, mode="eval"))
