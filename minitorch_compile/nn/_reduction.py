"""Legacy ``size_average``/``reduce`` loss arguments (``torch/nn/_reduction.py``).

Before ``reduction='mean'|'sum'|'none'`` existed, losses took two booleans.  torch still
accepts them with a deprecation warning and maps them onto ``reduction``; so do we.
"""

from __future__ import annotations

import warnings


def legacy_get_string(size_average: bool | None, reduce: bool | None,
                      emit_warning: bool = True) -> str:
    """``(size_average, reduce)`` -> ``reduction``; ``None`` means ``True`` for both."""
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    if size_average and reduce:
        ret = "mean"
    elif reduce:
        ret = "sum"
    else:
        ret = "none"
    if emit_warning:
        warnings.warn(f"size_average and reduce args will be deprecated, please use "
                      f"reduction='{ret}' instead.", stacklevel=3)
    return ret
