"""Bring a topology (topo.py's `Topology`) to life with Mininet: hosts, P4 switches, TCLinks; tear it down.

Mininet's default controller and Open vSwitch are not used: every switch is a P4Switch process.
"""

from mininet.link import TCLink
from mininet.log import setLogLevel
from mininet.net import Mininet
from mininet.node import Host

from ina.topologies import clean
from ina.topologies.switches import P4Switch
from ina.topologies.topo import PREFIX_LEN, Topology


class Network:
    def __init__(
        self,
        topo: Topology,
        run_dir: str,
        target: str = "builtin",
        run_id: str = "ina",
        p4runtime_compat: str | None = None,
        pcap: bool = False,
    ):
        self.topo, self.run_dir, self.target, self.run_id = topo, run_dir, target, run_id
        self.p4runtime_compat, self.pcap = p4runtime_compat, pcap
        self.net: Mininet | None = None

    def start(self) -> None:
        setLogLevel("error")
        net = Mininet(topo=None, build=False, controller=None, link=TCLink, autoSetMacs=False)
        self.net = net
        for name, h in self.topo.hosts.items():
            net.addHost(name, cls=Host, ip=f"{h.ip}/{PREFIX_LEN}", mac=h.mac)
        for name, s in self.topo.switches.items():
            net.addSwitch(
                name,
                cls=P4Switch,
                grpc_addr=s.grpc,
                run_dir=self.run_dir,
                target=self.target,
                p4runtime_compat=self.p4runtime_compat,
                device_id=s.device_id,
                pcap=self.pcap,
            )
        for link in self.topo.links:
            params = {k: v for k, v in link.params.items() if v not in (None, 0, "0ms")}
            net.addLink(
                link.a, link.b, port1=link.ports.get(link.a), port2=link.ports.get(link.b), **params
            )
        net.build()
        for host in net.hosts:
            for intf in host.intfList():
                host.cmd(f"ethtool -K {intf.name} tx off rx off tso off gso off >/dev/null 2>&1")
            host.cmd("sysctl -qw net.ipv6.conf.all.disable_ipv6=1")
            self._static_neighbours(host)
        for switch in net.switches:  # ports in the root namespace: no IPv6 router solicitations
            for intf in switch.intfList():  # or MLD reports onto the host links mid-run
                if intf.name != "lo":
                    switch.cmd(f"sysctl -qw net.ipv6.conf.{intf.name}.disable_ipv6=1")
        clean.record(self.run_id, [], list(self.topo.hosts))
        for switch in net.switches:
            switch.start([])
        clean.record(
            self.run_id, [s.proc.pid for s in net.switches if s.proc], list(self.topo.hosts)
        )

    def _static_neighbours(self, host) -> None:
        """Every other host's and every switch's address, resolved up front: with loss emulated,
        a lost ARP request would stall a worker for the kernel's 1 s retry, an artifact of the
        emulation rather than of the protocol under study."""
        others = [
            *(h for name, h in self.topo.hosts.items() if name != host.name),
            *self.topo.switches.values(),
        ]
        intf = host.defaultIntf().name
        for node in others:
            host.cmd(f"ip neigh replace {node.ip} lladdr {node.mac} dev {intf} nud permanent")

    def host(self, name: str):
        return self.net.get(name)

    def switches(self) -> list[P4Switch]:
        return list(self.net.switches) if self.net else []

    def stop(self) -> None:
        if self.net is not None:
            self.net.stop()
            self.net = None
        clean.forget(self.run_id)
