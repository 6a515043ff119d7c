"""ina: in-network aggregation on an emulated P4 data plane."""

__version__ = "0.1.0"

from ina import compiled as _compiled

_compiled.install()  # the per-packet modules from their mypyc build, if chosen (ina/compiled.py)
