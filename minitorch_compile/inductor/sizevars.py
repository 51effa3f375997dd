"""Index and size expressions of the loop IR (``torch/_inductor/sizevars.py``, where sympy
does this).

**Sizes.** A size is an ``int`` or, under dynamic shapes, an ``Expr``: a polynomial with int
coefficients over size symbols (``s0``, ``2*s0*s1 + s0``) — the small algebra Inductor needs
instead of sympy.  Its invariants:

* canonical form (a sorted tuple of ``(monomial, coefficient)``), so two sizes that are equal as
  polynomials compare ``==`` and hash alike: the lowering and the scheduler treat ``s0`` and
  ``s0`` as equal exactly as they treat ``8`` and ``8``;
* a constant result *is* an ``int`` (``s0 - s0`` is ``0``), so static code paths see ints;
* ``//`` and ``%`` by an int that does not divide every coefficient become an opaque atom
  ``(s0//2)``; ordering (``<``) and ``int()`` raise, so no code can silently decide on a
  symbolic size — the caller either handles ``Expr`` or Inductor specialises (compile_fx.py);
* an ``Expr`` prints as Python (``2*s0 + 1``): the generated wrapper computes it from the
  sizes it reads off its inputs, and a kernel from the sizes it receives as arguments, which
  it names ``ks0`` (``def fused_cos_mul_0(in_arg0_1, out_buf0, ks0):``).

**Indices.** Every index in this IR is *affine*: ``const + Σ coef·var`` over loop variables
(``i0``, ``x1``, ``r0``).  Views, broadcasts, permutes, slices and contiguous layouts only
ever produce affine indices, so an ``Affine`` — a constant and a sorted tuple of
``(variable, coefficient)`` — is enough: it adds, scales, substitutes variables, compares
and hashes, and its coefficients are the strides of the numpy view a kernel reads through.
"""

from __future__ import annotations

import re
from contextlib import contextmanager

_SYM = re.compile(r"\bs\d+\b")
_printing = {"prefix": ""}


@contextmanager
def kernel_symbols():
    """Inside a kernel a size symbol is the kernel's argument ``ks0`` (torch's kernels name
    them so); the wrapper passes ``s0``."""
    old, _printing["prefix"] = _printing["prefix"], "k"
    try:
        yield
    finally:
        _printing["prefix"] = old


class Expr:
    """``Σ coef·monomial`` over size symbols (torch: a sympy expression)."""

    __slots__ = ("terms", "_hash")

    def __init__(self, terms):
        d: dict = {}
        for mono, c in terms:
            d[mono] = d.get(mono, 0) + c
        self.terms = tuple(sorted(((m, c) for m, c in d.items() if c), key=_order))
        self._hash = hash(self.terms)

    @staticmethod
    def symbol(name: str) -> Expr:
        return Expr((((name,), 1),))

    @property
    def free_symbols(self) -> set:
        return {a for m, _ in self.terms for a in m for a in _SYM.findall(a)}

    # ---------------------------------------------------------------- algebra
    def __add__(self, other):
        if not isinstance(other, (int, Expr)) or isinstance(other, bool):
            return NotImplemented
        return _simplify(Expr(self.terms + _terms(other)))

    __radd__ = __add__

    def __neg__(self):
        return Expr((m, -c) for m, c in self.terms)

    def __sub__(self, other):
        if not isinstance(other, (int, Expr)) or isinstance(other, bool):
            return NotImplemented
        return self + (-other)

    def __rsub__(self, other):
        return (-self) + other

    def __mul__(self, other):
        if not isinstance(other, (int, Expr)) or isinstance(other, bool):
            return NotImplemented
        return _simplify(Expr((tuple(sorted(m1 + m2)), c1 * c2)
                              for m1, c1 in self.terms for m2, c2 in _terms(other)))

    __rmul__ = __mul__

    def __floordiv__(self, k):
        exact = _divide(self, k)
        if exact is not None:
            return exact
        return Expr.symbol(f"({_paren(self)}//{_paren(k)})")

    def __rfloordiv__(self, k):
        return Expr.symbol(f"({k}//{_paren(self)})")

    def __mod__(self, k):
        if _divide(self, k) is not None:
            return 0
        return Expr.symbol(f"({_paren(self)}%{_paren(k)})")

    def __rmod__(self, k):
        return Expr.symbol(f"({k}%{_paren(self)})")

    # ---------------------------------------------------------------- no decisions
    def __eq__(self, other):
        return isinstance(other, Expr) and self.terms == other.terms

    def __ne__(self, other):
        return not self == other

    def __hash__(self):
        return self._hash

    def _undecidable(self, *_):
        raise TypeError(f"the symbolic size {self} has no order or int value at compile time")

    __lt__ = __le__ = __gt__ = __ge__ = __int__ = __index__ = __float__ = _undecidable

    def __bool__(self):
        return True  # never 0: a constant 0 is the int 0

    def __repr__(self) -> str:
        parts = []
        for mono, c in self.terms:
            body = "*".join(mono)
            if not body:
                parts.append(str(c))
            elif c == 1:
                parts.append(body)
            elif c == -1:
                parts.append(f"-{body}")
            else:
                parts.append(f"{c}*{body}")
        text = " + ".join(parts).replace("+ -", "- ")
        prefix = _printing["prefix"]
        return _SYM.sub(lambda m: prefix + m.group(0), text) if prefix else text

    __str__ = __repr__


def _order(item):
    mono, _ = item
    return (-len(mono), mono)


def _divide(e: Expr, k):
    """``e / k`` when ``k`` (a positive int, or one positive term ``c·m``) divides every term
    of ``e`` exactly — ``(4*s0*s1) // s0`` is ``4*s1`` — else None."""
    if isinstance(k, int):
        mono, c = (), k
    elif isinstance(k, Expr) and len(k.terms) == 1:
        mono, c = k.terms[0]
    else:
        return None
    if c <= 0:
        return None
    out = []
    for m, coef in e.terms:
        rest = list(m)
        for atom in mono:
            if atom not in rest:
                return None
            rest.remove(atom)
        if coef % c:
            return None
        out.append((tuple(rest), coef // c))
    return _simplify(Expr(out))


def _terms(v) -> tuple:
    return v.terms if isinstance(v, Expr) else (((), int(v)),)


def _simplify(e: Expr):
    """A constant polynomial is its int."""
    if not e.terms:
        return 0
    if len(e.terms) == 1 and e.terms[0][0] == ():
        return e.terms[0][1]
    return e


def _paren(v) -> str:
    text = str(v)
    return text if re.fullmatch(r"k?s\d+", text) or text.lstrip("-").isdigit() else f"({text})"


def is_symbolic(v) -> bool:
    return isinstance(v, Expr)


def free_symbols(values) -> set:
    """Every size symbol in ``values`` (nested tuples/lists of ints, Exprs, Affines)."""
    out: set = set()
    for v in values if isinstance(values, (tuple, list)) else (values,):
        if isinstance(v, (tuple, list)):
            out |= free_symbols(v)
        elif isinstance(v, Expr):
            out |= v.free_symbols
        elif isinstance(v, Affine):
            out |= free_symbols([v.const] + [c for _, c in v.terms])
    return out


def size_hint(v, hints: dict) -> int:
    """The value of a size for the example inputs (``hints``: symbol -> int)."""
    if not isinstance(v, Expr):
        return int(v)
    old, _printing["prefix"] = _printing["prefix"], ""
    try:
        return int(eval(str(v), {"__builtins__": {}}, dict(hints)))  # our own text: s0, //
    finally:
        _printing["prefix"] = old


def from_sym_int(v, size: bool = True):
    """A tracing ``SymInt`` (``dynamo/symbolic_shapes.py``) as an ``Expr`` (ints stay ints).

    A *size* must be ``>= 2`` for the example inputs: 0 and 1 are special to broadcasting, so
    the trace specialised every decision that depends on them — either the trace compared the
    size with 1 (a guard: the artifact is used only where the answer is the same) or its code is
    right for any value.  A size that was 0 or 1 when traced raises ``NotImplementedError``
    (the graph is specialised).  A scalar (``size=False``) may be anything."""
    if not hasattr(v, "expr") or not hasattr(v, "hint"):
        return int(v)
    from ..dynamo.symbolic_shapes import walk_expr

    e = walk_expr(v.expr, Expr.symbol, _PY_OPS)
    if size and isinstance(e, Expr) and v.hint < 2:
        raise NotImplementedError(f"the size {v} was {v.hint} when traced")
    return e


def as_sizes(shape) -> tuple:
    """A meta tensor's shape (ints and SymInts) as Inductor sizes (ints and Exprs)."""
    return tuple(from_sym_int(s) for s in shape)


def guard_is_tautology(guard: str) -> bool:
    """Does the algebra alone prove a recorded guard (``not ((s0*4 // s0) == 0)``: 4 != 0)?

    Tracing decides comparisons by hints and records each as a guard; one the polynomial
    algebra proves for every value of the symbols constrains nothing."""
    import ast

    from ..dynamo.symbolic_shapes import walk_expr

    ops = {ast.Eq: lambda a, b: a == b, ast.NotEq: lambda a, b: a != b}
    try:
        tree = ast.parse(guard, mode="eval").body
        negate = isinstance(tree, ast.UnaryOp) and isinstance(tree.op, ast.Not)
        cmp = tree.operand if negate else tree
        if not (isinstance(cmp, ast.Compare) and len(cmp.ops) == 1):
            return False
        a = walk_expr(ast.unparse(cmp.left), Expr.symbol, _PY_OPS)
        b = walk_expr(ast.unparse(cmp.comparators[0]), Expr.symbol, _PY_OPS)
    except (SyntaxError, NotImplementedError):
        return False
    op = type(cmp.ops[0])
    if isinstance(a, int) and isinstance(b, int):
        value = {ast.Lt: a < b, ast.LtE: a <= b, ast.Gt: a > b, ast.GtE: a >= b,
                 ast.Eq: a == b, ast.NotEq: a != b}[op]
    elif op in ops and a == b:  # equal polynomials: equal for every value
        value = ops[op](0, 0)
    else:
        return False
    return value != negate


_PY_OPS = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
           "//": lambda a, b: a // b, "%": lambda a, b: a % b, "neg": lambda a: -a}


class Affine:
    """``const + Σ coef·var`` — the index expressions of this IR (torch uses sympy)."""

    __slots__ = ("const", "terms", "_hash")

    def __init__(self, const: int = 0, terms=()):
        self.const = const if isinstance(const, Expr) else int(const)  # Expr: a symbolic offset
        self.terms = tuple(sorted(((v, c) for v, c in terms if c != 0), key=lambda t: t[0]))
        self._hash = hash((self.const, self.terms))

    @staticmethod
    def var(name: str) -> Affine:
        return Affine(0, ((name, 1),))

    def coef(self, var: str) -> int:
        return dict(self.terms).get(var, 0)

    @property
    def free_vars(self) -> set:
        return {v for v, _ in self.terms}

    def __add__(self, other):
        if isinstance(other, (int, Expr)):
            return Affine(self.const + other, self.terms)
        d = dict(self.terms)
        for v, c in other.terms:
            d[v] = d.get(v, 0) + c
        return Affine(self.const + other.const, d.items())

    __radd__ = __add__

    def __mul__(self, k: int):
        return Affine(self.const * k, ((v, c * k) for v, c in self.terms))

    __rmul__ = __mul__

    def subs(self, mapping: dict) -> Affine:
        """Replace variables by expressions (``x0 -> y0*4 + y1``)."""
        out = Affine(self.const)
        for v, c in self.terms:
            out = out + (mapping[v] * c if v in mapping else Affine(0, ((v, c),)))
        return out

    def __eq__(self, other):
        return isinstance(other, Affine) and self.const == other.const and \
            self.terms == other.terms

    def __hash__(self):
        return self._hash

    def __repr__(self) -> str:
        parts = [v if c == 1 else f"{_paren(c)}*{v}" for v, c in self.terms]
        if self.const or not parts:
            parts.append(str(self.const))
        return " + ".join(parts)


def as_index(x) -> Affine:
    return x if isinstance(x, Affine) else Affine(x if isinstance(x, Expr) else int(x))


def contiguous_strides(size) -> tuple:
    strides, acc = [], 1
    for s in reversed(size):
        strides.append(acc)
        acc *= s if isinstance(s, Expr) else max(int(s), 1)  # a symbol is >= 2
    return tuple(reversed(strides))


def numel(size):
    n = 1
    for s in size:
        n *= s if isinstance(s, Expr) else int(s)
    return n
