"""The instruction list of one kernel body, after the ops handler and before the text
(``torch/_inductor/codegen/cpp_utils.py``, whose ``LocalBufferContext`` gives a fused
kernel's intermediates local buffers; and ``CppVecOverrides``' rewrites, e.g. ``where`` as a
``blendv``).

``_finish`` runs, in order:

1. peepholes that make fewer or cheaper numpy passes — ``sum(a * b)`` over the last dim as one
   ``np.vecdot``; on the CPU, ``where`` as a select on the bits and a clamp pair as ``np.clip``;
2. stores folded into the instruction that computes the stored value (``out=`` the output
   view), when that value has no other use — or, on the CPU, when the output view is dense
   in the frame's order (its other uses then read the output tile: one copy pass fewer);
3. a tile buffer per temporary by liveness — a dead buffer of the same shape flags and dtype is
   reused, and an elementwise op may write over an argument that dies at it;
4. the text of each instruction.

Every rewrite computes the same values bit for bit (NaN, signed zeros and infinities
included): ``tests/test_inductor_cpu_codegen.py`` checks each against eager mode.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .common import Value


@dataclass
class Instr:
    dest: Value | None
    fmt: str  # "{out}" is the destination, "{0}", "{1}" ... the args
    args: list
    inplace: bool = False  # elementwise: the destination may reuse a dying argument's buffer
    store: tuple | None = None  # a store: (target, its flags, its dtype)
    dense: bool = False  # a store whose target is walked contiguously in frame order


_SUM_LAST = "np.add.reduce({0}, axis=(%d,), keepdims=True, out={out})"


def _dot_peephole(instrs: list, uses: dict, producer: dict) -> list:
    """``sum(a * b)`` over the last dim — a variance, a softmax backward — is one ``np.vecdot``
    per tile (a BLAS dot per row) instead of a product pass and a reduction pass."""
    dropped = set()
    for ins in instrs:
        if ins.dest is None or len(ins.args) != 1 or not ins.dest.flags:
            continue
        last = len(ins.dest.flags) - 1
        v = ins.args[0]
        p = producer.get(id(v))
        if ins.fmt != _SUM_LAST % last or p is None or \
                p.fmt != "np.multiply({0}, {1}, out={out})" or uses.get(id(v)) != 1:
            continue
        a, b = p.args
        if a.dtype != b.dtype or a.dtype != v.dtype or v.dtype != ins.dest.dtype or \
                np.dtype(v.dtype).kind != "f" or not (a.flags[last] and b.flags[last]):
            continue
        ins.fmt, ins.args = "np.vecdot({0}, {1}, axis=-1, out={out}[..., 0])", [a, b]
        dropped.add(id(p))
    return [i for i in instrs if id(i) not in dropped]


_WHERE = "{out} = np.where({0}, {1}, {2})"
_MAX, _MIN = "np.maximum({0}, {1}, out={out})", "np.minimum({0}, {1}, out={out})"


_BITS = {"float16": "int16", "float32": "int32", "float64": "int64"}


def _where_peephole(instrs: list) -> list:
    """``np.where`` allocates a new array per tile, and numpy's masked copies branch per
    element (~10x slower than arithmetic on a random mask).  A float ``where(c, a, b)`` is a
    select on the bits instead, as a vector ``blendv`` is: the integer bits of ``a`` times
    ``c`` (a bool, 1 or 0: numpy's integer multiply casts it in its inner loop) are ``a``'s
    bits where ``c`` holds and ``0`` elsewhere — ``a * c`` when ``b`` is ``0`` (a literal:
    ``+0.0`` has no bits set), else ``b ^ ((a ^ b) * c)`` — exact for every value, NaN
    payloads and signed zeros included.  (One pass fewer than ``a & -int(c)``: on a 64x1024
    float32 tile, 25 against 31 µs, the ReLU backward's select.)"""
    out = []
    for ins in instrs:
        d = ins.dest
        bits = _BITS.get(d.dtype) if d is not None and d.dtype is not None else None
        if ins.fmt != _WHERE or bits is None:
            out.append(ins)
            continue
        c, a, b = ins.args
        if c.dtype != "bool" or not c.flags or any(
                v.dtype not in (None, d.dtype) for v in (a, b)) or (a.dtype is b.dtype is None):
            out.append(ins)
            continue

        def as_bits(v, k):
            if v.dtype is not None:
                return f"{{{k}}}.view(np.{bits})"
            f = float(eval(v.expr, {"np": np, "float": float}))  # a literal this module wrote
            return f"np.{bits}({int(np.array(f, dtype=d.dtype).view(bits))})"
        o = f"{{out}}.view(np.{bits})"
        if b.dtype is None and b.expr in ("0", "0.0", "False"):
            ins.fmt = f"np.multiply({as_bits(a, 1)}, {{0}}, out={o})"
            ins.args, ins.inplace = [c, a], True
        else:
            ins.fmt = (f"np.bitwise_xor({as_bits(a, 1)}, {as_bits(b, 2)}, out={o})\n"
                       f"np.multiply({o}, {{0}}, out={o})\n"
                       f"np.bitwise_xor({o}, {as_bits(b, 2)}, out={o})")
            ins.args = [c, a, b]
        d.temp = True
        out.append(ins)
    return out


def _clip_peephole(instrs: list, uses: dict, producer: dict) -> list:
    """``minimum(maximum(x, lo), hi)`` with literal bounds — erf's clamp — is one ``np.clip``
    pass (numpy defines ``clip`` as exactly that composition, NaN included)."""
    dropped = set()
    for ins in instrs:
        if ins.fmt != _MIN or ins.args[1].dtype is not None or ins.args[1].temp:
            continue
        p = producer.get(id(ins.args[0]))
        if p is None or p.fmt != _MAX or uses.get(id(ins.args[0])) != 1 or \
                p.args[1].dtype is not None or p.args[1].temp:
            continue
        ins.fmt, ins.args = "np.clip({0}, {1}, {2}, out={out})", [p.args[0], p.args[1],
                                                                  ins.args[1]]
        dropped.add(id(p))
    return [i for i in instrs if id(i) not in dropped]


def _writes_into_out(fmt: str) -> bool:
    """Does the instruction write its result into a given ``{out}`` (so a store can be it)?"""
    return "out={out}" in fmt or fmt.startswith("np.copyto({out},")


def _finish(instrs: list, prefix: str, cpu: bool = False, live_out: set = frozenset()) -> dict:
    """Peepholes (store, dot; on the CPU also where and clip), then tile buffers by liveness,
    then text.  ``live_out``: ids of values read after these instructions (a later pass of the
    kernel), whose buffers are never reused here."""
    uses: dict = {}
    for ins in instrs:
        for a in ins.args:
            uses[id(a)] = uses.get(id(a), 0) + 1
    for k in live_out:
        uses[k] = uses.get(k, 0) + 1
    producer = {id(i.dest): i for i in instrs if i.dest is not None}
    instrs = _dot_peephole(instrs, uses, producer)
    if cpu:
        instrs = _clip_peephole(_where_peephole(instrs), uses, producer)
    kept = []
    for ins in instrs:
        st = ins.store
        if st is not None:
            v = ins.args[0]
            p = producer.get(id(v))
            target, flags, dtype = st
            # a value with other uses too is computed into a dense output view, which those
            # uses then read (on the CPU: a copy pass saved, the values the same)
            if p is not None and v.temp and _writes_into_out(p.fmt) and \
                    (uses[id(v)] == 1 or cpu and ins.dense) \
                    and tuple(v.flags) == tuple(flags) and v.dtype == dtype:
                v.temp, v.expr = False, target
                continue
        kept.append(ins)
    last: dict = {}
    for i, ins in enumerate(kept):
        for a in ins.args:
            last[id(a)] = i
    for k in live_out:
        last[k] = len(kept)  # never dies here
    mine: set = set()  # values given a slot here (an earlier pass's values keep theirs)
    free: dict = {}
    slots: list = []
    lines: list = []
    counter = 0
    for i, ins in enumerate(kept):
        dying = {id(a): a for a in ins.args if id(a) in mine and last.get(id(a)) == i}

        def release():
            for a in dying.values():
                free.setdefault((a.flags, a.dtype), []).append(a.slot)
        if ins.inplace:
            release()
        d = ins.dest
        if d is not None and d.expr is None:
            if d.temp:
                key = (d.flags, d.dtype)
                d.slot = free[key].pop() if free.get(key) else len(slots)
                if d.slot == len(slots):
                    slots.append(key)
                d.expr = f"{prefix}{d.slot}"
                mine.add(id(d))
            else:
                d.expr = f"t{prefix}{counter}"
                counter += 1
        if not ins.inplace:
            release()
        if d is not None and d.slot is not None and id(d) not in last:
            free.setdefault((d.flags, d.dtype), []).append(d.slot)
        text = ins.fmt.format(*[a.expr for a in ins.args], out=d.expr if d else None)
        lines += text.splitlines()
    return {"slots": slots, "lines": lines}
