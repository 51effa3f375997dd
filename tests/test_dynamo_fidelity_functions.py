"""Programs ported from torch's ``test/dynamo/test_functions.py`` (``FunctionTests``): calls,
defaults, ``*args``/``**kwargs``, closures, tuples, lists, dicts, sets, f-strings, constants.

Each runs compiled and eagerly under mtc (values, printed text and side effects equal) and its
counts — graphs over all calls, explain's graphs and breaks, ops per graph — are those torch
2.13 reports (``TORCH_COUNTS``, re-measured when torch is installed), except for ``DIFFERS``.
"""


from .dynamo_fidelity import (
    Program,
    fidelity_tests,
    one,
    two,
)

P = Program
PRELUDE = """
def constant3(a, b):
    return a - b + (1.0 + 2)

def func_with_default(a, b, some_default_arg=True):
    if some_default_arg:
        return a - b

class MyCls:
    a = 1

flag = True
"""

PROGRAMS = {
    "add": P("def f(a, b):\n    return a + b", lambda lib: two(lib, 4), "test_add"),
    "constant4": P("""
        def f(a, b):
            c = 2
            d = 3
            if c > d:
                return a - b
            return b - a
        """, lambda lib: two(lib, 4), "test_constant4"),
    "methodcall2": P("def f(a, b):\n    return constant3(a=b, b=a) + 1",
                     lambda lib: two(lib, 3), "test_methodcall2", prelude=PRELUDE),
    "methodcall3": P("def f(a, b):\n    return constant3(a, b=1.0) + b",
                     lambda lib: two(lib, 3), "test_methodcall3", prelude=PRELUDE),
    "inline_with_default": P("""
        def f(a, b, c):
            return func_with_default(a, b) * c
        """, lambda lib: [two(lib, 3)[0] + (lib.ones(3) * 2,)], "test_inline_with_default",
        prelude=PRELUDE),
    "tuple2_star_call": P("""
        def f(a, b):
            args = [a, b]
            return lib.sub(*args)
        """, lambda lib: two(lib, 5), "test_tuple2"),
    "indirect3": P("""
        def f(a, b):
            t = a.sub
            args = (b,)
            kwargs = {}
            return t(*args, **kwargs)
        """, lambda lib: two(lib, 5), "test_indirect3"),
    "listarg5": P("""
        def f(a, b):
            args = [(a, b)]
            kwargs = {"dim": 0}
            return lib.cat(*args, **kwargs)
        """, lambda lib: two(lib, 2, 3), "test_listarg5"),
    "unpack2": P("""
        def f(a):
            packed = [a[:5], a[5:]]
            a, b = packed
            return a - b
        """, lambda lib: one(lib, 10), "test_unpack2"),
    "return_tuple1": P("def f(a, b):\n    return (a - b, b - a, a, b)",
                       lambda lib: two(lib, 3), "test_return_tuple1"),
    "inner_function": P("""
        def f(x):
            def fn(x):
                return lib.add(x, x)
            return fn(x)
        """, lambda lib: one(lib, 4), "test_inner_function"),
    "transpose_for_scores": P("""
        def f(x):
            new_x_shape = x.size()[:-1] + (2, 5)
            x = x.view(*new_x_shape)
            return x.permute(0, 2, 1)
        """, lambda lib: one(lib, 3, 10), "test_transpose_for_scores"),
    "load_global_bool": P("""
        def f(x):
            if flag:
                return lib.add(x, x)
            else:
                return x
        """, lambda lib: one(lib, 4), "test_load_global_bool", prelude=PRELUDE),
    "len_tensor_and_constants": P("""
        def f(x):
            z = len(x) + len([1, 2, 3]) + len({"foo": "bar"}) + len("test str")
            return lib.add(x, z)
        """, lambda lib: one(lib, 4), "test_len_tensor, test_len_constant_misc_iterables"),
    "dict_keys": P("""
        def f(x):
            d = {3: x}
            keys = d.keys()
            d[4] = x + 1
            d2 = {3: 2, 4: "aa"}
            return 3 in keys, 4 in keys, 5 in keys, d2.keys() == keys
        """, lambda lib: one(lib, 4), "test_dict_keys"),
    "dict_values": P("""
        def f(x):
            d = {3: x}
            values = d.values()
            d[3] = x + 1
            d[4] = x + 2
            return len(values)
        """, lambda lib: one(lib, 4), "test_dict_values"),
    "dict_setdefault2": P("""
        def f(x):
            d = {"a": 1, "b": 2}
            d.setdefault("c", 10)
            if d["c"] == 10:
                return x + 1
            else:
                return x - 1
        """, lambda lib: one(lib, 4), "test_dict_setdefault2"),
    "dict_update_kwargs": P("""
        def f(x):
            d = {"a": 2}
            d.update(b=4)
            return x * d["a"] * d["b"]
        """, lambda lib: one(lib, 4), "test_dict_update_kwargs"),
    "dict_kwargs": P("def f(x):\n    return dict(text_embed=x + 1, other=x + 2)",
                     lambda lib: one(lib, 4), "test_dict_kwargs"),
    "callable_lambda": P("""
        def f(x):
            if callable(lambda x: True):
                return x + 1
            else:
                return x - 1
        """, lambda lib: one(lib, 4), "test_callable_lambda"),
    "float_of_str": P("""
        def f(x):
            y = float(1.2)
            y += float("1.2")
            return lib.add(x, y)
        """, lambda lib: one(lib, 4), "test_float"),
    "list_compare_polyfill": P("""
        def f(x):
            for a, b, c in [
                [(1, 2, 3), (1, 2, 3), 7.77],
                [(1, 4, 3), (1, 2, 3), 3.33],
                [(1, 2), (1, 2, 3), 5.55],
                [(1, 2, 3), (1, 2), 11.11],
                [(1, -1, 3), (1, 2, 3), 13.33],
            ]:
                if a != b:
                    x += 1 * c
                if a == b:
                    x += 2 * c
                if a < b:
                    x += 4 * c
                if a > b:
                    x += 8 * c
                if a <= b:
                    x += 16 * c
                if a >= b:
                    x += 32 * c
            return x
        """, lambda lib: one(lib, 4), "test_list_compare_polyfill"),
    "del_locals": P("""
        def f(a, b):
            c = a + 1
            d = c + 2
            del c, a
            return b + d
        """, lambda lib: two(lib, 4), "test_del"),
    "return_dict2": P("""
        def f(x, y):
            tmp = {"x": x}
            tmp["z"] = [x + y, y]
            tmp["y"] = y
            tmp["z"].append(False)
            return tmp
        """, lambda lib: two(lib, 4), "test_return_dict2"),
    "funcdef_closure_nonlocal": P("""
        def f(x, y):
            x = x + y + 1.0

            def inner(z):
                nonlocal x, y
                y = x + z + 20.0
                x = y + z + 10.0

            inner(2.0)
            inner(3.0)
            return x, y
        """, lambda lib: two(lib, 4), "test_funcdef_closure"),
    "build_list_unpack_genexpr": P("""
        def f(a, b):
            it1 = (x + 1 for x in (a, b))
            it2 = (x - 1 for x in (a, b))
            return lib.cat([*it1, *it2], dim=-1)
        """, lambda lib: two(lib, 2, 3), "test_build_list_unpack"),
    "list_pop_extend": P("""
        def f(a, b):
            ll = [a, b]
            ll.append(a + 1)
            ll.extend([b + 2, a + b])
            ll.pop(-1)
            ll.pop(0)
            ll.pop()
            v1, v2 = ll
            return v1 - v2
        """, lambda lib: two(lib, 4), "test_pop"),
    "list_convert": P("""
        def f(a, b):
            ll = [a + 2, b]
            ll = tuple(ll)
            tmp = b + 3
            ll = list(ll)
            v1, v2 = ll
            return v1 - v2 + tmp
        """, lambda lib: two(lib, 4), "test_list_convert"),
    "dict_ops": P("""
        def f(a, b):
            tmp = {"a": a + 1, "b": b + 2}
            assert tmp.get("zzz") is None
            v = tmp.pop("b") + tmp.get("a") + tmp.get("missing", 3) + tmp.pop("missing", 4)
            tmp.update({"d": 3})
            tmp["c"] = v + tmp["d"]
            if "c" in tmp and "missing" not in tmp:
                return tmp["c"] - tmp["a"] + len(tmp)
        """, lambda lib: two(lib, 4), "test_dict_ops"),
    "itertools_product": P("""
        def f(a, b):
            v = a
            for x, i in itertools.product([a, b], [1, 2]):
                v = v + x * i
            return v
        """, lambda lib: two(lib, 4), "test_itertools_product"),
    "itertools_chain": P("""
        def f(a, b):
            v = a
            for x in itertools.chain([a, b], [1, 2]):
                v = v + x
            return v
        """, lambda lib: two(lib, 4), "test_itertools_chain"),
    "obj_eq": P("""
        def f(a, b):
            v = a + b
            if MyCls() == None:
                return -1
            if MyCls() != None:
                v = v.sin()
            if MyCls() == MyCls():
                return -2
            if MyCls() != MyCls():
                return v + 1
            return -3
        """, lambda lib: two(lib, 4), "test_obj_eq", prelude=PRELUDE),
    "cls_hasattr": P("""
        def f(x):
            if hasattr(MyCls, "a"):
                x = x + 1
            if hasattr(MyCls, "b"):
                x = x + 2
            return x
        """, lambda lib: one(lib, 4), "test_cls_hasattr", prelude=PRELUDE),
    "set_union": P("""
        def f(a, b):
            set1 = {"apple", "banana", "cherry"}
            set2 = {"google", "microsoft", "apple"}
            union_set = set1.union(set2)
            x = a + b if "apple" in union_set else a - b
            y = a + b if "pear" in union_set else a - b
            return x, y
        """, lambda lib: two(lib, 4), "test_set_union"),
    "tuple_iadd": P("""
        def f(a, b):
            output = (a, b)
            output += (a + b, a - b)
            return output
        """, lambda lib: two(lib, 4), "test_tuple_iadd"),
    "unpack_ex3": P("""
        def f(x):
            output = (x, x + 1, x + 2, x + 3)
            a, *bc, d = output
            return a - d / bc[0]
        """, lambda lib: one(lib, 4), "test_unpack_ex3"),
    "list_reversed": P("""
        def f(a, b):
            tmp = [a + 1, a + 2, a + 3]
            return a + b + next(iter(reversed(tmp)))
        """, lambda lib: two(lib, 4), "test_list_reversed"),
    "list_sorted2": P("""
        def f(x):
            y = [("john", "A", 8), ("jane", "B", 5), ("dave", "B", 10)]
            return (x + 1, sorted(y), sorted(y, key=lambda student: student[2]),
                    sorted(y, key=lambda student: student[2], reverse=True))
        """, lambda lib: one(lib, 4), "test_list_sorted2"),
    "dict_sorted": P("""
        def f(x):
            tmp = {1: "D", 10: "B", 3: "E", 0: "F"}
            return x + 1, sorted(tmp), sorted(tmp, reverse=True)
        """, lambda lib: one(lib, 4), "test_dict_sorted"),
    "list_clear": P("""
        def f(a, b):
            tmp = [a + 1, a + 2]
            tmp.clear()
            tmp.append(a + b)
            return tmp
        """, lambda lib: two(lib, 4), "test_list_clear"),
    "namedtuple_made_inside": P("""
        def f(a, b):
            mytuple = collections.namedtuple("mytuple", ["x", "y", "xy"])
            tmp = mytuple(a, b, a + b)
            return mytuple(tmp.x, tmp[1], tmp.xy + b)
        """, lambda lib: two(lib, 4), "test_namedtuple"),
    "fstrings": P("""
        def f(x):
            tmp = f"{x.shape[0]} bar"
            s = f"{1.229:.2f} bar"
            if "10" in (tmp + "haha") and s.startswith("1.23"):
                return x + 1
            return x - 1
        """, lambda lib: one(lib, 10), "test_fstrings1, test_fstrings5"),
    "list_slice_assignment": P("""
        def f(x):
            m = [1, 2, 3, 4]
            m[1:] = [6] * (len(m) - 1)
            return x + sum(m)
        """, lambda lib: one(lib, 4), "test_list_slice_assignment"),
}

# (graphs over all calls, explain graph_count, explain graph_break_count, ops per graph)
TORCH_COUNTS = {
    'add': (1, 1, 0, (1,)),
    'constant4': (1, 1, 0, (1,)),
    'methodcall2': (1, 1, 0, (3,)),
    'methodcall3': (1, 1, 0, (3,)),
    'inline_with_default': (1, 1, 0, (2,)),
    'tuple2_star_call': (1, 1, 0, (1,)),
    'indirect3': (1, 1, 0, (1,)),
    'listarg5': (1, 1, 0, (1,)),
    'unpack2': (1, 1, 0, (3,)),
    'return_tuple1': (1, 1, 0, (2,)),
    'inner_function': (1, 1, 0, (1,)),
    'transpose_for_scores': (1, 1, 0, (2,)),
    'load_global_bool': (1, 1, 0, (1,)),
    'len_tensor_and_constants': (1, 1, 0, (1,)),
    'dict_keys': (1, 1, 0, (1,)),
    'dict_values': (1, 1, 0, (2,)),
    'dict_setdefault2': (1, 1, 0, (1,)),
    'dict_update_kwargs': (1, 1, 0, (2,)),
    'dict_kwargs': (1, 1, 0, (2,)),
    'callable_lambda': (1, 1, 0, (1,)),
    'float_of_str': (1, 1, 0, (1,)),
    'list_compare_polyfill': (1, 1, 0, (15,)),
    'del_locals': (1, 1, 0, (3,)),
    'return_dict2': (1, 1, 0, (1,)),
    'funcdef_closure_nonlocal': (1, 1, 0, (10,)),
    'build_list_unpack_genexpr': (1, 1, 0, (5,)),
    'list_pop_extend': (1, 1, 0, (4,)),
    'list_convert': (1, 1, 0, (4,)),
    'dict_ops': (1, 1, 0, (8,)),
    'itertools_product': (1, 1, 0, (8,)),
    'itertools_chain': (1, 1, 0, (4,)),
    'obj_eq': (1, 1, 0, (3,)),
    'cls_hasattr': (1, 1, 0, (1,)),
    'set_union': (1, 1, 0, (2,)),
    'tuple_iadd': (1, 1, 0, (2,)),
    'unpack_ex3': (1, 1, 0, (5,)),
    'list_reversed': (1, 1, 0, (5,)),
    'list_sorted2': (1, 1, 0, (1,)),
    'dict_sorted': (1, 1, 0, (1,)),
    'list_clear': (1, 1, 0, (3,)),
    'namedtuple_made_inside': (1, 1, 0, (2,)),
    'fstrings': (1, 1, 0, (1,)),
    'list_slice_assignment': (1, 1, 0, (1,)),
}

test_compiled_equals_eager_with_torchs_counts, test_torch_counts_are_the_table = \
    fidelity_tests(PROGRAMS, TORCH_COUNTS)
