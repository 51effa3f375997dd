"""User objects and classes around tensors — enum members (as constants, inputs, dict keys),
attributes written and deleted on inputs and on objects made inside, dataclasses, ``isinstance``
dispatch, ``super()`` chains, user ``__add__``/``__radd__``/``__iadd__`` (and ``NotImplemented``),
``functools.partial`` objects passed in — in the manner of torch's ``test/dynamo/test_misc.py``
and ``test_functions.py``.

Each runs compiled and eagerly under mtc (values, printed text and side effects equal) and its
counts — graphs over all the calls, explain's counts for the first call, ops per graph — are
torch 2.13's (``TORCH_COUNTS``, re-measured when torch is installed), except for ``DIFFERS``.
"""

import enum
import functools
from dataclasses import dataclass

from .dynamo_fidelity import Program, fidelity_tests, one, ramp

P = Program


# objects the calls pass in (module level: the same classes under both libraries)
class Color(enum.Enum):
    RED = 1
    BLUE = 2


class Box:
    def __init__(self):
        self.count = 0


class Holder:
    def __init__(self, scale=None):
        if scale is not None:
            self.scale = scale


@dataclass
class Cfg:
    scale: float
    shift: float


class Pair:
    def __init__(self, a, b):
        self.a, self.b = a, b

    def __iadd__(self, t):
        self.a = self.a + t
        self.b = self.b * 2
        return self


def scale_shift(k, x, s=0):
    return x * k + s


_SHARED = f"from {__name__} import Color\n"  # for programs that name the class themselves

PROGRAMS = {
    "enum_member_compare": P("""
        import enum
        class Color(enum.Enum):
            RED = 1
            BLUE = 2
        def f(x, c):
            if c == Color.RED:
                return x + 1
            return x - 1
        """, lambda lib: [(ramp(lib, 3), 1), (ramp(lib, 3), 2)],
        "after test_misc.py (an enum member compared)"),
    "enum_passed_in": P("""
        def f(x, c):
            return x * c.value, c.name
        """, lambda lib: [(ramp(lib, 3), c) for c in (Color.RED, Color.BLUE, Color.RED)],
        "after test_misc.py (an enum member as an argument)",
    ),
    "intenum_arith": P("""
        def f(x):
            return x * Level.HIGH + int(Level.LOW)
        """, lambda lib: one(lib, 3), "after test_misc.py (IntEnum arithmetic)",
        prelude="""
        import enum
        class Level(enum.IntEnum):
            LOW = 1
            HIGH = 3
        """),
    "enum_in_dict_key": P("""
        def f(x, c):
            table = {Color.RED: 1.0, Color.BLUE: -1.0}
            return x * table[c]
        """, lambda lib: [(ramp(lib, 3), Color.RED), (ramp(lib, 3), Color.BLUE)],
        "after test_misc.py (enum members as dict keys)",
        prelude=_SHARED),
    "enum_iteration": P("""
        def f(x):
            return [x * c.value for c in Color]
        """, lambda lib: one(lib, 3), "after test_misc.py (iterating an Enum class)",
        prelude=_SHARED),
    "attribute_counter_on_input_object": P("""
        def f(x, obj):
            obj.count += 1
            obj.last = x.cos()
            return x * obj.count
        """, lambda lib: [(ramp(lib, 3), Box())],
        "after test_misc.py (attribute side effects on an input)",
    ),
    "global_int_incremented": P("""
        def f(x):
            global counter
            counter += 1
            return x + counter
        """, lambda lib: [(ramp(lib, 3),), (ramp(lib, 3),)],
        "after test_misc.py (a global int written)",
        prelude="counter = 0\n"),
    "global_dict_written": P("""
        def f(x):
            cache["y"] = x.sin()
            cache["n"] = cache.get("n", 0) + 1
            return x + cache["n"]
        """, lambda lib: [(ramp(lib, 3),), (ramp(lib, 3),)],
        "after test_misc.py (a global dict written)",
        prelude="cache = {}\n"),
    "attribute_deleted": P("""
        def f(x, obj):
            y = x * obj.scale
            del obj.scale
            return y, hasattr(obj, "scale")
        """, lambda lib: [(ramp(lib, 3), Holder(2.0)), (ramp(lib, 3), Holder(3.0))],
        "after test_misc.py (delattr on an input object)"),
    "setattr_getattr_builtin": P("""
        def f(x, obj):
            setattr(obj, "val", x.cos())
            return getattr(obj, "val") + getattr(obj, "missing", 1.0)
        """, lambda lib: [(ramp(lib, 3), Holder())],
        "after test_functions.py (setattr/getattr builtins)"),
    "del_attr_then_hasattr": P("""
        def f(x, obj):
            y = x * obj.scale
            del obj.scale
            return y, hasattr(obj, "scale")
        """, lambda lib: [(ramp(lib, 3), Holder(2.0))], "after test_misc.py (del then hasattr)"),
    "del_attr_on_new_object": P("""
        class Tmp:
            def __init__(self, t):
                self.t = t
                self.u = t * 2
        def f(x):
            o = Tmp(x)
            del o.u
            return o.t, hasattr(o, "u"), o
        """, lambda lib: one(lib, 3),
        "after test_misc.py (del an attribute of an object made inside)"),
    "del_attr_then_break": P("""
        def f(x, obj):
            del obj.scale
            print("break")
            return x * 2, hasattr(obj, "scale")
        """, lambda lib: [(ramp(lib, 3), Holder(2.0))],
        "after test_misc.py (del before a graph break)"),
    "dataclass_default_factory": P("""
        @dataclass
        class Cfg:
            scale: float = 2.0
            items: list = field(default_factory=list)
        def f(x):
            c = Cfg()
            c.items.append(3)
            return x * c.scale + len(c.items)
        """, lambda lib: one(lib, 3), "after test_misc.py (dataclass with default_factory)"),
    "dataclass_input_fields": P("""
        def f(x, c):
            return x * c.scale + c.shift
        """, lambda lib: [(ramp(lib, 3), Cfg(2.0, 1.0)), (ramp(lib, 3), Cfg(3.0, 1.0))],
        "after test_misc.py (a dataclass argument; a field changes)"),
    "frozen_dataclass_replace": P("""
        @dataclass(frozen=True)
        class Pt:
            a: int
            b: int
        def f(x):
            p = Pt(1, 2)
            q = dataclasses.replace(p, b=5)
            return x * q.b + p.a
        """, lambda lib: one(lib, 3), "after test_misc.py (frozen dataclass, replace)"),
    "isinstance_user_classes": P("""
        class A:
            pass
        class B(A):
            pass
        def f(x):
            b = B()
            return x * (isinstance(b, A) + issubclass(B, A) + isinstance(b, (int, B)))
        """, lambda lib: one(lib, 3), "after test_functions.py (isinstance, issubclass)"),
    "type_dispatch_on_arg": P("""
        def f(x, v):
            if isinstance(v, int):
                return x + v
            if isinstance(v, (list, tuple)):
                return x + len(v)
            return x
        """, lambda lib: [(ramp(lib, 3), 2), (ramp(lib, 3), [1, 2]), (ramp(lib, 3), "s")],
        "after test_functions.py (isinstance on an argument; one entry per type)"),
    "isinstance_tensor": P("""
        def f(x, y):
            if isinstance(y, lib.Tensor):
                return x + y
            return x
        """, lambda lib: [(ramp(lib, 3), ramp(lib, 3)), (ramp(lib, 3), 1.0)],
        "after test_functions.py (isinstance(y, Tensor))"),
    "super_method_chain": P("""
        class Base:
            def go(self, x):
                return x + 1
        class Mid(Base):
            def go(self, x):
                return super().go(x) * 2
        class Top(Mid):
            def go(self, x):
                return super().go(x) - 3
        def f(x):
            return Top().go(x)
        """, lambda lib: one(lib, 3), "after test_misc.py (super() through three classes)"),
    "super_in_module_forward": P("""
        class Base(lib.nn.Module):
            def forward(self, x):
                return x.relu()
        class Child(Base):
            def forward(self, x):
                return super().forward(x) + 1
        m = Child()
        def f(x):
            return m(x)
        """, lambda lib: one(lib, 3), "after test_modules.py (super().forward)"),
    "class_attribute_and_classmethod_counter": P("""
        class C:
            n = 0
            @classmethod
            def bump(cls):
                cls.n += 1
                return cls.n
        def f(x):
            return x * C.bump()
        """, lambda lib: [(ramp(lib, 3),), (ramp(lib, 3),)],
        "after test_misc.py (a classmethod writes a class attribute)"),
    "dunder_methods_user_class": P("""
        class V:
            def __init__(self, t):
                self.t = t
            def __add__(self, o):
                return V(self.t + o.t)
            def __len__(self):
                return 3
            def __getitem__(self, i):
                return self.t * i
        def f(x):
            v = V(x) + V(x.cos())
            return v[2] + len(v)
        """, lambda lib: one(lib, 3), "after test_misc.py (user __add__, __len__, __getitem__)"),
    "user_radd_with_int": P("""
        class Money:
            def __init__(self, t):
                self.t = t
            def __radd__(self, other):
                return Money(self.t + other)
        def f(x):
            m = 3 + Money(x)
            return m.t
        """, lambda lib: one(lib, 3), "after test_misc.py (__radd__ from an int)"),
    "user_iadd_on_input_object": P("""
        def f(x, p):
            p += x
            return p.a, p.b
        """, lambda lib: [(ramp(lib, 3), Pair(ramp(lib, 3), 1.0))],
        "after test_misc.py (__iadd__ on an argument)"),
    "user_mul_returns_notimplemented": P("""
        class V:
            def __init__(self, t):
                self.t = t
            def __mul__(self, o):
                if isinstance(o, V):
                    return V(self.t * o.t)
                return NotImplemented
            def __rmul__(self, o):
                return V(self.t * (o + 1))
        def f(x):
            return (V(x) * V(x)).t, (2 * V(x)).t
        """, lambda lib: one(lib, 3),
        "after test_misc.py (NotImplemented then the reflected method)"),
    "partial_passed_in": P("""
        def f(x, g):
            return g(x)
        """, lambda lib: [(ramp(lib, 3), functools.partial(lib.add, other=2.0))],
        "after test_functions.py (a partial as an argument)"),
    "partial_of_user_function_input": P("""
        def f(x, g):
            return g(x) + g(x, 1)
        """, lambda lib: [(ramp(lib, 3), functools.partial(scale_shift, 2.0))],
        "after test_functions.py (a partial of a user function as input)"),
    "partial_input_changes_args": P("""
        def f(x, g):
            return g(x)
        """, lambda lib: [(ramp(lib, 3), functools.partial(scale_shift, k)) for k in (2.0, 3.0)],
        "after test_functions.py (a partial input whose argument changes)"),
}

TORCH_COUNTS = {
    'attribute_counter_on_input_object': (1, 1, 0, (2,)),
    'attribute_deleted': (2, 1, 0, (1, 2)),
    'class_attribute_and_classmethod_counter': (2, 1, 0, (1, 1)),
    'dataclass_default_factory': (1, 1, 0, (2,)),
    'dataclass_input_fields': (2, 1, 0, (2, 3)),
    'del_attr_on_new_object': (1, 1, 0, (1,)),
    'del_attr_then_break': (1, 1, 0, (1,)),
    'del_attr_then_hasattr': (1, 1, 0, (1,)),
    'dunder_methods_user_class': (1, 1, 0, (4,)),
    'enum_in_dict_key': (1, 1, 0, (1,)),
    'enum_iteration': (1, 1, 0, (2,)),
    'enum_member_compare': (2, 1, 0, (1, 1)),
    'enum_passed_in': (2, 1, 0, (1, 1)),
    'frozen_dataclass_replace': (1, 1, 0, (2,)),
    'global_dict_written': (2, 1, 0, (2, 2)),
    'global_int_incremented': (2, 1, 0, (1, 1)),
    'intenum_arith': (1, 1, 0, (2,)),
    'isinstance_tensor': (2, 1, 0, (1, 0)),
    'isinstance_user_classes': (1, 1, 0, (1,)),
    'partial_input_changes_args': (2, 1, 0, (2, 3)),
    'partial_of_user_function_input': (1, 1, 0, (5,)),
    'partial_passed_in': (1, 1, 0, (1,)),
    'setattr_getattr_builtin': (1, 1, 0, (2,)),
    'super_in_module_forward': (1, 1, 0, (2,)),
    'super_method_chain': (1, 1, 0, (3,)),
    'type_dispatch_on_arg': (2, 1, 0, (1, 1)),
    'user_iadd_on_input_object': (1, 1, 0, (1,)),
    'user_mul_returns_notimplemented': (1, 1, 0, (2,)),
    'user_radd_with_int': (1, 1, 0, (1,)),
}

DIFFERS = {
    "enum_in_dict_key": ((2, 1, 0, (1, 1)),
                         "torch 2.13 compiles once and returns RED's value for BLUE (no guard on "
                         "the member used as a dict key: a wrong result); mtc guards the "
                         "member's identity and recompiles"),
    "isinstance_tensor": ((1, 1, 0, (1,)),
                          "when y changes from a tensor to a float, torch 2.13's recompile hands "
                          "the backend a graph that only returns its input x; mtc compiles no "
                          "graph for a frame without ops"),
}
TORCH_WRONG = {"enum_in_dict_key": "BLUE's call returns RED's value"}

test_compiled_equals_eager_with_torchs_counts, test_torch_counts_are_the_table = \
    fidelity_tests(PROGRAMS, TORCH_COUNTS, DIFFERS, torch_wrong=TORCH_WRONG)
