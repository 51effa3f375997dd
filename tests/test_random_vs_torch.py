"""Random numbers are torch's CPU generator's (``_random.py``): recorded values from torch 2.13
(always checked), and a bit-for-bit comparison of every sampler where torch is installed."""

from __future__ import annotations

import numpy as np
import pytest

import minitorch_compile as mtc


def test_randn_of_seed_0_is_torchs():
    mtc.manual_seed(0)
    assert mtc.randn(5).tolist() == [1.5409960746765137, -0.293428897857666,
                                     -2.1787893772125244, 0.5684312582015991,
                                     -1.0845223665237427]
    assert mtc.randint(0, 10, (6,)).tolist() == [6, 9, 8, 6, 6, 8]
    assert mtc.randperm(6).tolist() == [2, 4, 1, 5, 3, 0]


def test_cached_normal_half_is_used_by_the_next_call():
    mtc.manual_seed(0)
    a = mtc.randn(1).item()
    b = mtc.randn(1).item()  # the sine half of the first draw
    mtc.manual_seed(0)
    assert mtc.randn(2).tolist() == [a, b]


def test_generators_are_independent_and_state_round_trips():
    g = mtc.Generator().manual_seed(3)
    mtc.manual_seed(0)
    state = mtc.get_rng_state()
    first = mtc.rand(4)
    mtc.normal(0.0, 1.0, (8,), generator=g)  # another generator does not move the default
    mtc.set_rng_state(state)
    assert mtc.rand(4).tolist() == first.tolist()
    assert mtc.initial_seed() == 0 and g.initial_seed() == 3


def test_compiled_dropout_draws_what_eager_draws():
    def f(x):
        return mtc.nn.functional.dropout(x.sin(), 0.3) * 2

    x = mtc.randn(64)
    mtc.manual_seed(5)
    eager = f(x)
    compiled = mtc.compile(f)
    mtc.manual_seed(5)
    np.testing.assert_array_equal(compiled(x).numpy(), eager.numpy())


SAMPLERS = {
    "randn 5": lambda L: L.randn(5),
    "randn 5 then 3": lambda L: L.cat([L.randn(5), L.randn(3)]),
    "randn float64 40": lambda L: L.randn(40, dtype=L.float64),
    "rand 1000": lambda L: L.rand(1000),
    "rand float64": lambda L: L.rand(100, dtype=L.float64),
    "rand float16": lambda L: L.rand(100, dtype=L.float16),
    "randint": lambda L: L.randint(-5, 17, (100,)),
    "randint 2^40": lambda L: L.randint(0, 2**40, (10,)),
    "randperm 100": lambda L: L.randperm(100),
    "normal_ 5": lambda L: L.empty(5).normal_(2, 3),
    "uniform_": lambda L: L.empty(50).uniform_(-2, 5),
    "bernoulli_ 0.3": lambda L: L.empty(100).bernoulli_(0.3),
    "bernoulli(p)": lambda L: L.bernoulli(L.full((100,), 0.3)),
    "bernoulli(p float64)": lambda L: L.bernoulli(L.full((100,), 0.3, dtype=L.float64)),
    "dropout": lambda L: L.nn.functional.dropout(L.ones(100), 0.3),
    "Linear": lambda L: L.cat([p.reshape(-1) for p in L.nn.Linear(7, 5).parameters()]),
    "Conv2d": lambda L: L.cat([p.reshape(-1) for p in L.nn.Conv2d(3, 4, 3).parameters()]),
    "xavier_uniform_": lambda L: L.nn.init.xavier_uniform_(L.empty(6, 5)),
    "rand_like": lambda L: L.rand_like(L.zeros(3, 7)),
    # float32 Box-Muller over blocks of 16: torch's vectorized log/sincos (_avx_mathfun.py)
    "randn 1000": lambda L: L.randn(1000),
    "randn 100003": lambda L: L.randn(100003),
    "normal_ 40": lambda L: L.empty(40).normal_(2, 3),
    "normal(mean, std)": lambda L: L.normal(L.zeros(40), L.ones(40) * 2),
    "kaiming_normal_": lambda L: L.nn.init.kaiming_normal_(L.empty(6, 5)),
}

def _both(torch, make):
    torch.manual_seed(0)
    t = make(torch).detach().numpy()
    mtc.manual_seed(0)
    return t, make(mtc).detach().numpy()


@pytest.mark.parametrize("name", sorted(SAMPLERS))
def test_bit_for_bit_with_torch(name):
    torch = pytest.importorskip("torch")
    t, m = _both(torch, SAMPLERS[name])
    assert t.dtype == m.dtype
    np.testing.assert_array_equal(m, t)
