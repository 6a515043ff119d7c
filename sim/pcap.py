"""Captures of a simulated network for Wireshark: one classic pcap file per link direction.

Each `Channel`'s tap writes the real frames (the workers' and the switches') in the order they go
onto the wire, stamped with the virtual time their first bit does, in nanoseconds (the pcap magic
0xa1b23c4d; virtual time 0 reads as 1970-01-01 00:00:00 UTC). Frames lost on the wire are in the
capture (they left the sending port); frames dropped at a full queue are not. So a file holds
exactly the channel's `stats.frames` frames and `stats.bytes` bytes.

Records are kept in a buffer per channel and appended to its file when the buffer fills and at the
end, so a fabric of hundreds of link directions keeps no file open and little memory.
"""

from pathlib import Path

from ina.sim.links import Channel
from ina.switch.io.pcap import MAGIC_NS, file_header, record

FLUSH_BYTES = 1 << 16  # a channel's records buffered before they are appended to its file
NS_PER_S = 10**9


def file_name(channel: Channel) -> str:
    """'h1:0->s1:1' -> 'h1-0_to_s1-1.pcap': the direction's name without a shell's special characters."""
    src, _, dst = channel.name.partition("->")
    return f"{src.replace(':', '-')}_to_{dst.replace(':', '-')}.pcap"


class ChannelCapture:
    """The pcap file of one channel, written from its tap: call(start, frame) per frame."""

    __slots__ = ("_buffer", "path")

    def __init__(self, path: Path):
        self.path = path
        path.write_bytes(file_header(MAGIC_NS))
        self._buffer = bytearray()

    def __call__(self, start: float, frame: bytes | bytearray) -> None:
        seconds, nanoseconds = divmod(round(start * NS_PER_S), NS_PER_S)
        self._buffer += record(seconds, nanoseconds, frame)
        if len(self._buffer) >= FLUSH_BYTES:
            self.flush()

    def flush(self) -> None:
        """Append the buffered records to the file."""
        if self._buffer:
            with self.path.open("ab") as file:
                file.write(self._buffer)
            self._buffer.clear()


def capture(channels: list[Channel], directory: Path) -> list[ChannelCapture]:
    """A capture file in `directory` (made if missing) for each channel, its tap's writer (raises
    OSError). The caller sets each channel's tap and flushes them all at the end."""
    directory.mkdir(parents=True, exist_ok=True)
    return [ChannelCapture(directory / file_name(channel)) for channel in channels]
