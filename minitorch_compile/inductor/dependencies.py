"""Two ops handlers that *read* a loop body instead of computing it
(``torch/_inductor/dependencies.py`` and the printing handler of ``ops_handler.py``).

``extract_read_writes(node)`` runs a body with ``RecordLoadStore`` installed: every
``ops.load(name, index)`` becomes a ``MemoryDep(name, index)`` read, every ``ops.store`` a
write.  The scheduler decides fusion from these: a consumer whose read of a buffer has the same
index expression as the producer's write can take the value from the producer's tile.

``PrintHandler`` turns the same calls into numbered lines, so a body prints as::

    tmp0 = ops.load(arg0_1, 4*i0 + i1)
    tmp1 = ops.cos(tmp0)
    return tmp1

Indirect indexing (``x[idx]``, ``gather``, ``embedding``): ``ops.indirect_indexing(value, size,
wrap_neg, check)`` turns a loaded index *value* into an index *variable* ``indirect0`` that
later load indices use (``ops.load(arg0_1, 16*indirect0 + i1)``) — an index that is not an
affine function of the loop variables, so no consumer of such a read fuses with the buffer's
producer (``index mismatch``).  ``ops.index_expr(index, dtype)`` is the opposite: an index
expression as a value (``select_scatter``'s ``i1 == 3``); its expressions are recorded too,
since the code generator must not merge loop dims they tell apart.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .ir import Affine
from .virtualized import V


@dataclass(frozen=True)
class MemoryDep:
    name: str
    index: Affine

    def __repr__(self) -> str:
        return f"MemoryDep({self.name!r}, {self.index})"


@dataclass
class ReadWrites:
    reads: set = field(default_factory=set)
    writes: set = field(default_factory=set)
    op_counts: dict = field(default_factory=dict)
    index_exprs: set = field(default_factory=set)  # the Affines of ``ops.index_expr``

    @property
    def read_names(self) -> set:
        return {d.name for d in self.reads}


class RecordLoadStore:
    """Records reads/writes; values are opaque placeholders."""

    def __init__(self):
        self.rw = ReadWrites()

    def load(self, name, index):
        self.rw.reads.add(MemoryDep(name, index))
        return "value"

    def store(self, name, index, value, mode=None):
        self.rw.writes.add(MemoryDep(name, index))
        return None

    def indirect_indexing(self, value, size, wrap_neg=True, check="index", dim=0):
        self.rw.op_counts["indirect_indexing"] = self.rw.op_counts.get(
            "indirect_indexing", 0) + 1
        return Affine.var(f"indirect{self.rw.op_counts['indirect_indexing'] - 1}")

    def index_expr(self, index, dtype):
        self.rw.index_exprs.add(index)
        return "value"

    def __getattr__(self, name):
        counts = self.rw.op_counts

        def op(*args, **kwargs):
            counts[name] = counts.get(name, 0) + 1
            return "value"
        return op


def extract_read_writes(loops, index=None, rindex=None) -> ReadWrites:
    """Reads (and op counts) of a ``Pointwise``/``Reduction`` body, in its own variables."""
    from .ir import Reduction

    h = RecordLoadStore()
    with V.set_ops_handler(h):
        idx = index if index is not None else loops.index_vars()
        if isinstance(loops, Reduction):
            r = rindex if rindex is not None else [
                Affine.var(f"r{k}") for k in range(len(loops.reduction_ranges))]
            loops.inner_fn(idx, r)
        else:
            loops.inner_fn(idx)
            if getattr(loops, "output_indexer", None) is not None:  # a Scatter's index reads
                loops.output_indexer(idx)
    return h.rw


def repr_arg(a) -> str:
    """tmp names as themselves, Python constants as literals."""
    return a if isinstance(a, str) and a.startswith("tmp") else repr(a)


class PrintHandler:
    """Turns ``ops.*`` calls into numbered text lines (the IR printer)."""

    def __init__(self):
        self.lines: list = []
        self._cache: dict = {}
        self._indirect = 0
        self._tmps = 0

    def _emit(self, text: str) -> str:
        hit = self._cache.get(text)
        if hit is not None:
            return hit
        name = f"tmp{self._tmps}"
        self._tmps += 1
        self.lines.append(f"{name} = {text}")
        self._cache[text] = name
        return name

    def load(self, name, index):
        return self._emit(f"ops.load({name}, {index})")

    def store(self, name, index, value, mode=None):
        extra = f", mode={mode!r}" if mode else ""
        self.lines.append(f"ops.store({name}, {index}, {value}{extra})")

    def constant(self, value, dtype):
        return self._emit(f"ops.constant({value!r}, {dtype})")

    def to_dtype(self, x, dtype):
        return self._emit(f"ops.to_dtype({x}, {dtype})")

    def reduction(self, dtype, src_dtype, reduction_type, value):
        return self._emit(f"ops.reduction({dtype}, {reduction_type!r}, {value})")

    def kernel(self, op, dtype, *args):
        return self._emit(f"ops.kernel({op}, {', '.join(map(repr_arg, args))})")

    def indirect_indexing(self, value, size, wrap_neg=True, check="index", dim=0):
        """``indirect0 = ops.indirect_indexing(tmp0, 64, ...)``: the variable, not a tmp."""
        text = (f"ops.indirect_indexing({value}, {size}, wrap_neg={wrap_neg}, "
                f"check={check!r})")
        hit = self._cache.get(text)
        if hit is None:
            hit = self._cache[text] = f"indirect{self._indirect}"
            self._indirect += 1
            self.lines.append(f"{hit} = {text}")
        return Affine.var(hit)

    def index_expr(self, index, dtype):
        return self._emit(f"ops.index_expr({index}, {dtype})")

    def __getattr__(self, name):
        def op(*args):
            return self._emit(f"ops.{name}({', '.join(map(repr_arg, args))})")
        return op

    def render(self, result) -> str:
        return "\n".join(self.lines + ([f"return {result}"] if result is not None else []))
