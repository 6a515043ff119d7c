"""The `ina` command: one entry point that hands each subcommand to the subpackage owning it.

Subcommand modules are imported only when used, so `ina compile` never pays for grpc or numpy.
"""

import importlib
import sys

SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "compile": ("ina.compiler.cli", "compile P4-16 (v1model) to BMv2 JSON and P4Info"),
    "switch": ("ina.switch.cli", "run the built-in software switch with a P4Runtime server"),
    "stf": ("ina.switch.stf", "run a program against an STF test file, in process"),
    "ctl": ("ina.controller.cli", "program and inspect a switch over P4Runtime"),
    "worker": ("ina.hosts.cli", "run one all-reduce worker"),
    "run": ("ina.topologies.cli", "bring up a Mininet network and run an all-reduce demo"),
    "bench": ("ina.bench.cli", "measure the switch, the compiler and all-reduce goodput"),
    "train": ("ina.train.cli", "train a model data-parallel with gradients summed by the switch"),
    "sim": ("ina.sim.cli", "simulate an all-reduce through the switch program in virtual time"),
}


def usage() -> str:
    lines = ["usage: ina COMMAND [ARGS...]", "", "commands:"]
    lines += [f"  {name:<8} {help_}" for name, (_, help_) in SUBCOMMANDS.items()]
    lines += ["", "Run `ina COMMAND --help` for the options of one command."]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in ("-h", "--help"):
        print(usage())
        return 0 if argv else 2
    if argv[0] == "--version":
        from ina import __version__

        print(f"ina {__version__}")
        return 0
    name, rest = argv[0], argv[1:]
    if name not in SUBCOMMANDS:
        print(f"ina: unknown command '{name}'\n\n{usage()}", file=sys.stderr)
        return 2
    module = importlib.import_module(SUBCOMMANDS[name][0])
    return int(module.main(rest) or 0)
