"""Host-only baseline: a parameter server that sums the workers' packets in software.

It speaks the same protocol as the switch (docs/protocol.md), so the same Worker runs against it
by pointing `switch_ip` at the server's host: the benchmarks compare in-network aggregation with
aggregation on a host over the same topology. It serves one job with a fixed set of workers, and
like the switch takes only UPDATEs that carry the job's epoch and echoes it in every RESULT.
"""

import socket
from dataclasses import dataclass, field

import numpy as np

from ina.hosts import packets
from ina.p4src.protocol import HEADER, HEADER_LEN, MSG_RESULT, MSG_UPDATE, UDP_PORT, pool_field


@dataclass
class _Cell:
    bitmap: int = 0
    count: int = 0
    exponent: int = 0
    sums: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))


class ParameterServer:
    def __init__(self, job_id: int, n_workers: int, epoch: int, elems: int = 64, bind_ip: str = "",
                 port: int = UDP_PORT, loss: float = 0.0, seed: int | None = None):
        self.loss = loss
        self.rng = np.random.default_rng(seed)
        self.job_id, self.n_workers, self.epoch, self.elems = job_id, n_workers, epoch, elems
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
        self.sock.bind((bind_ip, port))
        self.cells: dict[tuple[int, int], _Cell] = {}
        self.workers: dict[int, tuple[str, int]] = {}
        self.stats = {"received": 0, "results_sent": 0, "retransmissions_answered": 0, "duplicates": 0,
                      "refused": 0}

    def _result(self, cell: _Cell, pool_set: int, index: int) -> bytes:
        wrapped = ((cell.sums + 2**31) % 2**32 - 2**31).astype(">i4")
        header = HEADER.pack(MSG_RESULT, 0, self.job_id, pool_field(pool_set, index), cell.exponent, 0, self.epoch)
        return header + wrapped.tobytes()

    def handle(self, data: bytes, sender: tuple[str, int]) -> None:
        if len(data) != HEADER_LEN + 4 * self.elems:
            self.stats["refused"] += 1
            return
        if self.loss and self.rng.random() < self.loss:
            return  # emulated loss on the way in
        msg, rank, job, pool_set, index, exponent, epoch = packets.parse_header(data)
        if msg != MSG_UPDATE or job != self.job_id or rank >= self.n_workers or epoch != self.epoch:
            self.stats["refused"] += 1
            return
        self.stats["received"] += 1
        self.workers[rank] = sender
        bit = 1 << rank
        other = self.cells.get((index, 1 - pool_set))
        if other is not None:
            other.bitmap &= ~bit
        cell = self.cells.setdefault((index, pool_set), _Cell())
        if cell.bitmap & bit:
            if cell.count == self.n_workers:
                self.sock.sendto(self._result(cell, pool_set, index), sender)
                self.stats["retransmissions_answered"] += 1
            else:
                self.stats["duplicates"] += 1
            return
        values = packets.values_of(data, self.elems)
        if cell.bitmap == 0:
            cell.sums, cell.count, cell.exponent = values.copy(), 1, exponent
        else:
            cell.sums += values
            cell.count += 1
            cell.exponent = max(cell.exponent, exponent)
        cell.bitmap |= bit
        if cell.count == self.n_workers:
            result = self._result(cell, pool_set, index)
            for r in range(self.n_workers):
                if r in self.workers:
                    self.sock.sendto(result, self.workers[r])
                    self.stats["results_sent"] += 1

    def serve_forever(self) -> None:
        """Serve until `close()` is called."""
        buf = bytearray(65536)
        while True:
            try:
                n, sender = self.sock.recvfrom_into(buf)
            except OSError:
                return
            self.handle(bytes(buf[:n]), sender)

    def close(self) -> None:
        self.sock.close()
