"""`ina compile`: output files, P4Info formats, -D, and errors without tracebacks."""

import json

import pytest
from compiler_helpers import P4_DIR
from google.protobuf import text_format

from ina.compiler.cli import main
from ina.p4rt.proto import p4info_pb2


def test_writes_json_and_text_p4info(tmp_path):
    assert main([str(P4_DIR / "basic_forward.p4"), "-o", str(tmp_path)]) == 0
    bmv2 = json.loads((tmp_path / "basic_forward.json").read_text())
    assert bmv2["__meta__"]["version"] == [2, 23]
    info = text_format.Parse(
        (tmp_path / "basic_forward.p4info.txtpb").read_text(), p4info_pb2.P4Info()
    )
    assert info.tables[0].preamble.name == "MyIngress.ipv4_lpm"


def test_p4runtime_files_suffix_picks_format(tmp_path):
    target = tmp_path / "info.bin"
    assert (
        main(
            [
                str(P4_DIR / "basic_forward.p4"),
                "-o",
                str(tmp_path),
                "--p4runtime-files",
                str(target),
                "--p4v",
                "16",
            ]
        )
        == 0
    )
    info = p4info_pb2.P4Info.FromString(target.read_bytes())
    assert info.actions


def test_defines_reach_the_preprocessor(tmp_path):
    assert main([str(P4_DIR / "register_accumulate.p4"), "-o", str(tmp_path), "-D", "ELEMS=4"]) == 0
    bmv2 = json.loads((tmp_path / "register_accumulate.json").read_text())
    ops = [p["op"] for a in bmv2["actions"] for p in a["primitives"]]
    assert ops.count("register_read") == 1


def test_rejected_program_exits_1_with_location(tmp_path, capsys):
    bad = tmp_path / "bad.p4"
    bad.write_text("#include <v1model.p4>\nconst bit<8> X = y;\n")
    assert main([str(bad), "-o", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"{bad}:2:18: error: unknown identifier 'y'\n")
    assert "Traceback" not in err


def test_unknown_p4info_suffix_is_a_usage_error(tmp_path, capsys):
    assert (
        main([str(P4_DIR / "basic_forward.p4"), "--p4runtime-files", str(tmp_path / "x.yaml")]) == 2
    )


def test_define_that_is_not_an_identifier_is_a_usage_error(tmp_path, capsys):
    for bad in ("=1", "1X=2", "A B"):
        with pytest.raises(SystemExit) as exit_:
            main([str(P4_DIR / "basic_forward.p4"), "-o", str(tmp_path), "-D", bad])
        assert exit_.value.code == 2
        assert (
            f"argument -D: expected NAME or NAME=VALUE with NAME a C identifier, got {bad!r}"
            in capsys.readouterr().err
        )
