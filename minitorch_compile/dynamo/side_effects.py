"""Side effects: mutations made while tracing, replayed after the graph (``side_effects.py``).

Mirrors ``torch/_dynamo/side_effects.py: SideEffects``.  Tracing never touches a real object:
a list the frame received stays as it was while the tracer appends to its *tracker*.  What the
traced code did to the world outside the frame is recorded here and **replayed by the
transformed code** after the compiled graph has run (before a graph break's instruction runs):

===========================  ======================================  ==========================
effect                       recorded when                           replayed as
===========================  ======================================  ==========================
list mutated (append, ...)   a method of an input list mutates it    ``lst[:] = [...]``
dict mutated (update, ...)   a method of an input dict mutates it    ``d.clear(); d.update({..})``
set mutated (add, ``|=``..)  a method/operator of an input set does  ``s.clear(); s.update({..})``
attribute write              ``obj.a = v`` on a user object/Module   ``obj.a = v``
global write                 ``global g; g = v``                     ``g = v`` (STORE_GLOBAL)
nonlocal write               a closure cell of a function from       ``cell.cell_contents = v``
                             outside the frame is assigned           (``STORE_DEREF`` for the
                                                                     frame's own free variables)
===========================  ======================================  ==========================

Invariants:

* **One tracker per object.** A mutable object read through two sources gets the same tracker
  (``id_to_variable``), guarded ``DUPLICATE_INPUT``; objects that were distinct while tracing
  are guarded to stay distinct (``NO_ALIASING``), since a mutation through one must not be
  missed through the other.
* **Reads see writes.** Reading an attribute, global or cell written earlier in the trace gives
  the written tracker, not the stale source.
* **Final state, in order of first mutation.** Each mutated object is replayed once, with its
  final contents (as torch does); objects are replayed in the order they were first mutated.
* **Values first, stores second.** Every value a store needs, and every value the rest of the
  transformed code reads through a source that a store changes (``x = lst[0]; lst.pop(0)``),
  is loaded into a temporary *before* the first store.
* New objects that escape (a list built while tracing and appended to an input list, stored in
  an attribute, and returned too) are built once and shared (``PyCodegen.tempvars``).
"""

from __future__ import annotations

from dataclasses import dataclass

from bytecode import Instr

from .exc import unimplemented

DELETED = object()  # what ``load_attr`` gives for an attribute deleted in this trace


@dataclass
class SideEffect:
    kind: str  # "list" | "dict" | "set" | "attr" | "delattr" | "global" | "cell"
    target: object  # the tracker mutated, or the source of the global/cell
    name: str = ""  # attribute / global name
    value: object = None  # the tracker stored (attr, global, cell)

    def describe(self) -> str:
        if self.kind in ("list", "dict", "set"):
            return f"{self.kind} {self.target.source.name()} mutated"
        if self.kind == "attr":
            where = self.target.source.name() if self.target.source is not None else \
                f"<new {type(self.target.value).__name__}>"
            return f"attribute {where}.{self.name} assigned"
        if self.kind == "delattr":
            return f"attribute {self.target.source.name()}.{self.name} deleted"
        if self.kind == "global":
            return f"global {self.name} assigned"
        return f"nonlocal {self.name} assigned"

    def changed_prefix(self) -> tuple[str, bool]:
        """The source name this effect changes, and whether that name itself is rebound (an
        attribute) or only what it contains (a container: its identity stays)."""
        if self.kind in ("list", "dict", "set"):
            return self.target.source.name(), False
        if self.kind in ("attr", "delattr"):
            if self.target.source is None:  # a new object: nothing reads it through a source
                return "\0", True
            return f"{self.target.source.name()}.{self.name}", True
        return self.target.name(), True


class SideEffects:
    def __init__(self):
        self.id_to_variable: dict[int, tuple] = {}  # id(obj) -> (obj, tracker)
        self.effects: dict[tuple, SideEffect] = {}  # key -> effect, in first-mutation order

    # ---------------------------------------------------------------- identity
    def lookup(self, value):
        hit = self.id_to_variable.get(id(value))
        return hit[1] if hit is not None and hit[0] is value else None

    def track(self, value, vt) -> None:
        self.id_to_variable[id(value)] = (value, vt)

    def sources_to_keep_distinct(self) -> list[str]:
        return [vt.source.name() for _, vt in self.id_to_variable.values()
                if vt.source is not None]

    # ---------------------------------------------------------------- recording
    def mutation(self, vt, kind: str) -> None:
        """An input list/dict tracker was mutated (its items already changed)."""
        if vt.source is None:
            return  # made while tracing: nothing outside the frame sees it yet
        self.effects.setdefault(("obj", id(vt)), SideEffect(kind, vt))

    def store_attr(self, obj_vt, name: str, value) -> None:
        if obj_vt.source is None and not _is_new_object(obj_vt):
            unimplemented(f"assigning attribute {name!r} of an object made while tracing")
        self.effects.pop(("attr", id(obj_vt), name), None)  # order: the latest write counts
        self.effects[("attr", id(obj_vt), name)] = SideEffect("attr", obj_vt, name, value)

    def delete_attr(self, obj_vt, name: str) -> None:
        """``del obj.name``: on an object from outside the frame a recorded ``DELETE_ATTR``;
        on one made while tracing, the stores of that attribute are simply dropped."""
        self.effects.pop(("attr", id(obj_vt), name), None)
        if not _is_new_object(obj_vt):
            self.effects[("attr", id(obj_vt), name)] = SideEffect("delattr", obj_vt, name)

    def load_attr(self, obj_vt, name: str):
        """The tracker assigned to ``obj.name`` earlier in this trace, ``DELETED`` after a
        ``del obj.name``, or None."""
        e = self.effects.get(("attr", id(obj_vt), name))
        return None if e is None else DELETED if e.kind == "delattr" else e.value

    def store_global(self, source, name: str, value) -> None:
        key = ("global", source.name())
        self.effects.pop(key, None)
        self.effects[key] = SideEffect("global", source, name, value)

    def load_global(self, source):
        e = self.effects.get(("global", source.name()))
        return None if e is None else e.value

    def store_cell(self, source, name: str, value) -> None:
        if source is None:
            unimplemented(f"assigning the closure variable {name!r} of a function without a "
                          "source")
        key = ("cell", source.name())
        self.effects.pop(key, None)
        self.effects[key] = SideEffect("cell", source, name, value)

    def load_cell(self, source):
        e = self.effects.get(("cell", source.name())) if source is not None else None
        return None if e is None else e.value

    def is_empty(self) -> bool:
        return not self.effects

    def describe(self) -> list[str]:
        return [e.describe() for e in self.effects.values()]

    def values(self) -> list:
        """Trackers the replay needs (the graph must output the tensors among them)."""
        return _values(self.effects.values())

    def _live_effects(self, needed: list) -> list:
        """The effects to replay: all on objects from outside the frame, and those on new
        objects that escape — reachable from ``needed`` or from a replayed value."""
        effects = list(self.effects.values())
        outside = [e for e in effects if not _is_new_object(e.target)]
        on_new: dict = {}
        for e in effects:
            if _is_new_object(e.target):
                on_new.setdefault(id(e.target), []).append(e)
        live, todo = set(), list(needed) + _values(outside)
        while todo:
            for vt in _walk([todo.pop()]):
                if _is_new_object(vt) and id(vt) not in live:
                    live.add(id(vt))
                    todo.extend(_values(on_new.get(id(vt), [])))
        return [e for e in effects if not _is_new_object(e.target) or id(e.target) in live]

    # ---------------------------------------------------------------- replay
    def codegen(self, cg, needed: list) -> None:
        """Emit the replay into ``cg``: first load every value (and every tracker in
        ``needed`` whose source a store changes) into temporaries, then do the stores."""
        effects = self._live_effects(needed)
        if not effects:
            cg.stash_new_containers(needed)
            return
        changed = [e.changed_prefix() for e in effects]

        def stale(vt) -> bool:
            src = getattr(vt, "source", None)
            if src is None:
                return False
            name = src.name()
            return any(name.startswith(p + "[") or name.startswith(p + ".") or
                       (rebound and name == p) for p, rebound in changed)

        values = _values(effects)
        targets = [e.target for e in effects if e.kind in ("list", "dict", "set", "attr",
                                                          "delattr")]
        for vt in _walk(needed + values + targets):
            if stale(vt) and id(vt) not in cg.tempvars:
                cg.reconstruct(vt)
                cg.stash(vt)
        cg.stash_new_containers(needed + values + targets)
        temps = []
        for e in effects:
            if e.kind == "list":
                for item in e.target.items:
                    cg.reconstruct(item)
                cg.build(list, len(e.target.items))
            elif e.kind == "dict":
                for k, v in e.target.items.items():
                    cg.load_const(k)
                    cg.reconstruct(v)
                cg.build(dict, len(e.target.items))
            elif e.kind == "set":
                e.target.build_new(cg)
            elif e.kind == "delattr":
                cg.load_const(None)
            else:
                cg.reconstruct(e.value)
            temps.append(cg.new_temp())
            cg.store_local(temps[-1])
        for e, tmp in zip(effects, temps):
            if e.kind == "list":  # lst[:] = new
                cg.load_local(tmp)
                cg.reconstruct(e.target)  # (a temporary if a store before changes its source)
                cg.load_const(None)
                cg.load_const(None)
                cg.append(Instr("BUILD_SLICE", 2))
                cg.append(Instr("STORE_SUBSCR"))
            elif e.kind in ("dict", "set"):  # d.clear(); d.update(new)
                for method, args in (("clear", ()), ("update", (tmp,))):
                    cg.load_callable(lambda m=method: (cg.reconstruct(e.target),
                                                       cg.load_attr(m)))
                    for a in args:
                        cg.load_local(a)
                    cg.call(len(args))
                    cg.append(Instr("POP_TOP"))
            elif e.kind == "attr":
                cg.load_local(tmp)
                cg.reconstruct(e.target)
                cg.append(Instr("STORE_ATTR", e.name))
            elif e.kind == "delattr":
                cg.reconstruct(e.target)
                cg.append(Instr("DELETE_ATTR", e.name))
            elif e.kind == "global":
                cg.load_local(tmp)
                _store_to_source(cg, e.target)
            else:
                cg.load_local(tmp)
                _store_to_source(cg, e.target)


def _values(effects) -> list:
    out = []
    for e in effects:
        if e.kind == "list":
            out.extend(e.target.items)
        elif e.kind == "dict":
            out.extend(e.target.items.values())
        elif e.kind in ("set", "delattr"):  # constants only; nothing stored
            pass
        else:
            out.append(e.value)
    return out


def _is_new_object(vt) -> bool:
    from .variables.user_defined import NewObjectVariable

    return isinstance(vt, NewObjectVariable)


def _store_to_source(cg, source) -> None:
    """Store the top of the stack where ``source`` reads from."""
    from bytecode import FreeVar

    from .source import ClosureSource, FreeVarSource, GetItemSource, GlobalSource

    if isinstance(source, GlobalSource):
        cg.append(Instr("STORE_GLOBAL", source.global_name))
    elif isinstance(source, GetItemSource):  # another module's globals: G_mod['name'] = v
        source.base.reconstruct(cg)
        cg.load_const(source.index)
        cg.append(Instr("STORE_SUBSCR"))
    elif isinstance(source, FreeVarSource):
        cg.append(Instr("STORE_DEREF", FreeVar(source.var_name)))
    elif isinstance(source, ClosureSource):  # fn.__closure__[i].cell_contents = v
        source.base.reconstruct(cg)
        cg.load_attr("__closure__")
        cg.load_const(source.index)
        cg.binary_subscr()
        cg.append(Instr("STORE_ATTR", "cell_contents"))
    else:
        unimplemented(f"cannot replay a store to {source.name()}")


def _walk(vts):
    """Every tracker in ``vts``, containers' items included."""
    from .variables.dicts import ConstDictVariable
    from .variables.lists import BaseListVariable

    seen, todo = set(), list(vts)
    while todo:
        vt = todo.pop()
        if id(vt) in seen or vt is None:
            continue
        seen.add(id(vt))
        yield vt
        if isinstance(vt, BaseListVariable) and getattr(vt, "source", None) is None:
            todo.extend(vt.items)
        elif isinstance(vt, ConstDictVariable) and vt.source is None:
            todo.extend(vt.items.values())
