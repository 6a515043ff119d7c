"""`ina bench hostile`: huge valid pipelines pushed to a real P4Runtime server (issue 28's load).

The aggregation program's ingress is led through N chained conditionals (each tests a field and
goes on to the next either way): N = 16,384, N sized to a 4.5 MB JSON (both over the 4 MiB message
limit, so gRPC refuses them before the service sees them), N sized to the largest request the limit
lets through (the code budget then refuses it), and the largest N the code budget
(switch/model/budget.py) accepts. Each is pushed with VERIFY_AND_COMMIT to an in-process server
(P4RuntimeService + serve) running the small aggregation program, while another thread calls
Capabilities and Read every 100 ms; then the small program is pushed again. Per case: the answer
and the time to it, the peak RSS while it was built (VmHWM), the slowest Capabilities and Read
meanwhile, RSS before, after the push and after the small program replaced it. The request's
protobuf parse, json.loads and Switch.build are then timed apart in process on the same bytes
(the server's gRPC thread parses before the service sees the request). Both engines are measured,
"auto" (native: gcc) and "python", each build with an empty gcc cache, as a new program meets it.
Timing decides nothing. The issue's targets: answered within 5 s and 1 GB of peak memory;
Capabilities and Read within 1 s.
"""

import contextlib
import copy
import json
import os
import queue
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import grpc

from ina.bench.results import Progress, write
from ina.compiler import compile_file
from ina.p4rt.proto import MAX_MESSAGE_BYTES, p4runtime_pb2, p4runtime_pb2_grpc
from ina.p4rt.schema import Schema
from ina.p4src import AGGREGATE_P4
from ina.switch.engine import Switch
from ina.switch.model import budget
from ina.switch.model.errors import PipelineError
from ina.switch.model.load import load_program
from ina.switch.p4runtime.server import P4RuntimeService, serve

Config = p4runtime_pb2.SetForwardingPipelineConfigRequest
ISSUE_JSON_BYTES = 4_500_000  # the issue's pipeline
ISSUE_CONDITIONALS = 16_384
P4INFO_ROOM = 64 << 10  # of a request at the message limit, left for its P4Info and framing
POLL_S = 0.1  # Capabilities and Read, each this often
DEADLINE_S = 600.0  # of every call: a stuck server ends the bench instead of hanging it
TARGETS = {"answer_s": 5.0, "peak_rss_mb": 1024, "slowest_call_s": 1.0}


def chained(doc: dict, n: int) -> dict:
    """`doc` with its first pipeline entered through `n` chained conditionals ("chain_0" first,
    each `field == i` going on to the next either way, the last to the old first node)."""
    out = copy.deepcopy(doc)
    pipe = out["pipelines"][0]
    first, ids = pipe["init_table"], 1 + max((c["id"] for c in pipe["conditionals"]), default=0)
    field_ref = {"type": "field", "value": ["standard_metadata", "ingress_port"]}
    for i in range(n):
        nxt = f"chain_{i + 1}" if i + 1 < n else first
        test = {"op": "==", "left": field_ref, "right": {"type": "hexstr", "value": hex(i % 512)}}
        pipe["conditionals"].append(
            {
                "name": f"chain_{i}",
                "id": ids + i,
                "true_next": nxt,
                "false_next": nxt,
                "expression": {"type": "expression", "value": test},
            }
        )
    if n:
        pipe["init_table"] = "chain_0"
    return out


def conditionals_for(doc: dict, nbytes: int) -> int:
    """How many chained conditionals make `doc`'s JSON about `nbytes` long."""
    base, one = len(json.dumps(doc)), len(json.dumps(chained(doc, 1))) - len(json.dumps(doc))
    return max(0, (nbytes - base) // one)


def largest_accepted(doc: dict) -> int:
    """The most chained conditionals the code budget accepts on `doc` (a bisection)."""
    lo, hi = 0, budget.MAX_NODES
    while lo < hi:
        mid = (lo + hi + 1) // 2
        try:
            budget.check(*load_program(chained(doc, mid)))
            lo = mid
        except PipelineError:
            hi = mid - 1
    return lo


@contextlib.contextmanager
def fresh_cache() -> Iterator[None]:
    """Builds inside use an empty cache of built libraries (INA_CACHE): gcc runs every time."""
    saved = os.environ.get("INA_CACHE")
    with tempfile.TemporaryDirectory(prefix="ina-bench-hostile-") as tmp:
        os.environ["INA_CACHE"] = tmp
        try:
            yield
        finally:
            if saved is None:
                del os.environ["INA_CACHE"]
            else:
                os.environ["INA_CACHE"] = saved


def rss_mb(key: str = "VmRSS") -> float:
    """This process's resident memory (VmRSS) or its peak since the last reset_peak (VmHWM)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1]) / 1024
    return 0.0


def reset_peak() -> None:
    Path("/proc/self/clear_refs").write_text("5")  # VmHWM := VmRSS


@dataclass
class Poller:
    """Capabilities and a Read every POLL_S on a thread of its own; the slowest of each."""

    stub: p4runtime_pb2_grpc.P4RuntimeStub
    read: p4runtime_pb2.ReadRequest
    slowest: dict[str, float] = field(default_factory=lambda: {"capabilities": 0.0, "read": 0.0})
    stop: threading.Event = field(default_factory=threading.Event)

    def run(self) -> None:
        calls = {
            "capabilities": lambda: self.stub.Capabilities(
                p4runtime_pb2.CapabilitiesRequest(), timeout=DEADLINE_S
            ),
            "read": lambda: list(self.stub.Read(self.read, timeout=DEADLINE_S)),
        }
        while not self.stop.wait(POLL_S):
            for name, call in calls.items():
                t0 = time.perf_counter()
                call()
                self.slowest[name] = max(self.slowest[name], time.perf_counter() - t0)


class Bench:
    """An in-process P4Runtime server running the small aggregation program, and its primary."""

    def __init__(self, engine: str):
        self.small = compile_file(AGGREGATE_P4, defines={"ELEMS": "8", "POOL_SIZE": "16"})
        self.sw = Switch(engine=engine)
        self.server = serve(P4RuntimeService(self.sw, threading.Lock()), "127.0.0.1:0")
        self.channel = grpc.insecure_channel(
            f"127.0.0.1:{self.server.bound_port}",
            options=[
                ("grpc.max_send_message_length", 64 << 20),
                ("grpc.max_receive_message_length", 64 << 20),
            ],
        )
        self.stub = p4runtime_pb2_grpc.P4RuntimeStub(self.channel)
        # the request goes as bytes serialised beforehand: the client's protobuf costs nothing here
        self.push_raw = self.channel.unary_unary(
            "/p4.v1.P4Runtime/SetForwardingPipelineConfig",
            request_serializer=None,
            response_deserializer=None,
        )
        self.stream_requests: queue.Queue = queue.Queue()  # None ends the stream
        arbitration = p4runtime_pb2.StreamMessageRequest()
        arbitration.arbitration.device_id, arbitration.arbitration.election_id.low = 0, 1
        self.stream_requests.put(arbitration)
        self.stream = self.stub.StreamChannel(iter(self.stream_requests.get, None))
        next(self.stream)  # primary while the stream stays open
        table = Schema(self.small.p4info).table("InaIngress.l2_forward")
        self.read = p4runtime_pb2.ReadRequest(
            device_id=0,
            entities=[
                p4runtime_pb2.Entity(table_entry=p4runtime_pb2.TableEntry(table_id=table.id))
            ],
        )

    def request(self, doc: dict) -> bytes:
        req = Config(device_id=0, action=Config.VERIFY_AND_COMMIT)
        req.election_id.low = 1
        req.config.p4info.CopyFrom(self.small.p4info)
        req.config.p4_device_config = json.dumps(doc).encode()
        return req.SerializeToString()

    def push(self, raw: bytes) -> tuple[str, str, float]:
        """(status code name, message, seconds) of one SetForwardingPipelineConfig."""
        t0 = time.perf_counter()
        try:
            self.push_raw(raw, timeout=DEADLINE_S)
            code, message = "OK", ""
        except grpc.RpcError as err:
            code, message = err.code().name, err.details() or ""
        return code, message, time.perf_counter() - t0

    def case(self, label: str, n: int) -> dict:
        raw = self.request(chained(self.small.bmv2, n))
        small = self.request(self.small.bmv2)
        poller = Poller(self.stub, self.read)
        thread = threading.Thread(target=poller.run, daemon=True)
        before = rss_mb()
        reset_peak()
        thread.start()
        with fresh_cache():
            code, message, answer_s = self.push(raw)
        poller.stop.set()
        thread.join()
        peak, after_push = rss_mb("VmHWM"), rss_mb()
        replaced = self.push(small)[0]
        after_replace = rss_mb()
        row = {
            "case": label,
            "conditionals": n,
            "json_bytes": len(raw),
            "engine": self.sw.engine_name,
            "answer": code,
            "answer_s": round(answer_s, 3),
            **self.apart(raw),
            "peak_rss_mb": round(peak),
            "rss_before_mb": round(before),
            "rss_after_push_mb": round(after_push),
            "rss_after_replace_mb": round(after_replace),
            "replaced_by_small": replaced,
            "slowest_capabilities_s": round(poller.slowest["capabilities"], 3),
            "slowest_read_s": round(poller.slowest["read"], 3),
            "message": message[:200],
        }
        row["meets_targets"] = (
            answer_s <= TARGETS["answer_s"]
            and peak <= TARGETS["peak_rss_mb"]
            and max(poller.slowest.values()) <= TARGETS["slowest_call_s"]
        )
        return row

    def apart(self, raw: bytes) -> dict:
        """The push's steps timed alone in process: protobuf parse, json.loads, Switch.build."""
        t0 = time.perf_counter()
        req = Config.FromString(raw)
        t1 = time.perf_counter()
        program = json.loads(req.config.p4_device_config)
        t2 = time.perf_counter()
        with contextlib.suppress(PipelineError), fresh_cache():
            Switch(engine=self.sw.engine).build(program)
        t3 = time.perf_counter()
        return {
            "parse_s": round(t1 - t0, 3),
            "json_s": round(t2 - t1, 3),
            "build_s": round(t3 - t2, 3),
        }

    def close(self) -> None:
        self.stream_requests.put(None)
        self.channel.close()
        self.server.stop(None)


def bench_hostile(out: Path, engines: tuple[str, ...] = ("auto", "python")) -> list[dict]:
    """Issue 28's pushes (see the module's docstring) on each engine; rows also in out/hostile.json."""
    small = compile_file(AGGREGATE_P4, defines={"ELEMS": "8", "POOL_SIZE": "16"}).bmv2
    cases = [
        (f"{ISSUE_CONDITIONALS:,} conditionals", ISSUE_CONDITIONALS),
        (f"{ISSUE_JSON_BYTES / 1e6:.1f} MB JSON", conditionals_for(small, ISSUE_JSON_BYTES)),
        (
            "largest within the message limit",
            conditionals_for(small, MAX_MESSAGE_BYTES - P4INFO_ROOM),
        ),
        ("largest within the budget", largest_accepted(small)),
    ]
    progress = Progress(len(cases) * len(engines), "hostile")
    rows = []
    for engine in engines:
        bench = Bench(engine)
        try:
            assert bench.push(bench.request(bench.small.bmv2))[0] == "OK", (
                "the small program must load"
            )
            for label, n in cases:
                rows.append(bench.case(label, n))
                progress.step(f"{engine}: {label}")
        finally:
            bench.close()
    write(out, "hostile", rows)
    for r in rows:
        print(
            f"{r['engine']}, {r['case']}: {r['answer']} in {r['answer_s']} s (parse {r['parse_s']} s, json "
            f"{r['json_s']} s, build {r['build_s']} s); peak RSS {r['peak_rss_mb']} MB (before "
            f"{r['rss_before_mb']} MB, after replacement {r['rss_after_replace_mb']} MB); slowest "
            f"Capabilities {r['slowest_capabilities_s']} s, Read {r['slowest_read_s']} s"
        )
    return rows
