"""Trackers, one class per kind of Python value (``torch/_dynamo/variables``).

``base`` (the interface), ``constant``, ``tensor``, ``lists``, ``dicts``, ``functions``,
``nn_module``, ``torch`` (the library's own functions), ``builtin``, ``misc``; ``builder``
turns a real value into the right tracker and installs its guards.
"""
