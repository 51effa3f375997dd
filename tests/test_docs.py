"""Every python block of README.md and docs/*.md runs, and shows its real output.

The conventions (one namespace per page, ``text`` block = output, ``<!-- skip: reason -->``,
``<!-- output: python3.11 -->``, the normalisation) are documented in ``tests/doc_examples.py``.
Each page runs in a fresh interpreter, as a reader runs it; the tests of the checker itself run
small pages made here, so a checker that accepts anything cannot pass.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from .doc_examples import PAGES, REPO, VERSION, parse, run_page

FENCE = "```"


def _run_in_subprocess(page: str) -> list[dict]:
    proc = subprocess.run([sys.executable, "-m", "tests.doc_examples", "--json", page],
                          cwd=REPO, capture_output=True, text=True, timeout=300)
    lines = proc.stdout.strip().splitlines()
    if not lines:
        pytest.fail(f"the doc checker crashed on {page}:\n{proc.stderr}")
    return json.loads(lines[-1])


@pytest.mark.parametrize("page", PAGES)
def test_page_examples(page):
    results = _run_in_subprocess(page)
    bad = [r for r in results if r["status"] in ("mismatch", "error")]
    report = "\n".join(f"--- {page}:{r['line']} (<block {r['number']}>): {r['status']}\n"
                       f"{r['detail']}" for r in bad)
    assert not bad, f"{len(bad)} of {len(results)} python blocks of {page} fail " \
                    f"(rewrite with `python -m tests.doc_examples --update {page}`, then read " \
                    f"the diff):\n{report}"


def test_readme_command_blocks_are_not_run():
    """The README's bash blocks (setup and the test command) are shown, never executed."""
    text = (REPO / "README.md").read_text()
    assert text.count(f"{FENCE}bash") >= 2
    sources = [b.source for b in parse(REPO / "README.md")]
    assert not any("pip install" in s or "pytest" in s for s in sources)


# ------------------------------------------------------------------ the checker checks
def _page(tmp_path, body: str):
    path = tmp_path / "page.md"
    path.write_text(textwrap.dedent(body).replace("~~~", FENCE))
    return path


def test_checker_compares_output_and_shares_one_namespace(tmp_path):
    path = _page(tmp_path, """
        ~~~python
        x = 41
        ~~~

        ~~~python
        print(x + 1, hex(id(x)), id(x))
        ~~~
        ~~~text
        42 0x7f00deadbeef 140000000000000
        ~~~

        ~~~python
        print("real")
        ~~~
        ~~~text
        pasted
        ~~~
        """)
    results = run_page(path)
    assert [r.status for r in results] == ["ok", "ok", "mismatch"]
    assert "-pasted" in results[2].detail and "+real" in results[2].detail


def test_checker_reports_errors_and_stderr(tmp_path):
    path = _page(tmp_path, """
        ~~~python
        import sys, warnings
        print("to stderr", file=sys.stderr)
        ~~~
        ~~~text
        to stderr
        ~~~

        ~~~python
        1 / 0
        ~~~

        ~~~python
        print("never")
        ~~~
        """)
    statuses = [r.status for r in run_page(path)]
    assert statuses == ["ok", "error", "error"]


def test_checker_markers(tmp_path):
    other = "python3.0" if VERSION != "python3.0" else "python3.1"
    path = _page(tmp_path, f"""
        <!-- skip: needs a GPU -->
        ~~~python
        raise RuntimeError("not run")
        ~~~

        <!-- output: {other} -->
        ~~~python
        print("differs by version")
        ~~~
        ~~~text
        something else
        ~~~

        <!-- output: {VERSION} -->
        ~~~python
        print("this version")
        ~~~
        ~~~text
        something else
        ~~~
        """)
    results = run_page(path)
    assert [r.status for r in results] == ["skipped", "not compared", "mismatch"]
    assert results[0].detail == "needs a GPU"


def test_checker_needs_a_reason_to_skip(tmp_path):
    path = _page(tmp_path, """
        <!-- skip: -->
        ~~~python
        print(1)
        ~~~
        """)
    with pytest.raises(ValueError, match="needs an argument"):
        parse(path)


def test_checker_ellipsis_and_block_filenames(tmp_path):
    path = _page(tmp_path, """
        ~~~python
        import time
        print(f"took {time.perf_counter():.4f}s")
        ~~~
        ~~~text
        took ...s
        ~~~

        ~~~python
        def f():
            return 1
        print(f.__code__.co_filename, f.__code__.co_firstlineno)
        ~~~
        ~~~text
        <block 2> 1
        ~~~
        """)
    assert [r.status for r in run_page(path)] == ["ok", "ok"]
