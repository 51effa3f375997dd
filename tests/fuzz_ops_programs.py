"""Random straight-line programs over the op table's breadth, for ``test_inductor_fuzz_ops.py``.

A program is Python source (``t5 = x0.gather(1, i0)``) built one step at a time, as in
``test_inductor.py``: a step is drawn from a table of *templates*, written out, and run
eagerly — it is kept only if eager mode accepts it.  Three things differ:

* **Three size variants.**  Every float input's first dim is ``N`` and the program is built
  for three values of ``N`` at once (``sizes``); a step is kept only if eager mode accepts it
  at all three, so the compiled program can be called at each size (the second call makes
  Dynamo mark ``N`` dynamic, the third runs the symbolic kernels).
* **Inputs made by the templates.**  A gather needs indices in range of the dim it reads, a
  convolution a weight with the input's channels: a template asks the generator for such an
  input (``g.index(bounds, shape)``, ``g.weight(shape)``), which becomes a new argument of the
  program, its values drawn per size variant (an index's bound may depend on ``N``).
* **Writes with repeated indices** (``scatter``, ``index_put`` without ``accumulate``,
  ``index_copy``) get indices without repeats, as torch documents those ops deterministic
  only then; ``scatter_add``, ``index_add`` and ``accumulate=True`` get repeats.

``Program.inputs(variant)`` makes fresh input tensors (float inputs possibly non-contiguous:
transposed, strided or broadcast, as an ``InputSpec`` says) from per-input seeds, so every
call of a test sees the same values.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np

import minitorch_compile as mtc
import minitorch_compile.nn.functional as F

DTYPES = {"float32": np.float32, "float64": np.float64, "int64": np.int64, "bool": np.bool_}


@dataclass
class InputSpec:
    """One argument of a program: how to make it at each size variant."""

    name: str
    kind: str  # "float" | "int" (small integer data) | "bool" | "index"
    shape: tuple  # ints, and "N" for the varying dim
    dtype: str = "float32"
    layout: str = "contiguous"  # "transposed" | "strided" | "broadcast"
    bounds: tuple = ()  # index: the size it indexes, per variant
    wrap: bool = False  # index: negative values allowed (Python's x[-1])
    unique_dim: int | None = None  # index: no repeats along this dim
    seed: int = 0

    def make(self, variant: int, n: int, bad: str | None = None) -> mtc.Tensor:
        rng = np.random.default_rng(self.seed * 7 + variant)
        shape = tuple(n if s == "N" else s for s in self.shape)
        if self.kind == "index":
            a = self._indices(rng, shape, self.bounds[variant])
            if bad == "high":
                a.reshape(-1)[-1] = self.bounds[variant]
            elif bad == "low":
                a.reshape(-1)[0] = -self.bounds[variant] - 1
            return mtc.from_numpy(a)
        if self.kind == "int":
            return mtc.from_numpy(rng.integers(-3, 4, shape).astype(np.int64))
        if self.kind == "bool":
            return mtc.from_numpy(rng.random(shape) < 0.5)
        dt = DTYPES[self.dtype]
        if self.layout == "transposed" and len(shape) > 1:
            return mtc.from_numpy(rng.standard_normal(shape[::-1]).astype(dt).T)
        if self.layout == "strided" and shape:
            a = rng.standard_normal(shape[:-1] + (2 * shape[-1],)).astype(dt)
            return mtc.from_numpy(a[..., ::2])
        if self.layout == "broadcast" and shape and shape[0] > 1:
            a = rng.standard_normal((1,) + shape[1:]).astype(dt)
            return mtc.from_numpy(np.broadcast_to(a, shape))
        return mtc.from_numpy(rng.standard_normal(shape).astype(dt))

    def can_grow(self, d: int) -> bool:
        """Can dim ``d`` be one longer (``test_bad_inputs_raise_eagers_error``)?  Not an index's
        no-repeats dim that would then be longer than the dim it indexes: no such index
        exists (with repeats, ``index_copy``'s result is not defined)."""
        if self.kind != "index" or self.unique_dim is None:
            return True
        return d != self.unique_dim % len(self.shape) or self.shape[d] < min(self.bounds)

    def _indices(self, rng, shape, bound):
        lo = -bound if self.wrap else 0
        if self.unique_dim is None or not shape:
            return rng.integers(lo, bound, shape).astype(np.int64)
        d = self.unique_dim % len(shape)
        moved = list(shape)
        k = moved.pop(d)
        if k > bound:  # more indices than values (a bad input's other shape): repeats it is
            return rng.integers(lo, bound, shape).astype(np.int64)
        rows = [rng.permutation(bound)[:k] for _ in range(int(np.prod(moved, dtype=int)))]
        a = np.array(rows, dtype=np.int64).reshape(*moved, k)
        return np.ascontiguousarray(np.moveaxis(a, -1, d))


@dataclass
class Program:
    source: str
    specs: list
    sizes: tuple
    outputs: list = field(default_factory=list)

    def build(self):
        ns = {"mtc": mtc, "F": F}
        exec(self.source, ns)  # noqa: S102 - our own generated program
        return ns["program"]

    def inputs(self, variant: int, grad: bool = False, bad: dict | None = None) -> list:
        bad = bad or {}
        out = []
        for s in self.specs:
            t = s.make(variant, self.sizes[variant], bad.get(s.name))
            out.append(t.requires_grad_() if grad and s.kind == "float" else t)
        return out

    def __repr__(self):
        return f"{self.source}\n# inputs {self.specs}\n# sizes N={self.sizes}"


class Skip(Exception):
    """A template that does not apply to the value drawn."""


class Generator:
    """Builds one program; templates call back for dims, inputs and indices."""

    def __init__(self, draw, sizes):
        self.draw, self.sizes = draw, sizes
        self.specs: list[InputSpec] = []
        self.envs = [{"mtc": mtc, "F": F} for _ in sizes]
        self.values: list[str] = []
        self.lines: list[str] = []

    # ------------------------------------------------------------ inputs
    def add_input(self, spec: InputSpec) -> str:
        spec.seed = len(self.specs) * 1000 + self.draw_int(0, 999)
        self.specs.append(spec)
        for v, env in enumerate(self.envs):
            env[spec.name] = spec.make(v, self.sizes[v])
        return spec.name

    def index(self, bounds, shape, wrap=False, unique_dim=None) -> str:
        bounds = tuple(int(b) for b in bounds)
        if min(bounds) < 1 or (unique_dim is not None and shape[unique_dim] > min(bounds)):
            raise Skip
        return self.add_input(InputSpec(f"i{len(self.specs)}", "index", tuple(shape),
                                        "int64", bounds=bounds, wrap=wrap,
                                        unique_dim=unique_dim))

    def weight(self, shape, dtype="float32") -> str:
        return self.add_input(InputSpec(f"w{len(self.specs)}", "float", tuple(shape), dtype))

    # ------------------------------------------------------------ draws
    def draw_int(self, lo, hi) -> int:
        from hypothesis import strategies as st
        return self.draw(st.integers(lo, hi))

    def choice(self, seq):
        from hypothesis import strategies as st
        return self.draw(st.sampled_from(list(seq)))

    def shapes(self, name) -> list[tuple]:
        return [tuple(env[name].shape) for env in self.envs]

    def ndim(self, name) -> int:
        return self.envs[0][name].ndim

    def dim(self, name) -> int:
        nd = max(self.ndim(name), 1)
        return self.draw_int(-nd, nd - 1)

    def sizes_of(self, name, d) -> list[int]:
        try:
            return [s[d] for s in self.shapes(name)]
        except IndexError:  # a 0-d value
            raise Skip from None

    def min_size(self, name, d) -> int:
        return min(self.sizes_of(name, d))

    def fixed(self, name, d) -> int:
        """The size of dim ``d`` if it is the same at every variant, else ``Skip``."""
        sizes = set(self.sizes_of(name, d))
        if len(sizes) != 1:
            raise Skip
        return sizes.pop()

    def pick(self, kinds="f", view=True) -> str:
        """A value of one of ``kinds``: ``f`` floating, ``i`` integer, ``b`` bool (``view``:
        views of other values allowed)."""
        def kind(t):
            return "f" if t.is_floating_point() else "b" if t.dtype == mtc.bool else "i"
        names = [n for n in self.values if kind(self.envs[0][n]) in kinds
                 and (view or self.envs[0][n]._base is None)]
        if not names:
            raise Skip
        return self.choice(names)

    # ------------------------------------------------------------ steps
    def try_step(self, text: str) -> bool:
        """Run ``text`` (an expression, or statements assigning ``{out}``) at every variant;
        keep it if eager mode accepts it everywhere and it makes a tensor."""
        out = f"t{len(self.lines) + 100}"
        stmts = text.format(out=out) if "{out}" in text else f"{out} = {text}"
        new = []
        for env in self.envs:
            scope = dict(env)
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    exec(stmts, scope)  # noqa: S102 - our own generated text
            except Exception:  # noqa: BLE001 - eager refuses: not a valid step
                return False
            if not isinstance(scope.get(out), mtc.Tensor) or scope[out].numel() > 4096:
                return False
            new.append(scope[out])
        for env, value in zip(self.envs, new):
            env[out] = value
        self.values.append(out)
        self.lines.extend("    " + s for s in stmts.split("\n"))
        return True


# ------------------------------------------------------------------ the strategy

def programs(min_steps: int = 1, max_steps: int = 6, families=None, all_outputs=None):
    """A hypothesis strategy of ``Program``s (``families``: the template tables to draw
    from; ``all_outputs``: return every step's value, so none is dead code)."""
    from hypothesis import strategies as st

    from .fuzz_ops_templates import FAMILIES, TABLES

    @st.composite
    def strategy(draw):
        n0 = draw(st.integers(2, 5))
        rest = [n for n in range(1, 8) if n != n0]
        n1 = draw(st.sampled_from(rest))
        n2 = draw(st.sampled_from([n for n in rest if n != n1]))
        g = Generator(draw, (n0, n1, n2))
        ndim = draw(st.integers(1, 4))
        shape = ("N",) + tuple(draw(st.integers(1, 5)) for _ in range(ndim - 1))
        dtype = draw(st.sampled_from(["float32", "float32", "float64"]))
        layouts = ["contiguous", "contiguous", "transposed", "strided", "broadcast"]
        g.add_input(InputSpec("x0", "float", shape, dtype, draw(st.sampled_from(layouts))))
        partner = tuple(1 if s != "N" and draw(st.booleans()) else s for s in shape)
        partner = partner[draw(st.integers(0, len(partner) - 1)):] if draw(st.booleans()) \
            else partner
        g.add_input(InputSpec("x1", "float", partner, "float32",
                              draw(st.sampled_from(layouts))))
        g.add_input(InputSpec("k2", "int", shape, "int64"))
        g.add_input(InputSpec("m3", "bool", shape, "bool"))
        g.values = ["x0", "x1", "k2", "m3"]
        for _ in range(draw(st.integers(min_steps, max_steps))):
            table = TABLES[draw(st.sampled_from(families or FAMILIES))]
            template = draw(st.sampled_from(table))
            try:
                g.try_step(template(g))
            except Skip:
                continue
        steps = g.values[4:]
        if not steps:
            g.try_step("x0.cos()")
            steps = g.values[4:]
        every = draw(st.booleans()) if all_outputs is None else all_outputs
        outs = steps if every else sorted(set([steps[-1]] + draw(
            st.lists(st.sampled_from(steps), max_size=1))))
        args = ", ".join(s.name for s in g.specs)
        src = f"def program({args}):\n" + "\n".join(g.lines) + \
            f"\n    return ({', '.join(outs)},)\n"
        return Program(src, g.specs, g.sizes, outs)

    return strategy()
