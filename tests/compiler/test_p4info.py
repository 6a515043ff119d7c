"""P4Info: p4c's names, aliases and ids (kind byte + Jenkins one-at-a-time hash)."""

from ina.compiler.p4info import aliases, jenkins_one_at_a_time
from ina.p4rt.proto import p4info_pb2


def test_ids_match_p4c_for_the_tutorial_names(compile_p4):
    info = compile_p4("basic_forward").p4info
    tables = {t.preamble.name: t for t in info.tables}
    actions = {a.preamble.name: a for a in info.actions}
    # the ids p4c gives these names in the P4 tutorials' basic.p4
    assert tables["MyIngress.ipv4_lpm"].preamble.id == 37375156
    assert actions["MyIngress.ipv4_forward"].preamble.id == 28792405
    assert actions["MyIngress.drop"].preamble.id == 25652968
    assert actions["NoAction"].preamble.id == 21257015


def test_table_match_fields_actions_and_params(compile_p4):
    info = compile_p4("basic_forward").p4info
    table = info.tables[0]
    assert table.preamble.alias == "ipv4_lpm"
    assert [(m.id, m.name, m.bitwidth, m.match_type) for m in table.match_fields] == [
        (1, "hdr.ipv4.dstAddr", 32, p4info_pb2.MatchField.LPM)
    ]
    assert table.size == 1024
    forward = next(a for a in info.actions if a.preamble.alias == "ipv4_forward")
    assert [(p.id, p.name, p.bitwidth) for p in forward.params] == [
        (1, "dstAddr", 48),
        (2, "port", 9),
    ]
    assert info.counters[0].preamble.name == "MyIngress.port_packets"
    assert info.counters[0].spec.unit == p4info_pb2.CounterSpec.BOTH
    assert info.counters[0].preamble.id >> 24 == 0x12


def test_registers_and_const_table(compile_p4):
    info = compile_p4("register_accumulate").p4info
    registers = {r.preamble.name: r for r in info.registers}
    assert registers["MainIngress.acc_3"].size == 16
    assert registers["MainIngress.acc_3"].type_spec.bitstring.bit.bitwidth == 32
    assert registers["MainIngress.acc_3"].preamble.id >> 24 == 0x16
    forward = info.tables[0]
    assert forward.is_const_table
    assert [m.match_type for m in forward.match_fields] == [
        p4info_pb2.MatchField.EXACT,
        p4info_pb2.MatchField.TERNARY,
    ]
    assert forward.match_fields[1].name == "sm.ingress_port"


def test_aliases_are_shortest_unique_suffixes():
    assert aliases(["a.x.t", "b.x.t", "a.u"]) == {"a.x.t": "a.x.t", "b.x.t": "b.x.t", "a.u": "u"}
    assert aliases(["In.c.t", "In.t"]) == {"In.c.t": "c.t", "In.t": "In.t"}


def test_jenkins_hash_known_value():
    assert jenkins_one_at_a_time("MyIngress.ipv4_lpm") & 0xFFFFFF == 37375156 & 0xFFFFFF


def test_controller_packet_metadata(compile_p4):
    info = compile_p4("packet_io").p4info
    metadata = {m.preamble.name: m for m in info.controller_packet_metadata}
    packet_in = metadata["packet_in"]
    # like p4c, the id hashes the header type's name (packet_in_t), not the annotation's
    assert packet_in.preamble.id == 0x04 << 24 | (jenkins_one_at_a_time("packet_in_t") & 0xFFFFFF)
    assert list(packet_in.preamble.annotations) == ['@controller_header("packet_in")']
    assert [(f.id, f.name, f.bitwidth) for f in packet_in.metadata] == [
        (1, "ingress_port", 9),
        (2, "_pad", 7),
    ]
    assert [(f.id, f.name) for f in metadata["packet_out"].metadata] == [
        (1, "egress_port"),
        (2, "_pad"),
    ]
