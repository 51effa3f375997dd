"""Regression tests for the differences from eager (and from torch 2.13) that the ported
programs of ``tests/test_dynamo_fidelity_*.py`` found — each fix checked on its own, compiled
vs eager, with the graph count asserted (``check`` from ``dynamo_utils``)."""

import collections
import dataclasses

import pytest

import minitorch_compile as mtc

from .dynamo_utils import assert_compiled, check
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


# ---------------------------------------------------------------- builtins and methods
def sorted_dict_and_key(x, kw):
    total = x
    for k in sorted(kw):
        total = total - kw[k]
    pairs = sorted([(2, x), (1, x * 3)], key=lambda p: p[0])
    return total + pairs[0][1], sorted(kw, reverse=True)


def test_sorted_of_a_dict_with_tensor_values_does_not_break():
    """torch 2.13 sorts the (constant) keys; ``sorted(kwargs)`` was a graph break."""
    check(sorted_dict_and_key, mtc.ones(2), {"z": mtc.ones(2), "a": mtc.ones(2) * 2},
          graphs=1)


P = collections.namedtuple("P", ["a", "b"])


def namedtuple_methods(x):
    p = P(x, 2)._replace(b=3)
    d = p._asdict()
    return p.a * p.b + len(p._fields), list(d)


def test_namedtuple_replace_asdict_fields():
    check(namedtuple_methods, mtc.ones(2), graphs=1)


def str_methods(x, name):
    parts = name.split(".")
    key = "_".join(p.upper() for p in parts)
    return x * int(parts[-1]), key, [len(p) for p in parts]


def test_str_method_returning_a_list_and_join_over_a_generator():
    check(str_methods, mtc.ones(2), "layer.12", graphs=1)


# ---------------------------------------------------------------- grad mode and `with`
def nested_grad_modes(x):
    with mtc.no_grad():
        a = x + 1
        with mtc.enable_grad():
            b = x * 2
    return a, b


def test_a_grad_mode_switch_undone_before_any_op_leaves_no_node():
    """``no_grad`` then ``enable_grad`` ending together: torch 2.13's graph has 4 calls (two
    switches, two ops), not the two trailing switches that cancel out."""
    entry = check(nested_grad_modes, rg3(), graphs=1)
    assert [n.target.__name__ for n in entry.graph_module.graph.nodes
            if n.op == "call_function"] == ["_set_grad_enabled", "add", "_set_grad_enabled",
                                            "mul"]


def rg3():
    return mtc.ones(3).requires_grad_(True)


LOG = []


class Scale:
    def __init__(self, k):
        self.k = k

    def __enter__(self):
        LOG.append("enter")
        return self.k

    def __exit__(self, *exc):
        LOG.append("exit")
        return False


def user_context(x):
    with Scale(3) as k:
        y = x * k
    return y + 1


class Quiet:
    def __enter__(self):
        return 2

    def __exit__(self, *exc):
        return None


def user_context_with_break(x):
    with Quiet() as k:
        y = x * k
        print("inside")
    return y


def test_a_user_context_manager_is_inlined():
    """``__enter__``/``__exit__`` of a user class are traced (torch 2.13: 1 graph); the list
    they append to is a side effect replayed after the graph."""
    LOG.clear()
    compiled = mtc.compile(user_context, backend="eager")
    assert (compiled(mtc.ones(2)) == user_context(mtc.ones(2))).all()
    assert LOG == ["enter", "exit"] * 2
    assert_compiled(user_context, graphs=1)


def test_a_break_inside_a_user_with_block_runs_the_frame_eagerly(capsys):
    # a user context manager cannot be left and re-entered: torch falls back to its last
    # checkpoint, and there is none here (no op before the `with`): the frame runs eagerly,
    # no graph compiled (torch 2.13: 0 graphs; test_dynamo_fidelity_resume has the counts)
    check_breaks(user_context_with_break, (mtc.ones(2),), graphs=0)
    reasons = [e.reason for e in mtc.dynamo.cache_entries(user_context_with_break)]
    assert any("user context manager" in r for r in reasons if r)


# ---------------------------------------------------------------- a callable object breaking
class Layer:
    def __init__(self, k):
        self.k = k

    def __call__(self, x):
        y = x * self.k
        print("layer", self.k)
        return y.tanh()


def calls_layers(x):
    return Layer(2)(x) + Layer(3)(x)


def test_a_callable_object_that_breaks_is_compiled_as_its_own_frame(capsys):
    """The graph breaks at ``Layer(2)(x)``; its ``__call__`` then runs through the JIT as a
    frame of its own (torch's frame hook compiles it): a graph before and after its ``print``,
    for each ``k`` — 4 graphs, as torch 2.13 (it ran uncompiled before)."""
    check_breaks(calls_layers, (mtc.ones(3),), graphs=4)
