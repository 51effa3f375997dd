"""More learning-rate schedules (``torch/optim/lr_scheduler.py``):
``CosineAnnealingWarmRestarts``, ``OneCycleLR``, the combinators ``SequentialLR`` and
``ChainedScheduler``, and ``ReduceLROnPlateau`` (``ConstantLR`` and ``PolynomialLR`` are in
``lr_scheduler.py``).

The formulas are torch's, in torch's order of operations, so the rates agree to the last bit:

    WarmRestarts        lr = eta_min + (base - eta_min) (1 + cos(pi T_cur / T_i)) / 2, with
                        T_cur reset to 0 (and T_i *= T_mult) each time it reaches T_i
    OneCycleLR          phases of (start, end) rates annealed by cos or linearly over
                        [start_step, end_step]; momentum (or Adam's beta1) moves the other way

``SequentialLR`` runs one schedule until a milestone, then restarts the next one at epoch 0
(its closed form); ``ChainedScheduler`` steps every schedule each time (chainable forms
compose by multiplying).  ``ReduceLROnPlateau`` is stepped with a metric and multiplies the
rates by ``factor`` after ``patience`` epochs without improvement (then waits ``cooldown``).
"""

from __future__ import annotations

import math
from bisect import bisect_right
from typing import Any

from .lr_scheduler import LRScheduler, _current_lrs, _set_lr
from .optimizer import Optimizer

# ------------------------------------------------------------------ schedules


class CosineAnnealingWarmRestarts(LRScheduler):
    """Cosine annealing from the base rate to ``eta_min`` over ``T_i`` epochs, restarting at
    the base rate; each period is ``T_mult`` times the last (SGDR)."""

    def __init__(self, optimizer: Optimizer, T_0: int, T_mult: int = 1,  # noqa: N803
                 eta_min: float = 0.0, last_epoch: int = -1) -> None:
        if T_0 <= 0 or not isinstance(T_0, int):
            raise ValueError(f"Expected positive integer T_0, but got {T_0}")
        if T_mult < 1 or not isinstance(T_mult, int):
            raise ValueError(f"Expected integer T_mult >= 1, but got {T_mult}")
        if not isinstance(eta_min, (float, int)):
            raise ValueError(f"Expected float or int eta_min, but got {eta_min} of type "
                             f"{type(eta_min)}")
        self.T_0 = self.T_i = T_0
        self.T_mult, self.eta_min, self.T_cur = T_mult, eta_min, last_epoch
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        self._warn_outside_step()
        return [self.eta_min + (base - self.eta_min)
                * (1 + math.cos(math.pi * self.T_cur / self.T_i)) / 2 for base in self.base_lrs]

    def step(self, epoch=None) -> None:
        """Without ``epoch``: one more epoch. With it (a float is allowed: a fraction of an
        epoch), jump there — finding which period it falls in."""
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:
            epoch = self.last_epoch + 1
            self.T_cur = self.T_cur + 1
            if self.T_cur >= self.T_i:
                self.T_cur = self.T_cur % self.T_i
                self.T_i = self.T_i * self.T_mult
        elif epoch < 0:
            raise ValueError(f"Expected non-negative epoch, but got {epoch}")
        elif epoch >= self.T_0:
            if self.T_mult == 1:
                self.T_cur = epoch % self.T_0
            else:
                n = int(math.log(epoch / self.T_0 * (self.T_mult - 1) + 1, self.T_mult))
                self.T_cur = epoch - self.T_0 * (self.T_mult ** n - 1) / (self.T_mult - 1)
                self.T_i = self.T_0 * self.T_mult ** n
        else:
            self.T_i, self.T_cur = self.T_0, epoch
        self.last_epoch = math.floor(epoch)
        self._step_count += 1
        self._get_lr_called_within_step = True
        try:
            values = self.get_lr()
        finally:
            self._get_lr_called_within_step = False
        for group, lr in zip(self.optimizer.param_groups, values):
            _set_lr(group, lr)
        self._last_lr = _current_lrs(self.optimizer)


def _format_param(name: str, optimizer: Optimizer, param) -> list:
    """One value per param group (a list of that length, or one value for all)."""
    if isinstance(param, (list, tuple)):
        if len(param) != len(optimizer.param_groups):
            raise ValueError(f"{name} must have the same length as optimizer.param_groups. "
                             f"{name} has {len(param)} values, param_groups has "
                             f"{len(optimizer.param_groups)}.")
        return list(param)
    return [param] * len(optimizer.param_groups)


class OneCycleLR(LRScheduler):
    """The 1cycle policy: warm up from ``max_lr / div_factor`` to ``max_lr`` over
    ``pct_start`` of the steps, then anneal to ``initial_lr / final_div_factor`` (three
    phases: back down to the initial rate first). Stepped once per batch."""

    def __init__(self, optimizer: Optimizer, max_lr, total_steps: int | None = None,
                 epochs: int | None = None, steps_per_epoch: int | None = None,
                 pct_start: float = 0.3, anneal_strategy: str = "cos",
                 cycle_momentum: bool = True, base_momentum=0.85, max_momentum=0.95,
                 div_factor: float = 25.0, final_div_factor: float = 1e4,
                 three_phase: bool = False, last_epoch: int = -1) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        if total_steps is not None:
            if total_steps <= 0 or not isinstance(total_steps, int):
                raise ValueError(f"Expected positive integer total_steps, but got {total_steps}")
            self.total_steps = total_steps
        elif epochs is not None and steps_per_epoch is not None:
            if not isinstance(epochs, int) or epochs <= 0:
                raise ValueError(f"Expected positive integer epochs, but got {epochs}")
            if not isinstance(steps_per_epoch, int) or steps_per_epoch <= 0:
                raise ValueError("Expected positive integer steps_per_epoch, but got "
                                 f"{steps_per_epoch}")
            self.total_steps = epochs * steps_per_epoch
        else:
            raise ValueError("You must define either total_steps OR (epochs AND steps_per_epoch)")
        up = float(pct_start * self.total_steps) - 1
        last = self.total_steps - 1
        # (end_step, start_lr key, end_lr key, start_momentum key, end_momentum key)
        self._schedule_phases = [
            (up, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
            (float(2 * pct_start * self.total_steps) - 2, "max_lr", "initial_lr",
             "base_momentum", "max_momentum"),
            (last, "initial_lr", "min_lr", "max_momentum", "max_momentum"),
        ] if three_phase else [
            (up, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
            (last, "max_lr", "min_lr", "base_momentum", "max_momentum"),
        ]
        if pct_start < 0 or pct_start > 1 or not isinstance(pct_start, float):
            raise ValueError(f"Expected float between 0 and 1 pct_start, but got {pct_start}")
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError("anneal_strategy must be one of 'cos' or 'linear', instead got "
                             f"{anneal_strategy}")
        self._anneal_func_type = anneal_strategy
        max_lrs = _format_param("max_lr", optimizer, max_lr)
        if last_epoch == -1:
            for m, group in zip(max_lrs, optimizer.param_groups):
                group["initial_lr"] = m / div_factor
                group["max_lr"] = m
                group["min_lr"] = group["initial_lr"] / final_div_factor
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
                raise ValueError("optimizer must support momentum or beta1 with "
                                 "`cycle_momentum` option enabled")
            self.use_beta1 = "betas" in optimizer.defaults
            maxes = _format_param("max_momentum", optimizer, max_momentum)
            bases = _format_param("base_momentum", optimizer, base_momentum)
            if last_epoch == -1:
                for m, b, group in zip(maxes, bases, optimizer.param_groups):
                    self._set_momentum(group, m)
                    group["max_momentum"], group["base_momentum"] = m, b
        super().__init__(optimizer, last_epoch)

    def _set_momentum(self, group: dict, m) -> None:
        if self.use_beta1:
            group["betas"] = (m, *group["betas"][1:])
        else:
            group["momentum"] = m

    def _anneal(self, start, end, pct):
        if self._anneal_func_type == "cos":
            return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)
        return (end - start) * pct + start

    def get_lr(self) -> list:
        self._warn_outside_step()
        step = self.last_epoch
        if step > self.total_steps:
            raise ValueError(f"Tried to step {step} times. The specified number of total "
                             f"steps is {self.total_steps}")
        lrs = []
        for group in self.optimizer.param_groups:
            start_step = 0.0
            for i, (end_step, lr0, lr1, m0, m1) in enumerate(self._schedule_phases):
                if step <= end_step or i == len(self._schedule_phases) - 1:
                    pct = (step - start_step) / (end_step - start_step)
                    lrs.append(self._anneal(group[lr0], group[lr1], pct))
                    if self.cycle_momentum:
                        self._set_momentum(group, self._anneal(group[m0], group[m1], pct))
                    break
                start_step = end_step
        return lrs


# ------------------------------------------------------------------ combinators


def _check_schedulers(kind: str, optimizer, schedulers) -> None:
    for i, s in enumerate(schedulers):
        if not hasattr(s, "optimizer"):
            raise TypeError(f"{kind} at index {i} should have `optimizer` as its attribute.")
        if isinstance(s, ReduceLROnPlateau):
            raise ValueError(
                f"{kind} does not support `ReduceLROnPlateau` scheduler as it requires "
                "additional kwargs to be specified when calling `step`, but got one at index "
                f"{i} in the given schedulers sequence.")
        if optimizer != s.optimizer:
            raise ValueError(
                f"{kind} expects all schedulers to belong to the same optimizer, but got "
                f"scheduler {type(s).__name__} at index {i} has {s.optimizer}, which is "
                f"different from {type(optimizer).__name__}.")


class _Combinator(LRScheduler):
    """State of a scheduler of schedulers: its own fields plus each child's state."""

    def state_dict(self) -> dict[str, Any]:
        state = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "_schedulers")}
        state["_schedulers"] = [s.state_dict() for s in self._schedulers]
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        children = state_dict.pop("_schedulers")
        self.__dict__.update(state_dict)
        state_dict["_schedulers"] = children
        for s, child in zip(self._schedulers, children):
            s.load_state_dict(child)


def _undo_step(scheduler) -> None:
    """Take back the constructor's step of every (nested) child schedule."""
    for s in scheduler._schedulers:
        if hasattr(s, "_schedulers"):
            _undo_step(s)
        else:
            s.last_epoch -= 1


class SequentialLR(_Combinator):
    """``schedulers[i]`` from ``milestones[i-1]`` on, restarted at its epoch 0 there."""

    def __init__(self, optimizer: Optimizer, schedulers: list, milestones: list,
                 last_epoch: int = -1) -> None:
        if len(schedulers) < 1:
            raise ValueError("SequentialLR expects at least one scheduler, but got no "
                             "scheduler.")
        _check_schedulers("SequentialLR", optimizer, schedulers)
        if len(milestones) != len(schedulers) - 1:
            raise ValueError(
                "Sequential Schedulers expects number of schedulers provided to be one more "
                f"than the number of milestone points, but got number of schedulers "
                f"{len(schedulers)} and the number of milestones to be equal to "
                f"{len(milestones)}")
        self._schedulers, self._milestones = schedulers, milestones
        self.last_epoch = last_epoch + 1
        self.optimizer = optimizer
        for group in optimizer.param_groups:  # undo the children's constructor steps
            _set_lr(group, group["initial_lr"])
        _undo_step(self)
        first = schedulers[bisect_right(milestones, 0)]
        first._initial_step()
        self._last_lr = first.get_last_lr()

    def step(self) -> None:
        self.last_epoch += 1
        idx = bisect_right(self._milestones, self.last_epoch)
        scheduler = self._schedulers[idx]
        if idx > 0 and self._milestones[idx - 1] == self.last_epoch:
            scheduler._update_lr(0)
        else:
            scheduler.step()
        self._last_lr = scheduler.get_last_lr()


class ChainedScheduler(_Combinator):
    """Step every scheduler, in order, each time."""

    def __init__(self, schedulers: list, optimizer: Optimizer | None = None) -> None:
        if len(schedulers) < 1:
            raise ValueError("ChainedScheduler expects at least one scheduler to be chained, "
                             "but got no scheduler.")
        optimizer = optimizer or schedulers[0].optimizer
        _check_schedulers("ChainedScheduler", optimizer, schedulers)
        self._schedulers, self.optimizer = schedulers, optimizer
        self._last_lr = _current_lrs(schedulers[-1].optimizer)

    def step(self) -> None:
        for s in self._schedulers:
            s.step()
        self._last_lr = _current_lrs(self._schedulers[-1].optimizer)


class ReduceLROnPlateau(LRScheduler):
    """``step(metric)``: after more than ``patience`` epochs without the metric improving by
    ``threshold`` (relative or absolute), multiply every rate by ``factor`` (not below
    ``min_lr``; changes smaller than ``eps`` are skipped) and wait ``cooldown`` epochs."""

    def __init__(self, optimizer: Optimizer, mode: str = "min", factor: float = 0.1,
                 patience: int = 10, threshold: float = 1e-4, threshold_mode: str = "rel",
                 cooldown: int = 0, min_lr=0, eps: float = 1e-8) -> None:
        if factor >= 1.0:
            raise ValueError("Factor should be < 1.0.")
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.factor, self.optimizer = factor, optimizer
        if isinstance(min_lr, (list, tuple)):
            if len(min_lr) != len(optimizer.param_groups):
                raise ValueError(f"expected {len(optimizer.param_groups)} min_lrs, got "
                                 f"{len(min_lr)}")
            self.default_min_lr, self.min_lrs = None, list(min_lr)
        else:
            self.default_min_lr, self.min_lrs = min_lr, [min_lr] * len(optimizer.param_groups)
        self.patience, self.cooldown, self.eps = patience, cooldown, eps
        self.last_epoch = 0
        self._last_lr = _current_lrs(optimizer)
        self._init_is_better(mode, threshold, threshold_mode)
        self.best, self.cooldown_counter, self.num_bad_epochs = self.mode_worse, 0, 0

    def _init_is_better(self, mode: str, threshold: float, threshold_mode: str) -> None:
        if mode not in ("min", "max"):
            raise ValueError("mode " + mode + " is unknown!")
        if threshold_mode not in ("rel", "abs"):
            raise ValueError("threshold mode " + threshold_mode + " is unknown!")
        self.mode_worse = math.inf if mode == "min" else -math.inf
        self.mode, self.threshold, self.threshold_mode = mode, threshold, threshold_mode

    def _is_better(self, a: float, best: float) -> bool:
        rel, t = self.threshold_mode == "rel", self.threshold
        if self.mode == "min":
            return a < best * (1.0 - t) if rel else a < best - t
        return a > best * (t + 1.0) if rel else a > best + t

    @property
    def in_cooldown(self) -> bool:
        return self.cooldown_counter > 0

    def step(self, metrics, epoch=None) -> None:
        current = float(metrics)
        self.last_epoch = self.last_epoch + 1 if epoch is None else epoch
        if self._is_better(current, self.best):
            self.best, self.num_bad_epochs = current, 0
        else:
            self.num_bad_epochs += 1
        if self.in_cooldown:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0  # bad epochs in cooldown do not count
        if self.num_bad_epochs > self.patience:
            self._reduce_lr()
            self.cooldown_counter, self.num_bad_epochs = self.cooldown, 0
        self._last_lr = _current_lrs(self.optimizer)

    def _reduce_lr(self) -> None:
        if len(self.optimizer.param_groups) != len(self.min_lrs):
            if self.default_min_lr is None:
                raise RuntimeError(
                    f"The number of param groups in the `optimizer` "
                    f"({len(self.optimizer.param_groups)}) differs from when "
                    f"`ReduceLROnPlateau` was initialized ({len(self.min_lrs)}), usually due "
                    "to a new param group being added to the optimizer. Please modify the "
                    "`min_lrs` field to match the length of the `optimizer` param groups.")
            self.min_lrs = [self.default_min_lr] * len(self.optimizer.param_groups)
        for group, min_lr in zip(self.optimizer.param_groups, self.min_lrs):
            old = float(group["lr"])
            new = max(old * self.factor, min_lr)
            if old - new > self.eps:
                _set_lr(group, new)

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        self.__dict__.update(state_dict)
        self._init_is_better(self.mode, self.threshold, self.threshold_mode)
