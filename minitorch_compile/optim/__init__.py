"""``mtc.optim``: optimizers that update parameters in place from their ``.grad`` (``torch/optim``).

``Optimizer`` (``optimizer.py``) holds parameter groups, per-parameter state and checkpoints;
``SGD`` and ``Adam`` (``AdamW``: Adam with decoupled weight decay) each write torch's exact
update rule as one readable per-tensor loop; ``lr_scheduler`` rewrites the groups' rates.
"""

from . import lr_scheduler
from .adam import Adam
from .adamw import AdamW
from .optimizer import Optimizer
from .sgd import SGD

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "lr_scheduler"]
