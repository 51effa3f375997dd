"""Symbolic numbers and the last open fidelity items: a dynamic size lifted into the graph as a
``SymInt`` input (``s0``), floats and ints that become graph inputs (alone, in tuples, returned),
and data-dependent output shapes — in the manner of torch's ``test/dynamo/test_unspec.py``,
``test_misc.py``, ``test_recompiles.py`` and ``test_repros.py``.

Each runs compiled and eagerly under mtc (values, printed text and side effects equal) and its
counts — graphs over all the calls, explain's counts for the first call, ops per graph — are
torch 2.13's (``TORCH_COUNTS``, re-measured when torch is installed), except for ``DIFFERS``.
"""

from .dynamo_fidelity import Program, fidelity_tests, ramp

P = Program


def sizes(*ns):
    """Calls ``f(x)`` with 1-d tensors of each size."""
    return lambda lib: [(ramp(lib, n),) for n in ns]


def with_values(*values):
    """Calls ``f(x, v)`` for each ``v`` (the same tensor each time)."""
    return lambda lib: [(ramp(lib, 3), v) for v in values]


PROGRAMS = {
    # ------------------------------------------------------------ sizes as graph inputs
    "size_divides_sum": P("""
        def f(x):
            return (x * x).sum() / x.shape[0]
        """, sizes(2, 3, 4), "after test_recompiles.py (a size read as a number)"),
    "size_read_twice": P("""
        def f(x):
            n = x.shape[0]
            m = x.size(0)
            return x * n + m
        """, sizes(3, 4, 5), "after test_misc.py (a size read twice: one symbol)"),
    "size_of_intermediate": P("""
        def f(x):
            y = x.repeat(2)
            return y * y.shape[0] + x.size(0)
        """, sizes(3, 4, 5), "after test_misc.py (the size of a tensor the graph made)"),
    "two_inputs_two_symbols": P("""
        def f(x, y):
            return x.sum() * y.shape[0] + y.sum() * x.shape[0]
        """, lambda lib: [(ramp(lib, 3), ramp(lib, 4)), (ramp(lib, 5), ramp(lib, 6)),
                          (ramp(lib, 7), ramp(lib, 8))],
        "after test_recompiles.py (two dynamic inputs)"),
    "size_arith_reused": P("""
        def f(x):
            a = x.shape[0] * 2
            b = x.shape[0] * 2
            return x.sum() * a + b
        """, sizes(3, 4, 5), "after test_misc.py (the same size expression twice)"),
    # ------------------------------------------------------------ sizes across breaks
    "size_live_at_break": P("""
        def f(x):
            n = x.shape[0]
            y = x.cos()
            print("n", n)
            return y * n
        """, sizes(3, 4, 5), "after test_misc.py (a size live at a graph break)"),
    "size_expr_live_at_break": P("""
        def f(x):
            n = x.shape[0] * 2 + 1
            y = x.cos()
            print("b")
            return y * n, n
        """, sizes(3, 4, 5), "after test_misc.py (a size expression live at a break)"),
    "size_returned": P("""
        def f(x):
            return x.sin(), x.shape[0], x.size(0) * 3
        """, sizes(3, 4, 5), "after test_unspec.py (sizes returned)"),
    "break_then_size_in_resume": P("""
        def f(x):
            y = x.cos()
            print("b")
            return y.reshape(x.shape[0], 1) * x.shape[0]
        """, sizes(3, 4, 5), "after test_recompiles.py (a size read in the resume function)"),
    "data_dependent_branch_dynamic": P("""
        def f(x):
            y = x.cos() * x.shape[0]
            if y.sum() > 0:
                return y + x.shape[0]
            return y - 1
        """, sizes(3, 4, 5), "the torch.compile tutorial's branch, dynamic"),
    "two_tensors_duck_sized": P("""
        def f(x, y):
            return (x + y) * x.shape[0] + y.shape[0]
        """, lambda lib: [(ramp(lib, n), ramp(lib, n)) for n in (3, 4, 5)],
        "after test_recompiles.py (duck sizing: one symbol)"),
    "int_arg_and_size": P("""
        def f(x, n):
            return x[:n] * x.shape[0] + n
        """, lambda lib: [(ramp(lib, k), k - 1) for k in (3, 4, 5)],
        "after test_unspec.py (an int argument and a size)"),
    # ------------------------------------------------------------ ints and floats as inputs
    "ints_in_tuple_arg": P("""
        def f(x, t):
            return x * t[0] + t[1]
        """, with_values((2, 3), (3, 4), (4, 5)), "after test_unspec.py (ints in a tuple)"),
    "tuple_of_ints_to_reshape": P("""
        def f(x, shape):
            return x.reshape(shape) * 2
        """, lambda lib: [(ramp(lib, 6), (2, 3)), (ramp(lib, 6), (3, 2)), (ramp(lib, 6), (6, 1))],
        "after test_recompiles.py (a tuple of ints as input)"),
    "float_returned": P("""
        def f(x, s):
            return x.cos(), s * 2
        """, with_values(0.5, 1.5, 2.5), "after test_unspec.py (a float input returned)"),
    "float_arith_returned": P("""
        def f(x, s):
            t = s * 2 + 1
            return x * t, t - s
        """, with_values(0.5, 1.5, 2.5), "after test_unspec.py (float arithmetic returned)"),
    # ------------------------------------------------------------ data-dependent shapes
    "one_hot_inferred_classes": P("""
        def f(x):
            y = x * 2
            return lib.nn.functional.one_hot(x, num_classes=-1) + 1, y
        """, lambda lib: [(lib.tensor([0, 2, 1]),)],
        "after test_misc.py (one_hot with num_classes=-1: a data-dependent output shape)"),
    "one_hot_given_classes": P("""
        def f(x):
            return lib.nn.functional.one_hot(x, num_classes=4) * 2
        """, lambda lib: [(lib.tensor([0, 2, 1]),)], "after test_misc.py (one_hot)"),
    # ------------------------------------------------------------ an int argument as an index
    "int_index_sign": P("""
        def f(x, i):
            return x[i] + x[-i]
        """, with_values(1, 2, 0), "after test_unspec.py (select guards the index's range and "
        "sign, so 0 recompiles)"),
    "int_index_positive": P("""
        def f(x, i):
            return x[i] * 2
        """, with_values(0, 1, 2, -1), "after test_unspec.py (a negative index wraps: a "
        "recompile)"),
}

TORCH_COUNTS = {
    'break_then_size_in_resume': (4, 2, 1, (1, 2, 1, 2)),
    'data_dependent_branch_dynamic': (4, 2, 1, (4, 1, 4, 1)),
    'int_arg_and_size': (2, 1, 0, (3, 3)),
    'int_index_positive': (3, 1, 0, (2, 2, 2)),
    'int_index_sign': (3, 1, 0, (3, 4, 4)),
    'size_expr_live_at_break': (4, 2, 1, (1, 1, 3, 1)),
    'size_live_at_break': (4, 2, 1, (1, 1, 1, 1)),
    'size_returned': (2, 1, 0, (1, 2)),
    'two_tensors_duck_sized': (2, 1, 0, (3, 3)),
    'float_arith_returned': (2, 1, 0, (1, 6)),
    'float_returned': (2, 1, 0, (1, 4)),
    'ints_in_tuple_arg': (2, 1, 0, (2, 2)),
    'one_hot_given_classes': (1, 1, 0, (2,)),
    'one_hot_inferred_classes': (2, 2, 1, (1, 1)),
    'size_arith_reused': (2, 1, 0, (3, 4)),
    'size_divides_sum': (2, 1, 0, (3, 3)),
    'size_of_intermediate': (2, 1, 0, (3, 4)),
    'size_read_twice': (2, 1, 0, (2, 2)),
    'tuple_of_ints_to_reshape': (3, 1, 0, (2, 2, 2)),
    'two_inputs_two_symbols': (2, 1, 0, (5, 5)),
}

DIFFERS = {}

test_compiled_equals_eager_with_torchs_counts, test_torch_counts_are_the_table = \
    fidelity_tests(PROGRAMS, TORCH_COUNTS, DIFFERS)
