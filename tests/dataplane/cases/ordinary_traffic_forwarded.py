from stf_render import SWITCH_CONFIG, UPDATE_UDP_CHECKSUM, W1, W2, expect, frame, packet

from ina.hosts.packets import datagram
from ina.p4src.protocol import MSG_UPDATE

A = [1040657, 112648, -831199, 322106, 621741, -531564, 412283, 741022]
HOST_TO_HOST = frame(W1, W2, datagram(MSG_UPDATE, 0x5EED0001, A, job=1), UPDATE_UDP_CHECKSUM)

LINES = [
    "# Ordinary traffic is forwarded unchanged by destination MAC.",
    SWITCH_CONFIG,
    "add l2_forward hdr.ethernet.dst_addr:0x20000000001 forward(port:1)",
    "add l2_forward hdr.ethernet.dst_addr:0x20000000002 forward(port:2)",
    "packet 1 02000000000202000000000108004500002500000000401166c60a0000010a00000204d200500011000068656c6c6f20696e61",
    "expect 2 02000000000202000000000108004500002500000000401166c60a0000010a00000204d200500011000068656c6c6f20696e61$",
    "packet 2 02000000000102000000000208004500002500000000401166c60a0000020a00000104d200500011000068656c6c6f20696e61",
    "expect 1 02000000000102000000000208004500002500000000401166c60a0000020a00000104d200500011000068656c6c6f20696e61$",
    "# UDP to port 0xBEE0 between hosts (not to the switch IP) is ordinary traffic too",
    packet(1, HOST_TO_HOST),
    expect(2, HOST_TO_HOST),
]
