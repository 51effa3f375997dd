"""Calls at a graph break reach the callee exactly as plain Python would.

When the graph breaks inside a callee (here: its ``print``), the transformed code of the caller
makes the call itself — with the stack rebuilt from trackers — and the callee runs as its own
compiled frame.  Every way of naming the callee (bound method, classmethod, staticmethod,
callable object, plain function, ``functools.partial``) and every way of passing arguments
(positional, keywords, keyword-only, ``*args``, ``**kwargs``) must arrive unchanged: the
smallest wrong case once was ``obj.m(20, "s", *[(3,)])``, whose rebuilt callee had lost
``self`` so every argument shifted by one.

hypothesis writes the call sites; each program is compiled vs eager (values and printed text)
and must capture the graph before the call.
"""

from __future__ import annotations

import functools

from hypothesis import given
from hypothesis import strategies as st

import minitorch_compile as mtc

from .dynamo_utils import CountingBackend
from .test_graph_breaks import from_source, run_both


def _show(who, msg, args, sep, kw):
    print(who, msg, args, sep, sorted(kw.items()))
    return len(args) + len(kw)


class Logger:
    def __init__(self, prefix):
        self.prefix = prefix

    def info(self, msg, *args, sep=" ", **kw):
        return _show(self.prefix, msg, args, sep, kw)

    @classmethod
    def cinfo(cls, msg, *args, sep=" ", **kw):
        return _show(cls.__name__, msg, args, sep, kw)

    @staticmethod
    def sinfo(msg, *args, sep=" ", **kw):
        return _show("static", msg, args, sep, kw)

    def __call__(self, msg, *args, sep=" ", **kw):
        return _show("call:" + self.prefix, msg, args, sep, kw)


def plain(msg, *args, sep=" ", **kw):
    return _show("plain", msg, args, sep, kw)


NAMESPACE = {"log": Logger("log"), "Logger": Logger, "plain": plain,
             "part": functools.partial(plain, sep="|"),
             "part_msg": functools.partial(plain, "bound-msg")}
CALLEES = ["log.info", "log.cinfo", "Logger.cinfo", "log.sinfo", "Logger.sinfo", "log",
           "plain", "part", "part_msg"]
POSITIONAL = ["1", "'s'", "tuple(x.shape)", "x.shape[0]", "(3,)"]


def _program(callee: str, call_args: str) -> str:
    return ("def prog(x):\n"
            "    y = x.cos()\n"
            f"    r = {callee}({call_args})\n"
            "    return y + r\n")


def _check(src: str):
    prog = from_source(src, "prog", **NAMESPACE)
    backend = CountingBackend()
    compiled = mtc.compile(prog, backend=backend)
    run_both(prog, compiled, [mtc.randn(3, 2)])
    assert backend.frame_count >= 1, "no graph was captured before the call"


def test_bound_method_with_star_args_keeps_self():
    class Obj:
        def m(self, a, s, *rest):
            print("m", a, s, rest)
            return a

    obj = Obj()

    def f(x):
        y = x.cos()
        obj.m(20, "s", *[(3,)])
        return y + 1

    backend = CountingBackend()
    run_both(f, mtc.compile(f, backend=backend), [mtc.randn(3)])
    assert backend.frame_count >= 1


def test_logging_style_call_with_shape_tuple():
    _check(_program("log.info", "'input %s', tuple(x.shape)"))
    _check(_program("log.info", "'input %s', *[tuple(x.shape)], sep='-', **{'k': 1}"))


@st.composite
def call_sites(draw):
    callee = draw(st.sampled_from(CALLEES))
    pieces = [] if callee == "part_msg" else ["'m'"]
    pos = draw(st.lists(st.sampled_from(POSITIONAL), max_size=2))
    star = draw(st.lists(st.sampled_from(POSITIONAL), max_size=2))
    pieces += pos
    if draw(st.booleans()):
        pieces.append(f"*[{', '.join(star)}]")
    if draw(st.booleans()):
        pieces.append(f"sep={draw(st.sampled_from(['-', '+']))!r}")
    if draw(st.booleans()):
        pieces.append("extra=x.shape[1]")
    if draw(st.booleans()):
        pieces.append("**{'k': len(x.shape)}")
    return _program(callee, ", ".join(pieces))


@given(call_sites())
def test_generated_call_shapes_at_a_break(src):
    _check(src)
