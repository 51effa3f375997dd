"""Guards: the conditions under which a cache entry may run (``torch/_dynamo/guards.py``).

While tracing, every assumption about a value read from the frame is recorded as a guard on
its *source*.  At the end, the guards become **one generated Python function** a learner can
read::

    def guard(L):
        # GRAD_MODE (global state)
        if not (___grad_enabled() is True): return False
        # DEFAULT_DTYPE (global state)
        if not (___default_dtype() is ___float32): return False
        # TENSOR_MATCH L['x']  [float32[5, 5, 5] cpu requires_grad=False]
        if not (___check_tensor(L['x'], ___tensors[0])): return False
        # TYPE_MATCH L['mod']  [A]
        if not (___check_type_id(L['mod'], 9470...)): return False
        ...
        return True

The kinds, one builder method each (a table, not an if-chain):

=================  ==========================================================================
TYPE_MATCH         ``type(v) is T`` (by id)
ID_MATCH           ``v is obj`` (functions, classes, mtc objects, modules of Python)
CONSTANT_MATCH     ``v == c`` with the same type (``is`` for None/bools) — EQUALS_MATCH in torch
TENSOR_MATCH       class, dtype, device, requires_grad, sizes and strides
LIST_LENGTH        ``len(v) == n``
DICT_KEYS          ``list(v.keys()) == [...]`` (order matters, as in Python)
DICT_LENGTH        ``len(v) == n`` (a module's hook dicts stay empty)
HASATTR            ``hasattr(obj, name)`` is what it was (``getattr`` with a default, ``hasattr``)
DUPLICATE_INPUT    ``v is w``: one tensor reached through two sources (one graph input)
NO_TENSOR_ALIAS..  the distinct input tensors are still distinct objects
NO_ALIASING        the distinct lists/dicts/objects a side effect assumed are still distinct
BUILTIN_NOT_SH..   a builtin read via a global name is not shadowed by a global of that name
GRAD_MODE          grad mode is what it was while tracing
DEFAULT_DTYPE      ``mtc.get_default_dtype()`` is what it was (factories like ``mtc.zeros``)
=================  ==========================================================================

When no entry's guard passes, ``failure_reason`` names the first failing guard, in words:
``tensor 'x' size mismatch at index 0. expected 10, actual 8``.
"""

from __future__ import annotations

import cmath
import math
import types
from dataclasses import dataclass, field

from .. import _dtype
from .._dispatch import state as _dispatch_state
from .._tensor import Tensor
from .source import rebuilt_iterator_getitem


@dataclass
class Guard:
    kind: str
    source_name: str  # "" for global-state guards
    code: str  # a Python expression over L (locals) and G (globals)
    value_repr: str = ""

    def __str__(self) -> str:
        return f"{self.kind}: {self.code}"


@dataclass
class TensorSpec:
    cls: type
    np_dtype: object
    dtype: object
    device: object
    requires_grad: bool
    shape: tuple  # None at a dynamic dimension (its size is guarded by SHAPE_ENV)
    strides: tuple | None  # in bytes, as numpy reports them; None: only contiguity is pinned
    contiguous: bool = True


def tensor_spec(t: Tensor, dynamic_dims=()) -> TensorSpec:
    shape = tuple(None if d in dynamic_dims else s for d, s in enumerate(t._data.shape))
    strides = None if dynamic_dims else tuple(t._data.strides)
    return TensorSpec(type(t), t._data.dtype, t.dtype, t._device, bool(t.requires_grad),
                      shape, strides, bool(t._data.flags.c_contiguous))


def check_tensor(v, spec: TensorSpec) -> bool:
    """TENSOR_MATCH, written for speed: it runs on every call of a compiled function."""
    if type(v) is not spec.cls:
        return False
    d = v._data
    dev = v._device
    if (d.dtype != spec.np_dtype
            or v._requires_grad is not spec.requires_grad
            or (dev is not spec.device and dev != spec.device)):
        return False
    if spec.strides is not None:
        return d.shape == spec.shape and d.strides == spec.strides
    shape = d.shape  # dynamic: static dims exact, contiguity as traced
    if len(shape) != len(spec.shape):
        return False
    for i, s in enumerate(spec.shape):
        if s is not None and shape[i] != s:
            return False
    return d.flags.c_contiguous == spec.contiguous


def tensor_mismatch(name: str, v, spec: TensorSpec) -> str:
    """torch's TENSOR_MATCH failure wording."""
    if not isinstance(v, Tensor):
        return f"'{name}' is not a tensor (got {type(v).__name__})"
    if type(v) is not spec.cls:
        return f"tensor '{name}' type mismatch. expected {spec.cls.__name__}, actual " \
               f"{type(v).__name__}"
    if v.dtype is not spec.dtype:
        return f"tensor '{name}' dtype mismatch. expected {spec.dtype.name}, actual " \
               f"{v.dtype.name}"
    if v._device != spec.device:
        return f"tensor '{name}' device mismatch. expected {spec.device}, actual {v._device}"
    if bool(v.requires_grad) != spec.requires_grad:
        return f"tensor '{name}' requires_grad mismatch. expected requires_grad=" \
               f"{int(spec.requires_grad)}"
    if v.ndim != len(spec.shape):
        return f"tensor '{name}' rank mismatch. expected {len(spec.shape)}, actual {v.ndim}"
    for i, (e, a) in enumerate(zip(spec.shape, v._data.shape)):
        if e is not None and e != a:
            return f"tensor '{name}' size mismatch at index {i}. expected {e}, actual {a}"
    if spec.strides is None:
        return f"tensor '{name}' contiguity mismatch. expected contiguous=" \
               f"{spec.contiguous}"
    for i, (e, a) in enumerate(zip(spec.strides, v._data.strides)):
        if e != a:
            isz = v._data.itemsize
            return f"tensor '{name}' stride mismatch at index {i}. expected {e // isz}, " \
                   f"actual {a // isz}"
    return f"tensor '{name}' mismatch"


def _short(source_name: str) -> str:
    """``L['x']`` -> ``x`` for messages about plain locals."""
    if source_name.startswith("L['") and source_name.endswith("']") and \
            source_name.count("[") == 1:
        return source_name[3:-2]
    return source_name


class GuardSet:
    """Collects guards during tracing (deduplicated) and builds the guard function."""

    def __init__(self):
        self.guards: list[Guard] = []
        self._seen: set = set()
        self.tensor_specs: list[TensorSpec] = []
        self.tensor_sources: list[str] = []  # of the distinct input tensors
        self.ids: dict[str, object] = {}  # keeps guarded objects alive (ids stay valid)

    def add(self, kind: str, source, value=None) -> None:
        name = source.name() if source is not None else ""
        key = (kind, name)
        if key in self._seen:
            return
        self._seen.add(key)
        for g in getattr(self, f"_build_{kind}")(name, value):
            self.guards.append(g)

    # ---------------------------------------------------------------- builders, one per kind
    def _keep(self, value) -> int:
        self.ids[f"___obj_{id(value)}"] = value
        return id(value)

    def _build_TYPE_MATCH(self, name, value):
        self._keep(type(value))
        yield Guard("TYPE_MATCH", name, f"___check_type_id({name}, {id(type(value))})",
                    type(value).__name__)

    def _build_ID_MATCH(self, name, value):
        yield Guard("ID_MATCH", name, f"___check_obj_id({name}, {self._keep(value)})",
                    _label(value))

    def _literal(self, value) -> str:
        """``value`` as guard source: its repr when that evaluates back to it, else a name in
        the guard's namespace (``mtc.float64``, ``device(type='cpu')``, ``inf`` do not)."""
        return repr(value) if _is_literal(value) else f"___obj_{self._keep(value)}"

    def _build_CONSTANT_MATCH(self, name, value):
        if value is None or isinstance(value, bool):
            yield Guard("CONSTANT_MATCH", name, f"{name} is {value!r}")
            return
        self._keep(type(value))
        same = f"{name} != {name}" if isinstance(value, float) and math.isnan(value) else \
            f"{name} == {self._literal(value)}"  # NaN is the one value unequal to itself
        yield Guard("CONSTANT_MATCH", name, f"___check_type_id({name}, {id(type(value))}) "
                                            f"and {same}", repr(value))

    def _build_TENSOR_MATCH(self, name, value):
        value, dynamic_dims, sizes = value if isinstance(value, tuple) else (value, (), None)
        self.tensor_sources.append(name)
        self.tensor_specs.append(tensor_spec(value, dynamic_dims))
        i = len(self.tensor_specs) - 1
        s = self.tensor_specs[i]
        shown = list(sizes) if sizes is not None else list(s.shape)
        yield Guard("TENSOR_MATCH", name, f"___check_tensor({name}, ___tensors[{i}])",
                    f"{s.dtype.name}{shown} {s.device} requires_grad={s.requires_grad}")

    def _build_SHAPE_ENV(self, name, value):
        for code, text in value.guard_code():
            yield Guard("SHAPE_ENV", "", code, text)

    def _build_SYMBOLIC_SCALARS(self, name, value):
        scalar_env, shape_env = value
        for code, text in scalar_env.guard_code(shape_env):
            yield Guard("SHAPE_ENV", "", code, text)

    def _build_LIST_LENGTH(self, name, value):
        yield Guard("LIST_LENGTH", name, f"len({name}) == {len(value)}")

    def _build_TUPLE_ITERATOR_LEN(self, name, value):
        yield Guard("TUPLE_ITERATOR_LEN", name, f"{name}.__length_hint__() == {len(value)}")

    def _build_DICT_LENGTH(self, name, value):
        yield Guard("DICT_LENGTH", name, f"len({name}) == {len(value)}")

    def _build_SET_CONTENTS(self, name, value):
        yield Guard("SET_CONTENTS", name, f"{name} == {self._literal(set(value))}",
                    f"{len(value)} items")

    def _build_DICT_KEYS(self, name, value):
        yield Guard("DICT_KEYS", name, f"list({name}.keys()) == {self._literal(list(value))}")

    def _build_DUPLICATE_INPUT(self, name, value):
        yield Guard("DUPLICATE_INPUT", name, f"{name} is {value.name()}")

    def _build_NO_TENSOR_ALIASING(self, name, value):
        yield Guard("NO_TENSOR_ALIASING", "", f"___no_aliasing({', '.join(value)})")

    def _build_NO_ALIASING(self, name, value):
        yield Guard("NO_ALIASING", "", f"___no_aliasing({', '.join(value)})")

    def _build_HASATTR(self, name, value):
        base, member = name.rsplit(".", 1)  # L['obj'].k -> L['obj'], 'k'
        yield Guard("HASATTR", name, f"hasattr({base}, {member!r}) is {value!r}")

    def _build_BUILTIN_NOT_SHADOWED(self, name, value):
        var = name[3:-2]  # G['len'] -> len
        yield Guard("BUILTIN_NOT_SHADOWED", name, f"{var!r} not in G")

    def _build_GRAD_MODE(self, name, value):
        yield Guard("GRAD_MODE", "", f"___grad_enabled() is {value!r}")

    def _build_DEFAULT_DTYPE(self, name, value):
        self.ids[f"___{value.name}"] = value
        yield Guard("DEFAULT_DTYPE", "", f"___default_dtype() is ___{value.name}")

    # ---------------------------------------------------------------- the function
    def source(self) -> str:
        lines = ["def guard(L):"]
        for g in self.guards:
            lines.append(f"    # {g.kind} {g.source_name or '(global state)'}"
                         + (f"  [{g.value_repr}]" if g.value_repr else ""))
            lines.append(f"    if not ({g.code}): return False")
        lines.append("    return True")
        return "\n".join(lines)

    def build(self, f_globals: dict) -> GuardFunction:
        if len(self.tensor_sources) > 1:  # once every input tensor is known
            self.add("NO_TENSOR_ALIASING", None, value=list(self.tensor_sources))
        return GuardFunction(self, f_globals)


def _label(value) -> str:
    """What a guard's comment calls an object: a module by its name (not its file), a function
    or class by its qualified name, anything else by a repr short enough to read whole."""
    if isinstance(value, types.ModuleType):
        return f"module {value.__name__}"
    qualname = getattr(value, "__qualname__", None)
    if isinstance(qualname, str):
        return qualname
    text = repr(value)
    return text if len(text) <= 60 and "\n" not in text else f"{type(value).__name__} object"


def _is_literal(value) -> bool:
    """Does ``repr(value)`` evaluate back to an equal value inside a guard?  (Not for a
    subclass: an ``IntEnum`` member reprs as ``<Level.HIGH: 3>``.)"""
    if type(value) in (float, complex):
        return cmath.isfinite(value)
    if type(value) in (tuple, list):  # not a subclass: mtc.Size([2]) is no guard source
        return all(_is_literal(v) for v in value)
    if isinstance(value, slice):
        return all(_is_literal(v) for v in (value.start, value.stop, value.step))
    return value is None or value is Ellipsis or type(value) in (int, bool, str, bytes, range)


def _check_type_id(v, tid) -> bool:
    return id(type(v)) == tid


def _check_obj_id(v, oid) -> bool:
    return id(v) == oid


def _no_aliasing(*tensors) -> bool:
    return len({id(t) for t in tensors}) == len(tensors)


def _grad_enabled() -> bool:
    return _dispatch_state.grad_enabled


@dataclass
class GuardFunction:
    guard_set: GuardSet
    f_globals: dict
    src: str = ""
    fn: object = None
    parts: list = field(default_factory=list)

    def __post_init__(self):
        from .variables.numpy import ndarray_as_tensor

        gs = self.guard_set
        self.src = gs.source()
        ns = {"___check_type_id": _check_type_id, "___check_obj_id": _check_obj_id,
              "___check_tensor": check_tensor, "___tensors": gs.tensor_specs,
              "___no_aliasing": _no_aliasing, "___grad_enabled": _grad_enabled,
              "___default_dtype": _dtype.get_default_dtype, "G": self.f_globals,
              "___rebuilt_iterator_getitem": rebuilt_iterator_getitem,
              "___ndarray_as_tensor": ndarray_as_tensor, **gs.ids}
        exec(compile(self.src, "<guard>", "exec"), ns)
        self.fn = ns["guard"]
        self._ns = ns

    def __call__(self, L: dict) -> bool:
        try:
            return self.fn(L)
        except Exception:  # a guard that cannot even be evaluated fails
            return False

    def failure_reason(self, L: dict) -> str:
        """The first failing guard, in words."""
        for g in self.guard_set.guards:
            try:
                ok = eval(g.code, self._ns, {"L": L})
            except Exception as e:
                return f"{g.code} raised {type(e).__name__}: {e}"
            if not ok:
                if g.kind == "TENSOR_MATCH":
                    idx = int(g.code.rsplit("[", 1)[1].rstrip("])"))
                    value = eval(g.source_name, self._ns, {"L": L})
                    return tensor_mismatch(_short(g.source_name), value,
                                           self.guard_set.tensor_specs[idx])
                return g.code
        return "(all guards pass)"
