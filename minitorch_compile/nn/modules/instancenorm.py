"""``nn.InstanceNorm1d/2d/3d`` and ``F.instance_norm`` (``torch/nn/modules/instancenorm.py``;
``aten/src/ATen/native/Normalization.cpp``'s ``instance_norm``).

Instance norm is batch norm with every ``(sample, channel)`` pair as its own channel, which is
how torch computes it: view ``(N, C, *)`` as ``(1, N * C, *)``, repeat ``weight``/``bias`` and
the running statistics ``N`` times, ``batch_norm``, and write back the running statistics
averaged over the batch.  The defaults differ from batch norm: ``affine=False`` and
``track_running_stats=False`` (the input's own statistics in both modes).
"""

from __future__ import annotations

from ...autograd import no_grad
from .. import functional as F
from .batchnorm import _BatchNorm


def instance_norm(input, running_mean=None, running_var=None, weight=None,  # noqa: A002
                  bias=None, use_input_stats: bool = True, momentum: float = 0.1,
                  eps: float = 1e-5):
    n, c = input.shape[0], input.shape[1]
    flat = input.contiguous().view(1, n * c, *input.shape[2:])

    def repeat(t):
        return None if t is None else t.repeat(n)

    rm, rv = repeat(running_mean), repeat(running_var)
    out = F.batch_norm(flat, rm, rv, repeat(weight), repeat(bias), use_input_stats, momentum,
                       eps)
    with no_grad():
        if running_mean is not None:
            running_mean.copy_(rm.view(n, c).mean(0))
        if running_var is not None:
            running_var.copy_(rv.view(n, c).mean(0))
    return out.view(*input.shape)


class _InstanceNorm(_BatchNorm):
    spatial = 1

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float = 0.1,
                 affine: bool = False, track_running_stats: bool = False, device=None,
                 dtype=None) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device,
                         dtype)

    def forward(self, input):  # noqa: A002
        dims = self.spatial + 2
        if input.dim() not in (dims - 1, dims):
            raise ValueError(f"expected {dims - 1}D or {dims}D input (got {input.dim()}D "
                             "input)")
        batched = input.dim() == dims
        x = input if batched else input.unsqueeze(0)
        out = instance_norm(x, self.running_mean, self.running_var, self.weight, self.bias,
                            self.training or not self.track_running_stats,
                            self.momentum if self.momentum is not None else 0.0, self.eps)
        return out if batched else out.squeeze(0)


class InstanceNorm1d(_InstanceNorm):
    spatial = 1


class InstanceNorm2d(_InstanceNorm):
    spatial = 2


class InstanceNorm3d(_InstanceNorm):
    spatial = 3


