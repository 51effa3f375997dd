"""Two rewrites of a CPU kernel body that make its numpy passes cheaper, not fewer (torch's
``CppVecKernel`` picks the vector form of each op for the same reason: the loop is memory- and
instruction-bound, so the form of a pass matters as much as the number of passes).

Both run on the instruction list before ``cpp_utils._finish`` (so its ``sum(a * b)`` →
``np.vecdot`` peephole still sees the product it fuses), and only on kernels of two or more
frame dims whose tiles run over the first one.

1. **Row sums by BLAS** (``row_sums_by_blas``).  ``sum(v)`` over the last dim of a float32 or
   float64 tile — softmax's denominator, layer norm's mean — is ``np.vecdot(v, ones)``: one BLAS
   dot per row, ~2.5x cheaper than ``np.add.reduce`` (measured on 64x1024 float32 tiles in
   cache, one thread: 0.094 against 0.237 ns per element).  Within float32 rounding of the
   pairwise sum numpy computes (BLAS adds in another order — as torch's vectorized reductions
   also do); NaN and infinities propagate as in any sum (``x * 1`` is exact).  A 2-D tile
   summed into a tile buffer uses ``np.dot`` (BLAS gemv) instead: same cost on one thread, but
   it releases the GIL, which ``np.vecdot`` and ``np.matmul`` hold — with two tile threads the
   layer norm kernel went from 5.7-6.3 to 4.6-4.9 ms (min of 40 calls, quiet machine).
2. **Row-broadcast operands expanded once per call** (``expand_row_operands``).  An input
   that does not vary along the tile dim but does along the last — layer norm's weight and
   bias, ``(1, 1024)`` against a ``(64, 1024)`` tile — makes numpy's iterator take its
   broadcasting path: 0.35 ns per element for a product, and with the row-sized ufunc buffer
   ``run_tiles`` sets for per-row values (``runtime.ufunc_bufsize``) it is slower still.
   Copied once per call to a full tile (``w0``, as big as one tile buffer, read by every chunk
   and thread) the same op is a same-shape pass (0.23 ns).  The copy is one tile's pass per
   call, amortized over all tiles; a kernel of one tile keeps the broadcast view.  Values are
   unchanged bit for bit.
"""

from __future__ import annotations

import re

from .common import Value

_SUM_LAST = "np.add.reduce({0}, axis=(%d,), keepdims=True, out={out})"
_MUL = "np.multiply({0}, {1}, out={out})"
_VIEW = re.compile(r"v\d+")


def row_sums_by_blas(instrs: list, last_size) -> list:
    """Rewrite row sums over the last dim as ``np.vecdot(v, ones)``; returns the lines that
    define the ones vectors (one per dtype), for the kernel's head."""
    if not instrs:
        return []
    uses: dict = {}
    for ins in instrs:
        for a in ins.args:
            uses[id(a)] = uses.get(id(a), 0) + 1
    producer = {id(i.dest): i for i in instrs if i.dest is not None}
    ones: dict = {}
    for ins in instrs:
        d = ins.dest
        if d is None or len(d.flags) < 2 or len(ins.args) != 1 or \
                ins.fmt != _SUM_LAST % (len(d.flags) - 1):
            continue
        v = ins.args[0]
        p = producer.get(id(v))
        if p is not None and p.fmt == _MUL and uses.get(id(v)) == 1 and all(
                a.dtype == v.dtype and a.flags and a.flags[-1] for a in p.args):
            continue  # sum(a * b): _finish's dot peephole makes it one vecdot(a, b)
        if v.dtype not in ("float32", "float64") or d.dtype != v.dtype or not v.flags[-1]:
            continue
        name = ones.setdefault(v.dtype, f"ones_{v.dtype}")
        if len(d.flags) == 2 and d.temp:
            # np.dot releases the GIL (BLAS gemv); np.vecdot holds it, so two tile threads
            # summing rows take turns (a (R, 1) tile buffer's column is C-contiguous, as
            # np.dot's out= needs)
            ins.fmt = f"np.dot({{0}}, {name}, out={{out}}[..., 0])"
        else:
            ins.fmt = f"np.vecdot({{0}}, {name}, axis=-1, out={{out}}[..., 0])"
    return [f"{name} = np.ones(({last_size},), dtype=np.{dt})" for dt, name in ones.items()]


def expand_row_operands(instrs: list, rows) -> list:
    """Replace each input view that varies along the last dim but not the tile dim, where an
    elementwise op meets it with a full tile, by a copy expanded to the tile's rows, made once
    per call and read by every chunk; returns the lines that make the copies (``rows``: the
    tile's rows, a number or the kernel's ``rows`` variable)."""
    expanded: dict = {}
    lines = []
    for ins in instrs:
        d = ins.dest
        if not ins.inplace or d is None or len(d.flags) < 2 or not d.flags[0]:
            continue
        for k, a in enumerate(ins.args):
            if not isinstance(a, Value) or a.temp or a.dtype is None or a.expr is None or \
                    not _VIEW.fullmatch(a.expr) or a.flags[0] or not a.flags[-1]:
                continue
            if a.expr not in expanded:
                name = "w" + a.expr[1:]
                lines.append(f"{name} = np.ascontiguousarray(np.broadcast_to({a.expr}, "
                             f"({rows},) + {a.expr}.shape[1:]))")
                expanded[a.expr] = Value(expr=f"{name}[:t1 - t0]",
                                         flags=(True,) + tuple(a.flags[1:]), dtype=a.dtype)
            ins.args[k] = expanded[a.expr]
    return lines


__all__ = ["expand_row_operands", "row_sums_by_blas"]
