"""The ``inductor`` backend: Dynamo → AOTAutograd (min-cut) → Inductor, for the forward and the
backward graph (``torch/_inductor/compile_fx.py``).

``compile_fx_inner(gm, example_inputs)`` is the whole pipeline for one graph::

    GraphLowering(gm).run(...)        fx graph -> loop IR (lowering.py, decomposition.py)
    Scheduler(graph)                  fusion, with every decision recorded (scheduler.py)
    WrapperCodeGen(...).generate()    one Python module: kernels + call (codegen/)
    load the module                   from a cache keyed by its source text

and returns a ``CompiledFxGraph``: callable like the graph (tensors in, tensors out), holding the
``source`` (print it: it runs on its own), the IR before fusion, the fusion decisions, the
kernels and the memory plan.  ``compile_fx`` is the Dynamo backend; it hands
``compile_fx_inner`` to ``aot_module_simplified`` as both the forward and backward compiler.

**Dynamic shapes.** A graph whose placeholders have symbolic sizes (AOTAutograd traced it with
``s0``) is compiled *once*: its kernels take the sizes as arguments and tile at run time, so
it runs for every size.  When that is not possible — a size Inductor cannot prove ``>= 2``, an
op whose lowering needs a concrete size, a lowering that would specialise a size (a new guard
on the trace's ``ShapeEnv``) — the graph is compiled *specialised* instead
(``SpecializedFxGraph``): once per distinct set of concrete sizes, each by re-tracing the graph
on the call's inputs; the reason is logged (``MTC_LOGS=dynamic``) and kept on the object.

If anything goes wrong while compiling a graph, the graph runs eagerly instead (its
``GraphModule.forward``), with a warning that gives the reason: a compiled program is never wrong.
Under ``mtc.compile(..., fullgraph=True)`` the user asked for the whole program compiled, so the
same failure raises ``BackendCompilerFailed`` instead (as Dynamo's internal errors do there).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from .._tensor import Tensor
from ..dynamo._logging import get_logger, warn_user
from ..dynamo.convert_frame import compiling_fullgraph
from ..dynamo.exc import BackendCompilerFailed, CompilerFallbackWarning
from ..dynamo.symbolic_shapes import is_symbolic
from ..report.trace import trace_event
from . import metrics
from .codegen.wrapper import WrapperCodeGen, source_key
from .graph import GraphLowering
from .scheduler import Scheduler
from .sizevars import guard_is_tautology

_module_cache: dict = {}  # source hash -> namespace of the loaded module


@dataclass
class CompiledFxGraph:
    """One compiled graph (torch's ``CompiledFxGraph``)."""

    current_callable: object
    source: str
    ir_pre_fusion: str
    ir_post_fusion: str
    decisions: list
    kernels: list
    fallbacks: list
    memory: object
    cache_hit: bool = False
    scheduler: object = field(default=None, repr=False)
    gm: object = field(default=None, repr=False)
    kind: str = "forward"  # or "backward": which of AOTAutograd's graphs this is

    def __call__(self, *args):
        return self.current_callable(*args)

    def why_not_fused(self) -> str:
        return self.scheduler.why_not_fused()


def load_module(source: str) -> tuple[dict, bool]:
    """Exec ``source`` as a module, once per distinct source text (the content-keyed cache)."""
    key = source_key(source)
    ns = _module_cache.get(key)
    if ns is not None:
        return ns, True
    ns = {"__name__": f"mtc_inductor_{key}"}
    exec(compile(source, f"<inductor {key}>", "exec"), ns)
    _module_cache[key] = ns
    return ns, False


def _shape_envs(gm) -> list:
    """The ShapeEnvs of the graph's symbolic input sizes (empty: a static graph)."""
    envs = []
    for n in gm.graph.nodes:
        if n.op != "placeholder":
            continue
        v = n.meta.get("val")
        for s in (tuple(v.shape) if isinstance(v, Tensor) else (v,)):
            if is_symbolic(s) and all(s.env is not e for e in envs):
                envs.append(s.env)
    return envs


def compile_fx_inner(gm, example_inputs):
    """Lower, schedule, generate and load one graph (errors propagate).  A graph with symbolic
    sizes is compiled once for all sizes, or else specialised (module docstring)."""
    envs = _shape_envs(gm)
    if not envs:
        return _compile_graph(gm, example_inputs)
    npu = any(getattr(t, "is_npu", False) for t in example_inputs)
    before = [len(e.guards) for e in envs]
    try:
        if npu:
            raise NotImplementedError("the npu code generator compiles static sizes only")
        compiled = _compile_graph(gm, example_inputs)
        new = [g for e, n in zip(envs, before) for g in e.guards[n:]
               if not guard_is_tautology(g)]
        if new:
            raise NotImplementedError(f"lowering needed a concrete size (guard {new[0]})")
        return compiled
    except Exception as e:  # noqa: BLE001 - any reason: specialising is always correct
        for env, n in zip(envs, before):  # forget them: another graph must record them too
            env._seen.difference_update(env.guards[n:])
            del env.guards[n:]
        reason = f"{type(e).__name__}: {e}"
        get_logger("dynamic").info("inductor: specialising a dynamic graph: %s", reason)
        return SpecializedFxGraph(gm, reason)


class SpecializedFxGraph:
    """A dynamic graph compiled once per distinct set of concrete input sizes."""

    def __init__(self, gm, reason: str, fullgraph: bool = False):
        self.gm, self.reason, self.fullgraph = gm, reason, fullgraph
        self.kind = "forward"  # or "backward" (set by the backend, as on CompiledFxGraph)
        self.compiled: dict = {}  # concrete sizes (and int inputs) -> CompiledFxGraph
        self.eager: dict = {}  # sizes that could not be compiled -> the graph, run eagerly

    def __call__(self, *args):
        key = tuple(tuple(a._data.shape) + tuple(a._data.strides) if isinstance(a, Tensor)
                    else a for a in args)
        hit = self.compiled.get(key) or self.eager.get(key)
        if hit is None:
            from ..aot.aot_autograd import _flat_graph
            from ..fx import make_fx

            gm = self.gm
            try:  # nothing ran yet: a failure runs this size eagerly, as _compiler does
                static = _flat_graph(make_fx(lambda *a: list(gm(*a)), None, "fake")(*args))
                hit = self.compiled[key] = _compile_graph(static, list(args))
            except Exception as e:  # noqa: BLE001 - any internal error
                if self.fullgraph:
                    raise BackendCompilerFailed("inductor", RuntimeError(
                        f"could not compile the graph for sizes {key}: "
                        f"{type(e).__name__}: {e}")) from e
                warn_user(f"inductor: could not compile the graph for sizes {key}, running it "
                          f"eagerly instead: {type(e).__name__}: {e}", CompilerFallbackWarning)
                hit = self.eager[key] = gm.forward
        return hit(*args)

    @property
    def source(self) -> str:
        latest = list(self.compiled.values())[-1:]
        return f"# specialised per size: {self.reason}\n" + \
            (latest[0].source if latest else "# (no size compiled yet)\n")

    def __getattr__(self, name):  # kernels, decisions, ...: those of the latest size compiled
        if name.startswith("_") or not self.__dict__.get("compiled"):
            raise AttributeError(name)
        return getattr(list(self.compiled.values())[-1], name)


def _compile_graph(gm, example_inputs) -> CompiledFxGraph:
    start = time.perf_counter()
    if gm.graph.eliminate_dead_code():  # torch's post-grad pass: a value nobody reads
        gm.recompile()                  # (``x.repeat(2)`` unused) is never lowered
    graph = GraphLowering(gm)
    wrapper_class = WrapperCodeGen
    if any(getattr(t, "is_npu", False) for t in example_inputs):  # the npu's code generator
        from .codegen.npu_wrapper import NPUWrapperCodeGen

        graph.device_type, wrapper_class = "npu", NPUWrapperCodeGen
    graph.run(*example_inputs)
    pre = "\n".join(repr(b) for b in graph.buffers)
    sched = Scheduler(graph)
    wrapper = wrapper_class(graph, sched)
    source = wrapper.generate()
    ns, hit = load_module(source)
    get_logger("output_code").info("Output code:\n%s", source)
    metrics.generated_kernel_count += len(wrapper.kernels)
    metrics.extern_kernel_count += sum(1 for g in sched.groups if g.is_extern)
    metrics.fallback_kernel_count += len(graph.fallbacks)
    for k in wrapper.kernels:
        metrics.num_bytes_accessed += k["num_bytes"]
        metrics.kernel_records.append(metrics.KernelRecord(
            k["name"], k["nodes"], k["num_bytes"], k["numel"], k["reduction_numel"],
            k["origins"]))
    run = ns["run"]
    if graph.device_type == "npu":  # the compile report's npu section, fed at the first run
        from .npu_runtime import report_first_run

        run = report_first_run(run, source, wrapper.npu_plans)
    out = CompiledFxGraph(run, source, pre, sched.debug_str(), list(sched.decisions),
                          list(wrapper.kernels), list(graph.fallbacks), wrapper.plan, hit,
                          sched, gm)
    trace_event("inductor_graph", compiled=out, time_s=time.perf_counter() - start)
    return out


def _compiler(kind: str, log: list | None, fullgraph: bool = False):
    def compiler(gm, example_inputs):
        try:
            compiled = compile_fx_inner(gm, example_inputs)
        except Exception as e:  # noqa: BLE001 - any internal error: run this graph eagerly
            if fullgraph:
                raise BackendCompilerFailed(
                    "inductor", RuntimeError(f"could not compile the {kind} graph: "
                                             f"{type(e).__name__}: {e}")) from e
            warn_user(f"inductor: could not compile the {kind} graph, running it eagerly "
                      f"instead: {type(e).__name__}: {e}", CompilerFallbackWarning)
            return gm.forward
        if isinstance(compiled, SpecializedFxGraph):  # it compiles again at each new size
            compiled.fullgraph = fullgraph
        compiled.kind = kind
        if log is not None:
            log.append(compiled)
        return compiled
    return compiler


compiled_graphs: list = []  # every CompiledFxGraph made by the backend, newest last


def compile_fx(gm, example_inputs):
    """The ``inductor`` backend for ``mtc.compile``.

    AOTAutograd traces on the first call of each input signature; a program it cannot handle
    (``AOTUnsupported``: say, a mutation of an input passed twice) runs eagerly from then on,
    with a warning — as a graph Inductor cannot compile does.  That fallback happens while
    tracing on fake tensors, before any kernel ran; an error a kernel raises at run time (the
    error eager mode raises) propagates as it is: re-running the graph eagerly then would
    apply the kernels' effects twice."""
    from ..aot import aot_module_simplified, min_cut_rematerialization_partition
    from ..aot.aot_autograd import AOTUnsupported

    fullgraph = compiling_fullgraph.get()  # compiling happens at the first call, later
    compiled = aot_module_simplified(gm, example_inputs,
                                     _compiler("forward", compiled_graphs, fullgraph),
                                     _compiler("backward", compiled_graphs, fullgraph),
                                     partition_fn=min_cut_rematerialization_partition,
                                     eager_fallback=not fullgraph)

    def run(*args):
        try:
            return compiled(*args)
        except AOTUnsupported as e:  # fullgraph=True only: else aot_module_simplified falls back
            raise BackendCompilerFailed(
                "inductor", RuntimeError(f"AOTAutograd cannot trace this graph: {e}")) from e

    run.compiled = compiled.compiled
    return run
