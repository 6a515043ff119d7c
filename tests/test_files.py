"""ina/files.py: a user's BMv2 JSON and P4Info, refused in one line naming the file and the problem."""

import pytest
from google.protobuf import text_format

from ina import files
from ina.files import FileError, read_bmv2_json, read_p4info, write_p4info
from ina.p4rt.proto import p4info_pb2

DEEP = "[" * 100_000 + "]" * 100_000  # past the recursion of Python's json and protobuf parsers


def refusal(read, path) -> str:
    with pytest.raises(FileError) as err:
        read(path)
    return str(err.value)


BIG_INT = (
    "is not JSON: Exceeds the limit (4300 digits) for integer string conversion: value has 5000 digits; "
    "use sys.set_int_max_str_digits() to increase the limit"
)


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (b"", "is not JSON: Expecting value: line 1 column 1 (char 0)"),
        (b'{"a": [1, 2}', "is not JSON: Expecting ',' delimiter: line 1 column 12 (char 11)"),
        (b"\x00\x01\x02", "is not JSON: Expecting value: line 1 column 1 (char 0)"),
        (b'{"a": "\xff"}', "is not UTF-8 text (byte 0xff at offset 7)"),
        ("{}".encode("utf-16"), "is not UTF-8 text (byte 0xff at offset 0)"),
        (DEEP.encode(), "nests too deeply to read"),
        (b'{"a":' * 100_000 + b"1" + b"}" * 100_000, "nests too deeply to read"),
        (b"[1, 2]", "is not a JSON object at its top level"),
        (b'{"a": ' + b"9" * 5000 + b"}", BIG_INT),
    ],
)
def test_a_json_that_cannot_be_read_is_one_line_naming_file_and_problem(tmp_path, content, problem):
    path = tmp_path / "prog.json"
    path.write_bytes(content)
    assert refusal(read_bmv2_json, path) == f"the BMv2 JSON {path} {problem}"


def test_missing_directory_and_oversized_files_are_refused_before_parsing(tmp_path, monkeypatch):
    assert (
        refusal(read_bmv2_json, tmp_path / "none.json")
        == f"cannot read the BMv2 JSON {tmp_path / 'none.json'}: No such file or directory"
    )
    assert (
        refusal(read_bmv2_json, tmp_path) == f"cannot read the BMv2 JSON {tmp_path}: Is a directory"
    )
    assert refusal(read_p4info, tmp_path) == f"cannot read the P4Info {tmp_path}: Is a directory"
    # /dev/zero never ends: the read is bounded, so it is refused as too large
    assert refusal(read_bmv2_json, "/dev/zero") == "the BMv2 JSON /dev/zero is larger than 64 MiB"
    monkeypatch.setattr(files, "MAX_FILE_BYTES", 8)
    (tmp_path / "nine.json").write_text('{"a": 12}')
    assert (
        refusal(read_bmv2_json, tmp_path / "nine.json")
        == f"the BMv2 JSON {tmp_path / 'nine.json'} is larger than 0 MiB"
    )
    (tmp_path / "eight.json").write_text('{"a": 1}')
    assert read_bmv2_json(tmp_path / "eight.json") == {"a": 1}


def _p4info() -> p4info_pb2.P4Info:
    info = p4info_pb2.P4Info()
    table = info.tables.add()
    table.preamble.id, table.preamble.name = 33554433, "MyIngress.ipv4_lpm"
    return info


@pytest.mark.parametrize("suffix", [".txtpb", ".txt", ".json", ".bin", ".p4info"])
def test_a_p4info_reads_back_in_the_format_its_suffix_names(tmp_path, suffix):
    path = tmp_path / f"prog{suffix}"
    write_p4info(_p4info(), path)
    assert read_p4info(path) == _p4info()
    if suffix in (".txtpb", ".txt", ".p4info"):
        assert text_format.Parse(path.read_text(), p4info_pb2.P4Info()) == _p4info()


BINARY = "is not a binary P4Info: Error parsing message with type 'p4.config.v1.P4Info'"


@pytest.mark.parametrize(
    ("name", "content", "problem"),
    [
        (
            "p.txtpb",
            b"tables { garbage: 1 }",
            'is not a text P4Info: 1:10 : Message type "p4.config.v1.Table" has no field named "garbage".',
        ),
        ("p.txtpb", bytes(range(256)), "is not UTF-8 text (byte 0x80 at offset 128)"),
        (
            "p.txtpb",
            b"\x00\x00",
            "is not a text P4Info: 1:1 : '\\x00\\x00': Expected identifier or number, got \\x00.",
        ),
        (
            "p.txtpb",
            b"[" * 1000,
            "is not a text P4Info: 1:2 : '" + "[" * 190 + "...",
        ),  # the parser's message cut
        (
            "p.txtpb",
            b"externs { instances { info { [type.googleapis.com/p4.config.v1.P4Info] { " * 2000
            + b"}}}}" * 2000,
            "nests too deeply to read",
        ),
        # protobuf's upb parser names the message, not the fault: a field number of 0, a wrong wire
        # type, a truncated message and a string that is not UTF-8 all read the same
        ("p.bin", b"\x00\x01", BINARY),
        ("p.bin", b"\x0f\x01", BINARY),
        ("p.bin", b"\x0a\x05\x0a", BINARY),
        (
            "p.json",
            b'{"tables": 5}',
            "is not a JSON P4Info: Failed to parse tables field: repeated field tables must "
            "be in [] which is 5 at P4Info.",
        ),
        ("p.json", DEEP.encode(), "nests too deeply to read"),
        # protobuf's parsers raise more than their own errors for some input: one line all the same
        ("p.json", b"5", "is not a JSON P4Info: 'int' object is not iterable"),
        ("p.bin", b"\x12\x05\x0a\x03\x12\x01\xe4", BINARY),
    ],
)
def test_a_p4info_that_cannot_be_read_is_one_line_naming_file_and_problem(
    tmp_path, name, content, problem
):
    path = tmp_path / name
    path.write_bytes(content)
    assert refusal(read_p4info, path) == f"the P4Info {path} {problem}"
