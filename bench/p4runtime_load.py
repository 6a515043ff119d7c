"""`ina bench p4runtime`: what one big P4Runtime message costs the switch's server, and what the
real ones weigh.

Load: a client that never arbitrated sends one big WriteRequest to `ina switch` running in its own
process, while PROBES other clients ask for Capabilities (the first with the Write, then one every
PROBE_SPACING). Measured: the time to the Write's status and its code, the server's peak resident
memory (VmHWM: a fresh server per request), the probes answered within PROBE_DEADLINE and the
slowest answer. The requests: the 12.6 MB of issue 28 and the largest the server accepts
(MAX_MESSAGE_BYTES at most). In this process: the time protobuf takes to parse such a request
whole, and without its updates (all the server parses before it knows the client may not write).

Sizes: the largest messages the aggregation program needs against MAX_MESSAGE_BYTES: its pipeline
(ELEMS=64, the largest POOL_SIZE; as the controller sends it, as `ina compile` writes it, and
p4c-bm2-ss's JSON when p4c is on PATH), the controller's biggest Write batch and a full Read page.
"""

import json
import shutil
import socket
import subprocess
import sys
import time
from concurrent import futures
from pathlib import Path

import grpc
from google.protobuf.internal import api_implementation

from ina.bench.results import Progress, summarise, write
from ina.controller.client import MAX_UPDATES_PER_WRITE, SwitchConnection
from ina.p4rt import entities as p4e
from ina.p4rt.proto import MAX_MESSAGE_BYTES, WriteRequestHead, p4runtime_pb2
from ina.p4rt.schema import Schema
from ina.p4src.protocol import MAX_JOBS, MAX_POOL_SIZE, MAX_PORT, MAX_WORKERS
from ina.switch.p4runtime.server import READ_CHUNK

PROBES = 25
PROBE_SPACING = 0.02  # seconds between the starts of two probes, the first with the Write
PROBE_DEADLINE = 10.0  # seconds; a probe not answered by then counts as unanswered
WRITE_DEADLINE = 300.0
ISSUE_WRITE_BYTES = 12_600_000  # the WriteRequest of issue 28
WRITE = "/p4.v1.P4Runtime/Write"
CAPABILITIES = "/p4.v1.P4Runtime/Capabilities"


def _program():
    """aggregate.p4 at its largest: ELEMS=64, the largest POOL_SIZE."""
    from ina.compiler import compile_file
    from ina.p4src import AGGREGATE_P4

    return compile_file(AGGREGATE_P4, defines={"ELEMS": "64", "POOL_SIZE": str(MAX_POOL_SIZE)})


def _widest_updates(schema: Schema) -> dict[str, p4runtime_pb2.Update]:
    """Each kind of update the controller sends, with every value at its widest."""
    mac, ip, job, rank = "ff:ff:ff:ff:ff:ff", "255.255.255.255", MAX_JOBS - 1, MAX_WORKERS - 1
    entries = {
        "admission": p4e.TableEntry.parse(
            schema,
            "InaIngress.admission",
            {
                "sm.ingress_port": MAX_PORT,
                "hdr.ethernet.src_addr": mac,
                "hdr.ipv4.src_addr": ip,
                "hdr.agg.job_id": job,
                "hdr.agg.rank": rank,
            },
            "InaIngress.admit",
        ),
        "result_rewrite": p4e.TableEntry.parse(
            schema,
            "InaEgress.result_rewrite",
            {"sm.egress_rid": 0xFFFF},
            "InaEgress.to_worker",
            {"mac": mac, "ip": ip, "udp_port": 0xFFFF},
        ),
        "jobs": p4e.TableEntry.parse(
            schema,
            "InaIngress.jobs",
            {"hdr.agg.job_id": job},
            "InaIngress.set_job",
            {
                "base": 0xFFFF,
                "num_slots": 0xFFFF,
                "num_workers": MAX_WORKERS,
                "mgid": 0xFFFF,
                "epoch": 0xFFFFFFFF,
                "quorum": MAX_WORKERS,
                "timeout": 0xFFFFFFFF,
                "staleness": 0xFF,
            },
        ),
        "multicast group": p4e.MulticastGroupEntry(
            0xFFFF, (p4e.Replica(MAX_PORT, 0xFFFF),) * MAX_WORKERS
        ),
    }
    return {
        kind: p4runtime_pb2.Update(
            type=p4runtime_pb2.Update.INSERT, entity=p4e.to_entity(item, schema)
        )
        for kind, item in entries.items()
    }


def message_sizes(program, out: Path) -> list[dict]:
    """The largest messages the aggregation program needs, in bytes, and their share of the limit."""
    schema = Schema(program.p4info)
    action = p4runtime_pb2.SetForwardingPipelineConfigRequest.VERIFY_AND_COMMIT
    jsons = {
        "pipeline, as the controller sends it": json.dumps(program.bmv2),
        "pipeline, as `ina compile` writes it (p4runtime-shell sends the file)": json.dumps(
            program.bmv2, indent=2
        )
        + "\n",
    }
    if shutil.which("p4c-bm2-ss"):
        from ina.p4src import AGGREGATE_P4

        p4c_json = out / "p4c-aggregate.json"
        subprocess.run(
            [
                "p4c-bm2-ss",
                "-DELEMS=64",
                f"-DPOOL_SIZE={MAX_POOL_SIZE}",
                "-o",
                str(p4c_json),
                str(AGGREGATE_P4),
            ],
            check=True,
            capture_output=True,
        )
        jsons["pipeline, p4c-bm2-ss's JSON"] = p4c_json.read_text()
    rows = []
    for what, text in jsons.items():
        req = p4runtime_pb2.SetForwardingPipelineConfigRequest(device_id=0, action=action)
        req.election_id.low = 1
        req.config.p4info.CopyFrom(program.p4info)
        req.config.p4_device_config = text.encode()
        rows.append({"message": what, "bytes": req.ByteSize()})
    updates = _widest_updates(schema)
    kind, update = max(updates.items(), key=lambda item: item[1].ByteSize())
    batch = p4runtime_pb2.WriteRequest(device_id=0, updates=[update] * MAX_UPDATES_PER_WRITE)
    batch.election_id.low = 1
    rows.append(
        {
            "message": f"Write of {MAX_UPDATES_PER_WRITE} updates ({kind}, the widest)",
            "bytes": batch.ByteSize(),
        }
    )
    page = p4runtime_pb2.ReadResponse(entities=[update.entity] * READ_CHUNK)
    rows.append(
        {"message": f"Read page of {READ_CHUNK} entities ({kind})", "bytes": page.ByteSize()}
    )
    for row in rows:
        row["share_of_limit"] = round(row["bytes"] / MAX_MESSAGE_BYTES, 4)
    return rows


def big_write(schema: Schema, size: int) -> bytes:
    """A WriteRequest of about `size` bytes (not more): election id 1, admission inserts. Serialized
    messages concatenated parse as one with the repeated fields joined, so it is built in pieces."""
    head = p4runtime_pb2.WriteRequest(device_id=0)
    head.election_id.low = 1
    one = p4runtime_pb2.WriteRequest(
        updates=[_widest_updates(schema)["admission"]]
    ).SerializeToString()
    return head.SerializeToString() + one * ((size - head.ByteSize()) // len(one))


def parse_seconds(data: bytes, reps: int) -> dict:
    """protobuf's parse of `data` as a WriteRequest, whole and its head alone."""
    whole, head = [], []
    for _ in range(reps):
        t0 = time.perf_counter()
        p4runtime_pb2.WriteRequest.FromString(data)
        whole.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        WriteRequestHead.FromString(data)
        head.append(time.perf_counter() - t0)
    return {"parse_whole_s": summarise(whole), "parse_head_s": summarise(head)}


def _memory_kib(pid: int) -> dict[str, int]:
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            fields[key] = int(value.split()[0])
    return fields


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _write(address: str, data: bytes) -> tuple[str, float]:
    """The status code of a Write of exactly `data` (no serializer: the bytes go as they are), and
    the seconds to it."""
    with grpc.insecure_channel(address, options=[("grpc.max_send_message_length", -1)]) as channel:
        t0 = time.perf_counter()
        try:
            channel.unary_unary(WRITE)(data, timeout=WRITE_DEADLINE)
            code = "OK"
        except grpc.RpcError as err:
            code = err.code().name
        return code, time.perf_counter() - t0


def _probe(address: str, delay: float) -> float | None:
    """Seconds to a Capabilities answer on a connection of its own, asked `delay` s from now; None
    when none came within PROBE_DEADLINE."""
    time.sleep(delay)
    with grpc.insecure_channel(address) as channel:
        t0 = time.perf_counter()
        try:
            channel.unary_unary(CAPABILITIES)(
                p4runtime_pb2.CapabilitiesRequest().SerializeToString(), timeout=PROBE_DEADLINE
            )
        except grpc.RpcError:
            return None
        return time.perf_counter() - t0


def load(data: bytes) -> dict:
    """One Write of `data` from a client with no stream to a fresh `ina switch`, and PROBES probes
    starting with it, PROBE_SPACING apart."""
    address = f"127.0.0.1:{_free_port()}"
    server = subprocess.Popen(
        [sys.executable, "-m", "ina", "switch", "--no-p4", "--grpc-server-addr", address],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        SwitchConnection(address, election_id=None, timeout=30).close()  # the server answers
        before = _memory_kib(server.pid)
        with futures.ThreadPoolExecutor(1 + PROBES) as pool:
            write = pool.submit(_write, address, data)
            probes = [pool.submit(_probe, address, i * PROBE_SPACING) for i in range(PROBES)]
            code, seconds = write.result()
            answered = sorted(t for t in (p.result() for p in probes) if t is not None)
        after = _memory_kib(server.pid)
    finally:
        server.terminate()
        server.wait()
    return {
        "write_code": code,
        "write_seconds": seconds,
        "server_rss_before_mib": before["VmRSS"] / 1024,
        "server_peak_rss_mib": after["VmHWM"] / 1024,
        "probes_answered": len(answered),
        "probe_seconds_max": answered[-1] if answered else None,
    }


def bench_p4runtime(out: Path, reps: int) -> list[dict]:
    """Message sizes, then load and parse time for the issue's Write and the largest accepted one."""
    program = _program()
    sizes = message_sizes(program, out)
    for row in sizes:
        print(
            f"{row['message']}: {row['bytes']:,} bytes ({row['share_of_limit']:.1%} of {MAX_MESSAGE_BYTES:,})"
        )
    schema = Schema(program.p4info)
    rows = [{"what": "size", **row} for row in sizes]
    requests = {
        "issue 28's Write": big_write(schema, ISSUE_WRITE_BYTES),
        "the largest Write accepted": big_write(schema, MAX_MESSAGE_BYTES),
    }
    progress = Progress(len(requests) * reps, "p4runtime")
    for what, data in requests.items():
        runs = []
        for _ in range(reps):
            runs.append(load(data))
            progress.step(what)
        row = {
            "what": what,
            "bytes": len(data),
            "updates": len(p4runtime_pb2.WriteRequest.FromString(data).updates),
            "protobuf": api_implementation.Type(),
            "write_codes": sorted({r["write_code"] for r in runs}),
            **parse_seconds(data, reps),
        }
        for key in (
            "write_seconds",
            "server_rss_before_mib",
            "server_peak_rss_mib",
            "probes_answered",
            "probe_seconds_max",
        ):
            values = [r[key] for r in runs if r[key] is not None]
            if values:
                row[key] = summarise(values)
        rows.append(row)
        print(
            f"{what}: {len(data):,} bytes, {row['updates']:,} updates -> {'/'.join(row['write_codes'])} in "
            f"{row['write_seconds']['median']:.3f} s, server peak RSS {row['server_peak_rss_mib']['median']:.0f} MiB, "
            f"{row['probes_answered']['median']:.0f}/{PROBES} probes answered; parse "
            f"{row['parse_whole_s']['median'] * 1000:.1f} ms whole, {row['parse_head_s']['median'] * 1000:.3f} ms head "
            f"(protobuf {row['protobuf']})"
        )
    write(out, "p4runtime", rows)
    return rows
