"""A sweep of programs in the manner of torch's ``test/dynamo/test_unspec.py`` (Python numbers
as inputs: specialized, then dynamic), ``test_recompiles.py`` (guard failures, automatic
dynamic shapes), ``test_misc.py``, ``test_functions.py`` and ``test_repros.py`` — each called
several times with the inputs that make torch recompile (or not).

Each runs compiled and eagerly under mtc (values, printed text and side effects equal) and its
counts — graphs over all the calls, explain's counts for the first call, ops per graph — are
torch 2.13's (``TORCH_COUNTS``, re-measured when torch is installed), except for ``DIFFERS``.
"""

import types
import warnings

import pytest

from minitorch_compile.dynamo.exc import CompilerFallbackWarning

from .dynamo_fidelity import (
    Program,
    fidelity_tests,
    mtc_vs_eager,
    one,
    ramp,
    torch_counts,
    two,
)

P = Program


def with_numbers(*values):
    """Calls ``f(x, v)`` for each ``v`` (the same tensor each time)."""
    return lambda lib: [(ramp(lib, 3), v) for v in values]


def sizes(*ns):
    """Calls ``f(x)`` with 1-d tensors of each size."""
    return lambda lib: [(ramp(lib, n),) for n in ns]


PROGRAMS = {
    # ------------------------------------------------------------ test_unspec.py
    "float_arg_changes": P("""
        def f(x, s):
            return x * s + 1
        """, with_numbers(1.5, 2.5, 3.5), "after test_unspec.py::test_unspec_float_input"),
    "int_arg_changes": P("""
        def f(x, n):
            return x + n
        """, with_numbers(1, 2, 3), "after test_unspec.py::test_unspec_int_input"),
    "int_arg_same_value": P("""
        def f(x, n):
            return x * n
        """, with_numbers(2, 2, 2), "after test_unspec.py (an int input that does not change)"),
    "int_arg_in_range_loop": P("""
        def f(x, n):
            for _ in range(n):
                x = x * 2
            return x
        """, with_numbers(2, 3, 4), "after test_unspec.py (range of an int input)"),
    "float_arg_in_math": P("""
        def f(x, s):
            return x * math.sqrt(s)
        """, with_numbers(4.0, 9.0), "after test_unspec.py::test_unspec_float_math"),
    "bool_arg_flips": P("""
        def f(x, flag):
            if flag:
                return x + 1
            return x - 1
        """, with_numbers(True, False, True), "after test_unspec.py (a bool input)"),
    "int_arg_compared": P("""
        def f(x, n):
            if n > 2:
                return x * n
            return x + n
        """, with_numbers(1, 3, 5, 2), "after test_unspec.py (a comparison on an int input)"),
    "float_arg_returned": P("""
        def f(x, s):
            return x.cos(), s * 2
        """, with_numbers(0.5, 1.5), "after test_unspec.py (a float input returned)"),
    "int_arg_indexes_tensor": P("""
        def f(x, i):
            return x[i] * 2
        """, with_numbers(0, 1, 2), "after test_unspec.py (an int input as an index)"),
    # ------------------------------------------------------------ test_recompiles.py
    "shape_changes_automatic_dynamic": P("""
        def f(x):
            return x.sin() * 2
        """, sizes(3, 4, 5, 6),
        "after test_recompiles.py::test_automatic_dynamic_reduce_recompiles"),
    "shape_changes_with_reduction": P("""
        def f(x):
            return (x * x).sum() / x.shape[0]
        """, sizes(2, 3, 4), "after test_recompiles.py (a size read as a number)"),
    "same_shape_no_recompile": P("""
        def f(x):
            return x.relu() + 1
        """, sizes(4, 4, 4), "after test_recompiles.py (the same shape)"),
    "dtype_changes": P("""
        def f(x):
            return x + 1
        """, lambda lib: [(ramp(lib, 3),), (lib.arange(3),), (ramp(lib, 3),)],
        "after test_recompiles.py (a dtype guard)"),
    "requires_grad_changes": P("""
        def f(x):
            return (x * 2).sum()
        """, lambda lib: [(ramp(lib, 3),), (ramp(lib, 3).requires_grad_(True),)],
        "after test_recompiles.py (a requires_grad guard)"),
    "list_length_changes": P("""
        def f(xs):
            out = xs[0]
            for t in xs[1:]:
                out = out + t
            return out
        """, lambda lib: [([ramp(lib, 2)] * 2,), ([ramp(lib, 2)] * 3,), ([ramp(lib, 2)] * 4,)],
        "after test_recompiles.py (a list length guard)"),
    "dict_keys_change": P("""
        def f(d):
            return sum(v * 2 for v in d.values())
        """, lambda lib: [({"a": ramp(lib, 2)},), ({"a": ramp(lib, 2), "b": ramp(lib, 2)},)],
        "after test_recompiles.py (a dict keys guard)"),
    "none_then_tensor": P("""
        def f(x, y=None):
            if y is None:
                return x * 2
            return x * y
        """, lambda lib: [(ramp(lib, 3), None), (ramp(lib, 3), ramp(lib, 3)),
                          (ramp(lib, 3), None)],
        "after test_recompiles.py (None vs a tensor)"),
    "string_arg_changes": P("""
        def f(x, mode):
            if mode == "add":
                return x + 1
            return x * 3
        """, with_numbers("add", "mul", "add"), "after test_recompiles.py (a str guard)"),
    "two_dims_change": P("""
        def f(x):
            return x.sum(0) * x.shape[1]
        """, lambda lib: [(ramp(lib, 2, 3),), (ramp(lib, 3, 3),), (ramp(lib, 4, 5),)],
        "after test_recompiles.py (both dims change)"),
    "scalar_tensor_vs_vector": P("""
        def f(x):
            return x * 2 + 1
        """, lambda lib: [(ramp(lib, 3),), (lib.tensor(1.5),), (ramp(lib, 3),)],
        "after test_recompiles.py (a rank guard)"),
    # ------------------------------------------------------------ test_misc / functions / repros
    "view_from_shape_product": P("""
        def f(x):
            return x.view(x.shape[0] * x.shape[1]).cos()
        """, lambda lib: one(lib, 2, 3), "after test_misc.py::test_shape_int_arith"),
    "size_method_loop": P("""
        def f(x):
            acc = x[0]
            for i in range(1, x.size(0)):
                acc = acc + x[i]
            return acc
        """, lambda lib: one(lib, 3, 2), "after test_misc.py (x.size(0) in range)"),
    "where_and_clamp": P("""
        def f(x, y):
            return lib.where(x > 0, x, y).clamp(-0.5, 0.5)
        """, lambda lib: two(lib, 4), "after test_functions.py::test_where"),
    "inplace_on_clone": P("""
        def f(x):
            y = x.clone()
            y.add_(1)
            y.mul_(2)
            return y
        """, lambda lib: one(lib, 3), "after test_misc.py (in-place on a clone)"),
    "star_unpack_list": P("""
        def f(xs):
            first, *rest = xs
            return first * len(rest) + rest[-1]
        """, lambda lib: [([ramp(lib, 2), ramp(lib, 2), ramp(lib, 2)],)],
        "after test_functions.py::test_unpack_ex"),
    "sorted_with_lambda_key": P("""
        def f(d):
            keys = sorted(d, key=lambda k: -len(k))
            return d[keys[0]] * 2
        """, lambda lib: [({"a": ramp(lib, 2), "bbb": ramp(lib, 2)},)],
        "after test_functions.py (sorted with a key)"),
    "partial_call": P("""
        def scale(x, k):
            return x * k

        def f(x):
            g = functools.partial(scale, k=3)
            return g(x) + 1
        """, lambda lib: one(lib, 3), "after test_functions.py::test_partial"),
    "sequential_module": P("""
        NET = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.ReLU(), lib.nn.Linear(4, 2))
        with lib.no_grad():
            for p in NET.parameters():
                p.copy_(lib.ones(p.shape) * 0.1)

        def f(x):
            return NET(x).sum(-1)
        """, lambda lib: one(lib, 2, 3), "after test_modules.py::test_sequential"),
    "generator_expression_sum": P("""
        def f(x):
            return sum(x * i for i in range(4))
        """, lambda lib: one(lib, 3), "after test_functions.py (a generator expression)"),
    "fstring_of_shape": P("""
        def f(x):
            tag = f"{x.shape[0]}x{x.shape[1]}"
            return x * len(tag)
        """, lambda lib: one(lib, 2, 3), "after test_misc.py (an f-string of a shape)"),
    "assert_on_shape": P("""
        def f(x):
            assert x.shape[0] == 3, "three rows"
            return x.softmax(-1)
        """, lambda lib: one(lib, 3, 2), "after test_misc.py::test_assert"),
    "while_int_counter": P("""
        def f(x):
            i = 0
            while i < 3:
                x = x + i
                i += 1
            return x
        """, lambda lib: one(lib, 3), "after test_misc.py (a while loop on an int)"),
    "cat_and_stack": P("""
        def f(x, y):
            a = lib.cat([x, y])
            b = lib.stack([x, y])
            return a.sum() + b.sum(0)
        """, lambda lib: two(lib, 3), "after test_functions.py::test_cat"),
    "max_of_shape_ints": P("""
        def f(x, y):
            n = max(x.shape[0], y.shape[0])
            return x.sum() * n + y.sum()
        """, lambda lib: [(ramp(lib, 3), ramp(lib, 4))], "after test_misc.py (max of sizes)"),
    "item_then_branch_on_python_number": P("""
        def f(x):
            s = x.sum().item()
            if s > 0:
                return x * 2
            return x * -1
        """, lambda lib: [(ramp(lib, 3, shift=0.5),), (ramp(lib, 3, shift=-2.0),)],
        "after test_repros.py (a branch on .item())"),
    "module_list_loop": P("""
        class Net(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.layers = lib.nn.ModuleList([lib.nn.Linear(2, 2) for _ in range(3)])
                with lib.no_grad():
                    for p in self.parameters():
                        p.fill_(0.2)
            def forward(self, x):
                for layer in self.layers:
                    x = layer(x).tanh()
                return x

        NET = Net()

        def f(x):
            return NET(x)
        """, lambda lib: one(lib, 2, 2), "after test_modules.py::test_module_list"),
}

PROGRAMS.update({
    "global_tensor_read": P("""
        W = lib.arange(3).float() * 0.5

        def f(x):
            return x * W + W.sum()
        """, lambda lib: one(lib, 3), "after test_misc.py (a global tensor)"),
    "input_object_attribute_changes": P("""
        def f(x, cfg):
            return x * cfg.k
        """, lambda lib: [(ramp(lib, 3), types.SimpleNamespace(k=k)) for k in (2, 3, 4)],
        "after test_recompiles.py (an attribute of an input object)"),
    "keyword_only_float_changes": P("""
        def f(x, *, scale=2.0):
            return x * scale
        """, lambda lib: [(ramp(lib, 3),)], "after test_unspec.py (a keyword default)"),
    "shape_branch_with_dynamic_sizes": P("""
        def f(x):
            if x.shape[0] > 3:
                return x.sum()
            return x.mean()
        """, sizes(2, 3, 4, 5, 6), "after test_recompiles.py (a branch on a dynamic size)"),
    "floordiv_of_size": P("""
        def f(x):
            half = x.shape[0] // 2
            return x[:half].sum() + x[half:].sum() * 2
        """, sizes(4, 6, 8), "after test_misc.py (size arithmetic, dynamic)"),
    "numel_and_dim": P("""
        def f(x):
            return x * (x.numel() + x.dim())
        """, lambda lib: one(lib, 2, 3), "after test_misc.py::test_numel"),
    "nested_dict_input": P("""
        def f(d):
            return d["a"]["b"] * 2 + d["c"][0]
        """, lambda lib: [({"a": {"b": ramp(lib, 2)}, "c": [ramp(lib, 2)]},)],
        "after test_functions.py (nested containers as input)"),
    "int_then_float_arg": P("""
        def f(x, s):
            return x * s
        """, with_numbers(2, 2.0, 3.0), "after test_unspec.py (int vs float input)"),
    "transpose_and_permute": P("""
        def f(x):
            return x.t().matmul(x) + x.permute(1, 0).sum()
        """, lambda lib: one(lib, 2, 3), "after test_functions.py (transpose, permute)"),
    "chained_int_comparison": P("""
        def f(x, n):
            if 0 < n < 3:
                return x + n
            return x - n
        """, with_numbers(1, 2, 5), "after test_unspec.py (a chained comparison)"),
    "tuple_of_ints_arg": P("""
        def f(x, shape):
            return x.reshape(shape) * 2
        """, lambda lib: [(ramp(lib, 6), (2, 3)), (ramp(lib, 6), (3, 2)), (ramp(lib, 6), (6, 1))],
        "after test_recompiles.py (a tuple of ints as input)"),
    "int_arg_many_values": P("""
        def f(x, n):
            return x * n + n
        """, with_numbers(*range(2, 12)), "after test_recompiles.py (automatic dynamic int)"),
    "softmax_module_call": P("""
        SM = lib.nn.Softmax(dim=-1)

        def f(x):
            return SM(x * 2)
        """, lambda lib: one(lib, 2, 3), "after test_modules.py (a module instance global)"),
})


# (graphs over all calls, explain graph_count, explain graph_break_count, ops per graph)
TORCH_COUNTS = {
    'assert_on_shape': (1, 1, 0, (1,)),
    'bool_arg_flips': (2, 1, 0, (1, 1)),
    'cat_and_stack': (1, 1, 0, (5,)),
    'chained_int_comparison': (3, 1, 0, (1, 1, 1)),
    'dict_keys_change': (2, 1, 0, (2, 4)),
    'dtype_changes': (2, 1, 0, (1, 1)),
    'float_arg_changes': (2, 1, 0, (2, 3)),
    'float_arg_in_math': (2, 1, 0, (1, 3)),
    'float_arg_returned': (2, 1, 0, (1, 4)),
    'floordiv_of_size': (2, 1, 0, (6, 7)),
    'fstring_of_shape': (1, 1, 0, (1,)),
    'generator_expression_sum': (1, 1, 0, (8,)),
    'int_arg_many_values': (2, 1, 0, (2, 2)),
    'global_tensor_read': (1, 1, 0, (3,)),
    'inplace_on_clone': (1, 1, 0, (3,)),
    'input_object_attribute_changes': (2, 1, 0, (1, 1)),
    'int_arg_changes': (2, 1, 0, (1, 1)),
    'int_arg_compared': (3, 1, 0, (1, 1, 1)),
    'int_arg_in_range_loop': (3, 1, 0, (2, 3, 4)),
    'int_arg_indexes_tensor': (2, 1, 0, (2, 2)),
    'int_arg_same_value': (1, 1, 0, (1,)),
    'int_then_float_arg': (3, 1, 0, (1, 1, 2)),
    'item_then_branch_on_python_number': (3, 2, 1, (1, 1, 1)),
    'keyword_only_float_changes': (1, 1, 0, (1,)),
    'list_length_changes': (3, 1, 0, (1, 2, 3)),
    'max_of_shape_ints': (1, 1, 0, (4,)),
    'module_list_loop': (1, 1, 0, (6,)),
    'nested_dict_input': (1, 1, 0, (2,)),
    'none_then_tensor': (2, 1, 0, (1, 1)),
    'numel_and_dim': (1, 1, 0, (1,)),
    'partial_call': (1, 1, 0, (2,)),
    'requires_grad_changes': (2, 1, 0, (2, 2)),
    'same_shape_no_recompile': (1, 1, 0, (2,)),
    'scalar_tensor_vs_vector': (2, 1, 0, (2, 2)),
    'sequential_module': (1, 1, 0, (4,)),
    'shape_branch_with_dynamic_sizes': (3, 1, 0, (1, 1, 1)),
    'shape_changes_automatic_dynamic': (2, 1, 0, (2, 2)),
    'shape_changes_with_reduction': (2, 1, 0, (3, 3)),
    'size_method_loop': (1, 1, 0, (5,)),
    'softmax_module_call': (1, 1, 0, (2,)),
    'sorted_with_lambda_key': (1, 1, 0, (1,)),
    'star_unpack_list': (1, 1, 0, (2,)),
    'string_arg_changes': (2, 1, 0, (1, 1)),
    'transpose_and_permute': (1, 1, 0, (5,)),
    'tuple_of_ints_arg': (3, 1, 0, (2, 2, 2)),
    'two_dims_change': (3, 1, 0, (2, 2, 2)),
    'view_from_shape_product': (1, 1, 0, (2,)),
    'where_and_clamp': (1, 1, 0, (3,)),
    'while_int_counter': (1, 1, 0, (3,)),
}

DIFFERS = {}

test_compiled_equals_eager_with_torchs_counts, test_torch_counts_are_the_table = \
    fidelity_tests(PROGRAMS, TORCH_COUNTS, DIFFERS)


# the recompile limit: both systems warn when they give up on a frame (torch: a UserWarning
# naming config.recompile_limit; mtc: a CompilerFallbackWarning, an error elsewhere in the suite)
LIMIT = P("""
    def f(x):
        log.append(x.sum())
        return x * len(log)
    """, lambda lib: [(ramp(lib, 3),)] * 10,
    "after test_recompiles.py::test_recompile_limit (a guard on a global list's length)")
LIMIT_TORCH_COUNTS = (8, 1, 0, (2, 2, 2, 2, 2, 2, 2, 2))  # 8 compiles, then eager


def test_a_global_list_appended_to_recompiles_up_to_the_limit():
    with pytest.warns(CompilerFallbackWarning, match="recompile limit"):
        assert mtc_vs_eager(LIMIT).as_tuple() == LIMIT_TORCH_COUNTS


@pytest.mark.torch
def test_torchs_recompile_limit_is_the_table():
    pytest.importorskip("torch")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert torch_counts(LIMIT).as_tuple() == LIMIT_TORCH_COUNTS
