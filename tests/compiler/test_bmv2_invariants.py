"""Every test program compiles to JSON that satisfies the loader invariants of bmv2_checker."""

import pytest
from bmv2_checker import bmv2_errors
from compiler_helpers import P4_DIR

PROGRAMS = sorted(p.stem for p in P4_DIR.glob("*.p4"))


@pytest.mark.parametrize("name", PROGRAMS)
def test_json_is_well_formed(compile_p4, name):
    assert bmv2_errors(compile_p4(name).bmv2) == []


def test_checker_catches_a_type_error():
    bmv2 = {
        "header_types": [{"name": "h_t", "id": 0, "fields": [["f", 8, False]]}],
        "headers": [{"name": "h", "id": 0, "header_type": "h_t", "metadata": False}],
        "header_stacks": [],
        "header_unions": [],
        "register_arrays": [],
        "counter_arrays": [],
        "meter_arrays": [],
        "calculations": [],
        "checksums": [],
        "deparsers": [],
        "parsers": [],
        "actions": [],
        "pipelines": [
            {
                "name": "ingress",
                "init_table": "node",
                "tables": [],
                "conditionals": [
                    {
                        "name": "node",
                        "expression": {"type": "field", "value": ["h", "f"]},
                        "true_next": None,
                        "false_next": None,
                    }
                ],
            }
        ],
    }
    assert bmv2_errors(bmv2) == [
        "conditional node: expected bool, got data in {'type': 'field', 'value': ['h', 'f']}"
    ]
