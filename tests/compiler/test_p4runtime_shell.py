"""The P4Info loads into p4runtime-shell, which then encodes entries against it by name."""

import p4runtime_sh.shell as shell


def test_shell_builds_table_entry_from_names(compile_p4):
    shell.context.set_p4info(compile_p4("basic_forward").p4info)
    entry = shell.TableEntry("MyIngress.ipv4_lpm")(action="MyIngress.ipv4_forward")
    entry.match["hdr.ipv4.dstAddr"] = "10.0.0.0/8"
    entry.action["dstAddr"] = "00:00:00:00:00:02"
    entry.action["port"] = "3"
    message = entry.msg()
    assert message.table_id == 37375156
    assert message.match[0].lpm.value == b"\x0a\x00\x00\x00" and message.match[0].lpm.prefix_len == 8
    assert message.action.action.action_id == 28792405
    assert {p.param_id: p.value for p in message.action.action.params} == {1: b"\x02", 2: b"\x03"}


def test_shell_knows_counters_and_direct_resources(compile_p4):
    shell.context.set_p4info(compile_p4("externs_misc").p4info)
    entry = shell.DirectCounterEntry("Ingress.hits")
    assert entry.msg().table_entry.table_id == shell.context.get_obj_id(shell.P4Type.table, "Ingress.mac")
