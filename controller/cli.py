"""`ina ctl`: program and inspect a switch running ina's aggregation program over P4Runtime.

Commands that only read connect without a stream (no election id), so they neither need nor
change the switch's primary. Every call has a deadline (--timeout): a switch that stops
answering is an error naming its address, never a hang.
"""

import argparse
import json
import os
import sys
from dataclasses import asdict
from typing import NoReturn

from ina.args import (
    float_range,
    host_port,
    int_range,
    ipv4_address,
    parsed_by,
    probability,
    udp_port,
)
from ina.controller.aggregation import Aggregation, BurstLoss, Fallback, Worker
from ina.controller.allocators import ALLOCATORS, FIRST_FIT, Range, allocator
from ina.controller.client import ControllerError, SwitchConnection
from ina.controller.pool import admit_preempting, compact, held, move_job, pool_map
from ina.controller.shell import shell_argv, shell_python, shell_venv
from ina.files import FileError, read_bmv2_json, read_p4info
from ina.p4rt import codec
from ina.p4src.protocol import (
    EPOCH_MAX,
    MAX_JOBS,
    MAX_PORT,
    MAX_SLOTS,
    MAX_WORKERS,
    SYNC,
    UDP_PORT,
    Policy,
)
from ina.topologies.show_tree import job_dict, reader, render, tree_report
from ina.topologies.topo import Topology, TopologyError, is_star, load

MAX_TIMEOUT_S = (
    3600.0  # a switch silent for an hour is dead (and gRPC deadlines overflow near 1e10 s)
)
READ_ONLY = {
    "show-pipeline",
    "table-dump",
    "show-jobs",
    "show-stats",
    "show-slot",
    "show-forwarding",
    "show-drops",
    "show-pool",
    "show-tree",
}


def _worker(text: str) -> Worker:
    """RANK:PORT:MAC:IP[:UDP]; the MAC has colons too, so split from both ends."""
    parts = text.split(":")
    if len(parts) not in (9, 10):
        raise argparse.ArgumentTypeError(
            f"'{text}' is not RANK:PORT:MAC:IP[:UDP_PORT] (e.g. 0:1:02:00:00:00:00:01:10.0.0.1)"
        )
    mac = ":".join(parts[2:8])
    try:
        codec.parse_mac(mac)
    except ValueError as err:
        raise argparse.ArgumentTypeError(f"worker {text}: {err}") from None
    return Worker(
        int_range(0, MAX_WORKERS - 1)(parts[0]),
        int_range(0, MAX_PORT)(parts[1]),
        mac,
        ipv4_address(parts[8]),
        udp_port(parts[9]) if len(parts) == 10 else UDP_PORT,
    )


def _fallback(text: str) -> Fallback:
    """PORT:MAC:IP[:UDP]: a best-effort job's host fallback server (docs/protocol.md, "Best effort
    and the host fallback"); the MAC has colons too, so split from both ends."""
    parts = text.split(":")
    if len(parts) not in (8, 9):
        raise argparse.ArgumentTypeError(
            f"'{text}' is not PORT:MAC:IP[:UDP_PORT] (e.g. 5:02:00:00:00:00:05:10.0.0.5:49120)"
        )
    mac = ":".join(parts[1:7])
    try:
        codec.parse_mac(mac)
    except ValueError as err:
        raise argparse.ArgumentTypeError(f"fallback {text}: {err}") from None
    return Fallback(
        int_range(0, MAX_PORT)(parts[0]),
        mac,
        ipv4_address(parts[7]),
        udp_port(parts[8]) if len(parts) == 9 else UDP_PORT,
    )


def _job_arguments(p: argparse.ArgumentParser, **slots) -> None:
    """A new job's arguments, add-job's and preempt's (`slots`: how each takes --slots)."""
    p.add_argument("job", type=int_range(0, MAX_JOBS - 1), help="the job's id")
    p.add_argument(
        "--worker",
        type=_worker,
        action="append",
        required=True,
        metavar="RANK:PORT:MAC:IP",
        help="a worker: its rank, the switch port it is on, its MAC and IP; one per rank",
    )
    p.add_argument("--slots", type=int_range(1, MAX_SLOTS), **slots)
    p.add_argument(
        "--epoch", type=int_range(1, EPOCH_MAX), help="the run's token (default: a random one)"
    )
    p.add_argument(
        "--policy",
        type=parsed_by(Policy.parse),
        default=SYNC,
        metavar="POLICY",
        help="completion policy: sync (default), or quorum:K, timeout:T[us|ms|s], stale:S "
        "joined by commas (docs/protocol.md)",
    )
    p.add_argument(
        "--fallback",
        type=_fallback,
        metavar="PORT:MAC:IP[:UDP]",
        help="best effort: the job's host fallback server (its switch port, MAC, IP, UDP port) "
        "sums the chunks whose slots another job holds, so the job may get fewer slots or share "
        "them where the pool is full (sync policy only; docs/protocol.md)",
    )


def _mac(text: str) -> str:
    try:
        codec.parse_mac(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None
    return text


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="ina ctl", description="Program and inspect an ina switch over P4Runtime."
    )
    p.add_argument(
        "--grpc-addr",
        type=host_port(1),
        default="127.0.0.1:9559",
        metavar="HOST:PORT",
        help="the switch's P4Runtime server (default: %(default)s)",
    )
    p.add_argument("--device-id", type=int_range(0, 2**64 - 1), default=0)
    p.add_argument(
        "--election-id",
        type=int_range(0, 2**128 - 1),
        default=1,
        help="for commands that write; the highest the switch has seen wins (default: %(default)s)",
    )
    p.add_argument(
        "--timeout",
        type=float_range(0.0, MAX_TIMEOUT_S, lo_open=True),
        default=10.0,
        metavar="SECONDS",
        help="bound on connecting and on every call (default: %(default)s)",
    )
    tls = p.add_argument_group("TLS (a switch started with --grpc-server-ssl)")
    tls.add_argument("--ssl", action="store_true", help="connect over TLS")
    tls.add_argument(
        "--ca-cert",
        metavar="FILE",
        help="PEM CA certificate to verify the switch (default: system CAs)",
    )
    tls.add_argument(
        "--cert",
        metavar="FILE",
        help="PEM client certificate (switch with --grpc-server-with-client-auth)",
    )
    tls.add_argument("--key", metavar="FILE", help="PEM key of --cert")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument(
        "--allocator",
        type=parsed_by(allocator),
        default=FIRST_FIT,
        metavar="POLICY",
        help=f"where add-job puts a job's slots: {', '.join(ALLOCATORS)} or partition:N "
        "(default: first-fit; docs/protocol.md, 'Shared switch memory')",
    )
    sub = p.add_subparsers(dest="command", required=True)
    sub.add_parser("show-pipeline", help="tables, registers and counters of the loaded program")
    sp = sub.add_parser("set-pipeline", help="push a BMv2 JSON and its P4Info")
    sp.add_argument(
        "--bmv2-json",
        required=True,
        metavar="FILE",
        help="the program, as ina compile or p4c-bm2-ss writes it",
    )
    sp.add_argument(
        "--p4info",
        required=True,
        metavar="FILE",
        help="in the format its suffix names, as ina compile writes it: .json, .bin, else text",
    )
    sa = sub.add_parser(
        "set-switch-addr", help="the switch's own MAC and IP (ARP, ping, aggregation)"
    )
    sa.add_argument("mac", type=_mac, help="e.g. 02:00:00:00:01:00")
    sa.add_argument("ip", type=ipv4_address, help="e.g. 10.0.255.254")
    aj = sub.add_parser("add-job", help="install a job: admission, job entry, multicast group")
    _job_arguments(
        aj,
        default=256,
        help="slots of the switch's pool for the job (its workers' window; default: %(default)s)",
    )
    pe = sub.add_parser(
        "preempt",
        help="admit a job into a full pool: a drained lower-priority job gives it slots (shrunk "
        "by a move, or, with a host fallback server, all of them), then the job is added",
        description="Admit a job of higher priority into a full pool (docs/protocol.md, "
        "'Preemption'): of the --victim jobs (drained: their iteration in flight ended), the one "
        "with the shortest range longer than --slots gives its top --slots slots and keeps the "
        "rest with a new epoch; if none is longer, one with a host fallback server holding exactly "
        "--slots gives them all and leaves the switch, to go on through its server. The job is "
        "then added on those slots; should that fail, the victim is put back as it was.",
    )
    _job_arguments(pe, required=True, help="slots the job needs (its workers' window)")
    pe.add_argument(
        "--victim",
        type=int_range(0, MAX_JOBS - 1),
        action="append",
        required=True,
        metavar="JOB",
        help="a running job of lower priority that may give slots; one per job",
    )
    pj = sub.add_parser("set-policy", help="change a live job's completion policy")
    pj.add_argument("job", type=int_range(0, MAX_JOBS - 1), help="the job's id")
    pj.add_argument(
        "policy", type=parsed_by(Policy.parse), metavar="POLICY", help="as add-job --policy"
    )
    rj = sub.add_parser(
        "remove-job", help="uninstall a job: its entries, multicast group and counters"
    )
    rj.add_argument("job", type=int_range(0, MAX_JOBS - 1), help="the job's id")
    xj = sub.add_parser(
        "reset-job", help="a new run of a job: a new epoch, so every slot is empty for it"
    )
    xj.add_argument("job", type=int_range(0, MAX_JOBS - 1), help="the job's id")
    xj.add_argument(
        "--epoch", type=int_range(1, EPOCH_MAX), help="the new run's token (default: a random one)"
    )
    mv = sub.add_parser(
        "move-job",
        help="put a drained job on another range (or resize it in place): remove + add, new epoch",
    )
    mv.add_argument("job", type=int_range(0, MAX_JOBS - 1), help="the job's id")
    mv.add_argument("--base", type=int_range(0, MAX_SLOTS - 1), help="first slot (default: as now)")
    mv.add_argument("--slots", type=int_range(1, MAX_SLOTS), help="slots (default: as now)")
    sub.add_parser(
        "compact", help="move drained jobs down so the free slots are one range (new epochs)"
    )
    sub.add_parser(
        "show-pool", help="the slot pool: which job holds which range, free ranges, fragmentation"
    )
    sub.add_parser("show-jobs", help="every job: slots, epoch, policy and workers")
    sub.add_parser("show-stats", help="the switch's non-zero counters, per job and per port")
    ss = sub.add_parser(
        "show-slot", help="one slot's registers: bitmap, count, exponent, epoch and the sums"
    )
    ss.add_argument("job", type=int_range(0, MAX_JOBS - 1), help="the job's id")
    ss.add_argument(
        "index", type=int_range(0, MAX_SLOTS - 1), help="the slot, relative to the job's first"
    )
    ss.add_argument(
        "--set",
        type=int_range(0, 1),
        default=0,
        dest="pool_set",
        help="which of the slot's two sets (round & 1; default: %(default)s)",
    )
    sd = sub.add_parser("set-drop", help="emulate loss inside the switch on one port")
    sd.add_argument("port", type=int_range(0, MAX_PORT), help="the switch port")
    for direction, what in (("ingress", "received on"), ("egress", "sent out of")):
        model = sd.add_mutually_exclusive_group()
        model.add_argument(
            f"--{direction}",
            type=probability,
            metavar="P",
            help=f"uniform loss probability of packets {what} the port",
        )
        model.add_argument(
            f"--{direction}-burst",
            type=BurstLoss.parse,
            metavar="GOOD,BAD,P_GB,P_BG",
            help=f"bursty (Gilbert-Elliott) loss of packets {what} the port: loss in the "
            "good and bad states, then the chance per packet of going good->bad, bad->good",
        )
    sub.add_parser("show-drops", help="the loss each port and direction emulates (set-drop)")
    sub.add_parser("show-forwarding", help="the L2 forwarding entries: MAC -> port")
    td = sub.add_parser("table-dump", help="every entry of one table")
    td.add_argument("table", help="its name, e.g. InaIngress.jobs (show-pipeline lists them)")
    sub.add_parser("shell", help="p4runtime-shell connected to this switch")
    st = sub.add_parser(
        "show-tree",
        help="a job's aggregation tree across a topology's switches: per switch its parent and "
        "children, and what each switch holds for the job, read back where it answers (at the "
        "topology's P4Runtime addresses, not --grpc-addr)",
    )
    st.add_argument("job", type=int_range(0, MAX_JOBS - 1), help="the job's id in the topology")
    st.add_argument(
        "--topo",
        default="star",
        help="the topology the switches were programmed from, as ina run takes it: a file, a "
        "built-in name (star, leafspine, leafspine_hier, fattree4), fattree:K or leafspine:LxH,S "
        "with an optional :hierarchical (default: %(default)s)",
    )
    st.add_argument(
        "--workers",
        type=int_range(1, MAX_WORKERS * MAX_JOBS),
        default=4,
        help="workers of the star topology, as ina run --workers (default: %(default)s)",
    )
    st.add_argument(
        "--jobs", type=int_range(1, MAX_JOBS), help="the workers dealt into jobs, as ina run --jobs"
    )
    st.add_argument(
        "--no-read-back",
        action="store_true",
        help="the topology's tree alone: connect to no switch",
    )
    return p


def _print_table(rows: list[list], header: list[str]) -> None:
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows, strict=False)]
    for row in [header, *rows]:
        print("  ".join(str(x).ljust(w) for x, w in zip(row, widths, strict=False)))


def run(args) -> object:
    if args.command == "shell":
        return _shell(args)
    if args.command == "show-tree":
        return _show_tree(args)
    election_id = None if args.command in READ_ONLY else args.election_id
    if args.command == "set-pipeline":  # the files first: a bad one needs no switch to be refused
        pipeline = read_bmv2_json(args.bmv2_json), read_p4info(args.p4info)
    with SwitchConnection(
        args.grpc_addr,
        args.device_id,
        election_id,
        args.timeout,
        deadline=args.timeout,
        ssl=args.ssl,
        ca_cert=args.ca_cert,
        cert=args.cert,
        key=args.key,
    ) as conn:
        if args.command == "set-pipeline":
            conn.set_pipeline(*pipeline)
            return {"ok": True}
        schema = conn.adopt_pipeline()
        if args.command == "show-pipeline":
            return {
                kind: sorted(x.name for x in schema.all(kind))
                for kind in ("table", "register", "counter")
            }
        if args.command == "table-dump":
            return [asdict(e) for e in conn.read_table(args.table)]
        agg = Aggregation(conn, args.allocator)
        if args.command == "set-switch-addr":
            agg.set_switch_address(args.mac, args.ip)
            return {"ok": True}
        if args.command == "add-job":
            return job_dict(
                agg.add_job(
                    args.job,
                    args.worker,
                    args.slots,
                    args.epoch,
                    args.policy,
                    fallback=args.fallback,
                )
            )
        if args.command == "preempt":
            done, job = admit_preempting(
                agg,
                args.victim,
                args.job,
                args.worker,
                args.slots,
                args.epoch,
                args.policy,
                args.fallback,
            )
            return {
                "victim": job_dict(done.victim),
                "on_host": done.on_host,
                "freed": {"base": done.freed.base, "slots": done.freed.size},
                "job": job_dict(job),
            }
        if args.command == "set-policy":
            return job_dict(agg.set_policy(args.job, args.policy))
        if args.command == "reset-job":
            return job_dict(agg.reset_job(args.job, args.epoch))
        if args.command == "remove-job":
            agg.remove_job(args.job)
            return {"ok": True}
        if args.command == "show-jobs":
            return [job_dict(j) for j in agg.jobs()]
        if args.command == "show-pool":
            return pool_map(held(agg.jobs()), agg.pool_size)
        if args.command == "move-job":
            now = agg.job(args.job)
            target = Range(
                now.base if args.base is None else args.base,
                now.num_slots if args.slots is None else args.slots,
            )
            return job_dict(move_job(agg, args.job, target))
        if args.command == "compact":
            return [job_dict(j) for j in compact(agg).values()]
        if args.command == "show-stats":
            return agg.stats()
        if args.command == "show-slot":
            return asdict(agg.slot(args.job, args.index, args.pool_set))
        if args.command == "set-drop":
            agg.set_drop(
                args.port,
                args.ingress if args.ingress_burst is None else args.ingress_burst,
                args.egress if args.egress_burst is None else args.egress_burst,
            )
            return {"ok": True}
        if args.command == "show-drops":
            return [
                {
                    "port": port,
                    "direction": direction,
                    **({"burst": asdict(spec)} if isinstance(spec, BurstLoss) else {"loss": spec}),
                }
                for (port, direction), spec in agg.drops().items()
            ]
        if args.command == "show-forwarding":
            return [{"mac": m, "port": p} for m, p in agg.forwarding()]
    raise ControllerError(f"unknown command {args.command}")


def _show_tree(args) -> dict:
    """The job's tree from the topology (`args.topology`, loaded by main) with each switch's read-back."""
    tls = {"ssl": args.ssl, "ca_cert": args.ca_cert, "cert": args.cert, "key": args.key}
    read = None if args.no_read_back else reader(args.job, args.timeout, **tls)
    [job] = [j for j in args.topology.jobs if j.id == args.job]
    return tree_report(args.topology, job, read)


def _topology(parser: argparse.ArgumentParser, args) -> Topology:
    """show-tree's topology, refused as a bad argument (exit 2) in one line; its job must be in it."""
    try:
        topo = load(args.topo, args.workers if is_star(args.topo) else None, args.jobs)
    except TopologyError as err:
        parser.error(f"argument --topo {args.topo}: {err}")
    if all(j.id != args.job for j in topo.jobs):
        parser.error(
            f"argument job: job {args.job} is not in topology {topo.name} (its jobs: "
            f"{', '.join(str(j.id) for j in topo.jobs)})"
        )
    return topo


def _shell(args) -> NoReturn:
    """Become p4runtime-shell (in its own virtualenv: ina.controller.shell), so its terminal,
    Ctrl-C and exit status are the user's."""
    python = shell_python()
    if not python.exists():
        raise ControllerError(
            f"p4runtime-shell runs in its own virtualenv, {shell_venv()}, which is missing "
            "(make setup creates it)"
        )
    os.execv(
        python,
        shell_argv(
            args.grpc_addr,
            args.device_id,
            args.election_id,
            args.ssl,
            args.ca_cert,
            args.cert,
            args.key,
        ),
    )


def _human(command: str, result) -> None:
    if command in ("show-jobs", "add-job", "reset-job", "set-policy", "move-job", "compact"):
        jobs = result if command in ("show-jobs", "compact") else [result]
        rows = [
            [
                j["job_id"],
                j["base"],
                j["num_slots"],
                f"{j['epoch']:#010x}",
                j["policy"],
                len(j["workers"]),
                " ".join(f"{w['rank']}@{w['port']}/{w['ip']}" for w in j["workers"]),
            ]
            for j in jobs
        ]
        _print_table(rows, ["job", "base", "slots", "epoch", "policy", "workers", "rank@port/ip"])
        for j in jobs:
            if j.get("fallback"):
                f = j["fallback"]
                print(
                    f"job {j['job_id']} is best effort: its host fallback server "
                    f"{f['ip']}:{f['udp_port']} on port {f['port']}"
                )
        if command in ("add-job", "reset-job", "move-job"):
            print(f"start its workers with --epoch {jobs[0]['epoch']:#010x}")
        elif command == "compact":
            print("restart each moved job's workers with its new epoch" if jobs else "no job moved")
    elif command == "preempt":
        victim = result["victim"]
        if result["on_host"]:
            server = victim["fallback"]
            print(
                f"job {victim['job_id']} gave all its slots and left the switch: restart its host "
                f"fallback server and its workers with --epoch {victim['epoch']:#010x}, the "
                f"workers addressing the server as their aggregator (--switch {server['ip']} "
                f"--switch-port {server['udp_port']})"
            )
        else:
            print(
                f"job {victim['job_id']} now holds slots {victim['base']}.."
                f"{victim['base'] + victim['num_slots'] - 1}: restart its workers with --epoch "
                f"{victim['epoch']:#010x}"
                + (" (and its host fallback server)" if victim["fallback"] else "")
            )
        _human("add-job", result["job"])
    elif command == "show-pool":
        _print_pool(result)
    elif command == "show-stats":
        for group in ("jobs", "ports"):
            for index, counts in sorted(result[group].items()):
                print(f"{group[:-1]} {index}: " + ", ".join(f"{k}={v}" for k, v in counts.items()))
        if not result["jobs"] and not result["ports"]:
            print("no packets counted yet")
    elif command == "show-drops":
        _print_table(
            [
                [
                    r["port"],
                    r["direction"],
                    f"uniform {r['loss']:g}"
                    if "loss" in r
                    else "burst " + str(BurstLoss(**r["burst"])),
                ]
                for r in result
            ],
            ["port", "direction", "loss"],
        )
        if not result:
            print("no loss emulated")
    elif command == "show-tree":
        print(render(result))
    elif command == "show-forwarding":
        _print_table([[r["mac"], r["port"]] for r in result], ["mac", "port"])
    elif command == "show-slot":
        print(
            f"bitmap {result['bitmap']:#010x}  count {result['count']}  exponent {result['exponent']}  "
            f"epoch {result['epoch']:#010x}"
            + ("" if result["current"] else " (another run's: empty for this job)")
        )
        print("values", result["values"])
    else:
        print(json.dumps(result, indent=2))


def _print_pool(pool: dict) -> None:
    """The pool map as text: a row per range in slot order, then the totals."""
    rows = [
        [r["base"], r["base"] + r["slots"] - 1, r["slots"], f"job {r['job']}"] for r in pool["jobs"]
    ]
    rows += [
        [r["base"], r["base"] + r["slots"] - 1, r["slots"], "free"] for r in pool["free_ranges"]
    ]
    _print_table(sorted(rows), ["first", "last", "slots", "holder"])
    print(
        f"{pool['used']} of {pool['pool_size']} slots used by {len(pool['jobs'])} jobs, "
        f"{pool['free']} free in {len(pool['free_ranges'])} ranges (largest {pool['largest_free']}), "
        f"external fragmentation {pool['fragmentation']:.3f}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if (args.ca_cert or args.cert or args.key) and not args.ssl:
        parser.error("argument --ca-cert/--cert/--key: needs --ssl")
    if args.command == "set-drop" and all(
        getattr(args, d) is None for d in ("ingress", "ingress_burst", "egress", "egress_burst")
    ):
        parser.error(
            "set-drop: give the loss of at least one direction (--ingress/--ingress-burst, "
            "--egress/--egress-burst)"
        )
    if bool(args.cert) != bool(args.key):
        parser.error(
            "argument --cert/--key: give both (the client certificate and its key) or neither"
        )
    if args.command == "preempt" and args.job in args.victim:
        parser.error(f"argument --victim: job {args.job} is the one to admit, not a victim")
    if args.command == "show-tree":
        args.topology = _topology(parser, args)
    try:
        result = run(args)
    except (ControllerError, FileError) as err:
        print(f"ina ctl: {err}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        _human(args.command, result)
    return 0
