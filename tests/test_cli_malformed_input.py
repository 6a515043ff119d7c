"""The `ina` commands that read a user's files (switch, stf, ctl set-pipeline, compile) fed missing,
empty, binary, deeply nested, malformed and oversized ones: exit 1 with one line naming the file and
the problem (ina/files.py), never a traceback. Nothing here starts a switch or reaches one: a file
that did load would still end at an address nothing serves."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ina.compiler import compile_file
from ina.compiler.cli import main as compile_main
from ina.controller.cli import main as ctl_main
from ina.files import write_p4info
from ina.switch.cli import main as switch_main
from ina.switch.stf import main as stf_main

FORWARD = str(Path(__file__).parent / "p4" / "basic_forward.p4")
DEEP = b"[" * 100_000 + b"]" * 100_000
NOWHERE = [
    "--grpc-addr",
    "127.0.0.1:1",
    "--timeout",
    "0.5",
]  # nothing listens: a good pair ends here

# content -> the problem ina.files names for a BMv2 JSON (None: the file does not exist)
JSON_CASES = {
    "missing": (None, "cannot read the BMv2 JSON {path}: No such file or directory"),
    "directory": ("dir", "cannot read the BMv2 JSON {path}: Is a directory"),
    "empty": (b"", "the BMv2 JSON {path} is not JSON: Expecting value: line 1 column 1 (char 0)"),
    "binary": (
        bytes(range(256)),
        "the BMv2 JSON {path} is not UTF-8 text (byte 0x80 at offset 128)",
    ),
    "deep": (DEEP, "the BMv2 JSON {path} nests too deeply to read"),
    "malformed": (
        b'{"a": [1, 2}',
        "the BMv2 JSON {path} is not JSON: Expecting ',' delimiter: line 1 column 12 (char 11)",
    ),
    "list": (b"[1]", "the BMv2 JSON {path} is not a JSON object at its top level"),
}
P4INFO_CASES = {
    "missing": (None, "cannot read the P4Info {path}: No such file or directory"),
    "binary": (bytes(range(256)), "the P4Info {path} is not UTF-8 text (byte 0x80 at offset 128)"),
    "malformed": (
        b"tables { garbage: 1 }",
        "the P4Info {path} is not a text P4Info: 1:10 : Message type "
        '"p4.config.v1.Table" has no field named "garbage".',
    ),
    "deep": (
        b"externs { instances { info { [type.googleapis.com/p4.config.v1.P4Info] { " * 2000
        + b"}}}}" * 2000,
        "the P4Info {path} nests too deeply to read",
    ),
}


def hostile(tmp_path, name: str, content: bytes | str | None, suffix: str):
    path = tmp_path / f"{name}{suffix}"
    if content == "dir":
        path.mkdir()
    elif content is not None:
        path.write_bytes(content)
    return path


@pytest.fixture(scope="module")
def good(tmp_path_factory):
    """A program that loads: its BMv2 JSON, its P4Info and an STF file with nothing to check."""
    d = tmp_path_factory.mktemp("good")
    result = compile_file(FORWARD)
    (d / "prog.json").write_text(json.dumps(result.bmv2))
    write_p4info(result.p4info, d / "prog.p4info.txtpb")
    (d / "empty.stf").write_text("")
    return d


def one_line(capsys) -> str:
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    return err.rstrip("\n")


@pytest.mark.parametrize("case", JSON_CASES)
def test_ina_switch_refuses_a_bad_bmv2_json_in_one_line(tmp_path, capsys, taken_address, case):
    content, problem = JSON_CASES[case]
    path = hostile(tmp_path, case, content, ".json")
    assert switch_main([str(path), "--grpc-server-addr", taken_address]) == 1
    assert one_line(capsys) == "ina switch: " + problem.format(path=path)


@pytest.mark.parametrize("case", JSON_CASES)
def test_ina_stf_refuses_a_bad_bmv2_json_in_one_line(tmp_path, capsys, good, case):
    content, problem = JSON_CASES[case]
    path = hostile(tmp_path, case, content, ".json")
    assert stf_main([str(path), str(good / "empty.stf")]) == 1
    assert one_line(capsys) == "ina stf: " + problem.format(path=path)


@pytest.mark.parametrize("case", JSON_CASES)
def test_ina_ctl_set_pipeline_refuses_a_bad_bmv2_json_before_connecting(
    tmp_path, capsys, good, case
):
    content, problem = JSON_CASES[case]
    path = hostile(tmp_path, case, content, ".json")
    argv = [
        *NOWHERE,
        "set-pipeline",
        "--bmv2-json",
        str(path),
        "--p4info",
        str(good / "prog.p4info.txtpb"),
    ]
    assert ctl_main(argv) == 1
    assert one_line(capsys) == "ina ctl: " + problem.format(path=path)


@pytest.mark.parametrize("case", P4INFO_CASES)
def test_ina_ctl_set_pipeline_refuses_a_bad_p4info_before_connecting(tmp_path, capsys, good, case):
    content, problem = P4INFO_CASES[case]
    path = hostile(tmp_path, case, content, ".txtpb")
    argv = [*NOWHERE, "set-pipeline", "--bmv2-json", str(good / "prog.json"), "--p4info", str(path)]
    assert ctl_main(argv) == 1
    assert one_line(capsys) == "ina ctl: " + problem.format(path=path)


def test_good_files_get_as_far_as_the_switch(capsys, good):
    """The files are read first; a good pair then fails only for want of a switch."""
    argv = [
        *NOWHERE,
        "set-pipeline",
        "--bmv2-json",
        str(good / "prog.json"),
        "--p4info",
        str(good / "prog.p4info.txtpb"),
    ]
    assert ctl_main(argv) == 1
    assert one_line(capsys).startswith(
        "ina ctl: no P4Runtime server answers at 127.0.0.1:1 within 0.5 s"
    )


def test_ina_stf_refuses_a_missing_stf_file_in_one_line(tmp_path, capsys):
    assert stf_main([FORWARD, str(tmp_path / "none.stf")]) == 1
    assert (
        one_line(capsys)
        == f"ina stf: cannot read the STF file {tmp_path / 'none.stf'}: No such file or directory"
    )


@pytest.fixture
def deep_program(tmp_path):
    path = tmp_path / "deep.p4"
    path.write_text(
        "#include <v1model.p4>\ncontrol c() { apply { "
        + "if (true) { " * 5000
        + "}" * 5000
        + " } }\n"
    )
    return path


@pytest.mark.parametrize("command", [compile_main, stf_main])
def test_a_program_nested_past_the_compilers_recursion_is_one_line(
    tmp_path, capsys, deep_program, good, command
):
    argv = (
        [str(deep_program), "-o", str(tmp_path)]
        if command is compile_main
        else [str(deep_program), str(good / "empty.stf")]
    )
    assert command(argv) == 1
    assert (
        one_line(capsys)
        == f"{deep_program}:0:0: error: the program nests too deeply for ina's compiler"
    )


@pytest.mark.parametrize("command", [compile_main, stf_main])
def test_a_compiler_bug_is_one_line_asking_for_a_report(
    tmp_path, capsys, monkeypatch, good, command
):
    def broken(*args):
        raise TypeError("unsupported operand")

    monkeypatch.setattr("ina.compiler.cli.compile_file", broken)
    argv = (
        [FORWARD, "-o", str(tmp_path)]
        if command is compile_main
        else [FORWARD, str(good / "empty.stf")]
    )
    assert command(argv) == 1
    assert one_line(capsys) == (
        f"{FORWARD}:0:0: error: internal compiler error: TypeError: unsupported operand "
        "(a bug in ina's compiler; please report it with the program)"
    )


@pytest.mark.parametrize(
    ("option", "path", "problem"),
    [
        ("--log-file", "none/log", "cannot write {tmp}/none/log: No such file or directory"),
        ("--log-file", ".", "cannot write {tmp}: Is a directory"),
        (
            "--profile",
            "none/profile.json",
            "cannot write {tmp}/none/profile.json: No such file or directory",
        ),
    ],
)
def test_ina_switch_refuses_an_output_path_it_cannot_write_before_starting(
    tmp_path, capsys, option, path, problem
):
    """--profile used to fail only when the switch stopped, with a traceback and the profile lost.
    The program file is missing too, so a check that let the path through still stops there."""
    argv = [str(tmp_path / "missing.json"), "--engine", "python", option, str(tmp_path / path)]
    assert switch_main(argv) == 1
    assert one_line(capsys) == "ina switch: " + problem.format(tmp=tmp_path)


def test_ina_switch_refuses_a_pcap_directory_it_cannot_make(tmp_path, capsys, monkeypatch):
    import socket

    monkeypatch.setattr(
        "ina.switch.io.ports.open_port_socket",
        lambda port, iface: socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM),
    )
    (tmp_path / "taken").write_text("")
    assert switch_main(["--no-p4", "-i", "1@veth-none", "--pcap", str(tmp_path / "taken")]) == 1
    assert one_line(capsys) == f"ina switch: --pcap: cannot write {tmp_path / 'taken'}: File exists"


def test_an_old_profile_survives_a_start_that_fails(tmp_path, capsys):
    profile = tmp_path / "profile.json"
    profile.write_text('{"packets": 7}')
    assert (
        switch_main(
            [str(tmp_path / "missing.json"), "--engine", "native", "--profile", str(profile)]
        )
        == 1
    )
    assert profile.read_text() == '{"packets": 7}'


@pytest.mark.parametrize(
    ("argv", "code", "last_line"),
    [
        (["switch", "{deep}"], 1, "ina switch: the BMv2 JSON {deep} nests too deeply to read"),
        (
            ["stf", "{deep}", "{good}/empty.stf"],
            1,
            "ina stf: the BMv2 JSON {deep} nests too deeply to read",
        ),
        (
            [
                "ctl",
                *NOWHERE,
                "set-pipeline",
                "--bmv2-json",
                "{deep}",
                "--p4info",
                "{good}/prog.p4info.txtpb",
            ],
            1,
            "ina ctl: the BMv2 JSON {deep} nests too deeply to read",
        ),
        (
            [
                "ctl",
                *NOWHERE,
                "set-pipeline",
                "--bmv2-json",
                "{tmp}/binary.json",
                "--p4info",
                "{good}/prog.p4info.txtpb",
            ],
            1,
            "ina ctl: the BMv2 JSON {tmp}/binary.json is not UTF-8 text (byte 0x80 at offset 128)",
        ),
        (
            [
                "ctl",
                *NOWHERE,
                "set-pipeline",
                "--bmv2-json",
                "{tmp}/none.json",
                "--p4info",
                "{good}/prog.p4info.txtpb",
            ],
            1,
            "ina ctl: cannot read the BMv2 JSON {tmp}/none.json: No such file or directory",
        ),
        (
            [
                "ctl",
                *NOWHERE,
                "set-pipeline",
                "--bmv2-json",
                "{good}/prog.json",
                "--p4info",
                "{tmp}/binary.json",
            ],
            1,
            "ina ctl: the P4Info {tmp}/binary.json is not UTF-8 text (byte 0x80 at offset 128)",
        ),
        (
            [
                "ctl",
                *NOWHERE,
                "set-pipeline",
                "--bmv2-json",
                "{good}/prog.json",
                "--p4info",
                "{tmp}/bad.txtpb",
            ],
            1,
            'ina ctl: the P4Info {tmp}/bad.txtpb is not a text P4Info: 1:10 : Message type "p4.config.v1.Table" has no '
            'field named "garbage".',
        ),
        (
            ["train", "--hidden", "1000000000"],
            2,
            "ina train: error: argument --hidden: expected an integer in 1..25756 "
            "(166752 bytes per hidden unit on digits over 4 workers, at most 4 GiB), got '1000000000'",
        ),
    ],
)
def test_issue_28_cases_through_the_ina_command_end_in_one_line(
    tmp_path, good, argv, code, last_line
):
    """The cases issue 28 found, end to end through `python -m ina`: each was a traceback."""
    (tmp_path / "deep.json").write_bytes(DEEP)
    (tmp_path / "binary.json").write_bytes(bytes(range(256)))
    (tmp_path / "bad.txtpb").write_text("tables { garbage: 1 }")
    names = {"deep": tmp_path / "deep.json", "good": good, "tmp": tmp_path}
    done = subprocess.run(
        [sys.executable, "-m", "ina", *(a.format(**names) for a in argv)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert (done.returncode, done.stderr.splitlines()[-1]) == (code, last_line.format(**names))
    assert "Traceback" not in done.stderr
