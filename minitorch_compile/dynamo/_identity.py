"""``IdentityDict``: a dict keyed by object identity.

Code objects compare (and hash) *by value*: two functions exec'd from the same source have
equal ``__code__``s but different globals.  Caches keyed by code objects must tell them apart,
so they key by ``id`` and keep the key alive next to the value.
"""

from __future__ import annotations


class IdentityDict:
    def __init__(self):
        self._items: dict[int, tuple] = {}

    def get(self, key, default=None):
        hit = self._items.get(id(key))
        return hit[1] if hit is not None and hit[0] is key else default

    def __getitem__(self, key):
        hit = self._items.get(id(key))
        if hit is None or hit[0] is not key:
            raise KeyError(key)
        return hit[1]

    def __setitem__(self, key, value) -> None:
        self._items[id(key)] = (key, value)

    def __contains__(self, key) -> bool:
        hit = self._items.get(id(key))
        return hit is not None and hit[0] is key

    def setdefault(self, key, default):
        hit = self._items.get(id(key))
        if hit is not None and hit[0] is key:
            return hit[1]
        self._items[id(key)] = (key, default)
        return default

    def pop(self, key, *default):
        hit = self._items.get(id(key))
        if hit is not None and hit[0] is key:
            del self._items[id(key)]
            return hit[1]
        if default:
            return default[0]
        raise KeyError(key)

    def clear(self) -> None:
        self._items.clear()

    def __iter__(self):
        return (k for k, _ in self._items.values())

    def items(self):
        return list(self._items.values())

    def keys(self):
        return [k for k, _ in self._items.values()]

    def values(self):
        return [v for _, v in self._items.values()]

    def __len__(self) -> int:
        return len(self._items)
