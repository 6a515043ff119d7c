"""`ina compile`: P4-16 (v1model) to BMv2 JSON and P4Info, with p4c-bm2-ss's common flags."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ina.args import macro_define
from ina.compiler import CompileError, CompileResult, Location, compile_file
from ina.files import P4INFO_FORMATS, write_p4info


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ina compile", description="Compile a P4-16 v1model program to BMv2 JSON and P4Info."
    )
    parser.add_argument("program", help="the P4 source file")
    parser.add_argument(
        "-o",
        "--output",
        default=".",
        metavar="OUTDIR",
        help="directory for NAME.json and NAME.p4info.txtpb (default: current directory)",
    )
    parser.add_argument(
        "--p4runtime-files",
        metavar="FILE",
        help="where to write the P4Info; the suffix picks the format: .txt/.txtpb (text), "
        ".json or .bin",
    )
    parser.add_argument(
        "-I",
        dest="include_dirs",
        action="append",
        default=[],
        metavar="DIR",
        help="add a directory to the #include search path",
    )
    parser.add_argument(
        "-D",
        dest="defines",
        action="append",
        default=[],
        type=macro_define,
        metavar="NAME[=VALUE]",
        help="define a preprocessor macro",
    )
    parser.add_argument("--p4v", default="16", choices=["16"], help="P4 language version (only 16)")
    return parser


def compile_program(
    program: str, include_dirs: list[str], defines: dict[str, str]
) -> CompileResult:
    """compile_file for a command line (`ina compile`, `ina stf`): every failure is a CompileError
    naming the file, so the user never sees a traceback, even from a bug in the compiler."""
    try:
        return compile_file(program, include_dirs, defines)
    except CompileError:
        raise
    except RecursionError:
        raise CompileError(
            "the program nests too deeply for ina's compiler", Location(program, 0, 0)
        ) from None
    except Exception as error:
        raise CompileError(
            f"internal compiler error: {type(error).__name__}: {error} (a bug in ina's compiler; "
            "please report it with the program)",
            Location(program, 0, 0),
        ) from None


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.p4runtime_files and Path(args.p4runtime_files).suffix not in P4INFO_FORMATS:
        print(
            f"ina compile: --p4runtime-files must end in one of {', '.join(sorted(P4INFO_FORMATS))}",
            file=sys.stderr,
        )
        return 2
    try:
        result = compile_program(args.program, args.include_dirs, dict(args.defines))
    except CompileError as error:
        print(error, file=sys.stderr)
        return 1
    out = Path(args.output)
    try:
        out.mkdir(parents=True, exist_ok=True)
        (out / f"{result.name}.json").write_text(json.dumps(result.bmv2, indent=2) + "\n")
        p4info_path = (
            Path(args.p4runtime_files)
            if args.p4runtime_files
            else out / f"{result.name}.p4info.txtpb"
        )
        write_p4info(result.p4info, p4info_path)
    except OSError as error:
        print(f"ina compile: cannot write output: {error}", file=sys.stderr)
        return 1
    return 0
