"""Eager ops on the simulated npu give the cpu's results, for every op of the table.

Generated from the OpInfo registry: each op's sample runs on cpu and on npu (hypothesis draws
shapes and dtypes), and the npu run must give the same dtype, shape and values — the npu
kernels compute with the same numpy code, so equality is exact — and must launch at least one
profiled kernel unless the op is a view.  Gradients through the npu equal the cpu's.
"""

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import minitorch_compile as mtc
from minitorch_compile._dispatch import DispatchKey
from minitorch_compile.ops import OP_TABLE

from .opinfo import OPINFOS, Gen, as_list, call, float_leaves, inplace_variants, map_sample

NAMES = sorted(OPINFOS)


def _run(info, s, device):
    if info.ref is None:  # random ops: the same stream on both devices
        mtc.manual_seed(1234)
    with mtc.npu.profile() as prof:
        out = as_list(call(info, s, device=device))
    return out, prof


UNDEFINED_VALUES = {"empty", "empty_like"}  # uninitialised memory: shapes and dtypes only


def assert_same(cpu_outs, npu_outs, name):
    assert len(cpu_outs) == len(npu_outs)
    for c, n in zip(cpu_outs, npu_outs):
        assert n.device == mtc.device("npu:0"), f"{name}: output on {n.device}"
        assert (n.dtype, tuple(n.shape)) == (c.dtype, tuple(c.shape)), name
        if name not in UNDEFINED_VALUES:
            np.testing.assert_array_equal(n.cpu().numpy(), c.numpy(), err_msg=name)


@pytest.mark.parametrize("name", NAMES)
@given(data=st.data())
def test_npu_equals_cpu(name, data):
    info = OPINFOS[name]
    dtype = data.draw(st.sampled_from(info.dtypes), label="dtype")
    s = info.sample(Gen(data.draw), dtype)
    cpu, _ = _run(info, s, None)
    npu, prof = _run(info, s, "npu")
    assert_same(cpu, npu, name)
    opdef = OP_TABLE[name]
    produced = any(o.numel() for o in npu)
    if opdef.category not in ("view", "composite") and produced and name not in UNDEFINED_VALUES:
        assert prof.kernels, f"{name}: no kernel was profiled on the npu"
    for k in prof.kernels:
        assert k.gm_read_bytes + k.gm_write_bytes >= k.min_gm_bytes, (name, k)
        assert k.lower_bound_us <= k.time_us <= k.time_us_serial + 1e-12, (name, k)


INPLACE = dict(inplace_variants())


@pytest.mark.parametrize("name", sorted(INPLACE))
@given(data=st.data())
def test_npu_inplace_equals_cpu(name, data):
    info = INPLACE[name]
    dtype = data.draw(st.sampled_from(info.dtypes), label="dtype")
    s = info.sample(Gen(data.draw), dtype)
    assume(isinstance(s.args[0], np.ndarray))
    op = OP_TABLE[name].overload
    results = []
    for device in ("cpu", "npu"):
        m = map_sample(s, lambda a: mtc.tensor(a.copy(order="C")).to(device))
        try:
            op(*m.args, **m.kwargs)
            results.append(("ok", m.args[0].cpu().numpy()))
        except RuntimeError as e:
            results.append(("error", str(e)))
    assert results[0][0] == results[1][0], (name, results)
    if results[0][0] == "ok":
        np.testing.assert_array_equal(results[1][1], results[0][1])
    else:
        assert results[0][1] == results[1][1]


GRAD_NAMES = sorted(n for n, i in OPINFOS.items()
                    if i.grad and i.ref is not None and not i.op.schema.is_mutable)


# float arguments torch refuses to differentiate (nll_loss_forward's class weight)
NO_GRAD_ARGS = {"nll_loss": (2,), "nll_loss_forward": (2,), "cross_entropy_loss": (2,),
                "batch_norm": (3, 4)}  # (running statistics: torch refuses them too)


@pytest.mark.parametrize("name", GRAD_NAMES)
@settings(max_examples=5)
@given(data=st.data())
def test_npu_grads_equal_cpu(name, data):
    info = OPINFOS[name]
    s = info.sample(Gen(data.draw, smooth=True), mtc.float64)
    assume(float_leaves(s))
    frozen = [s.args[i] for i in NO_GRAD_ARGS.get(name, ())]
    grads = []
    for device in ("cpu", "npu"):
        leaves = []

        def make(a, device=device, leaves=leaves):
            t = mtc.tensor(a.copy(order="C")).to(device)
            if a.dtype.kind == "f" and all(a is not f for f in frozen):
                t.requires_grad_()
                leaves.append(t)
            return t

        m = map_sample(s, make)
        outs = [o for o in as_list(info.op(*m.args, **m.kwargs)) if o.dtype.is_floating_point]
        assume(outs and any(o.requires_grad for o in outs))
        total = sum((o.sum() for o in outs if o.requires_grad), mtc.zeros((), dtype=mtc.float64,
                                                                         device=device))
        total.backward()
        grads.append([None if t.grad is None else t.grad for t in leaves])
    for gc, gn in zip(*grads):
        assert (gc is None) == (gn is None), name
        if gc is not None:
            assert gn.device.type == "npu", name
            np.testing.assert_array_equal(gn.cpu().numpy(), gc.numpy(), err_msg=name)


def test_every_table_op_with_a_backend_kernel_has_the_generated_npu_kernel():
    for name, d in OP_TABLE.items():
        k = d.overload.kernels.get(DispatchKey.NPU)
        if k is None or d.category == "composite":
            continue
        assert k.__name__.startswith("npu_"), f"{name}: npu kernel {k} is not the device's"


def test_a_model_forward_and_backward_on_npu_matches_cpu():
    mtc.manual_seed(0)
    model = mtc.nn.Sequential(mtc.nn.Linear(8, 16), mtc.nn.ReLU(), mtc.nn.Linear(16, 3))
    x, target = mtc.randn(5, 8), mtc.tensor([0, 2, 1, 1, 0])
    loss = mtc.nn.functional.cross_entropy(model(x), target)
    loss.backward()
    cpu_grads = [p.grad.numpy().copy() for p in model.parameters()]
    model.zero_grad()
    npu_model = model.to("npu") if hasattr(model, "to") else model
    with mtc.npu.profile() as prof:
        loss_n = mtc.nn.functional.cross_entropy(npu_model(x.npu()), target.npu())
        loss_n.backward()
    assert loss_n.device.type == "npu" and loss_n.item() == loss.item()
    for p, g in zip(npu_model.parameters(), cpu_grads):
        np.testing.assert_allclose(p.grad.cpu().numpy(), g, rtol=1e-6, atol=1e-7)
    names = {k.name for k in prof.kernels}
    assert {"aten::mm", "aten::relu"} <= names or "aten::addmm" in names
