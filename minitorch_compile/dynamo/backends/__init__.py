"""Backends: callables ``(GraphModule, example_inputs) -> callable``
(``torch/_dynamo/backends``)."""

from .registry import list_backends, lookup_backend, register_backend

__all__ = ["register_backend", "lookup_backend", "list_backends"]
