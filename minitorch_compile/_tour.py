"""The guided tour: ``python -m minitorch_compile tour``.

A short, deterministic walk through the eager foundation and Dynamo, one *step* per idea, in the
order a learner meets them (the longer versions are ``docs/eager.md`` with
``notebooks/00_eager_tour.ipynb``, and ``docs/dynamo.md`` with
``notebooks/02_dynamo_guards.ipynb``):

1. ``tensors``      tensors over numpy and torch's type promotion (which is not numpy's);
2. ``op_table``     the row of ``cos`` in the op table: schema, category, kernel, meta rule,
                    derivative formula;
3. ``dispatch``     the dispatch keys a call goes through, and a ``TorchDispatchMode`` that logs
                    every op — including the backward ops the autograd engine runs;
4. ``functions``    the torch.compile tutorial's ``Cosine`` and ``AOTTransformedTwoCosine``;
5. ``registration`` the three ways torch_npu plugs kernels and ops in (IMPL, DEF, redirection);
6. ``training``     a 20-step MLP fit, when ``mtc.nn`` and ``mtc.optim`` exist;
7. ``dynamo``       the tutorial's ``f(x, mod)`` with modules ``A`` and ``B`` under
                    ``mtc.compile(backend="eager")``: misses and hits, each cache entry's guard,
                    graph and transformed code (depyf and ``dis``), a recompile with its reason,
                    and ``function(inputs)``'s data-dependent ``if`` running eagerly;
8. ``inductor``     ``cos(cos(x))`` forward and backward through the default backend: one fused
                    kernel each, the loop IR, the generated numpy kernel;
9. ``report``       the tutorial's program inside ``mtc.report.trace()``, written as one HTML
                    compile report; the step prints where it is.

``STEPS`` is the table of steps; later chapters (AOT, Inductor) append theirs.
Everything prints to stdout and is seeded with ``mtc.manual_seed``, so a fresh process prints
the same every time (object ids in guards are shown as ``id(a)``; the ``__compiled_fn_N``
counter is process-wide, so a second run in one process numbers its graphs on from the first).
Every registration a step makes is undone before it returns (``Library._destroy``), and the
dynamo step empties the compile cache (``mtc.dynamo.reset()``) before and after.
"""

from __future__ import annotations

import inspect
from typing import Callable

import numpy as np

import minitorch_compile as mtc
from minitorch_compile._dispatch import TorchDispatchMode
from minitorch_compile.ops import OP_TABLE, all_overloads


def _title(text: str) -> None:
    print()
    print(f"== {text} " + "=" * max(0, 72 - len(text)))


def _fmt(a) -> str:
    """A compact argument: ``f32[2, 3]`` for a tensor, ``repr`` otherwise."""
    if isinstance(a, mtc.Tensor):
        short = {"float32": "f32", "float64": "f64", "float16": "f16", "int64": "i64",
                 "int32": "i32", "uint8": "u8", "int8": "i8", "int16": "i16",
                 "bool": "b8"}[a.dtype.name]
        dev = "" if a.device.type == "cpu" else f"@{a.device}"
        return f"{short}{list(a.shape)}{dev}"
    if isinstance(a, (list, tuple)) and a and isinstance(a[0], mtc.Tensor):
        return "[" + ", ".join(_fmt(t) for t in a) + "]"
    return repr(a)


# --------------------------------------------------------------------------- 1. tensors


def step_tensors() -> None:
    """Tensors over numpy, and torch's type promotion next to numpy's."""
    _title("1. tensors and torch-style type promotion")
    mtc.manual_seed(0)
    x = mtc.randn(2, 3)
    print("x = mtc.randn(2, 3) ->", x.dtype, tuple(x.shape), "backed by", type(x._data).__name__)
    i = mtc.tensor([1, 2, 3])
    f64 = mtc.tensor(2.0, dtype=mtc.float64)
    examples = [
        ("int64[3] * 2.5", i * 2.5, (np.array([1, 2, 3]) * 2.5).dtype),
        ("float32[3] + float64[] (0-dim)", mtc.ones(3) + f64,
         (np.ones(3, np.float32) + np.array(2.0)).dtype),
        ("int64[3] / 2", i / 2, (np.array([1, 2, 3]) / 2).dtype),
        ("int64[3] + float16[3]", i + mtc.ones(3, dtype=mtc.float16),
         (np.array([1, 2, 3]) + np.ones(3, np.float16)).dtype),
        ("int64[3] > 1", i > 1, (np.array([1, 2, 3]) > 1).dtype),
    ]
    print(f"  {'expression':<32}{'mtc (= torch)':<16}numpy")
    for text, result, np_dtype in examples:
        print(f"  {text:<32}{result.dtype.name:<16}{np_dtype}")
    print("  rule: the highest category (bool < int < float) wins; within it, dimensioned "
          "tensors\n  outrank 0-dim tensors, which outrank Python numbers (minitorch_compile/"
          "_dtype.py)")


# --------------------------------------------------------------------------- 2. op table


def step_op_table() -> None:
    """The op-table row of aten::cos: schema, category, kernel, meta, derivative."""
    _title("2. one row of the op table: aten::cos")
    row = OP_TABLE["cos"]
    op = row.overload
    print("schema:     ", op.schema)
    print("category:   ", row.category, f"(promotion {row.promotion})")
    print("kernel:     ", f"np.{row.kernel.__name__}", "(numpy ufunc, wrapped by "
          "table.numpy_kernel)")
    print("meta rule:  ", row.meta.__qualname__, "- from the category: broadcast + promotion")
    m = mtc.empty(4, 3, device="meta").cos()
    print("   on meta: ", f"cos(meta f32[4, 3]) -> shape {tuple(m.shape)}, {m.dtype}, no data")
    formula = row.derivatives["self"]
    params = formula.__code__.co_varnames[: formula.__code__.co_argcount]
    print("derivative: ", inspect.getsource(formula).strip())
    print("   the formula's parameters", params, "say what autograd saves: 'self'")
    print("kernels:    ", ", ".join(sorted(k.name for k in op.kernels)),
          "| in-place variant:", row.inplace)


# --------------------------------------------------------------------------- 3. dispatch


class LoggingMode(TorchDispatchMode):
    """Log every op that reaches the Python key, then let it continue to the backend."""

    def __init__(self):
        self.log: list[str] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        shown = [_fmt(a) for a in args] + [f"{k}={_fmt(v)}" for k, v in (kwargs or {}).items()]
        self.log.append(f"{func}({', '.join(shown)})")
        return func(*args, **(kwargs or {}))  # the mode is popped: this continues below it


class ShowDispatchKeys(TorchDispatchMode):
    """Record each kernel a call runs, indented by how deeply it was redispatched.

    While active it wraps the kernel of every key of every aten op (and is itself the Python
    mode), so the trace shows the real path through ``_dispatch.dispatch``.
    """

    def __init__(self):
        self.lines: list[str] = []
        self._depth = 0
        self._saved: list = []

    def _logged(self, key_name: str, op, fn: Callable) -> Callable:
        def kernel(*args, **kwargs):
            self.lines.append(f"{'  ' * self._depth}{key_name:<26} {op}")
            self._depth += 1
            try:
                return fn(*args, **kwargs)
            finally:
                self._depth -= 1

        return kernel

    def __enter__(self):
        for op in all_overloads("aten"):
            self._saved.append((op, op.kernels, op.composite))
            op.kernels = {k: self._logged(k.name, op, fn) for k, fn in op.kernels.items()}
            if op.composite is not None:
                op.composite = self._logged("CompositeImplicitAutograd", op, op.composite)
        return super().__enter__()

    def __exit__(self, *exc):
        super().__exit__(*exc)
        for op, kernels, composite in self._saved:
            op.kernels, op.composite = kernels, composite
        self._saved.clear()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        return self._logged("Python (this mode)", func, func)(*args, **(kwargs or {}))


def step_dispatch() -> None:
    """The dispatch keys a call runs through; a logging TorchDispatchMode."""
    _title("3. dispatch keys: which kernels a call runs")
    mtc.manual_seed(0)
    x, b = mtc.randn(4, 3), mtc.randn(2)
    w = mtc.randn(2, 3, requires_grad=True)
    with ShowDispatchKeys() as keys:
        mtc.ops.aten.linear(x, w, b)
    print("mtc.ops.aten.linear(x, w, b) with w.requires_grad, under a dispatch mode:")
    for line in keys.lines:
        print("  " + line)
    print("  composite ops decompose first; Autograd records a node and redispatches below "
          "itself;\n  the Python mode sees only primitive ops; the CPU kernel computes.")

    print("\nLoggingMode around y = cos(cos(x)); loss = y.sum(); loss.backward():")
    x = mtc.randn(3, requires_grad=True)
    with LoggingMode() as mode:
        y = x.cos().cos()
        loss = y.sum()
        n_forward = len(mode.log)
        loss.backward()
    for i, line in enumerate(mode.log):
        if i == 0:
            print("  forward:")
        if i == n_forward:
            print("  backward (run by the autograd engine, dispatched like any op):")
        print("    " + line)
    print("  y.grad_fn =", y.grad_fn, "-> next:", y.grad_fn.next_functions[0][0])


# --------------------------------------------------------------------------- 4. Functions
# The tutorial's code, with ``torch`` replaced by ``mtc``.


class Cosine(mtc.autograd.Function):
    @staticmethod
    def forward(x0):
        x1 = mtc.cos(x0)
        return x1, x0

    @staticmethod
    def setup_context(ctx, inputs, output):
        x1, x0 = output
        print(f"saving tensor of size {x0.shape}")
        ctx.save_for_backward(x0)

    @staticmethod
    def backward(ctx, grad_output):
        x0, = ctx.saved_tensors
        result = (-mtc.sin(x0)) * grad_output
        return result


def cosine(x):
    # `apply` calls `forward` and `setup_context`
    y, x = Cosine.apply(x)
    return y


def naive_two_cosine(x0):
    x1 = cosine(x0)
    x2 = cosine(x1)
    return x2


class AOTTransformedTwoCosine(mtc.autograd.Function):
    @staticmethod
    def forward(x0):
        x1 = mtc.cos(x0)
        x2 = mtc.cos(x1)
        return x2, x0

    @staticmethod
    def setup_context(ctx, inputs, output):
        x2, x0 = output
        print(f"saving tensor of size {x0.shape}")
        ctx.save_for_backward(x0)

    @staticmethod
    def backward(ctx, grad_x2):
        x0, = ctx.saved_tensors
        # recompute x1 in backward instead of saving it
        x1 = mtc.cos(x0)
        grad_x1 = (-mtc.sin(x1)) * grad_x2
        grad_x0 = (-mtc.sin(x0)) * grad_x1
        return grad_x0


def AOT_transformed_two_cosine(x):  # noqa: N802 - the tutorial's name
    x2, x0 = AOTTransformedTwoCosine.apply(x)
    return x2


def step_functions() -> None:
    """The tutorial's Cosine and AOTTransformedTwoCosine custom Functions."""
    _title("4. custom autograd Functions (the torch.compile tutorial)")
    mtc.manual_seed(0)
    input = mtc.randn((5, 5, 5), requires_grad=True)  # noqa: A001 - the tutorial's name
    grad_output = mtc.randn((5, 5, 5))
    output1 = mtc.cos(mtc.cos(input))
    (output1 * grad_output).sum().backward()
    grad_input1 = input.grad
    input.grad = None
    print("naive_two_cosine: two Cosine nodes, each saves its input")
    output2 = naive_two_cosine(input)
    (output2 * grad_output).sum().backward()
    grad_input2 = input.grad
    input.grad = None
    print("AOT_transformed_two_cosine: one node, saves x0 only and recomputes cos(x0)")
    output3 = AOT_transformed_two_cosine(input)
    (output3 * grad_output).sum().backward()
    grad_input3 = input.grad
    input.grad = None
    print("grad_fn:", output2.grad_fn, "and", output3.grad_fn)
    print("allclose(output1, output2):", mtc.allclose(output1, output2))
    print("allclose(output1, output3):", mtc.allclose(output1, output3))
    print("allclose(grad_input1, grad_input2):", mtc.allclose(grad_input1, grad_input2))
    print("allclose(grad_input1, grad_input3):", mtc.allclose(grad_input1, grad_input3))


# --------------------------------------------------------------------------- 6. training


def step_training() -> None:
    """A 20-step MLP training run (skipped until mtc.nn / mtc.optim exist)."""
    _title("6. a tiny MLP, trained eagerly")
    nn, optim = mtc.nn, mtc.optim
    if not (hasattr(nn, "Linear") and hasattr(optim, "SGD")):
        print("skipped: mtc.nn / mtc.optim are not available yet")
        return
    mtc.manual_seed(0)
    x = mtc.randn(64, 8)
    target = (x @ mtc.randn(8, 3)).argmax(dim=1)  # a learnable 3-class labelling
    model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 3))
    loss_fn = nn.CrossEntropyLoss()
    opt = optim.SGD(model.parameters(), lr=0.5)
    losses = []
    for step in range(20):
        opt.zero_grad()
        loss = loss_fn(model(x), target)
        loss.backward()
        opt.step()
        losses.append(loss.item())
        if step % 5 == 0 or step == 19:
            print(f"  step {step:2d}  loss {losses[-1]:.4f}")
    trend = "falls" if losses[-1] < losses[0] else "does NOT fall"
    print(f"loss {trend}: {losses[0]:.4f} -> {losses[-1]:.4f}")


# --------------------------------------------------------------------------- driver

from ._tour_dynamo import A, B, f, function, step_dynamo  # noqa: E402,F401 - compiler steps
from ._tour_inductor import step_inductor  # noqa: E402
from ._tour_registration import step_registration  # noqa: E402
from ._tour_report import step_report  # noqa: E402

STEPS: dict[str, Callable[[], None]] = {
    "tensors": step_tensors,
    "op_table": step_op_table,
    "dispatch": step_dispatch,
    "functions": step_functions,
    "registration": step_registration,
    "training": step_training,
    "dynamo": step_dynamo,
    "inductor": step_inductor,
    "report": step_report,
}


def run_tour(steps: list[str] | None = None) -> None:
    """Run the named steps (all by default) in table order."""
    names = list(STEPS) if not steps else steps
    unknown = [n for n in names if n not in STEPS]
    if unknown:
        raise ValueError(f"unknown tour step(s) {unknown}; steps are {list(STEPS)}")
    print("minitorch_compile tour — the longer versions are docs/eager.md and docs/dynamo.md")
    for name in names:
        STEPS[name]()
