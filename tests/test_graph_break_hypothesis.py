"""Hypothesis: generated programs full of graph breaks, compiled == eager.

hypothesis writes a function ``prog(x, y)`` as Python source: tensor statements, ``print``s
(with shapes, lengths, keyword arguments), ``.item()`` values used in later arithmetic and
Python comparisons, lists and dicts holding tensors across a break, ``for`` loops (some with a
``print`` inside: that frame runs eagerly), grad-mode ``with`` blocks (nested, some with a
break inside), ``KeyError``s caught by ``try``, iterators live across a break, and ``if``
statements on data — nested up to two
deep, with early ``return``s in either arm.  Every program branches on ``x`` at least once, and
each is called on inputs with all-positive and all-negative ``x`` so both arms run; each arm
prints a tag, so the captured output shows which ways were taken.

Each program is exec'd, compiled with a counting backend and checked against eager on every
input: values, gradients through ``.backward()`` and the printed text must be equal, and a
second round over the same inputs must compile nothing new.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

import minitorch_compile as mtc

from .test_graph_breaks import Call, check_breaks, frames_of, from_source, run_both

UNARY = ["cos", "sin", "tanh", "sigmoid", "abs"]
BINARY = ["+", "-", "*"]
# a branch on x with c = 0 goes one way for an all-positive x and the other for a negative one
SIGN_CONDITIONS = ["{v}.sum() > {c}", "{v}.mean() < {c}", "{v}.sum().item() > {c}",
                   "bool({v}.max() > {c})"]
CONDITIONS = SIGN_CONDITIONS + ["({v} * {w}).sum() > {c}", "{v}.cos().sum() > {c}"]


class Writer:
    """Builds the source text of one program while hypothesis draws its choices."""

    def __init__(self, draw):
        self.draw = draw
        self.lines: list[str] = ["    v0 = x * 1.0"]
        self.values = ["x", "y", "v0"]  # tensors defined on every path so far
        self.scalars: list[str] = []  # Python floats from .item(), defined on every path
        self.n = 0
        self.tags = 0

    def fresh(self, prefix: str) -> str:
        self.n += 1
        return f"{prefix}{self.n}"

    def pick(self) -> str:
        return self.draw(st.sampled_from(self.values))

    def expr(self) -> str:
        a, b = self.pick(), self.pick()
        kind = self.draw(st.sampled_from(["unary", "binary", "scalar", "const"]))
        if kind == "unary":
            return f"{a}.{self.draw(st.sampled_from(UNARY))}()"
        if kind == "binary":
            return f"{a} {self.draw(st.sampled_from(BINARY))} {b}"
        if kind == "scalar" and self.scalars:
            return f"{a} * {self.draw(st.sampled_from(self.scalars))}"
        return f"{a} * {self.draw(st.sampled_from([0.5, -1.5, 2.0]))}"

    def emit(self, depth: int, line: str) -> None:
        self.lines.append("    " * (depth + 1) + line)

    # ------------------------------------------------------------------ statements
    def statement(self, depth: int, top: bool, branches: bool = True) -> bool:
        """Emit one statement; True if it returned (the block must end)."""
        kinds = ["assign", "assign", "print", "item", "container", "if", "loop", "comprehension",
                 "with", "lookup", "iterator"]
        if not branches:  # before the `if` on x: nothing may return early
            kinds.remove("if")
        if not top:
            kinds = ["update", "update", "print", "if", "return"]
        kind = self.draw(st.sampled_from(kinds))
        if kind == "if" and depth >= 2:
            kind = "print"
        if kind == "assign":
            name = self.fresh("v")
            self.emit(depth, f"{name} = {self.expr()}")
            self.values.append(name)
        elif kind == "update":  # inside a branch: only values defined on every path
            self.emit(depth, f"{self.pick_updatable()} = {self.expr()}")
        elif kind == "print":
            self.print_(depth)
        elif kind == "item":
            name = self.fresh("s")
            self.emit(depth, f"{name} = {self.pick()}.sum().item()")
            self.scalars.append(name)
        elif kind == "container":
            box = self.fresh("box")
            a, b = self.pick(), self.pick()
            if self.draw(st.booleans()):
                self.emit(depth, f"{box} = [{a}, {b} * 2, 'tag']")
                self.print_(depth)
                out = self.fresh("v")
                self.emit(depth, f"{out} = {box}[0] + {box}[1]")
            else:
                self.emit(depth, f"{box} = {{'a': {a}, 'pair': ({b}, 3)}}")
                self.print_(depth)
                out = self.fresh("v")
                self.emit(depth, f"{out} = {box}['a'] * {box}['pair'][1] + {box}['pair'][0]")
            self.values.append(out)
        elif kind == "comprehension":  # 3.12+ inlines it (PEP 709); its loop variable may
            name = self.fresh("v")      # shadow a live local, which must come back after it
            t = self.draw(st.sampled_from(["t", self.pick_updatable()]))
            c = self.draw(st.sampled_from([0.5, 2.0]))
            self.emit(depth, f"{name} = mtc.stack([{t} * {c} for {t} in ({self.pick()}, "
                             f"{self.pick()})]).sum(0)")
            self.values.append(name)
        elif kind == "loop":
            target = self.pick_updatable()
            self.emit(depth, f"for i in range({self.draw(st.integers(1, 3))}):")
            self.emit(depth + 1, f"{target} = {target} * 0.5 + i")
            if self.draw(st.booleans()):  # a break inside the loop: the frame runs eagerly
                self.emit(depth + 1, "print('loop', i)")
        elif kind == "with":  # a grad-mode block (maybe nested) with a break inside
            outer = self.draw(st.sampled_from(["mtc.no_grad()", "mtc.enable_grad()",
                                               "mtc.set_grad_enabled(False)"]))
            self.emit(depth, f"with {outer}:")
            inner = depth + 1
            if self.draw(st.booleans()):
                self.emit(inner, "with mtc.enable_grad():")
                inner += 1
            name = self.fresh("v")
            self.emit(inner, f"{name} = {self.expr()}")
            if self.draw(st.booleans()):
                self.print_(inner)
            self.emit(inner, f"{name} = {name} * 1.5")
            self.values.append(name)
        elif kind == "lookup":  # a KeyError raised and caught while tracing
            name, key = self.fresh("v"), self.draw(st.sampled_from(["a", "b"]))
            self.emit(depth, "try:")
            self.emit(depth + 1, f"{name} = {{'a': {self.pick()}}}[{key!r}]")
            self.emit(depth, "except KeyError:")
            self.emit(depth + 1, f"{name} = {self.pick()} * 2")
            self.values.append(name)
        elif kind == "iterator":  # an iterator live across a break
            it, first, second = self.fresh("it"), self.fresh("v"), self.fresh("v")
            self.emit(depth, f"{it} = iter([{self.pick()}, {self.pick()} * 3, 'x'])")
            self.emit(depth, f"{first} = next({it})")
            self.print_(depth)
            self.emit(depth, f"{second} = next({it}) + {first}")
            self.values += [first, second]
        elif kind == "if":
            self.if_(depth, self.condition())
        elif kind == "return":
            self.return_(depth)
            return True
        return False

    def pick_updatable(self) -> str:
        """A value that may be reassigned: not an input (``v0 = x * 1.0`` always exists)."""
        return self.draw(st.sampled_from([v for v in self.values if v not in ("x", "y")]))

    def print_(self, depth: int) -> None:
        what = self.draw(st.sampled_from(["shape", "const", "len", "scalar", "kw"]))
        if what == "shape":
            self.emit(depth, f"print('shape', tuple({self.pick()}.shape))")
        elif what == "len":
            self.emit(depth, f"print('len', len([{self.pick()}, 1]))")
        elif what == "scalar" and self.scalars:
            self.emit(depth, f"print('positive', {self.draw(st.sampled_from(self.scalars))} > 0)")
        elif what == "kw":
            self.emit(depth, "print('a', 'b', sep='|', end='!\\n')")
        else:
            self.emit(depth, f"print('step', {self.draw(st.integers(0, 9))})")

    def condition(self, on_x: bool = False) -> str:
        template = self.draw(st.sampled_from(SIGN_CONDITIONS if on_x else CONDITIONS))
        v = "x" if on_x else self.pick()
        c = 0 if on_x else self.draw(st.sampled_from([-0.5, 0, 0.5]))
        return template.format(v=v, w=self.pick(), c=c)

    def if_(self, depth: int, cond: str) -> int:
        """Emit an ``if``/``else``; each arm first prints its tag (``then3``/``else3``)."""
        self.tags += 1
        tag = self.tags
        self.emit(depth, f"if {cond}:")
        for arm in ("then", "else"):
            if arm == "else":
                self.emit(depth, "else:")
            self.emit(depth + 1, f"print('{arm}{tag}')")
            for _ in range(self.draw(st.integers(0, 2))):
                if self.statement(depth + 1, top=False):
                    break
        return tag

    def return_(self, depth: int) -> None:
        form = self.draw(st.sampled_from(["one", "tuple", "dict", "list"]))
        a, b = self.pick(), self.pick()
        if form == "one":
            self.emit(depth, f"return {a} * 1.0")
        elif form == "tuple":
            self.emit(depth, f"return ({a}, {b} + 1, 'done')")
        elif form == "dict":
            self.emit(depth, f"return {{'a': {a}, 'b': [{b}, 2]}}")
        else:
            self.emit(depth, f"return [{a} - {b}]")


@st.composite
def programs(draw) -> tuple[str, int]:
    """(source of ``prog(x, y)``, the tag of its ``if`` on the sign of x)."""
    w = Writer(draw)
    for _ in range(draw(st.integers(0, 3))):
        w.statement(0, top=True, branches=False)
    tag = w.if_(0, w.condition(on_x=True))  # every program branches on x at least once
    for _ in range(draw(st.integers(0, 3))):
        w.statement(0, top=True)
    w.return_(0)
    return "def prog(x, y):\n" + "\n".join(w.lines) + "\n", tag


def inputs(rng, sign: int):
    x = np.abs(rng.standard_normal(3)).astype(np.float32) + 0.1
    y = rng.standard_normal(3).astype(np.float32)
    return (mtc.tensor(sign * x, requires_grad=True), mtc.tensor(y, requires_grad=True))


@given(programs(), st.integers(0, 2**16))
def test_generated_programs_with_breaks_match_eager(program, seed):
    src, tag = program
    mtc.dynamo.reset()
    rng = np.random.default_rng(seed)
    fn = from_source(src, "prog")
    calls = [inputs(rng, +1), inputs(rng, -1), inputs(rng, +1)]
    try:
        check_breaks(fn, *calls, graphs=None, rtol=1e-4, atol=1e-5)
    except AssertionError as e:
        raise AssertionError(f"{e}\n--- program ---\n{src}") from None
    # both arms of the `if` on x ran: their tags are in the output of the +x and -x calls
    compiled = mtc.compile(fn, backend="eager")
    out = "".join(run_both(fn, compiled, c) for c in calls[:2])
    assert f"then{tag}\n" in out and f"else{tag}\n" in out, (src, out)
    # every resume function was built from this program's code
    assert all(c.co_filename == fn.__code__.co_filename for c in frames_of(fn))


def test_the_writer_makes_breaking_programs():
    """A fixed program in the generator's style: prints, .item(), branches, containers."""
    src = ("def prog(x, y):\n"
           "    v1 = x.cos() * y\n"
           "    s2 = v1.sum().item()\n"
           "    box3 = {'a': v1, 'pair': (y, 3)}\n"
           "    print('len', len([v1, 1]))\n"
           "    v4 = box3['a'] * box3['pair'][1] + box3['pair'][0]\n"
           "    if x.sum() > 0:\n"
           "        print('then1')\n"
           "        v4 = v4 * s2\n"
           "        if v4.mean() < 0.5:\n"
           "            print('then2')\n"
           "            return {'a': v4, 'b': [v1, 2]}\n"
           "        else:\n"
           "            print('else2')\n"
           "    else:\n"
           "        print('else1')\n"
           "    return (v4, v1 + 1, 'done')\n")
    fn = from_source(src, "prog")
    rng = np.random.default_rng(0)
    check_breaks(fn, inputs(rng, 1), inputs(rng, -1), Call(*inputs(rng, 1)), graphs=None)
    assert len(frames_of(fn)) > 3
