"""ina's P4-16 compiler for the v1model architecture: P4 source -> BMv2 JSON + P4Info.

Passes: preprocess (cpp) -> parse (LALR, AST with locations) -> declarations and types ->
lowering (names, types, widths, inlining, pipelines) -> BMv2 JSON and P4Info emitters; README.md
says what each pass receives.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ina.compiler.bmv2 import assemble
from ina.compiler.errors import CompileError, Location
from ina.compiler.p4info import build_p4info
from ina.compiler.preprocess import preprocess
from ina.compiler.program import ProgramModel
from ina.compiler.syntax import parse_program
from ina.compiler.v1switch import lower_program

__all__ = ["CompileError", "CompileResult", "Location", "compile_file"]


@dataclass
class CompileResult:
    name: str  # the program's base name (file name without .p4)
    bmv2: dict
    p4info: Any  # ina.p4rt.proto.p4info_pb2.P4Info


def compile_file(
    path: str | Path, include_dirs: Sequence[str] = (), defines: Mapping[str, str] = {}
) -> CompileResult:
    """Compile one P4-16 v1model program; raises CompileError for programs it rejects."""
    path = Path(path)
    if not path.is_file():
        raise CompileError(f"cannot read '{path}': no such file", Location(str(path), 0, 0))
    source = preprocess(path, include_dirs, defines)
    program = parse_program(source)
    model = ProgramModel(program)
    lowered = lower_program(model, str(path))
    return CompileResult(path.stem, assemble(lowered), build_p4info(lowered.artifacts))
