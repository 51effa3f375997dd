"""Programs from PyTorch's own Inductor test suite, under our Inductor and torch's (issue 9,
item 8: fidelity to PyTorch).

The programs (``torch_suite_*.py``) are the ``fn``s of ``CommonTemplate`` tests in PyTorch's
``test/inductor/test_torchinductor.py``, each written once over a namespace ``L``.  For every
program, always (torch or not):

* compiled with our default backend (``inductor``) equals our eager mode — values, dtypes,
  shapes, gradients of the ``[bw]`` variants, and inputs the program mutates; a graph that
  falls back to eager fails the test (``strict_inductor``);
* our generated kernels, forward and forward + backward, are no more than torch 2.13's CPU
  Inductor counts for the same program (``generated_kernel_count``; ``torch_suite_counts.py``,
  recorded from torch).  torch's CPU metric counts each loop nest of its C++ kernel
  functions (a layer norm is one ``cpp_fused_*`` function and 8 "kernels"), so the table also
  holds torch's number of kernel *functions*, compared in ``docs/inductor.md`` section 13
  (checked here: ``test_docs_figures``).

Where torch is installed, ``test_against_torch`` runs each program under ``torch.compile`` too:
the values must agree with ours and torch's counts must still be the recorded ones.  torch's
CPU Inductor compiles C++ (seconds per program on a cold cache), so by default it runs a sample
of one program per theme; ``MTC_TORCH_SUITE=all`` runs every program.
"""

from __future__ import annotations

import os

import pytest

import minitorch_compile as mtc

from .torch_suite import all_programs, assert_same, make_inputs, run, torch_setup
from .torch_suite_counts import TORCH_KERNELS, TORCH_VERSION

PROGRAMS = all_programs()
IDS = [p.name for p in PROGRAMS]

# one program per theme, compared with torch by default
SAMPLE = {"test_vertical_fusion1", "test_div1", "test_gelu[bw]", "test_views1[5x7->35]",
          "test_permute1", "test_cat[bw]", "test_sum4", "test_softmax[bw]",
          "test_layer_norm[bw]", "test_batch_norm_2d[train,bw]", "test_linear2[bw]",
          "test_index_select[bw]", "test_inplace_mixed_dtype_ops",
          "test_index_put_as_masked_fill", "test_std", "test_sum_int[bool]"}


# programs where we make more kernels than torch, and why (the test asserts they still do, so
# a fix removes its entry); docs/inductor.md section 13 lists them too
KNOWN_MORE: dict = {}  # (test_index_put1 was here until index_put lowered to a Scatter)


def test_every_program_has_torchs_counts():
    assert sorted(TORCH_KERNELS) == sorted(IDS)
    assert len(IDS) == len(set(IDS))
    assert SAMPLE <= set(IDS) and set(KNOWN_MORE) <= set(IDS)


@pytest.mark.usefixtures("strict_inductor")
@pytest.mark.parametrize("prog", PROGRAMS, ids=IDS)
def test_compiled_equals_eager_with_no_more_kernels_than_torch(prog):
    arrays = make_inputs(prog)
    eager = run(mtc, prog, arrays, compiled=False)
    compiled = run(mtc, prog, arrays, compiled=True, counts=True)
    assert_same(compiled, eager, prog, "compiled vs eager")
    torch_fw, torch_all = TORCH_KERNELS[prog.name][:2]
    no_more = compiled.fw_kernels <= torch_fw and compiled.all_kernels <= torch_all
    assert no_more != (prog.name in KNOWN_MORE), \
        (prog.name, compiled.fw_kernels, compiled.all_kernels, torch_fw, torch_all)



@pytest.fixture(scope="module")
def torch():
    torch = pytest.importorskip("torch")
    if torch.__version__.split("+")[0] != TORCH_VERSION:
        pytest.skip(f"the counts were recorded with torch {TORCH_VERSION}")
    try:
        torch.compile(lambda x: x.cos() + 1)(torch.ones(3))
    except Exception as e:  # noqa: BLE001 - no C++ compiler, or another setup problem
        pytest.skip(f"torch's CPU Inductor does not run here: {e}")
    return torch_setup()


ALL = os.environ.get("MTC_TORCH_SUITE") == "all"


@pytest.mark.torch
@pytest.mark.usefixtures("strict_inductor")
@pytest.mark.parametrize("prog", [p for p in PROGRAMS if ALL or p.name in SAMPLE],
                         ids=[p.name for p in PROGRAMS if ALL or p.name in SAMPLE])
def test_against_torch(torch, prog):
    arrays = make_inputs(prog)
    ours = run(mtc, prog, arrays, compiled=True, counts=True)
    theirs = run(torch, prog, arrays, compiled=True, counts=True)
    assert_same(ours, theirs, prog, "ours vs torch.compile")
    assert (theirs.fw_kernels, theirs.all_kernels, theirs.fw_functions,
            theirs.all_functions) == TORCH_KERNELS[prog.name]
    no_more = ours.fw_kernels <= theirs.fw_kernels and ours.all_kernels <= theirs.all_kernels
    assert no_more != (prog.name in KNOWN_MORE)


def _section_13() -> str:
    path = os.path.join(os.path.dirname(__file__), "..", "docs", "inductor.md")
    with open(path) as f:
        text = f.read()
    return text[text.index("## 13. Fidelity to torch"):]


@pytest.mark.usefixtures("strict_inductor")
def test_docs_figures():
    """docs/inductor.md section 13: the summary counts and every row of its table."""
    import re

    doc = _section_13()
    ours = {}
    for prog in PROGRAMS:
        res = run(mtc, prog, make_inputs(prog), compiled=True, counts=True)
        ours[prog.name] = (res.fw_kernels, res.all_kernels)
    kinds = {"equal": 0, "fewer": 0, "more": 0}
    functions_fewer = 0
    for name, (fw, al) in ours.items():
        t_fw, t_all, f_fw, f_all = TORCH_KERNELS[name]
        kinds["equal" if (fw, al) == (t_fw, t_all) else
              "fewer" if fw <= t_fw and al <= t_all else "more"] += 1
        functions_fewer += fw > f_fw or al > f_all
    stated = [int(n) for n in re.findall(r"\*\*(\d+)\*\*", doc)]
    assert f"runs {len(PROGRAMS)} programs" in doc and f"of the {len(PROGRAMS)}" in doc
    assert stated == [kinds["equal"], kinds["fewer"], kinds["more"], functions_fewer], stated
    rows = re.findall(r"^\| `(.+?)` \| (\d+) / (\d+) \| (\d+) / (\d+) \| (\d+) / (\d+) \|$", doc,
                      re.MULTILINE)
    assert len(rows) >= 10
    for name, *numbers in rows:
        numbers = tuple(int(n) for n in numbers)
        assert numbers == ours[name] + TORCH_KERNELS[name], (name, numbers)
