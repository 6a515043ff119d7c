"""`ina sim --compare ring,ps`: the in-network all-reduce and the baselines on the same topology,
links, hosts and seed, side by side: the ring as NCCL runs it over RoCE (ina.sim.ring) and the host
parameter server (ina.sim.ps). Each runs in its own harness (the same switches, programmed alike),
on the same arrays."""

from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass

from ina.hosts.inprocess import InProcessSwitch
from ina.sim import allreduce, ps, ring
from ina.sim.allreduce import AllReduceConfig, AllReduceResult
from ina.sim.ring import Transport
from ina.sim.transport import ROCE, TransportSpec
from ina.sim.units import format_rate, format_seconds

METHODS = ("ring", "ps")
MTUS = (256, 512, 1024, 2048, 4096)  # RoCE's path MTUs


def parse_methods(text: str) -> tuple[str, ...]:
    """'ring,ps' -> ('ring', 'ps'); raises ValueError naming what is accepted."""
    methods = tuple(dict.fromkeys(m.strip() for m in text.split(",")))
    if not methods or any(m not in METHODS for m in methods):
        raise ValueError(
            f"expected a comma-separated list of {', '.join(METHODS)}, got {text[:40]!r}"
        )
    return methods


def refusal(config: AllReduceConfig, methods: tuple[str, ...]) -> str | None:
    """Why a method cannot run `config` (the parameter server's limits), or None."""
    return ps.refusal(config) if "ps" in methods else None


@dataclass
class Comparison:
    """Each method's result (the switch path's first) and its lossless bound, the ring's transport
    and chunk, the server's counters, and what the bounds assume that the run does not meet."""

    results: dict[str, AllReduceResult]
    bounds: dict[str, float | None]
    transport: Transport
    chunk: int
    server: dict[str, int] | None
    notes: list[str]


def compare(
    config: AllReduceConfig,
    methods: tuple[str, ...],
    transport: Transport = ROCE,
    chunk: int = ring.CHUNK,
    engine: str = "native",
    watch: Mapping[str, Callable[[InProcessSwitch], None]] | None = None,
) -> Comparison:
    """Run the switch path and each of `methods` on `config` (`watch[method]`, if given, sees that
    method's harness before it runs: `simulate`'s). A worker's WorkerError, the ring's
    TransportError and the server's ServerRefused propagate."""
    watch = watch or {}
    results = {"switch": allreduce.simulate(config, engine, watch=watch.get("switch"))}
    bounds = {"switch": allreduce.lossless_time(config)}
    server, notes = None, []
    if "ring" in methods:
        results["ring"] = ring.simulate_ring(config, transport, chunk, engine, watch.get("ring"))
        bounds["ring"] = ring.lossless_time(config, transport, chunk)
        if bounds["ring"] is not None and not ring.pipeline_full(config, transport, chunk):
            notes.append(
                "the ring's pipeline leaves the link idle (a step's chunks after the first take less than "
                "a frame's way to the neighbour, or the window is short), so its bound is not reached"
            )
    if "ps" in methods:
        results["ps"], server = ps.simulate_ps(config, engine, watch.get("ps"))
        bounds["ps"] = None
    return Comparison(results, bounds, transport, chunk, server, notes)


def _wire(result: AllReduceResult) -> tuple[int, int]:
    """Frames and frame bytes all links carried, both ways."""
    return (
        sum(up.frames + down.frames for _n, up, down in result.links),
        sum(up.bytes + down.bytes for _n, up, down in result.links),
    )


def describe(comparison: Comparison) -> str:
    """A table: one row per method."""
    lines = [
        f"{'method':<8} {'time':>12} {'lossless bound':>15} {'goodput/worker min':>19} {'frames':>9} "
        f"{'bytes':>12} {'resent':>7}  result"
    ]
    for name, r in comparison.results.items():
        bound = comparison.bounds[name]
        frames, nbytes = _wire(r)
        lines.append(
            f"{name:<8} {format_seconds(r.communication_s):>12} "
            f"{format_seconds(bound) if bound is not None else '-':>15} {format_rate(min(r.goodput_bps)):>19} "
            f"{frames:>9} {nbytes:>12} {sum(r.retransmissions):>7}  {'verified' if r.verified else 'WRONG'}"
        )
    if comparison.server is not None:
        lines.append("ps server: " + ", ".join(f"{k} {v}" for k, v in comparison.server.items()))
    return "\n".join(lines + comparison.notes)


def report(comparison: Comparison, git: str) -> dict:
    """The switch path's report (allreduce.report) with each baseline's results beside it under
    "compare", each with its own lossless bound and wall times."""
    out = allreduce.report(comparison.results["switch"], git)
    out["compare"] = {}
    for name, result in comparison.results.items():
        if name == "switch":
            continue
        one = allreduce.report(result, git)
        out["compare"][name] = {
            **one["results"],
            "lossless_bound_s": comparison.bounds[name],
            "wall": one["wall"],
        }
    if "ring" in out["compare"]:
        out["compare"]["ring"]["transport"] = {
            "kind": "roce" if isinstance(comparison.transport, TransportSpec) else "tcp",
            **asdict(comparison.transport),
            "chunk_bytes": comparison.chunk,
        }
    if comparison.server is not None:
        out["compare"]["ps"]["server"] = comparison.server
    return out


def verified(comparison: Comparison) -> bool:
    return all(r.verified for r in comparison.results.values())
