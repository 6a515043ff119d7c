"""Mininet switch nodes that run a P4 target process: ina's built-in switch or simple_switch_grpc.

Each switch runs in the root namespace with its Mininet interfaces as ports (`-i PORT@IFACE`) and a
P4Runtime server on 127.0.0.1. `start` waits until gRPC answers; when the process dies instead,
the error carries the tail of its log, never a bare "did not start".
"""

import shutil
import subprocess
import sys
import time
from pathlib import Path

import grpc
from mininet.node import Switch

BMV2_BINARIES = ("simple_switch_grpc", "p4c-bm2-ss")  # what --target bmv2 runs, found on PATH
BMV2_LOG_LEVEL = "info"  # simple_switch_grpc's log file: its start and warnings, no packets


class SwitchStartError(Exception):
    pass


def bmv2_toolchain() -> dict[str, dict[str, str]]:
    """Path and `--version` of each BMv2 binary on PATH, so a run records what it measured."""
    found = {}
    for name in BMV2_BINARIES:
        path = shutil.which(name)
        if path is None:
            found[name] = {"path": "", "version": "not installed"}
            continue
        done = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=10)
        lines = (done.stdout + done.stderr).splitlines()
        # p4c prints its own path first, then "Version X (SHA: ...)"
        version = next(
            (ln.removeprefix("Version ") for ln in lines if ln.startswith("Version ")),
            lines[0] if lines else f"exit status {done.returncode}",
        )
        found[name] = {"path": path, "version": version.strip()}
    return found


def log_tail(path: Path, lines: int = 15) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


class P4Switch(Switch):
    """A Mininet switch backed by a P4 target process with a P4Runtime server. `pcap`: ina's switch
    writes every port's frames to RUN_DIR/NAME-pcap/ (each twice, in and out: up to 35% of its CPU
    in one profile, docs/performance.md), so only when asked (`ina run --pcap`)."""

    def __init__(
        self,
        name,
        grpc_addr: str,
        run_dir: str,
        target: str = "builtin",
        pcap: bool = False,
        p4runtime_compat: str | None = None,
        device_id: int = 0,
        **kwargs,
    ):
        kwargs["inNamespace"] = False
        Switch.__init__(self, name, **kwargs)
        self.grpc_addr, self.run_dir, self.target, self.pcap = (
            grpc_addr,
            Path(run_dir),
            target,
            pcap,
        )
        self.p4runtime_compat, self.device_id = p4runtime_compat, device_id
        self.proc: subprocess.Popen | None = None
        self.log_path = self.run_dir / f"{name}.log"

    def command(self) -> list[str]:
        ports = [
            arg
            for intf in self.intfList()
            if intf.name != "lo"
            for arg in ("-i", f"{self.ports[intf]}@{intf.name}")
        ]
        if self.target == "bmv2":
            base = [
                "simple_switch_grpc",
                "--no-p4",
                "--device-id",
                str(self.device_id),
                *ports,
                "--log-file",
                str(self.log_path.with_suffix("")),
                # BMv2 logs at trace by default: several KB per packet written to the file, which
                # slowed it more than the program did (BMV2_LOG_LEVEL keeps what it starts with)
                "--log-level",
                BMV2_LOG_LEVEL,
            ]
            base += ["--", f"--grpc-server-addr={self.grpc_addr}"]
            return base
        cmd = [
            sys.executable,
            "-m",
            "ina",
            "switch",
            "--no-p4",
            *ports,
            "--grpc-server-addr",
            self.grpc_addr,
            "--device-id",
            str(self.device_id),
        ]
        if self.pcap:
            cmd += ["--pcap", str(self.run_dir / f"{self.name}-pcap")]
        if self.p4runtime_compat:
            cmd += ["--p4runtime-compat", self.p4runtime_compat]
        return cmd

    def start(self, controllers) -> None:
        for intf in self.intfList():
            if intf.name != "lo":
                self.cmd(
                    f"ethtool -K {intf.name} tx off rx off tso off gso off gro off >/dev/null 2>&1"
                )
        self.run_dir.mkdir(parents=True, exist_ok=True)
        log = open(self.log_path, "w")  # noqa: SIM115 - handed to the child process
        self.proc = subprocess.Popen(
            self.command(), stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
        channel = grpc.insecure_channel(self.grpc_addr)
        # one future, cancelled before the channel closes: a pending one's polling thread would
        # otherwise call into the closed channel and print a traceback (ValueError)
        ready = grpc.channel_ready_future(channel)
        deadline = time.monotonic() + 20
        try:
            while time.monotonic() < deadline:
                if self.proc.poll() is not None:
                    raise SwitchStartError(
                        f"switch {self.name} ({self.target}) exited with status {self.proc.returncode} while starting; "
                        f"last lines of {self.log_path}:\n{log_tail(self.log_path)}"
                    )
                try:
                    ready.result(timeout=0.5)
                    return
                except grpc.FutureTimeoutError:
                    continue
            raise SwitchStartError(
                f"switch {self.name} did not answer on gRPC {self.grpc_addr} within 20 s; "
                f"last lines of {self.log_path}:\n{log_tail(self.log_path)}"
            )
        finally:
            ready.cancel()
            channel.close()

    def data_path(self, wait: float = 2.0) -> str | None:
        """What ina's switch said about its data path once programmed ("native data path (...)"),
        waiting up to `wait` seconds for the line; None for BMv2 or if it never came."""
        if self.target == "bmv2":
            return None
        deadline = time.monotonic() + wait
        while True:
            lines = [
                ln
                for ln in self.log_path.read_text(errors="replace").splitlines()
                if "data path" in ln
            ]
            if lines or time.monotonic() > deadline:
                return lines[-1].removeprefix("ina switch: ") if lines else None
            time.sleep(0.05)

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def stop(self, deleteIntfs: bool = True) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        Switch.stop(self, deleteIntfs)
