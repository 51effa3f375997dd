"""Graph passes: ``dead_code_elimination``, ``cse``, ``ShapeProp`` (``torch/fx/passes``)."""

from .cse import cse
from .dead_code_elimination import dead_code_elimination
from .shape_prop import ShapeProp, TensorMetadata

__all__ = ["cse", "dead_code_elimination", "ShapeProp", "TensorMetadata"]
