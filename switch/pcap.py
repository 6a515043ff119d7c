"""Standard pcap files (one per port and direction), for Wireshark and tcpdump."""

import struct
import time
from pathlib import Path

MAGIC, LINKTYPE_ETHERNET, SNAPLEN = 0xA1B2C3D4, 1, 65535


class PcapWriter:
    def __init__(self, path: Path):
        self.file = open(path, "wb")  # noqa: SIM115 - kept open for the switch's lifetime
        self.file.write(struct.pack("<IHHiIII", MAGIC, 2, 4, 0, 0, SNAPLEN, LINKTYPE_ETHERNET))

    def write(self, data: bytes) -> None:
        now = time.time()
        sec = int(now)
        self.file.write(struct.pack("<IIII", sec, int((now - sec) * 1e6), len(data), len(data)) + data)

    def close(self) -> None:
        self.file.close()
