"""The aggregation STF cases written once, packets by field name, rendered to the STF text that
`ina stf` and p4c's runner read.

A case is tests/dataplane/cases/<name>.py (cases/elemsN/<name>.py for ELEMS=N, cases/lanesN/ for
LANE_BITS=N) holding `LINES`, the STF lines in order: the set-up through `SWITCH_CONFIG` and `job`
(a job's control-plane lines, as the controller makes them), other set-up lines and checks
written as STF says them, packets through
`update`, `result`, `status`, `packet` and `expect`, which encode them with ina.p4src.protocol's
layout (ina.hosts.packets `datagram`) and ina.sim.frames' Ethernet/IPv4/UDP headers, so lengths
and checksums follow the header. The .stf files beside this module are the rendering, checked in
because p4c's runner reads files; test_stf_render.py fails when one is not current, and
`make stf-render` (this module run as a script) rewrites them.
"""

import argparse
import importlib.util
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ina.hosts.packets import datagram
from ina.p4src.protocol import FLAG_FALLBACK, MSG_RESULT, MSG_STATUS, MSG_UPDATE, UDP_PORT
from ina.sim.frames import udp_headers

HERE = Path(__file__).parent
CASES = HERE / "cases"
# UPDATEs carry a UDP checksum the switch does not check (docs/protocol.md); RESULTs must carry 0
UPDATE_UDP_CHECKSUM = 0x1234
GENERATED = (
    "# generated from tests/dataplane/{source} by `make stf-render`: edit that file, not this one"
)


@dataclass(frozen=True)
class Host:
    """A host on switch port `port`: its MAC, IPv4 address and UDP port as frames carry them."""

    port: int
    mac: str
    ip: str
    udp_port: int = UDP_PORT

    @property
    def address(self) -> tuple[str, str, int]:
        return self.mac, self.ip, self.udp_port


def worker(n: int) -> Host:
    """The dataplane cases' worker host on port n: MAC 02:00:00:00:00:n, IPv4 10.0.0.n."""
    return Host(n, f"02:00:00:00:00:{n:02x}", f"10.0.0.{n}")


SWITCH = Host(
    0, "02:aa:00:00:00:01", "10.0.0.254"
)  # set_switch_addr(mac:0x2aa00000001, ip:0xa0000fe)
W1, W2, W3, W4 = (worker(n) for n in range(1, 5))
# The switch's own addresses: every case's first set-up line
SWITCH_CONFIG = "setdefault switch_config set_switch_addr(mac:0x2aa00000001, ip:0xa0000fe)"


def _hex(address: str) -> str:
    """A MAC or IPv4 address as the STF number p4c's runner reads: 0x2aa00000001, 0xa0000fe."""
    if ":" in address:
        return hex(int(address.replace(":", ""), 16))
    return hex(int.from_bytes(bytes(map(int, address.split(".")))))


@dataclass(frozen=True)
class Parent:
    """A hierarchical job's parent switch as this switch's job_parent entry names it: `host`, this
    switch's rank among its children, and the whole job's workers and quorum."""

    host: Host
    rank: int
    job_workers: int
    job_quorum: int


def job(
    job_id: int,
    workers: Sequence[Host],
    *,
    epoch: int,
    slots: int = 4,
    base: int = 0,
    quorum: int | None = None,
    timeout: int = 0,
    staleness: int = 0,
    ranks: Sequence[int] | None = None,
    first_node: int = 0,
    below: Sequence[int] | None = None,
    parent: Parent | None = None,
    fallback: Host | None = None,
) -> list[str]:
    """A job's control-plane set-up as the controller makes it: its multicast group (256 + job),
    per worker its admission, its RESULT rewrite (rid 1 + job * 32 + rank) and its group member,
    its parent switch or host fallback server if given, then its `jobs` entry. Workers have ranks
    0, 1, ... unless `ranks` says; with `below`, the members are child switches holding that many
    workers each (admit_switch); quorum is every member unless given; `first_node` is the first
    multicast node handle (the nodes a case's earlier jobs made)."""
    mgid = 256 + job_id
    lines = [f"mc_mgrp_create {mgid}"]
    ranks = range(len(workers)) if ranks is None else ranks
    admits = (
        ["admit()"] * len(workers)
        if below is None
        else [f"admit_switch(workers:{n})" for n in below]
    )
    for node, (host, rank, admit) in enumerate(
        zip(workers, ranks, admits, strict=True), first_node
    ):
        mac, ip, rid = _hex(host.mac), _hex(host.ip), 1 + job_id * 32 + rank
        lines += [
            f"add admission sm.ingress_port:{host.port} hdr.ethernet.src_addr:{mac} "
            f"hdr.ipv4.src_addr:{ip} hdr.agg.job_id:{job_id} hdr.agg.rank:{rank} {admit}",
            f"add result_rewrite sm.egress_rid:{rid} "
            f"to_worker(mac:{mac}, ip:{ip}, udp_port:{host.udp_port:#x})",
            f"mc_node_create {rid} {host.port}",
            f"mc_node_associate {mgid} {node}",
        ]
    if parent is not None:
        up = parent.host
        lines.append(
            f"add job_parent hdr.agg.job_id:{job_id} set_parent(port:{up.port}, mac:{_hex(up.mac)}, "
            f"ip:{_hex(up.ip)}, rank:{parent.rank}, job_workers:{parent.job_workers}, "
            f"job_quorum:{parent.job_quorum})"
        )
    if fallback is not None:
        lines.append(
            f"add job_fallback hdr.agg.job_id:{job_id} set_fallback(port:{fallback.port}, "
            f"mac:{_hex(fallback.mac)}, ip:{_hex(fallback.ip)}, udp_port:{fallback.udp_port})"
        )
    quorum = len(workers) if quorum is None else quorum
    return [
        *lines,
        f"add jobs hdr.agg.job_id:{job_id} set_job(base:{base}, num_slots:{slots}, "
        f"num_workers:{len(workers)}, mgid:{mgid}, epoch:{epoch:#x}, quorum:{quorum}, "
        f"timeout:{timeout}, staleness:{staleness})",
    ]


# The switch under test's parent switch in the hierarchical cases, on port 5 (its job_parent entry)
PARENT = Host(5, "02:bb:00:00:00:01", "10.0.1.254")
# A leaf of a hierarchical job: job 1 (epoch 0x5eed0001, 4 slots) with workers W1 and W2 (ranks 0,
# 1) of the job's 4, its partial sums going up to PARENT as rank 1.
LEAF_SETUP = [
    SWITCH_CONFIG,
    *job(1, [W1, W2], epoch=0x5EED0001, parent=Parent(PARENT, rank=1, job_workers=4, job_quorum=4)),
]
# Best effort: jobs 1 (W1, W2) and 2 (W3, W4), epochs SHARED_EPOCHS, both on slots 0-3 (a shared,
# hashed range), each with the host fallback server FALLBACK on port 5 (its job_fallback entry).
FALLBACK = Host(5, "02:cc:00:00:00:05", "10.0.0.100", 40000)
SHARED_EPOCHS = (0x5EED0001, 0x5EED0002)
SHARED_SETUP = [
    SWITCH_CONFIG,
    *job(1, [W1, W2], epoch=SHARED_EPOCHS[0], fallback=FALLBACK),
    *job(2, [W3, W4], epoch=SHARED_EPOCHS[1], fallback=FALLBACK, first_node=2),
]


def frame(src: Host, dst: Host, payload: bytes, udp_checksum: int = 0) -> bytes:
    """A whole Ethernet/IPv4/UDP frame carrying `payload` from `src` to `dst`."""
    return udp_headers(src.address, dst.address, len(payload), udp_checksum) + payload


def packet(port: int, data: bytes) -> str:
    """The STF line sending `data` into switch port `port`."""
    return f"packet {port} {data.hex()}"


def expect(port: int, data: bytes) -> str:
    """The STF line expecting exactly `data` (`$`: no trailing bytes) out of switch port `port`."""
    return f"expect {port} {data.hex()}$"


def update(
    sender: Host, *, epoch: int, values: Sequence[int], port: int | None = None, **fields: int
) -> str:
    """`sender`'s UPDATE to the switch, into its own port unless `port` says another; `fields` are
    ina.hosts.packets.datagram's (rank, job, index, round_, exponent, count, bitmap)."""
    payload = datagram(MSG_UPDATE, epoch, values, **fields)
    return packet(
        sender.port if port is None else port, frame(sender, SWITCH, payload, UPDATE_UDP_CHECKSUM)
    )


def result(
    receiver: Host, *, epoch: int, values: Sequence[int], msg_type: int = MSG_RESULT, **fields: int
) -> str:
    """The switch's RESULT (or `msg_type`) to `receiver`, expected out of its port."""
    return expect(
        receiver.port, frame(SWITCH, receiver, datagram(msg_type, epoch, values, **fields))
    )


def upstream(parent: Host, *, epoch: int, values: Sequence[int], **fields: int) -> str:
    """The switch's partial-sum UPDATE to its parent switch, expected out of the parent's port."""
    return expect(parent.port, frame(SWITCH, parent, datagram(MSG_UPDATE, epoch, values, **fields)))


def from_parent(
    parent: Host,
    *,
    epoch: int,
    values: Sequence[int],
    port: int | None = None,
    msg_type: int = MSG_RESULT,
    **fields: int,
) -> str:
    """`parent`'s RESULT (or `msg_type`) to the switch, into the parent's port unless `port` says
    another."""
    payload = datagram(msg_type, epoch, values, **fields)
    return packet(parent.port if port is None else port, frame(parent, SWITCH, payload))


def to_host(sender: Host, *, epoch: int, values: Sequence[int], **fields: int) -> str:
    """`sender`'s FALLBACK-flagged UPDATE as the switch forwards it to FALLBACK: from the switch's
    MAC but the sender's IPv4 address and UDP port, so the server answers the sender."""
    payload = datagram(MSG_UPDATE, epoch, values, flags=FLAG_FALLBACK, **fields)
    source = Host(sender.port, SWITCH.mac, sender.ip, sender.udp_port)
    return expect(FALLBACK.port, frame(source, FALLBACK, payload))


def status(receiver: Host, *, epoch: int, values: Sequence[int], **fields: int) -> str:
    """The switch's STATUS to `receiver`, expected out of its port."""
    return result(receiver, epoch=epoch, values=values, msg_type=MSG_STATUS, **fields)


def notice(receiver: Host, *, epoch: int, values: Sequence[int], **fields: int) -> str:
    """The switch's FALLBACK STATUS to `receiver` (count and bitmap 0): the use is the host
    fallback server's, since another job holds the slot/set."""
    return status(receiver, epoch=epoch, values=values, flags=FLAG_FALLBACK, **fields)


def total(*vectors: Sequence[int]) -> list[int]:
    """The element-wise sum the switch computes (datagram wraps it to int32)."""
    return [sum(column) for column in zip(*vectors, strict=True)]


def stf_files() -> list[tuple[Path, int]]:
    """Every STF file of tests/dataplane with the ELEMS it runs at: 8 directly here, N in elemsN/
    (POOL_SIZE 16 for all)."""
    return [(stf, 8) for stf in sorted(HERE.glob("*.stf"))] + [
        (stf, int(folder.name.removeprefix("elems")))
        for folder in sorted(HERE.glob("elems*"), key=lambda f: int(f.name.removeprefix("elems")))
        for stf in sorted(folder.glob("*.stf"))
    ]


def lane_stf_files() -> list[tuple[Path, int]]:
    """Every narrow-lane STF file with the LANE_BITS it runs at: N in lanesN/ (ELEMS 8, POOL_SIZE
    16 as above)."""
    return [
        (stf, int(folder.name.removeprefix("lanes")))
        for folder in sorted(HERE.glob("lanes*"), key=lambda f: -int(f.name.removeprefix("lanes")))
        for stf in sorted(folder.glob("*.stf"))
    ]


def render(lines: Iterable[str], source: str) -> str:
    """The STF text of a case's lines, under the line naming the description it comes from."""
    return "\n".join([GENERATED.format(source=source), *lines]) + "\n"


def described() -> dict[Path, Path]:
    """Every case description and the STF file it renders to (cases/x/y.py -> x/y.stf)."""
    return {
        case: HERE / case.relative_to(CASES).with_suffix(".stf")
        for case in sorted(CASES.rglob("*.py"))
    }


def rendered(case: Path) -> str:
    """The STF text of one case description."""
    spec = importlib.util.spec_from_file_location(f"stf_case_{case.stem}", case)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return render(module.LINES, case.relative_to(HERE).as_posix())


def main(argv: list[str] | None = None) -> int:
    """Rewrite every rendered STF file that is not current; `--check` only names them (exit 1)."""
    parser = argparse.ArgumentParser(
        description="Render tests/dataplane/cases/ to the STF files beside them."
    )
    parser.add_argument(
        "--check", action="store_true", help="write nothing; exit 1 when a file is stale"
    )
    check = parser.parse_args(argv).check
    stale = 0
    for case, stf in described().items():
        text = rendered(case)
        if not stf.exists() or stf.read_text() != text:
            stale += 1
            print(f"{'stale' if check else 'rendered'}: {stf.relative_to(HERE)}")
            if not check:
                stf.parent.mkdir(exist_ok=True)
                stf.write_text(text)
    return 1 if check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
