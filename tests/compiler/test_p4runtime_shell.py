"""The P4Info loads into p4runtime-shell (in its own virtualenv, with the p4runtime wheel's modules),
which then encodes entries against it by name; ina's modules read the bytes it makes."""

from google.protobuf import text_format
from shell_venv import run_in_shell_venv

from ina.p4rt.proto import p4runtime_pb2
from ina.p4rt.schema import Schema

ENCODE = """
import sys
from google.protobuf import text_format
from p4.config.v1 import p4info_pb2
from p4runtime_sh.shell import DirectCounterEntry, TableEntry, context
context.set_p4info(text_format.Parse(open(sys.argv[1]).read(), p4info_pb2.P4Info()))
{code}
print(message.SerializeToString().hex())  # the last line: the shell prints what it builds
"""


def shell_encodes(p4info, tmp_path, code: str) -> bytes:
    """The serialized message that `code`, run in p4runtime-shell against `p4info`, names `message`."""
    path = tmp_path / "p4info.txt"
    path.write_text(text_format.MessageToString(p4info))
    return bytes.fromhex(run_in_shell_venv(ENCODE.format(code=code), str(path)).splitlines()[-1])


def test_shell_builds_table_entry_from_names(compile_p4, tmp_path):
    message = p4runtime_pb2.TableEntry.FromString(
        shell_encodes(
            compile_p4("basic_forward").p4info,
            tmp_path,
            """
entry = TableEntry("MyIngress.ipv4_lpm")(action="MyIngress.ipv4_forward")
entry.match["hdr.ipv4.dstAddr"] = "10.0.0.0/8"
entry.action["dstAddr"] = "00:00:00:00:00:02"
entry.action["port"] = "3"
message = entry.msg()
""",
        )
    )
    assert message.table_id == 37375156
    assert (
        message.match[0].lpm.value == b"\x0a\x00\x00\x00" and message.match[0].lpm.prefix_len == 8
    )
    assert message.action.action.action_id == 28792405
    assert {p.param_id: p.value for p in message.action.action.params} == {1: b"\x02", 2: b"\x03"}


def test_shell_knows_counters_and_direct_resources(compile_p4, tmp_path):
    p4info = compile_p4("externs_misc").p4info
    message = p4runtime_pb2.DirectCounterEntry.FromString(
        shell_encodes(p4info, tmp_path, 'message = DirectCounterEntry("Ingress.hits").msg()')
    )
    assert message.table_entry.table_id == Schema(p4info).table("Ingress.mac").id != 0
