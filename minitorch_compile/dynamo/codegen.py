"""``PyCodegen``: emit CPython bytecode with the ``bytecode`` library
(``torch/_dynamo/codegen.py``).

The transformed code of a cache entry is built instruction by instruction:

1. load every graph input from its source (``LOAD_FAST inputs; LOAD_CONST 'x'; BINARY_SUBSCR``)
   and call the compiled graph, stored as a global ``__compiled_fn_N`` in the frame's module;
2. store the graph's output tuple in a local;
3. rebuild the value the frame returns — constants, containers, graph outputs
   (``graph_out[i]``), values reloaded from their sources — and ``RETURN_VALUE``.

Calls use CPython 3.11's convention: ``PUSH_NULL`` (or ``LOAD_GLOBAL`` with its NULL bit),
the callable, the arguments, ``PRECALL n``, ``CALL n``.  Version differences live in
``_call_instrs`` only.
"""

from __future__ import annotations

import sys

from bytecode import Instr

from .exc import unimplemented

GRAPH_OUT = "___graph_out"


class PyCodegen:
    def __init__(self, tx=None, output=None):
        self.tx = tx
        self.output = output
        self.instructions: list = []
        self.graph_output_index: dict[int, int] = {}  # id(node) -> index in graph outputs

    def append(self, *instrs) -> None:
        self.instructions.extend(instrs)

    # ---------------------------------------------------------------- loads
    def load_const(self, value) -> None:
        self.append(Instr("LOAD_CONST", value))

    def load_local(self, name: str) -> None:
        self.append(Instr("LOAD_FAST", name))

    def store_local(self, name: str) -> None:
        self.append(Instr("STORE_FAST", name))

    def load_deref(self, name: str) -> None:
        from bytecode import FreeVar

        self.append(Instr("LOAD_DEREF", FreeVar(name)))

    def load_global(self, name: str, push_null: bool = False) -> None:
        self.append(Instr("LOAD_GLOBAL", (push_null, name)))

    def load_global_object(self, name: str, value, push_null: bool = True) -> None:
        """Load ``value`` through a global installed in the frame's module (with a NULL below
        it, ready to be called, unless ``push_null=False``)."""
        if self.output is None:
            unimplemented("no output graph to install a global")
        self.output.globals_to_install[name] = value
        self.load_global(name, push_null=push_null)

    def load_attr(self, name: str) -> None:
        self.append(Instr("LOAD_ATTR", name))

    def binary_subscr(self) -> None:
        self.append(Instr("BINARY_SUBSCR"))

    # ---------------------------------------------------------------- building
    def build(self, cls: type, n: int) -> None:
        if cls is tuple:
            self.append(Instr("BUILD_TUPLE", n))
        elif cls is list:
            self.append(Instr("BUILD_LIST", n))
        elif cls is dict:
            self.append(Instr("BUILD_MAP", n))
        else:
            unimplemented(f"cannot build a {cls.__name__} in bytecode")

    def call(self, n: int) -> None:
        """Call the callable below ``n`` arguments (pushed after a NULL)."""
        self.append(*_call_instrs(n))

    def reconstruct(self, vt) -> None:
        vt.reconstruct(self)

    def reconstruct_tensor(self, vt) -> None:
        idx = self.graph_output_index.get(id(vt.proxy))
        if idx is not None:
            self.load_local(GRAPH_OUT)
            self.load_const(idx)
            self.binary_subscr()
        elif vt.source is not None:
            vt.source.reconstruct(self)
        else:
            unimplemented("a tensor with neither a graph output nor a source")

    def call_compiled_graph(self, fn_name: str, input_sources: list) -> None:
        self.load_global(fn_name, push_null=True)
        for src in input_sources:
            src.reconstruct(self)
        self.call(len(input_sources))
        self.store_local(GRAPH_OUT)


def _call_instrs(n: int) -> list:
    if sys.version_info[:2] == (3, 11):
        return [Instr("PRECALL", n), Instr("CALL", n)]
    return [Instr("CALL", n)]
