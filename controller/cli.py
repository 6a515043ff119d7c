"""`ina ctl`: program and inspect a switch running ina's aggregation program over P4Runtime."""

import argparse
import json
import sys
from dataclasses import asdict

from ina.controller.aggregation import Aggregation, Worker
from ina.controller.client import ControllerError, SwitchConnection


def _worker(text: str) -> Worker:
    """RANK:PORT:MAC:IP[:UDP]; the MAC has colons too, so split from both ends."""
    parts = text.split(":")
    if len(parts) not in (9, 10):
        raise argparse.ArgumentTypeError(f"'{text}' is not RANK:PORT:MAC:IP[:UDP_PORT] "
                                         "(e.g. 0:1:02:00:00:00:00:01:10.0.0.1)")
    rank, port, mac, ip = int(parts[0]), int(parts[1]), ":".join(parts[2:8]), parts[8]
    return Worker(rank, port, mac, ip, int(parts[9], 0) if len(parts) == 10 else 0xBEE0)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="ina ctl", description="Program and inspect an ina switch over P4Runtime.")
    p.add_argument("--grpc-addr", default="127.0.0.1:9559", metavar="HOST:PORT")
    p.add_argument("--device-id", type=int, default=0)
    p.add_argument("--election-id", type=int, default=1)
    p.add_argument("--json", action="store_true", help="machine-readable output")
    sub = p.add_subparsers(dest="command", required=True)
    sub.add_parser("show-pipeline", help="tables, registers and counters of the loaded program")
    sp = sub.add_parser("set-pipeline", help="push a BMv2 JSON and its P4Info")
    sp.add_argument("--bmv2-json", required=True)
    sp.add_argument("--p4info", required=True)
    sa = sub.add_parser("set-switch-addr", help="the switch's own MAC and IP (ARP, ping, aggregation)")
    sa.add_argument("mac")
    sa.add_argument("ip")
    aj = sub.add_parser("add-job", help="install a job: admission, job entry, multicast group")
    aj.add_argument("job", type=int)
    aj.add_argument("--worker", type=_worker, action="append", required=True, metavar="RANK:PORT:MAC:IP")
    aj.add_argument("--slots", type=int, default=256)
    rj = sub.add_parser("remove-job")
    rj.add_argument("job", type=int)
    sub.add_parser("show-jobs")
    sub.add_parser("show-stats")
    ss = sub.add_parser("show-slot")
    ss.add_argument("job", type=int)
    ss.add_argument("index", type=int)
    ss.add_argument("--set", type=int, default=0, dest="pool_set")
    sd = sub.add_parser("set-drop", help="emulate loss inside the switch on one port")
    sd.add_argument("port", type=int)
    sd.add_argument("--ingress", type=float)
    sd.add_argument("--egress", type=float)
    sub.add_parser("show-forwarding")
    td = sub.add_parser("table-dump")
    td.add_argument("table")
    sub.add_parser("shell", help="p4runtime-shell connected to this switch")
    return p


def _print_table(rows: list[list], header: list[str]) -> None:
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows, strict=False)]
    for row in [header, *rows]:
        print("  ".join(str(x).ljust(w) for x, w in zip(row, widths, strict=False)))


def run(args) -> object:
    if args.command == "shell":
        return _shell(args)
    with SwitchConnection(args.grpc_addr, args.device_id, args.election_id) as conn:
        if args.command == "set-pipeline":
            conn.set_pipeline(args.bmv2_json, args.p4info)
            return {"ok": True}
        schema = conn.adopt_pipeline()
        if args.command == "show-pipeline":
            return {kind: sorted(x.name for x in schema.all(kind)) for kind in ("table", "register", "counter")}
        if args.command == "table-dump":
            return [asdict(e) for e in conn.read_table(args.table)]
        agg = Aggregation(conn)
        if args.command == "set-switch-addr":
            agg.set_switch_address(args.mac, args.ip)
            return {"ok": True}
        if args.command == "add-job":
            return asdict(agg.add_job(args.job, args.worker, args.slots))
        if args.command == "remove-job":
            agg.remove_job(args.job)
            return {"ok": True}
        if args.command == "show-jobs":
            return [asdict(j) for j in agg.jobs()]
        if args.command == "show-stats":
            return agg.stats()
        if args.command == "show-slot":
            return asdict(agg.slot(args.job, args.index, args.pool_set))
        if args.command == "set-drop":
            agg.set_drop(args.port, args.ingress, args.egress)
            return {"ok": True}
        if args.command == "show-forwarding":
            return [{"mac": m, "port": p} for m, p in agg.forwarding()]
    raise ControllerError(f"unknown command {args.command}")


def _shell(args) -> int:
    import p4runtime_sh.shell as sh

    sh.setup(device_id=args.device_id, grpc_addr=args.grpc_addr, election_id=(0, args.election_id))
    try:
        from IPython import embed

        embed(user_ns={name: getattr(sh, name) for name in dir(sh) if not name.startswith("_")})
    finally:
        sh.teardown()
    return 0


def _human(command: str, result) -> None:
    if command == "show-jobs":
        rows = [[j["job_id"], j["base"], j["num_slots"], len(j["workers"]),
                 " ".join(f"{w['rank']}@{w['port']}/{w['ip']}" for w in j["workers"])] for j in result]
        _print_table(rows, ["job", "base", "slots", "workers", "rank@port/ip"])
    elif command == "show-stats":
        for group in ("jobs", "ports"):
            for index, counts in sorted(result[group].items()):
                print(f"{group[:-1]} {index}: " + ", ".join(f"{k}={v}" for k, v in counts.items()))
        if not result["jobs"] and not result["ports"]:
            print("no packets counted yet")
    elif command == "show-forwarding":
        _print_table([[r["mac"], r["port"]] for r in result], ["mac", "port"])
    elif command == "show-slot":
        print(f"bitmap {result['bitmap']:#010x}  count {result['count']}  exponent {result['exponent']}")
        print("values", result["values"])
    else:
        print(json.dumps(result, indent=2))


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        result = run(args)
    except ControllerError as err:
        print(f"ina ctl: {err}", file=sys.stderr)
        return 1
    if args.command == "shell":
        return int(result)
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        _human(args.command, result)
    return 0
