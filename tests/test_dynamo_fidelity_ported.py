"""Programs of torch's ``test/dynamo/test_functions.py`` (``@make_test`` functions and a few
``test_*`` methods), ported as written — ``torch`` spelled ``lib``, inputs ``ramp`` tensors of
the tests' shapes instead of ``randn`` — with the test each comes from as its ``cite``.

Each runs compiled and eagerly under mtc (values, printed text and side effects equal) and its
counts — graphs over all the calls, explain's counts for the first call, ops per graph — are
torch 2.13's (``TORCH_COUNTS``, re-measured when torch is installed), except for ``DIFFERS``.
"""

from .dynamo_fidelity import Program, fidelity_tests, one, ramp, two

P = Program


def three(lib, *shape):
    """One call with three different tensors of ``shape``."""
    return [(ramp(lib, *shape), ramp(lib, *shape, scale=-0.05, shift=0.7),
             ramp(lib, *shape, scale=0.02, shift=0.1))]


PROGRAMS = {
    "tensor_element_size": P("""
        def f(a):
            if a.element_size() > 1:
                return (a + a.element_size(), a - a.element_size())
            return (a - a.element_size(), a + a.element_size())
        """, lambda lib: one(lib, 10, 10),
        "test_functions.py::test_tensor_element_size"),
    "ndim": P("""
        def f(x):
            if x.ndim == 2 and x.ndimension() == 2 and x.dim() == 2:
                return x + 1
        """, lambda lib: one(lib, 10, 10),
        "test_functions.py::test_ndim"),
     "T": P("""
        def f(x):
            return lib.ones_like(x.T)
        """, lambda lib: one(lib, 10, 10),
        "test_functions.py::test_T"),
     "mT": P("""
        def f(x):
            return lib.ones_like(x.mT)
        """, lambda lib: one(lib, 10, 10),
        "test_functions.py::test_mT"),
    "shape1": P("""
        def f(x):
            if x.shape[0] == 10:
                return x + 1
        """, lambda lib: one(lib, 10, 10),
        "test_functions.py::test_shape1"),
    "shape2": P("""
        def f(x):
            if x.size(1) == 10:
                return x + 1
        """, lambda lib: one(lib, 10, 10),
        "test_functions.py::test_shape2"),
    "del_locals_two": P("""
        def f(a, b):
            c = a + 1
            d = c + 2
            del c, a
            return b + d
        """, lambda lib: two(lib, 10, 10),
        "test_functions.py::test_del"),
    "chunks1": P("""
        def f(x):
            chunk_size = 5
            assert x.shape[0] % chunk_size == 0
            assert x.shape[0] // chunk_size == 2
            return x[:chunk_size] - x[chunk_size:]
        """, lambda lib: one(lib, 10, 10),
        "test_functions.py::test_chunks1"),
    "return_dict": P("""
        def f(x, y):
            z = [x + y, y, False]
            return {"x": x, "z": z, "a": x, "b": z, "c": x}
        """, lambda lib: two(lib, 10, 10),
        "test_functions.py::test_return_dict"),
    "inline_softmax": P("""
        def f(x, y):
            return lib.nn.Softmax(dim=-1)(x + y * 2)
        """, lambda lib: two(lib, 10, 10),
        "test_functions.py::test_inline_softmax"),
    "dtype_compare": P("""
        def f(a, b):
            if a.dtype == lib.float16:
                return a + 10
            if a.dtype == lib.float32:
                return a - b * 32
        """, lambda lib: two(lib, 10, 10),
        "test_functions.py::test_dtype_compare"),
    "list_add_empty_const": P("""
        def f(a, b):
            l1 = (a, b)
            l2 = ()
            l3 = l1 + l2
            return l3[0] + l3[1]
        """, lambda lib: two(lib, 10, 10),
        "test_functions.py::test_list_add"),
    "zip_longest": P("""
        def f(x):
            list1 = [1, 2, 3]
            list2 = ["a", "b"]
            list3 = [True, False, True, False]
            return lib.sin(x + 1), list(itertools.zip_longest(list1, list2, list3, fillvalue=None))
        """, lambda lib: one(lib, 10, 10),
        "test_functions.py::test_zip_longest"),
    "call_dict1": P("""
        def f(x):
            d1 = dict()
            d1["x"] = x + 1
            d2 = collections.OrderedDict()
            d2["x"] = x + 2
            return d1["x"] + d2["x"] + 1
        """, lambda lib: one(lib, 10, 10),
        "test_functions.py::test_call_dict1"),
    "call_dict2": P("""
        def f(x):
            d1 = dict()
            d1["x"] = x
            d2 = collections.OrderedDict(d1)
            if isinstance(d2, collections.OrderedDict):
                return x + 1
            else:
                return x - 1
        """, lambda lib: one(lib, 10, 10),
        "test_functions.py::test_call_dict2"),
    "call_dict3": P("""
        def f(x):
            my_list = [("a", x), ("b", x + 1), ("c", x + 2)]
            d1 = dict(my_list)
            d1["a"] = x + 10
            d2 = collections.OrderedDict(my_list)
            d2["c"] = x + 20
            return d1["a"] + d2["c"] + 1
        """, lambda lib: one(lib, 10, 10),
        "test_functions.py::test_call_dict3"),
    "call_dict5": P("""
        def f(x):
            my_list = iter([("a", x), ("b", x + 1), ("c", x + 2)])
            d1 = dict(my_list)
            d1["a"] = x + 10
            d2 = collections.OrderedDict(my_list)
            d2["c"] = x + 20
            return d1["a"] + d2["c"] + 1
        """, lambda lib: one(lib, 10, 10),
        "test_functions.py::test_call_dict5"),
    "dict_fromkeys": P("""
        def f(x, y):
            lst = ["a", "b"]
            d = dict.fromkeys(lst)
            d1 = dict.fromkeys(d, x + 1)
            d2 = collections.defaultdict.fromkeys(iter(d1), x - 2)
            d3 = collections.OrderedDict.fromkeys(tuple(lst), value=y)
            return d1["a"] * d2["b"] + d2["a"] + d1["b"] + d3["a"] + d3["b"] + 1
        """, lambda lib: two(lib, 10, 10),
        "test_functions.py::test_dict_fromkeys"),
    "dict_copy": P("""
        def f(x):
            my_list = [("a", x), ("b", x + 1), ("c", x + 2)]
            d1 = dict(my_list)
            d1["a"] = x + 10
            d2 = d1.copy()
            d2["a"] = x - 5
            d2["b"] = x + 3
            d3 = collections.OrderedDict(my_list)
            d3["c"] = x + 20
            d4 = d3.copy()
            d4["c"] = x - 10
            return d1["a"] * d2["a"] + d2["b"] + d3["c"] * d4["c"] + 1
        """, lambda lib: one(lib, 10, 10),
        "test_functions.py::test_dict_copy"),
    "dict_update_many_forms": P("""
        def f(x, y, z):
            d = {"a": x, "b": y}
            d.update({"a": y - 1})
            d.update([("b", z + 1), ["c", z]])
            d.update(zip("ab", [z + 3, y + 2]))
            od = collections.OrderedDict(a=x * 3, b=y + 2)
            od.update({"a": y + 5})
            od.update([["b", z + 6], ("c", z - 7)])
            return d["a"] * od["a"] + od["c"] + d["b"] + od["b"] * d["c"]
        """, lambda lib: three(lib, 10, 10),
        "test_functions.py::test_dict_update"),
    "class_dict_membership": P("""
        class A:
            x = 4
            y = 5
            def __init__(self):
                self.a = 6
        a = A()
        def f(x):
            if "x" in type(a).__dict__:
                return x + 1
            return x + 2
        """, lambda lib: one(lib, 4),
        "test_functions.py::test_class_dict"),
    "size_as_dict_key": P("""
        cached = {}
        def f(x):
            if x.shape not in cached:
                cached[x.shape] = x
            return x + cached[x.shape]
        """, lambda lib: [(ramp(lib, 2, 3),), (ramp(lib, 2, 3, shift=0.4),)],
        "test_functions.py::test_torch_size_as_dict_key"),
    "default_dict_constr": P("""
        def f(x):
            dd = collections.defaultdict(lambda: dict())
            dd["a"] = x + 1
            dd["c"] = x * 2
            dd.update({"b": x * 3})
            dd.update([["d", x - 2], ("e", x + 2)])
            dd.update(zip("ab", [x + 3, x + 4]))
            return dd["b"], dd
        """, lambda lib: one(lib, 10, 10),
        "test_functions.py::test_default_dict_constr (without the Parameter key)"),
}

TORCH_COUNTS = {
    'T': (1, 1, 0, (2,)),
    'call_dict1': (1, 1, 0, (4,)),
    'call_dict2': (1, 1, 0, (1,)),
    'call_dict3': (1, 1, 0, (6,)),
    'call_dict5': (1, 1, 0, (6,)),
    'chunks1': (1, 1, 0, (3,)),
    'class_dict_membership': (1, 1, 0, (1,)),
    'default_dict_constr': (1, 1, 0, (7,)),
    'del_locals_two': (1, 1, 0, (3,)),
    'dict_copy': (1, 1, 0, (12,)),
    'dict_fromkeys': (1, 1, 0, (8,)),
    'dict_update_many_forms': (1, 1, 0, (14,)),
    'dtype_compare': (1, 1, 0, (2,)),
    'inline_softmax': (1, 1, 0, (4,)),
    'list_add_empty_const': (1, 1, 0, (1,)),
    'mT': (1, 1, 0, (2,)),
    'ndim': (1, 1, 0, (1,)),
    'return_dict': (1, 1, 0, (1,)),
    'shape1': (1, 1, 0, (1,)),
    'shape2': (1, 1, 0, (1,)),
    'size_as_dict_key': (2, 1, 0, (1, 1)),
    'tensor_element_size': (1, 1, 0, (2,)),
    'zip_longest': (1, 1, 0, (2,)),
}

DIFFERS = {
    "inline_softmax": ((1, 1, 0, (3,)),
                       "both inline nn.Softmax(dim=-1) made inside the function; torch's graph "
                       "also records the module __init__'s torch._C._log_api_usage_once call "
                       "(4 ops), mtc's holds the same 3 tensor ops"),
}

test_compiled_equals_eager_with_torchs_counts, test_torch_counts_are_the_table = \
    fidelity_tests(PROGRAMS, TORCH_COUNTS, DIFFERS)


def test_class_dict_keys_are_guarded():
    """``"x" in type(a).__dict__`` is decided while tracing (MappingProxyVariable): the class
    dict's keys are guarded, so deleting the attribute recompiles and takes the other branch."""
    import minitorch_compile as mtc

    class A:
        x = 4

    a = A()

    def f(t):
        return t + 1 if "x" in type(a).__dict__ else t + 2

    cf = mtc.compile(f, backend="eager")
    assert cf(mtc.zeros(1)).item() == 1
    del A.x
    assert cf(mtc.zeros(1)).item() == 2 == f(mtc.zeros(1)).item()
    assert len(mtc.dynamo.cache_entries(f)) == 2


def test_size_keys_of_a_dict_are_guarded():
    """A dict keyed by ``x.shape``: its Size keys are guarded (DICT_KEYS) and its items read
    through ``G['cached'][(2, 3)]``; new shapes add keys, recompile, and match eager."""
    import minitorch_compile as mtc

    def run(fn, cached):
        outs = []
        for shape in [(2, 3), (2, 3), (3, 2), (2, 3), (4,)]:
            outs.append(fn(mtc.ones(*shape) * len(cached), cached).numpy())
        return outs

    def f(x, cached):
        if x.shape not in cached:
            cached[x.shape] = x
        return x + cached[x.shape]

    eager_cache, compiled_cache = {}, {}
    eager = run(f, eager_cache)
    compiled = run(mtc.compile(f, backend="eager"), compiled_cache)
    assert all((a == b).all() for a, b in zip(eager, compiled))
    assert list(eager_cache) == list(compiled_cache)

