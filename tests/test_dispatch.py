"""The dispatcher: key order, redispatch, modes, devices, and the three torch_npu paths."""

import numpy as np
import pytest

import minitorch_compile as mtc
from minitorch_compile._dispatch import DispatchKey, TorchDispatchMode, exclude
from minitorch_compile.library import Library, register_autograd


class LogMode(TorchDispatchMode):
    """Records every op that reaches the Python key."""

    def __init__(self):
        self.ops = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.ops.append(str(func))
        return func(*args, **(kwargs or {}))


def test_keys_are_in_torch_priority_order():
    order = [k.name for k in sorted(DispatchKey)]
    assert order.index("CompositeImplicitAutograd") < order.index("Autograd") < \
        order.index("Python") < order.index("NPU") < order.index("CPU") < order.index("Meta")


def test_mode_sees_primitives_not_composites():
    x = mtc.randn(3, 4)
    with LogMode() as m:
        mtc.softmax(x, -1)
    # softmax.int is CompositeImplicit: the mode sees the primitive it decomposes into
    assert m.ops == ["aten._softmax.default"]
    with LogMode() as m:
        mtc.ops.aten.var(x, 1)
    assert "aten.var.default" not in m.ops and "aten.mean.default" in m.ops


def test_mode_sits_below_autograd_and_sees_backward_ops():
    """Python is below Autograd: backward formulas reach the mode like any other op."""
    x = mtc.randn(5, requires_grad=True)
    with LogMode() as m:
        y = x.cos().cos()
        (g,) = mtc.autograd.grad(y, x, mtc.ones(5))
    assert m.ops.count("aten.cos.default") == 2
    assert m.ops.count("aten.sin.default") == 2  # the two derivative formulas
    assert y.grad_fn.name() == "CosBackward0"  # autograd still recorded above the mode
    np.testing.assert_allclose(g.numpy(), (np.sin(np.cos(x.detach().numpy())) *
                                           np.sin(x.detach().numpy())), rtol=1e-5)


def test_mode_is_popped_while_its_handler_runs():
    seen = []

    class Nested(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append(str(func))
            return func(*args)  # would recurse forever if the mode stayed active

    with Nested():
        mtc.ones(2) + 1
    assert seen == ["aten.ones.default", "aten.add.default"]


def test_exclude_autograd_records_nothing():
    x = mtc.randn(2, requires_grad=True)
    with exclude(DispatchKey.Autograd):
        y = x * 2
    assert y.grad_fn is None and not y.requires_grad


def test_meta_tensors_compute_shapes_only():
    x = mtc.empty(4, 3, device="meta")
    y = (x @ mtc.empty(3, 5, device="meta")).sum(0)
    assert y.device == mtc.device("meta") and tuple(y.shape) == (5,)
    with pytest.raises(NotImplementedError, match="meta tensor"):
        y.numpy()
    with pytest.raises(RuntimeError, match="mm: mat1 and mat2 shapes cannot be multiplied"):
        x @ mtc.empty(4, 5, device="meta")


def test_mixed_devices_are_an_error_but_zero_dim_cpu_joins():
    a = mtc.ones(3).to("npu")
    with pytest.raises(RuntimeError, match="same device"):
        a + mtc.ones(3)
    out = a + mtc.tensor(2.0)  # a 0-dim cpu tensor may join, as in torch
    assert out.device == mtc.device("npu")


def test_creation_op_device_selects_backend():
    with LogMode() as m:
        z = mtc.zeros(2, device="npu")
    assert z.device.type == "npu" and m.ops == ["aten.zeros.default"]


# ------------------------------------------------------------- the three torch_npu paths


def test_path1_impl_existing_op_for_npu_key():
    calls = []

    def npu_abs(x):
        calls.append(x.device.type)
        out = mtc.Tensor._make(np.abs(x._data), x.device)
        return out

    lib = Library("aten", "IMPL")
    lib.impl("abs", npu_abs, "PrivateUse1")  # torch_npu's key name is accepted
    try:
        x = mtc.tensor([-1.0, 2.0]).to("npu")
        assert mtc.abs(x).tolist() == [1.0, 2.0]
        assert mtc.abs(mtc.tensor([-3.0])).tolist() == [3.0]  # CPU untouched
        assert calls == ["npu"]
        # autograd still works above the new backend kernel
        xg = mtc.tensor([-1.0, 2.0], device="npu", requires_grad=True)
        mtc.abs(xg).sum().backward()
        assert xg.grad.tolist() == [-1.0, 1.0]
    finally:
        lib._destroy()
    mtc.abs(mtc.tensor([-1.0]).to("npu"))
    assert calls == ["npu", "npu"]  # the restored kernel is the numpy one again


def test_path2_define_new_op_by_schema_and_call_through_dispatcher():
    lib = Library("custom", "DEF")
    try:
        lib.define("fast_gelu(Tensor self) -> Tensor")
        lib.impl("fast_gelu", lambda x: x * mtc.sigmoid(1.702 * x), "CPU")
        x = mtc.randn(6)
        out = mtc.ops.custom.fast_gelu(x)
        ref = x.numpy() / (1 + np.exp(-1.702 * x.numpy()))
        np.testing.assert_allclose(out.numpy(), ref, rtol=1e-6)
        assert str(mtc.ops.custom.fast_gelu.default.schema) == "fast_gelu(Tensor self) -> Tensor"
        with LogMode() as m:
            mtc.ops.custom.fast_gelu(x)
        assert m.ops[0] == "custom.fast_gelu.default"
        with pytest.raises(NotImplementedError, match="Meta"):
            mtc.ops.custom.fast_gelu(mtc.empty(2, device="meta"))
        # no derivative registered: backward says so instead of returning a wrong grad
        xg = mtc.randn(3, requires_grad=True)
        with pytest.raises(RuntimeError, match="not implemented"):
            mtc.ops.custom.fast_gelu(xg).sum().backward()
        register_autograd("custom::fast_gelu",
                          lambda ctx, g: g * ctx.s * (1 + 1.702 * ctx.x * (1 - ctx.s)),
                          setup_context=lambda ctx, inputs, output: (
                              setattr(ctx, "x", inputs[0]),
                              setattr(ctx, "s", mtc.sigmoid(1.702 * inputs[0]))))
        mtc.ops.custom.fast_gelu(xg).sum().backward()
        xs = xg.detach().numpy()
        s = 1 / (1 + np.exp(-1.702 * xs))
        np.testing.assert_allclose(xg.grad.numpy(), s * (1 + 1.702 * xs * (1 - s)), rtol=1e-5)
    finally:
        lib._destroy()
    with pytest.raises(AttributeError):
        mtc.ops.custom.fast_gelu


def test_path3_api_redirection():
    import types

    lib = Library("custom", "DEF")
    try:
        lib.define("npu_fast_gelu(Tensor self) -> Tensor")
        lib.impl("npu_fast_gelu", lambda x: x * mtc.sigmoid(1.702 * x), "CPU")
        fake_torch_npu = types.ModuleType("fake_torch_npu")
        fake_torch_npu.npu_fast_gelu = mtc.ops.custom.npu_fast_gelu  # the redirection
        x = mtc.randn(4)
        assert mtc.equal(fake_torch_npu.npu_fast_gelu(x), mtc.ops.custom.npu_fast_gelu(x))
    finally:
        lib._destroy()


def test_find_overload_and_packet_resolution():
    from minitorch_compile.ops import find_overload

    assert find_overload("aten::add") is mtc.ops.aten.add.default
    assert find_overload("aten::max.dim") is mtc.ops.aten.max.dim
    x = mtc.tensor([[1.0, 5.0], [7.0, 2.0]])
    assert mtc.ops.aten.max(x).item() == 7.0
    values, indices = mtc.ops.aten.max(x, 1)
    assert values.tolist() == [5.0, 7.0] and indices.tolist() == [1, 0]
    with pytest.raises(TypeError, match="invalid combination"):
        mtc.ops.aten.max(x, "nope")


def test_double_definition_is_rejected():
    lib = Library("custom", "DEF")
    try:
        lib.define("twice(Tensor self) -> Tensor")
        with pytest.raises(RuntimeError, match="already defined"):
            lib.define("twice(Tensor self) -> Tensor")
        with pytest.raises(RuntimeError, match="single TORCH_LIBRARY"):
            Library("custom", "DEF")
    finally:
        lib._destroy()
