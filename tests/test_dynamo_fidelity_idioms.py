"""Everyday Python idioms around tensors — exceptions caught before a break, generators left
unfinished, class and module attributes written, ``functools.reduce``, namedtuples, recursion,
``*args``/``**kwargs`` forwarding, ``del``, ``for ... else``, ``while True: ... break`` — in the
manner of torch's ``test/dynamo/test_functions.py``, ``test_misc.py``, ``test_exceptions.py``
and ``test_generator.py``.

Each runs compiled and eagerly under mtc (values, printed text and side effects equal) and its
counts — graphs over all the calls, explain's counts for the first call, ops per graph — are
torch 2.13's (``TORCH_COUNTS``, re-measured when torch is installed).
"""

from .dynamo_fidelity import Program, fidelity_tests, one, ramp

P = Program

PROGRAMS = {
    "exception_caught_then_break": P("""
        def f(x):
            try:
                {}["k"]
            except KeyError:
                y = x.cos()
            print("after")
            return y * 2
        """, lambda lib: one(lib, 3), "after test_exceptions.py (a caught KeyError, then a break)"),
    "generator_consumed_partly_then_break": P("""
        def gen(x):
            for i in range(4):
                yield x * i
        def f(x):
            g = gen(x)
            a = next(g)
            b = next(g)
            return a + b
        """, lambda lib: one(lib, 3), "after test_generator.py (a generator left unfinished)"),
    "class_attribute_written": P("""
        class Cfg:
            scale = 2
        def f(x):
            Cfg.scale = Cfg.scale + 1
            return x * Cfg.scale
        """, lambda lib: [(ramp(lib, 3),)] * 2, "after test_misc.py (a class attribute written)"),
    "module_attribute_written_then_break": P("""
        class M(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.calls = 0
            def forward(self, x):
                self.calls += 1
                return x * self.calls
        MOD = M()
        def f(x):
            y = MOD(x)
            print("b")
            return MOD(y), MOD.calls
        """, lambda lib: one(lib, 3), "after test_modules.py (a module attribute counter)"),
    "reduce_and_attrgetter": P("""
        def f(x):
            import functools as ft
            ts = [x, x * 2, x * 3]
            s = ft.reduce(lambda a, b: a + b, ts)
            get = operator.attrgetter("shape")
            return s, get(s)[0]
        """, lambda lib: one(lib, 3), "after test_functions.py (functools.reduce, attrgetter)"),
    "namedtuple_made_and_replaced": P("""
        Pt = collections.namedtuple("Pt", ["a", "b"])
        def f(x):
            p = Pt(x, 2)
            q = p._replace(b=3)
            return q.a * q.b, p.b, q
        """, lambda lib: one(lib, 3), "after test_functions.py (namedtuple _replace)"),
    "recursion_on_constants": P("""
        def fib(n):
            return n if n < 2 else fib(n - 1) + fib(n - 2)
        def f(x):
            return x * fib(7)
        """, lambda lib: one(lib, 3), "after test_functions.py (recursion on constants)"),
    "args_kwargs_forwarding": P("""
        def inner(a, b, *, c=1, **rest):
            return a * b + c + len(rest)
        def outer(*args, **kwargs):
            return inner(*args, **kwargs)
        def f(x):
            return outer(x, 2, c=3, d=4, e=5)
        """, lambda lib: one(lib, 3), "after test_functions.py (*args/**kwargs forwarding)"),
    "del_local_then_rebind_across_break": P("""
        def f(x):
            y = x.cos()
            z = y + 1
            del y
            print("b")
            y = z * 2
            return y
        """, lambda lib: one(lib, 3), "after test_misc.py (del, then a break)"),
    "dict_in_and_chained_compare": P("""
        def f(x, d):
            if "a" in d and 0 < d["a"] < 5 and "z" not in d:
                return x * d["a"]
            return x
        """, lambda lib: [(ramp(lib, 3), {"a": 2})],
        "after test_functions.py (in, chained comparisons)"),
    "getattr_default_hasattr": P("""
        class O:
            pass
        OBJ = O()
        OBJ.k = 3
        def f(x):
            return x * getattr(OBJ, "k", 1) + getattr(OBJ, "missing", 5) + hasattr(OBJ, "k")
        """, lambda lib: one(lib, 3), "after test_functions.py (getattr with a default, hasattr)"),
    "list_sort_with_key_and_reverse": P("""
        def f(x):
            vals = [3, 1, 2]
            vals.sort(key=lambda v: -v)
            vals.reverse()
            return x * vals[0], vals
        """, lambda lib: one(lib, 3), "after test_functions.py (list.sort with a key)"),
    "nested_dict_mutation_input": P("""
        def f(x, d):
            d["inner"]["n"] = d["inner"]["n"] + 1
            d.setdefault("new", []).append(1)
            return x * d["inner"]["n"]
        """, lambda lib: [(ramp(lib, 3), {"inner": {"n": 1}})],
        "after test_misc.py (a nested input dict mutated)"),
    "closure_returned": P("""
        def f(x):
            k = x.sum()
            def g(t):
                return t * k
            return g
        """, lambda lib: one(lib, 3), "after test_functions.py (a closure returned)"),
    "while_with_break_statement": P("""
        def f(x):
            i = 0
            while True:
                x = x + 1
                i += 1
                if i >= 3:
                    break
            return x
        """, lambda lib: one(lib, 3), "after test_misc.py (while True with break)"),
    "for_else": P("""
        def f(x):
            for i in range(3):
                if i == 5:
                    break
            else:
                x = x * 2
            return x
        """, lambda lib: one(lib, 3), "after test_misc.py (for ... else)"),
    "print_then_exception_raised": P("""
        def f(x):
            y = x.cos()
            try:
                print("b")
                raise ValueError("v")
            except ValueError:
                y = y + 1
            return y
        """, lambda lib: one(lib, 3), "after test_exceptions.py (a break in a try block)"),
    "iter_dict_while_building_other": P("""
        def f(x, d):
            out = {}
            for k, v in d.items():
                out[k + "_2"] = v * x
            return out
        """, lambda lib: [(ramp(lib, 3), {"a": 1, "b": 2})],
        "after test_functions.py (a dict built from another)"),
}

TORCH_COUNTS = {
    'args_kwargs_forwarding': (1, 1, 0, (3,)),
    'class_attribute_written': (2, 1, 0, (1, 1)),
    'closure_returned': (1, 1, 0, (1,)),
    'del_local_then_rebind_across_break': (2, 2, 1, (2, 1)),
    'dict_in_and_chained_compare': (1, 1, 0, (1,)),
    'exception_caught_then_break': (2, 2, 1, (1, 1)),
    'for_else': (1, 1, 0, (1,)),
    'generator_consumed_partly_then_break': (1, 1, 0, (3,)),
    'getattr_default_hasattr': (1, 1, 0, (3,)),
    'iter_dict_while_building_other': (1, 1, 0, (2,)),
    'list_sort_with_key_and_reverse': (1, 1, 0, (1,)),
    'module_attribute_written_then_break': (2, 2, 1, (1, 1)),
    'namedtuple_made_and_replaced': (1, 1, 0, (1,)),
    'nested_dict_mutation_input': (1, 1, 0, (1,)),
    'print_then_exception_raised': (0, 0, -1, ()),
    'recursion_on_constants': (1, 1, 0, (1,)),
    'reduce_and_attrgetter': (1, 1, 0, (4,)),
    'while_with_break_statement': (1, 1, 0, (3,)),
}

test_compiled_equals_eager_with_torchs_counts, test_torch_counts_are_the_table = \
    fidelity_tests(PROGRAMS, TORCH_COUNTS)
