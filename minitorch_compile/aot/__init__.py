"""``mtc.aot``: AOTAutograd — joint graphs, functionalization, partitioners.

Mirrors ``torch/_functorch``: ``aot_function``/``aot_module`` (``aot_autograd.py``), one
signature's trace and compile (``jit_compile_runtime_wrappers.py``), the functionalization pass
(``functionalize.py``), ``default_partition`` and ``min_cut_rematerialization_partition``
(``partitioners.py``) over our own max-flow (``maxflow.py``).
"""

from .aot_autograd import aot_function, aot_module, aot_module_simplified, create_aot_pair
from .functionalize import functionalize
from .maxflow import MaxFlow, min_cut
from .partitioners import Partition, default_partition, min_cut_rematerialization_partition


def nop(gm, example_inputs):
    """A compiler that runs the graph as is (torch's ``functorch.compile.nop``)."""
    return gm.forward


__all__ = ["aot_function", "aot_module", "aot_module_simplified", "create_aot_pair",
           "default_partition", "min_cut_rematerialization_partition", "Partition",
           "functionalize", "MaxFlow", "min_cut", "nop"]
