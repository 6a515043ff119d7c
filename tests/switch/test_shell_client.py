"""p4runtime-shell, an independent P4Runtime client in its own virtualenv (protobuf 3.20, the
p4runtime wheel's modules), drives ina's switch (protobuf's upb backend): pipeline, insert, read."""

import json
import threading

from google.protobuf import text_format
from shell_venv import run_in_shell_venv

from ina.compiler import compile_file
from ina.p4rt.proto import p4runtime_pb2
from ina.p4src import AGGREGATE_P4
from ina.switch.engine import Switch
from ina.switch.p4runtime.server import P4RuntimeService, serve

SESSION = """
import sys
import p4runtime_sh.shell as sh
address, p4info, bmv2_json = sys.argv[1:]
sh.setup(device_id=0, grpc_addr=address, election_id=(0, 1), config=sh.FwdPipeConfig(p4info, bmv2_json))
try:
    entry = sh.TableEntry("InaIngress.jobs")(action="InaIngress.set_job")
    entry.match["hdr.agg.job_id"] = "5"
    entry.action["base"] = "4"
    entry.action["num_slots"] = "8"
    entry.action["num_workers"] = "2"
    entry.action["mgid"] = "0x105"
    entry.action["epoch"] = "0x5eed0005"
    entry.action["quorum"] = "2"
    entry.action["timeout"] = "500"
    entry.action["staleness"] = "1"
    entry.insert()
    [read] = list(sh.TableEntry("InaIngress.jobs").read())
    print(read.msg().SerializeToString().hex())  # the last line: the shell prints what it builds
finally:
    sh.teardown()
"""


def test_p4runtime_shell_pushes_pipeline_and_round_trips_an_entry(tmp_path):
    program = compile_file(AGGREGATE_P4, defines={"ELEMS": "8", "POOL_SIZE": "16"})
    (tmp_path / "p4info.txt").write_text(text_format.MessageToString(program.p4info))
    (tmp_path / "aggregate.json").write_text(json.dumps(program.bmv2))
    sw = Switch()
    srv = serve(P4RuntimeService(sw, threading.Lock()), "127.0.0.1:0")
    try:
        out = run_in_shell_venv(
            SESSION,
            f"127.0.0.1:{srv.bound_port}",
            str(tmp_path / "p4info.txt"),
            str(tmp_path / "aggregate.json"),
        )
    finally:
        srv.stop(None)
    read = p4runtime_pb2.TableEntry.FromString(bytes.fromhex(out.splitlines()[-1]))
    assert read.match[0].exact.value == b"\x05"
    assert [p.value for p in read.action.action.params] == [
        b"\x04",
        b"\x08",
        b"\x02",
        b"\x01\x05",
        b"\x5e\xed\x00\x05",
        b"\x02",
        b"\x01\xf4",
        b"\x01",
    ]
    [handle] = sw.tables["InaIngress.jobs"].entries()
    assert handle.args == (4, 8, 2, 0x105, 0x5EED0005, 2, 500, 1)
