"""ina: in-network aggregation on an emulated P4 data plane."""

__version__ = "0.1.0"
