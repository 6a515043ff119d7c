"""Regenerates p4rt/generated/: P4Runtime 1.4.1's protobuf modules for protobuf's fast (upb) backend.

The p4runtime 1.4.1 wheel ships modules from an old protoc, which protobuf 4 and later refuse to
import. Their FileDescriptorProtos are read from those modules without running them (ast), and
grpcio-tools' protoc generates today's modules from them: same messages, same wire format. The
wheel is the one p4runtime-shell's virtualenv holds (`make setup`); its files are the input.

    .venv/bin/python scripts/p4runtime_protos.py [--p4 DIR] [--out DIR]

protoc names the modules after the .proto paths (`from p4.v1 import p4data_pb2`); those names are
changed to their package, ina.p4rt.generated, so they never meet the wheel's `p4` package.
"""

import argparse
import ast
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from google.protobuf import any_pb2, descriptor_pb2
from google.rpc import status_pb2

from ina.controller.shell import shell_venv

REPO = Path(__file__).resolve().parents[1]
PACKAGE = "ina.p4rt.generated"
PROTOS = [
    "p4/config/v1/p4types.proto",
    "p4/config/v1/p4info.proto",
    "p4/v1/p4data.proto",
    "p4/v1/p4runtime.proto",
]
SERVICES = ["p4/v1/p4runtime.proto"]  # the one with a service: a _pb2_grpc module
HEADER = '"""protoc\'s output for P4Runtime 1.4.1: regenerate with scripts/p4runtime_protos.py, do not edit."""\n'


def serialized_descriptor(module: Path) -> bytes:
    """The FileDescriptorProto an old-style _pb2 module passes as `serialized_pb`, read, not run."""
    for node in ast.walk(ast.parse(module.read_text())):
        if (
            isinstance(node, ast.keyword)
            and node.arg == "serialized_pb"
            and isinstance(node.value, ast.Constant)
        ):
            return node.value.value
    raise SystemExit(f"p4runtime_protos: {module} holds no serialized_pb; is it p4runtime 1.4.1's?")


def descriptor_set(p4_dir: Path) -> descriptor_pb2.FileDescriptorSet:
    """The four P4Runtime files and what they import (any.proto, google.rpc's status.proto)."""
    files = descriptor_pb2.FileDescriptorSet()
    for dependency in (any_pb2, status_pb2):
        files.file.add().ParseFromString(dependency.DESCRIPTOR.serialized_pb)
    for proto in PROTOS:
        module = p4_dir.parent / proto.replace(".proto", "_pb2.py")
        files.file.add().ParseFromString(serialized_descriptor(module))
    return files


def generate(p4_dir: Path, out: Path) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        fds = Path(tmp) / "p4runtime.fds"
        fds.write_bytes(descriptor_set(p4_dir).SerializeToString())
        for protos, outputs in (
            (PROTOS, [f"--python_out={tmp}"]),
            (SERVICES, [f"--grpc_python_out={tmp}"]),
        ):
            subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "grpc_tools.protoc",
                    f"--descriptor_set_in={fds}",
                    *outputs,
                    *protos,
                ],
                check=True,
            )
        out.mkdir(parents=True, exist_ok=True)
        (out / "__init__.py").write_text(HEADER)
        for module in sorted(Path(tmp).glob("p4/**/*.py")):
            (out / module.name).write_text(renamed(module.read_text()))


def renamed(text: str) -> str:
    """protoc names each module after its .proto's path (p4.v1.p4data_pb2): in its imports and as
    its classes' __module__. Here they are modules of PACKAGE."""
    text = re.sub(r"^from p4(?:\.config)?\.v1 import ", f"from {PACKAGE} import ", text, flags=re.M)
    return re.sub(r"'p4(?:\.config)?\.v1\.(\w+_pb2)'", rf"'{PACKAGE}.\1'", text)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument(
        "--p4",
        type=Path,
        help="p4runtime 1.4.1's `p4` package folder (default: p4runtime-shell's virtualenv's)",
    )
    p.add_argument("--out", type=Path, default=REPO / "p4rt" / "generated")
    args = p.parse_args(argv)
    p4_dir = args.p4 or next(shell_venv().glob("lib/python*/site-packages/p4"), None)
    if p4_dir is None or not (p4_dir / "v1" / "p4runtime_pb2.py").is_file():
        p.error(f"argument --p4: no p4runtime package at {p4_dir or shell_venv()} (run make setup)")
    generate(p4_dir, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
