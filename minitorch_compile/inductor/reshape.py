"""Reshapes of unrealized recipes as index arithmetic (the ``View.dynamic_reshape_indexer``
part of ``torch/_inductor/ir.py``).

A reshape of a realized contiguous buffer only reinterprets it (``ReinterpretView``).  Of a
recipe that is still a closure of ``ops.*`` calls, it must map the new index to the old one:
splitting a dim is affine (``i = 7*j0 + j1``), merging dims is not (``i0 = j // 10``,
``i1 = j % 10``).  Yet every load of a *contiguous* read through the merged dims is affine
again: ``10*(j // 10) + j % 10 = j``.  So a ``ReshapeView`` gives each merged dim a fresh
variable ``u_t`` and a rule; an ops handler wrapped around the current one
(``SubstituteLoads``) rewrites each load index ``Σ a_t·u_t + rest`` with ``a_t = a_k·P_t``
(``P_t`` the product of the later merged sizes) to ``a_k·j + rest``.  ``view_lowerings.view``
builds one only after checking that every load of the recipe, and of its realized buffer,
reads so; torch writes ``FloorDiv``/``ModularIndexing`` and lets sympy simplify.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from .ir import View
from .sizevars import Affine, as_index
from .virtualized import V


@dataclass(eq=False)
class ReshapeView(View):
    """A reshape of an unrealized recipe (``(x + 1).view(10, 100)`` of a ``(10, 10, 10)``):
    ``reindex`` gives the input's index with a fresh variable per merged dim, ``rules(index)``
    the substitutions that put the merged index back into each load."""

    rules: Callable = None  # index -> [(fresh vars, P_t per var, merged Affine)]

    def make_loader(self):
        inner = self.data.make_loader()
        reindex, rules = self.reindex, self.rules

        def loader(index):
            found = rules(index)
            if not found:
                return inner(reindex(index))
            with V.set_ops_handler(SubstituteLoads(V.get_ops_handler(), found)):
                return inner(reindex(index))
        return loader


def substitute_merged(index, rules):
    """``index`` with each rule's fresh variables replaced by its merged index (or raise)."""
    index = as_index(index)
    for us, ps, merged in rules:
        coefs = [index.coef(u) for u in us]
        if not any(coefs):
            continue
        unit = coefs[-1]
        if any(c != unit * p for c, p in zip(coefs, ps)):
            raise NotImplementedError(f"a reshape read {index} is not affine in {us}")
        index = Affine(index.const, [(v, c) for v, c in index.terms if v not in us]) + \
            merged * unit
    return index


class SubstituteLoads:
    """An ops handler wrapping another: loads get ``substitute_merged`` indices."""

    def __init__(self, inner, rules):
        self.inner, self.rules = inner, rules

    def load(self, name, index):
        return self.inner.load(name, substitute_merged(index, self.rules))

    def index_expr(self, index, dtype):
        return self.inner.index_expr(substitute_merged(index, self.rules), dtype)

    def __getattr__(self, name):
        return getattr(self.inner, name)
