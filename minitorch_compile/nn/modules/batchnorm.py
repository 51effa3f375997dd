"""``nn.BatchNorm1d`` / ``nn.BatchNorm2d`` (``torch/nn/modules/batchnorm.py``).

Each channel (dim 1) is normalised over the batch and spatial dims, then scaled and shifted
(``weight``/``bias``, when ``affine``).  The module also keeps *running* estimates of each
channel's mean and variance, used instead of the batch's statistics in ``eval()`` mode:

* in ``train()`` mode with ``track_running_stats``, every forward updates them in place,
  ``running = (1 - momentum) * running + momentum * batch_stat`` (the variance stored is the
  unbiased one, n / (n - 1) times the one used to normalise), and counts
  ``num_batches_tracked``; ``momentum=None`` means a cumulative average (factor
  ``1 / num_batches_tracked``);
* ``track_running_stats=False``: no buffers, and the batch's statistics are used in both modes.

The arithmetic is the ``batch_norm`` composite (``ops/batch_norm.py``).
"""

from __future__ import annotations

from ... import _api, _dtype
from ..._tensor import Tensor
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module


class _BatchNorm(Module):
    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = True, track_running_stats: bool = True, device=None,
                 dtype=None, bias: bool = True) -> None:
        super().__init__()
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        factory = dict(device=device, dtype=dtype)
        if affine:
            self.weight = Parameter(_api.empty(num_features, **factory))
            if bias:
                self.bias = Parameter(_api.empty(num_features, **factory))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer("running_mean", _api.zeros(num_features, **factory))
            self.register_buffer("running_var", _api.ones(num_features, **factory))
            self.register_buffer("num_batches_tracked",
                                 _api.tensor(0, dtype=_dtype.int64, device=device))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self) -> None:
        if self.track_running_stats:
            self.running_mean.zero_()
            self.running_var.fill_(1)
            self.num_batches_tracked.zero_()

    def reset_parameters(self) -> None:
        self.reset_running_stats()
        if self.affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def _check_input_dim(self, input: Tensor) -> None:  # noqa: A002
        raise NotImplementedError

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002 - torch's name
        self._check_input_dim(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            self.num_batches_tracked.add_(1)
            factor = 1.0 / float(self.num_batches_tracked) if self.momentum is None \
                else self.momentum
        use_batch_stats = self.training or (self.running_mean is None
                                            and self.running_var is None)
        track = not self.training or self.track_running_stats
        return F.batch_norm(input, self.running_mean if track else None,
                            self.running_var if track else None, self.weight, self.bias,
                            use_batch_stats, factor, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}, bias={self.bias is not None}, "
                f"track_running_stats={self.track_running_stats}")


class BatchNorm1d(_BatchNorm):
    """Batch norm over (N, C) or (N, C, L) inputs."""

    def _check_input_dim(self, input: Tensor) -> None:  # noqa: A002
        if input.dim() not in (2, 3):
            raise ValueError(f"expected 2D or 3D input (got {input.dim()}D input)")


class BatchNorm2d(_BatchNorm):
    """Batch norm over (N, C, H, W) inputs."""

    def _check_input_dim(self, input: Tensor) -> None:  # noqa: A002
        if input.dim() != 4:
            raise ValueError(f"expected 4D input (got {input.dim()}D input)")
