"""Operator schemas: ``"add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"``.

Mirrors ``torchgen/model.py`` (``FunctionSchema``) and the schema language of
``native_functions.yaml``.  Grammar (a subset of aten's)::

    schema    := name ['.' overload] '(' [arg {',' arg}] ')' '->' returns
    arg       := '*' | type name ['=' default]        # '*' starts keyword-only arguments
    type      := base ['(' alias ['!'] ')'] ['[' [N] ']'] ['?']
    returns   := ret | '(' [ret {',' ret}] ')'
    ret       := type [name]

``Tensor(a!)`` marks an argument the op writes to (in-place ops), ``Tensor(a)`` an output that
aliases an input (views).  A schema also generates the *binder*: a real Python function with
the schema's signature that turns any call (positional or keyword) into the positional tuple
every kernel receives, so ``add(x, other=y)`` and ``add(x, y)`` reach kernels identically.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

_TYPE_RE = re.compile(
    r"^(?P<base>\w+)(?:\((?P<alias>\w+)(?P<write>!)?\))?(?P<eopt>\?)?(?P<list>\[\d*\])?"
    r"(?P<opt>\?)?$")


@dataclass(frozen=True)
class Type:
    base: str  # Tensor, int, SymInt, float, Scalar, bool, str, ScalarType, Device, Generator
    is_list: bool = False
    optional: bool = False
    alias: str | None = None
    is_write: bool = False
    elem_optional: bool = False  # ``Tensor?[]``: a list whose entries may be None

    @property
    def is_tensor(self) -> bool:
        return self.base == "Tensor" and not self.is_list

    @property
    def is_tensor_list(self) -> bool:
        return self.base == "Tensor" and self.is_list

    def __str__(self) -> str:
        s = self.base
        if self.alias:
            s += f"({self.alias}{'!' if self.is_write else ''})"
        if self.elem_optional:
            s += "?"
        if self.is_list:
            s += "[]"
        if self.optional:
            s += "?"
        return s


_NO_DEFAULT = object()


@dataclass(frozen=True)
class Argument:
    name: str
    type: Type
    default: object = _NO_DEFAULT
    kwarg_only: bool = False

    @property
    def has_default(self) -> bool:
        return self.default is not _NO_DEFAULT

    def __str__(self) -> str:
        s = f"{self.type} {self.name}"
        if self.has_default:
            d = self.default
            s += "=" + (str(list(d)).replace(" ", "") if isinstance(d, tuple) else repr(d))
        return s


@dataclass(frozen=True)
class Return:
    type: Type
    name: str | None = None


@dataclass
class FunctionSchema:
    name: str
    overload_name: str
    arguments: tuple[Argument, ...]
    returns: tuple[Return, ...]
    tensor_arg_indices: tuple[int, ...] = field(init=False)
    tensor_list_arg_indices: tuple[int, ...] = field(init=False)
    # does any argument carry a write annotation (``Tensor(a!)``): computed once, since
    # dispatch tests it on every op call (an inference tensor written outside inference mode)
    is_mutable: bool = field(init=False)

    def __post_init__(self):
        self.is_mutable = any(a.type.is_write for a in self.arguments)
        self.tensor_arg_indices = tuple(
            i for i, a in enumerate(self.arguments) if a.type.is_tensor)
        self.tensor_list_arg_indices = tuple(
            i for i, a in enumerate(self.arguments) if a.type.is_tensor_list)

    @property
    def qualified_name(self) -> str:
        return f"{self.name}.{self.overload_name}" if self.overload_name else self.name

    @property
    def is_view(self) -> bool:
        return any(r.type.alias and not r.type.is_write for r in self.returns)

    @property
    def arg_names(self) -> tuple[str, ...]:
        return tuple(a.name for a in self.arguments)

    def __str__(self) -> str:
        parts, star = [], False
        for a in self.arguments:
            if a.kwarg_only and not star:
                parts.append("*")
                star = True
            parts.append(str(a))
        rets = [f"{r.type}{' ' + r.name if r.name else ''}" for r in self.returns]
        ret = rets[0] if len(rets) == 1 and not self.returns[0].name else f"({', '.join(rets)})"
        return f"{self.qualified_name}({', '.join(parts)}) -> {ret}"

    def python_function(self, name: str, body: str, python_names: dict | None = None,
                        namespace: dict | None = None):
        """A real Python function with this schema's signature, from generated source.

        ``body`` is one expression over ``ARGS`` — the positional tuple of every argument in
        schema order — e.g. ``"ARGS"`` (a binder) or ``"_dispatch(_op, ARGS)"``.
        ``python_names`` renames parameters for the public API (torch calls ``self``
        ``input``); ``namespace`` supplies the names ``body`` uses.
        """
        names = [(python_names or {}).get(a.name, a.name) for a in self.arguments]
        params, star, ns = [], False, dict(namespace or {})
        for a, n in zip(self.arguments, names):
            if a.kwarg_only and not star:
                params.append("*")
                star = True
            if a.has_default:
                ns[f"_d_{n}"] = a.default
                params.append(f"{n}=_d_{n}")
            else:
                params.append(n)
        args = f"({''.join(n + ', ' for n in names)})"
        src = f"def {name}({', '.join(params)}):\n    return {body.replace('ARGS', args)}\n"
        exec(compile(src, f"<schema {self.qualified_name}>", "exec"), ns)
        return ns[name]

    def make_binder(self):
        """A function with this schema's signature returning the positional argument tuple."""
        return self.python_function("bind", "ARGS")


def _split_top(s: str, sep: str = ",") -> list[str]:
    """Split on ``sep`` outside brackets."""
    out, depth, cur = [], 0, []
    for ch in s:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == sep and depth == 0:
            out.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    if "".join(cur).strip():
        out.append("".join(cur).strip())
    return out


def parse_type(s: str) -> Type:
    m = _TYPE_RE.match(s.strip())
    if not m:
        raise ValueError(f"cannot parse schema type {s!r}")
    return Type(m["base"], bool(m["list"]), bool(m["opt"]), m["alias"], bool(m["write"]),
                bool(m["eopt"]))


def _parse_default(s: str):
    s = s.strip()
    if s in ("True", "False", "None"):
        return {"True": True, "False": False, "None": None}[s]
    if s.startswith("["):
        return tuple(ast.literal_eval(s))
    return ast.literal_eval(s)


def parse_schema(text: str) -> FunctionSchema:
    m = re.match(r"^\s*([\w]+)(?:\.(\w+))?\((.*)\)\s*->\s*(.+?)\s*$", text)
    if not m:
        raise ValueError(f"cannot parse schema {text!r}")
    name, overload, args_s, ret_s = m.groups()
    arguments, kwarg_only = [], False
    for a in _split_top(args_s):
        if a == "*":
            kwarg_only = True
            continue
        decl, eq, default = a.partition("=")
        type_s, _, arg_name = decl.strip().rpartition(" ")
        arguments.append(Argument(arg_name, parse_type(type_s),
                                  _parse_default(default) if eq else _NO_DEFAULT, kwarg_only))
    ret_s = ret_s.strip()
    if ret_s.startswith("("):
        ret_parts = _split_top(ret_s[1:-1])
    else:
        ret_parts = [ret_s]
    returns = []
    for r in ret_parts:
        bits = r.split()
        returns.append(Return(parse_type(bits[0]), bits[1] if len(bits) > 1 else None))
    return FunctionSchema(name, overload or "", tuple(arguments), tuple(returns))
