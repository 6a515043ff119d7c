"""Links join ports: each direction a channel on the right egress, a host's end at its NIC's rate,
and each direction's loss from its own generator seeded by the run's seed and the direction's name."""

import threading

from ina.sim.events import Simulator
from ina.sim.links import LinkSpec
from ina.sim.network import Network
from ina.sim.nodes import HostSpec, SwitchNode


def star(seed: int, loss: float = 0.0, nic_rate: float = float("inf")) -> Network:
    net = Network(Simulator(), seed)
    switch = net.add_switch(SwitchNode("s1", None, threading.Lock()))
    for port in (1, 2):
        host = net.add_host(f"h{port}", HostSpec(nic_rate=nic_rate))
        net.connect(host, 0, switch, port, LinkSpec(rate=10e9, delay=2e-6, loss=loss))
    return net


def test_a_link_puts_each_direction_on_its_senders_egress():
    net = star(1, nic_rate=1e9)
    h1, h2 = net.hosts
    s1 = net.switches[0]
    first = net.links[0]
    assert (first.name, first.up.name, first.down.name) == ("h1-s1", "h1:0->s1:1", "s1:1->h1:0")
    assert (
        h1.egress is first.up and s1.egress[1] is first.down and s1.egress[2] is net.links[1].down
    )
    assert h2.egress is net.links[1].up and s1.egress[0] is None
    assert (first.up.rate, first.down.rate) == (1e9, 10e9)  # the host's NIC caps its end only
    assert first.up.delay == first.down.delay == 2e-6


def lost_pattern(net: Network) -> list[list[bool]]:
    patterns = []
    for link in net.links:
        for channel in (link.up, link.down):
            patterns.append([channel.send(t * 1e-3, bytes(100)) is None for t in range(300)])
    return patterns


def test_the_same_seed_loses_the_same_frames_on_every_direction_and_directions_differ():
    a, b = lost_pattern(star(5, loss=0.2)), lost_pattern(star(5, loss=0.2))
    assert a == b
    assert len({tuple(p) for p in a}) == 4  # four generators, not one shared
    assert lost_pattern(star(6, loss=0.2)) != a
    net = star(5, loss=0.2)
    lost_pattern(net)
    assert net.arrivals == sum(p.count(False) for p in a)
