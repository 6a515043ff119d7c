"""Errors the switch reports to whoever loads a pipeline or programs a table."""


class PipelineError(Exception):
    """A BMv2 JSON the switch cannot run; the message names the offending object."""


class TableError(Exception):
    """A table operation that cannot be done (unknown action, duplicate entry, bad width, full)."""
