"""``mtc.viz``: pictures of what the compiler made (depyf / tlparse / ``FxGraphDrawer`` in torch).

``draw(graph_or_module)`` (and ``draw_kernels(compiled)``, Inductor's fused kernels as
clusters) returns a ``graphviz.Digraph`` that shows as SVG in Jupyter.  Where
graphviz's ``dot`` program is missing it degrades to the DOT source with a one-line hint —
never an exception.  ``draw_cache_entries(fn)`` draws a compiled function's cache: the guard
of each entry, checked newest first, and the graph it runs; ``draw_guards(fn)`` every guard of
every entry, grouped and coloured, with the guard each recompile failed (``guard_explorer.py``).
``html.py`` holds the HTML views notebooks show (``_repr_html_``) and the report is built from.
"""

from .cache_drawer import draw_cache_entries
from .graph_drawer import Picture, dot_available, draw
from .guard_explorer import draw_guards
from .kernel_drawer import draw_kernels

__all__ = ["draw", "draw_cache_entries", "draw_guards", "draw_kernels", "Picture", "dot_available"]
