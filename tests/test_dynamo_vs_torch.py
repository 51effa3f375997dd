"""Optional: the same programs under ``torch.compile`` and ``mtc.compile``, with counting backends.

Each program is written once against a module called ``lib`` and run twice — with ``lib`` bound
to ``minitorch_compile`` and to ``torch``.  Where the construct is captured by both, the number
of graphs (compiles) and the ops in each graph must agree, and so must the values.  Skipped
when torch is not installed.  (``dynamic=False`` on torch: its automatic dynamic shapes would
otherwise make a second shape reuse one graph, which mtc does not do yet.)
"""

import textwrap

import numpy as np
import pytest

import minitorch_compile as mtc

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch


class Counter:
    """A backend recording the call-node targets of each graph."""

    def __init__(self):
        self.graphs: list[list[str]] = []

    def __call__(self, gm, example_inputs):
        self.graphs.append([_name(n) for n in gm.graph.nodes
                            if n.op in ("call_function", "call_method", "call_module")])
        return gm.forward


def _name(node) -> str:
    t = node.target
    return t if isinstance(t, str) else getattr(t, "__name__", str(t))


PROGRAMS = {
    "arith": ("""
        def f(x, y):
            return (x.cos() + y) * 2 - lib.sin(x)
        """, lambda lib: (lib.ones(3) * 0.5, lib.ones(3) * 0.25)),
    "tutorial_dict": ("""
        def f(inputs):
            x = inputs["x"]
            y = inputs["y"]
            x = x.cos().cos()
            return x * y
        """, lambda lib: ({"x": lib.ones(4) * 0.3, "y": lib.ones(4) * 2},)),
    "loops_and_containers": ("""
        def f(xs, n):
            out = [x * i for i, x in enumerate(xs)]
            for _ in range(n):
                out[0] = out[0] + 1
            a, *rest = out
            return {"a": a, "rest": rest, "n": len(rest)}
        """, lambda lib: ([lib.ones(2), lib.ones(2) * 2, lib.ones(2) * 3], 2)),
    "no_grad": ("""
        def f(x):
            with lib.no_grad():
                y = x * 2
            return x.sin() * y
        """, lambda lib: (lib.ones(3).requires_grad_(True),)),
    "module": ("""
        def f(x, mod):
            return mod(x).relu().sum(dim=-1)
        """, lambda lib: (lib.ones(2, 4), _seq(lib))),
    "shapes_and_branches": ("""
        def f(x, flag):
            if x.dim() == 2 and x.shape[0] > 1 and flag:
                return x.reshape(x.shape[1], x.shape[0]).t()
            return x
        """, lambda lib: (lib.ones(2, 3), True)),
}


def _seq(lib):
    mod = lib.nn.Sequential(lib.nn.Linear(4, 3), lib.nn.Tanh(), lib.nn.Linear(3, 2))
    with lib.no_grad():  # the same weights in both libraries
        for p in mod.parameters():
            values = np.linspace(-1, 1, p.numel(), dtype=np.float32).reshape(tuple(p.shape))
            p.copy_(lib.tensor(values))
    return mod


def _run(name, lib, compile_fn):
    src, make_args = PROGRAMS[name]
    ns = {"lib": lib}
    exec(textwrap.dedent(src), ns)
    f = ns["f"]
    cnt = Counter()
    out = compile_fn(f, backend=cnt)(*make_args(lib))
    return cnt, out


def _mtc_compile(f, backend):
    return mtc.compile(f, backend=backend)


def _torch_compile(f, backend):
    return torch.compile(f, backend=backend, dynamic=False)


def _flat(out):
    if isinstance(out, dict):
        return [v for k in out for v in _flat(out[k])]
    if isinstance(out, (list, tuple)):
        return [v for o in out for v in _flat(o)]
    return [out]


@pytest.fixture(autouse=True)
def _reset():
    mtc.dynamo.reset()
    torch._dynamo.reset()
    yield
    mtc.dynamo.reset()
    torch._dynamo.reset()


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_same_graphs_and_ops_as_torch(name):
    m_cnt, m_out = _run(name, mtc, _mtc_compile)
    t_cnt, t_out = _run(name, torch, _torch_compile)
    assert len(m_cnt.graphs) == len(t_cnt.graphs)
    assert m_cnt.graphs == t_cnt.graphs  # the same ops, by name, in the same order
    m_flat, t_flat = _flat(m_out), _flat(t_out)
    assert len(m_flat) == len(t_flat)
    for m, t in zip(m_flat, t_flat):
        if isinstance(t, torch.Tensor):
            np.testing.assert_allclose(m.detach().numpy(), t.detach().numpy(), rtol=1e-5,
                                       atol=1e-6)
        else:
            assert m == t


def test_recompiles_like_torch_on_shape_and_training_flag():
    def run(lib, compile_fn):
        cnt = Counter()
        mod = _seq(lib)

        def f(x, m):
            return m(x) * (2 if m.training else 3)

        cf = compile_fn(f, backend=cnt)
        cf(lib.ones(2, 4), mod)
        cf(lib.ones(2, 4), mod)   # hit
        cf(lib.ones(5, 4), mod)   # new shape
        mod.eval()
        cf(lib.ones(5, 4), mod)   # training flag
        return len(cnt.graphs)

    assert run(mtc, _mtc_compile) == run(torch, _torch_compile) == 3


class _Scaled:
    """A user module class made for one library (``lib.nn.Module`` subclass)."""

    @staticmethod
    def make(lib, k: float, bias: bool = True):
        class Scaled(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = lib.nn.Linear(4, 4, bias=bias)
                self.k = k

            def forward(self, x):
                return self.lin(x) * self.k

        return Scaled


def test_module_instances_share_entries_like_torch():
    """torch 2.13 inlines modules (``inline_inbuilt_nn_modules``): guarded by class and by what
    the trace reads, so another instance of the same class reuses the graph; another attribute
    value, parameter set or class recompiles."""
    def run(lib, compile_fn):
        cnt = Counter()
        Scaled = _Scaled.make(lib, 2.0)

        def f(x, m):
            return m(x).relu()

        cf = compile_fn(f, backend=cnt)
        x = lib.ones(3, 4)
        counts = []
        other_k = Scaled()
        other_k.k = 3.0
        for mod in (Scaled(), Scaled(), other_k, lib.nn.Linear(4, 4), lib.nn.Linear(4, 4),
                    lib.nn.Linear(4, 4, bias=False), _Scaled.make(lib, 2.0)()):
            cf(x, mod)
            counts.append(len(cnt.graphs))
        return counts

    assert run(mtc, _mtc_compile) == run(torch, _torch_compile) == [1, 1, 2, 3, 3, 4, 5]


def test_ints_read_through_a_module_stay_static_like_torch():
    """torch 2.13 (``allow_unspec_int_on_nn_module=False``): an int reached through a module —
    an attribute, an item of a list attribute, a nested object's attribute — is specialized on
    every value, while a float attribute becomes dynamic on its second value, like an int
    argument does."""
    def run(lib, compile_fn):
        class M(lib.nn.Module):
            def __init__(self, k, n):
                super().__init__()
                self.k, self.sizes = k, [n, 1]
                self.calls = 0

            def forward(self, x):
                self.calls += 1
                return x * self.k + self.sizes[0]

        cnt = Counter()
        cf = compile_fn(lambda x, m: m(x), backend=cnt)
        counts = []
        for k, n in ((2.0, 1), (3.0, 1), (4.0, 1), (4.0, 2), (4.0, 3)):
            cf(lib.ones(2), M(k, n))
            counts.append(len(cnt.graphs))
        a, b = M(1.0, 1), M(1.0, 1)
        for m in (a, a, b, a, b):  # self.calls: 0, 1, 0, 2, 1 — each value its own graph
            cf(lib.ones(2), m)
        counts.append(len(cnt.graphs))
        return counts

    # (torch with its default automatic dynamic, not the dynamic=False of the tests above)
    assert run(mtc, mtc.compile) == run(torch, torch.compile) == [1, 2, 2, 3, 4, 6]


def test_parameter_list_iterated_and_indexed_like_torch():
    """A ``ParameterList`` is iterated, indexed and counted at compile time, its parameters
    graph inputs; appending one recompiles (its keys are guarded). It ran the frame eagerly."""
    def run(lib, compile_fn):
        class P(lib.nn.Module):
            def __init__(self, n):
                super().__init__()
                self.plist = lib.nn.ParameterList(
                    [lib.nn.Parameter(lib.ones(4) * (i + 1)) for i in range(n)])

            def forward(self, x):
                y = x * self.plist[-1] + len(self.plist)
                for i, p in enumerate(self.plist):
                    y = y + p * i
                return y

        cnt = Counter()
        cf = compile_fn(lambda x, m: m(x), backend=cnt)
        grown = P(2)
        grown.plist.append(lib.nn.Parameter(lib.ones(4)))
        outs = [float(cf(lib.ones(4), m).sum().detach()) for m in (P(2), P(2), P(3), grown)]
        return len(cnt.graphs), outs

    assert run(mtc, _mtc_compile) == run(torch, _torch_compile) == (
        2, [24.0, 24.0, 56.0, 32.0])
