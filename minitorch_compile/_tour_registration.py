"""The tour's ``registration`` step: torch_npu's three ways of plugging into the dispatcher —
``TORCH_LIBRARY_IMPL`` (a kernel for an existing op on the device's key), ``TORCH_LIBRARY``
(a new op by schema in its own namespace, with ``register_autograd``) and API redirection (a
Python module whose names point at the new ops). Every registration is undone before the step
returns (``Library._destroy``). ``notebooks/08_npu_registration.ipynb`` is the long version."""

from __future__ import annotations

import types

import numpy as np

import minitorch_compile as mtc
from minitorch_compile.library import Library
from minitorch_compile.ops import find_overload

from ._tour import _title


def _npu_abs(self):
    """Our "device kernel" for aten::abs on the NPU key (torch_npu's would call CANN)."""
    print(f"    npu_abs kernel runs on {self.device}")
    return mtc.tensor(np.abs(self.detach().numpy()), device=self.device)


def _fast_gelu_kernel(self):
    """fast_gelu(x) = x * sigmoid(1.702 x), the formula behind npu_fast_gelu."""
    a = self.detach().numpy()
    return mtc.tensor(a / (1 + np.exp(-1.702 * a)), dtype=self.dtype, device=self.device)


def _fast_gelu_setup_context(ctx, inputs, output):
    ctx.save_for_backward(inputs[0])


def _fast_gelu_backward(ctx, grad):
    (x,) = ctx.saved_tensors
    s = (1.702 * x).sigmoid()
    return grad * (s + 1.702 * x * s * (1 - s))


def step_registration() -> None:
    """torch_npu's three registration paths: IMPL, DEF, API redirection."""
    _title("5. how torch_npu plugs in: three registration paths")
    x = mtc.tensor([-1.0, 0.5, -2.0])
    x_npu = x.to("npu")

    print("(1) TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) { m.impl(\"abs\", ...); }")
    print("    lib = Library(\"aten\", \"IMPL\"); lib.impl(\"abs\", npu_abs, \"PrivateUse1\")")
    impl_lib = Library("aten", "IMPL")
    def_lib = None
    try:
        impl_lib.impl("abs", _npu_abs, "PrivateUse1")  # an alias of the NPU key
        print("  x.abs() on cpu ->", x.abs().tolist(), "(CPU key: the op table's numpy kernel)")
        y = x_npu.abs()
        print("  x.to(\"npu\").abs() ->", y.tolist(), "on", y.device)

        print("(2) TORCH_LIBRARY(custom, m) { m.def(\"fast_gelu(Tensor self) -> Tensor\"); }")
        def_lib = Library("custom", "DEF")
        def_lib.define("fast_gelu(Tensor self) -> Tensor")
        def_lib.impl("fast_gelu", _fast_gelu_kernel, "CPU")
        def_lib.impl("fast_gelu", _fast_gelu_kernel, "NPU")
        mtc.library.register_autograd("custom::fast_gelu", _fast_gelu_backward,
                                      setup_context=_fast_gelu_setup_context)
        op = find_overload("custom::fast_gelu")  # c10's findSchemaOrThrow
        print("  found", op.qualified_name, "with kernels",
              ", ".join(sorted(k.name for k in op.kernels)))
        out = mtc.ops.custom.fast_gelu(x)
        print("  mtc.ops.custom.fast_gelu(x) ->", [round(v, 4) for v in out.tolist()])

        print("(3) API redirection: torch_npu.npu_fast_gelu = torch.ops.npu.npu_fast_gelu")
        my_npu = types.ModuleType("my_npu")
        my_npu.fast_gelu = mtc.ops.custom.fast_gelu
        xg = x_npu.detach().requires_grad_()
        out = my_npu.fast_gelu(xg)
        out.sum().backward()
        print("  my_npu.fast_gelu(x_npu) ->", [round(v, 4) for v in out.tolist()], "on",
              out.device)
        print("  its grad, from register_autograd:", [round(v, 4) for v in xg.grad.tolist()])
    finally:
        impl_lib._destroy()
        if def_lib is not None:
            def_lib._destroy()
    print("cleaned up: custom::fast_gelu defined?", hasattr(mtc.ops.custom, "fast_gelu"),
          "| npu abs back to the device's own kernel:", x_npu.abs().tolist())
