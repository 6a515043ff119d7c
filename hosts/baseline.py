"""Host-only baseline: a parameter server that sums the workers' packets in software.

It speaks the same protocol as the switch (docs/protocol.md) under the sync policy, so the same
Worker runs against it by pointing `switch_ip` at the server's host: the benchmarks compare
in-network aggregation with aggregation on a host over the same topology. It serves one job with a
fixed set of workers, and like the switch takes only UPDATEs that carry the job's epoch, never
mixes rounds in a sum, answers a retransmission with the RESULT (done) or a STATUS to every
worker (counted, waiting for others), and refuses a round it cannot start with a STATUS naming
the round it holds. `ServerCore` is that protocol without I/O (a simulated host runs it too);
`ParameterServer` serves it on a UDP socket, on a port of its own by default (the kernel's choice,
`port`), so servers of concurrent runs on one host never share one; `ina worker --baseline-server`
asks for the protocol's port, which the emulated workers address on their own hosts.
"""

import socket
from dataclasses import dataclass, field

import numpy as np

from ina.hosts import packets
from ina.p4src.protocol import (
    FLAG_ZERO,
    FLAGS_OFFSET,
    HEADER_LEN,
    MSG_RESULT,
    MSG_STATUS,
    MSG_UPDATE,
    round_newer,
)


@dataclass
class _Cell:
    """One slot/set: the round it holds and that round's sum so far."""

    round: int
    bitmap: int = 0
    count: int = 0
    exponent: int = 0
    sums: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))


Address = tuple[str, int]


class ServerCore:
    """The parameter server's protocol without I/O: `handle` takes a datagram and its sender and
    returns the datagrams to send, each with its address, in order. A UDP socket (ParameterServer)
    or a simulated host (ina.sim.ps) drives it."""

    def __init__(
        self, job_id: int, n_workers: int, epoch: int, elems: int = 64, fallback: bool = False
    ):
        self.job_id, self.n_workers, self.epoch, self.elems = job_id, n_workers, epoch, elems
        # A job's host fallback server sums only the uses the switch could not (docs/protocol.md,
        # "Best effort and the host fallback"): a use it never completed was completed by the
        # switch, so a later round of the set replaces it.
        self.fallback = fallback
        self.cells: dict[tuple[int, int], _Cell] = {}
        self.workers: dict[int, Address] = {}
        self.stats = {
            "received": 0,
            "results_sent": 0,
            "retransmissions_answered": 0,
            "duplicates": 0,
            "stale": 0,
            "refused": 0,
        }

    def _answer(self, msg: int, cell: _Cell, rank: int, index: int) -> bytes:
        """A RESULT (the sums) or a STATUS (no sum: the values are zeros) of `cell`."""
        return packets.datagram(
            msg,
            self.epoch,
            cell.sums if msg == MSG_RESULT else np.zeros(self.elems),
            rank=rank,
            job=self.job_id,
            index=index,
            round_=cell.round,
            exponent=cell.exponent,
            count=cell.count,
            bitmap=cell.bitmap,
        )

    def handle(self, data: bytes, sender: Address) -> list[tuple[bytes, Address]]:
        """What to send in answer to `data` from `sender` (nothing, one answer, or one per worker)."""
        zero = len(data) == HEADER_LEN and data[FLAGS_OFFSET] & FLAG_ZERO  # all zeros, no values
        if len(data) != HEADER_LEN + 4 * self.elems and not zero:
            self.stats["refused"] += 1
            return []
        h = packets.parse_header(data)
        if (
            h.msg_type != MSG_UPDATE
            or h.job != self.job_id
            or h.rank >= self.n_workers
            or h.epoch != self.epoch
        ):
            self.stats["refused"] += 1
            return []
        self.stats["received"] += 1
        self.workers[h.rank] = sender
        bit, done = 1 << h.rank, self.n_workers
        cell = self.cells.get((h.index, h.pool_set))
        if cell is None or (
            cell.round != h.round
            and (cell.count == done or self.fallback)
            and round_newer(h.round, cell.round)
        ):
            cell = self.cells[h.index, h.pool_set] = _Cell(h.round)  # the set's next use
        elif cell.round != h.round:  # an earlier round, or a later one over a use not done
            self.stats["stale"] += 1
            return [(self._answer(MSG_STATUS, cell, h.rank, h.index), sender)]
        if cell.bitmap & bit:
            if cell.count == done:
                self.stats["retransmissions_answered"] += 1
                return [(self._answer(MSG_RESULT, cell, h.rank, h.index), sender)]
            self.stats["duplicates"] += (
                1  # to every worker, as the switch multicasts it: a missing one resends now
            )
            return self._to_all(self._answer(MSG_STATUS, cell, h.rank, h.index))
        values = np.zeros(self.elems, np.int64) if zero else packets.values_of(data, self.elems)
        if cell.bitmap == 0:
            cell.sums, cell.count, cell.exponent = values.copy(), 1, h.exponent
        else:
            cell.sums += values
            cell.count += 1
            cell.exponent = max(cell.exponent, h.exponent)
        cell.bitmap |= bit
        if cell.count < done:
            return []
        answers = self._to_all(self._answer(MSG_RESULT, cell, h.rank, h.index))
        self.stats["results_sent"] += len(answers)
        return answers

    def _to_all(self, answer: bytes) -> list[tuple[bytes, Address]]:
        """`answer` to every worker heard from so far."""
        return [(answer, address) for address in self.workers.values()]


class ParameterServer(ServerCore):
    """The server on a UDP socket, optionally losing a share of what arrives (emulated loss)."""

    def __init__(
        self,
        job_id: int,
        n_workers: int,
        epoch: int,
        elems: int = 64,
        bind_ip: str = "",
        port: int = 0,
        loss: float = 0.0,
        seed: int | None = None,
        fallback: bool = False,
    ):
        super().__init__(job_id, n_workers, epoch, elems, fallback)
        self.loss = loss
        self.rng = np.random.default_rng(seed)
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
        self.sock.bind((bind_ip, port))
        self.port: int = self.sock.getsockname()[1]  # the one bound: `port`, or the kernel's choice

    def handle(self, data: bytes, sender: Address) -> list[tuple[bytes, Address]]:
        """Answer `data` on the socket (unless the emulated loss takes it on the way in)."""
        if len(data) >= HEADER_LEN and self.loss and self.rng.random() < self.loss:
            return []
        answers = super().handle(data, sender)
        for answer, address in answers:
            self.sock.sendto(answer, address)
        return answers

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
