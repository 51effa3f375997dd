"""Graph-break programs ported from torch's ``test/dynamo/test_misc.py``, ``test_repros.py``,
``test_ctx_manager.py`` and ``test_graph_breaks``-style tests: ``print``, ``.item()``,
``.tolist()``, ``.numpy()``, data-dependent ``if``/``while``, breaks in inlined calls, in
``with`` blocks, in loops and comprehensions, with containers and closures live.

Each runs compiled and eagerly under mtc (values, printed text and side effects equal) and its
counts are torch 2.13's (``TORCH_COUNTS``, re-measured when torch is installed), except for
``DIFFERS``.  Data-dependent programs are called with inputs that take each direction.
"""

import sys

from .dynamo_fidelity import (
    Program,
    fidelity_tests,
    one,
    ramp,
    two,
)

P = Program


def signs(lib, *shape):
    """Two calls: a tensor with a positive sum, then one with a negative sum."""
    return [(ramp(lib, *shape, shift=0.5),), (ramp(lib, *shape, scale=-0.1, shift=-0.5),)]


PROGRAMS = {
    "print_between_ops": P("""
        def f(x):
            y = x.cos()
            print("between", y.shape)
            return y.sin()
        """, lambda lib: one(lib, 4), "after test_misc.py::test_graph_break_print"),
    "item_as_python_number": P("""
        def f(x):
            s = x.sum().item()
            return x * s + 1
        """, lambda lib: one(lib, 4), "after test_misc.py::test_item"),
    "int_item_in_range": P("""
        def f(x):
            n = int(x.abs().sum().item())
            for _ in range(n):
                x = x * 1.5
            return x
        """, lambda lib: one(lib, 3), "after test_repros.py (int(t.item()))"),
    "tolist": P("""
        def f(x):
            vals = x.tolist()
            return x.cos() * vals[1], vals
        """, lambda lib: one(lib, 3), "after test_misc.py::test_tolist"),
    "numpy_break": P("""
        def f(x):
            y = x.cos()
            a = y.numpy()
            return y * float(a.sum())
        """, lambda lib: one(lib, 3), "test_functions.py::test_numpy_size (.numpy())"),
    "data_dependent_if": P("""
        def f(x):
            x = x.cos().cos()
            if x.mean() > 0.5:
                x = x / 1.1
            return x * 2
        """, lambda lib: signs(lib, 4), "the torch.compile tutorial's function"),
    "data_dependent_return": P("""
        def f(x):
            y = x * 2
            if y.sum() > 0:
                return y.relu()
            return -y
        """, lambda lib: signs(lib, 4), "after test_repros.py::test_data_dependent_return"),
    "bool_of_tensor": P("""
        def f(x):
            if bool((x > 0).any()):
                return x + 1
            return x - 1
        """, lambda lib: signs(lib, 4), "after test_misc.py::test_tensor_bool"),
    "while_on_tensor": P("""
        def f(x):
            y = x.abs() + 1
            while y.sum() < 100:
                y = y * 2
            return y
        """, lambda lib: one(lib, 4), "after test_misc.py::test_while_loop_graph_break"),
    "break_in_inlined_call": P("""
        def leaf(x):
            print("leaf")
            return x.sin()

        def outer(x):
            return leaf(x.cos()) * 2

        def f(x):
            return outer(x) + 1
        """, lambda lib: one(lib, 4), "after test_misc.py::test_graph_break_inlining"),
    "break_in_user_method": P("""
        class Layer:
            def __init__(self, k):
                self.k = k
            def __call__(self, x):
                y = x * self.k
                print("layer", self.k)
                return y.tanh()

        def f(x):
            return Layer(2)(x) + Layer(3)(x)
        """, lambda lib: one(lib, 4), "after test_misc.py::test_user_class_graph_break"),
    "break_in_no_grad": P("""
        def f(x):
            with lib.no_grad():
                y = x * 2
                print("inside")
                z = y + 1
            return x * z, z.requires_grad
        """, lambda lib: [(ramp(lib, 3).requires_grad_(True),)],
        "after test_ctx_manager.py::test_no_grad_graph_break"),
    "break_with_dict_live": P("""
        def f(x, y):
            state = {"h": x.cos(), "n": 2}
            print("state", sorted(state))
            state["h"] = state["h"] * y
            return state["h"] * state["n"]
        """, lambda lib: two(lib, 4), "after test_repros.py::test_dict_graph_break"),
    "break_with_list_on_stack": P("""
        def f(x):
            return lib.stack([x.cos(), x * x.sum().item(), x.sin()])
        """, lambda lib: one(lib, 3), "after test_misc.py::test_graph_break_stack"),
    "break_in_closure": P("""
        def f(x):
            k = 3
            def g(y):
                print("g")
                return y * k
            return g(x.cos()) + k
        """, lambda lib: one(lib, 4), "after test_misc.py::test_closure_graph_break"),
    "multiple_prints": P("""
        def f(x):
            a = x + 1
            print("a")
            b = a * 2
            print("b")
            c = b - 3
            print("c")
            return c.sum()
        """, lambda lib: one(lib, 4), "after test_misc.py::test_multiple_graph_breaks"),
    "print_in_loop": P("""
        def f(x):
            for i in range(3):
                x = x * 2
                print(i)
            return x
        """, lambda lib: one(lib, 4), "after test_misc.py::test_graph_break_in_loop"),
    "break_in_try": P("""
        def f(x):
            try:
                y = x.cos()
                print("trying")
                return y + 1
            except ValueError:
                return x
        """, lambda lib: one(lib, 4), "after test_exceptions.py::test_graph_break_in_try"),
    "item_in_listcomp": P("""
        def f(x, y):
            z = x.cos()
            vals = [v.item() for v in y]
            return z * sum(vals)
        """, lambda lib: two(lib, 3), "after test_misc.py::test_listcomp_graph_break"),
    "print_in_listcomp": P("""
        def f(x):
            ys = [print(i) or x * i for i in range(3)]
            return ys[0] + ys[2]
        """, lambda lib: one(lib, 4), "after test_misc.py::test_listcomp_graph_break (print)"),
    "break_then_tuple_return": P("""
        def f(x, y):
            a, b = x.cos(), y.sin()
            s = (a * b).sum().item()
            c, d = (b, a) if s > 0 else (a, b)
            return c * 2 + d, s > 0
        """, lambda lib: two(lib, 4), "after test_repros.py::test_tuple_graph_break"),
    "break_with_kwargs_call": P("""
        def combine(a, b, *, scale=1.0):
            return a * scale + b

        def f(x):
            n = len(x.tolist())
            return combine(x.cos(), x.sin(), scale=float(n))
        """, lambda lib: one(lib, 4), "after test_functions.py::test_kwargs (with a break)"),
    "module_forward_break": P("""
        class Net(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = lib.nn.Linear(3, 3)
            def forward(self, x):
                h = self.fc(x)
                if h.sum() > 0:
                    h = h.relu()
                return h * 2

        NET = Net()
        with lib.no_grad():
            NET.fc.weight.copy_(lib.arange(9).float().reshape(3, 3) * 0.1 - 0.4)
            NET.fc.bias.fill_(0.1)

        def f(x):
            return NET(x) + 1
        """, lambda lib: signs(lib, 2, 3), "after test_repros.py (a module's branch)"),
    "repr_of_tensor": P("""
        def f(x):
            y = x.cos()
            s = repr(tuple(y.shape))
            return y * len(s)
        """, lambda lib: one(lib, 4), "after test_misc.py::test_repr"),
}

# (graphs over all calls, explain graph_count, explain graph_break_count, ops per graph)
TORCH_COUNTS = {
    'print_between_ops': (2, 2, 1, (1, 1)),
    'item_as_python_number': (2, 2, 1, (1, 2)),
    'int_item_in_range': (1, 1, 0, (2,)),
    'tolist': (1, 1, 0, (2,)),
    'numpy_break': (2, 2, 1, (3, 1)),
    'data_dependent_if': (2, 2, 1, (4, 2)),
    'data_dependent_return': (3, 2, 1, (3, 1, 1)),
    'bool_of_tensor': (3, 2, 1, (2, 1, 1)),
    'while_on_tensor': (2, 2, 1, (4, 3)),
    'break_in_inlined_call': (4, 4, 3, (1, 1, 1, 1)),
    'break_in_user_method': (4, 4, 3, (1, 1, 1, 1)),
    'break_in_no_grad': (2, 2, 1, (3, 4)),
    'break_with_dict_live': (2, 2, 1, (1, 2)),
    'break_with_list_on_stack': (2, 2, 1, (2, 3)),
    'break_in_closure': (3, 3, 2, (1, 1, 1)),
    'multiple_prints': (4, 4, 3, (1, 1, 1, 1)),
    'print_in_loop': (0, 0, -1, ()),
    'break_in_try': (0, 0, -1, ()),
    'item_in_listcomp': (2, 2, 1, (4, 1)),
    'print_in_listcomp': (1, 1, 0, (1,)),
    'break_then_tuple_return': (2, 2, 1, (4, 2)),
    'break_with_kwargs_call': (1, 1, 0, (4,)),
    'module_forward_break': (3, 3, 2, (3, 2, 1)),
    'repr_of_tensor': (1, 1, 0, (2,)),
}

DIFFERS = {}

if sys.version_info >= (3, 12):
    # the `while` test: 3.12+ compiles it twice (before the loop and at its end); torch 2.13
    # then compiles only the graph up to the first test, and so does mtc
    TORCH_COUNTS["while_on_tensor"] = (1, 1, 0, (4,))

test_compiled_equals_eager_with_torchs_counts, test_torch_counts_are_the_table = \
    fidelity_tests(PROGRAMS, TORCH_COUNTS, DIFFERS)
