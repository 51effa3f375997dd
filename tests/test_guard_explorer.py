"""``mtc.viz.draw_guards``: every guard of every entry, grouped by source, coloured by kind; the
guard a recompile failed highlighted with the message ``failure_reason`` gives."""

import re

import pytest

import minitorch_compile as mtc
from minitorch_compile.dynamo import cache_entries
from minitorch_compile.viz.html import FAILED, GUARD_COLORS, guard_group


@pytest.fixture(autouse=True)
def _fresh():
    mtc.dynamo.reset()
    yield
    mtc.dynamo.reset()


def _breaking(x, y):
    a = x.cos() * 2
    print("break")
    return a + y.sin()


def test_recompile_records_the_failed_guard_and_its_words(capsys):
    f = mtc.compile(_breaking, backend="eager")
    f(mtc.randn(4), mtc.randn(4))
    L = {"x": mtc.randn(6), "y": mtc.randn(6)}
    expected = cache_entries(f)[0].guard.failure_reason(L)
    f(L["x"], L["y"])
    entries = cache_entries(f)
    assert len(entries) == 2
    (idx, gi, msg), = entries[1].recompile_failures
    assert idx == 0 and msg == expected  # the same words eval_frame logs
    failed_guard = entries[0].guard.guard_set.guards[gi]
    assert failed_guard.kind == "TENSOR_MATCH" and failed_guard.source_name == "L['x']"
    assert not hasattr(entries[0], "recompile_failures")  # the first compile was no recompile


def test_picture_groups_colours_highlights_and_links_resume_functions(capsys):
    f = mtc.compile(_breaking, backend="eager")
    f(mtc.randn(4), mtc.randn(4))
    f(mtc.randn(6), mtc.randn(6))
    src = mtc.viz.draw_guards(f).source
    entries = cache_entries(f)
    # one cluster for the frame and one per resume function
    resume = sorted(entries[0].resume_functions)
    assert resume and all(f"frame {name} (" in src for name in resume)
    assert src.count("subgraph cluster_") == 1 + len(resume)
    for g in entries[1].guard.guard_set.guards:  # every guard shows, in its kind's colour
        assert GUARD_COLORS.get(g.kind, "#ffffff") in src
        assert f"<I>{guard_group(g).replace(chr(39), '&#x27;')}</I>" in src
    assert src.count(FAILED) >= 1 and "FAILED: tensor &#x27;x&#x27; size mismatch" in src
    assert re.search(r"cluster_0_e0 -> cluster_0_e1 \[.*label=recompile", src)
    assert src.count("continues in __resume_at") == 2  # both entries of f continue there


def test_an_unseen_function_draws_an_empty_frame():
    def g(x):
        return x + 1
    assert "(no cache entries yet)" in mtc.viz.draw_guards(g).source


def test_hostile_names_are_escaped_in_the_labels():
    ns = {"mtc": mtc}
    exec(compile("def f(x):\n    return x.cos()\n", "<b>x</b><script>alert(1)</script>.py",
                 "exec"), ns)
    f = mtc.compile(ns["f"], backend="eager")
    f(mtc.randn(3))
    pic = mtc.viz.draw_guards(f)
    if mtc.viz.dot_available():
        svg = pic.svg()
        assert "<script" not in svg and "&lt;script&gt;" in svg
