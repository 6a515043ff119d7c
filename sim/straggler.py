"""A communication straggler for `ina sim`: one host whose networking is FACTOR times slower.

`--slow-host h3:4x` divides h3's NIC rate by 4 (the rate of its link when its NIC has none of its
own) and multiplies its per-packet send and receive costs by 4, so the host sends and takes in its
packets 4 times slower whether it is link-bound or host-bound. It is the communication-only case:
a compute straggler (one host's compute between all-reduces slowed, hosts/compute.py's
`--straggler h3:3x` in emulation) is a workload's, and the two combine. Same syntax as that one
(`parse_straggler`), so one host description serves both.
"""

from dataclasses import dataclass

from ina.hosts.compute import parse_straggler
from ina.sim.nodes import HostSpec


@dataclass(frozen=True)
class SlowHost:
    host: str
    factor: float

    @classmethod
    def parse(cls, text: str) -> "SlowHost":
        """'h3:4x' (or h3:4) -> SlowHost('h3', 4.0); the factor above 0. Raises ValueError."""
        return cls(*parse_straggler(text))

    def spec(self, base: HostSpec, link_rate: float) -> HostSpec:
        """The host's spec: `base` (on links of `link_rate`) slowed by the factor."""
        return HostSpec(
            min(base.nic_rate, link_rate) / self.factor,
            base.send_cost * self.factor,
            base.recv_cost * self.factor,
        )

    def __str__(self) -> str:
        return f"{self.host}:{self.factor:g}x"
