"""Optimizers, LR schedulers and training steps under the compiler, and programs of torch's
``test/dynamo`` suites with module and training code, compared with torch 2.13.

The optimizer programs keep their state at module level (the ``prelude``: a fresh model,
optimizer and scheduler for every run) and return the parameters and the lr, so a compiled
run must leave the same weights and the same schedule as an eager one.  torch's decisions they
pin down (``docs/graph_breaks.md`` §"Optimizers and LR schedulers"):

* ``opt.step(); sched.step()``: the scheduler wrapped ``opt.step`` in a function defined in
  ``torch/optim/lr_scheduler.py``, a force-skipped file — a graph break at ``opt.step()``; the
  real step is compiled as a frame of its own (one graph), ``sched.step()`` runs eagerly; when
  the lr changes the step recompiles once with the lr as a graph input (automatic dynamic) —
  two graphs over four calls;
* ``opt.zero_grad()`` is ``@_disable_dynamo`` (a break), ``loss.backward()`` is a break;
* ``clip_grad_norm_`` is traced (its graph holds the norms).

Programs written in the manner of a test whose exact name was not checked cite
``after <file>``.
"""

from .dynamo_fidelity import Program, fidelity_tests, ramp

P = Program

MODEL = """
lib.manual_seed(0)
w = lib.nn.Parameter(lib.arange(6.).reshape(2, 3) * 0.1)
b = lib.nn.Parameter(lib.arange(2.) * 0.1 - 0.05)
def set_grads():
    w.grad = lib.arange(6.).reshape(2, 3) * 0.05 + 0.5
    b.grad = lib.ones(2) * 0.2
set_grads()
"""


def opt_prelude(opt: str, sched: str = "", double: bool = False) -> str:
    """The two parameters, ``opt`` and ``sched``.  ``double``: float64 parameters away from 0,
    for Adam — its compiled bias corrections come from the float32 step *tensor* (capturable),
    which differs from eager's Python floats in the 7th digit (torch's do too)."""
    model = MODEL.replace("6.)", "6., dtype=lib.float64)").replace(
        "2.)", "2., dtype=lib.float64)").replace("ones(2)", "ones(2, dtype=lib.float64)").replace(
        "* 0.1)", "* 0.1 + 1.0)").replace("- 0.05)", "+ 1.0)") \
        if double else MODEL
    return model + f"opt = {opt}\n" + (f"sched = {sched}\n" if sched else "")


def steps(n: int = 4):
    return lambda lib: [() for _ in range(n)]


STEP_AND_SCHEDULE = """
def f():
    opt.step()
    sched.step()
    return w, b
"""

LINEAR = """
lib.manual_seed(0)
model = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.ReLU(), lib.nn.Linear(4, 2))
with lib.no_grad():
    for i, p in enumerate(model.parameters()):
        p.copy_(lib.arange(p.numel()).float().reshape(p.shape) * 0.05 - 0.1 * i)
"""


RECIPE = """
model = lib.nn.Sequential(*[lib.nn.Linear(8, 8, False) for _ in range(10)])
with lib.no_grad():
    for i, q in enumerate(model.parameters()):
        q.copy_((lib.arange(64).float().reshape(8, 8) % 7 - 3) * 0.05 + 0.01 * i)
inp = lib.arange(8).float() * 0.1
model(inp).sum().backward()
"""

STEP_ONLY_RECIPE = """
def f():
    opt.step()
    sched.step()
    return model[0].weight
"""


def batch(lib):
    return [(ramp(lib, 5, 3), ramp(lib, 5, 2, scale=0.07, shift=0.2)) for _ in range(3)]


PROGRAMS = {
    # ------------------------------------------------ optimizer + scheduler in one function
    "sgd_steplr": P(STEP_AND_SCHEDULE, steps(), "after test_optimizers.py (StepLR)",
                    prelude=opt_prelude("lib.optim.SGD([w, b], lr=0.1)",
                                        "lib.optim.lr_scheduler.StepLR(opt, 2, 0.5)")),
    "sgd_momentum_exponentiallr": P(STEP_AND_SCHEDULE, steps(), "after test_optimizers.py",
                                    prelude=opt_prelude(
                                        "lib.optim.SGD([w, b], lr=0.1, momentum=0.9)",
                                        "lib.optim.lr_scheduler.ExponentialLR(opt, 0.9)")),
    "sgd_lambdalr": P(STEP_AND_SCHEDULE, steps(), "after test_optimizers.py (LambdaLR)",
                      prelude=opt_prelude("lib.optim.SGD([w, b], lr=0.1)",
                                          "lib.optim.lr_scheduler.LambdaLR(opt, lambda e: "
                                          "0.9 ** e)")),
    "sgd_multisteplr": P(STEP_AND_SCHEDULE, steps(5), "after test_optimizers.py",
                         prelude=opt_prelude("lib.optim.SGD([w, b], lr=0.1, weight_decay=0.01)",
                                             "lib.optim.lr_scheduler.MultiStepLR(opt, [1, 3], "
                                             "0.5)")),
    "sgd_cosine": P(STEP_AND_SCHEDULE, steps(), "after test_optimizers.py",
                    prelude=opt_prelude("lib.optim.SGD([w, b], lr=0.1, momentum=0.5, "
                                        "nesterov=True)",
                                        "lib.optim.lr_scheduler.CosineAnnealingLR(opt, 5)")),
    "adam_exponentiallr": P(STEP_AND_SCHEDULE, steps(), "after test_optimizers.py",
                            ops=False, prelude=opt_prelude(
                                "lib.optim.Adam([w, b], lr=0.1)",
                                "lib.optim.lr_scheduler.ExponentialLR(opt, 0.9)", True)),
    "adamw_cosine": P(STEP_AND_SCHEDULE, steps(), "after test_optimizers.py", ops=False,
                      prelude=opt_prelude("lib.optim.AdamW([w, b], lr=0.1)",
                                          "lib.optim.lr_scheduler.CosineAnnealingLR(opt, 5)",
                                          True)),
    "sgd_tensor_lr_exponentiallr": P(STEP_AND_SCHEDULE, steps(), "after test_optimizers.py "
                                     "(a tensor lr)", prelude=opt_prelude(
                                         "lib.optim.SGD([w, b], lr=lib.tensor(0.1))",
                                         "lib.optim.lr_scheduler.ExponentialLR(opt, 0.9)")),
    "adam_tensor_lr_steplr": P(STEP_AND_SCHEDULE, steps(), "after test_optimizers.py",
                               ops=False, prelude=opt_prelude(
                                   "lib.optim.Adam([w, b], lr=lib.tensor(0.1))",
                                   "lib.optim.lr_scheduler.StepLR(opt, 1, 0.5)", True)),
    "sgd_steplr_returns_lr": P("""
        def f():
            opt.step()
            sched.step()
            return w, opt.param_groups[0]["lr"]
        """, steps(), "after test_optimizers.py (the lr read back: a float no tensor op uses)",
        prelude=opt_prelude("lib.optim.SGD([w, b], lr=0.1)",
                            "lib.optim.lr_scheduler.StepLR(opt, 1, 0.5)")),
    # torch's recipe "Running the compiled optimizer with an LR scheduler" (its model at 8 wide)
    "recipe_tensor_lr_adam_exponentiallr": P(STEP_ONLY_RECIPE, steps(5),
                                             "recipes/compiling_optimizer_lr_scheduler.py "
                                             "(tensor lr)", ops=False,
                                             prelude=RECIPE + "opt = lib.optim.Adam("
                                             "model.parameters(), lr=lib.tensor(0.01))\n"
                                             "sched = lib.optim.lr_scheduler.ExponentialLR("
                                             "opt, gamma=0.9)\n"),
    "recipe_float_lr_sgd_exponentiallr": P(STEP_ONLY_RECIPE, steps(5),
                                           "recipes/compiling_optimizer_lr_scheduler.py (the "
                                           "float lr extension)",
                                           prelude=RECIPE + "opt = lib.optim.SGD("
                                           "model.parameters(), lr=0.01)\n"
                                           "sched = lib.optim.lr_scheduler.ExponentialLR("
                                           "opt, gamma=0.9)\n"),
    "step_without_scheduler": P("""
        def f():
            opt.step()
            return w, b
        """, steps(3), "after test_optimizers.py",
        prelude=opt_prelude("lib.optim.SGD([w, b], lr=0.1)")),
    "scheduler_step_only": P("""
        def f():
            sched.step()
            return opt.param_groups[0]["lr"]
        """, steps(3), "after test_optimizers.py",
        prelude=opt_prelude("lib.optim.SGD([w, b], lr=0.1)",
                            "lib.optim.lr_scheduler.StepLR(opt, 1, 0.5)")),
    "get_last_lr_in_loss": P("""
        def f(x):
            return x * sched.get_last_lr()[0]
        """, lambda lib: [(ramp(lib, 3),)] * 2, "after test_optimizers.py",
        prelude=opt_prelude("lib.optim.SGD([w, b], lr=0.1)",
                            "lib.optim.lr_scheduler.StepLR(opt, 1, 0.5)")),
    "lr_read_scheduled_outside": P("""
        def f(x):
            sched.step()
            return x * opt.param_groups[0]["lr"]
        """, lambda lib: [(ramp(lib, 3),)] * 4, "after test_optimizers.py",
        prelude=opt_prelude("lib.optim.SGD([w, b], lr=0.1)",
                            "lib.optim.lr_scheduler.ExponentialLR(opt, 0.5)")),
    "step_then_zero_grad": P("""
        def f():
            opt.step()
            opt.zero_grad()
            set_grads()
            return w, b
        """, steps(3), "after test_optimizers.py",
        prelude=opt_prelude("lib.optim.SGD([w, b], lr=0.1, momentum=0.9)")),
    # ------------------------------------------------ a float that changes (an lr) and its uses
    "float_arg_passed_through_a_break": P("""
        def f(t, k):
            print("k", k)
            return t * k
        """, lambda lib: [(ramp(lib, 3), k) for k in (3.0, 1.0, 2.0)],
        "after test_misc.py (automatic dynamic floats; tensorify_python_scalars)"),
    "float_computed_before_a_break": P("""
        def f(k):
            y = k * 2
            print("y", y)
            return y
        """, lambda lib: [(k,) for k in (3.0, 1.0, 2.0)],
        "after test_misc.py (automatic dynamic floats)"),
    "float_only_returned": P("""
        def f(k):
            return k * 2
        """, lambda lib: [(k,) for k in (3.0, 1.0, 2.0)],
        "after test_misc.py (tensorify_python_scalars: a float no tensor op reads)"),
    # ------------------------------------------------ training steps with a model
    "forward_backward": P("""
        def f(x, y):
            loss = lib.nn.functional.mse_loss(model(x), y)
            loss.backward()
            return loss, model[0].weight.grad
        """, batch, "after test_repros.py (backward inside the compiled function)",
        prelude=LINEAR),
    "zero_grad_forward_backward": P("""
        def f(x, y):
            opt.zero_grad()
            loss = lib.nn.functional.mse_loss(model(x), y)
            loss.backward()
            return loss
        """, batch, "after test_optimizers.py",
        prelude=LINEAR + "opt = lib.optim.SGD(model.parameters(), lr=0.1)\n"),
    "clip_grad_norm": P("""
        def f(x, y):
            loss = lib.nn.functional.mse_loss(model(x), y)
            loss.backward()
            norm = lib.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
            return loss, norm
        """, batch, "after test_repros.py (clip_grad_norm_)",
        prelude=LINEAR),
    "clip_grad_norm_of_grads": P("""
        def f():
            norm = lib.nn.utils.clip_grad_norm_([w, b], 0.5)
            return norm, w.grad, b.grad
        """, steps(2), "after test_repros.py (clip_grad_norm_)", prelude=MODEL),
    "clip_grad_value": P("""
        def f():
            lib.nn.utils.clip_grad_value_([w, b], 0.55)
            return w.grad, b.grad
        """, steps(2), "after test_repros.py", prelude=MODEL),
    "full_train_step": P("""
        def f(x, y):
            opt.zero_grad()
            loss = lib.nn.functional.mse_loss(model(x), y)
            loss.backward()
            lib.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            sched.step()
            return loss
        """, batch, "after test_optimizers.py (a whole training step)",
        prelude=LINEAR + "opt = lib.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)\n"
        "sched = lib.optim.lr_scheduler.StepLR(opt, 1, 0.5)\n"),
    "full_train_step_adam": P("""
        def f(x, y):
            opt.zero_grad()
            loss = lib.nn.functional.mse_loss(model(x), y)
            loss.backward()
            opt.step()
            sched.step()
            return loss
        """, batch, "after test_optimizers.py", ops=False,
        prelude=LINEAR + "opt = lib.optim.Adam(model.parameters(), lr=0.01)\n"
        "sched = lib.optim.lr_scheduler.ExponentialLR(opt, 0.9)\n"),
    "loss_only_compiled": P("""
        def f(x, y):
            return lib.nn.functional.mse_loss(model(x), y)
        """, batch, "after test_modules.py", prelude=LINEAR),
}

TORCH_COUNTS = {
    'sgd_steplr': (2, 1, 0, (2, 4)),
    'sgd_momentum_exponentiallr': (2, 1, 0, (6, 8)),
    'sgd_lambdalr': (2, 1, 0, (2, 4)),
    'sgd_multisteplr': (2, 1, 0, (4, 6)),
    'sgd_cosine': (2, 1, 0, (8, 10)),
    'adam_exponentiallr': (2, 1, 0),
    'adamw_cosine': (2, 1, 0),
    'sgd_tensor_lr_exponentiallr': (1, 1, 0, (6,)),
    'adam_tensor_lr_steplr': (1, 1, 0),
    'sgd_steplr_returns_lr': (2, 1, 0, (2, 4)),
    'recipe_tensor_lr_adam_exponentiallr': (1, 1, 0),
    'recipe_float_lr_sgd_exponentiallr': (2, 1, 0, (10, 12)),
    'step_without_scheduler': (1, 1, 0, (2,)),
    'scheduler_step_only': (0, 0, -1, ()),
    'get_last_lr_in_loss': (1, 1, 0, (1,)),
    'lr_read_scheduled_outside': (2, 1, 0, (1, 2)),
    'step_then_zero_grad': (3, 2, 1, (6, 6, 6)),
    'float_arg_passed_through_a_break': (3, 1, 0, (1, 0, 2)),
    'float_computed_before_a_break': (1, 0, -1, (3,)),
    'float_only_returned': (0, 0, -1, ()),
    'forward_backward': (1, 1, 0, (4,)),
    'zero_grad_forward_backward': (1, 1, 0, (4,)),
    'clip_grad_norm': (2, 2, 1, (4, 18)),
    'clip_grad_norm_of_grads': (1, 1, 0, (14,)),
    'clip_grad_value': (1, 1, 0, (4,)),
    'full_train_step': (4, 3, 2, (4, 18, 12, 14)),
    'full_train_step_adam': (3, 2, 1),
    'loss_only_compiled': (1, 1, 0, (4,)),
}

_CLIP = ("torch's clip_grad_norm_ uses foreach kernels (_foreach_norm, getitems, .to(device), "
         "_foreach_mul_); mtc's computes each norm as sqrt(sum(g * g)) and multiplies grad by "
         "grad — the same decisions, more ops")
DIFFERS = {
    "sgd_tensor_lr_exponentiallr": ((1, 1, 0, (4,)),
                                    "a tensor lr: torch's Dynamo rewrites `add_(grad, alpha=-lr)` "
                                    "with a tensor alpha into neg + prims.fma + copy_ (3 ops per "
                                    "parameter); mtc's SGD writes `sub_(grad * lr)` (2 ops)"),
    "float_arg_passed_through_a_break": ((3, 1, 0, (1, 2, 2)),
                                         "k changed: the frame, which breaks at print() before "
                                         "any op, passes k to its resume function; torch 2.13 "
                                         "specializes k there and still hands the backend an "
                                         "empty graph, mtc's graph reads k (item) and returns it "
                                         "(scalar_tensor) — same graph count, values equal"),
    "clip_grad_norm": ((2, 2, 1, (4, 25)), _CLIP),
    "clip_grad_norm_of_grads": ((1, 1, 0, (17,)), _CLIP),
    "full_train_step": ((4, 3, 2, (4, 25, 12, 14)), _CLIP),
}

test_compiled_equals_eager_with_torchs_counts, test_torch_counts_are_the_table = \
    fidelity_tests(PROGRAMS, TORCH_COUNTS, DIFFERS)


# ---------------------------------------------------------------- the rules behind the counts
def test_scheduler_files_are_force_skipped_and_steps_are_frames():
    import minitorch_compile as mtc
    from minitorch_compile.dynamo import trace_rules
    from minitorch_compile.optim import lr_scheduler_more

    S = mtc.optim.lr_scheduler
    assert trace_rules.is_force_skipped(S.StepLR.step)
    assert trace_rules.is_force_skipped(lr_scheduler_more.OneCycleLR.get_lr)
    assert not trace_rules.is_force_skipped(mtc.optim.SGD.step)
    assert not trace_rules.is_force_skipped(mtc.nn.utils.clip_grad_norm_)
    # the function _use_grad wraps is compiled as a frame when the skipped wrapper calls it
    assert trace_rules.frame_of_its_own(mtc.optim.SGD.step.__wrapped__)
    assert trace_rules.frame_of_its_own(mtc.optim.Adam.step.__wrapped__)
    assert not trace_rules.frame_of_its_own(S.StepLR.step)
    assert not trace_rules.frame_of_its_own(mtc.optim.SGD.zero_grad)


def test_the_scheduler_wraps_opt_step_once_and_warns_on_the_wrong_order():
    import warnings

    import pytest

    import minitorch_compile as mtc

    p = mtc.nn.Parameter(mtc.ones(2))
    opt = mtc.optim.SGD([p], lr=0.1)
    S = mtc.optim.lr_scheduler
    sched = S.StepLR(opt, 1)
    wrapper = opt.step
    assert wrapper._wrapped_by_lr_sched and wrapper.__name__ == "step"
    S.ExponentialLR(opt, 0.9)  # a second scheduler keeps the same wrapper
    assert opt.step is wrapper
    with pytest.warns(UserWarning, match="before `optimizer.step"):
        sched.step()
    p.grad = mtc.ones(2)
    opt.step()
    assert opt._opt_called
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        S.StepLR(mtc.optim.SGD([p], lr=0.1), 1)


def test_graph_break_is_a_no_op_eagerly_and_a_break_traced():
    import minitorch_compile as mtc

    def f(x):
        y = x + 1
        mtc._dynamo.graph_break()
        return y * 2

    x = mtc.arange(3.0)
    assert mtc._dynamo.graph_break() is None
    report = mtc.dynamo.explain(f)(x)
    assert (report.graph_count, report.graph_break_count) == (2, 1)
    assert "user-inserted graph break" in report.break_reasons[0].reason
    assert mtc.equal(mtc.compile(f, backend="eager")(x), f(x))


def test_a_float_only_returned_is_specialized_not_a_graph():
    """torch's tensorify_python_scalars: a float that became a graph input but feeds no tensor
    op is a constant again (no graph); one a tensor op reads stays an input."""
    import minitorch_compile as mtc

    from .dynamo_utils import CountingBackend

    def only_floats(lr):
        return lr * 2

    def with_tensor(x, lr):
        return x + 1, lr * 2

    for fn, args in ((only_floats, ()), (with_tensor, (mtc.ones(2),))):
        mtc.dynamo.reset()
        counter = CountingBackend()
        compiled = mtc.compile(fn, backend=counter)
        for lr in (0.1, 0.2, 0.3):
            out = compiled(*args, lr)
            assert (out if fn is only_floats else out[1]) == lr * 2
        assert counter.frame_count == (0 if fn is only_floats else 2)
