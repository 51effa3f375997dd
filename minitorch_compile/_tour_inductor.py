"""The tour's ``inductor`` step: the tutorial's ``cos(cos(x))``, forward and backward, through
``mtc.compile``'s default backend — the fused kernels, the loop IR they came from, and the
generated code of the backward kernel (``docs/inductor.md`` is the long version)."""

from __future__ import annotations

import minitorch_compile as mtc


def two_cosines(x):
    return x.cos().cos()


def step_inductor() -> None:
    from minitorch_compile import inductor

    from ._tour import _title

    _title("8. Inductor: cos(cos(x)) forward and backward, one fused kernel each")
    mtc.dynamo.reset()
    inductor.metrics.reset()
    x = mtc.randn(1000, requires_grad=True)
    out = mtc.compile(two_cosines)(x)
    out.sum().backward()
    forward, backward = inductor.compiled_graphs[-2:]
    print("forward kernels: ", [k["name"] for k in forward.kernels])
    print("backward kernels:", [k["name"] for k in backward.kernels])
    print("generated_kernel_count:", inductor.metrics.generated_kernel_count)
    print("\nthe backward's loop IR (before fusion):")
    print(backward.ir_pre_fusion)
    print("\nits generated kernel:")
    src = backward.source
    print(src[src.index("def fused"):src.index("def call")].rstrip())
    ok = mtc.allclose(x.grad, mtc.sin(x.detach().cos()) * mtc.sin(x.detach()))
    print("\ngradient equals eager's:", bool(ok))
    mtc.dynamo.reset()
