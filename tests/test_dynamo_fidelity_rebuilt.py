"""What the transformed code rebuilds at a graph break, and must rebuild *as the same object*:
a new list's bound method waiting on the stack for its argument (``out.append(print(..) or
y)``: the list the method appends to is the list the frame returns), and the locals a 3.12+
inlined comprehension assigns with ``:=`` (handed back by the function the comprehension runs
in).  In the manner of torch's ``test/dynamo/test_repros.py`` and ``test_misc.py``.

Each runs compiled and eagerly under mtc (values, printed text and side effects equal) and its
counts are torch 2.13's (``TORCH_COUNTS``, re-measured when torch is installed), except for
``DIFFERS``.
"""


import minitorch_compile as mtc

from .dynamo_fidelity import Program, fidelity_tests, one, ramp, two

P = Program

PROGRAMS = {
    # ------------------------------------------------------------ a method pending at a break
    "new_list_method_pending_at_break": P("""
        def f(x):
            out = []
            y = x.sin()
            out.append(print("hi") or y.cos())
            return out
        """, lambda lib: one(lib, 3), "after test_repros.py (`out.append` waits for its argument)"),
    "new_dict_method_pending_at_break": P("""
        def f(x):
            d = {"a": x.cos()}
            d.update(b=print("b") or x.sin())
            return d, len(d)
        """, lambda lib: one(lib, 3), "after test_repros.py (`d.update` waits for its argument)"),
    "list_method_pending_in_loop_body": P("""
        def f(x, y):
            out = []
            for i in range(2):
                out.append(print(i) or (x * i).sum())
            return out, y.cos()
        """, lambda lib: two(lib, 3), "after test_repros.py (a break in a loop: eager)"),
    # ------------------------------------------------------------ `:=` in a comprehension
    "walrus_in_listcomp_break_new_local": P("""
        def f(x, y):
            z = x.cos()
            vals = [(last := v.item()) for v in y]
            return z * last + sum(vals)
        """, lambda lib: two(lib, 3), "after test_misc.py (a walrus in a comprehension)"),
    "walrus_in_listcomp_break_rebinds_argument": P("""
        def f(x, y, last=5.0):
            a = last
            z = x.cos() + a
            vals = [(last := v.item()) for v in y]
            return z * last + sum(vals) + a
        """, lambda lib: two(lib, 3), "after test_misc.py (a walrus rebinding an argument)"),
    "walrus_in_filtered_listcomp": P("""
        def f(x, y):
            z = x.cos()
            vals = [(last := v.item()) for v in y if v.item() > 0.0]
            return z * len(vals), last
        """, lambda lib: [(ramp(lib, 3), lib.tensor([1.0, -2.0, 3.0]))],
        "after test_misc.py (a walrus in a filtered comprehension)"),
}

TORCH_COUNTS = {
    'list_method_pending_in_loop_body': (0, 0, -1, ()),
    'new_dict_method_pending_at_break': (2, 2, 1, (1, 1)),
    'new_list_method_pending_at_break': (2, 2, 1, (1, 1)),
    'walrus_in_filtered_listcomp': (2, 2, 1, (4, 1)),
    'walrus_in_listcomp_break_new_local': (2, 2, 1, (4, 2)),
    'walrus_in_listcomp_break_rebinds_argument': (2, 2, 1, (5, 3)),
}

DIFFERS = {}


test_compiled_equals_eager_with_torchs_counts, test_torch_counts_are_the_table = \
    fidelity_tests(PROGRAMS, TORCH_COUNTS, DIFFERS)


def test_a_walrus_target_an_empty_comprehension_never_bound_stays_unbound():
    """The entry compiled when the comprehension bound ``last`` is reused when it binds nothing
    (the filter is data-dependent, not guarded): reading ``last`` then raises
    ``UnboundLocalError`` after the print, as in eager mode (3.12+: the resume function that
    does not take ``last`` is called; 3.11: the frame runs eagerly)."""
    def f(x, y):
        z = x.cos()
        vals = [(last := v.item()) for v in y if v.item() > 0]
        log.append(len(vals))
        return z * len(vals), last

    log: list = []
    mtc.dynamo.reset()
    cf = mtc.compile(f, backend="eager")
    x = ramp(mtc, 2)
    out = cf(x, mtc.tensor([1.0, -2.0, 3.0]))
    assert out[1] == 3.0 and log == [2]
    try:
        cf(x, mtc.tensor([-1.0, -2.0, -3.0]))
    except UnboundLocalError:
        pass
    else:
        raise AssertionError("reading the never-bound walrus target must raise")
    assert log == [2, 0]  # the code between the comprehension and the read ran
    assert len(mtc.dynamo.cache_entries(f)) == 1  # the same entry served both calls
