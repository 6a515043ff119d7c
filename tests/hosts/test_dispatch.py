"""hosts/dispatch.py: a received datagram to its core with its source, the answer out at once."""

import numpy as np

from ina.hosts.batch import wire_ip
from ina.hosts.core import AllReduceCore
from ina.hosts.dispatch import Dispatch
from ina.hosts.packets import result_for

SWITCH, FALLBACK = ("10.0.0.254", 0xBEE0), ("10.0.0.9", 7000)
EPOCH = 0x5EED0005


def test_a_source_is_the_switch_or_the_fallback_only_with_both_its_address_and_port():
    # The batched path builds the switch's and the fallback server's source tuples once and hands
    # the core those: a datagram from either one's address with another port, or from another
    # address with either one's port, must reach the core as itself, and be refused as forged.
    core = AllReduceCore(0, 0, 2, EPOCH, 4, 1, 1.0, 3, SWITCH, fallback=FALLBACK)
    update = core.start(np.array([1, 2, 3, 4], dtype=np.int32), 0.0)[0]
    sent: list = []
    finished: list = []
    dispatch = Dispatch(
        [core], 1, SWITCH, lambda *pkt: sent.append(pkt), sent.append, finished.append
    )
    forged = [
        (SWITCH[0], SWITCH[1] + 1),
        ("10.0.0.253", SWITCH[1]),
        (FALLBACK[0], FALLBACK[1] + 1),
        ("10.0.0.8", FALLBACK[1]),
    ]
    result = result_for(update, 2, 0b11, values=[10, 20, 30, 40])
    for ip, port in forged:
        source = dispatch.source(wire_ip(ip), port)
        assert source == (ip, port)
        dispatch.handle(result, source, 0.001)
    assert (core.stats.forged, sent, finished) == (4, [], [])
    assert dispatch.source(wire_ip(FALLBACK[0]), FALLBACK[1]) == FALLBACK
    assert dispatch.source(wire_ip(SWITCH[0]), SWITCH[1]) == SWITCH
    dispatch.handle(result, SWITCH, 0.002)
    assert (core.stats.forged, sent, finished) == (4, [], [core])
    assert core.result().tolist() == [10, 20, 30, 40]
