"""Dynamo II: programs that mix graph breaks with Python structure, compiled vs eager.

Each program breaks its graph at least once — a ``print``, ``.item()``, ``.tolist()``, a
data-dependent ``if``, a store to an object — while containers (lists, dicts, tuples, nested)
sit on the value stack or in the live locals, or while closures, nested functions, defaults,
keyword-only arguments, ``*args`` and ``**kwargs`` are in play.  ``check_breaks`` runs every
call compiled (with a counting backend) and eagerly: values, gradients through ``.backward()``
and printed output must match; the number of graphs compiled over all calls is asserted, and a
second round of the same calls must compile nothing.  Programs with a data-dependent branch
are called with inputs that take each direction.
"""

import pytest

import minitorch_compile as mtc
import minitorch_compile.nn.functional as F
from minitorch_compile import nn

from .test_graph_breaks import (
    RESUME_INFO,
    Call,
    break_reasons,
    check_breaks,
    frames_of,
    neg,
    pos,
    rg,
)


@pytest.fixture(autouse=True)
def _reset():
    mtc.dynamo.reset()
    yield
    mtc.dynamo.reset()


# ============================================================== containers on the stack
def list_literal_around_print(x):
    parts = [x.cos(), print("building", len("abc")), x.sin()]
    return parts[0] * parts[2]


def tuple_literal_around_item(x):
    pair = (x.cos(), x.sum().item())
    return pair[0] * pair[1]


def dict_literal_around_tolist(x):
    d = {"a": x.cos(), "firsts": x.tolist()[:2], "b": x.sin()}
    return d["a"] * d["firsts"][0] + d["b"] * d["firsts"][1]


def call_args_around_a_branch(x, y):
    return mtc.stack([x.cos(), y if x.sum() > 0 else -y, x * y])


def nested_call_args_around_float(x):
    return mtc.cat([x.cos(), mtc.stack([x.sin(), x * float(x.mean())]).flatten()])


def kwargs_call_around_print(x):
    return mtc.sum(x.cos() * 2, dim=0, keepdim=bool(print("kw") is None))


def format_in_a_list(x):
    items = [x.cos(), f"{x.sum()}"]  # FORMAT_VALUE of a tensor: the string is built in Python
    return items[0] * len(items[1]) / len(items[1])


# ============================================================== containers in the live locals
def list_local_mutated_after_break(x):
    acc = [x.cos()]
    print("acc has", len(acc))
    acc.append(x.sin() * 2)  # acc is now an argument of the resume function
    return acc[0] + acc[1]


def dict_local_branch(x, y):
    state = {"h": x.cos(), "n": 1}
    if state["h"].sum() > 2.5:
        state = {"h": state["h"] * y, "n": 2}
    return state["h"] * state["n"]


def nested_containers_live(x):
    state = {"h": [x.cos(), (x.sin(), 3)], "tag": "t"}
    print(state["tag"])
    h0, (h1, k) = state["h"]
    return {"out": h0 * k + h1, "meta": (state["tag"], k)}


def tuple_unpack_after_break(x, y):
    a, b = x.cos(), y.sin()
    s = (a * b).sum().item()
    c, d = (b, a) if s > 0 else (a, b)
    return c * 2 + d


def list_comprehension_after_break(x):
    ys = [x * i for i in range(1, 4)]
    print("made", len(ys))
    return sum([y.cos() for y in ys])


def returns_containers_in_branches(x):
    y = x.cos() - 0.7
    if y.sum() > 0:
        return [y, y * 2]
    return (y, {"neg": -y})


def starred_unpack_in_call(x, y):
    parts = [x.cos(), y.sin()]
    n = len(x.tolist())
    return mtc.stack([*parts, x * n])


def dict_items_loop_after_break(x):
    weights = {"a": 1.0, "b": 2.0, "c": 3.0}
    base = x.cos()
    print("weights", sorted(weights))
    out = base * 0
    for name, w in weights.items():  # the loop is in the resume function: no break inside it
        out = out + base * w
    return out


# ============================================================== defaults, kwargs, *args
def defaults_and_kwonly(x, scale=2.0, *, shift=1.0, note="n"):
    y = x * scale
    print(note, scale, shift)
    return y + shift


def star_args(x, *rest):
    y = x.cos()
    if y.sum() > 2.5:
        return sum(rest, y)
    return y * len(rest)


def star_kwargs(x, **opts):
    y = x.sin()
    print("opts", sorted(opts))
    return y * opts["a"] + opts.get("b", 0.5)


def star_args_kwargs_forwarded(x, *args, **kwargs):
    def inner(t, *a, k=1.0):
        return t * k + sum(a)
    z = inner(x.cos(), *args, **kwargs)
    return z * x.mean().item()


def default_tensor_arg(x, w=None):
    if w is None:
        w = mtc.ones(3)
    y = x * w
    if y.sum() > 0:
        y = y * 2
    return y


def keyword_call_site(x, y):
    z = defaults_and_kwonly(x, 3.0, shift=y.sum().item(), note="k")
    return z * y


# ============================================================== closures and nested functions
def make_closure_with_print(scale, bias):
    def f(x):
        y = x * scale + bias
        print("closure", scale)
        return y.sin() * scale
    return f


def make_closure_with_branch(w):
    def f(x):
        y = x * w
        if y.sum() > 0:
            return y.relu()
        return y.tanh() * w
    return f


def nested_defined_after_break(x):
    k = x.cos()
    print("k ready")

    def add_k(t, times=2):
        return t * times + k
    return add_k(x) + add_k(x, times=3)


def nested_used_before_break(x):
    def square(t):
        return t * t
    y = square(x.cos())
    print("squared")  # square is not read after the break: not live, not rebuilt
    return y.sum(dim=0)


def lambda_after_break(x, y):
    s = (x * y).sum().item()
    pick = lambda a, b: a if s > 0 else b  # noqa: E731
    return pick(x, y) * 2


def closure_over_container(x):
    table = {"w": x.cos(), "b": x.sin()}
    print("table")

    def apply(t):
        return t * table["w"] + table["b"]
    return apply(x)


def comprehension_closure_after_branch(x, factors=(1.0, 2.0)):
    y = x.cos()
    if y.mean() > 0.6:
        y = y * 10
    return sum(y * f for f in factors)


def global_helper_with_kwargs(t, *, k=1.0):
    print("helper", k)
    return t * k


def calls_global_helper(x):
    return global_helper_with_kwargs(x.cos(), k=2.0) + x


# ============================================================== objects, modules, side effects
class Recorder:
    def __init__(self):
        self.seen = []
        self.last = None


def stores_attribute(x, rec):
    y = x.cos()
    rec.last = tuple(y.shape)  # STORE_ATTR on an input: replayed before the break's print
    print("stored", rec.last)
    return y * len(rec.last)


def appends_to_input_list(x, log):
    y = x.sin()
    log.append("called")  # mutating an input list: a side effect, replayed before the print
    print(log)
    return y * len(log)


class Gate(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(3, 3)
        self.b = nn.Linear(3, 3)

    def forward(self, x):
        h = self.a(x)
        if h.sum() > 0:
            return self.b(h).relu()
        return F.softmax(self.b(-h), dim=-1)


def seeded_gate():
    """A ``Gate`` with fixed weights: with them ``rg`` takes the first branch, ``-rg`` the
    second (the graph count depends on which branches run)."""
    mtc.manual_seed(0)
    return Gate()


def module_with_branch(x, gate):
    return gate(x.tanh()) * 2


class Logger(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)

    def forward(self, x):
        out = self.lin(x)
        print("logger", tuple(out.shape))
        return out


def module_list_with_print(x, mods):
    outs = []
    h = x
    for m in mods:  # a break inside a loop body: this frame runs eagerly
        h = m(h)
        outs.append(h)
    return outs


def item_then_python_arithmetic(x):
    n = int(x.abs().sum().item() * 10) % 3 + 1
    ys = [x * i for i in range(n)]
    return mtc.stack(ys).sum(dim=0) + n


def no_grad_then_break(x):
    with mtc.no_grad():
        scale = x.abs().mean()
    print("scale ready")
    return x * scale


def sequential_branches_with_containers(x, y):
    acc = []
    if x.sum() > 0:
        acc.append(x.cos())
    else:
        acc.append(x.sin())
    if y.sum() > 0:
        acc.append(y * 2)
    return acc


PROGRAMS = [
    # fn, calls (each a thunk giving the arguments), graphs over all calls
    (list_literal_around_print, [lambda: (rg(4),)], 2),
    (tuple_literal_around_item, [lambda: (rg(4),)], 2),
    (dict_literal_around_tolist, [lambda: (rg(4),)], 2),
    (call_args_around_a_branch, [lambda: (pos(3), rg(3)), lambda: (neg(3), rg(3))], 3),
    (nested_call_args_around_float, [lambda: (rg(3),)], 2),
    (kwargs_call_around_print, [lambda: (rg(2, 3),)], 2),
    (format_in_a_list, [lambda: (rg(3),)], 2),
    # acc is an argument of the resume function: appending to it breaks again (torch would
    # replay the mutation after the graph instead)
    (list_local_mutated_after_break, [lambda: (rg(3),)], 2),  # the append is replayed
    (dict_local_branch, [lambda: (mtc.zeros(3, requires_grad=True), rg(3)),
                         lambda: (mtc.full((3,), 3.0, requires_grad=True), rg(3))], 3),
    (nested_containers_live, [lambda: (rg(3),)], 2),
    # the .item() value is a guarded constant of the resume function: a new value recompiles it
    (tuple_unpack_after_break, [lambda: (pos(3), pos(3)), lambda: (pos(3), neg(3))], 3),
    (list_comprehension_after_break, [lambda: (rg(3),)], 2),
    (returns_containers_in_branches, [lambda: (mtc.zeros(3, requires_grad=True),),
                                      lambda: (mtc.full((3,), 3.0, requires_grad=True),)], 3),
    (starred_unpack_in_call, [lambda: (rg(3), rg(3))], 2),
    (dict_items_loop_after_break, [lambda: (rg(3),)], 2),
    # a new `scale` recompiles the frame; the resume function (y, shift) is reused
    (defaults_and_kwonly, [lambda: (rg(3),), lambda: Call(rg(3), 5.0, note="m"),
                           lambda: Call(rg(3), shift=-1.0)], 5),
    (star_args, [lambda: (mtc.zeros(3, requires_grad=True), rg(3), rg(3)),
                 lambda: (mtc.full((3,), 3.0, requires_grad=True), rg(3), rg(3))], 3),
    (star_kwargs, [lambda: Call(rg(3), a=2.0), lambda: Call(rg(3), a=3.0, b=1.0)], 4),
    (star_args_kwargs_forwarded, [lambda: (rg(3), 1.0, 2.0)], 2),
    (default_tensor_arg, [lambda: (pos(3),), lambda: (neg(3),)], 2),
    # item() breaks the frame; its resume calls defaults_and_kwonly, which prints: a break
    # inside the inlined call, so the resume breaks at the call and the callee is a frame of
    # its own (x * scale, then y + shift), then z * y
    (keyword_call_site, [lambda: (rg(3), rg(3))], 4),
    (make_closure_with_print(3.0, mtc.ones(3)), [lambda: (rg(3),)], 2),
    (make_closure_with_branch(2.0), [lambda: (pos(3),), lambda: (neg(3),)], 3),
    (nested_defined_after_break, [lambda: (rg(3),)], 2),
    (nested_used_before_break, [lambda: (rg(2, 3),)], 2),
    (lambda_after_break, [lambda: (pos(3), pos(3)), lambda: (pos(3), neg(3))], 3),
    (closure_over_container, [lambda: (rg(3),)], 2),
    (comprehension_closure_after_branch, [lambda: (mtc.zeros(3, requires_grad=True),),
                                          lambda: (mtc.full((3,), 2.0, requires_grad=True),)],
     3),
    (calls_global_helper, [lambda: (rg(3),)], 3),
    (stores_attribute, [lambda: (rg(3), Recorder())], 2),
    (appends_to_input_list, [lambda: (rg(3), [])], 2),
    # the frame (tanh), Gate.forward as its own frame (linear, sum, gt), its branch, then * 2;
    # the second Gate is another instance of the class: modules are inlined (guarded by type,
    # parameters are graph inputs), so nothing recompiles where it takes the same branch —
    # torch 2.13: 4 graphs too (5 when the second takes the other branch)
    (module_with_branch, [lambda: (rg(2, 3), seeded_gate()), lambda: (-rg(2, 3), seeded_gate())],
     4),
    (item_then_python_arithmetic, [lambda: (rg(3),)], 2),
    (no_grad_then_break, [lambda: (rg(3),)], 2),
    # each branch's resume appends to acc (a side effect, replayed) and breaks at the second
    # `if`, whose resume compiles once per outcome: 4 graphs, as torch 2.13
    (sequential_branches_with_containers, [lambda: (pos(3), pos(3)), lambda: (neg(3), neg(3))],
     4),
]


@pytest.mark.parametrize("fn, calls, graphs", PROGRAMS,
                         ids=[getattr(p[0], "__qualname__", "").replace(".<locals>", "")
                              for p in PROGRAMS])
def test_program(fn, calls, graphs):
    check_breaks(fn, *[c() for c in calls], graphs=graphs)
    assert break_reasons(fn), "every program here breaks its graph at least once"
    for code in frames_of(fn)[1:]:
        assert RESUME_INFO[code].original is fn.__code__


def test_a_break_in_a_loop_body_runs_the_frame_eagerly_but_the_modules_compile():
    # module_list_with_print calls each module inside a loop: its frame cannot break there and
    # runs eagerly (torch skips it), but each module it calls is compiled as a frame of its own,
    # as torch's frame hook compiles it: Logger.forward's graph before its print, once for
    # both modules (inlined modules are guarded by type, their parameters are graph inputs;
    # the inputs require grad, so the second Logger's input matches too) — torch 2.13: 1 graph
    mods = [Logger(), Logger()]
    check_breaks(module_list_with_print, (rg(2, 3), mods), graphs=1)
    (entry,) = mtc.dynamo.cache_entries(module_list_with_print)
    assert entry.is_eager and "inside a loop" in entry.reason


def calls_nested_function_that_breaks(x):
    def noisy(t, label="noisy"):
        print(label)
        return t.sin()
    return noisy(x.cos()) + noisy(x, label="again")


def test_a_nested_function_that_breaks_is_made_again_at_the_call():
    # the break inside noisy() moves to the call; noisy — a function made while tracing — is
    # made again by the transformed code (with its default) and runs through the JIT as a frame
    # of its own (its graph after the print); the frame's resume function breaks at the second
    # call the same way: 3 graphs, as torch 2.13
    check_breaks(calls_nested_function_that_breaks, (rg(3),), graphs=3)
    (entry,) = mtc.dynamo.cache_entries(calls_nested_function_that_breaks)
    assert not entry.is_eager and "___make_noisy_" in entry.decompiled()


def test_there_are_at_least_thirty_programs():
    assert len(PROGRAMS) >= 30
