"""Builtins and the standard library over tensors and containers, traced as torch traces them.

Each program is written once against ``lib`` and run eagerly and compiled — with
``minitorch_compile`` and, when installed, with ``torch``: compiled must equal eager (values,
returned types, printed output), a second call compiles nothing, and the number of graphs and
graph breaks must equal torch 2.13's (no break for any of these constructs).
"""

from __future__ import annotations

import io
from contextlib import redirect_stdout

import pytest

import minitorch_compile as mtc
from tests.test_dynamo_side_effects import _state

from .dynamo_utils import CountingBackend

try:
    import torch
except ImportError:  # the comparison with torch is optional
    torch = None

PRELUDE = """
import functools, itertools, operator, collections, dataclasses
class Obj: pass
Pt = collections.namedtuple('Pt', ['a', 'b'])
@dataclasses.dataclass
class Cfg:
    scale: float
    shift: float
"""

PROGRAMS = {
 "max_scalar": "def f(x):\n    s = x.sum()\n    return max(s, 0) + min(2, s) + max(s, s * 2) + max([s, 1, s * 3])",
 "max_num_tensor": "def f(x):\n    return max(1, x.sum()) * x",
 "map": "def f(x):\n    return list(map(lambda t: t * 2, [x, x + 1]))",
 "map2": "def f(x):\n    return sum(map(operator.mul, [x, x], [1, 2]))",
 "filter": "def f(x):\n    return [t * 2 for t in filter(lambda v: v > 1, [1, 2, 3])] + [x]",
 "zip_enum_rev": "def f(x):\n    out = x\n    for i, (a, b) in enumerate(zip([1, 2], reversed([3, 4]))):\n        out = out + i * a * b\n    return out",
 "sorted": "def f(x):\n    return x * sorted([3, 1, 2], reverse=True)[0]",
 "any_all": "def f(x):\n    return x + any([False, True]) + all([1, 1])",
 "abs_t": "def f(x):\n    return abs(x) + abs(-3)",
 "len": "def f(x):\n    return x * len(x) * len([1, 2])",
 "isinstance": "def f(x):\n    return x * (isinstance(x, lib.Tensor) + issubclass(bool, int) + callable(f))",
 "type_name": "def f(x):\n    n = type(x).__name__\n    m = x.__class__.__name__\n    return x * len(n + m)",
 "hasattr_getattr": "def f(x):\n    o = Obj(); return x * hasattr(x, 'shape') * getattr(o, 'k', 2)",
 "setattr_obj": "def f(x, o):\n    setattr(o, 'k', 3)\n    return x * o.k",
 "reduce": "def f(x):\n    return functools.reduce(operator.add, [x, x * 2, x * 3])",
 "reduce_init": "def f(x):\n    return functools.reduce(lambda a, b: a * b, [x, x], 1)",
 "partial": "def f(x):\n    g = functools.partial(lib.add, x)\n    return g(x * 2)",
 "chain": "def f(x):\n    return sum(itertools.chain([x], [x * 2]))",
 "islice": "def f(x):\n    return sum(itertools.islice([x, x * 2, x * 3], 2))",
 "product": "def f(x):\n    out = x\n    for a, b in itertools.product([1, 2], [3]):\n        out = out + a * b\n    return out",
 "accumulate": "def f(x):\n    return list(itertools.accumulate([x, x, x]))[-1]",
 "count": "def f(x):\n    out = x\n    for i, c in zip(range(3), itertools.count(5)):\n        out = out + c\n    return out",
 "repeat": "def f(x):\n    return sum(itertools.repeat(x, 3))",
 "zip_longest": "def f(x):\n    return [a * (b or 1) for a, b in itertools.zip_longest([x, x], [2])]",
 "operator_fns": "def f(x):\n    return operator.mul(operator.add(x, 1), operator.neg(x)) + operator.getitem([1, 2], 0)",
 "itemgetter": "def f(x):\n    return operator.itemgetter(1)([x, x * 2])",
 "attrgetter": "def f(x):\n    return x * operator.attrgetter('ndim')(x)",
 "namedtuple": "def f(x):\n    p = Pt(x, 2)\n    return p.a * p.b + p[0]",
 "ordereddict": "def f(x):\n    d = collections.OrderedDict()\n    d['a'] = x\n    d['b'] = x * 2\n    return d['a'] + d['b'] + len(d)",
 "defaultdict": "def f(x):\n    d = collections.defaultdict(list)\n    d['a'].append(x)\n    return d['a'][0] * 2",
 "deque": "def f(x):\n    q = collections.deque([x])\n    q.append(x * 2)\n    q.appendleft(x * 3)\n    return q.popleft() + q.pop()",
 "dataclass": "def f(x, c):\n    return x * c.scale + c.shift",
 "dataclass_new": "def f(x):\n    c = Cfg(2.0, 1.0)\n    return x * c.scale + c.shift",
 "sets": "def f(x):\n    s = {1, 2}\n    s.add(3)\n    return x * len(s | {4}) * (2 in s)",
 "sets2": "def f(x):\n    s = set([1, 2])\n    s.update({5})\n    s.discard(1)\n    t = {v * 2 for v in s} & {4, 10}\n    return x * sum(sorted(t)) * (frozenset([1]) <= {1, 2}) * len(s - {2})",
 "list_methods": "def f(x):\n    l = [1, 2, 2]\n    return x * l.copy().index(2) * l.count(2)",
 "dict_methods": "def f(x):\n    d = {'a': x}\n    return d.get('a') + d.get('b', 1) + sum(d.values()) + len(list(d.items())) + len(d.keys())",
 "fstring_const": "def f(x):\n    name = f\"layer{3}_{'a'}\"\n    return x * len(name) * len('{}-{:02d}'.format('k', 7))",
 "str_ops": "def f(x):\n    return x * len('abc'.upper() + ','.join(['a', 'b']))",
}

# programs whose *result* is one of the new kinds of values (it must be rebuilt exactly)
PROGRAMS.update({
    "returns_ordereddict": "def f(x):\n    d = collections.OrderedDict(b=x)\n    d['a'] = x * 2\n    d.move_to_end('b')\n    return d",
    "returns_defaultdict": "def f(x):\n    d = collections.defaultdict(list)\n    d['k'].append(x)\n    return d",
    "returns_deque": "def f(x):\n    q = collections.deque([1])\n    q.appendleft(x)\n    q.rotate(1)\n    return q",
    "returns_set": "def f(x):\n    return x * 2, {1, 2} | {3}, frozenset({4})",
    "returns_partial": "def f(x):\n    return functools.partial(operator.mul, 3), x + 1",
    "returns_new_object": "def f(x):\n    o = Obj()\n    o.t = x * 2\n    o.same = o\n    return o",
    "returns_dataclass": "def f(x):\n    c = Cfg(x.sum(), 1.0)\n    return c",
    "returns_map_consumed_lazily": "def f(x):\n    seen = []\n    m = map(lambda t: seen.append(t) or t * 2, [x, x + 1, x + 2])\n    first = next(m)\n    seen.append('after first')\n    return first, list(m), seen",
    "count_zip_infinite": "def f(x):\n    return [x * i for i, _ in zip(itertools.count(1, 2), range(3))]",
    "chain_from_iterable": "def f(x):\n    return sum(itertools.chain.from_iterable([[x], [x * 2, x * 3]]))",
    "deque_maxlen_append_drops_left": "def f(x):\n    q = collections.deque(maxlen=2)\n    for i in range(4):\n        q.append(x * i)\n    return q[0] + q[1], len(q), q.maxlen",
    "deque_maxlen_appendleft_extend": "def f(x):\n    q = collections.deque([1, 2, 3], 3)\n    q.appendleft(0)\n    q.extend([7, 8])\n    q.extendleft([5])\n    return x * q[0] + q[-1], list(q)",
    "returns_deque_maxlen": "def f(x):\n    q = collections.deque([x, x + 1, x + 2, x + 3], maxlen=3)\n    q.append(x * 5)\n    return q",
    "min_max_iterable_scalars": "def f(x):\n    s = x.sum()\n    return max([s, 1.5]), min(s, s * 0.5)",
})


def _args(lib, ns, src):
    args = [lib.ones(3) * 1.5]
    if "o)" in src:
        args.append(ns["Obj"]())
    if "c)" in src:
        args.append(ns["Cfg"](2.0, 1.0))
    return args


def _run(name, lib, compiled):
    src = PROGRAMS[name]
    ns = {"lib": lib}
    exec(PRELUDE + src, ns)
    counter = CountingBackend()
    fn = ns["f"]
    if compiled:
        if lib is mtc:
            mtc.dynamo.reset()
            fn = mtc.compile(fn, backend=counter)
        else:
            torch._dynamo.reset()
            fn = torch.compile(fn, backend=counter, dynamic=False)
    buf = io.StringIO()
    with redirect_stdout(buf):
        out1 = fn(*_args(lib, ns, src))
        first = counter.frame_count
        out2 = fn(*_args(lib, ns, src))
    kinds = _kinds(out1)
    return _state([out1, out2], lib), kinds, buf.getvalue(), counter.frame_count, first


def _kinds(v):
    """The Python types of a result, recursively (a rebuilt OrderedDict must stay one)."""
    if isinstance(v, (list, tuple)):
        return (type(v).__name__, [_kinds(i) for i in v])
    if isinstance(v, dict):
        return (type(v).__name__, [(k, _kinds(i)) for k, i in v.items()])
    if hasattr(v, "detach"):
        return "tensor"
    if hasattr(v, "__dict__") and not callable(v):
        return (type(v).__name__, {k: (_kinds(i) if i is not v else "self")
                                   for k, i in vars(v).items()})
    return type(v).__name__


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_compiled_equals_eager_in_one_graph(name):
    eager = _run(name, mtc, compiled=False)
    compiled = _run(name, mtc, compiled=True)
    assert compiled[:3] == eager[:3]
    assert compiled[3] == compiled[4], "the second call compiled again"
    ns = {"lib": mtc}
    exec(PRELUDE + PROGRAMS[name], ns)
    ex = mtc.dynamo.explain(ns["f"])(*_args(mtc, ns, PROGRAMS[name]))
    assert ex.break_reasons == [], [r.reason for r in ex.break_reasons]
    assert ex.graph_count <= 1 and ex.graph_break_count == ex.graph_count - 1  # torch's count


@pytest.mark.torch
@pytest.mark.skipif(torch is None, reason="torch not installed")
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_same_values_and_graph_counts_as_torch(name):
    ours = _run(name, mtc, compiled=True)
    theirs = _run(name, torch, compiled=True)
    if name not in ("returns_partial",):  # partial(operator.mul) prints no values
        assert ours[0] == theirs[0]
    assert ours[3:] == theirs[3:]
