"""Two endpoints of a transport joined by one channel each way, with chosen frames lost: the
transports' tests (test_transport.py's RoCE NICs, test_tcp.py's TCP hosts) script their frames on it."""

from collections.abc import Callable

from ina.sim.events import Simulator
from ina.sim.links import Channel

A, B = ("02:00:00:00:00:01", "10.0.0.1"), ("02:00:00:00:00:02", "10.0.0.2")


class WirePair:
    """Endpoint a sends to endpoint b on connection 5; `endpoint(sim, address, send)` makes each end,
    `connect` the connection (the transport's own). `drop` names frames lost on the wire as
    (direction, index of the frame on that direction); `frames` keeps every frame sent, `delivered`
    every message b took, with its time."""

    def __init__(
        self,
        endpoint: Callable,
        connect: Callable,
        spec: object,
        rate: float,
        delay: float,
        drop: set[tuple[str, int]] = frozenset(),
    ):
        self.sim, self.drop, self.rate, self.delay = Simulator(), drop, rate, delay
        self.frames: dict[str, list[tuple[float, bytes]]] = {"ab": [], "ba": []}
        self.delivered: list[tuple[float, bytes]] = []
        self.a = endpoint(self.sim, A, self._link("ab", lambda: self.b))
        self.b = endpoint(self.sim, B, self._link("ba", lambda: self.a))
        self.sender = connect(
            self.a, self.b, 5, spec, lambda t, data: self.delivered.append((t, data))
        )

    def _link(self, key: str, far: Callable):
        channel = Channel(key, self.rate, self.delay)

        def send(when: float, frame: bytes) -> None:
            index = len(self.frames[key])
            self.frames[key].append((when, frame))
            arrival = channel.send(when, frame)
            if arrival is not None and (key, index) not in self.drop:
                self.sim.at(arrival, far().receive, frame)

        return send

    def run(self, *messages: bytes) -> None:
        for data in messages:
            self.sender.post(0.0, data)
        self.sim.run()
