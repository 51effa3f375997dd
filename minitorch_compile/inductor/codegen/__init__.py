"""Code generators: ``cpu`` (numpy kernels over tiles) and the ``wrapper`` that calls them."""
