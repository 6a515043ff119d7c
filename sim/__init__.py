"""ina.sim: the aggregation program and the worker core in virtual time (docs/simulation.md)."""
