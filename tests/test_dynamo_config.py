"""torch's names: ``mtc._dynamo`` is ``mtc.dynamo``, ``mtc._dynamo.config`` works, and the legacy
``mtc.Tensor(...)`` constructor behaves as ``torch.Tensor(...)``."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import minitorch_compile as mtc
from minitorch_compile.dynamo.exc import InternalTorchDynamoError
from tests.dynamo_utils import CountingBackend

try:
    import torch
except ImportError:
    torch = None


def test_private_dynamo_name_is_the_same_module():
    import minitorch_compile._dynamo as d
    import minitorch_compile._dynamo.config as cfg

    assert mtc._dynamo is mtc.dynamo is d and cfg is mtc.dynamo.config
    for name in ("reset", "explain", "mark_dynamic", "config"):
        assert getattr(mtc._dynamo, name) is getattr(mtc.dynamo, name)


def test_cache_size_limit_is_read_at_each_call():
    def f(x, n):
        return x * n

    cnt = CountingBackend()
    cf = mtc.compile(f, backend=cnt, dynamic=False)
    with mtc._dynamo.config.patch(cache_size_limit=2), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for n in range(5):  # each new int recompiles (dynamic=False) until the limit
            assert np.allclose(cf(mtc.ones(2), n).numpy(), n)
    assert cnt.frame_count == 2
    assert mtc._dynamo.config.cache_size_limit == 8  # restored


def test_automatic_dynamic_shapes_off_recompiles_per_shape():
    def f(x):
        return x.cos() * 2

    for auto, expected_dynamic in ((True, True), (False, False)):
        mtc._dynamo.reset()
        cnt = CountingBackend()
        cf = mtc.compile(f, backend=cnt)
        with mtc._dynamo.config.patch(automatic_dynamic_shapes=auto):
            for n in (2, 3, 4):
                cf(mtc.ones(n))
        assert cnt.frame_count == (2 if expected_dynamic else 3)


def test_suppress_errors_off_raises_internal_errors():
    def bad_backend(gm, example_inputs):
        raise RuntimeError("backend exploded")

    def f(x):
        return x + 1

    with pytest.warns(Warning, match="backend exploded"):
        assert np.allclose(mtc.compile(f, backend=bad_backend)(mtc.ones(2)).numpy(), 2)
    mtc._dynamo.reset()
    with mtc._dynamo.config.patch(suppress_errors=False):
        with pytest.raises(InternalTorchDynamoError, match="backend exploded"):
            mtc.compile(f, backend=bad_backend)(mtc.ones(2))


def test_unknown_options_are_refused():
    with pytest.raises(AttributeError, match="no option"):
        mtc._dynamo.config.cache_size_limt = 3
    assert mtc._dynamo.config.capture_scalar_outputs is False  # torch's default


@pytest.mark.parametrize("args", [([True, False],), ([1, 2],), ([[1.5], [2.0]],), (2, 3), (4,),
                                  ()])
def test_legacy_tensor_constructor_matches_torch(args):
    t = mtc.Tensor(*args)
    assert t.dtype == mtc.float32
    if torch is not None:
        ref = torch.Tensor(*args)
        assert tuple(t.shape) == tuple(ref.shape)
        if args and isinstance(args[0], list):
            assert np.allclose(t.numpy(), ref.numpy())
