"""Programs ported from torch's ``test/dynamo/test_misc.py``, ``test_ctx_manager.py`` and
``test_generator.py``: user classes, properties, dataclasses, namedtuples, generators,
``try``/``except``, ``with`` blocks, ``global``/``nonlocal`` mutation, comprehensions, builtins,
``math``, recursion, modules read by ``getattr``.

Each runs compiled and eagerly under mtc (values, printed text and side effects equal) and its
counts are torch 2.13's (``TORCH_COUNTS``, re-measured when torch is installed), except for
``DIFFERS``.
"""


from .dynamo_fidelity import (
    Program,
    fidelity_tests,
    one,
    ramp,
    two,
)

P = Program
CLASSES = """
class Point:
    def __init__(self, x, scale=2.0):
        self.x = x
        self.scale = scale

    @property
    def scaled(self):
        return self.x * self.scale

    def norm(self):
        return (self.scaled ** 2).sum()

@dataclass
class Config:
    width: int = 3
    gain: float = 1.5
    tags: list = field(default_factory=list)

Pair = collections.namedtuple("Pair", ["left", "right"])

counter = 0
"""

PROGRAMS = {
    "boolarg": P("""
        def f(a, b, offset=True):
            x = a + b
            if offset:
                x = x + 1
            return x
        """, lambda lib: [two(lib, 4)[0] + (False,), two(lib, 4)[0] + (True,)],
        "test_misc.py::test_boolarg"),
    "callpacked": P("""
        def call_packed(args):
            a0, a1, a2 = args
            return a0 + a1 + a2

        def f(a, b, c):
            return call_packed([a, b, c])
        """, lambda lib: [two(lib, 4)[0] + (lib.ones(4),)], "test_misc.py::test_callpacked"),
    "closure_returned": P("""
        def f(x):
            def make(k):
                def inner(y):
                    return y * k + x
                return inner
            g = make(3)
            return g(x.cos())
        """, lambda lib: one(lib, 4), "after test_misc.py::test_closure"),
    "nested_closure_mutation": P("""
        def f(x):
            total = x * 0
            def add(v):
                nonlocal total
                total = total + v
            for i in range(3):
                add(x * i)
            return total
        """, lambda lib: one(lib, 4), "test_misc.py::test_nested_closure_mutation"),
    "args_kwargs_forwarding": P("""
        def inner(a, *args, scale=1.0, **kwargs):
            out = a * scale
            for t in args:
                out = out + t
            for k in sorted(kwargs):
                out = out - kwargs[k]
            return out

        def f(a, b):
            return inner(a, b, b, scale=2.0, z=a, y=b)
        """, lambda lib: two(lib, 4), "after test_functions.py::test_kwargs (*args, **kwargs)"),
    "keyword_only_defaults": P("""
        def g(x, *, k=2, bias=None):
            return x * k if bias is None else x * k + bias

        def f(x, y):
            return g(x), g(x, k=3, bias=y)
        """, lambda lib: two(lib, 4), "after test_misc.py::test_kwonly_args"),
    "user_class_property": P("""
        def f(x):
            p = Point(x)
            return p.scaled + p.norm()
        """, lambda lib: one(lib, 4), "after test_misc.py::test_user_property", prelude=CLASSES),
    "user_object_passed_in": P("""
        def f(p, y):
            return p.scaled * y + p.scale
        """, lambda lib: [(_point(lib), ramp(lib, 4))], "test_misc.py::test_user_getattr1",
        prelude=CLASSES),
    "dataclass_fields": P("""
        def f(x):
            cfg = Config(width=2)
            out = x
            for fld in dataclasses.fields(cfg):
                if fld.name == "gain":
                    out = out * getattr(cfg, fld.name)
            return out + cfg.width
        """, lambda lib: one(lib, 4), "after test_misc.py::test_dataclass_fields", prelude=CLASSES),
    "namedtuple_passed_in": P("""
        def f(pair):
            left, right = pair
            return Pair(right.sin(), left + pair.right)
        """, lambda lib: [(_pair(lib),)], "after test_misc.py::test_namedtuple1", prelude=CLASSES),
    "namedtuple_replace": P("""
        def f(x):
            p = Pair(x, 2)
            q = p._replace(right=3)
            return q.left * q.right + len(q._fields)
        """, lambda lib: one(lib, 4), "after test_misc.py::test_namedtuple2", prelude=CLASSES),
    "isinstance_dispatch": P("""
        def scale(v):
            if isinstance(v, (list, tuple)):
                return [scale(i) for i in v]
            if isinstance(v, dict):
                return {k: scale(i) for k, i in v.items()}
            if isinstance(v, lib.Tensor):
                return v * 2
            return v

        def f(x, y):
            return scale({"a": [x, (y, 3)], "b": x.cos(), "c": "s"})
        """, lambda lib: two(lib, 3), "after test_misc.py::test_isinstance_*"),
    "recursion": P("""
        def fact(n, x):
            if n <= 1:
                return x
            return fact(n - 1, x * n)

        def f(x):
            return fact(4, x)
        """, lambda lib: one(lib, 3), "after test_misc.py (recursion)"),
    "global_counter_mutation": P("""
        def f(x):
            global counter
            counter += 1
            log.append(counter)
            return x * counter
        """, lambda lib: [(ramp(lib, 3),)] * 3, "test_functions.py::update_global / test_globalvar",
        prelude=CLASSES),
    "comprehensions": P("""
        def f(x, y):
            ts = [x * i for i in range(3)]
            d = {f"k{i}": t.sum() for i, t in enumerate(ts)}
            s = {i % 2 for i in range(5)}
            return sum(ts) + y * len(s), d
        """, lambda lib: two(lib, 4), "after test_misc.py::test_listcomp / test_dictcomp"),
    "zip_enumerate_min_max": P("""
        def f(xs, ws):
            out = []
            for i, (x, w) in enumerate(zip(xs, ws)):
                out.append(x * w + i)
            k = max(len(xs), 1) + min(3, 4)
            return out[0] * k, any(w > 1 for w in ws), all(w > 0 for w in ws)
        """, lambda lib: [([ramp(lib, 3), ramp(lib, 3) + 1], [2, 0.5])],
        "after test_functions.py::test_enumerate / test_zip (builtins)"),
    "math_module": P("""
        def f(x, n):
            c = math.sqrt(n) + math.log(n) * math.pi - math.floor(2.7) + math.ceil(0.2)
            return x * c + math.exp(0.5) * math.cos(0.0)
        """, lambda lib: [(ramp(lib, 4), 4)], "after test_functions.py::test_math_*"),
    "range_iteration": P("""
        def f(x):
            r = range(1, 10, 3)
            for i in r[1:]:
                x = x + i
            return x * len(r), r[-1], list(range(3))
        """, lambda lib: one(lib, 4), "after test_functions.py::test_range_with_slice_index"),
    "getattr_on_module": P("""
        def f(x, mod):
            act = getattr(mod, "act")
            return act(getattr(mod, "fc")(x)) * mod.fc.out_features
        """, lambda lib: [(ramp(lib, 2, 3), _mod(lib))], "after test_misc.py (module getattr)"),
    "generator_simple": P("""
        def whoo(t):
            yield t + 1
            yield t + 2
            yield t + 3

        def f(t):
            gen = whoo(t)
            return sum(gen)
        """, lambda lib: one(lib, 4), "test_generator.py::test_generator_simple"),
    "generator_next": P("""
        def countdown(t, n):
            while n > 0:
                yield t * n
                n -= 1

        def f(t):
            g = countdown(t, 3)
            first = next(g)
            return first + sum(g)
        """, lambda lib: one(lib, 4), "after test_generator.py::test_generator_next"),
    "try_except_keyerror": P("""
        def f(x):
            d = {"a": 1}
            try:
                v = d["b"]
            except KeyError:
                v = 10
            return x * v
        """, lambda lib: one(lib, 4), "after test_misc.py::test_try_except (KeyError caught)"),
    "try_finally": P("""
        def f(x):
            try:
                y = x.sin()
            finally:
                log.append("done")
            return y * 2
        """, lambda lib: one(lib, 4), "after test_exceptions.py::test_try_finally"),
    "no_grad_block": P("""
        def f(x):
            with lib.no_grad():
                y = x * 2
            z = x.cos()
            return y, z, y.requires_grad, z.requires_grad
        """, lambda lib: [(ramp(lib, 3).requires_grad_(True),)],
        "after test_ctx_manager.py::test_no_grad"),
    "enable_grad_nested": P("""
        def f(x):
            with lib.no_grad():
                a = x + 1
                with lib.enable_grad():
                    b = x * 2
            return a, b, a.requires_grad, b.requires_grad
        """, lambda lib: [(ramp(lib, 3).requires_grad_(True),)],
        "after test_ctx_manager.py::test_nested_grad_mode"),
    "set_grad_enabled_flag": P("""
        def f(x, flag):
            with lib.set_grad_enabled(flag):
                y = x.exp()
            return y, y.requires_grad
        """, lambda lib: [(ramp(lib, 3).requires_grad_(True), False),
                          (ramp(lib, 3).requires_grad_(True), True)],
        "after test_ctx_manager.py::test_set_grad_enabled"),
    "user_context_manager": P("""
        class Scale:
            def __init__(self, k):
                self.k = k
            def __enter__(self):
                log.append("enter")
                return self.k
            def __exit__(self, *exc):
                log.append("exit")
                return False

        def f(x):
            with Scale(3) as k:
                y = x * k
            return y
        """, lambda lib: one(lib, 4), "after test_ctx_manager.py (user class)"),
    "str_methods": P("""
        def f(x, name):
            parts = name.split(".")
            key = "_".join(p.upper() for p in parts)
            if key.startswith("LAYER") and parts[-1].isdigit():
                return x * int(parts[-1]), key
            return x, key
        """, lambda lib: [(ramp(lib, 3), "layer.2")], "after test_misc.py::test_str_methods"),
    "tensor_attributes": P("""
        def f(x):
            if x.ndim == 2 and x.dim() == 2 and x.shape[0] == 2 and x.size(1) == 3:
                if x.dtype == lib.float32:
                    return x + x.numel() + x.element_size()
            return x
        """, lambda lib: one(lib, 2, 3), "test_functions.py::test_ndim, test_dtype"),
    "list_add_then_mutate": P("""
        def f(x):
            my_list = [1, x]
            y = x / 4.0
            my_list = my_list + [x / 2.0, 4]
            my_list.append(y)
            return sum(my_list)
        """, lambda lib: one(lib, 4), "test_functions.py::test_list_add_then_mutate"),
    "in_not_in": P("""
        def f(x):
            mylist = [1, 2, 3, 4, 5, x]
            myotherlist = [1, 2, 3, 4, 5]
            assert 3 in mylist
            assert 6 not in myotherlist
            return sum(mylist)
        """, lambda lib: one(lib, 4), "test_functions.py::test_in_not_in"),
    "partial_lambda": P("""
        def f(x):
            multiply = lambda x, y: x * y
            triple = functools.partial(multiply, y=3)
            return triple(x)
        """, lambda lib: one(lib, 4), "test_functions.py::test_partials_lambda"),
    "math_radians": P("def f(x, a):\n    return x + math.radians(a)",
                      lambda lib: [(lib.ones(4), 12)], "test_functions.py::test_math_radians"),
}


def _point(lib):
    return _ns(lib, CLASSES)["Point"](ramp(lib, 4), scale=3.0)


def _pair(lib):
    return _ns(lib, CLASSES)["Pair"](ramp(lib, 3), ramp(lib, 3, shift=1.0))


def _ns(lib, src):
    from .dynamo_fidelity import namespace
    return namespace(lib, Program(src, None, ""))


def _mod(lib):
    mod = lib.nn.Module()
    mod.fc = lib.nn.Linear(3, 2)
    mod.act = lib.nn.ReLU()
    with lib.no_grad():
        mod.fc.weight.copy_(ramp(lib, 2, 3))
        mod.fc.bias.copy_(ramp(lib, 2))
    return mod


# (graphs over all calls, explain graph_count, explain graph_break_count, ops per graph)
TORCH_COUNTS = {
    'math_radians': (1, 1, 0, (1,)),
    'partial_lambda': (1, 1, 0, (1,)),
    'in_not_in': (1, 1, 0, (1,)),
    'list_add_then_mutate': (1, 1, 0, (6,)),
    'boolarg': (2, 1, 0, (1, 2)),
    'callpacked': (1, 1, 0, (2,)),
    'closure_returned': (1, 1, 0, (3,)),
    'nested_closure_mutation': (1, 1, 0, (7,)),
    'args_kwargs_forwarding': (1, 1, 0, (5,)),
    'keyword_only_defaults': (1, 1, 0, (3,)),
    'user_class_property': (1, 1, 0, (5,)),
    'user_object_passed_in': (1, 1, 0, (3,)),
    'dataclass_fields': (1, 1, 0, (2,)),
    'namedtuple_passed_in': (1, 1, 0, (2,)),
    'namedtuple_replace': (1, 1, 0, (2,)),
    'isinstance_dispatch': (1, 1, 0, (4,)),
    'recursion': (1, 1, 0, (3,)),
    'global_counter_mutation': (3, 1, 0, (1, 1, 1)),
    'comprehensions': (1, 1, 0, (11,)),
    'zip_enumerate_min_max': (1, 1, 0, (5,)),
    'math_module': (1, 1, 0, (2,)),
    'range_iteration': (1, 1, 0, (3,)),
    'getattr_on_module': (1, 1, 0, (3,)),
    'generator_simple': (1, 1, 0, (6,)),
    'generator_next': (1, 1, 0, (6,)),
    'try_except_keyerror': (1, 1, 0, (1,)),
    'try_finally': (1, 1, 0, (2,)),
    'no_grad_block': (1, 1, 0, (4,)),
    'enable_grad_nested': (1, 1, 0, (4,)),
    'set_grad_enabled_flag': (2, 1, 0, (3, 1)),
    'user_context_manager': (1, 1, 0, (1,)),
    'str_methods': (1, 1, 0, (1,)),
    'tensor_attributes': (1, 1, 0, (2,)),
}

DIFFERS = {
}

test_compiled_equals_eager_with_torchs_counts, test_torch_counts_are_the_table = \
    fidelity_tests(PROGRAMS, TORCH_COUNTS, DIFFERS)
