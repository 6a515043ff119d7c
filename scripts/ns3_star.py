"""UDP frames through a star in ns-3 (PyPI `ns3`): the reference ina.sim.ns3 checks ina's network model against.

Runs under the Python of `.venv-ns3` (`make ns3`), not ina's: it imports ns-3 and nothing of ina.
Reads scenarios as JSON on stdin, writes what ns-3 delivered as JSON on stdout:

    in:  {"scenarios": [{"name": str, "senders": N, "rate_bps": int, "delay_ns": int,
                          "queue_frames": k (each device's queue: k of the largest packet, in bytes),
                          "packets": [[sender 0..N-1, send time ns, Ethernet frame bytes], ...]}]}
    out: {"ns3": version, "scenarios": [{"name": str, "delivered_ns": [ns or null per packet],
                                         "bottleneck_drops": int}]}

The network: senders s0..s{N-1}, each on a point-to-point link to one router, and the router on a
point-to-point link to the receiver; every link of `rate_bps` and `delay_ns`, every device's
transmit queue a DropTailQueue of k times the largest packet's size in bytes, IPv4 with static
routes and an MTU no packet reaches. The devices have no flow control, so IP installs no
traffic-control queue disc above them: the device queue is the only queue, and a packet that does
not fit is dropped there. Each packet is one UDP datagram sent by
its sender's socket at its time; its delivery is when the receiver's socket gets it.

Framing: a point-to-point device puts a packet's bytes on the wire at the rate, with no preamble,
FCS or inter-frame gap, and hands it to the far end when its last bit has crossed. So that each
packet takes the wire exactly as long as the Ethernet frame it stands for, its size is that
frame's size on a real wire: the frame padded to 60 bytes, plus preamble and start delimiter (8),
FCS (4) and inter-frame gap (12). The packet is the PPP header (2), IPv4 (20) and UDP (8) headers
and the payload, so the payload is that wire size less 30. The packet's first 4 payload bytes are
its index. The device queue counts those packet sizes.
"""

import json
import sys

MIN_FRAME = 60  # bytes: Ethernet pads shorter frames to this (before the FCS)
PREAMBLE, FCS, GAP = (
    8,
    4,
    12,
)  # bytes of wire time a frame costs beside its own (preamble + SFD, FCS, IFG)
PPP_IP_UDP = 2 + 20 + 8  # the point-to-point packet's headers before the UDP payload

CPP = r"""
#include <cstring>
#include <vector>

namespace ina_ns3 {
using namespace ns3;

static std::vector<int64_t> delivered;
static const uint16_t MTU = 9000;  // bytes: no packet here is fragmented

static void Receive(Ptr<Socket> socket) {
    Ptr<Packet> packet;
    while ((packet = socket->Recv())) {
        uint32_t index;
        packet->CopyData(reinterpret_cast<uint8_t *>(&index), 4);
        delivered.at(index) = Simulator::Now().GetNanoSeconds();
    }
}

static void SendOne(Ptr<Socket> socket, uint32_t index, uint32_t payload) {
    std::vector<uint8_t> data(payload, 0);
    std::memcpy(data.data(), &index, 4);
    socket->Send(Create<Packet>(data.data(), payload));
}

// One scenario from a fresh simulator; returns each packet's delivery time in ns (-1: never
// delivered) and the drops of the router's queue toward the receiver in drops[0].
std::vector<int64_t> RunStar(uint32_t senders, uint64_t rate_bps, int64_t delay_ns, uint32_t queue_bytes,
                             const std::vector<uint32_t> &sender, const std::vector<int64_t> &at_ns,
                             const std::vector<uint32_t> &payload, std::vector<uint64_t> &drops) {
    NodeContainer hosts, router, receiver;
    hosts.Create(senders);
    router.Create(1);
    receiver.Create(1);
    InternetStackHelper internet;
    internet.Install(hosts);
    internet.Install(router);
    internet.Install(receiver);

    PointToPointHelper p2p;
    p2p.SetDeviceAttribute("DataRate", DataRateValue(DataRate(rate_bps)));
    p2p.SetDeviceAttribute("Mtu", UintegerValue(MTU));
    p2p.SetChannelAttribute("Delay", TimeValue(NanoSeconds(delay_ns)));
    p2p.DisableFlowControl();  // no NetDeviceQueueInterface: IP hands every packet to the device queue
    p2p.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize",
                 QueueSizeValue(QueueSize(QueueSizeUnit::BYTES, queue_bytes)));
    Ipv4AddressHelper addresses;
    Ipv4StaticRoutingHelper routing;

    addresses.SetBase("10.1.0.0", "255.255.255.0");
    NetDeviceContainer last = p2p.Install(router.Get(0), receiver.Get(0));
    Ipv4InterfaceContainer sink = addresses.Assign(last);
    Ptr<Queue<Packet>> bottleneck = DynamicCast<PointToPointNetDevice>(last.Get(0))->GetQueue();

    std::vector<Ptr<Socket>> sockets;
    for (uint32_t i = 0; i < senders; i++) {
        NetDeviceContainer pair = p2p.Install(hosts.Get(i), router.Get(0));
        addresses.NewNetwork();
        Ipv4InterfaceContainer ends = addresses.Assign(pair);
        routing.GetStaticRouting(hosts.Get(i)->GetObject<Ipv4>())->SetDefaultRoute(ends.GetAddress(1), 1);
        Ptr<Socket> socket = Socket::CreateSocket(hosts.Get(i), UdpSocketFactory::GetTypeId());
        socket->Bind();
        socket->Connect(InetSocketAddress(sink.GetAddress(1), 5000));
        sockets.push_back(socket);
    }
    Ptr<Socket> listener = Socket::CreateSocket(receiver.Get(0), UdpSocketFactory::GetTypeId());
    listener->Bind(InetSocketAddress(Ipv4Address::GetAny(), 5000));
    listener->SetRecvCallback(MakeCallback(&Receive));

    delivered.assign(sender.size(), -1);
    for (uint32_t k = 0; k < sender.size(); k++) {
        Simulator::Schedule(NanoSeconds(at_ns[k]), &SendOne, sockets.at(sender[k]), k, payload[k]);
    }
    Simulator::Run();
    drops.assign(1, bottleneck->GetTotalDroppedPackets());
    Simulator::Destroy();
    return delivered;
}
}
"""


def ns3_payload(frame: int) -> int:
    """The UDP payload whose point-to-point packet takes the wire as long as an Ethernet frame of
    `frame` bytes (docstring above)."""
    return max(frame, MIN_FRAME) + PREAMBLE + FCS + GAP - PPP_IP_UDP


def run(scenario: dict, cpp) -> dict:
    std = cpp.std
    packets = scenario["packets"]
    drops = std.vector["uint64_t"]()
    queue_bytes = scenario["queue_frames"] * (ns3_payload(max(p[2] for p in packets)) + PPP_IP_UDP)
    delivered = cpp.ina_ns3.RunStar(
        scenario["senders"],
        scenario["rate_bps"],
        scenario["delay_ns"],
        queue_bytes,
        std.vector["uint32_t"]([p[0] for p in packets]),
        std.vector["int64_t"]([p[1] for p in packets]),
        std.vector["uint32_t"]([ns3_payload(p[2]) for p in packets]),
        drops,
    )
    return {
        "name": scenario["name"],
        "delivered_ns": [t if t >= 0 else None for t in delivered],
        "bottleneck_drops": int(drops[0]),
    }


def main() -> int:
    request = json.load(sys.stdin)
    from importlib.metadata import version

    import cppyy
    from ns import ns  # noqa: F401 (loads ns-3's libraries and headers: tens of seconds)

    cppyy.cppdef(CPP)
    results = [run(scenario, cppyy.gbl) for scenario in request["scenarios"]]
    json.dump({"ns3": version("ns3"), "scenarios": results}, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
