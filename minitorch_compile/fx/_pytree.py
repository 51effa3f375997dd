"""A tiny pytree: flatten nested tuples/lists/dicts to leaves and back (``torch/utils/_pytree.py``).

``tree_flatten(obj) -> (leaves, spec)`` and ``tree_unflatten(leaves, spec)`` are inverses.
``None`` is an empty container (no leaf), as in torch.  Graphs made by ``make_fx`` use this to
accept the traced function's original (nested) arguments and return its original structure.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TreeSpec:
    kind: str  # "leaf" | "tuple" | "list" | "dict" | "namedtuple" | "none"
    context: object = None  # dict keys or the namedtuple class
    children: tuple = ()

    @property
    def num_leaves(self) -> int:
        return 1 if self.kind == "leaf" else sum(c.num_leaves for c in self.children)

    def __repr__(self) -> str:
        if self.kind == "leaf":
            return "*"
        if self.kind == "none":
            return "None"
        inner = ", ".join(map(repr, self.children))
        if self.kind == "dict":
            inner = ", ".join(f"{k!r}: {c!r}" for k, c in zip(self.context, self.children))
            return "{" + inner + "}"
        return f"[{inner}]" if self.kind == "list" else f"({inner})"


LEAF = TreeSpec("leaf")


def tree_flatten(obj) -> tuple[list, TreeSpec]:
    leaves: list = []
    return leaves, _flatten(obj, leaves)


def _flatten(obj, leaves) -> TreeSpec:
    if obj is None:
        return TreeSpec("none")
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):
        return TreeSpec("namedtuple", type(obj), tuple(_flatten(x, leaves) for x in obj))
    if isinstance(obj, tuple):
        return TreeSpec("tuple", None, tuple(_flatten(x, leaves) for x in obj))
    if isinstance(obj, list):
        return TreeSpec("list", None, tuple(_flatten(x, leaves) for x in obj))
    if isinstance(obj, dict):
        keys = tuple(obj)
        return TreeSpec("dict", keys, tuple(_flatten(obj[k], leaves) for k in keys))
    leaves.append(obj)
    return LEAF


def tree_unflatten(leaves, spec: TreeSpec):
    it = iter(leaves)
    out = _unflatten(it, spec)
    return out


def _unflatten(it, spec: TreeSpec):
    if spec.kind == "leaf":
        return next(it)
    if spec.kind == "none":
        return None
    children = [_unflatten(it, c) for c in spec.children]
    if spec.kind == "tuple":
        return tuple(children)
    if spec.kind == "list":
        return children
    if spec.kind == "dict":
        return dict(zip(spec.context, children))
    return spec.context(*children)


def tree_leaves(obj) -> list:
    return tree_flatten(obj)[0]


def tree_map(fn, obj):
    leaves, spec = tree_flatten(obj)
    return tree_unflatten([fn(x) for x in leaves], spec)


def tree_flatten_spec(obj, spec: TreeSpec) -> list:
    """Flatten ``obj``, checking it has the structure ``spec`` (used by generated code)."""
    leaves, got = tree_flatten(obj)
    if got != spec:
        raise TypeError(f"expected inputs with structure {spec}, got {got}")
    return leaves
