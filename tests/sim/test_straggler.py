"""A communication straggler (`--slow-host HOST:FACTORx`, sim/straggler.py): the host's NIC and
per-packet costs slowed by the factor, and the all-reduce's time the slow host's formula."""

import math

import pytest

from ina.p4src.protocol import Policy
from ina.sim.allreduce import AllReduceConfig, lossless_time, report, simulate
from ina.sim.cli import main
from ina.sim.links import LinkSpec
from ina.sim.nodes import HostSpec
from ina.sim.straggler import SlowHost

RATE = 100e9
S = (14 + 20 + 8 + 22 + 4 * 64 + 24) * 8 / RATE  # one frame's serialization at 100 Gbit/s


def test_the_factor_divides_the_nic_and_multiplies_the_costs():
    slow = SlowHost.parse("h3:4x")
    assert (slow, str(slow), SlowHost.parse("h3:4")) == (SlowHost("h3", 4.0), "h3:4x", slow)
    assert slow.spec(HostSpec(math.inf, 1e-7, 2e-7), 1e10) == HostSpec(
        2.5e9, 4e-7, 8e-7
    )  # no NIC rate: the link's
    assert slow.spec(HostSpec(5e9, 0.0, 0.0), 1e10) == HostSpec(
        1.25e9, 0.0, 0.0
    )  # a NIC below its link: the NIC's
    with pytest.raises(ValueError, match="bad straggler 'h3:0x': use HOST:FACTORx"):
        SlowHost.parse("h3:0x")


def test_link_bound_every_worker_waits_for_the_slow_nic_under_sync():
    # The slow NIC serializes each UPDATE in 4 s; every slot completes with its UPDATE: T = C x 4s + s + 2d.
    config = AllReduceConfig(workers=4, size=1 << 14, slow_host=SlowHost("h2", 4.0))
    formula = 256 * 4 * S + S + 2e-6
    assert lossless_time(config) == pytest.approx(formula, rel=1e-12)
    result = simulate(config)
    assert result.verified and result.communication_s == pytest.approx(formula, rel=1e-9)
    assert [w[2] for w in result.workers] == ["h1", "h2", "h3", "h4"]
    assert (
        min(result.elapsed_s) > 256 * 4 * S
    )  # the fast ones too: sync waits for every contribution
    assert report(result, "x")["config"]["slow_host"] == "h2:4x"


def test_under_a_quorum_the_fast_workers_do_not_wait_for_the_slow_one():
    config = AllReduceConfig(
        workers=4, size=1 << 14, slow_host=SlowHost("h2", 4.0), policy=Policy.parse("quorum:3")
    )
    result = simulate(config)
    # Every slot completes with the first three UPDATEs, and its RESULT reaches the slow host too
    # (partial sums, verified against the ranks they hold), so nobody waits for the slow NIC.
    assert result.verified
    assert 256 * S + S + 2e-6 < result.communication_s < 2 * (256 * S + S + 2e-6) < 256 * 4 * S


def test_host_bound_the_slow_cpu_sets_the_time():
    # 1 us of CPU per chunk, doubled on h3: T = 256 x 2 us.
    config = AllReduceConfig(
        workers=4,
        size=1 << 14,
        host=HostSpec(RATE, 0.4e-6, 0.6e-6),
        link=LinkSpec(rate=RATE, delay=1e-6, queue=1 << 20),
        slow_host=SlowHost("h3", 2.0),
    )
    result = simulate(config)
    assert result.communication_s == pytest.approx(256 * 2e-6, rel=1e-9) == lossless_time(config)
    assert result.verified


def test_the_cli_names_the_slow_host(capsys):
    assert main(["--workers", "3", "--size", "2000", "--slow-host", "h3:2x"]) == 0
    assert ", seed 1, slow host h3:2x\n" in capsys.readouterr().out
