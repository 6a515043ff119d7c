"""Errors the switch reports to whoever loads a pipeline or programs a table."""


class PipelineError(Exception):
    """A BMv2 JSON the switch cannot run; the message names the offending object."""


class TableError(Exception):
    """A table operation that cannot be done (unknown action, duplicate entry, bad width, full)."""


class Unsupported(Exception):
    """A program feature a backend does not compile (the message names it); the engine facade
    then runs the program on the Python engine, or refuses it when the native one was asked for."""
