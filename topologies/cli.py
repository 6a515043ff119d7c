"""`ina run`: the whole demo in one command (see runner.py)."""

import argparse
import sys

from ina.topologies import clean
from ina.topologies.runner import RunError, RunOptions, run, say, summary
from ina.topologies.topo import TopologyError


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="ina run", description="Build a Mininet network of ina switches and run an all-reduce.")
    p.add_argument("--topo", default="star", help="topology file, or a built-in name: star, leafspine")
    p.add_argument("--workers", type=int, default=4, help="workers of the star topology")
    p.add_argument("--target", choices=["builtin", "bmv2", "auto"], default="builtin")
    p.add_argument("--size", type=int, default=1 << 16, help="elements per worker")
    p.add_argument("--dtype", choices=["int32", "float32", "float64"], default="int32")
    p.add_argument("--loss", type=float, help="packet loss probability on every link (e.g. 0.01)")
    p.add_argument("--jobs", type=int, default=1, help="split the star's workers into this many jobs")
    p.add_argument("--elems", type=int, choices=[8, 16, 32, 64], default=64, help="elements per packet")
    p.add_argument("--pool-size", type=int, default=8192)
    p.add_argument("--slots", type=int, default=128,
                   help="slots per job = the workers' window; larger windows only queue in a software switch")
    p.add_argument("--keep-logs", metavar="DIR", help="run directory (default runs/<timestamp>)")
    p.add_argument("--cli", action="store_true", help="open the Mininet CLI instead of running workers")
    p.add_argument("--baseline", action="store_true", help="aggregate on a host (parameter server) instead of the switch")
    p.add_argument("--clean", action="store_true", help="only remove leftovers of crashed runs")
    args = p.parse_args(argv)
    if args.clean:
        removed = clean.cleanup()
        print("removed: " + (", ".join(removed) if removed else "nothing"))
        return 0
    opts = RunOptions(topo=args.topo, workers=args.workers, target=args.target, size=args.size, dtype=args.dtype,
                      loss=args.loss, jobs=args.jobs, elems=args.elems, pool_size=args.pool_size,
                      slots=args.slots, run_dir=args.keep_logs, cli=args.cli, baseline=args.baseline)
    try:
        result = run(opts)
    except (RunError, TopologyError) as err:
        print(f"ina run: {err}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("ina run: interrupted; the network was torn down", file=sys.stderr)
        return 130
    except Exception as err:  # a switch that failed to start, a controller error: say it in one place
        print(f"ina run: {type(err).__name__}: {err}", file=sys.stderr)
        return 1
    if opts.cli:
        return 0
    print(summary(result))
    say(("all results verified" if result.ok else "SOME RESULTS ARE WRONG OR MISSING") + f"; details in {result.run_dir}")
    return 0 if result.ok else 1
