"""The npu plugs in the torch_npu way: the device module, the generated registrations (current
with the YAML), and each of the three registration paths in use."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minitorch_compile as mtc
from minitorch_compile._dispatch import DispatchKey
from minitorch_compile.npu import codegen
from minitorch_compile.ops import find_overload

# --------------------------------------------------------------------------- device module


def test_device_plumbing():
    assert mtc.npu.is_available() and mtc.npu.device_count() == 1
    mtc.npu.synchronize()
    d = mtc.device("npu:0")
    assert d == mtc.device("npu") and str(d) == "npu:0"
    x = mtc.tensor([1.0, -2.0])
    for y in (x.npu(), x.to("npu"), x.to(device="npu:0"), x.to(mtc.device("npu"))):
        assert y.device == d and y.is_npu
        assert y.cpu().device.type == "cpu" and y.cpu().tolist() == [1.0, -2.0]
    assert mtc.npu is mtc._device._device_modules["npu"]


def test_rename_privateuse1_is_once_and_unknown_devices_fail():
    mtc.utils.rename_privateuse1_backend("npu")  # the same name again is fine
    with pytest.raises(RuntimeError, match="has already been set"):
        mtc.utils.rename_privateuse1_backend("xpu")
    with pytest.raises(RuntimeError, match="Expected one of cpu, meta, npu"):
        mtc.device("xpu")
    with pytest.raises(RuntimeError, match="already been registered"):
        mtc._register_device_module("npu", np)


def test_set_default_device():
    try:
        mtc.set_default_device("npu")
        assert mtc.get_default_device() == mtc.device("npu:0")
        for t in (mtc.zeros(3), mtc.randn(2, 2), mtc.tensor([1, 2]), mtc.arange(4)):
            assert t.device.type == "npu"
        assert mtc.zeros(3, device="cpu").device.type == "cpu"
    finally:
        mtc.set_default_device(None)
    assert mtc.zeros(3).device.type == "cpu"


# --------------------------------------------------------------------------- codegen


def test_generated_registrations_are_current():
    text = codegen.generate(codegen.YAML_PATH.read_text())
    assert codegen.OUT_PATH.read_text() == text, \
        "run: python -m minitorch_compile.npu.codegen"
    assert codegen.main(["--check"]) == 0


def test_yaml_reader_and_codegen_reject_bad_input():
    y = codegen.read_yaml("backend: NPU\nsupported:\n  - mm\n  - category: pointwise\n"
                          "custom:\n  - func: f(Tensor self) -> Tensor\n"
                          "    autograd: passthrough\n")
    assert y == {"backend": "NPU", "supported": ["mm", {"category": "pointwise"}],
                 "custom": [{"func": "f(Tensor self) -> Tensor", "autograd": "passthrough"}]}
    base = "backend: NPU\ncustom:\n  - func: f(Tensor self) -> Tensor\nderivatives:\n" \
           "  - name: f(Tensor self) -> Tensor\n"
    with pytest.raises(ValueError, match="formula names 'os'"):
        codegen.generate(base + "    self: os\n")
    with pytest.raises(ValueError, match="only npu:: ops may be called"):
        codegen.generate(base + "    self: grad(self)\n")
    with pytest.raises(ValueError, match="formula names .exec."):
        codegen.generate(base + "    self: exec(grad)\n")
    with pytest.raises(ValueError, match="uses Attribute"):
        codegen.generate(base + "    self: grad.__class__\n")
    with pytest.raises(ValueError, match="unknown category"):
        codegen.generate("backend: NPU\nsupported:\n  - category: bogus\n")
    with pytest.raises(ValueError, match="python_api: 'g' is not a custom op"):
        codegen.generate("backend: NPU\npython_api:\n  - g\n")
    src = codegen.generate(base + "    self: f(grad) * 2\n")
    assert "return ops.npu.f(grad) * 2" in src
    src = codegen.generate("backend: NPU\nsupported:\n  - mm\n")
    assert 'aten_npu.impl(\'mm\', npu_kernel(find_overload("aten::mm")), "PrivateUse1")' in src
    with pytest.raises(ValueError):  # an op name, nothing else, reaches the generated source
        codegen.generate("backend: NPU\nsupported:\n  - mm(); import os\n")


# --------------------------------------------------------------------------- the three paths


def test_path_1_aten_ops_have_the_device_kernel_on_privateuse1():
    op = mtc.ops.aten.cos.default
    assert op.kernels[DispatchKey.NPU].__name__ == "npu_cos"
    assert mtc.library.get_kernel("aten::cos", "PrivateUse1") is op.kernels[DispatchKey.NPU]
    assert op.kernels[DispatchKey.CPU] is not op.kernels[DispatchKey.NPU]
    x = mtc.randn(5)
    with mtc.npu.profile() as prof:
        x.cos()  # the CPU key: no device kernel
        x.npu().cos()  # the NPU key
    assert [k.name for k in prof.kernels] == ["aten::cos"]


def test_path_2_custom_ops_by_schema_through_the_dispatcher():
    op = find_overload("npu::npu_format_cast")  # findSchemaOrThrow
    assert str(op.schema) == "npu_format_cast(Tensor self, int acl_format) -> Tensor"
    x = mtc.randn(4, 4).npu()
    y = mtc.ops.npu.npu_format_cast(x, mtc.npu.FRACTAL_NZ)
    assert mtc.ops.npu.get_npu_format(y) == 29 and mtc.ops.npu.get_npu_format(x) == 2
    assert "empty_with_format" in {p.name for p in mtc.ops.npu}


def test_path_3_python_api_redirection():
    for name in ("npu_fast_gelu", "npu_format_cast", "npu_format_cast_", "get_npu_format"):
        assert getattr(mtc.npu, name) is getattr(mtc.ops.npu, name)


def _fast_gelu_ref(x):
    return x / (1 + np.exp(-1.702 * x))


@settings(max_examples=20)
@given(n=st.integers(1, 300), dtype=st.sampled_from([mtc.float32, mtc.float64]))
def test_npu_fast_gelu_values_and_backward(n, dtype):
    a = np.linspace(-6, 6, n)
    x = mtc.tensor(a, dtype=dtype).npu().requires_grad_()
    with mtc.npu.profile() as prof:
        y = mtc.npu.npu_fast_gelu(x)
        y.backward(mtc.ones(n, dtype=dtype, device="npu"))
    assert y.dtype is dtype and y.device.type == "npu"
    tol = 1e-5 if dtype is mtc.float32 else 1e-12
    np.testing.assert_allclose(y.detach().cpu().numpy(), _fast_gelu_ref(a), rtol=tol, atol=tol)
    eps = 1e-6
    numeric = (_fast_gelu_ref(a + eps) - _fast_gelu_ref(a - eps)) / (2 * eps)
    np.testing.assert_allclose(x.grad.cpu().numpy(), numeric, rtol=1e-4, atol=1e-5)
    names = [k.name for k in prof.kernels]
    assert names[0] == "npu::npu_fast_gelu" and "npu::npu_fast_gelu_backward" in names


def test_npu_fast_gelu_needs_an_npu_float_tensor():
    with pytest.raises(NotImplementedError, match="from the 'CPU' backend"):
        mtc.npu.npu_fast_gelu(mtc.randn(3))
    with pytest.raises(RuntimeError, match="expected a floating-point tensor"):
        mtc.npu.npu_fast_gelu(mtc.tensor([1, 2]).npu())


def test_a_library_override_on_privateuse1_is_undone_back_to_the_device_kernel():
    op = mtc.ops.aten.abs.default
    device_kernel = op.kernels[DispatchKey.NPU]
    lib = mtc.library.Library("aten", "IMPL")
    lib.impl("abs", lambda self: mtc.tensor([42.0], device="npu"), "PrivateUse1")
    try:
        assert mtc.tensor([-1.0]).npu().abs().tolist() == [42.0]
    finally:
        lib._destroy()
    assert op.kernels[DispatchKey.NPU] is device_kernel


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_compiled_functions_run_on_npu_and_fake_tensors_hold_no_gm(backend):
    import gc

    from minitorch_compile.fx.fake_tensor import FakeTensorMode

    x = mtc.randn(8, 8, device="npu", requires_grad=True)

    def f(x):
        return (x.cos().cos() * 2).sum()

    expected = f(x)
    (gx,) = mtc.autograd.grad(expected, x)
    with mtc.npu.profile() as prof:
        out = mtc.compile(f, backend=backend)(x)
        out.backward()
    assert out.device.type == "npu" and out.item() == expected.item()
    np.testing.assert_array_equal(x.grad.cpu().numpy(), gx.cpu().numpy())
    assert {"aten::cos", "aten::sin"} <= {k.name for k in prof.kernels}
    gc.collect()
    before = mtc.npu.memory_allocated()
    with FakeTensorMode() as mode:
        fake = mode.from_tensor(x).cos()
    assert fake.device.type == "npu" and mtc.npu.memory_allocated() == before
