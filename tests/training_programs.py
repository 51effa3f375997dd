"""Ordinary training code, written once for both libraries (``lib`` is ``mtc`` or ``torch``).

Each program defines ``step(model, opt, x, y)`` — one training step (or part of one) as a user
would write it — and names the optimizer it is given (``OPT``: an expression over ``model``
and ``lib``, or ``None``).  ``run`` trains a fresh, identically initialised model for ``STEPS``
calls, eagerly or compiled, and returns everything a difference could show in: the values each
call returned, the final parameters and buffers, the optimizer's state, what was printed, the
graphs / breaks ``explain`` reports for the first call and how many graphs were compiled.
"""

from __future__ import annotations

import contextlib
import io
import textwrap

import numpy as np

STEPS = 4

PRELUDE = """
import math

class MLP(lib.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = lib.nn.Linear(4, 6)
        self.bn = lib.nn.BatchNorm1d(6)
        self.drop = lib.nn.Dropout(0.0)
        self.fc2 = lib.nn.Linear(6, 2)
    def forward(self, x):
        return self.fc2(self.drop(lib.relu(self.bn(self.fc1(x)))))

def loss_fn(out, y):
    return ((out - y) ** 2).mean()

history = []
cache = {}
"""

SGD = "lib.optim.SGD(model.parameters(), lr=0.1)"
MOMENTUM = "lib.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)"
NESTEROV = "lib.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=0.01, " \
           "nesterov=True)"
# (a little weight decay: fc1's bias feeds a BatchNorm, so its grad is rounding noise, which
# plain Adam would normalise into steps of size lr — differently for every rounding)
ADAM = "lib.optim.Adam(model.parameters(), lr=0.01, weight_decay=1e-2)"
ADAM_WD = "lib.optim.Adam(model.parameters(), lr=0.01, weight_decay=0.1, amsgrad=True)"
GROUPS = "lib.optim.SGD([{'params': model.fc1.parameters()}, " \
         "{'params': list(model.bn.parameters()) + list(model.fc2.parameters()), 'lr': 0.01}]," \
         " lr=0.1, momentum=0.5)"

_FULL_STEP = """
def step(model, opt, x, y):
    opt.zero_grad()
    loss = loss_fn(model(x), y)
    loss.backward()
    opt.step()
    return loss
"""

_STEP_THEN_ZERO = """
def step(model, opt, x, y):
    loss = loss_fn(model(x), y)
    loss.backward()
    opt.step()
    opt.zero_grad()
    return loss
"""

# name -> (optimizer expression or None, source)
PROGRAMS: dict[str, tuple] = {
    # ---- an optimizer inside the compiled step
    "sgd_full_step": (SGD, _FULL_STEP),
    "sgd_step_then_zero": (SGD, _STEP_THEN_ZERO),
    "momentum_full_step": (MOMENTUM, _FULL_STEP),
    "momentum_step_then_zero": (MOMENTUM, _STEP_THEN_ZERO),
    "nesterov_weight_decay": (NESTEROV, _FULL_STEP),
    "adam_full_step": (ADAM, _FULL_STEP),
    "adam_step_then_zero": (ADAM, _STEP_THEN_ZERO),
    "adam_amsgrad_weight_decay": (ADAM_WD, _FULL_STEP),
    "param_groups_two_lrs": (GROUPS, _FULL_STEP),
    "only_opt_step": (SGD, """
def step(model, opt, x, y):
    opt.step()
    return x.sum()
"""),
    "only_opt_step_adam": (ADAM, """
def step(model, opt, x, y):
    opt.step()
    return x.sum()
"""),
    "module_zero_grad": (SGD, """
def step(model, opt, x, y):
    model.zero_grad()
    loss = loss_fn(model(x), y)
    loss.backward()
    opt.step()
    return loss
"""),
    "manual_sgd_update": (None, """
def step(model, opt, x, y):
    loss = loss_fn(model(x), y)
    loss.backward()
    with lib.no_grad():
        for p in model.parameters():
            p -= 0.1 * p.grad
            p.grad = None
    return loss
"""),
    "manual_update_with_grad_list": (None, """
def step(model, opt, x, y):
    loss = loss_fn(model(x), y)
    loss.backward()
    with lib.no_grad():
        for p in model.parameters():
            if p.grad is not None:
                p.add_(p.grad, alpha=-0.05)
        model.zero_grad()
    return loss
"""),
    # ---- the optimizer outside the compiled function
    "forward_and_loss_only": (SGD, """
def step(model, opt, x, y):
    return loss_fn(model(x), y)
"""),
    "forward_only_logits": (None, """
def step(model, opt, x, y):
    return model(x)
"""),
    "loss_with_l2_penalty": (SGD, """
def step(model, opt, x, y):
    penalty = sum((p * p).sum() for p in model.parameters())
    return loss_fn(model(x), y) + 1e-3 * penalty
"""),
    "cross_entropy_loss": (SGD, """
def step(model, opt, x, y):
    target = (y[:, 0] > 0).long()
    return lib.nn.functional.cross_entropy(model(x), target)
"""),
    "mse_loss_module": (SGD, """
def step(model, opt, x, y):
    return lib.nn.MSELoss()(model(x), y)
"""),
    # ---- modules with buffers and running stats, train/eval switches
    "bn_running_stats_train": (None, """
def step(model, opt, x, y):
    model.train()
    return model(x).sum()
"""),
    "bn_eval_forward": (None, """
def step(model, opt, x, y):
    model.eval()
    return model(x)
"""),
    "eval_then_train": (None, """
def step(model, opt, x, y):
    model.eval()
    with lib.no_grad():
        val = loss_fn(model(x), y)
    model.train()
    return val
"""),
    "train_step_then_eval_metric": (SGD, """
def step(model, opt, x, y):
    model.train()
    loss = loss_fn(model(x), y)
    loss.backward()
    opt.step()
    opt.zero_grad()
    model.eval()
    with lib.no_grad():
        metric = loss_fn(model(x), y)
    model.train()
    return loss, metric
"""),
    "reads_training_flag": (None, """
def step(model, opt, x, y):
    out = model(x)
    if model.training:
        out = out * 2
    return out
"""),
    "bn_buffers_read": (None, """
def step(model, opt, x, y):
    out = model(x)
    return out.sum() + model.bn.running_mean.sum() + model.bn.running_var.sum()
"""),
    "num_batches_tracked": (None, """
def step(model, opt, x, y):
    out = model(x)
    return out.sum() + model.bn.num_batches_tracked
"""),
    # ---- gradient clipping
    "clip_grad_norm_inside": (SGD, """
def step(model, opt, x, y):
    loss = loss_fn(model(x), y)
    loss.backward()
    lib.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
    opt.step()
    opt.zero_grad()
    return loss
"""),
    "clip_grad_value_inside": (MOMENTUM, """
def step(model, opt, x, y):
    loss = loss_fn(model(x), y)
    loss.backward()
    lib.nn.utils.clip_grad_value_(model.parameters(), 0.05)
    opt.step()
    opt.zero_grad()
    return loss
"""),
    "clip_then_adam": (ADAM, """
def step(model, opt, x, y):
    opt.zero_grad()
    loss = loss_fn(model(x), y)
    loss.backward()
    norm = lib.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    return loss, norm
"""),
    # ---- learning-rate schedules
    "lr_schedule_in_step": (SGD, """
def step(model, opt, x, y):
    for g in opt.param_groups:
        g['lr'] = g['lr'] * 0.5
    loss = loss_fn(model(x), y)
    return loss
"""),
    "lr_read_into_loss": (SGD, """
def step(model, opt, x, y):
    lr = opt.param_groups[0]['lr']
    return loss_fn(model(x), y) * lr
"""),
    "warmup_by_history_length": (SGD, """
def step(model, opt, x, y):
    scale = min(1.0, (len(history) + 1) / 2)
    history.append(scale)
    return loss_fn(model(x), y) * scale
"""),
    # ---- logging and printing
    "print_loss_item": (SGD, """
def step(model, opt, x, y):
    loss = loss_fn(model(x), y)
    print('loss', round(loss.item(), 4))
    return loss
"""),
    "print_shapes": (None, """
def step(model, opt, x, y):
    out = model(x)
    print('out shape', tuple(out.shape))
    return out
"""),
    "history_append_detached": (SGD, """
def step(model, opt, x, y):
    loss = loss_fn(model(x), y)
    history.append(loss.detach())
    return loss
"""),
    "format_step_number": (None, """
def step(model, opt, x, y):
    tag = 'step-%03d' % x.shape[0]
    return model(x).sum() * len(tag)
"""),
    "logging_info": (SGD, """
import logging
log = logging.getLogger('training-test')
def step(model, opt, x, y):
    loss = loss_fn(model(x), y)
    log.info('batch %s', tuple(x.shape))
    return loss
"""),
    # ---- loops and early exits
    "unrolled_inner_loop": (None, """
def step(model, opt, x, y):
    total = 0
    for k in range(3):
        total = total + loss_fn(model(x * (k + 1)), y)
    return total
"""),
    "loop_early_exit_constant": (None, """
def step(model, opt, x, y):
    total = 0
    for k in range(5):
        if k == 2:
            break
        total = total + model(x).sum()
    return total
"""),
    "loop_over_layers_return_early": (None, """
def step(model, opt, x, y):
    h = x
    for name, layer in model.named_children():
        if name == 'drop':
            return h
        h = layer(h)
    return h
"""),
    "data_dependent_early_return": (None, """
def step(model, opt, x, y):
    loss = loss_fn(model(x), y)
    if loss > 100:
        return loss * 0
    return loss
"""),
    "grad_accumulation": (SGD, """
def step(model, opt, x, y):
    for chunk in range(2):
        loss = loss_fn(model(x[chunk * 2:chunk * 2 + 3]), y[chunk * 2:chunk * 2 + 3]) / 2
        loss.backward()
    opt.step()
    opt.zero_grad()
    return loss
"""),
    # ---- caches with try/except
    "cache_keyerror": (None, """
def step(model, opt, x, y):
    try:
        scale = cache['scale']
    except KeyError:
        scale = 2.0
        cache['scale'] = scale
    return model(x) * scale
"""),
    "cache_get_default": (None, """
def step(model, opt, x, y):
    n = cache.get('calls', 0)
    cache['calls'] = n + 1
    return model(x).sum() * (n + 1)
"""),
    "try_finally_counter": (None, """
def step(model, opt, x, y):
    try:
        out = model(x)
    finally:
        history.append('done')
    return out
"""),
    # ---- other ordinary pieces
    "ema_of_weights": (None, """
def step(model, opt, x, y):
    ema = model.fc2
    with lib.no_grad():
        for p in model.fc1.parameters():
            p.mul_(0.9).add_(p * 0.1)
    return ema(lib.relu(model.fc1(x)))
"""),
    "detach_target": (None, """
def step(model, opt, x, y):
    with lib.no_grad():
        target = model(x) * 0.5 + y * 0.5
    return loss_fn(model(x), target.detach())
"""),
    "freeze_check_requires_grad": (None, """
def step(model, opt, x, y):
    n = sum(p.numel() for p in model.parameters() if p.requires_grad)
    return model(x).sum() + n
"""),
    "state_dict_checksum": (None, """
def step(model, opt, x, y):
    sd = model.state_dict()
    return model(x).sum() + sd['fc1.weight'].sum()
"""),
    "assert_shape": (None, """
def step(model, opt, x, y):
    assert x.shape[1] == 4, 'bad features'
    return model(x)
"""),
    "isinstance_dispatch": (None, """
def step(model, opt, x, y):
    out = model(x)
    if isinstance(out, tuple):
        out = out[0]
    return out.softmax(-1)
"""),
}


def _init(lib, model) -> None:
    """The same weights under both libraries (a fixed ramp, not a random draw)."""
    with lib.no_grad():
        for i, p in enumerate(model.parameters()):
            n = p.numel()
            p.copy_(((lib.arange(n).float() % 7) * 0.07 - 0.2 + 0.03 * i).reshape(p.shape))


def _np(v):
    if hasattr(v, "detach"):
        return v.detach().numpy().copy()
    if isinstance(v, (tuple, list)):
        return type(v)(_np(i) for i in v)
    return v


def make(lib, name):
    """A fresh namespace with the program's ``step``, a model, an optimizer and a batch."""
    opt_expr, src = PROGRAMS[name]
    ns = {"lib": lib}
    exec(compile(PRELUDE + textwrap.dedent(src), f"<training:{name}>", "exec"), ns)
    model = ns["MLP"]()
    _init(lib, model)
    opt = eval(opt_expr, {"lib": lib, "model": model}) if opt_expr else None
    x = ((lib.arange(20).float().reshape(5, 4) % 5) - 2.0) * 0.5
    y = (lib.arange(10).float().reshape(5, 2) % 3) - 1.0
    return ns, model, opt, x, y


def run(lib, name, compile_fn=None, backend=None):
    """Train for ``STEPS`` calls; return (values, printed text, frames compiled)."""
    ns, model, opt, x, y = make(lib, name)
    fn = ns["step"]
    if compile_fn is not None:
        fn = compile_fn(fn, backend=backend)
    out, text = [], io.StringIO()
    with contextlib.redirect_stdout(text):
        for _ in range(STEPS):
            out.append(_np(fn(model, opt, x, y)))
    params = [_np(v) for v in model.state_dict().values()]
    opt_state = []
    if opt is not None:
        for p in (p for g in opt.param_groups for p in g["params"]):
            opt_state.extend(_np(v) for _, v in sorted(opt.state[p].items()))
    extra = [_np(v) if hasattr(v, "detach") else v for v in ns["history"]]
    frames = getattr(backend, "frame_count", None)
    return {"out": out, "params": params, "opt_state": opt_state, "history": extra,
            "cache": dict(ns["cache"]), "printed": text.getvalue(), "frames": frames}


def explain_counts(lib, name) -> tuple[int, int]:
    """(graph_count, graph_break_count) of ``explain`` on a fresh program's first call."""
    ns, model, opt, x, y = make(lib, name)
    with contextlib.redirect_stdout(io.StringIO()):
        ex = lib._dynamo.explain(ns["step"])(model, opt, x, y)
    return ex.graph_count, ex.graph_break_count


def assert_same(a: dict, b: dict, rtol: float = 1e-5, atol: float = 1e-6) -> None:
    """Values equal up to float rounding; everything else exactly."""
    def close(u, v, where):
        if isinstance(u, np.ndarray) or isinstance(v, np.ndarray):
            u, v = np.asarray(u), np.asarray(v)
            assert u.shape == v.shape, where
            np.testing.assert_allclose(u.astype(np.float64), v.astype(np.float64), rtol=rtol,
                                       atol=atol, err_msg=where)
        elif isinstance(u, (tuple, list)):
            assert len(u) == len(v), where
            for i, (p, q) in enumerate(zip(u, v)):
                close(p, q, f"{where}[{i}]")
        elif isinstance(u, float):
            assert abs(u - v) <= atol + rtol * abs(v), where
        else:
            assert u == v, where

    for key in ("out", "params", "opt_state", "history", "cache", "printed"):
        close(a[key], b[key], key)
