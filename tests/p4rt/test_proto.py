"""ina's P4Runtime modules run on protobuf's upb backend, are exactly what protoc makes of the
p4runtime 1.4.1 wheel's descriptors, and are imported through ina.p4rt.proto alone."""

import ast
import subprocess
import sys
from pathlib import Path

from google.protobuf import descriptor_pool
from google.protobuf.internal import api_implementation
from shell_venv import run_in_shell_venv

import ina.p4rt.proto  # noqa: F401 - registers P4Runtime's files in the default descriptor pool

REPO = Path(__file__).resolve().parents[2]
GENERATED = REPO / "p4rt" / "generated"
PROTOS = [
    "p4/v1/p4runtime.proto",
    "p4/v1/p4data.proto",
    "p4/config/v1/p4info.proto",
    "p4/config/v1/p4types.proto",
]


def test_protobuf_runs_its_upb_backend():
    """The pure-Python backend took 62 s to parse a 12.6 MB WriteRequest (bench/p4runtime_load.py);
    a pin or an environment variable that brings it back fails here."""
    assert api_implementation.Type() == "upb"


def test_generated_modules_are_protocs_output_for_the_wheel(tmp_path):
    done = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "p4runtime_protos.py"), "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    made = {p.name: p.read_text() for p in tmp_path.glob("*.py")}
    assert made == {p.name: p.read_text() for p in GENERATED.glob("*.py")}


def test_messages_are_the_wheels_byte_for_byte():
    """Each file's descriptor equals the one the wheel's module registers in its own virtualenv."""
    script = (
        "import importlib, sys\nfor proto in sys.argv[1:]:\n"
        "    print(importlib.import_module(proto[:-6].replace('/', '.') + '_pb2').DESCRIPTOR.serialized_pb.hex())"
    )
    wheel = run_in_shell_venv(script, *PROTOS).split()
    assert wheel == [
        descriptor_pool.Default().FindFileByName(proto).serialized_pb.hex() for proto in PROTOS
    ]


def test_only_p4rt_proto_imports_the_generated_modules():
    """No module imports the wheel's `p4` package, nor ina.p4rt.generated but ina.p4rt.proto."""
    offenders = []
    tops = [
        top for top in REPO.iterdir() if top.is_dir() and not top.name.startswith(".")
    ]  # no .venv
    for path in [p for top in tops for p in top.rglob("*.py")]:
        relative = path.relative_to(REPO)
        if relative.parts[:2] == ("p4rt", "generated"):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            names = (
                [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else []
            )
            for name in names:
                if name.split(".")[0] == "p4" or (
                    name.startswith("ina.p4rt.generated") and relative != Path("p4rt/proto.py")
                ):
                    offenders.append(f"{relative}:{node.lineno}: {name}")
    assert offenders == []
