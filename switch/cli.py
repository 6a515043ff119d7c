"""`ina switch`: the built-in switch as a process, with simple_switch_grpc's command line."""

import argparse
import json
import logging
import signal
import sys
import threading
from collections import Counter as Tally
from typing import TextIO

from ina.args import host_port, int_range
from ina.files import FileError, read_bmv2_json
from ina.switch.engine import ENGINES, Switch
from ina.switch.io.ports import PortError, Ports
from ina.switch.model.errors import PipelineError
from ina.switch.p4runtime.server import COMPAT_MODES, SPEC, P4RuntimeService, serve
from ina.switch.state.replication import MAX_PORT


def _port(text: str) -> tuple[int, str]:
    number, sep, iface = text.partition("@")
    if not sep or not number.isdigit() or not iface:
        raise argparse.ArgumentTypeError(f"'{text}' is not PORT@IFACE (e.g. 1@s1-eth1)")
    if int(number) > MAX_PORT:
        raise argparse.ArgumentTypeError(
            f"'{text}': PORT must be in 0..{MAX_PORT} (v1model's 9-bit ports)"
        )
    return int(number), iface


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="ina switch",
        description="Run ina's built-in P4 switch (BMv2 JSON, v1model) with a P4Runtime server.",
    )
    p.add_argument(
        "json",
        nargs="?",
        help="BMv2 JSON to load at start (or use --no-p4 and push one over P4Runtime)",
    )
    p.add_argument(
        "--no-p4", action="store_true", help="start with no program; a controller pushes one"
    )
    p.add_argument(
        "-i", "--interface", action="append", type=_port, default=[], metavar="PORT@IFACE"
    )
    p.add_argument("--device-id", type=int_range(0, 2**64 - 1), default=0)
    p.add_argument(
        "--grpc-server-addr",
        type=host_port(0),
        default="127.0.0.1:9559",
        metavar="HOST:PORT",
        help="where the P4Runtime server listens (default: %(default)s, this host only; "
        "0.0.0.0:9559 lets any host that reaches the port program the switch: add TLS)",
    )
    tls = p.add_argument_group("TLS for P4Runtime (simple_switch_grpc's options)")
    tls.add_argument("--grpc-server-ssl", action="store_true", help="serve P4Runtime over TLS")
    tls.add_argument(
        "--grpc-server-cert", metavar="FILE", help="PEM file holding the server certificate"
    )
    tls.add_argument("--grpc-server-key", metavar="FILE", help="PEM file holding the server key")
    tls.add_argument(
        "--grpc-server-cacert",
        metavar="FILE",
        help="PEM file holding the CA certificate that client certificates are verified against",
    )
    tls.add_argument(
        "--grpc-server-with-client-auth",
        action="store_true",
        help="require a client certificate signed by --grpc-server-cacert (mutual TLS)",
    )
    p.add_argument(
        "--p4runtime-compat",
        choices=sorted(COMPAT_MODES),
        default=None,
        help="answer P4Runtime as this target does where it differs from P4Runtime 1.4 "
        "(README: Known differences from BMv2), to test controllers against it",
    )
    p.add_argument("--cpu-port", type=int_range(0, MAX_PORT), default=None)
    p.add_argument("--drop-port", type=int_range(0, MAX_PORT), default=511)
    p.add_argument("--pcap", metavar="DIR", help="write one pcap per port and direction into DIR")
    p.add_argument(
        "--engine",
        choices=ENGINES,
        default="auto",
        help="data path: native (the program compiled to C), python (generated Python; the "
        "only one with packet logs), auto (native when the program allows; default)",
    )
    p.add_argument(
        "--profile",
        metavar="FILE",
        help="native engine: count time per stage (parse, tables, actions, deparse, "
        "receive, send) and write it to FILE as JSON at exit (ina bench profile)",
    )
    log = p.add_mutually_exclusive_group()
    log.add_argument("--log-console", action="store_true", help="trace every packet on stderr")
    log.add_argument("--log-file", metavar="FILE", help="trace every packet into FILE")
    return p


def serve_ports(
    switch: Switch,
    io: Ports,
    service,
    lock: threading.Lock,
    stop: threading.Event,
    wake: threading.Event,
    io_ticks: Tally,
) -> None:
    """Run the port loop of the loaded program's data path, until `stop`.

    A new program (`wake`) ends the current loop and starts its own (Switch.serve). The sockets
    stay open across the change, so no frame is read twice or lost to a closed socket.
    """
    while not stop.is_set():
        wake.clear()
        if switch.pipeline is not None:
            print(f"ina switch: {switch.engine_name} data path ({switch.engine_note})", flush=True)
        switch.serve(io, service, lock, wake, io_ticks)


def write_profile(out: TextIO, switch: Switch, io_ticks: Tally) -> None:
    """The native engine's ticks per stage and per I/O step, for ina bench profile, into the file
    main opened at start: a path that cannot be written fails before the switch runs, not after."""
    stages, packets = switch.pipeline.profile() if switch.pipeline else ({}, 0)
    out.truncate(0)  # opened for appending, so a start that fails later leaves an old profile whole
    json.dump(
        {"packets": packets, "stages": stages, "io": dict(io_ticks), "engine": switch.engine_name},
        out,
        indent=2,
    )


def tls_usage_error(args: argparse.Namespace) -> str | None:
    """What is wrong with the TLS options, as simple_switch_grpc reads them; None when they fit."""
    given = [o for o in ("cert", "key", "cacert") if getattr(args, f"grpc_server_{o}")]
    if not args.grpc_server_ssl:
        if given or args.grpc_server_with_client_auth:
            return "the --grpc-server-cert/-key/-cacert/-with-client-auth options need --grpc-server-ssl"
        return None
    if not (args.grpc_server_cert and args.grpc_server_key):
        return "--grpc-server-ssl needs --grpc-server-cert FILE and --grpc-server-key FILE"
    if args.grpc_server_with_client_auth and not args.grpc_server_cacert:
        return "--grpc-server-with-client-auth needs --grpc-server-cacert FILE (the CA of client certificates)"
    return None


def server_credentials(args: argparse.Namespace):
    """gRPC server credentials from the TLS options; None without --grpc-server-ssl."""
    if not args.grpc_server_ssl:
        return None
    from ina.p4rt.tls import server_credentials as credentials

    return credentials(
        args.grpc_server_cert,
        args.grpc_server_key,
        args.grpc_server_cacert,
        args.grpc_server_with_client_auth,
    )


def _loopback(address: str) -> bool:
    host = address.rpartition(":")[0].strip("[]")
    return host in ("localhost", "::1") or host.startswith("127.")


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    problem = tls_usage_error(args)
    if problem:
        print(f"ina switch: {problem}", file=sys.stderr)
        return 2
    if not args.json and not args.no_p4:
        print("ina switch: give a BMv2 JSON file or --no-p4", file=sys.stderr)
        return 2
    if args.engine == "native" and (args.log_console or args.log_file):
        print(
            "ina switch: per-packet logs come from the Python engine; use --engine python or auto "
            "with --log-console/--log-file, or drop the log option",
            file=sys.stderr,
        )
        return 2
    ports = dict(args.interface)
    if len(ports) != len(args.interface):
        print("ina switch: the same port number is given twice", file=sys.stderr)
        return 2
    try:
        handler = logging.FileHandler(args.log_file) if args.log_file else None
        profile = open(args.profile, "a") if args.profile else None  # noqa: SIM115 (kept until exit)
    except OSError as err:
        print(f"ina switch: cannot write {err.filename}: {err.strerror}", file=sys.stderr)
        return 1
    log = None
    if args.log_console or args.log_file:
        handler = handler or logging.StreamHandler()
        logger = logging.getLogger("ina.switch.packets")
        logger.addHandler(handler)
        logger.setLevel(logging.INFO)
        log = logger.info
    switch = Switch(
        device_id=args.device_id,
        cpu_port=args.cpu_port,
        drop_port=args.drop_port,
        log=log,
        engine=args.engine,
        profile=bool(args.profile),
    )
    if args.json:
        try:
            switch.load(read_bmv2_json(args.json))
        except FileError as err:
            print(f"ina switch: {err}", file=sys.stderr)
            return 1
        except PipelineError as err:
            print(f"ina switch: cannot run {args.json}: {err}", file=sys.stderr)
            return 1
    try:
        io = Ports(ports, args.pcap)
    except PortError as err:
        print(f"ina switch: {err}", file=sys.stderr)
        return 1
    except OSError as err:  # the pcap directory
        print(f"ina switch: --pcap: cannot write {err.filename}: {err.strerror}", file=sys.stderr)
        return 1
    from ina.p4rt.tls import TlsError

    lock = threading.Lock()
    compat = COMPAT_MODES[args.p4runtime_compat] if args.p4runtime_compat else SPEC
    service = P4RuntimeService(switch, lock, args.device_id, transmit=io.send, compat=compat)
    try:
        server = serve(service, args.grpc_server_addr, server_credentials(args))
    except (OSError, RuntimeError, TlsError) as err:
        io.close()
        print(f"ina switch: gRPC: {err}", file=sys.stderr)
        return 1
    if not args.grpc_server_ssl and not _loopback(args.grpc_server_addr):
        print(
            f"ina switch: warning: P4Runtime on {args.grpc_server_addr} without TLS: any host that reaches "
            "the port can program this switch (see docs/security.md)",
            file=sys.stderr,
            flush=True,
        )
    stop, wake = threading.Event(), threading.Event()

    def on_signal(*_args) -> None:
        stop.set()
        wake.set()

    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, on_signal)
    switch.on_load = wake.set
    port_list = ", ".join(f"{n}@{i}" for n, i in sorted(ports.items())) or "none"
    host = args.grpc_server_addr.rpartition(":")[0]
    protocol = "P4Runtime over TLS" if args.grpc_server_ssl else "P4Runtime"
    if args.p4runtime_compat:
        protocol += f" as {compat.name}"
    print(
        f"ina switch: listening on {host}:{server.bound_port} ({protocol}, device {args.device_id}), "
        f"ports {port_list}",
        flush=True,
    )
    io_ticks: Tally[str] = Tally()
    try:
        serve_ports(switch, io, service, lock, stop, wake, io_ticks)
    finally:
        server.stop(grace=0.5)
        io.close()
    if profile:
        with profile:
            write_profile(profile, switch, io_ticks)
    print(f"ina switch: stopped ({dict(switch.stats)})", flush=True)
    return 0
