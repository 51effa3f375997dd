"""Pooling lowerings: ``max_pool2d_with_indices``, ``avg_pool2d``, its backward and
``_adaptive_avg_pool2d`` as pointwise kernels over the window's loads (``torch/_inductor/
lowering.py``'s ``_max_pool2d_with_offsets``, ``avg_pool2d``, ``avg_pool2d_backward``,
``_adaptive_avg_pool2d``).

A pooling output element reads a small window of the input, so each is a ``Pointwise`` whose
body is *unrolled* over the window — ``kh * kw`` loads, combined with ``ops.*`` — and fuses
with what computes the input (inlined at every window position) and with what consumes it.
Like torch, a window of more than 25 elements stays a fallback kernel (the unrolled body would
be too long; ``config`` has no knob for it).

Window position ``(a, b)`` of output ``(oh, ow)`` is input ``(oh*s - p + a*d, ow*s - p + b*d)``
— affine in the loop variables.  When no window of a dim can leave the input (no padding, no
``ceil_mode`` overhang) the load is index arithmetic (a strided view in the kernel); otherwise
it reads at the position clamped into the input (``iota_lowering.masked_position``) and a mask
says which reads are padding:

* **max**: a running ``(value, index)`` pair over the window in order; an element replaces the
  pair when it is greater, or NaN over a non-NaN (NaN wins, the first NaN stays, ties keep the
  first: ``np.argmax``'s rule, which the eager kernel uses); the index is the flat position
  ``h * W + w`` in the input plane.  A window whose every in-bounds value is ``-inf`` keeps its
  first in-bounds position, as the eager kernel and torch do.  Its backward is a pointwise over
  the input: position ``(h, w)`` sums the gradients of the (at most ``ceil(k / s)`` per dim)
  outputs whose window may hold it and whose saved index is ``h * W + w`` (torch's lowering).
* **avg**: the in-bounds values summed, divided by torch's divisor (``count_include_pad``:
  the window clipped to the padded input, else to the input; ``divisor_override``), computed
  from ``ops.index_expr`` of the window start.  The backward is a pointwise over the *input*:
  input ``h`` receives ``grad / divisor`` from each output ``o`` with ``o*s - p <= h <
  o*s - p + k``, at most ``ceil(k / s)`` of them per dim (torch's ``avg_pool2d_backward``).
* **adaptive avg**: output ``i`` averages input ``floor(i n / o) .. ceil((i + 1) n / o)``; an
  even split is an ``avg_pool2d``, else windows of varying length up to their longest, masked
  (its backward stays a fallback, as in torch).

Invariants: float dtypes only (integer pooling rounds differently: a fallback kernel); static
spatial sizes (a symbolic batch or channel count is fine); CPU only (masked reads use
``ops.indirect_indexing``).
"""

from __future__ import annotations

from ..ops.pooling import _params
from .index_lowering import _cpu_only
from .iota_lowering import I64, const, masked_position
from .ir import Pointwise, TensorBox
from .lowering import _aten, _origins, register_lowering
from .sizevars import as_index, as_sizes, is_symbolic
from .virtualized import V, ops

MAX_WINDOW = 25  # torch's limit on an unrolled window (lowering.py: ``window_size > 25``)


def _check(what: str, x, window: int) -> tuple:
    """The input's static spatial sizes, after the conditions every pooling lowering shares."""
    _cpu_only(what)
    if not x.dtype.is_floating_point:
        raise NotImplementedError(f"{what} of {x.dtype}: integer pooling stays a fallback")
    if window > MAX_WINDOW:
        raise NotImplementedError(f"{what}: a window of {window} elements (torch unrolls at "
                                  f"most {MAX_WINDOW})")
    hw = tuple(x.get_size()[-2:])
    if any(is_symbolic(s) for s in hw):
        raise NotImplementedError(f"{what}: symbolic spatial sizes")
    return hw


def _may_leave(n: int, out: int, k: int, s: int, p: int, d: int) -> bool:
    """Can a window along this dim read outside ``[0, n)``?"""
    return p > 0 or (out - 1) * s + (k - 1) * d >= n


class _Window:
    """The reads of one window position ``(a, b)``: ``(inside mask or None, h, w)`` where
    ``h``/``w`` are index expressions or indirect variables, plus the flat position."""

    def __init__(self, x, k, s, p, d, out_hw):
        self.size = tuple(x.get_size())
        self.hw = self.size[-2:]
        self.k, self.s, self.p, self.d = k, s, p, d
        self.masked = [_may_leave(n, o, *a) for n, o, a in zip(self.hw, out_hw, zip(k, s, p, d))]
        self.load = x.make_loader()

    def position(self, dim: int, o, a: int):
        """Input coordinate of window element ``a`` along spatial ``dim`` of output ``o``."""
        return as_index(o) * self.s[dim] + (a * self.d[dim] - self.p[dim])

    def read(self, index, a: int, b: int) -> tuple:
        *prefix, oh, ow = index
        at, inside = [], None
        for dim, (o, e) in enumerate(((oh, a), (ow, b))):
            pos = self.position(dim, o, e)
            if self.masked[dim]:
                ok, pos = masked_position(ops.index_expr(pos, I64), self.hw[dim],
                                          len(self.size) - 2 + dim)
                inside = ok if inside is None else ops.logical_and(inside, ok)
            at.append(pos)
        return inside, self.load(list(prefix) + at)

    def flat(self, index, a: int, b: int):
        """``h * W + w`` of window element ``(a, b)`` as an int64 value."""
        h = self.position(0, index[-2], a)
        w = self.position(1, index[-1], b)
        return ops.index_expr(h * self.hw[1] + w, I64)

    def first_inside(self, index):
        """The flat position of the window's first in-bounds element (``_first_inside`` of
        ``ops/pooling.py``): the start stepped past the padding by the dilation."""
        coords = []
        for dim in range(2):
            start = ops.index_expr(self.position(dim, index[len(index) - 2 + dim], 0), I64)
            if self.p[dim] > 0:
                d = const(self.d[dim])
                steps = ops.negative(ops.floor_divide(start, d))  # ceil(-start / d)
                start = ops.add(start, ops.multiply(d, ops.maximum(steps, const(0))))
            coords.append(start)
        return ops.add(ops.multiply(coords[0], const(self.hw[1])), coords[1])


def _out_hw(meta) -> tuple:
    return tuple(as_sizes(meta.shape)[-2:])


# --------------------------------------------------------------------------- max


@register_lowering(_aten("max_pool2d_with_indices"))
def max_pool2d_with_indices(x, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    k, s, p, d = _params("max_pool2d", kernel_size, stride, padding, dilation)
    _check("max_pool2d", x, k[0] * k[1])
    values_meta, _ = V.graph.current_meta()
    out_size = as_sizes(values_meta.shape)
    win = _Window(x, k, s, p, d, out_size[-2:])
    dtype = x.dtype
    cells = [(a, b) for a in range(k[0]) for b in range(k[1])]

    def pair(index):
        best = arg = None
        for a, b in cells:
            inside, v = win.read(index, a, b)
            if best is None and inside is None:  # the first element is always in bounds
                best, arg = v, win.flat(index, a, b)
                continue
            if best is None:
                best, arg = const(float("-inf"), dtype), win.first_inside(index)
            better = ops.logical_or(ops.greater(v, best),
                                    ops.logical_and(ops.isnan(v),
                                                    ops.logical_not(ops.isnan(best))))
            if inside is not None:
                better = ops.logical_and(better, inside)
            best = ops.where(better, v, best)
            arg = ops.where(better, win.flat(index, a, b), arg)
        return best, arg

    origins = _origins(x)
    values = TensorBox.create(Pointwise(dtype, lambda i: pair(i)[0], out_size, origins))
    indices = TensorBox.create(Pointwise(I64, lambda i: pair(i)[1], out_size, set(origins)))
    return values, indices


def _candidates(k: int, s: int) -> int:
    """How many outputs' windows can hold one input position along a dim (torch's
    ``h_window_size``)."""
    return max(max(h // s - max(0, (h - k) // s), 1) for h in range(2 * k))


def _candidate_outputs(index, k, s, p, out_hw, spans):
    """For input position ``index`` of a pooling's backward: each candidate output whose
    window may hold it, as ``(output index, its (h, w) as int64 values, inside)``. Along a
    dim the candidates are ``[max(0, (i + p - k) // s + 1), min(O, (i + p) // s + 1))``;
    ``spans`` of them are walked, those past the range masked by ``inside`` (their index
    clamped into the output, so no read is out of bounds)."""
    *prefix, h, w = index
    nd = len(index)
    ranges = []
    for dim, i in enumerate((h, w)):
        lo = ops.floor_divide(ops.index_expr(as_index(i) + (p[dim] - k[dim] + s[dim]), I64),
                              const(s[dim]))
        hi = ops.add(ops.floor_divide(ops.index_expr(as_index(i) + p[dim], I64),
                                      const(s[dim])), const(1))
        ranges.append((ops.maximum(lo, const(0)), ops.minimum(hi, const(out_hw[dim]))))
    for a in range(spans[0]):
        for b in range(spans[1]):
            os_, inside = [], None
            for dim, c in enumerate((a, b)):
                lo, hi = ranges[dim]
                o = ops.add(lo, const(c))
                ok = ops.less(o, hi)
                inside = ok if inside is None else ops.logical_and(inside, ok)
                os_.append(o)
            at = [ops.indirect_indexing(ops.minimum(o, const(out_hw[dim] - 1)), out_hw[dim],
                                        False, "index", nd - 2 + dim)
                  for dim, o in enumerate(os_)]
            yield list(prefix) + at, os_, inside


@register_lowering(_aten("max_pool2d_with_indices_backward"))
def max_pool2d_with_indices_backward(grad, x, kernel_size, stride, padding, dilation,
                                     ceil_mode, indices):
    """A pointwise over the *input*: position ``(h, w)`` sums the gradients of the outputs
    whose window may hold it (``[(h + p - k) // s + 1, (h + p) // s]``, clamped) and whose
    saved index is ``h * W + w`` (torch's lowering; a dilation other than 1, or more than 25
    candidate outputs, is a fallback kernel in both)."""
    k, s, p, d = _params("max_pool2d", kernel_size, stride, padding, dilation)
    if d != [1, 1]:
        raise NotImplementedError("max_pool2d backward with dilation: a fallback, as in torch")
    spans = [_candidates(kk, ss) for kk, ss in zip(k, s)]
    hw = _check("max_pool2d_with_indices_backward", x, spans[0] * spans[1])
    out_hw = tuple(grad.get_size()[-2:])
    if any(is_symbolic(o) for o in out_hw):
        raise NotImplementedError("max_pool2d backward: symbolic spatial sizes")
    iload, gload = indices.make_loader(), grad.make_loader()
    dtype = grad.dtype

    def body(index):
        *_, h, w = index
        here = ops.index_expr(as_index(h) * hw[1] + as_index(w), I64)
        total = None
        for at, _, inside in _candidate_outputs(index, k, s, p, out_hw, spans):
            hit = ops.logical_and(ops.equal(iload(at), here), inside)
            g = ops.where(hit, gload(at), const(0.0, dtype))
            total = g if total is None else ops.add(total, g)
        return total
    return TensorBox.create(Pointwise(dtype, body, tuple(x.get_size()), _origins(grad)))


# --------------------------------------------------------------------------- avg


def _divisor(win, starts, count_include_pad, divisor_override, dtype):
    """torch's divisor of the window starting at ``starts`` (int64 values, padded coordinates
    ``o*s - p``) as a ``dtype`` value; ``starts=None``: every window is whole, ``kh * kw``."""
    if divisor_override is not None:
        return const(float(divisor_override), dtype)
    if starts is None:
        return const(float(win.k[0] * win.k[1]), dtype)
    count = None
    for dim, start in enumerate(starts):
        n, kk, pp = win.hw[dim], win.k[dim], win.p[dim]
        end = ops.minimum(ops.add(start, const(kk)), const(n + pp))
        if not count_include_pad:
            end = ops.minimum(end, const(n))
            start = ops.maximum(start, const(0))
        length = ops.subtract(end, start)
        count = length if count is None else ops.multiply(count, length)
    return ops.to_dtype(count, dtype)


@register_lowering(_aten("avg_pool2d"))
def avg_pool2d(x, kernel_size, stride=(), padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    k, s, p, d = _params("avg_pool2d", kernel_size, stride, padding)
    _check("avg_pool2d", x, k[0] * k[1])
    out_size = as_sizes(V.graph.current_meta().shape)
    win = _Window(x, k, s, p, d, out_size[-2:])
    dtype = x.dtype

    def body(index):
        total = None
        for a in range(k[0]):
            for b in range(k[1]):
                inside, v = win.read(index, a, b)
                if inside is not None:
                    v = ops.where(inside, v, const(0.0, dtype))
                total = v if total is None else ops.add(total, v)
        starts = None if not any(win.masked) else [
            ops.index_expr(win.position(dim, index[len(index) - 2 + dim], 0), I64)
            for dim in range(2)]
        div = _divisor(win, starts, count_include_pad, divisor_override, dtype)
        return ops.true_divide(total, div)
    return TensorBox.create(Pointwise(dtype, body, out_size, _origins(x)))


@register_lowering(_aten("avg_pool2d_backward"))
def avg_pool2d_backward(grad, x, kernel_size, stride, padding, ceil_mode, count_include_pad,
                        divisor_override):
    """Input ``h`` (padded: ``h + p``) takes ``grad[o] / divisor(o)`` for every output ``o``
    in ``[max(0, (h + p - k) // s + 1), min(O, (h + p) // s + 1))``."""
    k, s, p, d = _params("avg_pool2d", kernel_size, stride, padding)
    _check("avg_pool2d_backward", x, k[0] * k[1])
    out_hw = tuple(grad.get_size()[-2:])
    if any(is_symbolic(o) for o in out_hw):
        raise NotImplementedError("avg_pool2d_backward: symbolic spatial sizes")
    win = _Window(x, k, s, p, d, out_hw)
    gload = grad.make_loader()
    dtype = grad.dtype
    spans = [-(-kk // ss) for kk, ss in zip(k, s)]  # candidates per dim: ceil(k / s)

    def body(index):
        total = None
        for at, os_, ok in _candidate_outputs(index, k, s, p, out_hw, spans):
            starts = [ops.subtract(ops.multiply(o, const(s[dim])), const(p[dim]))
                      for dim, o in enumerate(os_)]
            div = _divisor(win, starts, count_include_pad, divisor_override, dtype)
            part = ops.where(ok, ops.true_divide(gload(at), div), const(0.0, dtype))
            total = part if total is None else ops.add(total, part)
        return total
    return TensorBox.create(Pointwise(dtype, body, tuple(x.get_size()), _origins(grad)))


# --------------------------------------------------------------------------- adaptive avg


def _adaptive_bounds(i, n: int, o: int) -> tuple:
    """``(floor(i n / o), ceil((i + 1) n / o))`` as int64 values of the loop variable ``i``."""
    start = ops.floor_divide(ops.index_expr(as_index(i) * n, I64), const(o))
    end = ops.negative(ops.floor_divide(ops.index_expr(as_index(i) * -n + -n, I64), const(o)))
    return start, end


def _longest(n: int, o: int) -> int:
    return max(-(-(i + 1) * n // o) - (i * n) // o for i in range(o))


@register_lowering(_aten("_adaptive_avg_pool2d"))
def adaptive_avg_pool2d(x, output_size):
    _cpu_only("adaptive_avg_pool2d")
    hw = tuple(x.get_size()[-2:])
    out_hw = tuple(output_size)
    if any(is_symbolic(v) for v in hw + out_hw) or 0 in out_hw:
        raise NotImplementedError("adaptive_avg_pool2d: symbolic or empty sizes")
    if hw[0] % out_hw[0] == 0 and hw[1] % out_hw[1] == 0:  # an even split: avg_pool2d
        k = [hw[0] // out_hw[0], hw[1] // out_hw[1]]
        return avg_pool2d(x, k, k, 0)
    spans = [_longest(n, o) for n, o in zip(hw, out_hw)]
    _check("adaptive_avg_pool2d", x, spans[0] * spans[1])
    load = x.make_loader()
    dtype = x.dtype
    nd = len(x.get_size())
    out_size = tuple(x.get_size()[:-2]) + out_hw

    def body(index):
        *prefix, oh, ow = index
        bounds = [_adaptive_bounds(i, n, o) for i, n, o in zip((oh, ow), hw, out_hw)]
        total = None
        for a in range(spans[0]):
            for b in range(spans[1]):
                at, ok = [], None
                for dim, c in enumerate((a, b)):
                    start, end = bounds[dim]
                    pos = ops.add(start, const(c))
                    valid = ops.less(pos, end)
                    ok = valid if ok is None else ops.logical_and(ok, valid)
                    at.append(ops.indirect_indexing(ops.minimum(pos, const(hw[dim] - 1)),
                                                    hw[dim], False, "index", nd - 2 + dim))
                v = ops.where(ok, load(list(prefix) + at), const(0.0, dtype))
                total = v if total is None else ops.add(total, v)
        count = ops.multiply(*[ops.subtract(e, st) for st, e in bounds])
        return ops.true_divide(total, ops.to_dtype(count, dtype))
    return TensorBox.create(Pointwise(dtype, body, out_size, _origins(x)))


__all__ = ["adaptive_avg_pool2d", "avg_pool2d", "avg_pool2d_backward",
           "max_pool2d_with_indices"]
