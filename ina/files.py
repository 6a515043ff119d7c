"""The files a user names on an `ina` command line (BMv2 JSON, P4Info), read with one-line errors.

A file that is missing, unreadable, larger than MAX_FILE_BYTES, not UTF-8 where text is due,
nested deeper than Python's parsers recurse, or not of its format raises FileError: one line naming
the file and the problem, which the CLI prints after its own name before exiting 1. Whether the
content makes sense (a program the switch can run, a P4Info that matches it) is the reader's
concern, not this module's. A P4Info's format follows its suffix, as `ina compile` writes it.
"""

import json
from pathlib import Path

MAX_FILE_BYTES = (
    64 << 20
)  # far above any program the code budget accepts (switch/model/budget.py); ends /dev/zero
_SHOWN = 200  # characters of a parser's message kept (some quote the rest of the file)
P4INFO_FORMATS = {".json": "JSON", ".bin": "binary", ".txt": "text", ".txtpb": "text"}  # by suffix


class FileError(Exception):
    """A file the user named that cannot be used; the message is one line and names the file."""


def _one_line(text: str) -> str:
    """A parser's message as one printable line: it may quote the file's bytes."""
    text = "".join(c if c.isprintable() else repr(c)[1:-1] for c in " ".join(text.split()))
    return text if len(text) <= _SHOWN else text[: _SHOWN - 3] + "..."


def read_bytes(path: str | Path, what: str) -> bytes:
    """The whole file, at most MAX_FILE_BYTES; read in one bounded call, so /dev/zero ends too."""
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_FILE_BYTES + 1)
    except OSError as err:
        raise FileError(f"cannot read the {what} {path}: {err.strerror}") from None
    if len(data) > MAX_FILE_BYTES:
        raise FileError(f"the {what} {path} is larger than {MAX_FILE_BYTES >> 20} MiB")
    return data


def read_text(path: str | Path, what: str) -> str:
    """The file as UTF-8 text."""
    data = read_bytes(path, what)
    try:
        return data.decode()
    except UnicodeDecodeError as err:
        raise FileError(
            f"the {what} {path} is not UTF-8 text (byte 0x{data[err.start]:02x} at offset "
            f"{err.start})"
        ) from None


def read_bmv2_json(path: str | Path) -> dict:
    """A JSON file whose top level is an object, as a BMv2 program's is (what else it must hold, the
    switch's schema checks)."""
    what = "BMv2 JSON"
    text = read_text(path, what)
    try:
        value = json.loads(text)
    except RecursionError:
        raise FileError(f"the {what} {path} nests too deeply to read") from None
    except ValueError as err:  # JSONDecodeError, and integers past Python's digit limit
        raise FileError(f"the {what} {path} is not JSON: {_one_line(str(err))}") from None
    if not isinstance(value, dict):
        raise FileError(f"the {what} {path} is not a JSON object at its top level")
    return value


def p4info_format(path: str | Path) -> str:
    """The P4Info format its suffix names; text for any other suffix."""
    return P4INFO_FORMATS.get(Path(path).suffix, "text")


def read_p4info(path: str | Path):
    """A P4Info message from a file in the format of its suffix (P4INFO_FORMATS)."""
    from google.protobuf import json_format, text_format

    from ina.p4rt.proto import p4info_pb2

    kind = p4info_format(path)
    data = read_bytes(path, "P4Info") if kind == "binary" else read_text(path, "P4Info")
    p4info = p4info_pb2.P4Info()
    try:
        if kind == "binary":
            p4info.ParseFromString(data)
        elif kind == "JSON":  # json's own parser first: its RecursionError is ours to name
            json_format.ParseDict(json.loads(data), p4info)
        else:
            text_format.Parse(data, p4info)
    except RecursionError:
        raise FileError(f"the P4Info {path} nests too deeply to read") from None
    except (
        Exception
    ) as err:  # DecodeError, ParseError, and for some input TypeError, UnicodeDecodeError...
        raise FileError(
            f"the P4Info {path} is not a {kind} P4Info: {_one_line(str(err))}"
        ) from None
    return p4info


def write_p4info(p4info, path: str | Path) -> None:
    """Write a P4Info message in the format of the file's suffix (P4INFO_FORMATS)."""
    from google.protobuf import json_format, text_format

    path = Path(path)
    kind = p4info_format(path)
    if kind == "binary":
        path.write_bytes(p4info.SerializeToString())
    elif kind == "JSON":
        path.write_text(json_format.MessageToJson(p4info) + "\n")
    else:
        path.write_text(text_format.MessageToString(p4info))
