"""Standard pcap files (one per port and direction), for Wireshark and tcpdump. `file_header` and
`record` are the format, shared with ina sim's captures in virtual time (ina.sim.pcap)."""

import os
import struct
import time
from pathlib import Path

MAGIC, LINKTYPE_ETHERNET, SNAPLEN = 0xA1B2C3D4, 1, 65535
MAGIC_NS = 0xA1B23C4D  # the same format with nanoseconds in each record's second field


def file_header(magic: int = MAGIC) -> bytes:
    """The file's header: version 2.4, UTC, Ethernet frames of up to SNAPLEN bytes."""
    return struct.pack("<IHHiIII", magic, 2, 4, 0, 0, SNAPLEN, LINKTYPE_ETHERNET)


def record(seconds: int, fraction: int, data: bytes | bytearray) -> bytes:
    """One frame's record: its time (whole seconds and the micro- or nanoseconds its file's magic
    says) and the whole frame."""
    return struct.pack("<IIII", seconds, fraction, len(data), len(data)) + data


class PcapWriter:
    def __init__(self, path: Path):
        # O_APPEND: the native port loop appends whole records to the same file descriptor.
        fd = os.open(
            path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND | os.O_CLOEXEC, 0o644
        )
        self.file = open(fd, "wb")  # noqa: SIM115 - kept open for the switch's lifetime
        self.file.write(file_header())
        self.file.flush()

    def fileno(self) -> int:
        """The file descriptor, flushed first, for a writer in C to append records to."""
        self.file.flush()
        return self.file.fileno()

    def write(self, data: bytes) -> None:
        now = time.time()
        sec = int(now)
        self.file.write(record(sec, int((now - sec) * 1e6), data))

    def close(self) -> None:
        self.file.close()
