"""``RemovableHandle``: the receipt for a registered hook (``torch/utils/hooks.py``).

Registering a hook stores it in an ordered dict under a fresh integer id and returns a handle;
``handle.remove()`` deletes that id again.  The handle holds only a weak reference to the
dict, so a forgotten handle never keeps a module alive.  ``with handle: ...`` removes the hook
when the block ends.
"""

from __future__ import annotations

import itertools
import weakref
from collections import OrderedDict


class RemovableHandle:
    """A handle that removes one hook from its hooks dict."""

    _ids = itertools.count()

    def __init__(self, hooks_dict: OrderedDict, *extra_dicts: dict):
        self.hooks_dict_ref = weakref.ref(hooks_dict)
        self.id = next(RemovableHandle._ids)
        # flags kept beside the hook under the same id (with_kwargs, always_call): removed too
        self.extra_dict_ref = tuple(weakref.ref(d) for d in extra_dicts)

    def remove(self) -> None:
        for ref in (self.hooks_dict_ref, *self.extra_dict_ref):
            hooks_dict = ref()
            if hooks_dict is not None and self.id in hooks_dict:
                del hooks_dict[self.id]

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc) -> None:
        self.remove()

    def __repr__(self) -> str:
        return f"<RemovableHandle id={self.id}>"
