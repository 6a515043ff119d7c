"""What `ina sim` writes beside its summary: PNG plots (sim/plots.py), a pcap per link direction
(sim/pcap.py) and the progress line (sim/progress.py), all fed by the channels' taps and traces,
which only read: a run gives the same results with or without them. For the plain all-reduce, each
method of `--compare` (a directory each) and a `--model` workload."""

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from ina.args import parsed_by
from ina.hosts.inprocess import InProcessSwitch
from ina.sim import compare, pcap, plots
from ina.sim.allreduce import AllReduceConfig, AllReduceResult, packets_per_worker, simulate
from ina.sim.links import Channel
from ina.sim.progress import Progress
from ina.sim.ring import Transport

Tap = Callable[[float, bytes | bytearray], None]


def output_dir(text: str) -> Path:
    """A directory to write into: existing, or made under the nearest existing one, which must be a
    writable directory."""
    path = Path(text)
    if "\0" in text:
        raise ValueError(f"expected a directory's path, got {text[:40]!r} (a path has no NUL byte)")
    existing = next(p for p in (path.resolve(), *path.resolve().parents) if p.exists())
    if not existing.is_dir() or not os.access(existing, os.W_OK | os.X_OK):
        raise ValueError(f"cannot write into {text[:80]}: {existing} is not a writable directory")
    return path


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The output options: --plot DIR, --pcap DIR, --quiet."""
    group = parser.add_argument_group("output")
    group.add_argument(
        "--plot",
        type=parsed_by(output_dir),
        metavar="DIR",
        help=f"write PNG plots of the run into DIR ({', '.join(plots.FILES)}; --model: also "
        f"{', '.join(plots.WORKLOAD_FILES)}; --compare: those of each method in DIR/METHOD and "
        f"{', '.join(plots.METHODS_FILES)})",
    )
    group.add_argument(
        "--pcap",
        type=parsed_by(output_dir),
        metavar="DIR",
        help="write one pcap per link direction into DIR (nanoseconds of virtual time, for Wireshark; "
        "--compare: each method's in DIR/METHOD)",
    )
    group.add_argument(
        "--quiet",
        action="store_true",
        help="no progress line on stderr (there is none off a terminal)",
    )


def chain(taps: list[Tap]) -> Tap | None:
    """One tap calling each of `taps` in turn (None for none)."""
    if len(taps) <= 1:
        return taps[0] if taps else None

    def each(start: float, frame: bytes | bytearray) -> None:
        for tap in taps:
            tap(start, frame)

    return each


class Outputs:
    """The taps and traces a run's outputs need, set on the harness before it runs, and the files
    after."""

    def __init__(
        self,
        config: AllReduceConfig,
        plot: Path | None = None,
        pcap_dir: Path | None = None,
        progress: TextIO | None = None,
    ):
        self.config, self.plot, self.pcap_dir, self.progress_stream = (
            config,
            plot,
            pcap_dir,
            progress,
        )
        self.channels: list[Channel] = []
        self.logs: list[plots.WireLog] = []
        self.captures: list[pcap.ChannelCapture] = []
        self.progress: Progress | None = None

    def watch(self, net: InProcessSwitch) -> None:
        """Set every channel's tap (and trace, for the plots); raises OSError for a pcap file."""
        self.channels = [channel for link in net.network.links for channel in (link.up, link.down)]
        taps: dict[Channel, list[Tap]] = {channel: [] for channel in self.channels}
        if self.plot:
            self.logs = plots.record(self.channels)
            for channel, log in zip(self.channels, self.logs, strict=True):
                taps[channel].append(log)
        if self.pcap_dir:
            self.captures = pcap.capture(self.channels, self.pcap_dir)
            for channel, capture in zip(self.channels, self.captures, strict=True):
                taps[channel].append(capture)
        if self.progress_stream:
            toward_workers = [
                member.link.down for members in net.jobs.values() for member in members
            ]
            self.progress = Progress(
                packets_per_worker(self.config) * len(toward_workers), self.progress_stream
            )
            for channel in toward_workers:
                taps[channel].append(self.progress)
        for channel, channel_taps in taps.items():
            channel.tap = chain(channel_taps)

    def close(self) -> None:
        """End the progress line and write the captures' last records (raises OSError)."""
        if self.progress:
            self.progress.close()
        for capture in self.captures:
            capture.flush()

    def draw(self, finish: plots.Finish) -> list[Path]:
        """The plots of the run (raises OSError)."""
        for channel in self.channels:
            channel.settle()
        return plots.draw(self.plot, plots.plot_data(finish, self.channels, self.logs))

    def report(self, written: list[Path]) -> None:
        """Say what the run wrote."""
        if self.pcap_dir:
            print(
                f"wrote {len(self.captures)} pcap files (one per link direction) in {self.pcap_dir}"
            )
        if self.plot:
            print(f"wrote {', '.join(path.name for path in written)} in {self.plot}")


def _progress_stream(args: argparse.Namespace) -> TextIO | None:
    return None if args.quiet or not sys.stderr.isatty() else sys.stderr


def simulate_with_output(config: AllReduceConfig, args: argparse.Namespace) -> AllReduceResult:
    """`simulate(config)` with the outputs `args` ask for (add_arguments' options); says what it
    wrote. Raises what simulate raises, and OSError for a file it cannot write."""
    outputs = Outputs(config, args.plot, args.pcap, _progress_stream(args))
    try:
        result = simulate(config, watch=outputs.watch)
    finally:
        outputs.close()
    outputs.report(outputs.draw(plots.Finish.of_allreduce(result)) if args.plot else [])
    return result


def compare_with_output(
    config: AllReduceConfig,
    args: argparse.Namespace,
    transport: Transport,
) -> compare.Comparison:
    """`compare.compare` with the outputs `args` ask for: each method's plots and pcaps in its own
    directory under --plot and --pcap (switch, ring, ps), methods.png beside them; the progress line
    follows the switch path's run. Raises what compare raises, and OSError for a file."""
    methods = ("switch", *args.compare)
    outputs = {
        m: Outputs(
            config,
            args.plot / m if args.plot else None,
            args.pcap / m if args.pcap else None,
            _progress_stream(args) if m == "switch" else None,
        )
        for m in methods
    }
    try:
        result = compare.compare(
            config,
            args.compare,
            transport,
            args.ring_chunk,
            watch={m: o.watch for m, o in outputs.items()},
        )
    finally:
        for o in outputs.values():
            o.close()
    for m, o in outputs.items():
        o.report(o.draw(plots.Finish.of_allreduce(result.results[m])) if args.plot else [])
    if args.plot:
        written = plots.draw_methods(
            args.plot, {m: r.communication_s for m, r in result.results.items()}
        )
        print(f"wrote {', '.join(path.name for path in written)} in {args.plot}")
    return result
