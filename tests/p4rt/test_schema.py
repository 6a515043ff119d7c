"""P4Info schema: lookups by name, alias and id; errors that suggest close names."""

import functools

import pytest

from ina.compiler import compile_file
from ina.p4rt.schema import Schema, SchemaError
from ina.p4src import AGGREGATE_P4


@functools.cache
def schema() -> Schema:
    return Schema(compile_file(AGGREGATE_P4, defines={"ELEMS": "8", "POOL_SIZE": "16"}).p4info)


def test_table_by_name_alias_and_id_is_the_same_object():
    s = schema()
    jobs = s.table("InaIngress.jobs")
    assert s.table(jobs.id) is jobs
    assert s.table(jobs.alias) is jobs
    assert jobs.id >> 24 == 0x02
    assert [(f.name, f.bitwidth, f.match_type) for f in jobs.match_fields] == [
        ("hdr.agg.job_id", 16, "EXACT")
    ]
    assert s.action("InaIngress.set_job").id in jobs.action_ids


def test_action_params_in_declaration_order():
    action = schema().action("InaIngress.set_job")
    assert action.id >> 24 == 0x01
    assert [(p.id, p.name, p.bitwidth) for p in action.params] == [
        (1, "base", 16),
        (2, "num_slots", 16),
        (3, "num_workers", 8),
        (4, "mgid", 16),
        (5, "epoch", 32),
        (6, "quorum", 16),
        (7, "timeout", 32),
        (8, "staleness", 8),
    ]


def test_registers_and_counters():
    s = schema()
    bitmap = s.register("InaIngress.slot_bitmap")
    assert (bitmap.id >> 24, bitmap.size, bitmap.bitwidth) == (0x16, 32, 32)
    accepted = s.counter("InaIngress.job_accepted")
    assert (accepted.id >> 24, accepted.size) == (0x12, 256)


def test_unknown_names_raise_schema_error_with_close_matches():
    with pytest.raises(
        SchemaError, match=r"no table 'InaIngress\.job'; did you mean InaIngress\.jobs"
    ):
        schema().table("InaIngress.job")
    with pytest.raises(KeyError, match="no register id 0x16000000"):
        schema().register(0x16000000)


def test_schema_values_are_frozen():
    with pytest.raises(AttributeError):
        schema().table("InaIngress.jobs").size = 1
