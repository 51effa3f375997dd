"""Generate ``_generated_registrations.py`` from ``npu_native_functions.yaml``.

Teaches torch_npu's codegen (``torchnpugen/gen_backend_stubs.py``): a YAML op list becomes the
registration code of all three paths by which a device plugs into the dispatcher::

    supported:  - category: pointwise   ->  Library("aten", "IMPL").impl(op, npu_kernel(op),
                                                                          "PrivateUse1")
    custom:     - func: <schema>        ->  Library("npu", "DEF").define(<schema>)
                                            .impl(<name>, native.<name>, "PrivateUse1")
    derivatives: - name: <schema>       ->  register_autograd("npu::<name>", backward, ...)
                   self: <formula>
    python_api: - <name>                ->  mtc.npu.<name> = mtc.ops.npu.<name>

Run ``python -m minitorch_compile.npu.codegen`` after editing the YAML (``--check`` only
compares); ``tests/test_npu_registration.py`` fails when the checked-in file is stale.

The YAML is read by a small reader for the subset the file uses (top-level keys holding a
scalar or a list of scalars / one-level mappings), so the package needs no YAML library.
Derivative formulas are parsed as Python expressions and may only name ``grad``, the op's
arguments and ``npu::`` ops: nothing from the file reaches the generated source unchecked.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

from ..ops.schema import parse_schema

HERE = Path(__file__).parent
YAML_PATH = HERE / "npu_native_functions.yaml"
OUT_PATH = HERE / "_generated_registrations.py"
CATEGORIES = ("pointwise", "reduction", "matmul", "indexing", "creation", "random", "view")


# --------------------------------------------------------------------------- YAML subset


def read_yaml(text: str) -> dict:
    """``key: value`` / ``key:`` + ``- item`` / ``- k: v`` (+ indented ``k: v``) lines."""
    out: dict = {}
    key = None
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.split(" #")[0].rstrip() if not raw.lstrip().startswith("#") else ""
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip())
        body = line.strip()
        if indent == 0:
            key, _, value = body.partition(":")
            out[key] = value.strip() if value.strip() else []
        elif body.startswith("- "):
            item = body[2:].strip()
            k, sep, v = item.partition(": ")
            out[key].append({k: v.strip()} if sep and "(" not in k else item)
        elif ": " in body and out.get(key) and isinstance(out[key][-1], dict):
            k, _, v = body.partition(": ")
            out[key][-1][k] = v.strip()
        else:
            raise ValueError(f"npu_native_functions.yaml:{lineno}: cannot read {raw!r}")
    return out


# --------------------------------------------------------------------------- generation


def _supported(entries) -> list[str]:
    lines = ['aten_npu = Library("aten", "IMPL", "PrivateUse1")']
    for e in entries:
        if isinstance(e, dict):
            cat = e["category"]
            if cat not in CATEGORIES:
                raise ValueError(f"supported: unknown category {cat!r}; one of {CATEGORIES}")
            lines.append(f"for op in table_overloads({cat!r}):  # every {cat} op of the table")
            lines.append('    aten_npu.impl(op, npu_kernel(op), "PrivateUse1")')
        else:
            name = parse_schema(f"{e}() -> ()").qualified_name  # a valid op name, nothing else
            lines.append(f'aten_npu.impl({name!r}, npu_kernel(find_overload("aten::{name}")), '
                         '"PrivateUse1")')
    return lines


def _custom(entries) -> list[str]:
    lines = ['npu_lib = Library("npu", "DEF")']
    for e in entries:
        schema = parse_schema(e["func"])
        lines.append(f"npu_lib.define({str(schema)!r})")
        lines.append(f'npu_lib.impl({schema.name!r}, native.{schema.name}, "PrivateUse1")')
        if e.get("autograd") == "passthrough":  # non-differentiable: no graph node
            lines.append(f'npu_lib.impl({schema.name!r}, native.{schema.name}, "Autograd")')
    return lines


class _Rewrite(ast.NodeTransformer):
    def __init__(self, allowed: set, ops: set):
        self.allowed, self.ops = allowed, ops

    def visit_Call(self, node):  # noqa: N802
        self.generic_visit(node)
        if not (isinstance(node.func, ast.Name) and node.func.id in self.ops):
            raise ValueError(f"derivative formula calls {ast.unparse(node.func)!r}; only npu:: "
                             f"ops may be called ({sorted(self.ops)})")
        node.func = ast.parse(f"ops.npu.{node.func.id}", mode="eval").body
        return node

    def visit_Name(self, node):  # noqa: N802
        if node.id not in self.allowed and node.id not in self.ops:
            raise ValueError(f"derivative formula names {node.id!r}; allowed: grad and the "
                             f"op's arguments {sorted(self.allowed - {'grad'})}")
        return node

    def generic_visit(self, node):
        if not isinstance(node, (ast.Expression, ast.Call, ast.Name, ast.Load, ast.Constant,
                                 ast.BinOp, ast.UnaryOp, ast.operator, ast.unaryop)):
            raise ValueError(f"derivative formula uses {type(node).__name__}, which is not "
                             "allowed")
        return super().generic_visit(node)


def _derivatives(entries, custom_names: set) -> list[str]:
    lines = []
    for e in entries:
        schema = parse_schema(e["name"])
        args = [a.name for a in schema.arguments]
        tensors = [a.name for a in schema.arguments if a.type.is_tensor]
        grads = []
        for a in args:
            if a in e:
                tree = ast.parse(e[a], mode="eval")
                tree = _Rewrite(set(args) | {"grad"}, custom_names).visit(tree)
                grads.append(ast.unparse(tree))
            else:
                grads.append("None")
        n = schema.name
        used = {node.id for g in grads for node in ast.walk(ast.parse(g, mode="eval"))
                if isinstance(node, ast.Name)}
        saved = [t for t in tensors if t in used]
        others = [a for a in args if a not in tensors and a in used]
        lines += ["", "", f"def _setup_{n}(ctx, inputs, output):"]
        if saved:
            picks = ", ".join(f"inputs[{args.index(t)}]" for t in saved)
            lines.append(f"    ctx.save_for_backward({picks})")
        lines += [f"    ctx.{a} = inputs[{args.index(a)}]" for a in others]
        if not saved and not others:
            lines.append("    pass  # the formula needs nothing but grad")
        lines += ["", "", f"def _backward_{n}(ctx, grad):"]
        if saved:
            names = ", ".join(saved) + ("," if len(saved) == 1 else "")
            lines.append(f"    {names} = ctx.saved_tensors")
        lines += [f"    {a} = ctx.{a}" for a in others]
        lines += [f"    return {', '.join(grads)}"]
        lines += ["", "", f'register_autograd("npu::{n}", _backward_{n}, setup_context=_setup_{n})']
    return lines


HEADER = '''\
"""@generated by ``python -m minitorch_compile.npu.codegen`` from npu_native_functions.yaml.

Do not edit: change the YAML and regenerate.  The three registration paths of torch_npu:

1. ``supported:``   TORCH_LIBRARY_IMPL(aten, PrivateUse1, m): an NPU kernel per existing op
2. ``custom:``      TORCH_LIBRARY(npu, m): new ops by schema, called as mtc.ops.npu.<name>
3. ``python_api:``  torch_npu.<name> = torch.ops.npu.<name>
"""
# ruff: noqa: E501

import sys

from ..library import Library, register_autograd
from ..ops import find_overload, ops  # noqa: F401 - find_overload serves named entries
from . import native_functions as native
from .eager import npu_kernel, table_overloads
'''


def generate(yaml_text: str) -> str:
    y = read_yaml(yaml_text)
    if y.get("backend") != "NPU":
        raise ValueError("npu_native_functions.yaml: backend must be NPU")
    custom_names = {parse_schema(e["func"]).name for e in y.get("custom", [])}
    parts = [HEADER, "# --- 1. supported: aten ops get a PrivateUse1 (NPU) kernel",
             *_supported(y.get("supported", [])), "",
             "# --- 2. custom: ops defined by schema in the npu namespace",
             *_custom(y.get("custom", []))]
    parts += _derivatives(y.get("derivatives", []), custom_names)
    parts += ["", "", "# --- 3. python_api: redirection onto the device module",
              "_npu_module = sys.modules[__package__]"]
    for name in y.get("python_api", []):
        if name not in custom_names:
            raise ValueError(f"python_api: {name!r} is not a custom op")
        parts.append(f"_npu_module.{name} = ops.npu.{name}")
    return "\n".join(parts) + "\n"


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    text = generate(YAML_PATH.read_text())
    if "--check" in argv:
        current = OUT_PATH.read_text() if OUT_PATH.exists() else ""
        if current != text:
            print(f"{OUT_PATH} is stale: run python -m minitorch_compile.npu.codegen")
            return 1
        print(f"{OUT_PATH.name} is current")
        return 0
    OUT_PATH.write_text(text)
    print(f"wrote {OUT_PATH}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
