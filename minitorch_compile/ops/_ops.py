"""Operator objects and the ``mtc.ops`` namespaces.

Mirrors ``torch/_ops.py``: ``mtc.ops.aten.add`` is an ``OpOverloadPacket`` (every overload of
``add``), ``mtc.ops.aten.add.Tensor`` an ``OpOverload`` (one schema, one kernel table).  Calling
a packet picks the first overload whose schema accepts the arguments.  Namespaces are created on
first use, so ``Library("custom", "DEF")`` makes ``mtc.ops.custom.<name>`` appear.
"""

from __future__ import annotations

from numbers import Number

from .._dispatch import DispatchKey, dispatch
from .schema import FunctionSchema, parse_schema


class OpOverload:
    """One operator overload: a schema plus a kernel per dispatch key."""

    def __init__(self, namespace: str, schema: FunctionSchema, opdef=None):
        self.namespace = namespace
        self.schema = schema
        self.name = schema.name
        self.overload_name = schema.overload_name or "default"
        self.opdef = opdef  # the op-table declaration (None for ops defined through a Library)
        self.kernels: dict[DispatchKey, object] = {}
        self.composite = None  # the CompositeImplicitAutograd kernel (a decomposition)
        self._bind = schema.make_binder()
        self.device_arg_index = next(
            (i for i, a in enumerate(schema.arguments) if a.name == "device"), None)
        self.packet: OpOverloadPacket | None = None
        self._n_positional = sum(1 for a in schema.arguments if not a.kwarg_only)

    def split_args(self, args: tuple) -> tuple[tuple, dict]:
        """Positional tuple -> torch's ``(args, kwargs)``: keyword-only arguments go to kwargs,
        and arguments equal to their default are left out (trailing positional ones too)."""
        arguments = self.schema.arguments
        n = self._n_positional
        while n and _is_default(arguments[n - 1], args[n - 1]):
            n -= 1
        kwargs = {a.name: v for a, v in zip(arguments[self._n_positional:],
                                            args[self._n_positional:])
                  if not _is_default(a, v)}
        return tuple(args[:n]), kwargs

    def __call__(self, *args, **kwargs):
        return dispatch(self, self._bind(*args, **kwargs))

    def bind(self, *args, **kwargs) -> tuple:
        """Normalise a call to the positional tuple kernels receive."""
        return self._bind(*args, **kwargs)

    def redispatch(self, args: tuple):
        return dispatch(self, args)

    @property
    def qualified_name(self) -> str:
        return f"{self.namespace}::{self.schema.qualified_name}"

    def __repr__(self) -> str:
        return f"{self.namespace}.{self.name}.{self.overload_name}"

    __str__ = __repr__

    def __reduce__(self):
        return (_lookup, (self.namespace, self.name, self.overload_name))


def _is_default(arg, value) -> bool:
    if not arg.has_default:
        return False
    d = arg.default
    if value is d:
        return True
    if d is None or value is None or hasattr(value, "_data"):
        return False
    if isinstance(value, list):
        value = tuple(value)
    return type(value) is type(d) and value == d


def _accepts(schema: FunctionSchema, bound: tuple) -> bool:
    """Strict type check used to choose among overloads (Tensor vs number vs list)."""
    from .._tensor import Tensor

    for a, v in zip(schema.arguments, bound):
        t = a.type
        if v is None:
            if not t.optional and not a.has_default:
                return False
            continue
        if t.is_tensor:
            if not isinstance(v, Tensor):
                return False
        elif t.base in ("Scalar", "float", "int", "SymInt", "bool") and not t.is_list:
            if not isinstance(v, Number) or isinstance(v, Tensor):
                return False
        elif t.is_list and t.base in ("int", "SymInt"):
            if not isinstance(v, (tuple, list, int)):
                return False
    return True


class OpOverloadPacket:
    """All overloads of one op name; attribute access gives an overload."""

    def __init__(self, namespace: str, name: str):
        self.namespace = namespace
        self.name = name
        self.overloads: dict[str, OpOverload] = {}

    def __getattr__(self, item: str) -> OpOverload:
        try:
            return self.__dict__["overloads"][item]
        except KeyError:
            raise AttributeError(
                f"'{self.namespace}.{self.name}' has no overload '{item}' "
                f"(has: {sorted(self.__dict__['overloads'])})") from None

    def __call__(self, *args, **kwargs):
        if len(self.overloads) == 1:
            return next(iter(self.overloads.values()))(*args, **kwargs)
        errors = []
        for ov in self.overloads.values():
            try:
                bound = ov._bind(*args, **kwargs)
            except TypeError as e:
                errors.append(f"  {ov.schema}: {e}")
                continue
            if _accepts(ov.schema, bound):
                return dispatch(ov, bound)
            errors.append(f"  {ov.schema}: argument types do not match")
        raise TypeError(f"{self.namespace}.{self.name}() received an invalid combination of "
                        f"arguments; candidates:\n" + "\n".join(errors))

    def __repr__(self) -> str:
        return f"<OpOverloadPacket(op='{self.namespace}.{self.name}')>"

    def __reduce__(self):
        return (_lookup, (self.namespace, self.name, None))


class OpNamespace:
    def __init__(self, name: str):
        self.name = name
        self.packets: dict[str, OpOverloadPacket] = {}

    def __getattr__(self, item: str) -> OpOverloadPacket:
        try:
            return self.__dict__["packets"][item]
        except KeyError:
            raise AttributeError(f"'_OpNamespace' '{self.__dict__['name']}' object has no "
                                 f"attribute '{item}'") from None

    def __iter__(self):
        return iter(self.packets.values())

    def __repr__(self) -> str:
        return f"<mtc.ops.{self.name}: {len(self.packets)} ops>"


class _Ops:
    """``mtc.ops``: namespaces by name."""

    def __init__(self):
        self._namespaces: dict[str, OpNamespace] = {}

    def __getattr__(self, name: str) -> OpNamespace:
        if name.startswith("__"):
            raise AttributeError(name)
        ns = self._namespaces.get(name)
        if ns is None:
            ns = self._namespaces[name] = OpNamespace(name)
        return ns

    def namespaces(self):
        return dict(self._namespaces)


ops = _Ops()


def register_overload(namespace: str, schema: str | FunctionSchema, opdef=None) -> OpOverload:
    """Create an overload and hang it under ``mtc.ops.<namespace>.<name>.<overload>``."""
    if isinstance(schema, str):
        schema = parse_schema(schema)
    ns = getattr(ops, namespace)
    packet = ns.packets.get(schema.name)
    if packet is None:
        packet = ns.packets[schema.name] = OpOverloadPacket(namespace, schema.name)
    ov = OpOverload(namespace, schema, opdef)
    if ov.overload_name in packet.overloads:
        raise RuntimeError(f"operator {namespace}::{schema.qualified_name} is already defined")
    ov.packet = packet
    packet.overloads[ov.overload_name] = ov
    return ov


def find_overload(qualified: str) -> OpOverload:
    """``"aten::add.Tensor"`` or ``"aten::cos"`` -> the overload (``findSchemaOrThrow``)."""
    ns, _, rest = qualified.partition("::")
    name, _, overload = rest.partition(".")
    return _lookup(ns, name, overload or "default")


def _lookup(ns: str, name: str, overload: str | None):
    packet = getattr(getattr(ops, ns), name)
    return packet if overload is None else getattr(packet, overload)


def all_overloads(namespace: str = "aten"):
    for packet in getattr(ops, namespace):
        yield from packet.overloads.values()
