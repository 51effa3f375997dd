"""Regression tests for the differences from eager (and from torch 2.13) that the ported
programs of ``tests/test_dynamo_fidelity_*.py`` found — each fix checked on its own, compiled
vs eager, with the graph count asserted (``check`` from ``dynamo_utils``)."""

import dataclasses

import pytest

import minitorch_compile as mtc

from .dynamo_utils import check
from .test_graph_breaks import check_breaks


@pytest.fixture(autouse=True)
def _reset():
    mtc.dynamo.reset()
    yield
    mtc.dynamo.reset()


# ---------------------------------------------------------------- dict views are live
def dict_views_after_stores(x):
    d = {3: x}
    keys, values, items = d.keys(), d.values(), d.items()
    d[4] = x + 1
    del d[3]
    return (3 in keys, 4 in keys, len(values), len(items), list(keys),
            {4: 0}.keys() == keys, isinstance(keys, list), values is not None)


def dict_view_returned(x):
    d = {"a": x * 2}
    view = d.keys()
    d["b"] = 1
    return view


def test_dict_views_see_later_stores():
    """``d.keys()`` was a snapshot: ``4 in keys`` after ``d[4] = ...`` said False (wrong)."""
    check(dict_views_after_stores, mtc.ones(2), graphs=1)


def test_a_dict_view_returned_is_a_view_of_the_rebuilt_dict():
    out = mtc.compile(dict_view_returned, backend="eager")(mtc.ones(2))
    assert type(out) is type({}.keys()) and list(out) == ["a", "b"]


# ---------------------------------------------------------------- slots and identity
class Slotted:
    __slots__ = ("scale", "kind")

    def __init__(self, scale, kind):
        self.scale, self.kind = scale, kind


SENTINEL = object()


def read_slots(x, obj):
    if obj.kind is SENTINEL:
        return x * obj.scale
    return x - obj.scale


def test_a_slot_is_read_as_its_value_not_its_descriptor():
    """``obj.scale`` on a ``__slots__`` class returned the class's member descriptor: ``is``
    comparisons on it were wrong (``dataclasses.fields`` came back empty)."""
    check(read_slots, mtc.ones(3), Slotted(2.0, SENTINEL), graphs=1)
    mtc.dynamo.reset()
    check(read_slots, mtc.ones(3), Slotted(2.0, "other"), graphs=1)


@dataclasses.dataclass
class Config:
    width: int = 3
    gain: float = 1.5


def dataclass_fields_loop(x):
    cfg = Config(width=2)
    for fld in dataclasses.fields(cfg):
        if fld.name == "gain":
            x = x * getattr(cfg, fld.name)
    return x + cfg.width


def test_dataclass_fields_in_a_loop():
    check(dataclass_fields_loop, mtc.ones(3), graphs=1)


class Plain:
    pass


def identity_of_objects(x, a, b):
    out = x
    if a is b:
        out = out + 1
    if a is not None and Plain() is not a and Plain() != Plain():
        out = out * 2
    if a == b:
        out = out - 3
    return out


def test_is_and_eq_between_plain_objects_fold_with_id_guards():
    """torch's ``UserDefinedObjectVariable`` identity: ``a is b`` of two objects read from the
    frame is decided at compile time under ``ID_MATCH`` guards; a new object is no other."""
    a, b = Plain(), Plain()
    entry = check(identity_of_objects, mtc.ones(2), a, b, graphs=1)
    kinds = {(g.kind, g.source_name) for g in entry.guard.guard_set.guards}
    assert ("ID_MATCH", "L['a']") in kinds and ("ID_MATCH", "L['b']") in kinds
    compiled = mtc.compile(identity_of_objects, backend="eager")
    for args in ((a, b), (b, b), (a, a)):  # a different object recompiles, never reuses
        assert (compiled(mtc.ones(2), *args) == identity_of_objects(mtc.ones(2), *args)).all()
