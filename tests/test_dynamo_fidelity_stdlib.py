"""Ordinary Python around tensors — lists mutated, loops with ``continue``/``break`` and a
graph break per iteration, ``try``/``except``/``else``/``finally``, generators (in ``zip`` and
``enumerate``, with side effects per item), ``functools``/``itertools``, ``functools.wraps``
decorators, string formatting, grad-mode and ``contextlib.contextmanager`` blocks — in the manner
of torch's ``test/dynamo/test_misc.py``, ``test_functions.py``, ``test_exceptions.py``,
``test_generator.py`` and ``test_ctx_manager.py``.

Each runs compiled and eagerly under mtc (values, printed text and side effects equal) and its
counts — graphs over all the calls, explain's counts for the first call, ops per graph — are
torch 2.13's (``TORCH_COUNTS``, re-measured when torch is installed), except for ``DIFFERS``.
"""

from .dynamo_fidelity import Program, fidelity_tests, one, ramp, two

P = Program

PROGRAMS = {
    "list_input_mutated_no_break": P("""
        def f(x, xs):
            xs.append(x.cos())
            xs[0] = xs[0] + 1
            return len(xs)
        """, lambda lib: [(ramp(lib, 3), [ramp(lib, 3)])],
        "after test_misc.py (a list argument mutated)"),
    "list_extend_insert_remove": P("""
        def f(x):
            a = [1, 2, 3]
            a.extend([4, 5])
            a.insert(0, 0)
            a.remove(3)
            return x * sum(a), a
        """, lambda lib: one(lib, 3), "after test_functions.py (list methods on constants)"),
    "list_index_count": P("""
        def f(x):
            a = [3, 1, 3, 2]
            return x * a.index(2) + a.count(3)
        """, lambda lib: one(lib, 3), "after test_functions.py (list.index, list.count)"),
    "list_of_tensors_sum_builtin": P("""
        def f(x):
            parts = [x * i for i in range(4)]
            return sum(parts), max(len(parts), 2)
        """, lambda lib: one(lib, 3), "after test_functions.py (sum of tensors)"),
    "loop_with_break_per_iteration": P("""
        def f(x):
            for i in range(3):
                x = x + i
                print("it", i)
            return x
        """, lambda lib: one(lib, 3), "after test_misc.py (a break in every iteration)"),
    "while_loop_constant_counter": P("""
        def f(x):
            i = 0
            while i < 4:
                x = x * 0.5 + i
                i += 1
            return x
        """, lambda lib: one(lib, 3), "after test_misc.py (while over a Python int)"),
    "loop_continue_and_break": P("""
        def f(x):
            out = x
            for i in range(10):
                if i % 2:
                    continue
                if i > 6:
                    break
                out = out + i
            return out
        """, lambda lib: one(lib, 3), "after test_misc.py (continue and break in a loop)"),
    "nested_loops_enumerate": P("""
        def f(xs):
            total = 0
            for i, x in enumerate(xs):
                for j in range(i + 1):
                    total = total + x * j
            return total
        """, lambda lib: [([ramp(lib, 2), ramp(lib, 2, shift=0.3), ramp(lib, 2, shift=0.6)],)],
        "after test_misc.py (nested loops over a list argument)"),
    "print_in_while_loop_then_op": P("""
        def f(x):
            i = 0
            while i < 2:
                x = x.cos()
                print(i)
                i += 1
            return x + 1
        """, lambda lib: one(lib, 3), "after test_misc.py (a break in a while loop)"),
    "try_except_else_finally": P("""
        def f(x):
            try:
                y = x + 1
            except ValueError:
                y = x - 1
            else:
                y = y * 2
            finally:
                log.append("finally")
            return y
        """, lambda lib: one(lib, 3), "after test_exceptions.py (try/except/else/finally)"),
    "raise_in_inlined_caught": P("""
        def g(x):
            if x.dim() > 1:
                raise ValueError("2d")
            return x
        def f(x):
            try:
                return g(x)
            except ValueError as e:
                return x.sum() + len(str(e))
        """, lambda lib: [(ramp(lib, 2, 2),)],
        "after test_exceptions.py (raised in a callee, caught)"),
    "exception_attribute_args": P("""
        def f(x):
            try:
                raise KeyError("k", 3)
            except KeyError as e:
                return x * e.args[1]
        """, lambda lib: one(lib, 3), "after test_exceptions.py (exception args)"),
    "nested_try_reraise": P("""
        def f(x):
            try:
                try:
                    raise IndexError
                except IndexError:
                    raise ValueError("outer")
            except ValueError:
                return x + 5
        """, lambda lib: one(lib, 3), "after test_exceptions.py (raise inside except)"),
    "generator_send_like_next": P("""
        def gen(x):
            y = x
            for i in range(3):
                y = y * 2
                yield y
        def f(x):
            g = gen(x)
            a = next(g)
            b = next(g)
            return a + b
        """, lambda lib: one(lib, 3), "after test_generator.py (next twice)"),
    "generator_in_zip": P("""
        def gen(n):
            for i in range(n):
                yield i * 2
        def f(x):
            return [x * a + b for a, b in zip(gen(3), range(3))]
        """, lambda lib: one(lib, 3), "after test_generator.py (a generator in zip)"),
    "generator_list_of_tensors": P("""
        def gen(x):
            yield x.sin()
            yield x.cos()
        def f(x):
            return list(gen(x))
        """, lambda lib: one(lib, 3), "after test_generator.py (list(generator))"),
    "generator_early_return": P("""
        def gen(x):
            yield x
            return
            yield x * 2
        def f(x):
            return [t + 1 for t in gen(x)]
        """, lambda lib: one(lib, 3), "after test_generator.py (return inside a generator)"),
    "generator_side_effects_in_zip_first": P("""
        def gen(x):
            for i in range(5):
                log.append(i)
                yield x * i
        def f(x):
            return [a + b for a, b in zip(gen(x), range(2))]
        """, lambda lib: one(lib, 3),
        "after test_generator.py (zip stops after the generator ran once more)"),
    "generator_side_effects_in_zip_second": P("""
        def gen(x):
            for i in range(5):
                log.append(i)
                yield x * i
        def f(x):
            return [a + b for a, b in zip(range(2), gen(x))]
        """, lambda lib: one(lib, 3),
        "after test_generator.py (zip stops before advancing the generator)"),
    "enumerate_generator": P("""
        def gen(x):
            yield x.sin()
            yield x.cos()
        def f(x):
            out = x
            for i, t in enumerate(gen(x), 1):
                out = out + t * i
            return out
        """, lambda lib: one(lib, 3), "after test_generator.py (enumerate over a generator)"),
    "partial_with_kwargs": P("""
        def scale(x, a, *, b=1):
            return x * a + b
        def f(x):
            g = functools.partial(scale, a=2, b=3)
            return g(x)
        """, lambda lib: one(lib, 3), "after test_functions.py (partial with keyword arguments)"),
    "lru_cache_function": P("""
        @functools.lru_cache
        def k(n):
            return n * 2
        def f(x):
            return x * k(3)
        """, lambda lib: one(lib, 3), "after test_functions.py (an lru_cache'd helper)"),
    "wraps_decorated_helper": P("""
        def deco(fn):
            @functools.wraps(fn)
            def inner(*args, **kwargs):
                return fn(*args, **kwargs) + 1
            return inner
        @deco
        def g(a, b=2):
            return a * b
        def f(x):
            return g(x), g(x, b=3)
        """, lambda lib: one(lib, 3), "after test_functions.py (a functools.wraps decorator)"),
    "itertools_accumulate_islice": P("""
        def f(x):
            acc = list(itertools.accumulate([1, 2, 3, 4]))
            first = list(itertools.islice(range(10), 2, 5))
            return x * acc[-1] + sum(first)
        """, lambda lib: one(lib, 3), "after test_functions.py (itertools.accumulate, islice)"),
    "itertools_combinations_tensors": P("""
        def f(a, b):
            out = []
            for p, q in itertools.combinations([a, b, a + b], 2):
                out.append(p * q)
            return out
        """, lambda lib: two(lib, 3), "after test_functions.py (itertools.combinations)"),
    "permutations_of_tensors": P("""
        def f(a, b):
            return [p - q for p, q in itertools.permutations([a, b])]
        """, lambda lib: two(lib, 3), "after test_functions.py (itertools.permutations)"),
    "functools_reduce_tensors": P("""
        def f(a, b):
            return functools.reduce(lambda s, t: s * t, [a, b, a])
        """, lambda lib: two(lib, 3), "after test_functions.py (functools.reduce over tensors)"),
    "nested_const_tuple_unpack": P("""
        def f(x):
            total = x
            for a, (b, c) in ((1, (2, 3)), (4, (5, 6))):
                total = total + a * b - c
            return total
        """, lambda lib: one(lib, 3), "after test_functions.py (a folded nested tuple unpacked)"),
    "string_format_methods": P("""
        def f(x):
            s = "{}-{:.1f}".format("a", 2.5)
            t = "%d:%s" % (3, "b")
            return x * len(s + t), s + t
        """, lambda lib: one(lib, 3), "after test_functions.py (str.format and %)"),
    "string_checks": P("""
        def f(x, name):
            if name.startswith("lin") and name.endswith("1"):
                return x + 1
            return x * len(name.upper())
        """, lambda lib: [(ramp(lib, 3), "lin1"), (ramp(lib, 3), "conv")],
        "after test_functions.py (str methods on an argument)"),
    "with_no_grad_then_ops": P("""
        def f(x):
            with lib.no_grad():
                y = x * 2
            z = x * 3
            return y.requires_grad, z.requires_grad, y + z
        """, lambda lib: [(ramp(lib, 3).requires_grad_(),)],
        "after test_ctx_manager.py (no_grad then grad)"),
    "nested_with_blocks": P("""
        def f(x):
            with lib.no_grad():
                with lib.enable_grad():
                    y = x * 2
                z = x * 3
            return y.requires_grad, z.requires_grad
        """, lambda lib: [(ramp(lib, 3).requires_grad_(),)],
        "after test_ctx_manager.py (nested grad modes)"),
    "contextlib_contextmanager": P("""
        import contextlib
        @contextlib.contextmanager
        def scope(tag):
            log.append("enter " + tag)
            yield 2
            log.append("exit " + tag)
        def f(x):
            with scope("a") as k:
                y = x * k
            return y
        """, lambda lib: one(lib, 3), "after test_ctx_manager.py (a contextlib.contextmanager)"),
    "contextmanager_nested_two": P("""
        import contextlib
        @contextlib.contextmanager
        def tag(name):
            log.append("<" + name)
            yield name
            log.append(name + ">")
        def f(x):
            with tag("a") as a, tag("b") as b:
                y = x * len(a + b)
            return y
        """, lambda lib: one(lib, 3),
        "after test_ctx_manager.py (two contextmanagers in one with)"),
    "contextmanager_break_inside": P("""
        import contextlib
        @contextlib.contextmanager
        def tag():
            log.append("enter")
            yield
            log.append("exit")
        def f(x):
            with tag():
                y = x.cos()
                print("break")
                y = y + 1
            return y
        """, lambda lib: one(lib, 3),
        "after test_ctx_manager.py (a graph break inside a contextmanager)"),
    "contextmanager_exception_inside": P("""
        import contextlib
        @contextlib.contextmanager
        def scope():
            log.append("in")
            try:
                yield
            finally:
                log.append("out")
        def f(x):
            try:
                with scope():
                    y = x + 1
                    raise ValueError("boom")
            except ValueError:
                y = x - 1
            return y
        """, lambda lib: one(lib, 3),
        "after test_ctx_manager.py (an exception through a contextmanager)"),
    "dict_comprehension_of_tensors": P("""
        def f(x):
            d = {k: x * v for k, v in zip("abc", (1, 2, 3))}
            return d["b"] + d["c"], sorted(d)
        """, lambda lib: one(lib, 3), "after test_functions.py (dict comprehension)"),
    "tuple_compare_and_min_max": P("""
        def f(x):
            a, b = (1, 2), (1, 3)
            return x * (a < b) + min(a) + max(b)
        """, lambda lib: one(lib, 3), "after test_functions.py (tuple comparison)"),
    "lambda_default_captures_loop": P("""
        def f(x):
            fs = [lambda t, i=i: t * i for i in range(3)]
            return [g(x) for g in fs]
        """, lambda lib: one(lib, 3), "after test_functions.py (lambdas with defaults in a loop)"),
}

TORCH_COUNTS = {
    'contextlib_contextmanager': (1, 1, 0, (1,)),
    'contextmanager_break_inside': (0, 0, -1, ()),
    'contextmanager_exception_inside': (1, 1, 0, (2,)),
    'contextmanager_nested_two': (1, 1, 0, (1,)),
    'dict_comprehension_of_tensors': (1, 1, 0, (4,)),
    'enumerate_generator': (1, 1, 0, (6,)),
    'exception_attribute_args': (1, 1, 0, (1,)),
    'functools_reduce_tensors': (1, 1, 0, (2,)),
    'generator_early_return': (1, 1, 0, (1,)),
    'generator_in_zip': (1, 1, 0, (6,)),
    'generator_list_of_tensors': (1, 1, 0, (2,)),
    'generator_send_like_next': (1, 1, 0, (3,)),
    'generator_side_effects_in_zip_first': (1, 1, 0, (5,)),
    'generator_side_effects_in_zip_second': (1, 1, 0, (4,)),
    'itertools_accumulate_islice': (1, 1, 0, (2,)),
    'itertools_combinations_tensors': (1, 1, 0, (4,)),
    'lambda_default_captures_loop': (1, 1, 0, (3,)),
    'list_extend_insert_remove': (1, 1, 0, (1,)),
    'list_index_count': (1, 1, 0, (2,)),
    'list_input_mutated_no_break': (1, 1, 0, (2,)),
    'list_of_tensors_sum_builtin': (1, 1, 0, (8,)),
    'loop_continue_and_break': (1, 1, 0, (4,)),
    'loop_with_break_per_iteration': (0, 0, -1, ()),
    'lru_cache_function': (1, 1, 0, (1,)),
    'nested_const_tuple_unpack': (1, 1, 0, (4,)),
    'nested_loops_enumerate': (1, 1, 0, (12,)),
    'nested_try_reraise': (1, 1, 0, (1,)),
    'nested_with_blocks': (1, 1, 0, (4,)),
    'partial_with_kwargs': (1, 1, 0, (2,)),
    'permutations_of_tensors': (1, 1, 0, (2,)),
    'print_in_while_loop_then_op': (0, 0, -1, ()),
    'raise_in_inlined_caught': (1, 1, 0, (2,)),
    'string_checks': (2, 1, 0, (1, 1)),
    'string_format_methods': (1, 1, 0, (1,)),
    'try_except_else_finally': (1, 1, 0, (2,)),
    'tuple_compare_and_min_max': (1, 1, 0, (3,)),
    'while_loop_constant_counter': (1, 1, 0, (8,)),
    'with_no_grad_then_ops': (1, 1, 0, (5,)),
    'wraps_decorated_helper': (1, 1, 0, (4,)),
}

DIFFERS = {
    "contextmanager_exception_inside": ((0, 0, -1, ()),
                                        "an exception leaving a contextlib.contextmanager block: "
                                        "its __exit__ throws it into the generator "
                                        "(WITH_EXCEPT_START, gen.throw), which mtc does not "
                                        "trace; the frame runs eagerly"),
}

test_compiled_equals_eager_with_torchs_counts, test_torch_counts_are_the_table = \
    fidelity_tests(PROGRAMS, TORCH_COUNTS, DIFFERS)
