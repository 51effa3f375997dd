"""Shared runner of the fidelity programs (``test_*_fidelity.py``).

A program is written once against a module ``T`` (``mtc`` or ``torch``) and returns a list of
results (tensors, Python numbers, bools, ``None``). Its *outcome* is either the exception it
raised — compared by type and by its first words — or its results, compared by value, dtype
and shape. ``torch`` is ``None`` when it is not installed: the torch comparisons then skip,
while each program still runs under ``mtc`` (it must not crash in an unexpected way).
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import minitorch_compile as mtc

try:
    import torch
except ImportError:  # pragma: no cover - the torch comparisons skip
    torch = None



def _result(r):
    if r is None or isinstance(r, (bool, int, float, str)):
        return r
    if isinstance(r, (list, tuple)):
        return [_result(x) for x in r]
    if hasattr(r, "detach"):  # a Tensor of either library
        return ("tensor", str(r.dtype).split(".")[-1], tuple(r.shape),
                np.asarray(r.detach().numpy()))
    return repr(r).replace("mtc.", "").replace("torch.", "")  # a dtype, a Size


def _builtin_type(e: Exception) -> str:
    """The nearest builtin exception class: ``MetaError`` is a ``RuntimeError``, as torch's
    C++ errors are."""
    for cls in type(e).__mro__:
        if cls.__module__ == "builtins":
            return cls.__name__
    return type(e).__name__  # pragma: no cover


_OP_PREFIX = re.compile(r"^[a-z_0-9.]+: ")
_TORCH_DTYPES = {"Float": "float32", "Double": "float64", "Long": "int64", "Int": "int32",
                 "Half": "float16", "Bool": "bool", "Byte": "uint8",
                 "float": "float32", "double": "float64"}


def _words(message: str, n: int) -> list[str]:
    """The first ``n`` words, without our ``op: `` prefix and with torch's C++ dtype names
    (``Float``, ``double``) spelled as ours."""
    words = _OP_PREFIX.sub("", message).split()[:n]
    return [_TORCH_DTYPES.get(w, w) for w in words]


def outcome(T, program):
    """``("raises", type name, message)`` or ``("value", results)``."""
    try:
        outs = program(T)
    except Exception as e:  # noqa: BLE001 - the type is what is compared
        return "raises", _builtin_type(e), str(e)
    return "value", [_result(o) for o in outs]


def _same(a, b, path="") -> None:
    if isinstance(a, tuple) and a and a[0] == "tensor":
        assert isinstance(b, tuple) and b[0] == "tensor", (path, a, b)
        assert a[1] == b[1], f"{path}: dtype {a[1]} vs torch {b[1]}"
        assert a[2] == b[2], f"{path}: shape {a[2]} vs torch {b[2]}"
        np.testing.assert_allclose(a[3], b[3], rtol=1e-5, atol=1e-6, err_msg=path)
    elif isinstance(a, list):
        assert isinstance(b, list) and len(a) == len(b), (path, a, b)
        for i, (x, y) in enumerate(zip(a, b)):
            _same(x, y, f"{path}[{i}]")
    elif isinstance(a, float) or isinstance(b, float):
        assert type(a) is type(b), (path, a, b)
        np.testing.assert_allclose(a, b, rtol=1e-6, err_msg=path)
    else:
        assert a == b and type(a) is type(b), (path, a, b)


def assert_same_outcome(ours, theirs, message_words: int = 3) -> None:
    """Same exception type and the same first ``message_words`` words
    (after ``_words``); or the same results."""
    assert ours[0] == theirs[0], f"mtc {ours} vs torch {theirs}"
    if ours[0] == "raises":
        assert ours[1] == theirs[1], f"mtc {ours} vs torch {theirs}"
        assert _words(ours[2], message_words) == _words(theirs[2], message_words), \
            f"mtc {ours[2]!r} vs torch {theirs[2]!r}"
    else:
        _same(ours[1], theirs[1])


def run_program(program) -> None:
    """The test body: always run under mtc; compare with torch where installed."""
    ours = outcome(mtc, program)
    if ours[0] == "raises":
        assert ours[1] not in {"AttributeError", "KeyError", "NameError", "AssertionError",
                               "UnboundLocalError"}, f"internal error: {ours}"
    if torch is None:
        pytest.skip("torch is not installed: ran under mtc only")
    assert_same_outcome(ours, outcome(torch, program))


def programs_of(namespace: dict) -> list:
    """A test module's programs: its public functions (not tests, classes or imported
    ones), in definition order — the module passes ``globals()``."""
    name = namespace["__name__"]
    return [v for k, v in list(namespace.items())
            if callable(v) and k[0] != "_" and not k.startswith("test")
            and getattr(v, "__module__", None) == name and not isinstance(v, type)]


def arange_leaf(T, *shape):
    """``1, 2, ...`` in ``shape`` (default 2×3), a leaf that requires grad, in library ``T``."""
    shape = shape or (2, 3)
    n = 1
    for s in shape:
        n *= s
    return T.arange(1.0, n + 1).reshape(*shape).requires_grad_()


def program_tests(programs: list):
    """The test every sweep file runs: each program's outcome under mtc is torch's (warnings
    silenced on both sides)."""
    import warnings

    @pytest.mark.parametrize("program", programs, ids=lambda p: p.__name__)
    def test_program_matches_torch(program):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            run_program(lambda T: program(T) or [])

    return test_program_matches_torch
