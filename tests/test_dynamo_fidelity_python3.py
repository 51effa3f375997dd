"""Values live across a graph break that the transformed code must rebuild as the program had
them — the same object where the program shares one (a list in two locals, an object and its
bound method), a half-consumed iterator, a view of a dict — in the manner of torch's
``test/dynamo/test_repros.py``, ``test_misc.py`` and ``test_functions.py``.

Each runs compiled and eagerly under mtc (values, printed text and side effects equal) and its
counts — graphs over all the calls, explain's counts for the first call, ops per graph — are
torch 2.13's (``TORCH_COUNTS``, re-measured when torch is installed), except for ``DIFFERS``.
"""

from .dynamo_fidelity import Program, fidelity_tests, one

P = Program

PROGRAMS = {
    "list_aliased_in_two_locals": P("""
        def f(x):
            a = [x.cos()]
            b = a
            print("break")
            b.append(x.sin())
            return a, a is b
        """, lambda lib: one(lib, 3), "after test_repros.py (one list, two names)"),
    "new_object_across_break": P("""
        class Acc:
            def __init__(self):
                self.items = []
            def add(self, t):
                self.items.append(t)
                return self

        def f(x):
            acc = Acc().add(x.cos())
            print("break")
            acc.add(x.sin())
            return len(acc.items), acc.items[0] + acc.items[1]
        """, lambda lib: one(lib, 3), "after test_misc.py (an object made before a break)"),
    "object_method_pending_at_break": P("""
        class Acc:
            def __init__(self):
                self.total = 0
            def add(self, v):
                self.total = self.total + v
                return self.total

        def f(x):
            acc = Acc()
            acc.add(x.cos())
            r = acc.add(print("b") or x.sin())
            return r, acc.total
        """, lambda lib: one(lib, 3), "after test_repros.py (a method waits for its argument)"),
    "dict_setdefault_pending": P("""
        def f(x):
            d = {}
            d.setdefault("a", []).append(print("b") or x.cos())
            return d
        """, lambda lib: one(lib, 3), "after test_functions.py (setdefault, then append)"),
    "iterator_half_consumed_at_break": P("""
        def f(x):
            it = iter([x, x * 2, x * 3])
            a = next(it)
            print("break")
            b = next(it)
            return a + b, list(it)
        """, lambda lib: one(lib, 3), "after test_misc.py (an iterator live at a break)"),
    "zip_iterator_live_at_break": P("""
        def f(x):
            z = zip([x, x + 1], [x * 2, x * 3])
            first = next(z)
            print("break")
            return first, list(z)
        """, lambda lib: one(lib, 3), "after test_functions.py (zip live at a break)"),
    "dict_items_view_at_break": P("""
        def f(x):
            d = {"a": x.cos()}
            items = d.items()
            print("break")
            d["b"] = x.sin()
            return len(items), sorted(k for k, _ in items)
        """, lambda lib: one(lib, 3), "after test_functions.py (a live dict view)"),
    "nested_function_made_before_break": P("""
        def f(x):
            k = 3
            def g(t):
                return t * k
            print("break")
            return g(x) + g(x.cos())
        """, lambda lib: one(lib, 3), "after test_misc.py (a closure made before a break)"),
    "shape_tuple_across_break": P("""
        def f(x):
            s = x.shape
            n, m = s
            print("break", n, m)
            return x.reshape(m, n), s == x.shape
        """, lambda lib: one(lib, 2, 3), "after test_misc.py (a shape live at a break)"),
    "star_unpack_across_break": P("""
        def f(x):
            a, *rest = [x, x * 2, x * 3]
            print("break", len(rest))
            return a + rest[-1]
        """, lambda lib: one(lib, 3), "after test_functions.py (star unpack)"),
    "nested_list_shared_inner": P("""
        def f(x):
            inner = [x.cos()]
            outer = [inner, inner]
            print("break")
            outer[0].append(x.sin())
            return len(outer[1]), outer[0] is outer[1]
        """, lambda lib: one(lib, 3), "after test_repros.py (a list inside a list, twice)"),
    "set_of_constants_across_break": P("""
        def f(x):
            s = {1, 2}
            print("break")
            s.add(3)
            return x * len(s), sorted(s)
        """, lambda lib: one(lib, 3), "after test_functions.py (a set made before a break)"),
    "tuple_of_new_lists_at_break": P("""
        def f(x):
            a, b = [], []
            pair = (a, b)
            a.append(x.cos())
            print("break")
            b.append(x.sin())
            return pair
        """, lambda lib: one(lib, 3), "after test_repros.py (a tuple holding new lists)"),
    "global_list_appended_then_break": P("""
        def f(x):
            log.append("start")
            y = x.cos()
            print("break")
            log.append("end")
            return y
        """, lambda lib: one(lib, 3), "after test_misc.py (a global list across a break)"),
}

TORCH_COUNTS = {
    'dict_items_view_at_break': (2, 2, 1, (1, 1)),
    'dict_setdefault_pending': (1, 1, 0, (1,)),
    'global_list_appended_then_break': (1, 1, 0, (1,)),
    'iterator_half_consumed_at_break': (2, 2, 1, (2, 1)),
    'list_aliased_in_two_locals': (2, 2, 1, (1, 1)),
    'nested_function_made_before_break': (1, 1, 0, (4,)),
    'nested_list_shared_inner': (2, 2, 1, (1, 1)),
    'new_object_across_break': (2, 2, 1, (1, 2)),
    'object_method_pending_at_break': (2, 2, 1, (2, 1)),
    'set_of_constants_across_break': (1, 1, 0, (1,)),
    'shape_tuple_across_break': (1, 1, 0, (1,)),
    'star_unpack_across_break': (2, 2, 1, (2, 1)),
    'tuple_of_new_lists_at_break': (2, 2, 1, (1, 1)),
    'zip_iterator_live_at_break': (1, 1, 0, (3,)),
}

DIFFERS = {}

test_compiled_equals_eager_with_torchs_counts, test_torch_counts_are_the_table = \
    fidelity_tests(PROGRAMS, TORCH_COUNTS, DIFFERS)
