"""Shared test settings.

Hypothesis profiles: ``default`` keeps the suite fast on 2 cores and is derandomized (the same
examples on every machine, so a CI run cannot fail on a draw nobody has seen); ``slow`` (set
``HYPOTHESIS_PROFILE=slow``) runs many more, freshly random examples to hunt for bugs;
``self_check`` runs few and never shrinks (the suite's test of itself only needs a failure).
"""

import os
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, settings

settings.register_profile(
    "default", max_examples=25, deadline=None, derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.register_profile(
    "slow", max_examples=500, deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.register_profile(  # tests/test_suite_self_check.py: a failing example is enough
    "self_check", max_examples=5, deadline=None, derandomize=True,
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


@pytest.fixture(autouse=True)
def _seed():
    import minitorch_compile as mtc

    mtc.manual_seed(0)
    np.random.seed(0)
    yield


@pytest.fixture
def strict_inductor():
    """Any 'inductor: could not compile' warning fails the test (the inductor test modules
    use it: ``pytestmark = pytest.mark.usefixtures("strict_inductor")``)."""
    import minitorch_compile as mtc

    mtc.dynamo.reset()
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message="inductor:")
        yield
    mtc.dynamo.reset()


def torch_or_skip():
    """Import torch for an optional comparison test, or skip it."""
    return pytest.importorskip("torch")
