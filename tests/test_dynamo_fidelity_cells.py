"""Closure cells (``nonlocal`` written by an inlined function, cells live across a graph
break, a closure of the compiled function's caller), ``:=`` (plain, on tensors, inside a
comprehension — a function sharing the frame's cell on 3.11), ``Tensor.numpy()``, and reshapes
whose target sizes change — torch 2.13's recompiles: an int argument that became a symbol is
guarded ``!= 1`` where broadcasting asks (``x.reshape(n, m) * 2``), a tensor's dynamic size
never (it is known ``>= 2``) — in the manner of torch's ``test/dynamo/test_functions.py``,
``test_misc.py`` and ``test_dynamic_shapes.py``.

Each runs compiled and eagerly under mtc (values, printed text and side effects equal) and its
counts — graphs over all the calls, explain's counts for the first call, ops per graph — are
torch 2.13's (``TORCH_COUNTS``, re-measured when torch is installed), except for ``DIFFERS``.
"""

from .dynamo_fidelity import Program, fidelity_tests, one, ramp

P = Program


def sizes(*ns, shape=lambda n: (n,)):
    """One call per size: a ramp of ``shape(n)``."""
    return lambda lib: [(ramp(lib, *shape(n)),) for n in ns]


PROGRAMS = {
    "nonlocal_counter_inner": P("""
        def f(x):
            n = 0
            def bump():
                nonlocal n
                n += 1
                return x * n
            a = bump()
            b = bump()
            return a + b, n
        """, lambda lib: one(lib, 3), "after test_functions.py (closure cells)"),
    "closure_read_only": P("""
        def f(x):
            s = 2.0
            def g(y):
                return y * s
            return g(x) + g(x.cos())
        """, lambda lib: one(lib, 3), "after test_functions.py (closure cells)"),
    "closure_cell_across_break": P("""
        def f(x):
            n = 1
            def bump():
                nonlocal n
                n += 1
            bump()
            y = x * n
            print("break")
            bump()
            return y + n
        """, lambda lib: one(lib, 3), "after test_functions.py (closure cells)"),
    "outer_closure_nonlocal": P("""
        def make():
            n = [0]
            c = 0
            def f(x):
                nonlocal c
                c += 1
                return x + c
            return f
        f = make()
        """, lambda lib: [(ramp(lib, 3),), (ramp(lib, 3),)],
        "after test_functions.py (closure cells)"),
    "cell_shared_with_called_closure": P("""
        def make():
            n = 0
            def bump():
                nonlocal n
                n += 1
            def f(x):
                bump()
                return x + n
            return f
        f = make()
        """, lambda lib: [(ramp(lib, 3),), (ramp(lib, 3),)],
        "after test_functions.py (a cell reached as a free variable and through a callee)"),
    "closure_written_on_both_sides_of_break": P("""
        def f(x):
            total = 0
            def add(v):
                nonlocal total
                total = total + v
            add(1)
            y = x * total
            print("break", total)
            add(2)
            return y + total, total
        """, lambda lib: one(lib, 3), "after test_functions.py (nonlocal across a graph break)"),
    "closure_made_before_break_returned": P("""
        def f(x):
            k = 1
            def g(t):
                return t * k
            print("break")
            k = 5
            return g(x), g
        """, lambda lib: one(lib, 3),
        "after test_functions.py (a closure sees the frame's later write)", ops=False),
    "closure_cell_tensor_across_break": P("""
        def f(x):
            acc = x
            def push(t):
                nonlocal acc
                acc = acc + t
            push(x.cos())
            print("break")
            push(x.sin())
            return acc
        """, lambda lib: one(lib, 3), "after test_functions.py (a tensor cell across a break)"),
    "walrus_plain": P("""
        def f(x):
            if (n := x.shape[0]) > 2:
                y = x * n
            else:
                y = x
            return y
        """, lambda lib: one(lib, 3), "after test_misc.py (`:=`)"),
    "walrus_in_comprehension": P("""
        def f(x):
            ys = [(t := x * i) + 1 for i in range(3)]
            return ys, t
        """, lambda lib: one(lib, 3), "after test_misc.py (`:=`)"),
    "walrus_tensor": P("""
        def f(x):
            z = (y := x.cos()) + y
            return z
        """, lambda lib: one(lib, 3), "after test_misc.py (`:=`)"),
    "numpy_call": P("""
        def f(x):
            a = x.numpy()
            return x + 1, float(a.sum()), lib.from_numpy(a * 2)
        """, lambda lib: one(lib, 3),
        "after test_misc.py (Tensor.numpy() in compiled code)", ops=False),
    "shape_unpack_and_view": P("""
        def f(x):
            n, m = x.shape
            return x.view(m, n) * n
        """, lambda lib: [(ramp(lib, 2, 3),), (ramp(lib, 4, 3),), (ramp(lib, 5, 3),)],
        "after test_misc.py (unpacked shape; dynamic on the second size)"),
    "reshape_target_changes": P("""
        def f(x, n):
            return x.reshape(n, -1).sum(0)
        """, lambda lib: [(ramp(lib, 12), 2), (ramp(lib, 12), 3), (ramp(lib, 12), 4)],
        "after test_misc.py (a reshape whose target size changes)"),
    "reshape_input_size_changes": P("""
        def f(x):
            return x.reshape(2, -1).sum(1)
        """, lambda lib: [(ramp(lib, 6),), (ramp(lib, 8),), (ramp(lib, 10),)],
        "after test_dynamic_shapes.py (reshape of a dynamic size)"),
    "reshape_minus1_4": P("""
        def f(x):
            return x.reshape(-1, 4).sum(1)
        """, sizes(8, 12, 16, 20), "after test_dynamic_shapes.py (reshape, recompiles)"),
    "reshape_to_1": P("""
        def f(x):
            return x.reshape(1, -1) * 2
        """, sizes(3, 5, 7), "after test_dynamic_shapes.py (reshape, recompiles)"),
    "reshape_first_dim": P("""
        def f(x):
            return x.reshape(x.shape[0], -1).sum(1)
        """, sizes(2, 3, 4, shape=lambda n: (n, 3, 2)),
        "after test_dynamic_shapes.py (reshape, recompiles)"),
    "reshape_half": P("""
        def f(x):
            return x.view(x.shape[0] // 2, 2) + 1
        """, sizes(4, 6, 8, 10), "after test_dynamic_shapes.py (reshape, recompiles)"),
    "reshape_to_input_shape": P("""
        def f(x, y):
            return x.reshape(y.shape) + y
        """, lambda lib: [(ramp(lib, n * m), ramp(lib, n, m)) for n, m in ((2, 3), (3, 4), (4, 5))],
        "after test_dynamic_shapes.py (reshape, recompiles)"),
    "reshape_size_1_then_2": P("""
        def f(x):
            return x.reshape(-1, x.shape[1]).sum(0)
        """, lambda lib: [(ramp(lib, 3, 1),), (ramp(lib, 3, 2),), (ramp(lib, 3, 3),)],
        "after test_dynamic_shapes.py (reshape, recompiles)"),
    "reshape_flatten_dynamic_two": P("""
        def f(x):
            return x.reshape(-1) * 2
        """, lambda lib: [(ramp(lib, 2, 3),), (ramp(lib, 3, 4),), (ramp(lib, 4, 5),)],
        "after test_dynamic_shapes.py (reshape, recompiles)"),
    "reshape_split_dim": P("""
        def f(x):
            n = x.shape[0]
            return x.reshape(2, n // 2, -1).sum(0)
        """, lambda lib: [(ramp(lib, 4, 3),), (ramp(lib, 6, 3),), (ramp(lib, 8, 3),)],
        "after test_dynamic_shapes.py (reshape, recompiles)"),
    "reshape_int_arg_rows": P("""
        def f(x, n):
            return x.reshape(n, -1).sum(0)
        """, lambda lib: [(ramp(lib, 12), n) for n in (2, 3, 4, 1)],
        "after test_dynamic_shapes.py (reshape, recompiles)"),
    "view_two_int_args": P("""
        def f(x, n, m):
            return x.view(n, m) * 2
        """, lambda lib: [(ramp(lib, 12), n, m) for n, m in ((3, 4), (4, 3), (2, 6), (12, 1))],
        "after test_dynamic_shapes.py (reshape, recompiles)"),
    "reshape_int_arg_with_dynamic_size": P("""
        def f(x, n):
            return x.reshape(n, -1) + 1
        """, lambda lib: [(ramp(lib, k), n) for k, n in ((6, 2), (12, 3), (20, 4), (7, 1))],
        "after test_dynamic_shapes.py (reshape, recompiles)"),
}

TORCH_COUNTS = {
    'cell_shared_with_called_closure': (2, 1, 0, (1, 2)),
    'closure_cell_across_break': (2, 2, 1, (1, 1)),
    'closure_cell_tensor_across_break': (2, 2, 1, (2, 2)),
    'closure_made_before_break_returned': (1, 1, 0),
    'closure_read_only': (1, 1, 0, (4,)),
    'closure_written_on_both_sides_of_break': (2, 2, 1, (1, 1)),
    'nonlocal_counter_inner': (1, 1, 0, (3,)),
    'numpy_call': (2, 2, 1),
    'outer_closure_nonlocal': (2, 1, 0, (1, 2)),
    'reshape_first_dim': (2, 1, 0, (2, 2)),
    'reshape_flatten_dynamic_two': (2, 1, 0, (2, 2)),
    'reshape_half': (2, 1, 0, (2, 3)),
    'reshape_input_size_changes': (2, 1, 0, (2, 2)),
    'reshape_int_arg_rows': (2, 1, 0, (2, 2)),
    'reshape_int_arg_with_dynamic_size': (3, 1, 0, (2, 2, 2)),
    'reshape_minus1_4': (2, 1, 0, (2, 2)),
    'reshape_size_1_then_2': (2, 1, 0, (2, 2)),
    'reshape_split_dim': (2, 1, 0, (2, 3)),
    'reshape_target_changes': (2, 1, 0, (2, 2)),
    'reshape_to_1': (2, 1, 0, (2, 2)),
    'reshape_to_input_shape': (2, 1, 0, (2, 3)),
    'shape_unpack_and_view': (2, 1, 0, (2, 2)),
    'view_two_int_args': (3, 1, 0, (2, 2, 2)),
    'walrus_in_comprehension': (1, 1, 0, (6,)),
    'walrus_plain': (1, 1, 0, (1,)),
    'walrus_tensor': (1, 1, 0, (2,)),
}

DIFFERS = {
    "reshape_to_input_shape": ((2, 1, 0, (2, 2)),
                               "x.reshape(y.shape) with dynamic sizes: torch's graph reads "
                               "y.size() (one more op); mtc's passes the size symbols"),
}

test_compiled_equals_eager_with_torchs_counts, test_torch_counts_are_the_table = \
    fidelity_tests(PROGRAMS, TORCH_COUNTS, DIFFERS)
