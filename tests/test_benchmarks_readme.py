"""benchmarks/README.md: its figures come from a run, and its claims agree with them.

Each bench script writes its output into a marked region of the README (``--write-readme``,
``benchmarks/_readme.py``).  Timings cannot be checked here (they depend on the machine); the
rest is: the regions exist and hold what the scripts print, the bytes-saved figures of our
partitioners are what the code computes today, and the claims the prose makes about the table
hold in it.
"""

from __future__ import annotations

import re
import sys

import pytest

from .doc_examples import REPO

BENCH = REPO / "benchmarks"
sys.path.insert(0, str(BENCH))

from _readme import read_figures  # noqa: E402 - benchmarks/_readme.py

SCRIPTS = {  # script -> a line its output always contains
    "bench_eager.py": "Part 1 — overhead per eager op",
    "bench_dynamo.py": "Part 3 — dynamic shapes",
    "bench_aot.py": "Bytes saved for backward (float32; count x bytes)",
    "bench_inductor.py": "median of the 3 runs, cell by cell:",
}


@pytest.mark.parametrize("script", sorted(SCRIPTS))
def test_each_benchmark_writes_its_figures_region(script):
    assert "--write-readme" in (BENCH / script).read_text()
    assert SCRIPTS[script] in read_figures(script)


def _aot_rows() -> dict[str, list[str]]:
    """``{program: [default, min-cut (ours), min-cut (torch)]}`` from the README's table."""
    rows = {}
    for line in read_figures("bench_aot.py").splitlines():
        cells = re.findall(r"\d+ x \d+|-(?=\s)", line)
        name = line[:20].strip()
        if name and len(cells) >= 2 and not line.startswith(("program", "graph")):
            rows[name] = cells
    return rows


def test_bytes_saved_are_what_the_partitioners_save_today():
    import bench_aot

    from minitorch_compile.aot import default_partition, min_cut_rematerialization_partition

    rows = _aot_rows()
    assert [name for name, _, _ in bench_aot.CASES] == list(rows)
    for name, builder, shapes in bench_aot.CASES:
        n_def, b_def, _ = bench_aot.ours(builder, shapes, default_partition)
        n_mc, b_mc, _ = bench_aot.ours(builder, shapes, min_cut_rematerialization_partition)
        assert rows[name][:2] == [f"{n_def} x {b_def}", f"{n_mc} x {b_mc}"], \
            f"{name}: re-run `python benchmarks/bench_aot.py --write-readme`"


def test_the_prose_claims_hold_in_the_table():
    rows = _aot_rows()
    text = (BENCH / "README.md").read_text()
    # "cos(cos(x)) saves one tensor with min-cut (two by default), as torch's does"
    assert "saves one tensor with min-cut (two by default), as torch's does" in text
    assert rows["cos(cos(x))"][0].startswith("2 x") and rows["cos(cos(x))"][1].startswith("1 x")
    assert rows["cos(cos(x))"][2] in ("-", rows["cos(cos(x))"][1])
    # "Softmax and attention save what torch saves ... the same as the Function rows"
    assert "Softmax and attention save what torch saves" in text
    for program in ("softmax", "attention"):
        assert rows[program][1] == rows[f"{program}, Function"][1]
        assert rows[program][2] in ("-", rows[program][1])
    # "checks its entries newest first (as torch does)": what eval_frame does
    assert "oldest first" not in text and "newest first (as torch" in text
    import inspect

    from minitorch_compile.dynamo.eval_frame import _JitFunction

    assert "for entry in reversed(entries)" in inspect.getsource(_JitFunction.__call__)


def test_the_aot_docs_quote_the_benchmark_table():
    """docs/aot_autograd.md and notebook 05 show the bytes-saved table: the generated one."""
    def table(text: str) -> list[str]:
        lines = text.splitlines()
        start = next(i for i, line in enumerate(lines) if line.startswith("program "))
        end = next((i for i in range(start, len(lines)) if not lines[i].strip()
                    or lines[i].startswith("```")), len(lines))
        return [line.rstrip() for line in lines[start:end]]

    import nbformat

    generated = table(read_figures("bench_aot.py"))
    docs = (REPO / "docs" / "aot_autograd.md").read_text()
    assert table(docs) == generated, \
        "copy the table of benchmarks/README.md (written by bench_aot.py) into the page"
    notebook = nbformat.read(REPO / "notebooks" / "05_aot_autograd.ipynb", as_version=4)
    prose = "\n".join(c.source for c in notebook.cells if c.cell_type == "markdown")
    assert table(prose) == generated, "and into notebook 05's section 12"
