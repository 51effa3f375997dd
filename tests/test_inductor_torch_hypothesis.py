"""Random programs under our Inductor and torch's: values and kernel counts (optional: skipped
without torch).

Hypothesis writes small straight-line programs over a namespace ``L`` — pointwise ops,
reductions with ``keepdim``, softmax, broadcasting partners, views (transpose, permute, slices,
reshape, flip) — keeping each step only if our eager mode accepts it.  The program then runs
through ``mtc.compile`` and ``torch.compile``: the values must agree, and our generated
kernels must be no more than torch 2.13's CPU Inductor counts (``generated_kernel_count``, the
target of issue 9).  torch compiles C++ for every new program, so few examples run
(derandomized, as every hypothesis test here); ``HYPOTHESIS_PROFILE=slow`` runs many.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import minitorch_compile as mtc

from .torch_suite import Program, array, assert_same, make_inputs, run, torch_setup

pytestmark = pytest.mark.torch

UNARY = ["{a}.cos()", "{a}.exp()", "L.relu({a})", "L.sigmoid({a})", "({a} * 2 + 1)",
         "{a}.abs().sqrt()", "L.tanh({a})", "({a} > 0).float()"]
BINARY = ["({a} + {b})", "({a} * {b})", "L.maximum({a}, {b})", "L.where({a} > {b}, {a}, {b})",
          "({a} - {b} / 2)"]
REDUCE = ["{a}.sum({d}, keepdim=True)", "{a}.amax({d}, keepdim=True)", "{a}.mean({d})",
          "L.softmax({a}, {d})", "{a}.sum()", "L.nn.functional.layer_norm({a}, ({last},))"]
VIEWS = ["{a}.transpose(0, -1)", "{a}.unsqueeze(0)", "{a}.reshape(-1)", "{a}[1:]",
         "{a}.permute({perm})", "{a}.flip(0)", "({a} + 1).reshape({rev})"]
TABLES = {"u": UNARY, "b": BINARY, "r": REDUCE, "v": VIEWS}
EXAMPLES = max(4, settings().max_examples // 6)


@st.composite
def programs(draw):
    ndim = draw(st.integers(1, 3))
    shape = tuple(draw(st.lists(st.integers(2, 6), min_size=ndim, max_size=ndim)))
    partner = tuple(1 if draw(st.booleans()) else s for s in shape)
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    arrays = [rng.standard_normal(shape).astype(np.float32),
              rng.standard_normal(partner).astype(np.float32)]
    env = {"L": mtc, "t0": mtc.tensor(arrays[0]), "t1": mtc.tensor(arrays[1])}
    names, lines = ["t0", "t1"], []
    for _ in range(draw(st.integers(2, 6))):
        tmpl = draw(st.sampled_from(TABLES[draw(st.sampled_from("uubbrv"))]))
        a, b = draw(st.sampled_from(names)), draw(st.sampled_from(names))
        x = env[a]
        expr = tmpl.format(a=a, b=b, d=draw(st.integers(-x.ndim, max(x.ndim - 1, 0))),
                           last=x.shape[-1] if x.ndim else 1, perm=tuple(range(x.ndim))[::-1],
                           rev=tuple(x.shape)[::-1])
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                value = eval(expr, dict(env))  # noqa: S307 - our own generated text
        except Exception:  # noqa: BLE001 - eager refuses: not a valid step
            continue
        name = f"t{len(names)}"
        env[name] = value
        names.append(name)
        lines.append(f"    {name} = {expr}")
    assume(lines)
    src = "def program(t0, t1):\n" + "\n".join(lines) + f"\n    return ({names[-1]},)\n"
    return src, arrays


def _program(src, arrays) -> Program:
    def build(L):
        ns = {"L": L}
        exec(src, ns)  # noqa: S102 - our own generated program
        return ns["program"]
    return Program("random", build, tuple(array(a) for a in arrays), tol=2e-4)


@pytest.fixture(scope="module")
def torch():
    pytest.importorskip("torch")
    torch = torch_setup()
    try:
        torch.compile(lambda x: x.cos() + 1)(torch.ones(3))
    except Exception as e:  # noqa: BLE001 - no C++ compiler, or another setup problem
        pytest.skip(f"torch's CPU Inductor does not run here: {e}")
    return torch


@settings(max_examples=EXAMPLES)
@given(programs())
def test_random_programs_no_more_kernels_than_torch(torch, prog):
    src, arrays = prog
    p = _program(src, arrays)
    inputs = make_inputs(p)
    mtc.dynamo.reset()
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message="inductor:")
        ours = run(mtc, p, inputs, compiled=True, counts=True)
    eager = run(mtc, p, inputs, compiled=False)
    assert_same(ours, eager, p, f"compiled vs eager\n{src}")
    try:
        theirs = run(torch, p, inputs, compiled=True, counts=True)
    except Exception:  # noqa: BLE001 - a step torch refuses (our eager accepted it)
        assume(False)
    assert_same(ours, theirs, p, f"ours vs torch\n{src}")
    assert ours.fw_kernels <= theirs.fw_kernels, (src, ours.fw_kernels, theirs.fw_kernels)
