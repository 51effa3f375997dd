"""Documented examples are tests: the checker behind ``tests/test_docs.py``.

Every fenced ``python`` block of ``README.md`` and ``docs/*.md`` is executed, and where the page
shows the block's output, the real output must match it.  Sybil (a well-kept library for
exactly this) finds the fenced blocks; this module only adds the page conventions below.

The conventions a page author writes to
---------------------------------------
* **Order and namespace.** The ``python`` blocks of one page run top to bottom in one namespace,
  in a fresh interpreter (one subprocess per page): a page reads like one Python session, so
  ``__compiled_fn_N`` numbers, seeds and "warn once" messages are what a reader sees when they
  run the page from the top.  Block *N* (counting the page's ``python`` blocks from 1) is
  compiled as the file ``<block N>``, with line numbers counted inside the block, so tracebacks,
  ``co_filename`` and recompile logs read ``<block 2>:17`` whatever lies above the block.
* **Output.** A ``text`` block *directly* after a ``python`` block (nothing but blank lines in
  between) is that block's output: everything it writes to stdout and stderr (prints, logs,
  warnings), in order.  A block with no ``text`` block after it may print anything.
* **Comparison.** Trailing whitespace of each line and trailing blank lines are ignored, and
  the *normalisation* below is applied to both sides; then they must be equal, except that
  ``...`` in the expected text matches any text (doctest's ``ELLIPSIS``; use it for timings).
  Normalisation (``normalize``), kept small on purpose:

  - memory addresses ``0x7f3a...`` -> ``0x?``;
  - object ids (integers of 12 or more digits, what ``id()`` returns) -> ``<id>``;
  - absolute paths of this checkout or of the temp directory -> ``<repo>`` / ``<tmp>``.
* **Markers** — an HTML comment on the line directly before the ``python`` block, invisible in
  the rendered page but visible in its source:

  - ``<!-- skip: reason -->``: the block is not run (a reason is required);
  - ``<!-- output: python3.11 -->``: the block runs on every Python version, but its output is
    compared only on the version named (for output that legitimately depends on it: ``dis``
    listings, bytecode offsets, decompiled code, resume functions named after an offset).
    Use it only on blocks that need it;
  - ``<!-- source: minitorch_compile/ops/pointwise.py -->``: the block *quotes* that package
    file: it is not run, and each of its paragraphs (separated by blank lines) must be
    consecutive lines of the file, so a quotation cannot go stale.  (Or print the source with
    ``inspect.getsource`` in a block whose output is shown — then it is checked too.)
* An exception escaping a block fails the page (a block that demonstrates an error catches it
  and prints it).  Blocks in other languages (``bash``, ``text`` on its own) are not run.

Run by hand: ``python -m tests.doc_examples docs/dynamo.md`` prints a report (exit status 1 on
any failure); ``--update`` rewrites the mismatching ``text`` blocks with the real output (then
read the diff: the text around it may need changing too).
"""

from __future__ import annotations

import contextlib
import difflib
import doctest
import io
import json
import linecache
import re
import sys
import tempfile
import traceback
from dataclasses import asdict, dataclass
from pathlib import Path

from sybil import Document
from sybil.parsers.markdown.lexers import FencedCodeBlockLexer

REPO = Path(__file__).resolve().parent.parent
PAGES = ["README.md", *sorted(str(p.relative_to(REPO)) for p in (REPO / "docs").glob("*.md"))]

MARKER = re.compile(r"<!--\s*(skip|output|source)\s*:\s*(.*?)\s*-->\s*\Z")
VERSION = f"python{sys.version_info[0]}.{sys.version_info[1]}"

_NORMALIZE = [
    (re.compile(r"0x[0-9a-fA-F]+"), "0x?"),
    (re.compile(r"(?<![\w.])\d{12,}(?![\w.])"), "<id>"),
]


def normalize(text: str) -> str:
    """The small, documented normalisation applied to both expected and actual output."""
    roots = [(str(REPO), "<repo>"), (tempfile.gettempdir(), "<tmp>")]
    for root, name in roots:
        text = text.replace(root, name)
    # a checkout elsewhere (the page was written in another directory): the part before the
    # package or docs directory is a path of the author's machine
    text = re.sub(r"(?:/[\w.+-]+)+/(?=(?:minitorch_compile|docs|tests)/)", "<repo>/", text)
    for pattern, replacement in _NORMALIZE:
        text = pattern.sub(replacement, text)
    lines = [line.rstrip() for line in text.splitlines()]
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines) + "\n"


@dataclass
class Block:
    """One ``python`` block of a page, with the ``text`` block that shows its output."""

    number: int                 # 1-based among the page's python blocks: file ``<block N>``
    line: int                   # line of the opening fence in the page
    source: str
    expected: str | None        # the text block's content, or None
    expected_span: tuple | None  # (start, end) of the text block's content in the page
    skip: str | None            # the reason, when marked ``<!-- skip: reason -->``
    output_only_on: str | None  # ``python3.11`` when marked ``<!-- output: python3.11 -->``
    quotes: str | None = None   # a package file, when marked ``<!-- source: path -->``


@dataclass
class Result:
    line: int
    number: int
    status: str                 # ok | mismatch | error | skipped | not compared
    detail: str = ""
    actual: str | None = None


def parse(path: str | Path) -> list[Block]:
    """The page's python blocks, paired with their output blocks and markers."""
    text = Path(path).read_text(encoding="utf-8")
    document = Document(text, str(path))
    fences = list(FencedCodeBlockLexer(language=r"[\w+-]*")(document))
    blocks: list[Block] = []
    for i, region in enumerate(fences):
        if region.lexemes["language"] != "python":
            continue
        expected = span = None
        nxt = fences[i + 1] if i + 1 < len(fences) else None
        if nxt is not None and nxt.lexemes["language"] == "text" \
                and not text[region.end:nxt.start].strip():
            start, end = _content_span(text, nxt)  # raw: Sybil's lexeme is dedented
            expected, span = text[start:end], (start, end)
        skip = output_on = quotes = None
        before = text[:region.start].rstrip("\n").rsplit("\n", 1)[-1]
        marker = MARKER.search(before)
        if marker is not None:
            kind, argument = marker.groups()
            if not argument:
                raise ValueError(f"{path}:{_line(text, region.start)}: a <!-- {kind}: ... --> "
                                 "marker needs an argument (a reason / a python version)")
            if kind == "skip":
                skip = argument
            elif kind == "source":
                quotes = argument
            else:
                if not re.fullmatch(r"python\d+\.\d+", argument):
                    raise ValueError(f"{path}:{_line(text, region.start)}: write "
                                     f"<!-- output: python3.11 -->, not {argument!r}")
                output_on = argument
        start, end = _content_span(text, region)
        blocks.append(Block(len(blocks) + 1, _line(text, region.start), text[start:end],
                            expected, span, skip, output_on, quotes))
    return blocks


def _content_span(text: str, region) -> tuple[int, int]:
    """The lines between a fenced block's opening and closing fence."""
    start = text.index("\n", region.start) + 1
    end = text.rfind("\n", 0, region.end) + 1
    return start, max(start, end)


def _line(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


def run_block(block: Block, namespace: dict) -> tuple[str, str | None]:
    """Execute one block in the page's namespace; (captured stdout+stderr, error or None)."""
    filename = f"<block {block.number}>"
    lines = block.source.splitlines(keepends=True)
    linecache.cache[filename] = (len(block.source), None, lines, filename)  # tracebacks, inspect
    out = io.StringIO()
    error = None
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        try:
            exec(compile(block.source, filename, "exec"), namespace)
        except BaseException:  # noqa: BLE001 - reported as the block's failure
            error = traceback.format_exc()
    return out.getvalue(), error


def missing_from_source(quote: str, path: Path) -> str | None:
    """The first paragraph of ``quote`` that is not a run of consecutive lines of ``path``."""
    if not path.is_file():
        return f"(no file {path})"
    lines = [line.rstrip() for line in path.read_text(encoding="utf-8").splitlines()]
    for paragraph in re.split(r"\n\s*\n", quote.strip("\n")):
        want = [line.rstrip() for line in paragraph.splitlines()]
        if not any(lines[i:i + len(want)] == want for i in range(len(lines))):
            return paragraph
    return None


def check(expected: str, actual: str) -> str | None:
    """None if ``actual`` matches ``expected`` under the page conventions, else a diff."""
    want, got = normalize(expected), normalize(actual)
    if doctest.OutputChecker().check_output(want, got, doctest.ELLIPSIS):
        return None
    diff = difflib.unified_diff(want.splitlines(), got.splitlines(), "expected (normalised)",
                                "actual (normalised)", lineterm="")
    return "\n".join(diff)


def run_page(path: str | Path) -> list[Result]:
    """Run every python block of a page in order (in this interpreter) and compare outputs."""
    namespace: dict = {"__name__": "__main__"}
    results: list[Result] = []
    failed = False
    for block in parse(path):
        if block.quotes is not None:
            missing = missing_from_source(block.source, REPO / block.quotes)
            results.append(Result(block.line, block.number, "mismatch" if missing else "ok",
                                  f"not in {block.quotes}:\n{missing}" if missing else ""))
            continue
        if block.skip is not None:
            results.append(Result(block.line, block.number, "skipped", block.skip))
            continue
        if failed:
            results.append(Result(block.line, block.number, "error",
                                  "not run: an earlier block raised"))
            continue
        actual, error = run_block(block, namespace)
        if error is not None:
            failed = True
            results.append(Result(block.line, block.number, "error",
                                  f"{actual}{error}", actual))
            continue
        if block.expected is None:
            results.append(Result(block.line, block.number, "ok", actual=actual))
        elif block.output_only_on not in (None, VERSION):
            results.append(Result(block.line, block.number, "not compared",
                                  f"output compared on {block.output_only_on} only", actual))
        else:
            diff = check(block.expected, actual)
            results.append(Result(block.line, block.number, "ok" if diff is None else "mismatch",
                                  diff or "", actual))
    return results


def report(path: str, results: list[Result]) -> str:
    bad = [r for r in results if r.status in ("mismatch", "error")]
    lines = [f"{path}: {len(results)} python blocks, {len(bad)} failing"]
    for r in bad:
        lines.append(f"--- {path}:{r.line} (<block {r.number}>): {r.status}")
        lines.append(r.detail.rstrip())
    return "\n".join(lines)


def update(path: str, results: list[Result]) -> int:
    """Rewrite the text blocks of mismatching blocks with their real output."""
    text = Path(path).read_text(encoding="utf-8")
    spans = {b.line: b.expected_span for b in parse(path)}
    edits = [(spans[r.line], r.actual) for r in results if r.status == "mismatch"]
    for (start, end), actual in sorted(edits, reverse=True):
        new = "\n".join(line.rstrip() for line in actual.rstrip().splitlines()) + "\n"
        text = text[:start] + new + text[end:]
    Path(path).write_text(text, encoding="utf-8")
    return len(edits)


def main(argv: list[str]) -> int:
    as_json = "--json" in argv
    do_update = "--update" in argv
    paths = [a for a in argv if not a.startswith("--")] or PAGES
    status = 0
    for path in paths:
        results = run_page(path)
        if as_json:
            print(json.dumps([asdict(r) for r in results]))
        else:
            print(report(path, results))
        if any(r.status in ("mismatch", "error") for r in results):
            status = 1
        if do_update:
            print(f"{path}: updated {update(path, results)} text blocks", file=sys.stderr)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
