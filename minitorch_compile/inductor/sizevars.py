"""Index expressions of the loop IR (``torch/_inductor/sizevars.py``, where sympy does this).

Every index in this IR is *affine*: ``const + Σ coef·var`` over loop variables (``i0``, ``x1``,
``r0``).  Views, broadcasts, permutes, slices and contiguous layouts only ever produce affine
indices, so an ``Affine`` — a constant and a sorted tuple of ``(variable, coefficient)`` — is
enough: it adds, scales, substitutes variables, compares and hashes, and its coefficients are
the strides of the numpy view a kernel reads through.
"""

from __future__ import annotations


class Affine:
    """``const + Σ coef·var`` — the index expressions of this IR (torch uses sympy)."""

    __slots__ = ("const", "terms", "_hash")

    def __init__(self, const: int = 0, terms=()):
        self.const = int(const)
        self.terms = tuple(sorted((v, c) for v, c in terms if c != 0))
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
        if isinstance(other, int):
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
        parts = [v if c == 1 else f"{c}*{v}" for v, c in self.terms]
        if self.const or not parts:
            parts.append(str(self.const))
        return " + ".join(parts)


def as_index(x) -> Affine:
    return x if isinstance(x, Affine) else Affine(int(x))


def contiguous_strides(size) -> tuple:
    strides, acc = [], 1
    for s in reversed(size):
        strides.append(acc)
        acc *= max(int(s), 1)
    return tuple(reversed(strides))


def numel(size) -> int:
    n = 1
    for s in size:
        n *= int(s)
    return n
