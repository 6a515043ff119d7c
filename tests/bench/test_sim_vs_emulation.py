"""`ina bench sim-vs-emulation`'s frame counts (bench/sim_vs_emulation.py): a lossless switch-path
all-reduce in Mininet at 10 Mbit/s and in `ina sim` carry exactly the same aggregation frames on
every link each way; and the capture listing that corrects the interface counters is read exactly."""

import pytest

from ina.bench.sim_vs_emulation import Setup, emulate, other_frames, simulate_switch

MAC = "0a:bc:00:00:00:01"  # tcpdump prints lower case; a topology may spell it either way
LISTING = f"""\
100.000000 {MAC} > ff:ff:ff:ff:ff:ff, ethertype ARP (0x0806), length 42: Request who-has 10.0.0.2
100.500000 f2:26:e2:47:fe:6c > 33:33:00:00:00:02, ethertype IPv6 (0x86dd), length 70: router solicitation

101.000000 f2:26:e2:47:fe:6c > 33:33:00:00:00:16, ethertype IPv6 (0x86dd), length 90: multicast listener report
102.000000 {MAC.upper()} > 33:33:00:00:00:02, ethertype IPv6 (0x86dd), length 70: router solicitation
102.000001 {MAC} > 33:33:00:00:00:02, ethertype IPv6 (0x86dd), length 70: router solicitation
"""


def test_other_frames_counts_each_way_inside_the_interval():
    assert other_frames(LISTING, MAC, 100.0, 102.0) == (2, 2)  # both ends of the interval count
    assert other_frames(LISTING, MAC, 100.2, 101.5) == (0, 2)
    assert other_frames(LISTING, MAC, 99.0, 103.0) == (3, 2)
    assert other_frames("", MAC, 0.0, 1e12) == (0, 0)


ATTEMPTS = 3  # emulated runs tried for one without retransmissions


@pytest.mark.netns
def test_emulation_and_simulation_carry_the_same_frames_per_link(tmp_path):
    """40 UPDATEs up and 40 RESULTs down on each of the 4 links, in both (2,500 int32 at E = 64).
    A run whose workers resent (a worker or the switch descheduled past an RTO on a loaded machine)
    carries frames the lossless simulation has no cause for: the next attempt is compared."""
    setup = Setup(size=2500)
    for attempt in range(ATTEMPTS):
        emulated = emulate("switch", setup, tmp_path / f"run-{attempt}")
        assert emulated.verified
        if emulated.notes["retransmissions"] == 0:
            break
    else:
        pytest.fail(f"every one of {ATTEMPTS} emulated runs resent packets: {emulated.notes}")
    simulated = simulate_switch(setup, setup.links()["nominal"])
    assert simulated.verified and simulated.notes == {"retransmissions": 0, "dropped": 0}
    expected = {f"h{i}": (40, 40) for i in range(1, 5)}
    assert simulated.frames == expected
    assert emulated.frames == expected
    assert emulated.notes["queue_drops"] == 0
    assert emulated.notes["other_frames"] == {}  # switch ports send no IPv6 (topologies/net.py)
