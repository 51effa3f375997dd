"""Notebooks stand on their own: no path only this project's authors have, an opening that says
what the chapter teaches and what to read first, and a closing "What to try next"."""

import json
import pathlib
import re

import pytest

NOTEBOOKS = sorted((pathlib.Path(__file__).parent.parent / "notebooks").glob("*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_stands_on_its_own(path):
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    text = "".join("".join(c["source"]) for c in cells)
    assert "shared/seeds" not in text
    first, last = "".join(cells[0]["source"]), "".join(cells[-1]["source"])
    assert cells[0]["cell_type"] == "markdown" and first.startswith("# ")
    assert "**Read first:**" in first
    assert cells[-1]["cell_type"] == "markdown" and last.startswith("## What to try next")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_numbered_chapters_count_from_one(path):
    """Numbered headings (``## 3. ...``) run 1, 2, 3, ... with no gap or repeat, so a chapter
    inserted in the middle renumbers the ones after it."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    numbers = [int(m) for c in cells if c["cell_type"] == "markdown"
               for m in re.findall(r"^## (\d+)\. ", "".join(c["source"]), re.M)]
    assert numbers == list(range(1, len(numbers) + 1)), numbers
