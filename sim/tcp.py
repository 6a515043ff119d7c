"""A TCP connection over the simulated network, as Linux runs one between two hosts (the transport
emulation's ring uses: hosts/ring.py), beside sim/transport.py's RoCE.

Frames are real TCP/IPv4/Ethernet frames (sim/frames.py): 66 bytes of headers with the timestamp
option, segments of at most `mss` payload bytes (1,448 on 1500-byte Ethernet), pure ACKs of 66
bytes. The connection is established before the run (no handshake) and carries one way: the sender's
stream of messages to the receiver, which hands each message on when its last byte arrives in order.

- Sender: sends while the bytes in flight stay within the congestion window and the receiver's
  window; Reno congestion control (RFC 5681): slow start from `initial_window` segments (IW10, RFC
  6928), by the segments each ACK covers, up to ssthresh, then one segment per window's worth of
  ACKs; fast retransmit on the third duplicate ACK and NewReno's recovery (RFC 6582: partial ACKs
  resend the next hole, the window inflated by one per further duplicate); a retransmission timeout
  per RFC 6298 (SRTT and RTTVAR from ACKs of segments sent once, Karn's rule; first RTO 1 s, floor
  `min_rto` as Linux's 200 ms, doubled per expiry) resends from the oldest unacknowledged byte with
  a window of one segment. After an idle period longer than the RTO the window restarts at no more
  than IW (RFC 2861, Linux's tcp_slow_start_after_idle).
- Receiver: acknowledges every second full segment, or after `delayed_ack` (Linux's 40 ms floor) when
  only one is unacknowledged; at once a segment out of order (a duplicate ACK), one that fills a hole,
  and a duplicate. It keeps out-of-order segments (as Linux's out-of-order queue) and consumes in
  order at once, so its window stays `receive_window` bytes.
- The host: the connection runs in the kernel and shares the host's one egress FIFO (its link's
  queue in the model, Mininet's qdisc) with every other connection's frames, ACKs included. Data is
  handed to the link while at most `host_queue` bytes wait for it (a qdisc limit: Linux's TCP small
  queues and the socket's pacing hold data back in the socket rather than drop it in the host);
  ACKs go at once, behind whatever waits.

Left out: SACK (Linux negotiates it; NewReno is what remains without it), CUBIC (Linux's default;
at these windows and round trips its TCP-friendly region grows as Reno does) and BBR (a host may
default to it: emulation then sets CONGESTION_CONTROL on its hosts), quick-ACK mode at a
connection's start, pacing, TSO/GSO, receive-buffer autotuning, Nagle (hosts/ring.py sets
TCP_NODELAY), checksums (zero). docs/simulation.md has the model and its checks.
"""

import math
import socket
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from ina.sim.events import Simulator
from ina.sim.frames import TCP, TCP_ACK, TCP_HEADERS, TCP_MSS, TCP_PSH, tcp_headers
from ina.sim.links import wire_bits
from ina.sim.transport import Address, TransportError

LISTEN_PORT = 29500  # the receiver's port (hosts/ring.py's)
SOURCE_PORT = 0xC000  # + the connection's number: the sender's port
WINDOW_SCALE = 7  # the window field's shift (Linux's for its default buffers)
CONGESTION_CONTROL = "reno"  # Linux's name (net.ipv4.tcp_congestion_control) of the one modelled
_TCP_AT = 34  # the TCP header's offset in a frame (IPv4 without options)


@dataclass(frozen=True)
class TcpSpec:
    """A Linux TCP connection's parameters: payload bytes per segment, the initial window
    (segments), the receiver's window (bytes), the delayed-ACK timeout, the RTO floor, the first RTO
    (before an RTT sample), RTO expiries in a row before the connection fails, and the data bytes a
    host lets wait for its link."""

    mss: int = TCP_MSS
    initial_window: int = 10
    receive_window: int = 3 << 20
    delayed_ack: float = 0.04
    min_rto: float = 0.2
    initial_rto: float = 1.0
    retries: int = 15
    host_queue: int = 64 << 10

    def endpoint(
        self, sim: Simulator, address: Address, send: Callable[[float, bytes], None], rate: float
    ) -> "Host":
        return Host(sim, address, send, rate, self)

    def connect(
        self, sender: "Host", receiver: "Host", flow: int, deliver: Callable[[float, bytes], None]
    ) -> "Sender":
        return connect(sender, receiver, flow, self, deliver)


TCP_LINUX = TcpSpec()


class Host:
    """A host's TCP stack on its link (`send(time, frame)` at `rate` bit/s): its connections' ends,
    by (local port, peer's IPv4 address, peer's port), and the clock of its link's serializer, so data waits in the
    socket once `host_queue` bytes wait for the link. Frames arriving are handed to `receive`."""

    def __init__(
        self,
        sim: Simulator,
        address: Address,
        send: Callable[[float, bytes], None],
        rate: float,
        spec: TcpSpec,
    ):
        self.sim, self.address, self._send, self.rate, self.spec = sim, address, send, rate, spec
        self.free_at = 0.0  # when the link has serialized every frame handed to it
        self.ends: dict[tuple[int, str, int], Sender | Receiver] = {}
        self._rotation: deque[Sender] = deque()
        self._pulling = False

    def add_sender(self, sender: "Sender") -> None:
        """Serve `sender`'s data, in turn with the others'."""
        self.ends[(sender.port, sender.peer[1], LISTEN_PORT)] = sender
        self._rotation.append(sender)

    def transmit(self, now: float, frame: bytes) -> None:
        start = self.free_at if self.free_at > now else now
        self.free_at = start + wire_bits(len(frame)) / self.rate
        self._send(now, frame)

    def has_room(self, now: float) -> bool:
        """Whether fewer than `host_queue` bytes wait for (or on) the link at `now` (to a picosecond:
        `kick` wakes at the instant the queue falls to the limit)."""
        return (self.free_at - now) * self.rate / 8 < self.spec.host_queue + self.rate * 1e-12

    def kick(self, now: float) -> None:
        """A sender may have data to send: pull when the host's queue has room."""
        if not self._pulling:
            self._pulling = True
            room_at = self.free_at - self.spec.host_queue * 8 / self.rate
            self.sim.at(max(now, room_at), self._pull)

    def _pull(self, now: float) -> None:
        """Every sender in turn hands the link what its windows allow, while the queue has room; the
        next pull starts with the next sender."""
        self._pulling = False
        self.sim.now = now
        blocked = False
        for sender in list(self._rotation):
            blocked |= sender.push(now)
        self._rotation.rotate(-1)
        if blocked:
            self.kick(now)

    def receive(self, now: float, frame: bytes) -> None:
        """A frame reached the host: to the connection's end its ports and peer name."""
        src_port, dst_port, seq, ack, _flags, window, _check, _urgent = TCP.unpack_from(
            frame, _TCP_AT
        )
        end = self.ends.get((dst_port, socket.inet_ntoa(frame[26:30]), src_port))
        if end is None:
            return
        self.sim.now = now
        payload = frame[
            TCP_HEADERS : 14 + int.from_bytes(frame[16:18], "big")
        ]  # by IPv4's length: a short frame may be padded
        if isinstance(end, Sender):
            end.acknowledged(now, ack, window << WINDOW_SCALE, bool(payload))
        else:
            end.arrived(now, seq, payload)


class Sender:
    """The sending end of one connection: messages posted in order, one byte stream."""

    def __init__(self, host: Host, port: int, peer: Address, spec: TcpSpec, receiver: "Receiver"):
        self.host, self.port, self.peer, self.spec = host, port, peer, spec
        self._receiver = (
            receiver  # told each message's length, to cut the stream as hosts/ring.py knows to
        )
        self._stream = bytearray()  # posted bytes from `una` on
        self.una = self.nxt = self.high = self.end = 0  # sequence numbers, unwrapped, from 0
        self.cwnd = float(spec.initial_window)  # segments
        self.ssthresh = math.inf
        self.peer_window = spec.receive_window
        self.dupacks = 0
        self.recover: int | None = None  # NewReno: the highest sequence sent when recovery began
        self.srtt: float | None = None
        self.rttvar = 0.0
        self.rto = spec.initial_rto
        self.frames_sent = self.retransmissions = self.timeouts = self.fast_retransmits = 0
        self._sent_at: dict[
            int, float
        ] = {}  # a segment's end -> when it was first sent (never resent)
        self._last_sent = 0.0
        self._deadline = math.inf
        self._tries = 0
        host.add_sender(self)

    def post(self, now: float, data: bytes) -> None:
        """Append a message to the stream."""
        self._receiver.lengths.append(len(data))
        if not data:
            self.host.sim.at(
                now, self._receiver.hand_on
            )  # no bytes to send: it arrives with those before it
        self._stream += data
        self.end += len(data)
        self.host.kick(now)

    def push(self, now: float) -> bool:
        """Hand the link what the windows allow while the host's queue has room; whether the queue
        stopped it."""
        if self.una == self.high and now - self._last_sent > self.rto:
            self.cwnd = min(self.cwnd, float(self.spec.initial_window))  # restart after idle
        while self.nxt < self.end:
            size = min(self.spec.mss, self.end - self.nxt)
            if self.nxt + size - self.una > min(int(self.cwnd) * self.spec.mss, self.peer_window):
                return False
            if not self.host.has_room(now):
                return True
            self._segment(now, self.nxt, size)
            self.nxt += size
        return False

    def _segment(self, now: float, seq: int, size: int) -> None:
        resend = seq < self.high
        if resend:
            self._sent_at.pop(seq + size, None)
        else:
            self._sent_at[seq + size] = now
        self.high = max(self.high, seq + size)
        self.frames_sent += 1
        self.retransmissions += resend
        self._last_sent = now
        if self._deadline == math.inf:
            self._arm(now)
        payload = bytes(self._stream[seq - self.una : seq - self.una + size])
        self.host.transmit(
            now,
            tcp_headers(
                (*self.host.address, self.port),
                (*self.peer, LISTEN_PORT),
                seq,
                0,
                TCP_ACK | TCP_PSH,
                0,
                int(now * 1e3),
                size,
            )
            + payload,
        )

    def acknowledged(self, now: float, ack_field: int, window: int, carries_data: bool) -> None:
        """An ACK: every byte before `ack` arrived; the receiver's window is `window`."""
        ack = self.una + ((ack_field - self.una) & 0xFFFFFFFF)
        if ack > self.high:
            return  # not a sequence this sender sent
        self.peer_window = window
        if ack > self.una:
            self._advance(now, ack)
        elif ack == self.una and self.una < self.high and not carries_data:
            self._duplicate(now)
        self.host.kick(now)

    def _advance(self, now: float, ack: int) -> None:
        acked = -(-(ack - self.una) // self.spec.mss)
        sent = self._sent_at.pop(ack, None)
        if sent is not None:
            self._sample(now - sent)
        for stale in [end for end in self._sent_at if end <= ack]:
            del self._sent_at[stale]
        del self._stream[: ack - self.una]
        self.una, self.nxt = ack, max(self.nxt, ack)
        self._tries, self.dupacks = 0, 0
        if self.recover is not None:
            if ack >= self.recover:  # full ACK: recovery over
                self.recover, self.cwnd = None, self.ssthresh
            else:  # partial ACK: resend the next hole
                self._segment(now, ack, min(self.spec.mss, self.end - ack))
                self.cwnd = max(self.cwnd - acked + 1, 1.0)
        elif self.cwnd < self.ssthresh:
            grown = self.cwnd + acked
            self.cwnd = (
                grown
                if grown <= self.ssthresh
                else self.ssthresh + (grown - self.ssthresh) / self.ssthresh
            )
        else:
            self.cwnd += acked / self.cwnd
        self._deadline = math.inf
        if self.una < self.high:
            self._arm(now)

    def _duplicate(self, now: float) -> None:
        self.dupacks += 1
        if self.recover is not None:
            self.cwnd += 1  # window inflation: a segment left the network
        elif self.dupacks == 3:
            self.fast_retransmits += 1
            self._halve()
            self.recover = self.high
            self._segment(now, self.una, min(self.spec.mss, self.end - self.una))
            self.cwnd = self.ssthresh + 3

    def _halve(self) -> None:
        self.ssthresh = max((self.high - self.una) / self.spec.mss / 2, 2.0)

    def _sample(self, rtt: float) -> None:
        """RFC 6298's estimator: the first sample sets SRTT and RTTVAR, later ones move them by 1/8
        and 1/4."""
        if self.srtt is None:
            self.srtt, self.rttvar = rtt, rtt / 2
        else:
            self.rttvar += (abs(self.srtt - rtt) - self.rttvar) / 4
            self.srtt += (rtt - self.srtt) / 8
        self.rto = max(self.srtt + 4 * self.rttvar, self.spec.min_rto)

    def _arm(self, now: float) -> None:
        self._deadline = now + self.rto
        self.host.sim.at(self._deadline, self._timeout)

    def _timeout(self, now: float) -> None:
        if now != self._deadline:
            return  # superseded
        self._deadline = math.inf
        if self.una >= self.high:
            return
        self.host.sim.now = now
        self._tries += 1
        self.timeouts += 1
        if self._tries > self.spec.retries:
            raise TransportError(
                f"TCP port {self.port} to {self.peer[1]}: byte {self.una} unacknowledged after "
                f"{self.spec.retries} timeouts"
            )
        self._halve()
        self.cwnd, self.nxt, self.recover, self.dupacks = 1.0, self.una, None, 0
        self.rto = min(self.rto * 2, 120.0)
        self._arm(now)
        self.host.kick(now)


class Receiver:
    """The receiving end of one connection: the stream taken in order (segments past a hole kept),
    each message handed to `deliver(time, data)` when its last byte arrives."""

    def __init__(
        self,
        host: Host,
        peer: Address,
        peer_port: int,
        spec: TcpSpec,
        deliver: Callable[[float, bytes], None],
    ):
        self.host, self.peer, self.peer_port, self.spec, self.deliver = (
            host,
            peer,
            peer_port,
            spec,
            deliver,
        )
        self.lengths: deque[int] = deque()  # the messages' lengths, in order
        self.expected = 0  # the next byte to take (unwrapped)
        self.acks_sent = self.duplicates = self.out_of_order = 0
        self._held: dict[int, bytes] = {}  # out-of-order segments by sequence
        self._stream = bytearray()  # taken bytes not yet delivered
        self._unacked = 0  # in-order segments taken since the last ACK
        self._delack_at = math.inf
        host.ends[(LISTEN_PORT, peer[1], peer_port)] = self

    def arrived(self, now: float, seq_field: int, payload: bytes) -> None:
        seq = self.expected + ((seq_field - self.expected) & 0xFFFFFFFF)
        if seq_field - self.expected & 0x80000000:  # before `expected`: a duplicate
            self.duplicates += 1
            self._ack(now)
        elif seq > self.expected:
            self.out_of_order += 1
            self._held.setdefault(seq, payload)
            self._ack(now)
        else:
            filled = bool(self._held)
            self._take(payload)
            while self.expected in self._held:
                self._take(self._held.pop(self.expected))
            self.hand_on(now)
            self._unacked += 1
            if filled or self._unacked >= 2:
                self._ack(now)
            elif self._delack_at == math.inf:
                self._delack_at = now + self.spec.delayed_ack
                self.host.sim.at(self._delack_at, self._delayed)

    def _take(self, payload: bytes) -> None:
        self._stream += payload
        self.expected += len(payload)

    def hand_on(self, now: float) -> None:
        """Deliver every message whose bytes have all been taken."""
        while self.lengths and self.lengths[0] <= len(self._stream):
            length = self.lengths.popleft()
            data = bytes(self._stream[:length])
            del self._stream[:length]
            self.deliver(now, data)

    def _delayed(self, now: float) -> None:
        if now == self._delack_at:
            self.host.sim.now = now
            self._ack(now)

    def _ack(self, now: float) -> None:
        self._unacked, self._delack_at = 0, math.inf
        self.acks_sent += 1
        self.host.transmit(
            now,
            tcp_headers(
                (*self.host.address, LISTEN_PORT),
                (*self.peer, self.peer_port),
                0,
                self.expected,
                TCP_ACK,
                self.spec.receive_window >> WINDOW_SCALE,
                int(now * 1e3),
                0,
            ),
        )


def connect(
    sender_host: Host,
    receiver_host: Host,
    flow: int,
    spec: TcpSpec,
    deliver: Callable[[float, bytes], None],
) -> Sender:
    """A connection from one host to another (the sender's port SOURCE_PORT + `flow`); returns its
    sender."""
    port = SOURCE_PORT + flow
    receiver = Receiver(receiver_host, sender_host.address, port, spec, deliver)
    return Sender(sender_host, port, receiver_host.address, spec, receiver)
