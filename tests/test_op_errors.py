"""Bad input raises an error that names the op and the shapes — never a silent wrong result.

Each case is written once against a torch-shaped module ``m`` and a tensor maker ``T`` and run

* eagerly in minitorch_compile: the exception class, and fragments the message must contain
  (the op's name, the offending sizes);
* on the Meta device, for cases that need no data: the same error (eager mode runs the meta
  rules, so traced code fails exactly like eager code);
* in torch, when installed: torch raises too, of the same class.
"""

import pytest

import minitorch_compile as mtc


def _ones(m, device=None):
    def T(*shape, dtype=None):  # noqa: N802 - a tensor maker, named like a type
        kw = {"dtype": getattr(m, dtype)} if dtype else {}
        if device is not None:
            kw["device"] = device
        return m.ones(shape, **kw)
    return T


def _int(m):
    return m.tensor([1, 2])


def _set_requires_grad(m):
    m.tensor([1, 2]).requires_grad_(True)


# (id, fn(m, T), exception class, fragments of the message, eager only): "eager only" cases
# need data (values, index ranges), build cpu index tensors (m.tensor) beside T's, or are
# checked by the numpy kernel rather than the meta rule (bool subtraction and negation, alpha),
# so the Meta device does not see them.
CASES = [
    # a Python int beyond int64 (torch's Scalar): OverflowError, not inf
    ("add-int-too-big", lambda m, T: T(2) + 10 ** 40, OverflowError,
     ["int too big to convert"], False),
    ("rsub-int-too-big", lambda m, T: 10 ** 40 - T(2), OverflowError,
     ["int too big to convert"], False),
    ("fill-int-too-big", lambda m, T: T(2).fill_(-(10 ** 30)), OverflowError,
     ["int too big to convert"], False),
    ("clamp-int-too-big", lambda m, T: T(2).clamp(max=2 ** 64), OverflowError,
     ["int too big to convert"], False),
    ("add-shapes", lambda m, T: T(2, 3) + T(4), RuntimeError, ["add", "(3)", "(4)"], False),
    ("mul-shapes", lambda m, T: T(2, 3) * T(2, 4), RuntimeError, ["mul", "(3)", "(4)"], False),
    ("add_-broadcast-into-self", lambda m, T: T(3).add_(T(2, 3)), RuntimeError,
     ["add_", "[3]", "[2, 3]"], False),
    ("mm-shapes", lambda m, T: m.mm(T(2, 3), T(4, 5)), RuntimeError, ["mm", "2x3", "4x5"],
     False),
    ("mm-1d", lambda m, T: m.mm(T(3), T(3, 5)), RuntimeError, ["mm", "2D"], False),
    ("matmul-shapes", lambda m, T: m.matmul(T(2, 3), T(4, 5)), RuntimeError,
     ["mm", "2x3", "4x5"], False),  # 2-D @ 2-D is mm, whose error it reports (as torch)
    ("matmul-batched-shapes", lambda m, T: m.matmul(T(2, 2, 3), T(3, 4, 5)), RuntimeError,
     ["matmul", "2x2x3", "3x4x5"], False),
    ("matmul-batch-broadcast", lambda m, T: m.matmul(T(2, 2, 3), T(3, 3, 5)), RuntimeError,
     ["matmul", "2x2x3", "3x3x5"], False),
    ("matmul-matrix-vector", lambda m, T: m.matmul(T(2, 3), T(4)), RuntimeError,
     ["matmul", "2x3", "4"], False),
    ("matmul-dot", lambda m, T: m.matmul(T(3), T(4)), RuntimeError, ["matmul", "[3]", "[4]"],
     False),
    ("bmm-batch", lambda m, T: m.bmm(T(2, 2, 3), T(3, 3, 4)), RuntimeError,
     ["bmm", "2 and 3"], False),
    ("bmm-inner", lambda m, T: m.bmm(T(2, 2, 3), T(2, 4, 4)), RuntimeError,
     ["bmm", "[2, 3]", "[2, 4]"], False),
    ("sum-dim", lambda m, T: T(2, 3).sum(2), IndexError, ["sum", "[-2, 1]", "got 2"], False),
    ("softmax-dim", lambda m, T: T(2, 3).softmax(-3), IndexError, ["softmax", "got -3"],
     False),
    ("log_softmax-dim", lambda m, T: T(2, 3).log_softmax(2), IndexError,
     ["log_softmax", "got 2"], False),
    ("transpose-dim", lambda m, T: T(2, 3).transpose(0, 2), IndexError,
     ["transpose", "got 2"], False),
    ("unsqueeze-dim", lambda m, T: T(2, 3).unsqueeze(3), IndexError,
     ["unsqueeze", "[-3, 2]", "got 3"], False),
    ("select-dim", lambda m, T: T(2, 3).select(2, 0), IndexError, ["select", "got 2"], False),
    ("select-index", lambda m, T: T(2, 3).select(1, 3), IndexError,
     ["select", "index 3", "[2, 3]", "dimension 1"], False),
    ("getitem-index", lambda m, T: T(2, 3)[2], IndexError,  # torch's indexing message
     ["index 2", "out of bounds", "dimension 0", "size 2"], False),
    ("max-dim", lambda m, T: T(2).max(1), IndexError, ["max", "got 1"], False),
    ("view-size", lambda m, T: T(2, 3).view(4), RuntimeError, ["view", "[4]", "6"], False),
    ("view-stride", lambda m, T: T(2, 3).t().view(6), RuntimeError,
     ["view", "[3, 2]", "reshape"], True),
    ("reshape-size", lambda m, T: T(2, 3).reshape(5), RuntimeError, ["reshape", "[5]", "6"],
     False),
    ("expand-size", lambda m, T: T(2, 3).expand(2, 4), RuntimeError,
     ["expand", "[2, 4]", "[2, 3]"], False),
    ("permute-length", lambda m, T: T(2, 3).permute(0), RuntimeError, ["permute", "2"], False),
    ("cat-shapes", lambda m, T: m.cat([T(2, 3), T(2, 4)]), RuntimeError,
     ["cat", "size 3", "size 4", "tensor number 1"], False),
    ("cat-ndim", lambda m, T: m.cat([T(2, 3), T(3)]), RuntimeError, ["cat", "2 and 1"], False),
    ("cat-0-dim", lambda m, T: m.cat([T(), T()]), RuntimeError, ["cat", "zero-dimensional"],
     False),
    ("stack-shapes", lambda m, T: m.stack([T(2), T(3)]), RuntimeError,
     ["stack", "[2]", "[3]"], False),
    ("where-shapes", lambda m, T: m.where(T(3) > 0, T(2), T(3)), RuntimeError,
     ["where", "(3)", "(2)"], False),
    ("where-float-condition", lambda m, T: m.where(T(3), T(3), T(3)), RuntimeError,
     ["where", "boolean", "float32"], False),
    ("mm-dtypes", lambda m, T: m.mm(T(2, 3), T(3, 4, dtype="float64")), RuntimeError,
     ["mm", "float", "double"], False),  # (torch's TypeMeta names: "float != double")
    ("matmul-dtypes", lambda m, T: m.matmul(T(2, 3), T(3, 4, dtype="float64")), RuntimeError,
     ["mm", "dtype"], False),
    ("matmul-batched-dtypes", lambda m, T: m.matmul(T(2, 2, 3), T(3, 4, dtype="float64")),
     RuntimeError, ["matmul", "dtype"], False),
    ("mean-int64", lambda m, T: T(3, dtype="int64").mean(), RuntimeError,
     ["mean", "floating point"], False),
    ("var-int64", lambda m, T: T(3, dtype="int64").var(), RuntimeError,
     ["var", "floating point"], False),
    ("requires_grad-int", lambda m, T: _set_requires_grad(m), RuntimeError,
     ["floating point", "gradients"], True),
    ("mul_-float-into-int", lambda m, T: T(3, dtype="int64").mul_(1.5), RuntimeError,
     ["mul_", "can't be cast", "Long"], False),  # (torch names c10 types: Long)
    ("div_-float-into-int", lambda m, T: T(3, dtype="int64").div_(2), RuntimeError,
     ["div_", "can't be cast"], False),
    ("exp_-float-into-int", lambda m, T: T(3, dtype="int64").exp_(), RuntimeError,
     ["exp_", "can't be cast"], False),
    ("add-float-alpha-ints", lambda m, T: m.add(_int(m), _int(m), alpha=0.5), RuntimeError,
     ["add", "alpha"], True),
    ("sub-bool", lambda m, T: T(2, dtype="bool") - T(2, dtype="bool"), RuntimeError,
     ["sub", "bool"], True),
    ("neg-bool", lambda m, T: -T(2, dtype="bool"), RuntimeError, ["neg", "bool"], True),
    ("int-floor-div-by-zero", lambda m, T: _int(m) // 0, RuntimeError,
     ["div", "ZeroDivisionError"], True),
    ("int-pow-negative", lambda m, T: _int(m) ** -1, RuntimeError, ["pow", "negative"], True),
    ("embedding-index", lambda m, T: m.embedding(T(3, 2), m.tensor([3])), IndexError,
     ["embedding", "index out of range"], True),
    ("layer_norm-shape", lambda m, T: m.layer_norm(T(2, 3), [2]), RuntimeError,
     ["layer_norm", "[2]", "[2, 3]"], False),
    ("split-sizes", lambda m, T: T(4).split([1, 2]), RuntimeError, ["split", "4", "[1, 2]"],
     False),
    ("flatten-dims", lambda m, T: T(2, 3).flatten(1, 0), RuntimeError, ["flatten"], False),
    ("arange-step-sign", lambda m, T: m.arange(0, 5, -1), RuntimeError, ["arange"], False),
    ("amax-empty", lambda m, T: T(0).amax(), RuntimeError, ["amax", "numel() == 0"], False),
    # the breadth ops (issue 9)
    ("remainder-int-by-zero", lambda m, T: m.remainder(_int(m), 0), RuntimeError,
     ["remainder", "ZeroDivisionError"], True),
    ("fmod-int-by-zero", lambda m, T: m.fmod(_int(m), m.tensor([0, 1])), RuntimeError,
     ["fmod", "ZeroDivisionError"], True),
    ("bitwise-float", lambda m, T: m.bitwise_and(T(2), T(2)), NotImplementedError,
     ['"bitwise_and_cpu" not implemented for \'Float\''], True),
    ("xor-float", lambda m, T: T(2) ^ T(2), NotImplementedError,
     ['"bitwise_xor_cpu"', "'Float'"], True),
    ("invert-float", lambda m, T: ~T(2), TypeError, ["~", "integer and Boolean"], False),
    ("remainder-bool", lambda m, T: m.remainder(T(2, dtype="bool"), T(2, dtype="bool")),
     NotImplementedError, ['"remainder_cpu"', "'Bool'"], True),
    ("logsumexp-dim", lambda m, T: m.logsumexp(T(2, 3), 2), IndexError,
     ["[-2, 1]", "got 2"], False),
    ("var_mean-int64", lambda m, T: m.var_mean(T(3, dtype="int64")), RuntimeError,
     ["var_mean", "floating point"], False),
    ("addmm-shapes", lambda m, T: m.addmm(T(3), T(2, 3), T(3, 2)), RuntimeError,
     ["expanded size", "[2, 2]", "[3]"], False),
    ("addmm-dtypes", lambda m, T: m.addmm(T(2, 2, dtype="float64"), T(2, 3), T(3, 2)),
     RuntimeError, ["self and mat2 must have the same dtype", "Double and Float"], False),
    ("narrow-start", lambda m, T: m.narrow(T(2, 3), 1, 4, 1), IndexError,
     ["start out of range", "[-3, 3]", "got 4"], False),
    ("narrow-length", lambda m, T: m.narrow(T(2, 3), 1, 2, 2), RuntimeError,
     ["start (2) + length (2) exceeds dimension size (3)"], False),
    ("narrow-0-dim", lambda m, T: m.narrow(T(), 0, 0, 1), RuntimeError,
     ["narrow() cannot be applied to a 0-dim tensor"], False),
    ("flip-repeated-dim", lambda m, T: m.flip(T(2, 3), [0, -2]), RuntimeError,
     ["dim 0 appears multiple times"], False),
    ("repeat-too-few", lambda m, T: T(2, 3).repeat(2), RuntimeError,
     ["repeat dims can not be smaller"], False),
    ("index_select-range", lambda m, T: T(2, 3).index_select(1, m.tensor([3])), RuntimeError,
     ["out of DATA bounds", "id=3", "axis_dim=3"], True),
    ("index_select-negative", lambda m, T: T(2, 3).index_select(1, m.tensor([-1])),
     RuntimeError, ["out of DATA bounds", "id=-1"], True),
    ("index_select-matrix", lambda m, T: T(2, 3).index_select(1, m.tensor([[1]])), IndexError,
     ["index_select(): Index is supposed to be a vector"], True),
    ("index_select-float-index", lambda m, T: T(2, 3).index_select(1, T(1)), RuntimeError,
     ["index_select(): Expected dtype int32 or int64 for index"], False),
    ("gather-range", lambda m, T: T(2, 3).gather(1, m.tensor([[5]])), RuntimeError,
     ["index 5 is out of bounds for dimension 1 with size 3"], True),
    ("gather-negative", lambda m, T: T(2, 3).gather(1, m.tensor([[-1]])), RuntimeError,
     ["index -1 is out of bounds for dimension 1 with size 3"], True),
    ("gather-rank", lambda m, T: T(2, 3).gather(1, m.tensor([1])), RuntimeError,
     ["Index tensor must have the same number of dimensions as input tensor"], True),
    ("gather-size", lambda m, T: T(2, 3).gather(0, m.tensor([[0, 0, 0, 0]])), RuntimeError,
     ["Size does not match at dimension 1", "[1, 4]", "[2, 3]"], True),
    ("gather-float-index", lambda m, T: T(2, 3).gather(1, T(2, 1)), RuntimeError,
     ["gather(): Expected dtype int32/int64 for index"], False),
    ("scatter_add-range", lambda m, T: m.scatter_add(T(2, 3), 1, m.tensor([[5]]), T(2, 3)),
     RuntimeError, ["index 5 is out of bounds for dimension 1 with size 3"], True),
    ("scatter_add-dtype", lambda m, T: m.scatter_add(T(2, 3), 1, m.tensor([[0]]),
                                                     T(2, 3, dtype="float64")),
     RuntimeError, ["Expected self.dtype to be equal to src.dtype"], True),
    ("linspace-steps", lambda m, T: m.linspace(0, 1, -2), RuntimeError,
     ["number of steps must be non-negative"], False),
    ("randint-range", lambda m, T: m.randint(5, 5, (2,)), RuntimeError,
     ["random_ expects 'from' to be less than 'to'", "from=5 >= to=5"], False),
    ("randperm-negative", lambda m, T: m.randperm(-1), RuntimeError,
     ["negative dimension -1"], False),
    ("silu-int", lambda m, T: m.nn.functional.silu(_int(m)), NotImplementedError,
     ['"silu_cpu" not implemented for \'Long\''], False),
    ("hardswish-int", lambda m, T: m.nn.functional.hardswish(_int(m)), NotImplementedError,
     ['"hardswish_cpu"', "'Long'"], False),
    ("hardsigmoid-int", lambda m, T: m.nn.functional.hardsigmoid(_int(m)), NotImplementedError,
     ['"hardsigmoid_cpu"', "'Long'"], False),
    ("l1_loss-shapes", lambda m, T: m.nn.functional.l1_loss(T(2, 3), T(3, 3)), RuntimeError,
     ["(2)", "(3)"], False),
    ("batch_norm-running-mean", lambda m, T: m.nn.functional.batch_norm(
        T(4, 3, 2), T(4), T(4), training=True), RuntimeError,
     ["running_mean should contain 3 elements not 4"], False),
    ("batch_norm-weight", lambda m, T: m.nn.functional.batch_norm(
        T(4, 3), None, None, weight=T(2), training=True), RuntimeError,
     ["weight should contain 3 elements not 2"], False),
    ("batch_norm-eval-no-stats", lambda m, T: m.nn.functional.batch_norm(
        T(4, 3), None, None, training=False), RuntimeError,
     ["running_mean must be defined in evaluation mode"], False),
    ("batch_norm-one-value", lambda m, T: m.nn.functional.batch_norm(
        T(1, 3), None, None, training=True), ValueError,
     ["Expected more than 1 value per channel when training", "[1, 3]"], False),
    ("batch_norm-int", lambda m, T: m.nn.functional.batch_norm(
        m.tensor([[1, 2], [3, 4]]), None, None, training=True), NotImplementedError,
     ['"batch_norm" not implemented for \'Long\''], False),
    ("batchnorm1d-4d", lambda m, T: m.nn.BatchNorm1d(3)(T(2, 3, 4, 5)), ValueError,
     ["expected 2D or 3D input (got 4D input)"], False),
    ("batchnorm2d-3d", lambda m, T: m.nn.BatchNorm2d(3)(T(2, 3, 4)), ValueError,
     ["expected 4D input (got 3D input)"], False),
    # torch's parser: a number beside a tensor picks clamp(Scalar?, Scalar?), which reads only a
    # 0-dim tensor that does not require grad as a number; nothing else matches
    ("clamp-number-and-1d-tensor", lambda m, T: m.clamp(T(2), 0.5, T(1)), TypeError,
     ["clamp()", "invalid combination", "(Tensor, float, Tensor)"], False),
    ("clamp_-requires-grad-bound", lambda m, T: T(2).clamp_(m.ones((), requires_grad=True), 1),
     TypeError, ["clamp_()", "invalid combination", "(Tensor, Tensor, int)"], True),
]
IDS = [c[0] for c in CASES]
META_CASES = [c for c in CASES if not c[4]]


@pytest.mark.parametrize("label,fn,exc,fragments,needs_data", CASES, ids=IDS)
def test_bad_input_raises_naming_op_and_shapes(label, fn, exc, fragments, needs_data):
    with pytest.raises(exc) as info:
        fn(mtc, _ones(mtc))
    msg = str(info.value)
    for f in fragments:
        assert f in msg, f"{label}: {f!r} missing from the error message {msg!r}"


@pytest.mark.parametrize("label,fn,exc,fragments,needs_data", META_CASES,
                         ids=[c[0] for c in META_CASES])
def test_meta_device_raises_the_same_error(label, fn, exc, fragments, needs_data):
    with pytest.raises(exc) as info:
        fn(mtc, _ones(mtc, device="meta"))
    for f in fragments:
        assert f in str(info.value)


@pytest.mark.torch
@pytest.mark.parametrize("label,fn,exc,fragments,needs_data", CASES, ids=IDS)
def test_torch_raises_too(label, fn, exc, fragments, needs_data):
    torch = pytest.importorskip("torch")
    with pytest.raises(exc):
        fn(torch, _ones(torch))


def test_errors_do_not_leave_partial_results():
    """A failing in-place op leaves its target untouched."""
    x = mtc.tensor([1, 2])
    with pytest.raises(RuntimeError):
        x.mul_(1.5)
    assert x.tolist() == [1, 2] and x._version == 0
    y = mtc.ones(3)
    with pytest.raises(RuntimeError):
        y.add_(mtc.ones(2, 3))
    assert y.tolist() == [1.0, 1.0, 1.0]


def test_unsupported_flags_raise_instead_of_being_ignored():
    """embedding(scale_grad_by_freq=True) would silently give unscaled gradients."""
    with pytest.raises(NotImplementedError, match="embedding.*scale_grad_by_freq"):
        mtc.embedding(mtc.ones(3, 2), mtc.tensor([0]), -1, True)


def test_clamp_needs_a_bound():
    with pytest.raises(RuntimeError, match="At least one of 'min' or 'max' must not be None"):
        mtc.clamp(mtc.ones(2))



def test_python_ints_cast_to_the_dtype_as_torch_casts_them():
    """Inside int64, a Python int meets a tensor as torch's Scalar does: cast to the op's dtype
    (wrapping around for a narrower int dtype), or rounded to a float dtype (``inf`` beyond its
    range, as torch gives)."""
    cases = [(lambda m: m.ones(2, dtype=m.int32) + 2 ** 40, [1, 1]),
             (lambda m: m.ones(2, dtype=m.int32) * (2 ** 32 + 3), [3, 3]),
             (lambda m: m.zeros(2, dtype=m.int64) + (2 ** 63 - 1), [2 ** 63 - 1] * 2),
             (lambda m: m.ones(2, dtype=m.float16) + 70000, [float("inf")] * 2)]
    for fn, expected in cases:
        assert fn(mtc).tolist() == expected
    try:
        import torch
    except ImportError:
        return
    for fn, expected in cases:
        assert fn(torch).tolist() == expected


def test_compiled_code_raises_the_overflow_eager_raises():
    fn = mtc.compile(lambda x: x * 10 ** 40, backend="eager")
    with pytest.raises(OverflowError, match="int too big to convert"):
        fn(mtc.ones(2))
