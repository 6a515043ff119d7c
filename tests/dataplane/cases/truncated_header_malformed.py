from dataclasses import replace

from stf_render import SWITCH, SWITCH_CONFIG, W1, expect, frame, packet

from ina.hosts.packets import datagram
from ina.p4src.protocol import MSG_UPDATE

HEADER_ONLY = datagram(MSG_UPDATE, 0x5EED0001, (), job=1)  # a whole header, no value block
OTHER_PORT = replace(SWITCH, udp_port=0xBEF0)  # past the aggregation ports

LINES = [
    "# A UDP datagram to the switch's IP on an aggregation port whose header is cut short is ours,",
    "# so it is dropped and counted as malformed, never flooded like ordinary traffic; so is a",
    "# whole header without its value block. The same bytes to another port are ordinary traffic.",
    SWITCH_CONFIG,
    "mc_mgrp_create 1",
    "mc_node_create 0 1 2 3",
    "mc_node_associate 1 0",
    packet(1, frame(W1, SWITCH, HEADER_ONLY[:6])),
    packet(1, frame(W1, replace(SWITCH, udp_port=0xBEEF), HEADER_ONLY[:11])),
    packet(1, frame(W1, SWITCH, HEADER_ONLY)),
    "check_counter port_malformed(1) packets == 3",
    packet(1, frame(W1, OTHER_PORT, HEADER_ONLY[:6])),
    expect(2, frame(W1, OTHER_PORT, HEADER_ONLY[:6])),
    expect(3, frame(W1, OTHER_PORT, HEADER_ONLY[:6])),
    "check_counter port_malformed(1) packets == 3",
]
