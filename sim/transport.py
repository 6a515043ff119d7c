"""A reliable transport over the simulated network, as RoCE's reliable connection (RC) runs in a NIC.

A message (a bytes object) is cut into frames of at most `mtu` payload bytes, each a real RoCEv2
frame: Ethernet, IPv4, UDP to port 4791, the 12-byte base transport header (opcode SEND
FIRST/MIDDLE/LAST/ONLY, destination QP, the ack-request bit, a 24-bit packet sequence number) and
the 4-byte ICRC after the payload (left zero). The receiver accepts frames in PSN order only
(go-back-N, as RC does): an in-order frame is taken, one past a gap is dropped and answered with a
single NAK (PSN sequence error) naming the PSN it expects, a duplicate is answered with an ACK. It
ACKs (an ACK frame: base transport header and AETH, 62 bytes) each frame that asks: every
`ack_every`-th frame of a message, its last, every resend, and the one that fills the window. The sender keeps at most `window`
frames unacknowledged; a NAK sends it back to the PSN named, and a timeout (no ACK for `timeout`
seconds while frames are outstanding, the IB local ACK timeout, 4.096 us x 2^t) back to the oldest
unacknowledged frame, up to `retries` times in a row before it gives up (TransportError).

The transport runs in the NIC, as RoCE's does: it costs the host's CPU nothing, and the NIC hands
a data frame to the link only when the link is free to take it (so its own queue never fills),
while ACKs go out at once, between data frames. No congestion control (DCQCN) and no PFC:
`window` alone bounds what is in flight. docs/simulation.md has the model and its checks.
"""

import math
import struct
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from ina.hosts.inprocess import FRAME_HEADERS
from ina.sim.events import Simulator
from ina.sim.frames import udp_headers
from ina.sim.links import wire_bits

ROCE_PORT = 4791  # RoCEv2's UDP destination port
SOURCE_PORT = 0xC000  # + the QP: the UDP source port RoCEv2 NICs pick per flow
BTH = struct.Struct(
    "!BBHII"
)  # opcode, flags, partition key, reserved:8 + destination QP:24, ack request:1 + reserved:7 + PSN:24
AETH = struct.Struct("!I")  # syndrome:8 + message sequence number:24
ICRC = b"\0\0\0\0"
SEND_FIRST, SEND_MIDDLE, SEND_LAST, SEND_ONLY, ACKNOWLEDGE = 0x00, 0x01, 0x02, 0x04, 0x11
ACK_SYNDROME, NAK_SEQUENCE = 0x00, 0x60  # AETH syndromes: ACK; NAK, PSN sequence error
ACK_REQUEST = 1 << 31
PSN_MASK = (1 << 24) - 1
DATA_OVERHEAD = (
    FRAME_HEADERS + BTH.size + len(ICRC)
)  # 58 bytes of every data frame beyond its payload
ACK_FRAME = FRAME_HEADERS + BTH.size + AETH.size + len(ICRC)  # 62 bytes
_PKEY = 0xFFFF
_LAST = (SEND_LAST, SEND_ONLY)


class TransportError(Exception):
    """A connection cannot deliver: a frame went unacknowledged through every retry."""


@dataclass(frozen=True)
class TransportSpec:
    """RC's parameters: payload bytes per frame (the path MTU: 4096 needs jumbo frames, 1024 fits
    1500-byte Ethernet), frames in flight, frames per ACK request, the local ACK timeout (s) and
    the retries before the connection fails."""

    mtu: int = 4096
    window: int = 64
    ack_every: int = 8
    timeout: float = 4.096e-6 * 2**14  # IB's local ACK timeout exponent 14: 67 ms
    retries: int = 7

    def frames(self, message_bytes: int) -> int:
        """Data frames of a message (an empty one still takes one)."""
        return max(1, -(-message_bytes // self.mtu))

    def acks(self, message_bytes: int) -> int:
        """ACK frames a message's receiver sends without loss while the window never fills: one per
        `ack_every` frames and one for the last."""
        return -(-self.frames(message_bytes) // self.ack_every)

    def endpoint(
        self, sim: Simulator, address: "Address", send: Callable[[float, bytes], None], rate: float
    ) -> "Nic":
        return Nic(sim, address, send, rate)

    def connect(
        self, sender: "Nic", receiver: "Nic", flow: int, deliver: Callable[[float, bytes], None]
    ) -> "Sender":
        return connect(sender, receiver, flow, self, deliver)

    def wire_bits(self, message_bytes: int) -> tuple[int, int]:
        """The bits a message's data frames occupy its sender's link for, and its ACKs the
        receiver's (docs/simulation.md)."""
        full, rest = divmod(message_bytes, self.mtu)
        data = full * wire_bits(DATA_OVERHEAD + self.mtu) + (
            wire_bits(DATA_OVERHEAD + rest) if rest or not full else 0
        )
        return data, self.acks(message_bytes) * wire_bits(ACK_FRAME)


ROCE = (
    TransportSpec()
)  # the defaults: 4096-byte MTU, 64 frames in flight, an ACK per 8, 67 ms timeout


Address = tuple[str, str]  # (MAC, IPv4 address)


class Nic:
    """A host's RDMA NIC: its link (`send(time, frame)` at `rate` bit/s), the connections it
    serves, and the clock of its link's serializer, so a data frame goes out only when the link is
    free. Frames arriving for the host are handed to `receive`."""

    def __init__(
        self, sim: Simulator, address: Address, send: Callable[[float, bytes], None], rate: float
    ):
        self.sim, self.address, self._send, self.rate = sim, address, send, rate
        self.free_at = 0.0  # when the link has serialized every frame handed to it
        self.senders: dict[int, Sender] = {}  # by this side's QP
        self.receivers: dict[int, Receiver] = {}
        self._rotation: deque[Sender] = deque()
        self._pulling = False

    def add_sender(self, sender: "Sender") -> None:
        """Serve `sender`'s frames, in turn with the others'."""
        self.senders[sender.qp] = sender
        self._rotation.append(sender)

    def transmit(self, now: float, frame: bytes) -> None:
        start = self.free_at if self.free_at > now else now
        self.free_at = start + wire_bits(len(frame)) / self.rate
        self._send(now, frame)

    def kick(self, now: float) -> None:
        """A sender has a frame to send: pull one when the link is free."""
        if not self._pulling:
            self._pulling = True
            self.sim.at(max(now, self.free_at), self._pull)

    def _pull(self, now: float) -> None:
        """The link is free: the next sender in turn with a frame sends it."""
        self._pulling = False
        rotation = self._rotation
        for _ in range(len(rotation)):
            sender = rotation[0]
            rotation.rotate(-1)
            frame = sender.next_frame(now)
            if frame is not None:
                self.sim.now = now
                self.transmit(now, frame)
                self.kick(now)
                return

    def receive(self, now: float, frame: bytes) -> None:
        """A frame reached the host: to the connection its destination QP names."""
        opcode, _flags, _pkey, qp, psn = BTH.unpack_from(frame, FRAME_HEADERS)
        qp &= PSN_MASK
        if opcode == ACKNOWLEDGE:
            sender = self.senders.get(qp)
            if sender is not None:
                self.sim.now = now
                sender.acknowledged(
                    now, AETH.unpack_from(frame, FRAME_HEADERS + BTH.size)[0], psn & PSN_MASK
                )
        else:
            receiver = self.receivers.get(qp)
            if receiver is not None:
                self.sim.now = now
                end = (
                    14 + int.from_bytes(frame[16:18], "big") - len(ICRC)
                )  # by IPv4's length: a short frame may be padded
                receiver.arrived(now, opcode, psn, frame[FRAME_HEADERS + BTH.size : end])


def _headers(src: Address, dst: Address, qp: int, payload_len: int) -> bytes:
    return udp_headers((*src, SOURCE_PORT + qp), (*dst, ROCE_PORT), payload_len)


@dataclass(eq=False)
class _Message:
    first: int  # its first frame's PSN (unwrapped)
    frames: int
    data: bytes


class Sender:
    """The requester side of one connection: messages posted in order, delivered in order."""

    def __init__(self, nic: Nic, qp: int, peer: Address, spec: TransportSpec):
        self.nic, self.qp, self.peer, self.spec = nic, qp, peer, spec
        self.una = (
            0  # the oldest unacknowledged PSN (PSNs here are unwrapped; frames carry them mod 2^24)
        )
        self.nxt = 0  # the next PSN to send
        self.end = 0  # one past the last PSN posted
        self.high = 0  # one past the highest PSN ever sent: below it, a send is a resend
        self.frames_sent = self.retransmissions = self.timeouts = 0
        self._messages: deque[_Message] = deque()  # posted and not wholly acknowledged
        self._deadline = math.inf
        self._tries = 0  # timeouts in a row without progress
        nic.add_sender(self)

    def post(self, now: float, data: bytes) -> None:
        """Queue a message to send after those before it."""
        message = _Message(self.end, self.spec.frames(len(data)), data)
        self._messages.append(message)
        self.end += message.frames
        self.nic.kick(now)

    def next_frame(self, now: float) -> bytes | None:
        """The frame to send now, if the window and the messages allow one."""
        psn = self.nxt
        if psn >= self.end or psn >= self.una + self.spec.window:
            return None
        message = next(m for m in self._messages if m.first + m.frames > psn)
        index, mtu = psn - message.first, self.spec.mtu
        last = index == message.frames - 1
        opcode = (
            (SEND_ONLY if index == 0 else SEND_LAST)
            if last
            else (SEND_FIRST if index == 0 else SEND_MIDDLE)
        )
        resend = psn < self.high
        ask = (
            last
            or resend
            or (index + 1) % self.spec.ack_every == 0
            or psn + 1 == self.una + self.spec.window
        )
        payload = message.data[index * mtu : (index + 1) * mtu]
        self.nxt = psn + 1
        self.high = max(self.high, self.nxt)
        self.frames_sent += 1
        self.retransmissions += resend
        if self._deadline == math.inf:
            self._arm(now)
        bth = BTH.pack(opcode, 0, _PKEY, self.qp, (ACK_REQUEST if ask else 0) | psn & PSN_MASK)
        return (
            _headers(self.nic.address, self.peer, self.qp, BTH.size + len(payload) + len(ICRC))
            + bth
            + payload
            + ICRC
        )

    def acknowledged(self, now: float, aeth: int, psn: int) -> None:
        """An ACK (every PSN up to `psn` arrived) or a NAK (the receiver expects `psn`)."""
        nak = aeth >> 24 == NAK_SEQUENCE
        base = self.una - 1 if not nak else self.una
        got = base + ((psn - base) & PSN_MASK)  # unwrapped, at or after base
        if got > self.high - (0 if nak else 1):
            return  # not a PSN this sender sent
        una = got if nak else got + 1
        if una > self.una:
            self.una, self._tries = una, 0
            while self._messages and self._messages[0].first + self._messages[0].frames <= una:
                self._messages.popleft()
        if nak:
            self.nxt = self.una  # go back N
        self.nxt = max(self.nxt, self.una)
        self._deadline = math.inf
        if self.una < self.nxt or nak:
            self._arm(now)
        if self.nxt < self.end:
            self.nic.kick(now)

    def _arm(self, now: float) -> None:
        self._deadline = now + self.spec.timeout
        self.nic.sim.at(self._deadline, self._timeout)

    def _timeout(self, now: float) -> None:
        if now != self._deadline:
            return  # superseded
        self._deadline = math.inf
        if self.una >= self.high:
            return  # nothing outstanding
        self.nic.sim.now = now
        self._tries += 1
        self.timeouts += 1
        if self._tries > self.spec.retries:
            raise TransportError(
                f"QP {self.qp} to {self.peer[1]}: PSN {self.una} unacknowledged after "
                f"{self.spec.retries} retries of {self.spec.timeout * 1e3:g} ms"
            )
        self.nxt = self.una
        self._arm(now)
        self.nic.kick(now)


class Receiver:
    """The responder side of one connection: frames taken in PSN order, each message handed to
    `deliver(time, data)` when its last frame arrives."""

    def __init__(
        self,
        nic: Nic,
        qp: int,
        peer: Address,
        spec: TransportSpec,
        deliver: Callable[[float, bytes], None],
    ):
        self.nic, self.qp, self.peer, self.spec, self.deliver = nic, qp, peer, spec, deliver
        self.expected = 0  # the next PSN to take (unwrapped)
        self.naks = self.duplicates = self.out_of_order = 0
        self._nak_sent = False  # one NAK per gap
        self._parts: list[bytes] = []
        nic.receivers[qp] = self

    def arrived(self, now: float, opcode: int, psn_field: int, payload: bytes) -> None:
        psn = psn_field & PSN_MASK
        ahead = (psn - self.expected) & PSN_MASK
        if ahead == 0:
            self.expected += 1
            self._nak_sent = False
            self._parts.append(payload)
            if psn_field & ACK_REQUEST:
                self._answer(now, ACK_SYNDROME, self.expected - 1)
            if opcode in _LAST:
                data, self._parts = b"".join(self._parts), []
                self.deliver(now, data)
        elif ahead < 1 << 23:  # past a gap: a frame before it was lost
            self.out_of_order += 1
            if not self._nak_sent:
                self._nak_sent = True
                self.naks += 1
                self._answer(now, NAK_SEQUENCE, self.expected)
        else:  # a frame already taken, resent
            self.duplicates += 1
            if psn_field & ACK_REQUEST:
                self._answer(now, ACK_SYNDROME, self.expected - 1)

    def _answer(self, now: float, syndrome: int, psn: int) -> None:
        bth = BTH.pack(ACKNOWLEDGE, 0, _PKEY, self.qp, psn & PSN_MASK)
        aeth = AETH.pack(syndrome << 24 | self.expected & PSN_MASK)
        self.nic.transmit(
            now,
            _headers(self.nic.address, self.peer, self.qp, BTH.size + AETH.size + len(ICRC))
            + bth
            + aeth
            + ICRC,
        )


def connect(
    sender_nic: Nic,
    receiver_nic: Nic,
    qp: int,
    spec: TransportSpec,
    deliver: Callable[[float, bytes], None],
) -> Sender:
    """A connection from one NIC to another (QP `qp` at both ends); returns its sender."""
    Receiver(receiver_nic, qp, sender_nic.address, spec, deliver)
    return Sender(sender_nic, qp, receiver_nic.address, spec)
