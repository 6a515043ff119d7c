"""The program model (switch/model/program.py): what both engines generate code from, read once."""

import copy
import functools
import re
from pathlib import Path

import pytest

from ina.compiler import compile_file
from ina.p4src import AGGREGATE_P4
from ina.switch.model.errors import PipelineError
from ina.switch.model.hashes import ALGORITHMS
from ina.switch.model.program import Program, build_layout, read_program
from ina.switch.python.pipeline import load_pipeline

NATIVE = Path(__file__).parents[2] / "switch" / "native"


@functools.cache
def _aggregate() -> dict:
    return compile_file(AGGREGATE_P4, defines={"ELEMS": "8", "POOL_SIZE": "16"}).bmv2


def model(doc: dict | None = None) -> Program:
    doc = copy.deepcopy(_aggregate()) if doc is None else doc
    return read_program(doc, build_layout(doc))


def test_tables_carry_key_widths_and_actions_by_the_contract_names() -> None:
    m = model()
    admission = m.tables["InaIngress.admission"]
    assert [(k.name, k.match_type, k.width) for k in admission.keys] == [
        ("sm.ingress_port", "exact", 9),
        ("hdr.ethernet.src_addr", "exact", 48),
        ("hdr.ipv4.src_addr", "exact", 32),
        ("hdr.agg.job_id", "exact", 16),
        ("hdr.agg.rank", "exact", 8),
    ]
    assert admission.exact_only
    jobs = m.tables["InaIngress.jobs"]
    set_job = next(
        m.actions[a] for a in jobs.action_ids if m.actions[a].name == "InaIngress.set_job"
    )
    assert [(p.name, p.width) for p in set_job.params] == [
        ("base", 16),
        ("num_slots", 16),
        ("num_workers", 8),
        ("mgid", 16),
        ("epoch", 32),
        ("quorum", 16),
        ("timeout", 32),
        ("staleness", 8),
    ]
    assert m.actions[jobs.default.action_id].name == "InaIngress.unknown_job"
    assert {c.name for c in m.controls} == {"ingress", "egress"}
    assert set(m.tables) == {t.name for c in m.controls for t in c.tables}


def test_state_arrays_are_typed_with_sizes() -> None:
    m = model()
    assert m.instance("register", "InaIngress.slot_count").bitwidth == 16
    assert m.instance("register", "InaIngress.slot_epoch").size == 32  # 2 * POOL_SIZE
    counter = m.instance("counter", "InaIngress.port_refused")
    assert (counter.size, counter.direct, counter.binding) == (512, False, None)
    with pytest.raises(PipelineError, match="unknown register array 'nope'"):
        m.instance("register", "nope")


def test_calculations_are_resolved_to_fields_with_widths() -> None:
    m = model()
    (ck,) = m.checksums
    assert ck.target == ("ipv4", "hdr_checksum") and ck.update and not ck.verify
    calc = ck.calculation
    assert calc.algo == "csum16" and not calc.payload
    assert all(i.ref is not None and i.ref[0] == "ipv4" for i in calc.inputs)
    assert sum(i.width for i in calc.inputs) == 160 - 16  # the IPv4 header but its checksum


def test_parser_transitions_carry_key_widths_and_values() -> None:
    m = model()
    (parser,) = m.parsers
    states = {s.name: s for s in parser.states}
    assert parser.init_state in states
    ethertype = next(
        s
        for s in parser.states
        if [k.width for k in s.keys] == [16]
        and any(t.kind == "hexstr" and t.value == 0x0800 for t in s.transitions)
    )
    assert ethertype.transitions[-1].kind == "default"
    ipv4 = next(s for s in parser.states if len(s.keys) == 2)
    assert [k.width for k in ipv4.keys] == [4, 8]  # ihl, protocol


def test_checksum_flags_default_as_bmv2_and_masks_are_read() -> None:
    doc = copy.deepcopy(_aggregate())
    doc["checksums"][0].pop("update", None)
    doc["checksums"][0].pop("verify", None)
    state = next(s for s in doc["parsers"][0]["parse_states"] if s.get("transition_key"))
    state["transitions"][0]["mask"] = "0xff00"
    m = model(doc)
    assert m.checksums[0].update and not m.checksums[0].verify
    first = next(s for s in m.parsers[0].states if s.name == state["name"]).transitions[0]
    assert first.mask == 0xFF00


def test_a_calculation_over_a_varbit_header_is_refused_by_name() -> None:
    doc = copy.deepcopy(_aggregate())
    doc["header_types"].append(
        {"name": "vb_t", "id": 99, "fields": [["a", 8, False], ["v", "*"]], "max_length": 9}
    )
    doc["headers"].append({"name": "vb", "id": 99, "header_type": "vb_t", "metadata": False})
    doc["calculations"][0]["input"] = [{"type": "header", "value": "vb"}]
    with pytest.raises(PipelineError, match="reads varbit header 'vb'"):
        load_pipeline(doc)


def test_every_hash_algorithm_has_a_python_function_and_its_c_one_exists() -> None:
    declared = set(re.findall(r"\b(ina_\w+)\(", (NATIVE / "state.h").read_text()))
    for name, algo in ALGORITHMS.items():
        assert callable(algo.python), name
        assert algo.c is None or algo.c in declared, name


def test_the_pipeline_keeps_the_model_it_was_generated_from() -> None:
    pipe = load_pipeline(copy.deepcopy(_aggregate()))
    assert isinstance(pipe.model, Program)
    assert [k.bitwidth for k in pipe.tables["InaIngress.admission"].keys] == [9, 48, 32, 16, 8]
