"""Standard pcap files (one per port and direction), for Wireshark and tcpdump."""

import os
import struct
import time
from pathlib import Path

MAGIC, LINKTYPE_ETHERNET, SNAPLEN = 0xA1B2C3D4, 1, 65535


class PcapWriter:
    def __init__(self, path: Path):
        # O_APPEND: the native port loop appends whole records to the same file descriptor.
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND | os.O_CLOEXEC, 0o644)
        self.file = open(fd, "wb")  # noqa: SIM115 - kept open for the switch's lifetime
        self.file.write(struct.pack("<IHHiIII", MAGIC, 2, 4, 0, 0, SNAPLEN, LINKTYPE_ETHERNET))
        self.file.flush()

    def fileno(self) -> int:
        """The file descriptor, flushed first, for a writer in C to append records to."""
        self.file.flush()
        return self.file.fileno()

    def write(self, data: bytes) -> None:
        now = time.time()
        sec = int(now)
        self.file.write(struct.pack("<IIII", sec, int((now - sec) * 1e6), len(data), len(data)) + data)

    def close(self) -> None:
        self.file.close()
