"""The figures in benchmarks/README.md are written by the benchmarks, never pasted.

``python benchmarks/bench_x.py --write-readme`` prints as usual and also replaces the text
between ``<!-- figures: bench_x.py -->`` and ``<!-- end figures: bench_x.py -->`` in
``benchmarks/README.md`` with what it printed (in a ``text`` block).  The deterministic figures
(bytes saved for backward) and the regions themselves are checked by
``tests/test_benchmarks_readme.py``; the prose around a region reads the numbers from it.
"""

from __future__ import annotations

import contextlib
import io
import re
import sys
from pathlib import Path

README = Path(__file__).with_name("README.md")


def region_pattern(script: str) -> re.Pattern:
    name = re.escape(script)
    return re.compile(rf"(<!-- figures: {name} -->\n)(.*?)(<!-- end figures: {name} -->)", re.S)


def read_figures(script: str) -> str:
    """The text of ``script``'s region (without its fence)."""
    match = region_pattern(script).search(README.read_text(encoding="utf-8"))
    if match is None:
        raise LookupError(f"benchmarks/README.md has no figures region for {script}")
    return re.sub(r"\A```text\n|```\n\Z", "", match.group(2))


def write_figures(script: str, text: str) -> None:
    readme = README.read_text(encoding="utf-8")
    pattern = region_pattern(script)
    if pattern.search(readme) is None:
        raise LookupError(f"benchmarks/README.md has no figures region for {script}")
    body = "```text\n" + "\n".join(line.rstrip() for line in text.strip().splitlines()) + "\n```\n"
    README.write_text(pattern.sub(lambda m: m.group(1) + body + m.group(3), readme),
                      encoding="utf-8")


class _Tee(io.TextIOBase):
    def __init__(self, *streams):
        self.streams = streams

    def write(self, s: str) -> int:
        for stream in self.streams:
            stream.write(s)
        return len(s)

    def flush(self) -> None:
        for stream in self.streams:
            stream.flush()


@contextlib.contextmanager
def figures_for_readme(script: str, enabled: bool):
    """Inside the block, what is printed also goes to ``script``'s README region (at the end,
    and only if the block finished)."""
    if not enabled:
        yield
        return
    captured = io.StringIO()
    with contextlib.redirect_stdout(_Tee(sys.stdout, captured)):
        yield
    write_figures(script, captured.getvalue())
    print(f"(figures written to {README})", file=sys.stderr)
