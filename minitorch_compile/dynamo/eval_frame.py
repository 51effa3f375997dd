"""The entry point: ``mtc.compile`` and the per-code-object cache (``torch/_dynamo/eval_frame.py``).

CPython lets torch install a frame-evaluation hook (PEP 523) so *every* call of a compiled
function's code object lands in Dynamo.  Pure Python has no such hook, so ``mtc.compile(fn)``
returns a wrapper that does the hook's job on each call — the tutorial's JIT loop, for real::

    L = bind(*args, **kwargs)                    # the frame's locals: its arguments
    for entry in cache[fn.__code__]:             # cache entries live on the code object
        if entry.guard(L):                       # the generated guard function
            return entry.transformed(*args, **kwargs)
    entry = convert_frame(fn, L, ...)            # miss: trace, compile, make guards
    cache[fn.__code__].append(entry)             # (recompile; after 8 entries run eagerly)
    return entry.transformed(*args, **kwargs)

The transformed function has the original signature, globals, defaults and closure; it calls
``__compiled_fn_N``, which the backend produced and the compiler stored in the function's
module — exactly where Dynamo puts it.
"""

from __future__ import annotations

import builtins
import functools
import types

from ..report.trace import record_recompile
from . import config
from ._identity import IdentityDict
from ._logging import get_logger, warn_user
from .backends.registry import lookup_backend
from .convert_frame import CacheEntry, convert_frame
from .exc import CompilerFallbackWarning

RECOMPILE_LIMIT = 8  # the default of config.cache_size_limit (torch's name), which is read

# per code object *identity* (equal code from another module has other globals)
_CACHE = IdentityDict()  # code -> list[CacheEntry]
_FRAME_STATE = IdentityDict()  # code -> input sizes seen (automatic dynamic)
_disabled_depth = 0


def reset() -> None:
    """Forget every compiled entry (``torch._dynamo.reset()``)."""
    from .bytecode_flow import _INSTRUCTION_CACHE
    from .trace_rules import _SKIPPED_CODE

    _CACHE.clear()
    _SKIPPED_CODE.clear()
    _FRAME_STATE.clear()
    _INSTRUCTION_CACHE.clear()


def _make_binder(fn):
    """A function with ``fn``'s signature returning its arguments as a dict (the frame's L)."""
    code = fn.__code__
    names = code.co_varnames
    n_pos, n_kw = code.co_argcount, code.co_kwonlyargcount
    n_args = n_pos + n_kw + bool(code.co_flags & 0x04) + bool(code.co_flags & 0x08)
    if not all(n.isidentifier() for n in names[:n_args]):
        # a resume function may carry locals no source could name (pytest's @py_assert1):
        # such functions take positional arguments only
        arg_names = names[:n_pos]

        def bind_positional(*args, **kwargs):
            if kwargs or len(args) != n_pos:
                raise TypeError(f"{code.co_name}() takes {n_pos} positional arguments")
            return dict(zip(arg_names, args))
        return bind_positional
    params, ns = [], {}
    defaults = fn.__defaults__ or ()
    first_default = n_pos - len(defaults)
    for i in range(n_pos):
        if i >= first_default:
            ns[f"_d{i}"] = defaults[i - first_default]
            params.append(f"{names[i]}=_d{i}")
        else:
            params.append(names[i])
        if i == code.co_posonlyargcount - 1:
            params.append("/")
    idx = n_pos
    star = None
    if code.co_flags & 0x04:
        star = names[n_pos + n_kw]
        params.append(f"*{star}")
    elif n_kw:
        params.append("*")
    kwdefaults = fn.__kwdefaults__ or {}
    for name in names[idx:idx + n_kw]:
        if name in kwdefaults:
            ns[f"_k_{name}"] = kwdefaults[name]
            params.append(f"{name}=_k_{name}")
        else:
            params.append(name)
    all_names = list(names[:n_pos + n_kw])
    if star:
        all_names.append(star)
    if code.co_flags & 0x08:
        dstar = names[n_pos + n_kw + (1 if star else 0)]
        params.append(f"**{dstar}")
        all_names.append(dstar)
    body = "{" + ", ".join(f"{n!r}: {n}" for n in all_names) + "}"
    name = code.co_name if code.co_name.isidentifier() else "bind"  # errors name the function
    src = f"def {name}({', '.join(params)}):\n    return {body}\n"
    exec(builtins.compile(src, f"<bind {code.co_name}>", "exec"), ns)
    return ns[name]


def _defaults_of(fn) -> tuple:
    return fn.__defaults__, dict(fn.__kwdefaults__ or {})


def _defaults_changed(fn, bound: tuple) -> bool:
    """Were ``fn.__defaults__``/``__kwdefaults__`` reassigned or mutated since ``bound``?"""
    defaults, kwdefaults = bound
    if fn.__defaults__ is not defaults:
        return True
    now = fn.__kwdefaults__ or {}
    return len(now) != len(kwdefaults) or any(now.get(k, bound) is not v
                                              for k, v in kwdefaults.items())


class _JitFunction:
    """What ``mtc.compile(fn)`` returns for a plain function."""

    def __init__(self, fn, backend, fullgraph: bool, dynamic, options):
        if not isinstance(fn, types.FunctionType):
            raise TypeError(f"mtc.compile expects a Python function, method or nn.Module, got "
                            f"{type(fn).__name__}")
        self.fn = fn
        self.backend = lookup_backend(backend)
        self.backend_name = backend if isinstance(backend, str) else \
            getattr(backend, "__name__", "backend")
        self.fullgraph = fullgraph
        self.dynamic = dynamic
        self.options = options or {}
        self._bind = _make_binder(fn)
        self._bound_defaults = _defaults_of(fn)
        self._freevars = fn.__code__.co_freevars
        self._warned_limit = False
        functools.update_wrapper(self, fn)

    @property
    def _orig_fn(self):
        return self.fn

    def _frame_locals(self, args, kwargs) -> tuple[dict, dict]:
        fn = self.fn
        if _defaults_changed(fn, self._bound_defaults):  # the binder must see new defaults
            self._bind = _make_binder(fn)
            self._bound_defaults = _defaults_of(fn)
        L = self._bind(*args, **kwargs)
        closure = {}
        if self._freevars:
            for name, cell in zip(self._freevars, self.fn.__closure__):
                try:
                    closure[name] = L[name] = cell.cell_contents
                except ValueError:
                    pass
        return L, closure

    def __call__(self, *args, **kwargs):
        if _disabled_depth:
            return self.fn(*args, **kwargs)
        L, closure = self._frame_locals(args, kwargs)
        code = self.fn.__code__
        entries = _CACHE.setdefault(code, [])
        for entry in reversed(entries):  # newest first, as torch: the most general entry
            if entry.backend is self.backend and entry.guard(L) and not (
                    self.fullgraph and (entry.is_eager or entry.graph_break is not None)):
                # fullgraph never settles for an eager or broken entry
                return self._run(entry, args, kwargs)
        mine = [e for e in entries if e.backend is self.backend]
        if len(mine) >= config.cache_size_limit:
            if not self._warned_limit:
                self._warned_limit = True
                warn_user(f"mtc.compile: {code.co_name} reached the recompile limit "
                          f"({config.cache_size_limit} entries); running it eagerly from now on. "
                          f"Last guard failure: {mine[-1].guard.failure_reason(L)}",
                          CompilerFallbackWarning)
            return self.fn(*args, **kwargs)
        if mine:
            reasons = "\n".join(f"    - {i}: {e.guard.failure_reason(L)}"
                                for i, e in enumerate(mine))
            get_logger("recompiles").info(
                "Recompiling function %s in %s:%d\n    triggered by the following guard "
                "failure(s):\n%s", code.co_name, code.co_filename, code.co_firstlineno,
                reasons)
        entry = convert_frame(self.fn, L, closure, self.backend, self.fullgraph, self.dynamic,
                              _FRAME_STATE.setdefault(code, {}))
        entries.append(entry)
        if mine:  # the guard each previous entry failed (guard explorer, compile report)
            record_recompile(code, mine, L, entry)
        return self._run(entry, args, kwargs)

    def _run(self, entry: CacheEntry, args, kwargs):
        if entry.code is None and entry.eager_code is None:
            return self.fn(*args, **kwargs)
        return entry.function_for(self.fn)(*args, **kwargs)

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        return types.MethodType(self, obj)

    def __repr__(self) -> str:
        return f"<mtc.compile({self.fn.__qualname__}, backend={self.backend_name!r})>"


def _unwrap(fn):
    while isinstance(fn, _JitFunction):
        fn = fn.fn
    return fn


def compile(model=None, *, fullgraph: bool = False, dynamic=None, backend="inductor",  # noqa: A001
            mode=None, options=None, disable: bool = False):
    """``mtc.compile``: JIT-compile a function, method or ``nn.Module``.

    Usable as ``@mtc.compile``, ``@mtc.compile(backend="eager")`` or ``mtc.compile(fn)``.
    """
    if model is None:
        return lambda m: compile(m, fullgraph=fullgraph, dynamic=dynamic, backend=backend,
                                 mode=mode, options=options, disable=disable)
    if disable:
        return model
    from ..nn import Module

    if isinstance(model, Module):
        return OptimizedModule(model, _JitFunction(type(model).forward, backend, fullgraph,
                                                   dynamic, options))
    if isinstance(model, types.MethodType):
        jit = _JitFunction(_unwrap(model.__func__), backend, fullgraph, dynamic, options)
        return types.MethodType(jit, model.__self__)
    return _JitFunction(_unwrap(model), backend, fullgraph, dynamic, options)


def _optimized_module_class():
    from ..nn import Module

    class OptimizedModule(Module):
        """``mtc.compile(module)``: calls go to the compiled ``forward`` of ``_orig_mod`` (a
        module with forward or backward hooks, or a ``forward`` of its own, runs eagerly)."""

        def __init__(self, mod, jit):
            super().__init__()
            self._orig_mod = mod
            object.__setattr__(self, "_jit", jit)

        def forward(self, *args, **kwargs):
            mod = self._orig_mod
            if mod._forward_hooks or mod._forward_pre_hooks or mod._backward_hooks or \
                    mod._backward_pre_hooks or "forward" in vars(mod):
                return mod(*args, **kwargs)  # what mod(x) would run: hooks, its own forward
            return self._jit(mod, *args, **kwargs)

        def __getattr__(self, name):
            if name in ("_orig_mod",):
                return super().__getattr__(name)
            return getattr(self._orig_mod, name)

    return OptimizedModule


class _LazyOptimizedModule:
    cls = None

    def __call__(self, mod, jit):
        if _LazyOptimizedModule.cls is None:
            _LazyOptimizedModule.cls = _optimized_module_class()
        return _LazyOptimizedModule.cls(mod, jit)


OptimizedModule = _LazyOptimizedModule()


def code_of(fn) -> types.CodeType:
    """The code object whose cache serves ``fn``: a (compiled) function or method, an
    ``nn.Module`` (its ``forward``), a compiled module, or a code object."""
    from ..nn import Module

    if hasattr(fn, "_jit"):  # an OptimizedModule
        fn = fn._jit
    if isinstance(fn, Module):
        fn = type(fn).forward
    if isinstance(fn, types.MethodType):
        fn = fn.__func__
    return fn if isinstance(fn, types.CodeType) else _unwrap(fn).__code__


def cache_entries(fn) -> list[CacheEntry]:
    """The cache entries of a (compiled or plain) function's code object, oldest first."""
    return list(_CACHE.get(code_of(fn), []))


class disable_compilation:
    """Run compiled functions eagerly inside this block (used by backends and tests)."""

    def __enter__(self):
        global _disabled_depth
        _disabled_depth += 1

    def __exit__(self, *exc):
        global _disabled_depth
        _disabled_depth -= 1


# ------------------------------------------------------------------------------ after a break
# The transformed code of a frame that broke calls these (installed as globals of its module).

_RESUME_JITS: dict = {}
_WRAPPED: dict = {}


def jit_resume(code: types.CodeType, closure, backend, cache: bool = True) -> _JitFunction:
    """The JIT-compiled resume function for ``code`` (with the frame's closure cells; cells
    made anew by every call of the frame are not cached on: its compiled entries are shared
    anyway, they live with the code)."""
    if not cache:
        fn = types.FunctionType(code, _resume_globals(code), code.co_name, None, closure)
        return _SharedCellResume(_JitFunction(fn, backend, False, None, None))
    key = (code, tuple(map(id, closure)) if closure else None, id(backend))
    hit = _RESUME_JITS.get(key)
    if hit is None:
        fn = types.FunctionType(code, _resume_globals(code), code.co_name, None, closure)
        hit = _RESUME_JITS[key] = _JitFunction(fn, backend, False, None, None)
    return hit


class _SharedCellResume:
    """A resume function sharing the frame's cells as its free variables: reading one that is
    empty raises what the program raises — ``UnboundLocalError`` (a cell variable of the
    original), not the ``NameError`` of a free variable."""

    def __init__(self, jit: _JitFunction):
        self.jit = jit

    def __call__(self, *args, **kwargs):
        try:
            return self.jit(*args, **kwargs)
        except NameError as e:
            tb = e.__traceback__
            while tb is not None and tb.tb_next is not None:
                tb = tb.tb_next
            code = tb.tb_frame.f_code if tb is not None else None
            if type(e) is NameError and code is not None and \
                    code.co_name.startswith("__resume_at") and \
                    getattr(e, "name", None) in code.co_freevars:
                raise UnboundLocalError(f"cannot access local variable {e.name!r} where it is "
                                        "not associated with a value") from None
            raise


def _resume_globals(code) -> dict:
    from .resume_execution import RESUME_INFO

    return RESUME_INFO[code].globals


def jit_wrap(obj, backend):
    """A user callable called at a graph break runs through the JIT as its own frame."""
    from ..nn import Module
    from .trace_rules import is_force_skipped, skipped_frame

    key = (id(obj), id(backend))
    hit = _WRAPPED.get(key)
    if hit is not None and hit[0] is obj:
        return hit[1]
    if is_force_skipped(obj):  # trace_rules: eager, but what it calls is compiled
        wrapped = skipped_frame(obj, backend)
    elif isinstance(obj, types.FunctionType):
        wrapped = _JitFunction(obj, backend, False, None, None)
    elif isinstance(obj, types.MethodType) and isinstance(obj.__func__, types.FunctionType):
        wrapped = types.MethodType(_JitFunction(obj.__func__, backend, False, None, None),
                                   obj.__self__)
    elif isinstance(obj, Module):
        wrapped = compile(obj, backend=backend)
    elif isinstance(getattr(type(obj), "__call__", None), types.FunctionType):
        # an instance of a user class with a Python __call__: that method is the frame (not
        # cached: instances made in the frame come and go; the code's cache is what counts)
        return types.MethodType(_JitFunction(type(obj).__call__, backend, False, None, None),
                                obj)
    else:
        return obj
    _WRAPPED[key] = (obj, wrapped)
    return wrapped


def mark_dynamic(t, dim) -> None:
    """Ask for ``t``'s dimension ``dim`` (an int or a list) to be compiled as a symbol."""
    dims = [dim] if isinstance(dim, int) else list(dim)
    current = set(getattr(t, "_dynamo_dynamic_indices", ()))
    current.update(d % max(t.ndim, 1) for d in dims)
    t._dynamo_dynamic_indices = current


def maybe_mark_dynamic(t, dim) -> None:
    mark_dynamic(t, dim)
