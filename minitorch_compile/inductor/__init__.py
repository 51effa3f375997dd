"""Inductor: fx graphs → loop IR → fused, tiled, threaded numpy kernels (``torch/_inductor``).

The stages, each a module named after torch's: ``decomposition`` (big ops into primitives),
``lowering`` + ``graph`` (fx → loop IR of ``ir``), ``scheduler`` (fusion, with reasons),
``codegen`` (one Python module per graph), ``compile_fx`` (the ``inductor`` backend).
``metrics`` counts what was generated; ``config`` holds the knobs; ``allocator`` is the caching
allocator the generated code takes its large buffers from.
"""

from . import allocator, config, metrics
from .compile_fx import CompiledFxGraph, compile_fx, compile_fx_inner, compiled_graphs

__all__ = ["allocator", "config", "metrics", "compile_fx", "compile_fx_inner", "CompiledFxGraph",
           "compiled_graphs"]
