"""Which guard of a cache entry fails for given locals, and why (the words of
``GuardFunction.failure_reason``, plus the guard's index so a picture can highlight it)."""

from __future__ import annotations


def first_failure(guard_fn, L: dict) -> tuple[int | None, str]:
    """``(index of the first failing guard, message)``; ``(None, …)`` if every guard passes."""
    for i, g in enumerate(guard_fn.guard_set.guards):
        try:
            ok = eval(g.code, guard_fn._ns, {"L": L})
        except Exception as e:  # noqa: BLE001 - a guard that cannot be evaluated fails
            return i, f"{g.code} raised {type(e).__name__}: {e}"
        if not ok:
            if g.kind == "TENSOR_MATCH":  # torch's wording, from the guard function itself
                return i, guard_fn.failure_reason(L)
            return i, g.code
    return None, "(all guards pass)"
