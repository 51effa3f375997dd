"""``mtc.utils`` (``torch/utils``): the PrivateUse1 backend hooks a device plug-in calls."""

from .._device import rename_privateuse1_backend

__all__ = ["rename_privateuse1_backend"]
from . import checkpoint  # noqa: E402 - torch.utils.checkpoint

__all__ += ["checkpoint"]
